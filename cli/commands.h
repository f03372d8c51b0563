/* Subcommands of the zkpipe CLI. Each returns the process exit code. */
#pragma once

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
/* the fleet queue (cli/db.c, docs/fleet.md): db init, and the --dsn branches of submit, wait, status */
int zkpipe_cmd_db(int argc, char **argv);
int zkpipe_fleet_submit(const char *dsn, const char *circuit, const char *prio_s, int n, char **files);
int zkpipe_fleet_wait(const char *dsn, const char *out, double timeout, const char *id);
int zkpipe_fleet_status(const char *dsn);
