/* The observers' view of a segment (exporter/observe.h): Prometheus text, /status and /timeline. */
#include "observe.h"

#include "base/text.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RLX memory_order_relaxed

const char *obs_priority_label(uint32_t prio) {
    static const char *n[CFG_PRIO_COUNT] = {"critical", "high", "normal", "low"};
    return prio < CFG_PRIO_COUNT ? n[prio] : "unknown";
}

uint32_t obs_procs(shm_t *s, obs_proc_t *ret, uint32_t max) {
    uint32_t n = 0;
    uint64_t now = shm_now_ns();
    for (uint32_t i = 0; i < SHM_MAX_PROCS; i++) {
        shm_proc_info_t p;
        if (!shm_proc_info(s, i, &p) || !p.alive || p.role == ROLE_NONE || p.role == ROLE_CLI) continue;
        uint32_t k = 0;
        while (k < n && !(ret[k].info.role == p.role && ret[k].info.instance == p.instance)) k++;
        if (k < n && ret[k].info.started_ns >= p.started_ns) continue; /* keep the newest */
        if (k == n) {
            if (n == max) continue;
            n++;
        }
        obs_proc_t *o = &ret[k];
        o->info = p;
        uint64_t up = now > p.started_ns ? now - p.started_ns : 0;
        o->busy_ratio = up ? (double)p.busy_ns / (double)up : 0.0;
        if (o->busy_ratio > 1) o->busy_ratio = 1;
        o->heartbeat_age_s = now > p.heartbeat_ns ? (double)(now - p.heartbeat_ns) / 1e9 : 0.0;
    }
    return n;
}

void obs_queued(shm_t *s, uint32_t ret[CFG_PRIO_COUNT]) {
    memset(ret, 0, sizeof(uint32_t) * CFG_PRIO_COUNT);
    for (uint32_t i = 0; i < s->hdr->n_jobs; i++) {
        shm_job_t *j = &s->jobs[i];
        if (shm_job_state(j) != JOB_ACTIVE || j->prio >= CFG_PRIO_COUNT) continue;
        uint32_t c[PART_NSTATES];
        shm_part_counts(s, i, c);
        ret[j->prio] += c[PART_PENDING];
    }
}

/* ---- Prometheus text ---- */

