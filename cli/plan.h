/* The memory plan of zkpipe plan (cli/plan.c), shared with zkpipe setup. */
#pragma once
#include <stdint.h>
#include <stdio.h>

#include "config/config.h"

typedef struct cli_plan {
    uint64_t segment;                  /* shared by every stage */
    uint64_t synthd, gpud, finalizerd; /* what one instance of each holds of the circuit files */
    uint64_t tables, scratch; /* in each gpud on the CPU backend: window tables (the budget), proving scratch */
    uint64_t pinned;          /* slab data each CUDA gpud registers (inside the segment: not added again) */
    uint64_t dev_pinned;      /* each CUDA gpud's own pinned host memory (its largest device plan's) */
    uint64_t dev_short;       /* the largest shortfall of a circuit's device plan (0: every one fits) */
    uint64_t dev_budget;      /* the budget of that gpud's device */
    char dev_what[160];       /* "circuit NAME on gpud@D", for the refusal */
    uint64_t total;           /* the host memory of the whole pipeline */
    uint64_t available;       /* MemAvailable now */
} cli_plan_t;

/* Plans the ini c (slab_size resolved in it), printing the plan to out when not NULL. -EINVAL with
 * one line in err when a circuit's files cannot be read. */
int cli_plan(cfg_t *c, cli_plan_t *p, FILE *out, char *err, size_t errlen);
/* 0 when the plan fits what is available, else -ENOMEM with one line naming what is short. */
int cli_plan_refusal(const cfg_t *c, const cli_plan_t *p, char *err, size_t errlen);
