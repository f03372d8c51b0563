/* Subcommands of the zkpipe CLI. Each returns the process exit code. */
#pragma once

int zkpipe_cmd_prove(int argc, char **argv);
int zkpipe_cmd_verify(int argc, char **argv);
int zkpipe_cmd_setup(int argc, char **argv);
/* pipeline client commands (cli/pipeline.c) */
int zkpipe_cmd_submit(int argc, char **argv);
int zkpipe_cmd_wait(int argc, char **argv);
int zkpipe_cmd_status(int argc, char **argv);
int zkpipe_cmd_cancel(int argc, char **argv);
int zkpipe_cmd_trace(int argc, char **argv);