static void family(FILE *o, const char *name, const char *type, const char *help) {
    fprintf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value with \, " and newline escaped (format 0.0.4). */
static void label_value(FILE *o, const char *v) {
    for (; *v; v++) {
        if (*v == '\\' || *v == '"')
            fprintf(o, "\\%c", *v);
        else if (*v == '\n')
            fputs("\\n", o);
        else
            fputc(*v, o);
    }
}

/* ns as exact decimal seconds ("0.000001024", "3", "1099.511627776"). */
static void seconds(FILE *o, uint64_t ns) {
    char frac[16];
    snprintf(frac, sizeof frac, "%09llu", (unsigned long long)(ns % 1000000000ull));
    int n = 9;
    while (n > 0 && frac[n - 1] == '0') n--;
    frac[n] = 0;
    fprintf(o, "%llu%s%s", (unsigned long long)(ns / 1000000000ull), n ? "." : "", frac);
}

static const struct {
    int cnt;
    const char *name, *labels, *help;
    bool ns;
} counters[] = {
    {CNT_SYNTHESIZED, "zkpipe_partitions_synthesized_total", "", "Partitions synthesized into a slab (READY).", false},
    {CNT_PROVED, "zkpipe_partitions_proved_total", "", "Partitions the GPU stage proved (PROVED).", false},
    {CNT_FINALIZED, "zkpipe_partitions_finalized_total", "", "Partitions whose proof was written to the spool.", false},
    {CNT_PART_FAILED, "zkpipe_partitions_failed_total", "", "Partitions that failed.", false},
    {CNT_JOBS_DONE, "zkpipe_jobs_ended_total", "outcome=\"done\"", "Jobs that ended, by outcome.", false},
    {CNT_JOBS_FAILED, "zkpipe_jobs_ended_total", "outcome=\"failed\"", NULL, false},
    {CNT_RECLAIMED, "zkpipe_slabs_reclaimed_total", "", "Slabs reclaimed from a dead owner.", false},
    {CNT_TRIMS, "zkpipe_heap_trims_total", "stage=\"synthd\"", "malloc_trim calls of synthd.", false},
    {CNT_BYTES_COPIED, "zkpipe_witness_copied_bytes_total", "stage=\"synthd\"",
     "Witness bytes synthd copied instead of using in place.", false},
    {CNT_SYNTH_BUSY_NS, "zkpipe_stage_busy_seconds_total", "stage=\"synthd\"",
     "Time each stage spent working on partitions.", true},
    {CNT_GPU_BUSY_NS, "zkpipe_stage_busy_seconds_total", "stage=\"gpud\"", NULL, true},
    {CNT_FIN_BUSY_NS, "zkpipe_stage_busy_seconds_total", "stage=\"finalizerd\"", NULL, true},
    {CNT_VERIFY_FAILED, "zkpipe_proofs_verify_failed_total", "stage=\"finalizerd\"",
     "Proofs the finalizer's verifier rejected.", false},
    {CNT_DISK_FULL, "zkpipe_disk_full_episodes_total", "stage=\"finalizerd\"",
     "Episodes of a finalizer waiting for spool space.", false},
};

static void print_hist(FILE *o, const char *name, const char *labels, const shm_hist_snap_t *h) {
    uint64_t acc = 0;
    for (uint32_t k = 0; k < SHM_HIST_BUCKETS; k++) {
        acc += h->bucket[k];
        fprintf(o, "%s_bucket{%s%sle=\"", name, labels, *labels ? "," : "");
        if (k < SHM_HIST_BUCKETS - 1)
            seconds(o, shm_hist_bound_ns(k));
        else
            fputs("+Inf", o);
        fprintf(o, "\"} %llu\n", (unsigned long long)acc);
    }
    fprintf(o, "%s_sum{%s} ", name, labels);
    seconds(o, h->sum_ns);
    fprintf(o, "\n%s_count{%s} %llu\n", name, labels, (unsigned long long)h->count);
}

static void segment_up(FILE *o, int up) {
    family(o, "zkpipe_segment_up", "gauge", "Whether the pipeline's shared segment exists and can be read.");
    fprintf(o, "zkpipe_segment_up %d\n", up);
}

void obs_metrics_absent(FILE *o, obs_extra_fn extra) {
    segment_up(o, 0);
    if (extra) extra(o);
}

void obs_metrics(shm_t *s, FILE *o, obs_extra_fn extra) {
    segment_up(o, 1);
    family(o, "zkpipe_slab_size_bytes", "gauge", "Size of one slab of the segment.");
    fprintf(o, "zkpipe_slab_size_bytes %llu\n", (unsigned long long)s->hdr->slab_size);
    for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++) {
        if (counters[i].help) family(o, counters[i].name, "counter", counters[i].help);
        fprintf(o, "%s%s%s%s ", counters[i].name, *counters[i].labels ? "{" : "", counters[i].labels,
                *counters[i].labels ? "}" : "");
        if (counters[i].ns)
            seconds(o, shm_counter(s, counters[i].cnt));
        else
            fprintf(o, "%llu", (unsigned long long)shm_counter(s, counters[i].cnt));
        fputc('\n', o);
    }
    uint64_t ef, eh;
    shm_event_range(s, &ef, &eh);
    family(o, "zkpipe_events_total", "counter", "Records written to the (lossy) event ring.");
    fprintf(o, "zkpipe_events_total %llu\n", (unsigned long long)eh);

    uint32_t sc[SLAB_NSTATES];
    shm_slab_counts(s, sc);
    family(o, "zkpipe_slabs", "gauge", "Slabs by state.");
    for (uint32_t i = 0; i < SLAB_NSTATES; i++) {
        char st[16];
        snprintf(st, sizeof st, "%s", shm_slab_state_name(i));
        for (char *c = st; *c; c++) *c = (char)(*c | 0x20); /* lower case */
        fprintf(o, "zkpipe_slabs{state=\"%s\"} %u\n", st, sc[i]);
    }
    uint32_t q[CFG_PRIO_COUNT];
    obs_queued(s, q);
    family(o, "zkpipe_partitions_queued", "gauge", "Partitions of live jobs waiting for synthesis, by priority.");
    for (uint32_t p = 0; p < CFG_PRIO_COUNT; p++)
        fprintf(o, "zkpipe_partitions_queued{priority=\"%s\"} %u\n", obs_priority_label(p), q[p]);

    /* live jobs by (circuit, priority), one series each */
    struct {
        const char *circuit;
        uint32_t prio, jobs, done;
    } act[64];
    uint32_t na = 0;
    for (uint32_t i = 0; i < s->hdr->n_jobs; i++) {
        shm_job_t *j = &s->jobs[i];
        if (!shm_job_live(shm_job_state(j))) continue;
        uint32_t k = 0;
        while (k < na && !(act[k].prio == j->prio && !strncmp(act[k].circuit, j->circuit, SHM_CIRCUIT_MAX))) k++;
        if (k == na) {
            if (na == 64) continue;
            act[na++] = (typeof(act[0])){.circuit = j->circuit, .prio = j->prio};
        }
        uint32_t c[PART_NSTATES];
        shm_part_counts(s, i, c);
        act[k].jobs++;
        act[k].done += c[PART_DONE];
    }
    for (int pass = 0; pass < 2; pass++) {
        if (pass)
            family(o, "zkpipe_job_partitions_done", "gauge",
                   "Partitions done of the live jobs, by circuit and priority.");
        else
            family(o, "zkpipe_jobs_active", "gauge",
                   "Live jobs (active, failing or cancelling), by circuit and priority.");
        for (uint32_t k = 0; k < na; k++) {
            fprintf(o, "%s{circuit=\"", pass ? "zkpipe_job_partitions_done" : "zkpipe_jobs_active");
            label_value(o, act[k].circuit);
            fprintf(o, "\",priority=\"%s\"} %u\n", obs_priority_label(act[k].prio), pass ? act[k].done : act[k].jobs);
        }
    }

    obs_proc_t procs[SHM_MAX_PROCS];
    uint32_t np = obs_procs(s, procs, SHM_MAX_PROCS);
    family(o, "zkpipe_stage_up", "gauge", "Live stage processes (1 each).");
    for (uint32_t i = 0; i < np; i++)
        fprintf(o, "zkpipe_stage_up{stage=\"%s\",instance=\"%u\"} 1\n", shm_role_name(procs[i].info.role),
                procs[i].info.instance);
    family(o, "zkpipe_stage_busy_ratio", "gauge", "Fraction of its time since it registered a stage spent working.");
    for (uint32_t i = 0; i < np; i++)
        fprintf(o, "zkpipe_stage_busy_ratio{stage=\"%s\",instance=\"%u\"} %.6f\n", shm_role_name(procs[i].info.role),
                procs[i].info.instance, procs[i].busy_ratio);
    family(o, "zkpipe_stage_heartbeat_age_seconds", "gauge", "Time since a stage's last loop step.");
    for (uint32_t i = 0; i < np; i++)
        fprintf(o, "zkpipe_stage_heartbeat_age_seconds{stage=\"%s\",instance=\"%u\"} %.3f\n",
                shm_role_name(procs[i].info.role), procs[i].info.instance, procs[i].heartbeat_age_s);
    family(o, "zkpipe_stage_keys_resident", "gauge", "Circuit keys resident in a GPU stage's backend.");
    for (uint32_t i = 0; i < np; i++)
        if (procs[i].info.role == ROLE_GPUD)
            fprintf(o, "zkpipe_stage_keys_resident{stage=\"gpud\",instance=\"%u\"} %u\n", procs[i].info.instance,
                    procs[i].info.keys);
    obs_balance_t bal;
    obs_balance(s, &bal);
    family(o, "zkpipe_balance_ratio", "gauge",
           "Shares of a stage's time over the segment's life: gpud waited for synthesis (no READY slab), synthd "
           "waited for a slab (zkpipe advise).");
    fprintf(o, "zkpipe_balance_ratio{stage=\"gpud\",wait=\"synthesis\"} %.6f\n", bal.gpu_wait);
    fprintf(o, "zkpipe_balance_ratio{stage=\"synthd\",wait=\"slab\"} %.6f\n", bal.synth_wait);
    family(o, "zkpipe_finalizer_lag_seconds", "gauge",
           "How long PROVED partitions of the jobs in the table waited for a finalizer, on average (zkpipe advise).");
    fprintf(o, "zkpipe_finalizer_lag_seconds %.6f\n", bal.lag_ms / 1e3);
    family(o, "zkpipe_stage_partitions_proved_total", "counter",
           "Partitions a GPU stage process proved since it registered, with its backend and device.");
    for (uint32_t i = 0; i < np; i++)
        if (procs[i].info.role == ROLE_GPUD) {
            fprintf(o, "zkpipe_stage_partitions_proved_total{stage=\"gpud\",instance=\"%u\",device=\"",
                    procs[i].info.instance);
            label_value(o, procs[i].info.device);
            fprintf(o, "\"} %llu\n", (unsigned long long)procs[i].info.steps);
        }
    family(o, "zkpipe_stage_disk_wait_partitions", "gauge", "Proofs a finalizer holds back until the spool has space.");
    for (uint32_t i = 0; i < np; i++)
        if (procs[i].info.role == ROLE_FINALIZERD)
            fprintf(o, "zkpipe_stage_disk_wait_partitions{stage=\"finalizerd\",instance=\"%u\"} %u\n",
                    procs[i].info.instance, procs[i].info.disk_wait);

    family(o, "zkpipe_step_duration_seconds", "histogram",
           "Duration of each step of each stage (the GPU stage's idle gaps: wait_ready, idle_ready).");
    for (uint32_t k = 0; k < STEP_MAX; k++) {
        const shm_step_info_t *st = shm_step_info(k);
        shm_hist_snap_t x;
        (void)shm_hist_read(s, k, &x);
        char labels[96];
        snprintf(labels, sizeof labels, "stage=\"%s\",step=\"%s\"", shm_role_name(st->role), st->name);
        print_hist(o, "zkpipe_step_duration_seconds", labels, &x);
    }
    family(o, "zkpipe_job_duration_seconds", "histogram", "Jobs' end-to-end latency (submission to end), by priority.");
    for (uint32_t p = 0; p < CFG_PRIO_COUNT; p++) {
        shm_hist_snap_t x;
        (void)shm_hist_read(s, HIST_JOB + p, &x);
        char labels[48];
        snprintf(labels, sizeof labels, "priority=\"%s\"", obs_priority_label(p));
        print_hist(o, "zkpipe_job_duration_seconds", labels, &x);
    }
    if (extra) extra(o);
}

