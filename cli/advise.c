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
    shm_hist_snap_t gw, gi, sw;
    (void)shm_hist_read(s, HIST_GPU_WAIT, &gw);
    (void)shm_hist_read(s, HIST_GPU_IDLE_READY, &gi);
    (void)shm_hist_read(s, HIST_SYNTH_WAIT_SLAB, &sw);
    uint64_t gb = shm_counter(s, CNT_GPU_BUSY_NS), sb = shm_counter(s, CNT_SYNTH_BUSY_NS);
    a->proved = shm_counter(s, CNT_PROVED);
    /* PROVED -> finalizing, over the partitions of the jobs still in the table */
    double lag_sum = 0;
    for (uint32_t i = 0; i < s->hdr->n_jobs; i++) {
        shm_job_t *j = &s->jobs[i];
        if (shm_job_state(j) == JOB_FREE) continue;
        for (uint32_t k = 0; k < j->n_parts && k < SHM_MAX_PARTS; k++) {
            uint64_t p = atomic_load_explicit(&j->parts[k].t_proved_ns, memory_order_relaxed);
            uint64_t f = atomic_load_explicit(&j->parts[k].t_fin_start_ns, memory_order_relaxed);
            if (p && f >= p) lag_sum += (double)(f - p), a->lag_n++;
        }
    }
    if (!a->proved) return -1;
    double gpu_total = (double)gb + (double)gw.sum_ns + (double)gi.sum_ns, synth_total = (double)sb + (double)sw.sum_ns;
    a->gpu_total_s = gpu_total / 1e9;
    a->gpu_busy = gpu_total > 0 ? gb / gpu_total : 0;
    a->gpu_wait = gpu_total > 0 ? gw.sum_ns / gpu_total : 0;
    a->gpu_idle_ready = gpu_total > 0 ? gi.sum_ns / gpu_total : 0;
    a->synth_total_s = synth_total / 1e9;
    a->synth_wait = synth_total > 0 ? sw.sum_ns / synth_total : 0;
    a->per_part_ms = (double)gb / (double)a->proved / 1e6;
    a->lag_ms = a->lag_n ? lag_sum / (double)a->lag_n / 1e6 : 0;
    if (a->gpu_wait < ADVISE_SHARE)
        snprintf(a->advice, sizeof a->advice,
                 "none: the GPU waited for synthesis %.1f%% of its time (under %.0f%%); the counts keep it fed",
                 100 * a->gpu_wait, 100 * ADVISE_SHARE);
    else if (a->synth_wait < ADVISE_SHARE)
        snprintf(a->advice, sizeof a->advice, "the GPU waited for synthesis: raise [synth] instances from %u to %u",
                 c->synth_instances, c->synth_instances + 1);
    else if (a->lag_ms >= a->per_part_ms / 2)
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
           100 * a.gpu_busy, 100 * a.gpu_wait, 100 * a.gpu_idle_ready, a.gpu_total_s, (unsigned long long)a.proved,
           a.per_part_ms);
    printf("synth: waited for a free slab %.1f%% of %.1f s ([synth] instances = %u)\n", 100 * a.synth_wait,
           a.synth_total_s, c.synth_instances);
    printf("finalizer: PROVED partitions waited %.1f ms on average for it (%llu partitions, [finalizer] instances = "
           "%u)\n",
           a.lag_ms, (unsigned long long)a.lag_n, c.finalizer_instances);
    printf("advice: %s\n", a.advice);
    return fflush(stdout) == 0 ? 0 : 1;
}
