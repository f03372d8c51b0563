/* zkpipe submit: builds a job directory in SPOOL/tmp (holding its lock, so that an abandoned one can
 * be told from one being built), copies every input into it (the job owns its inputs), writes
 * job.ini and renames it into incoming/, the commit point. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"
#include "commands.h"
#include "spool/spool.h"
#include "base/cleanup.h"
#include "shm/slab.h"
#include "zk/zkey.h"

#define SUBMIT_USAGE                                                                                                   \
    "zkpipe submit [--config FILE | --dsn DSN] --circuit NAME [--priority CRITICAL|HIGH|NORMAL|LOW] W1.wtns "        \
    "[W2.wtns ...]\n"                                                                                                \
    "       zkpipe submit [--config FILE] --circuit NAME [--priority P] --input IN1.json [IN2.json ...]\n"           \
    "       zkpipe submit --url URL --token-file F --circuit NAME [--priority P] [--input] FILE ..."

static const char *SUBMIT_HELP =
    "Queues one job of one partition per witness and prints the job id on the last line. Each witness\n"
    "is copied into the spool (a reflink where the file system has them): changing or removing it\n"
    "afterwards does not change the job. A witness must be a regular file no larger than a witness of\n"
    "the circuit can be. New jobs are refused while the spool has less free space than [pipeline]\n"
    "min_free. With --dsn, the job goes into the fleet's queue in that database instead (docs/fleet.md).\n"
    "--input: the files are circuit inputs (circom's input.json); synthd computes each witness with the\n"
    "circuit's generator ([circuit NAME] wasm or witness_cmd, docs/witgen.md).\n"
    "--url URL --token-file F: through zkpipe-api at URL (http://HOST:PORT) with the token on F's first\n"
    "line (docs/api.md).";


int zkpipe_cmd_submit(int argc, char **argv) {
    const char *config, *circuit = NULL, *prio_s = NULL, *dsn = NULL, *input_flag = NULL, *url = NULL,
               *token_file = NULL;
    const cli_option_t opts[] = {{"circuit", 'C', "NAME", &circuit},
                                 {"priority", 'p', "P", &prio_s},
                                 {"dsn", 'D', "DSN", &dsn},
                                 {"input", 'I', NULL, &input_flag},
                                 {"url", 'U', "URL", &url},
                                 {"token-file", 'K', "F", &token_file},
                                 {0}};
    int parsed = cli_options(argc, argv, SUBMIT_USAGE, SUBMIT_HELP, opts, &config);
    if (parsed >= 0) return parsed;
    if (!circuit || optind >= argc) return cli_usage_error(SUBMIT_USAGE);
#ifdef ZKPIPE_FLEET
    if (dsn) return zkpipe_fleet_submit(dsn, circuit, prio_s, input_flag != NULL, argc - optind, argv + optind);
#endif
    if (dsn) return fprintf(stderr, "zkpipe: --dsn: built without libpq (the fleet queue)\n"), 2;
    if (url)
        return CLI_API(
            zkpipe_api_submit(url, token_file, circuit, prio_s, input_flag != NULL, argc - optind, argv + optind));
    uint32_t n = (uint32_t)(argc - optind);
    if (n > SHM_MAX_PARTS) {
        fprintf(stderr, "zkpipe: %u witnesses; a job has at most %u partitions\n", n, SHM_MAX_PARTS);
        return 2;
    }
    cfg_t c;
    if (cli_load_config(config, &c) < 0) return 1;
    const cfg_circuit_t *ci = cfg_circuit(&c, circuit);
    if (!ci) {
        fprintf(stderr, "zkpipe: circuit %s is not configured in %s\n", circuit, config);
        return 2;
    }
    bool inputs = input_flag != NULL;
    if (inputs && !ci->wasm[0] && !ci->witness_cmd[0]) {
        fprintf(stderr, "zkpipe: --input: circuit %s has no witness generator (wasm or witness_cmd) in %s\n", circuit,
                config);
        return 2;
    }
    int prio = ci->priority;
    if (prio_s && (prio = cfg_parse_priority(prio_s)) < 0) {
        fprintf(stderr, "zkpipe: --priority %s: expected CRITICAL, HIGH, NORMAL or LOW\n", prio_s);
        return 2;
    }
    /* the most a witness of this circuit can be: what synthd has room for in a slab */
    zk_zkey_t z;
    zk_err_t e = {{0}};
    if (zk_zkey_open(&z, ci->zkey, &e) < 0) {
        fprintf(stderr, "zkpipe: circuit %s: %s\n", circuit, e.msg);
        return 1;
    }
    uint64_t cap = inputs ? SPOOL_INPUT_JSON_MAX : shm_slab_layout(z.n_vars, z.domain_size).wtns_cap;
    zk_zkey_close(&z);
    char err[1200];
    if (spool_init(c.spool, err, sizeof err) < 0) {
        fprintf(stderr, "zkpipe: %s\n", err);
        return 1;
    }
    spool_job_t j = {.prio = prio, .n_parts = n, .submit_ns = shm_realtime_ns(), .inputs = inputs};
    spool_new_id(j.id);
    snprintf(j.circuit, sizeof j.circuit, "%s", circuit);
    spool_input_t in[SHM_MAX_PARTS];
    for (uint32_t k = 0; k < n; k++) in[k] = (spool_input_t){.path = argv[optind + (int)k]};
    if (spool_submit(c.spool, &j, in, cap, c.min_free, err, sizeof err) < 0) {
        fprintf(stderr, "zkpipe: %s\n", err);
        return 1;
    }
    shm_t s;
    if (cli_attach(&c, &s, true) == 1) { /* wake the synthds at once */
        shm_bump(&s.hdr->job_seq);
        shm_close(&s);
    }
    printf("submitted %u partition%s of circuit %s, priority %s\n%s\n", n, n == 1 ? "" : "s", circuit,
           cfg_priority_name(prio), j.id);
    return 0;
}
