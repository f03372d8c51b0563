/* Subcommands of the zkpipe CLI. Each returns the process exit code. */
#pragma once
#include <stdbool.h>

int zkpipe_cmd_prove(int argc, char **argv);
int zkpipe_cmd_verify(int argc, char **argv);
/* dev-only key generation from an r1cs with random toxic waste (cli/keygen.c) */
int zkpipe_cmd_keygen(int argc, char **argv);
/* pipeline: create or validate the shared segment from the ini (used by systemd's set-up unit) */
int zkpipe_cmd_setup(int argc, char **argv);
/* pipeline client commands (cli/submit.c, wait.c, status.c, cancel.c, trace.c; cli/client.h) */
int zkpipe_cmd_submit(int argc, char **argv);
int zkpipe_cmd_wait(int argc, char **argv);
int zkpipe_cmd_status(int argc, char **argv);
int zkpipe_cmd_cancel(int argc, char **argv);
int zkpipe_cmd_trace(int argc, char **argv);
/* observing the pipeline (cli/metrics.c, cli/top.c; exporter/observe.h) */
int zkpipe_cmd_metrics(int argc, char **argv);
int zkpipe_cmd_top(int argc, char **argv);
/* stage counts from the segment's histograms (cli/advise.c) */
int zkpipe_cmd_advise(int argc, char **argv);
/* the memory the ini's pipeline will hold, against the machine's (cli/plan.c) */
int zkpipe_cmd_plan(int argc, char **argv);
/* the replay backend's results cache (cli/replay.c, docs/replay.md) */
int zkpipe_cmd_replay(int argc, char **argv);
/* the fleet queue (cli/db.c, docs/fleet.md): db init, and the --dsn branches of submit, wait, status */
int zkpipe_cmd_db(int argc, char **argv);
int zkpipe_fleet_submit(const char *dsn, const char *circuit, const char *prio_s, bool json, int n, char **files);
int zkpipe_fleet_wait(const char *dsn, const char *out, double timeout, const char *id);
int zkpipe_fleet_status(const char *dsn);
/* the HTTP job API's client (cli/apiclient.c, docs/api.md): the --url branches of submit, wait, status;
 * CLI_API(call) is the call where zkpipe is built with libcurl, else an error (exit 2) */
int zkpipe_api_submit(const char *url, const char *token_file, const char *circuit, const char *prio, bool inputs,
                      int n, char **files);
int zkpipe_api_wait(const char *url, const char *token_file, const char *out, double timeout, const char *id);
int zkpipe_api_status(const char *url, const char *token_file, const char *id);
#ifdef ZKPIPE_API_CLIENT
#define CLI_API(call) (call)
#else
#define CLI_API(call) (fprintf(stderr, "zkpipe: --url: built without libcurl (the HTTP job API's client)\n"), 2)
#endif
/* witness generation from inputs (cli/witness.c, cli/fullprove.c; witgen/) */
int zkpipe_cmd_witness(int argc, char **argv);
int zkpipe_cmd_fullprove(int argc, char **argv);
int zkpipe_cmd_witgen(int argc, char **argv);

/* shared by zkpipe prove and zkpipe fullprove (cli/prove.c) */
#include <stdbool.h>
#include <time.h>
#include "zk/wtns.h"
#include "zk/zkey.h"
typedef struct cli_prove_opts {
    int threads; /* > 0 */
    const char *r1cs_path; /* NULL: no constraint check */
    bool timings, verify;
    const char *load_detail; /* --timings: what the load line's time was spent on (NULL: nothing) */
} cli_prove_opts_t;
/* --threads N (1 to 1024; one line naming the command otherwise); the default is zk_threads_default(). */
int cli_parse_threads(const char *cmd, const char *arg, int *ret);
/* Before proving: refuses an output that is an input or one path for both outputs, and removes older
 * outputs (a failed prove never leaves an older proof where it was asked to write); after a failure:
 * removes whatever of the two was written. */
int cli_prepare_outputs(const char *proof_path, const char *public_path, const char *const *inputs, int n_inputs,
                        zk_err_t *err);
void cli_discard_outputs(const char *proof_path, const char *public_path);
int cli_prove_witness(const zk_zkey_t *z, const char *zkey_path, const zk_wtns_t *w, const char *wtns_path,
                      const cli_prove_opts_t *o, const char *proof_path, const char *public_path,
                      const struct timespec *t0, double t_load, zk_err_t *err);
/* zkpipe witness's pieces (cli/witness.c): the cache directory (opt, else $ZKPIPE_CACHE, ...) and one
 * witness image (64-byte aligned, free()) checked against the zkey when z is not NULL */
const char *cli_witgen_cache(const char *opt);
/* the generator's run may take timeout_s (0: no limit; default WITGEN_TIMEOUT_DEFAULT_S) */
int cli_witness_compute(const char *wasm, const char *input, const char *cache, unsigned timeout_s, uint8_t **ret_img,
                        size_t *ret_len, const zk_zkey_t *z, const char *zkey_path, zk_err_t *err);
/* --timeout SECONDS (whole seconds, 0 = none); -EINVAL with one line on stderr */
int cli_parse_timeout(const char *cmd, const char *arg, unsigned *ret);