/* ---- JSON ---- */

static json_object *ms(uint64_t ns) { return json_object_new_double((double)ns / 1e6); }

/* A step's histogram. */
static json_object *hist_json(shm_t *s, uint32_t step) {
    shm_hist_snap_t x;
    (void)shm_hist_read(s, step, &x);
    json_object *o = json_object_new_object(), *b = json_object_new_array();
    for (uint32_t k = 0; k < SHM_HIST_BUCKETS; k++)
        json_object_array_add(b, json_object_new_int64((int64_t)x.bucket[k]));
    json_object_object_add(o, "step", json_object_new_string(shm_step_info(step)->name));
    json_object_object_add(o, "buckets", b);
    json_object_object_add(o, "first_bound_ns", json_object_new_int64((int64_t)shm_hist_bound_ns(0)));
    json_object_object_add(o, "count", json_object_new_int64((int64_t)x.count));
    json_object_object_add(o, "sum_ms", ms(x.sum_ns));
    return o;
}

static char *dump(json_object *o) {
    char *r = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    json_object_put(o);
    return r;
}

char *obs_status_json(shm_t *s, const cfg_t *c) {
    json_object *root = json_object_new_object();
    json_object_object_add(root, "segment", json_object_new_string(s->path));
    char gen[24];
    snprintf(gen, sizeof gen, "%016llx", (unsigned long long)s->hdr->generation);
    json_object_object_add(root, "generation", json_object_new_string(gen));
    json_object *slabs = json_object_new_array();
    for (uint32_t i = 0; i < s->hdr->n_slabs; i++) {
        shm_slab_info_t si;
        shm_slab_info(s, i, &si);
        json_object *o = json_object_new_object();
        json_object_object_add(o, "index", json_object_new_int((int)i));
        json_object_object_add(o, "state", json_object_new_string(shm_slab_state_name(si.state)));
        json_object_object_add(o, "owner_pid", si.owner_pid ? json_object_new_int((int)si.owner_pid) : NULL);
        bool has = si.job < s->hdr->n_jobs;
        json_object_object_add(o, "job", has ? json_object_new_string(s->jobs[si.job].id) : NULL);
        json_object_object_add(o, "partition", has ? json_object_new_int((int)si.part) : NULL);
        json_object_array_add(slabs, o);
    }
    json_object_object_add(root, "slabs", slabs);
    obs_proc_t procs[SHM_MAX_PROCS];
    uint32_t np = obs_procs(s, procs, SHM_MAX_PROCS);
    json_object *stages = json_object_new_array();
    for (uint32_t i = 0; i < np; i++) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "stage", json_object_new_string(shm_role_name(procs[i].info.role)));
        json_object_object_add(o, "instance", json_object_new_int((int)procs[i].info.instance));
        json_object_object_add(o, "pid", json_object_new_int((int)procs[i].info.pid));
        if (procs[i].info.role == ROLE_GPUD) {
            json_object_object_add(o, "device", json_object_new_string(procs[i].info.device));
            json_object_object_add(o, "proved", json_object_new_int64((int64_t)procs[i].info.steps));
        }
        if (procs[i].info.role == ROLE_SYNTHD) { /* a generator compile in progress (docs/witgen.md) */
            json_object *c = NULL;
            uint64_t since = procs[i].info.compile_since_ns, now = shm_now_ns();
            if (since) {
                char name[4 * SHM_CIRCUIT_MAX + 1];
                text_utf8_escape(procs[i].info.compiling, name, sizeof name);
                c = json_object_new_object();
                json_object_object_add(c, "circuit", json_object_new_string(name));
                json_object_object_add(c, "since_s", json_object_new_double(now > since ? (now - since) / 1e9 : 0.0));
            }
            json_object_object_add(o, "compiling", c);
        }
        json_object_object_add(o, "busy_percent", json_object_new_double(100.0 * procs[i].busy_ratio));
        json_object_object_add(o, "heartbeat_age_s", json_object_new_double(procs[i].heartbeat_age_s));
        json_object_object_add(o, "stale", json_object_new_boolean(procs[i].heartbeat_age_s > OBS_STALE_S));
        json_object_object_add(
            o, "slab", procs[i].info.cur_slab != SHM_NONE ? json_object_new_int((int)procs[i].info.cur_slab) : NULL);
        json_object_array_add(stages, o);
    }
    json_object_object_add(root, "stages", stages);
    json_object *jobs = json_object_new_array();
    for (uint32_t i = 0; i < s->hdr->n_jobs; i++) {
        shm_job_t *j = &s->jobs[i];
        uint32_t st = shm_job_state(j);
        if (st == JOB_FREE || st == JOB_LOADING) continue;
        json_object *o = json_object_new_object(), *parts = json_object_new_array();
        json_object_object_add(o, "id", json_object_new_string(j->id));
        json_object_object_add(o, "circuit", json_object_new_string(j->circuit));
        json_object_object_add(o, "priority", json_object_new_string(obs_priority_label(j->prio)));
        json_object_object_add(o, "state", json_object_new_string(shm_job_state_name(st)));
        /* set through shm_job_set_error (UTF-8 already); escaped here too for a segment that an older
         * binary wrote and that outlived it */
        char error[4 * SHM_ERROR_MAX + 1];
        text_utf8_escape(shm_job_error(j), error, sizeof error);
        json_object_object_add(o, "error", json_object_new_string(error));
        uint32_t done = 0;
        for (uint32_t k = 0; k < j->n_parts && k < SHM_MAX_PARTS; k++) {
            shm_part_t *p = &j->parts[k];
            uint32_t ps = shm_part_state(p), slab = shm_part_slab(p);
            done += ps == PART_DONE;
            json_object *q = json_object_new_object();
            json_object_object_add(q, "state", json_object_new_string(shm_part_state_name(ps)));
            json_object_object_add(q, "slab", slab != SHM_NONE ? json_object_new_int((int)slab) : NULL);
            json_object_object_add(q, "synth_ms", ms(atomic_load_explicit(&p->synth_ns, RLX)));
            json_object_object_add(q, "gpu_ms", ms(atomic_load_explicit(&p->gpu_ns, RLX)));
            json_object_object_add(q, "finalize_ms", ms(atomic_load_explicit(&p->fin_ns, RLX)));
            json_object_array_add(parts, q);
        }
        json_object_object_add(o, "partitions_done", json_object_new_int((int)done));
        json_object_object_add(o, "partitions", parts);
        json_object_array_add(jobs, o);
    }
    json_object_object_add(root, "jobs", jobs);
    json_object *cnt = json_object_new_object();
    for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++) {
        char key[128];
        const char *st = strstr(counters[i].labels, "\"");
        snprintf(key, sizeof key, "%s", counters[i].name + strlen("zkpipe_"));
        if (st) /* the label's value makes the key unique: stage_busy_seconds_total.gpud */
            snprintf(key + strlen(key), sizeof key - strlen(key), ".%.*s", (int)strcspn(st + 1, "\""), st + 1);
        json_object_object_add(cnt, key,
                               counters[i].ns ? json_object_new_double((double)shm_counter(s, counters[i].cnt) / 1e9)
                                              : json_object_new_int64((int64_t)shm_counter(s, counters[i].cnt)));
    }
    json_object_object_add(root, "counters", cnt);
    json_object *idle = json_object_new_array();
    json_object_array_add(idle, hist_json(s, STEP_GPU_WAIT_READY));
    json_object_array_add(idle, hist_json(s, STEP_GPU_IDLE_READY));
    json_object_object_add(root, "gpu_idle", idle);
    /* zkpipe advise's numbers and advice */
    obs_advice_t a;
    bool advised = c && obs_advise(s, c, &a) == 0;
    if (!advised) obs_balance(s, &a.b);
    json_object *bal = json_object_new_object();
    const struct {
        const char *k;
        double v;
    } nums[] = {
        {"gpu_busy_ratio", a.b.gpu_busy},         {"gpu_wait_synthesis_ratio", a.b.gpu_wait},
        {"gpu_idle_ready_ratio", a.b.gpu_idle_ready}, {"gpu_seconds", a.b.gpu_total_s},
        {"gpu_ms_per_partition", a.b.per_part_ms}, {"synth_wait_slab_ratio", a.b.synth_wait},
        {"synth_seconds", a.b.synth_total_s},     {"finalizer_lag_ms", a.b.lag_ms},
    };
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
        json_object_object_add(bal, nums[i].k, json_object_new_double(nums[i].v));
    json_object_object_add(bal, "proved", json_object_new_int64((int64_t)a.b.proved));
    json_object_object_add(bal, "finalizer_lag_partitions", json_object_new_int64((int64_t)a.b.lag_n));
    json_object_object_add(root, "balance", bal);
    json_object_object_add(root, "advice", advised ? json_object_new_string(a.text) : NULL);
    return dump(root);
}

