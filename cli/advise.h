/* The numbers and the advice of zkpipe advise (cli/advise.c), shared with zkpipe status. */
#pragma once
#include <stdint.h>

#include "config/config.h"
#include "shm/shm.h"

typedef struct cli_advice {
    double gpu_busy, gpu_wait, gpu_idle_ready; /* shares of the GPU stage's time */
    double gpu_total_s, per_part_ms;
    double synth_wait, synth_total_s; /* synthd's share waiting for a FREE slab */
    double lag_ms;                    /* PROVED -> finalizing, on average */
    uint64_t proved, lag_n;
    char advice[200]; /* "the GPU waited for synthesis: raise [synth] instances from 1 to 2", or "none: ..." */
} cli_advice_t;

/* The segment's lifetime numbers and the advice for the ini c; -1 when nothing was proved yet. */
int cli_advise(shm_t *s, const cfg_t *c, cli_advice_t *a);
