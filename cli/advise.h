/* The advice of zkpipe advise (cli/advise.c), shared with zkpipe status; the numbers are
 * obs_balance's (exporter/observe.h), also in the metrics. */
#pragma once
#include "config/config.h"
#include "exporter/observe.h"
#include "shm/shm.h"

typedef struct cli_advice {
    obs_balance_t b;
    char advice[200]; /* "the GPU waited for synthesis: raise [synth] instances from 1 to 2", or "none: ..." */
} cli_advice_t;

/* The segment's numbers and the advice for the ini c; -1 when nothing was proved yet. */
int cli_advise(shm_t *s, const cfg_t *c, cli_advice_t *a);