char *obs_timeline_json(shm_t *s, uint64_t window_ns) {
    uint64_t now = shm_now_ns(), first, head;
    shm_event_range(s, &first, &head);
    if (head - first > OBS_TIMELINE_MAX)
        first = head - OBS_TIMELINE_MAX; /* the newest, for a page polled each second */
    json_object *root = json_object_new_object(), *ev = json_object_new_array();
    json_object_object_add(root, "window_ms", ms(window_ns));
    for (uint64_t i = first; i < head; i++) {
        shm_event_t e;
        if (!shm_event_read(s, i, &e)) continue;
        if (e.t_ns + e.dur_ns + window_ns < now || e.t_ns > now) continue;
        json_object *o = json_object_new_object();
        json_object_object_add(o, "pid", json_object_new_int((int)e.pid));
        json_object_object_add(o, "stage", json_object_new_string(shm_role_name(e.role)));
        json_object_object_add(o, "type", json_object_new_string(shm_event_name(e.type)));
        json_object_object_add(o, "t_ms", json_object_new_double(-(double)(now - e.t_ns) / 1e6));
        json_object_object_add(o, "dur_ms", ms(e.dur_ns));
        json_object_object_add(o, "job", json_object_new_string(e.job));
        json_object_object_add(o, "part", json_object_new_int((int)e.part));
        json_object_object_add(o, "slab", e.slab != SHM_NONE ? json_object_new_int((int)e.slab) : NULL);
        json_object_object_add(o, "value", json_object_new_int64((int64_t)e.value));
        json_object_array_add(ev, o);
    }
    json_object_object_add(root, "events", ev);
    return dump(root);
}

