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
#include <stdio.h>

#include "client.h"
#include "commands.h"

#define ADVISE_USAGE "zkpipe advise [--config FILE]"
#define ADVISE_SHARE 0.20 /* a wait this large a share of a stage's time is worth a change */

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
    shm_hist_snap_t gw, gi, sw;
    (void)shm_hist_read(&s, HIST_GPU_WAIT, &gw);
    (void)shm_hist_read(&s, HIST_GPU_IDLE_READY, &gi);
    (void)shm_hist_read(&s, HIST_SYNTH_WAIT_SLAB, &sw);
    uint64_t proved = shm_counter(&s, CNT_PROVED), gb = shm_counter(&s, CNT_GPU_BUSY_NS);
    uint64_t sb = shm_counter(&s, CNT_SYNTH_BUSY_NS);
    /* PROVED -> finalizing, over the partitions of the jobs still in the table */
    double lag_sum = 0;
    uint64_t lag_n = 0;
    for (uint32_t i = 0; i < s.hdr->n_jobs; i++) {
        shm_job_t *j = &s.jobs[i];
        if (shm_job_state(j) == JOB_FREE) continue;
        for (uint32_t k = 0; k < j->n_parts && k < SHM_MAX_PARTS; k++) {
            uint64_t p = atomic_load_explicit(&j->parts[k].t_proved_ns, memory_order_relaxed);
            uint64_t f = atomic_load_explicit(&j->parts[k].t_fin_start_ns, memory_order_relaxed);
            if (p && f >= p) lag_sum += (double)(f - p), lag_n++;
        }
    }
    shm_close(&s);
    if (!proved) {
        fprintf(stderr, "zkpipe: advise: nothing proved yet in %s: run some jobs first\n", c.segment);
        return 1;
    }
    double gpu_total = (double)gb + (double)gw.sum_ns + (double)gi.sum_ns;
    double gpu_wait = gpu_total > 0 ? gw.sum_ns / gpu_total : 0, gpu_busy = gpu_total > 0 ? gb / gpu_total : 0;
    double synth_total = (double)sb + (double)sw.sum_ns, synth_wait = synth_total > 0 ? sw.sum_ns / synth_total : 0;
    double per_part = (double)gb / (double)proved, lag = lag_n ? lag_sum / (double)lag_n : 0;
    printf("gpu: busy %.1f%%, waited for synthesis (no READY slab) %.1f%%, idle with a READY slab %.1f%% "
           "(%.1f s in all, %llu partitions, %.1f ms each)\n",
           100 * gpu_busy, 100 * gpu_wait, gpu_total > 0 ? 100 * gi.sum_ns / gpu_total : 0.0, gpu_total / 1e9,
           (unsigned long long)proved, per_part / 1e6);
    printf("synth: waited for a free slab %.1f%% of %.1f s ([synth] instances = %u)\n", 100 * synth_wait,
           synth_total / 1e9, c.synth_instances);
    printf("finalizer: PROVED partitions waited %.1f ms on average for it (%llu partitions, [finalizer] instances = "
           "%u)\n",
           lag / 1e6, (unsigned long long)lag_n, c.finalizer_instances);
    if (gpu_wait < ADVISE_SHARE) {
        printf("advice: none: the GPU waited for synthesis %.1f%% of its time (under %.0f%%); the counts keep it "
               "fed\n",
               100 * gpu_wait, 100 * ADVISE_SHARE);
    } else if (synth_wait < ADVISE_SHARE) {
        printf("advice: the GPU waited for synthesis: raise [synth] instances from %u to %u\n", c.synth_instances,
               c.synth_instances + 1);
    } else if (lag >= per_part / 2) {
        printf("advice: the finalizer lagged: raise [finalizer] instances from %u to %u\n", c.finalizer_instances,
               c.finalizer_instances + 1);
    } else {
        printf("advice: synthesis waited for slabs: raise [pipeline] slabs from %u to %u\n", c.slabs, c.slabs + 2);
    }
    return fflush(stdout) == 0 ? 0 : 1;
}
