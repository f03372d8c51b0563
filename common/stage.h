/* The start-up every pipeline stage (synthd, gpud, finalizerd) goes through, in two steps so that
 * gpud can bring its backend up between them. Errors are logged as one line each. */
#pragma once
#include <stdbool.h>

#include "common/daemon.h"
#include "config/config.h"
#include "shm/shm.h"

/* Parses the common options (--help: `about`), logs as NAME@INSTANCE, installs the signal
 * handlers, loads the ini (slab size resolved) and, with spool, prepares the spool directories.
 * false: the caller exits with *ret_exit. */
bool stage_init(int argc, char **argv, const char *name, const char *about, bool gpu, bool spool, daemon_args_t *args,
                cfg_t *cfg, int *ret_exit);
/* Attaches the segment the ini describes (creating it if missing, checking its geometry) and
 * registers this process there as role/instance. false: logged; the caller exits 1. */
bool stage_attach(const cfg_t *cfg, shm_t *s, uint32_t role, uint32_t instance);
