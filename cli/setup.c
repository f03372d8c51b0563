/* zkpipe setup: creates the segment and the spool from the ini, or checks that the live segment has
 * the ini's geometry (systemd's zkpipe-segment.service runs this before any stage). */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include "client.h"
#include "commands.h"
#include "plan.h"
#include "plan/slab.h"
#include "spool/spool.h"

#define SETUP_USAGE "zkpipe setup [--config FILE]"

int zkpipe_cmd_setup(int argc, char **argv) {
    const char *config;
    int parsed = cli_options(argc, argv, SETUP_USAGE,
                             "Creates the shared segment (every byte reserved: a segment larger than its file system\n"
                             "is refused) and the spool folders, or checks a live segment's geometry.",
                             NULL, &config);
    if (parsed >= 0) return parsed;
    if (optind != argc) return cli_usage_error(SETUP_USAGE);
    cfg_t c;
    char err[1600];
    if (cli_load_config(config, &c) < 0) return 1;
    if (slab_resolve_size(&c, err, sizeof err) < 0 || spool_init(c.spool, err, sizeof err) < 0) {
        fprintf(stderr, "zkpipe: %s\n", err);
        return 1;
    }
    /* a segment about to be created: the pipeline's memory plan must fit the machine (a live one's
     * stages hold theirs already, and MemAvailable no longer counts it) */
    cli_plan_t p;
    struct stat st;
    if (stat(c.segment, &st) < 0 && errno == ENOENT &&
        (cli_plan(&c, &p, NULL, err, sizeof err) < 0 || cli_plan_refusal(&c, &p, err, sizeof err) < 0)) {
        fprintf(stderr, "zkpipe: %s\n", err);
        return 1;
    }
    shm_geometry_t g = {.slabs = c.slabs, .jobs = c.jobs, .events = c.events, .slab_size = c.slab_size};
    shm_t s;
    if (shm_open_segment(&s, c.segment, &g, true, err, sizeof err) < 0) {
        fprintf(stderr, "zkpipe: %s\n", err);
        return 1;
    }
    printf("segment %s %s: %u slabs of %llu MiB (%llu MiB in all); spool %s\n", c.segment,
           s.created ? "created" : "present with the same geometry", s.hdr->n_slabs,
           (unsigned long long)(s.hdr->slab_size >> 20), (unsigned long long)(s.hdr->total_size >> 20), c.spool);
    shm_close(&s);
    return 0;
}
