/* zkpipe advise: which stage count to change, from the segment's histograms and counters (lifetime
 * of the segment, all instances of each stage; docs/pipeline.md "Tuning the stage counts"):
 *   - the GPU stage's time: busy (proving), idle with no READY slab (waited for synthesis), idle
 *     while a READY slab waited;
 *   - synthd's time: busy, waiting for a FREE slab;
 *   - the finalizer's lag: how long PROVED partitions of the jobs in the table waited for it, against
 *     the GPU's time per partition.
 * and the advice of obs_advise (exporter/observe.h: also in zkpipe status and the exporter's /status).
 * Exit 0 with the advice, 1 when there is no segment or nothing was proved yet. */
#include "exporter/observe.h"

#include <stdio.h>
#include <string.h>

#include "client.h"
#include "commands.h"

#define ADVISE_USAGE "zkpipe advise [--config FILE]"

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
    obs_advice_t a;
    int r = obs_advise(&s, &c, &a);
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
    printf("advice: %s\n", a.text);
    return fflush(stdout) == 0 ? 0 : 1;
}
