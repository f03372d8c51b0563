/* zkpipe wait: blocks until a job ends; prints its outputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "commands.h"
#include "spool/spool.h"

#define WAIT_USAGE                                                                                                     \
    "zkpipe wait [--config FILE | --dsn DSN [--out DIR] | --url URL --token-file F [--out DIR]] [--timeout SECONDS] JOB"

int zkpipe_cmd_wait(int argc, char **argv) {
    const char *config, *timeout_s = NULL, *dsn = NULL, *out = NULL, *url = NULL, *token_file = NULL;
    const cli_option_t opts[] = {{"timeout", 't', "SECONDS", &timeout_s}, {"dsn", 'D', "DSN", &dsn},
                                 {"out", 'o', "DIR", &out},               {"url", 'U', "URL", &url},
                                 {"token-file", 'K', "F", &token_file},   {0}};
    int parsed =
        cli_options(argc, argv, WAIT_USAGE,
                    "Waits until the job is done (prints each proof-<k>.json and public-<k>.json, then the\n"
                    "result.json; exit 0) or failed (the reason on stderr; exit 1; also when --timeout\n"
                    "passes). Exit 2: bad usage, no such job, or an --out DIR that is missing or cannot be\n"
                    "written. With --dsn, a job of the fleet's queue; --out DIR writes its proof-<k>.json and\n"
                    "public-<k>.json there. With --url, a job of zkpipe-api (docs/api.md): without --out the job's\n"
                    "JSON (its proofs inline) is printed.",
                    opts, &config);
    if (parsed >= 0) return parsed;
    if (optind + 1 != argc || !spool_valid_id(argv[optind])) return cli_usage_error(WAIT_USAGE);
    double timeout = timeout_s ? atof(timeout_s) : -1;
    const char *id = argv[optind];
#ifdef ZKPIPE_FLEET
    if (dsn) return zkpipe_fleet_wait(dsn, out, timeout, id);
#endif
    if (url) return CLI_API(zkpipe_api_wait(url, token_file, out, timeout, id));
    if (dsn || out) return fprintf(stderr, "zkpipe: --dsn/--out: %s\n", dsn ? "built without libpq" : "need --dsn"), 2;
    cfg_t c;
    if (cli_load_config(config, &c) < 0) return 2;
    if (spool_job_place(c.spool, id) == SPOOL_NOWHERE) {
        fprintf(stderr, "zkpipe: no job %s in %s\n", id, c.spool);
        return 2;
    }
    shm_t s;
    bool attached = false;
    uint64_t t0 = shm_now_ns();
    for (;;) {
        if (!attached) attached = cli_attach(&c, &s, true) == 1;
        uint32_t seq = attached ? atomic_load_explicit(&s.hdr->job_seq, memory_order_acquire) : 0;
        spool_place_t place = spool_job_place(c.spool, id);
        char dir[1400], res[1500], status[32], error[1024];
        uint32_t n = 0;
        if (spool_place_ended(place)) {
            spool_path(dir, sizeof dir, c.spool, place, id);
            snprintf(res, sizeof res, "%s/result.json", dir);
            if (cli_read_result(dir, status, sizeof status, error, sizeof error, &n) < 0) {
                fprintf(stderr, "zkpipe: job %s: cannot read %s\n", id, res);
                if (attached) shm_close(&s);
                return 1;
            }
            if (attached) shm_close(&s);
            if (!strcmp(status, "done")) {
                for (uint32_t k = 0; k < n; k++) {
                    char pn[SPOOL_FILE_NAME_MAX], un[SPOOL_FILE_NAME_MAX];
                    printf("%s/%s %s/%s\n", dir, spool_file_name(pn, SPOOL_F_PROOF, k), dir,
                           spool_file_name(un, SPOOL_F_PUBLIC, k));
                }
                printf("%s\n", res);
                return 0;
            }
            fprintf(stderr, "zkpipe: job %s %s: %s\n", id, status, error[0] ? error : "(no reason recorded)");
            return 1;
        }
        if (place == SPOOL_NOWHERE) {
            fprintf(stderr, "zkpipe: job %s disappeared from %s\n", id, c.spool);
            if (attached) shm_close(&s);
            return 1;
        }
        if (timeout >= 0 && (shm_now_ns() - t0) / 1e9 > timeout) {
            fprintf(stderr, "zkpipe: job %s not finished after %.0f s (still in %s/)\n", id, timeout, spool_place_name(place));
            if (attached) shm_close(&s);
            return 1;
        }
        /* the finalizer bumps job_seq when a job ends; the timeout covers a missing segment */
        if (attached)
            (void)shm_wait(&s.hdr->job_seq, seq, 500);
        else
            usleep(200000);
    }
}
