/* zkpipe cancel: a registered job is cancelled in the segment (its partitions are dropped at their
 * next step); one not yet registered is moved from the spool to failed/ under the registration
 * lock, so that no synthd registers it meanwhile. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "commands.h"
#include "common/spool.h"

#define CANCEL_USAGE "zkpipe cancel [--config FILE] JOB"

int zkpipe_cmd_cancel(int argc, char **argv) {
    const char *config;
    int parsed = cli_options(argc, argv, CANCEL_USAGE, NULL, NULL, &config);
    if (parsed >= 0) return parsed;
    if (optind + 1 != argc || !spool_valid_id(argv[optind])) return cli_usage_error(CANCEL_USAGE);
    const char *id = argv[optind];
    cfg_t c;
    if (cli_load_config(config, &c) < 0) return 2;
    shm_t s;
    int att = cli_attach(&c, &s, false);
    if (att < 0) return 1;
    if (att) {
        int slot = shm_job_find(&s, id);
        if (slot >= 0 && shm_job_live(shm_job_state(&s.jobs[slot]))) {
            int r = shm_job_cancel(&s, (uint32_t)slot);
            shm_close(&s);
            if (r < 0) {
                fprintf(stderr, "zkpipe: job %s is already failing or finished\n", id);
                return 1;
            }
            printf("cancelling job %s: its partitions are dropped at their next step\n", id);
            return 0;
        }
        /* the lock's owner tag names our process slot: without one, every stage would take the
         * lock for a dead owner's and force it open */
        if (shm_register(&s, ROLE_CLI, 0) < 0) {
            fprintf(stderr, "zkpipe: %s: process table full; cannot take the registration lock\n", c.segment);
            shm_close(&s);
            return 1;
        }
        shm_lock(&s);
    }
    const char *place;
    char why[1600];
    int r = spool_cancel(c.spool, id, &place, why, sizeof why), rc = r == -ESRCH ? 2 : r < 0 ? 1 : 0;
    if (r == 0)
        printf("cancelled job %s\n", id);
    else if (r == -EALREADY)
        fprintf(stderr, "zkpipe: job %s has already finished (%s/)\n", id, place);
    else if (r == -ESRCH)
        fprintf(stderr, "zkpipe: no job %s\n", id);
    else
        fprintf(stderr, "zkpipe: %s\n", why);
    if (att) {
        shm_unlock(&s);
        shm_bump(&s.hdr->job_seq);
        shm_close(&s);
    }
    return rc;
}
