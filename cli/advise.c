/* zkpipe advise: which stage count to change, from the segment's histograms and counters (lifetime
 * of the segment, all instances of each stage; docs/pipeline.md "Tuning the stage counts"):
 *   - the GPU stage's time: busy (proving), idle with no READY slab (waited for synthesis), idle
 *     while a READY slab waited;
 *   - synthd's time: busy, waiting for a FREE slab;
 *   - the finalizer's lag: how long PROVED partitions of the jobs in the table waited for it, against
 *     the GPU's time per partition.
 * The GPU waited for synthesis (≥ 20 % of its time) while synthd did not wait for slabs: more
 * [synth] instances. Both waited: more slabs, unless the finalizer lagged (PROVED partitions waited
 * ≥ half a GPU partition on average): more finalizer instances. Otherwise the counts keep the GPU
 * fed. Exit 0 with the advice, 1 when there is no segment or nothing was proved yet. */
#include "advise.h"

#include <stdio.h>
#include <string.h>

#include "client.h"
#include "commands.h"

#define ADVISE_USAGE "zkpipe advise [--config FILE]"
#define ADVISE_SHARE 0.20 /* a wait this large a share of a stage's time is worth a change */

int cli_advise(shm_t *s, const cfg_t *c, cli_advice_t *a) {
    memset(a, 0, sizeof *a);
    obs_balance(s, &a->b);
    const obs_balance_t *b = &a->b;
    if (!b->proved) return -1;
    if (b->gpu_wait < ADVISE_SHARE)
        snprintf(a->advice, sizeof a->advice,
                 "none: the GPU waited for synthesis %.1f%% of its time (under %.0f%%); the counts keep it fed",
                 100 * b->gpu_wait, 100 * ADVISE_SHARE);
    else if (b->synth_wait < ADVISE_SHARE)
        snprintf(a->advice, sizeof a->advice, "the GPU waited for synthesis: raise [synth] instances from %u to %u",
                 c->synth_instances, c->synth_instances + 1);
    else if (b->lag_ms >= b->per_part_ms / 2)
        snprintf(a->advice, sizeof a->advice, "the finalizer lagged: raise [finalizer] instances from %u to %u",
                 c->finalizer_instances, c->finalizer_instances + 1);
    else
        snprintf(a->advice, sizeof a->advice, "synthesis waited for slabs: raise [pipeline] slabs from %u to %u",
                 c->slabs, c->slabs + 2);
    return 0;
}

int zkpipe_cmd_advise(int argc, char **argv) {
    const char *config;
    int parsed = cli_options(argc, argv, ADVISE_USAGE,
                             "Says from the segment's histograms whether the GPU waited for synthesis, synthesis "
                             "waited for slabs\nor the finalizer lagged, with the numbers, and which of [synth] "
                             "instances, [pipeline] slabs\nand [finalizer] instances to raise.",
                             NULL, &config);
    if (parsed >= 0) return parsed;
    if (optind < argc) return cli_usage_error(ADVISE_USAGE);
    cfg_t c;
    if (cli_load_config(config, &c) < 0) return 2;
    shm_t s;
    int att = cli_attach(&c, &s, false);
    if (att <= 0) {
        if (att == 0) fprintf(stderr, "zkpipe: advise: no segment %s (no stage is running)\n", c.segment);
        return 1;
    }
    cli_advice_t a;
    int r = cli_advise(&s, &c, &a);
    shm_close(&s);
    if (r < 0) {
        fprintf(stderr, "zkpipe: advise: nothing proved yet in %s: run some jobs first\n", c.segment);
        return 1;
    }
    printf("gpu: busy %.1f%%, waited for synthesis (no READY slab) %.1f%%, idle with a READY slab %.1f%% "
           "(%.1f s in all, %llu partitions, %.1f ms each)\n",
           100 * a.b.gpu_busy, 100 * a.b.gpu_wait, 100 * a.b.gpu_idle_ready, a.b.gpu_total_s,
           (unsigned long long)a.b.proved, a.b.per_part_ms);
    printf("synth: waited for a free slab %.1f%% of %.1f s ([synth] instances = %u)\n", 100 * a.b.synth_wait,
           a.b.synth_total_s, c.synth_instances);
    printf("finalizer: PROVED partitions waited %.1f ms on average for it (%llu partitions, [finalizer] instances = "
           "%u)\n",
           a.b.lag_ms, (unsigned long long)a.b.lag_n, c.finalizer_instances);
    printf("advice: %s\n", a.advice);
    return fflush(stdout) == 0 ? 0 : 1;
}
