/* What the pipeline's client commands (cli/submit.c, wait.c, status.c, cancel.c, trace.c, setup.c)
 * share: one option parser, the ini, the segment and the spool's places. They talk to the daemons
 * only through the spool and the shared segment, and read the segment only through shm/'s named
 * functions. */
#pragma once
#include <getopt.h> /* optind: the operands after cli_options */
#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "shm/shm.h"

typedef struct cli_option {
    const char *name;   /* long option */
    int key;            /* short option letter */
    const char *arg;    /* its argument's name, NULL for a flag (set to "1") */
    const char **value; /* where it goes */
} cli_option_t;

/* The one option parser: --config FILE, --help and the command's own options (opts, ended by a
 * zero entry; may be NULL). Returns -1 to go on (operands from optind), else the exit status: 0
 * after --help (usage and help on stdout), 2 after a bad option (usage on stderr). */
int cli_options(int argc, char **argv, const char *usage, const char *help, const cli_option_t *opts,
                const char **config);
/* Prints "Usage: ..." to stderr and returns 2. */
int cli_usage_error(const char *usage);

/* Loads the ini; errors printed. -1 on failure. */
int cli_load_config(const char *path, cfg_t *c);
/* Attaches to the live segment of any geometry. 1 attached, 0 no segment (ENOENT), -1 a segment
 * that cannot be used (error printed unless quiet). */
int cli_attach(const cfg_t *c, shm_t *s, bool quiet);

/* Reads status and error (and the partition count) from DIR/result.json (spool_read_result). */
int cli_read_result(const char *dir, char *status, size_t slen, char *error, size_t elen, uint32_t *n_parts);
