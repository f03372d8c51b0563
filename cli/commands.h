/* Subcommands of the zkpipe CLI. Each returns the process exit code. */
#pragma once

int zkpipe_cmd_prove(int argc, char **argv);
int zkpipe_cmd_verify(int argc, char **argv);
/* dev-only key generation from an r1cs with random toxic waste (cli/keygen.c) */
int zkpipe_cmd_keygen(int argc, char **argv);
/* pipeline: create or validate the shared segment from the ini (used by systemd's set-up unit) */
int zkpipe_cmd_setup(int argc, char **argv);
/* pipeline client commands (cli/pipeline.c) */
int zkpipe_cmd_submit(int argc, char **argv);
int zkpipe_cmd_wait(int argc, char **argv);
int zkpipe_cmd_status(int argc, char **argv);
int zkpipe_cmd_cancel(int argc, char **argv);
int zkpipe_cmd_trace(int argc, char **argv);
/* witness generation from inputs (cli/witness.c, cli/fullprove.c; witgen/) */
int zkpipe_cmd_witness(int argc, char **argv);
int zkpipe_cmd_fullprove(int argc, char **argv);
int zkpipe_cmd_witgen(int argc, char **argv);
