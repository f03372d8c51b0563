/* What the observers of a pipeline show (docs/observe.md): the Prometheus text of a segment (zkpipe
 * metrics and the exporter's /metrics: one generator), the exporter's /status and /timeline JSON,
 * and zkpipe top's numbers. Everything is read through shm/'s named read functions, so it works on a
 * segment attached read-only (shm_open_readonly) and never writes the segment.
 *
 * Invariants:
 * - One label set: stage (synthd, gpud, finalizerd), instance, priority, circuit; a metric carries
 *   the labels that apply to it. Durations in seconds, sizes in bytes, counters end in _total.
 * - A process appears once per (stage, instance): the newest live registration; dead ones are left
 *   out (their work is in the segment-wide counters and histograms, which survive restarts).
 * - Histograms are printed from shm_hist_read copies, so +Inf == _count in every scrape. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config/config.h"
#include "shm/shm.h"

/* Optional extra metrics appended to the text (NVML), NULL when none. */
typedef void (*obs_extra_fn)(FILE *out);

/* The Prometheus text exposition (format 0.0.4) of the segment. */
void obs_metrics(shm_t *s, FILE *out, obs_extra_fn extra);
/* The text an observer serves when there is no segment (no stage running): zkpipe_segment_up 0. */
void obs_metrics_absent(FILE *out, obs_extra_fn extra);

/* /status: one JSON document (slabs with state, owner and partition; jobs with per-partition state
 * and timings; stages with pid, busy ratio and heartbeat age; counters; the GPU idle histograms; the
 * stages' balance and, with the ini c (may be NULL), obs_advise's advice: null until a partition was
 * proved). Returns a malloc'd string. */
char *obs_status_json(shm_t *s, const cfg_t *c);
/* /timeline: the event ring's records that started within the last window_ns (of its newest
 * OBS_TIMELINE_MAX), times relative to now (negative ms). Returns a malloc'd string. */
#define OBS_TIMELINE_MAX 20000u
char *obs_timeline_json(shm_t *s, uint64_t window_ns);

/* A process of the segment, for top and the metrics: the newest live registration of each
 * (role, instance); at most max; returns how many. */
typedef struct obs_proc {
    shm_proc_info_t info;
    double busy_ratio;      /* busy time / time since it registered */
    double heartbeat_age_s; /* since its last loop step */
} obs_proc_t;
uint32_t obs_procs(shm_t *s, obs_proc_t *ret, uint32_t max);
/* Partitions PENDING in live jobs, by priority. */
void obs_queued(shm_t *s, uint32_t ret[CFG_PRIO_COUNT]);
/* The name of a priority in label form ("critical", "high", "normal", "low"). */
const char *obs_priority_label(uint32_t prio);
/* A heartbeat older than this is a stopped stage (top highlights it). */
#define OBS_STALE_S 5.0

/* The stages' balance over the segment's lifetime (zkpipe advise, zkpipe status, the metrics):
 * shares of the GPU stage's time busy / waiting with no READY slab / idle while one waited,
 * synthd's share waiting for a FREE slab, and how long PROVED partitions of the jobs in the table
 * waited for a finalizer. */
typedef struct obs_balance {
    double gpu_busy, gpu_wait, gpu_idle_ready;
    double gpu_total_s, per_part_ms;
    double synth_wait, synth_total_s;
    double lag_ms;
    uint64_t proved, lag_n;
} obs_balance_t;
void obs_balance(shm_t *s, obs_balance_t *ret);

/* The advice over the balance (zkpipe advise, zkpipe status, /status; docs/pipeline.md "Tuning the
 * stage counts"): the GPU waited for synthesis (>= OBS_ADVISE_SHARE of its time) while synthd did
 * not wait for slabs: more [synth] instances; both waited: more slabs, unless the finalizer lagged
 * (PROVED partitions waited half a GPU partition or more on average): more finalizer instances;
 * otherwise "none: ...". The counts named are the ini c's. -1 when nothing was proved yet. */
#define OBS_ADVISE_SHARE 0.20
typedef struct obs_advice {
    obs_balance_t b;
    char text[200]; /* "the GPU waited for synthesis: raise [synth] instances from 1 to 2", or "none: ..." */
} obs_advice_t;
int obs_advise(shm_t *s, const cfg_t *c, obs_advice_t *a);