void obs_balance(shm_t *s, obs_balance_t *a) {
    memset(a, 0, sizeof *a);
    shm_hist_snap_t gw, gi, sw;
    (void)shm_hist_read(s, STEP_GPU_WAIT_READY, &gw);
    (void)shm_hist_read(s, STEP_GPU_IDLE_READY, &gi);
    (void)shm_hist_read(s, STEP_SYNTH_WAIT_SLAB, &sw);
    uint64_t gb = shm_counter(s, CNT_GPU_BUSY_NS), sb = shm_counter(s, CNT_SYNTH_BUSY_NS);
    a->proved = shm_counter(s, CNT_PROVED);
    double lag_sum = 0; /* PROVED -> finalizing, over the partitions of the jobs still in the table */
    for (uint32_t i = 0; i < s->hdr->n_jobs; i++) {
        shm_job_t *j = &s->jobs[i];
        if (shm_job_state(j) == JOB_FREE) continue;
        for (uint32_t k = 0; k < j->n_parts && k < SHM_MAX_PARTS; k++) {
            uint64_t p = atomic_load_explicit(&j->parts[k].t_proved_ns, memory_order_relaxed);
            uint64_t f = atomic_load_explicit(&j->parts[k].t_fin_start_ns, memory_order_relaxed);
            if (p && f >= p) lag_sum += (double)(f - p), a->lag_n++;
        }
    }
    double gpu_total = (double)gb + (double)gw.sum_ns + (double)gi.sum_ns, synth_total = (double)sb + (double)sw.sum_ns;
    a->gpu_total_s = gpu_total / 1e9;
    a->gpu_busy = gpu_total > 0 ? gb / gpu_total : 0;
    a->gpu_wait = gpu_total > 0 ? gw.sum_ns / gpu_total : 0;
    a->gpu_idle_ready = gpu_total > 0 ? gi.sum_ns / gpu_total : 0;
    a->synth_total_s = synth_total / 1e9;
    a->synth_wait = synth_total > 0 ? sw.sum_ns / synth_total : 0;
    a->per_part_ms = a->proved ? (double)gb / (double)a->proved / 1e6 : 0;
    a->lag_ms = a->lag_n ? lag_sum / (double)a->lag_n / 1e6 : 0;
}

int obs_advise(shm_t *s, const cfg_t *c, obs_advice_t *a) {
    memset(a, 0, sizeof *a);
    obs_balance(s, &a->b);
    const obs_balance_t *b = &a->b;
    if (!b->proved) return -1;
    if (b->gpu_wait < OBS_ADVISE_SHARE)
        snprintf(a->text, sizeof a->text,
                 "none: the GPU waited for synthesis %.1f%% of its time (under %.0f%%); the counts keep it fed",
                 100 * b->gpu_wait, 100 * OBS_ADVISE_SHARE);
    else if (b->synth_wait < OBS_ADVISE_SHARE)
        snprintf(a->text, sizeof a->text, "the GPU waited for synthesis: raise [synth] instances from %u to %u",
                 c->synth_instances, c->synth_instances + 1);
    else if (b->lag_ms >= b->per_part_ms / 2)
        snprintf(a->text, sizeof a->text, "the finalizer lagged: raise [finalizer] instances from %u to %u",
                 c->finalizer_instances, c->finalizer_instances + 1);
    else
        snprintf(a->text, sizeof a->text, "synthesis waited for slabs: raise [pipeline] slabs from %u to %u", c->slabs,
                 c->slabs + 2);
    return 0;
}
