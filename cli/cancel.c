/* zkpipe cancel: job_cancel (spool/cancel.h): a registered job is cancelled in the segment (its
 * partitions are dropped at their next step); one not yet registered is moved from the spool to
 * failed/ under the registration lock, so that no synthd registers it meanwhile. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "commands.h"
#include "spool/cancel.h"
#include "spool/spool.h"

#define CANCEL_USAGE "zkpipe cancel [--config FILE] JOB"

int zkpipe_cmd_cancel(int argc, char **argv) {
    const char *config;
    int parsed = cli_options(argc, argv, CANCEL_USAGE, NULL, NULL, &config);
    if (parsed >= 0) return parsed;
    if (optind + 1 != argc || !spool_valid_id(argv[optind])) return cli_usage_error(CANCEL_USAGE);
    const char *id = argv[optind];
    cfg_t c;
    if (cli_load_config(config, &c) < 0) return 2;
    spool_place_t place;
    char why[1600];
    int r = job_cancel(&c, id, &place, why, sizeof why);
    if (r == 1)
        printf("cancelling job %s: its partitions are dropped at their next step\n", id);
    else if (r == 0)
        printf("cancelled job %s\n", id);
    else if (r == -EALREADY && place == SPOOL_NOWHERE)
        fprintf(stderr, "zkpipe: job %s is already failing or finished\n", id);
    else if (r == -EALREADY)
        fprintf(stderr, "zkpipe: job %s has already finished (%s/)\n", id, spool_place_name(place));
    else if (r == -ESRCH)
        fprintf(stderr, "zkpipe: no job %s\n", id);
    else
        fprintf(stderr, "zkpipe: %s\n", why);
    return r == -ESRCH ? 2 : r < 0 ? 1 : 0;
}
