/* The segment's histograms (shm/) and the observers' text (exporter/observe.c): bucket boundaries,
 * several processes adding at once with exact totals while a reader checks every copy, a read-only
 * attach that cannot write, quantiles and windows, job latency by priority, and the Prometheus
 * text (exact le bounds, +Inf equal to _count, escaped labels, one series per live stage). */
#include <errno.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config/config.h"
#include "exporter/nvml.h"
#include "exporter/observe.h"
#include "shm/shm.h"
#include "test.h"

static char seg_path[256];
static const shm_geometry_t geo = {.slabs = 2, .jobs = 4, .events = 64, .slab_size = 2u << 20};

static int open_fresh(shm_t *s, const char *tag) {
    char err[512];
    snprintf(seg_path, sizeof seg_path, "/dev/shm/zkpipe-test-metrics-%d-%s", (int)getpid(), tag);
    (void)unlink(seg_path);
    CHECK_MSG(shm_open_segment(s, seg_path, &geo, true, err, sizeof err) == 0, "%s", err);
    return 0;
}

TEST_TEARDOWN() {
    if (seg_path[0]) (void)unlink(seg_path);
    return 0;
}

TEST(bucket_boundaries) {
    CHECK_EQ_INT(shm_hist_bucket(0), 0);
    CHECK_EQ_INT(shm_hist_bucket(1), 0);
    CHECK_EQ_INT(shm_hist_bucket(1024), 0);
    CHECK_EQ_INT(shm_hist_bucket(1025), 1);
    CHECK_EQ_INT(shm_hist_bucket(2048), 1);
    CHECK_EQ_INT(shm_hist_bucket(2049), 2);
    CHECK_EQ_INT(shm_hist_bucket(1ull << 40), 30);
    CHECK_EQ_INT(shm_hist_bucket((1ull << 40) + 1), 31);
    CHECK_EQ_INT(shm_hist_bucket(UINT64_MAX), SHM_HIST_BUCKETS - 1);
    /* every bound is inclusive: the bound is in its bucket, one more is in the next */
    for (uint32_t k = 0; k + 1 < SHM_HIST_BUCKETS; k++) {
        CHECK_EQ_INT(shm_hist_bucket(shm_hist_bound_ns(k)), k);
        CHECK_EQ_INT(shm_hist_bucket(shm_hist_bound_ns(k) + 1), k + 1);
    }
    CHECK(shm_hist_bound_ns(SHM_HIST_BUCKETS - 1) == UINT64_MAX);
    /* each histogram owns its cache lines */
    CHECK(sizeof(shm_hist_t) % 64 == 0);
    CHECK(offsetof(shm_header_t, hist) % 64 == 0);
    return 0;
}

/* the value child c adds the i-th time */
static uint64_t value_of(int c, int i) { return (uint64_t)(i % 4099) * 977u + (uint64_t)c * 131u; }
#define ADDERS 4
#define ADDS 200000

TEST(concurrent_adds_exact) {
    shm_t s;
    CHECK(open_fresh(&s, "conc") == 0);
    pid_t kids[ADDERS];
    for (int c = 0; c < ADDERS; c++) {
        kids[c] = fork();
        CHECK(kids[c] >= 0);
        if (kids[c] == 0) {
            shm_t k;
            char err[256];
            if (shm_open_segment(&k, seg_path, NULL, false, err, sizeof err) < 0) _exit(2);
            for (int i = 0; i < ADDS; i++) {
                shm_step(&k, NULL, STEP_GPU_PROVE, 0, value_of(c, i), 0);
                shm_step(&k, NULL, STEP_GPU_WAIT_READY, 0, 5000, 0);
            }
            _exit(0);
        }
    }
    /* a reader meanwhile: every copy is self-consistent and never goes back */
    uint64_t last = 0;
    int snapshots = 0, reads = 0;
    for (int live = ADDERS; live;) {
        shm_hist_snap_t x;
        reads++;
        snapshots += shm_hist_read(&s, STEP_GPU_PROVE, &x);
        uint64_t total = 0;
        for (uint32_t k = 0; k < SHM_HIST_BUCKETS; k++) total += x.bucket[k];
        CHECK(total == x.count);
        CHECK(x.count >= last);
        last = x.count;
        for (int c = 0; c < ADDERS; c++) {
            int st;
            if (kids[c] <= 0 || waitpid(kids[c], &st, WNOHANG) != kids[c]) continue;
            CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
            kids[c] = 0;
            live--;
        }
    }
    uint64_t want[SHM_HIST_BUCKETS] = {0}, want_sum = 0;
    for (int c = 0; c < ADDERS; c++)
        for (int i = 0; i < ADDS; i++) {
            want[shm_hist_bucket(value_of(c, i))]++;
            want_sum += value_of(c, i);
        }
    shm_hist_snap_t x;
    CHECK(shm_hist_read(&s, STEP_GPU_PROVE, &x)); /* quiet now: a snapshot */
    CHECK(x.count == (uint64_t)ADDERS * ADDS);
    CHECK(x.sum_ns == want_sum);
    for (uint32_t k = 0; k < SHM_HIST_BUCKETS; k++) CHECK_MSG(x.bucket[k] == want[k], "bucket %u", k);
    CHECK(shm_hist_read(&s, STEP_GPU_WAIT_READY, &x));
    CHECK(x.count == (uint64_t)ADDERS * ADDS && x.sum_ns == 5000ull * ADDERS * ADDS);
    CHECK(x.bucket[shm_hist_bucket(5000)] == x.count);
    printf("  %d of %d reads during the adds were snapshots\n", snapshots, reads);
    shm_close(&s);
    return 0;
}

TEST(readonly_attach_cannot_write) {
    shm_t s, r;
    char err[512];
    CHECK(open_fresh(&s, "ro") == 0);
    shm_step(&s, NULL, STEP_FIN_WRITE, 0, 3000, 0);
    CHECK_MSG(shm_open_readonly(&r, seg_path, err, sizeof err) == 0, "%s", err);
    CHECK(r.readonly);
    shm_hist_snap_t x;
    CHECK(shm_hist_read(&r, STEP_FIN_WRITE, &x) && x.count == 1 && x.sum_ns == 3000);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        shm_step(&r, NULL, STEP_FIN_WRITE, 0, 1, 0); /* must fault */
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECK_MSG(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV, "a write through the read-only mapping did not fault");
    CHECK(shm_hist_read(&s, STEP_FIN_WRITE, &x) && x.count == 1);
    shm_close(&r);
    CHECK(shm_open_readonly(&r, "/dev/shm/zkpipe-test-metrics-none", err, sizeof err) == -ENOENT);
    shm_close(&s);
    return 0;
}

TEST(quantile_and_window) {
    shm_hist_snap_t a = {0}, b = {0}, d;
    CHECK(shm_hist_quantile_ns(&a, 0.5) == 0);
    a.bucket[shm_hist_bucket(1000)] = 98;   /* <= 1.024 us */
    a.bucket[shm_hist_bucket(3000000)] = 2; /* <= 4.194304 ms */
    CHECK(shm_hist_quantile_ns(&a, 0.5) == 1024);
    CHECK(shm_hist_quantile_ns(&a, 0.98) == 1024);
    CHECK(shm_hist_quantile_ns(&a, 0.99) == 1ull << 22);
    a.sum_ns = 100;
    b = a;
    b.bucket[0] += 10;
    b.sum_ns += 50;
    shm_hist_diff(&b, &a, &d);
    CHECK(d.count == 10 && d.bucket[0] == 10 && d.sum_ns == 50);
    a.bucket[SHM_HIST_BUCKETS - 1] = 1000;
    CHECK(shm_hist_quantile_ns(&a, 0.99) == UINT64_MAX);
    return 0;
}

TEST(job_latency_by_priority) {
    shm_t s;
    CHECK(open_fresh(&s, "job") == 0);
    CHECK(shm_register(&s, ROLE_FINALIZERD, 0) >= 0);
    CHECK(shm_lock(&s) == 0);
    int j = shm_job_register(&s, "j1", "mul", CFG_PRIO_HIGH, 1, 0, NULL);
    CHECK(j >= 0);
    shm_job_end(&s, (uint32_t)j, JOB_DONE);
    shm_unlock(&s);
    shm_hist_snap_t x;
    CHECK(shm_hist_read(&s, HIST_JOB + CFG_PRIO_HIGH, &x) && x.count == 1);
    CHECK(shm_hist_read(&s, HIST_JOB + CFG_PRIO_NORMAL, &x) && x.count == 0);
    shm_close(&s);
    return 0;
}

static char *metrics_text(shm_t *s) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    obs_metrics(s, f, NULL);
    fclose(f);
    return text;
}

/* the value of the sample line that starts with `series ` */
static long long sample(const char *text, const char *series) {
    size_t n = strlen(series);
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (!strncmp(p, series, n) && p[n] == ' ') return atoll(p + n + 1);
    return -1;
}

TEST(prometheus_text) {
    shm_t s;
    CHECK(open_fresh(&s, "text") == 0);
    CHECK(shm_register(&s, ROLE_GPUD, 3) >= 0);
    shm_keys_resident(&s, 2);
    shm_step(&s, NULL, STEP_GPU_PROVE, 0, 1024, 0);
    shm_step(&s, NULL, STEP_GPU_PROVE, 0, 1025, 0);
    shm_step(&s, NULL, STEP_GPU_PROVE, 0, 5ull << 40, 0);
    shm_count(&s, CNT_GPU_BUSY_NS, 1500000001ull);
    CHECK(shm_lock(&s) == 0);
    CHECK(shm_job_register(&s, "j1", "we\"ird\\name", CFG_PRIO_LOW, 3, 0, NULL) >= 0);
    shm_unlock(&s);
    char *t = metrics_text(&s);
    const char *g = "zkpipe_step_duration_seconds_bucket{stage=\"gpud\",step=\"prove\",le=";
    char series[160];
    snprintf(series, sizeof series, "%s\"0.000001024\"}", g);
    CHECK_EQ_INT(sample(t, series), 1);
    snprintf(series, sizeof series, "%s\"0.000002048\"}", g);
    CHECK_EQ_INT(sample(t, series), 2); /* cumulative */
    snprintf(series, sizeof series, "%s\"1099.511627776\"}", g);
    CHECK_EQ_INT(sample(t, series), 2);
    snprintf(series, sizeof series, "%s\"+Inf\"}", g);
    CHECK_EQ_INT(sample(t, series), 3);
    CHECK_EQ_INT(sample(t, "zkpipe_step_duration_seconds_count{stage=\"gpud\",step=\"prove\"}"), 3);
    CHECK_STR_CONTAINS(t, "zkpipe_step_duration_seconds_sum{stage=\"gpud\",step=\"prove\"} 5497.558140929\n");
    CHECK_STR_CONTAINS(t, "zkpipe_stage_busy_seconds_total{stage=\"gpud\"} 1.500000001\n");
    CHECK_STR_CONTAINS(t, "# TYPE zkpipe_step_duration_seconds histogram\n");
    CHECK_STR_CONTAINS(t, "zkpipe_jobs_active{circuit=\"we\\\"ird\\\\name\",priority=\"low\"} 1\n");
    CHECK_EQ_INT(sample(t, "zkpipe_partitions_queued{priority=\"low\"}"), 3);
    CHECK_EQ_INT(sample(t, "zkpipe_stage_up{stage=\"gpud\",instance=\"3\"}"), 1);
    CHECK_EQ_INT(sample(t, "zkpipe_stage_keys_resident{stage=\"gpud\",instance=\"3\"}"), 2);
    CHECK_EQ_INT(sample(t, "zkpipe_slabs{state=\"free\"}"), 2);
    /* every family has HELP and TYPE once, right before its samples */
    int types = 0;
    for (const char *p = t; (p = strstr(p, "# TYPE ")); p++) types++;
    int helps = 0;
    for (const char *p = t; (p = strstr(p, "# HELP ")); p++) helps++;
    CHECK(types > 20 && types == helps);
    free(t);
    /* a dead registration is not a stage */
    shm_unregister(&s);
    t = metrics_text(&s);
    CHECK(sample(t, "zkpipe_stage_up{stage=\"gpud\",instance=\"3\"}") == -1);
    free(t);
    shm_close(&s);
    return 0;
}

TEST(exporter_listen_config) {
    cfg_t c;
    char err[512];
    CHECK_MSG(cfg_load_string(&c, "t.ini", "[pipeline]\nname = x\n", err, sizeof err) == 0, "%s", err);
    CHECK(!strcmp(c.exporter_host, "127.0.0.1") && c.exporter_port == 9821);
    CHECK_MSG(cfg_load_string(&c, "t.ini", "[exporter]\nlisten = 0.0.0.0:9100\n", err, sizeof err) == 0, "%s", err);
    CHECK(!strcmp(c.exporter_host, "0.0.0.0") && c.exporter_port == 9100);
    CHECK_MSG(cfg_load_string(&c, "t.ini", "[exporter]\nlisten = [::1]:80\n", err, sizeof err) == 0, "%s", err);
    CHECK(!strcmp(c.exporter_host, "::1") && c.exporter_port == 80);
    const char *bad[] = {"localhost:9100", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:65536", "::1:80", "[::1]"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char ini[128];
        snprintf(ini, sizeof ini, "[exporter]\nlisten = %s\n", bad[i]);
        CHECK_MSG(cfg_load_string(&c, "t.ini", ini, err, sizeof err) < 0, "%s accepted", bad[i]);
        CHECK_STR_CONTAINS(err, "t.ini:2: listen = ");
    }
    CHECK(cfg_load_string(&c, "t.ini", "[exporter]\nport = 1\n", err, sizeof err) < 0);
    CHECK_STR_CONTAINS(err, "unknown key 'port' in [exporter]");
    /* hosts: lowercased, joined by ','; anything but host names refused */
    CHECK(!c.exporter_hosts[0]);
    CHECK_MSG(cfg_load_string(&c, "t.ini", "[exporter]\nhosts = Box1.Example.org, metrics ,x-y\n", err, sizeof err) == 0,
              "%s", err);
    CHECK_MSG(!strcmp(c.exporter_hosts, "box1.example.org,metrics,x-y"), "hosts kept as %s", c.exporter_hosts);
    const char *badh[] = {"a_b", "evil.com:80", "a/b", "\"x\""};
    for (size_t i = 0; i < sizeof badh / sizeof badh[0]; i++) {
        char ini[128];
        snprintf(ini, sizeof ini, "[exporter]\nhosts = %s\n", badh[i]);
        CHECK_MSG(cfg_load_string(&c, "t.ini", ini, err, sizeof err) < 0, "%s accepted", badh[i]);
        CHECK_STR_CONTAINS(err, "t.ini:2: hosts = ");
    }
    return 0;
}

/* NVML in a child each (loaded once per process): absent -> not a line; present -> one per device. */
static int nvml_child(const char *lib, const char *want, const char *unwanted) {
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        setenv("ZKPIPE_NVML_LIBRARY", lib, 1);
        bool ok = nvml_init();
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        nvml_metrics(f);
        fclose(f);
        if (want && (!ok || !strstr(text, want))) _exit(1);
        if (unwanted && strstr(text, unwanted)) _exit(2);
        if (!want && (ok || len)) _exit(3);
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: child exit %d", lib, WEXITSTATUS(st));
    return 0;
}

TEST(nvml_absent_and_present) {
    CHECK(nvml_child("/nonexistent/libnvidia-ml.so.1", NULL, "zkpipe_gpu_") == 0);
    CHECK(nvml_child(FAKE_NVML, "zkpipe_gpu_utilization_ratio{device=\"0\"} 0.87\n", NULL) == 0);
    CHECK(nvml_child(FAKE_NVML, "zkpipe_gpu_memory_used_bytes{device=\"1\"} 2147483648\n", NULL) == 0);
    CHECK(nvml_child(FAKE_NVML, "zkpipe_gpu_temperature_celsius{device=\"1\"} 62\n", NULL) == 0);
    CHECK(nvml_child(FAKE_NVML, "# TYPE zkpipe_gpu_temperature_celsius gauge\n", NULL) == 0);
    return 0;
}

TEST(status_and_timeline_json) {
    shm_t s;
    char err[512];
    snprintf(seg_path, sizeof seg_path, "/dev/shm/zkpipe-test-metrics-%d-json", (int)getpid());
    (void)unlink(seg_path);
    shm_geometry_t g = geo;
    g.events = 32768;
    CHECK_MSG(shm_open_segment(&s, seg_path, &g, true, err, sizeof err) == 0, "%s", err);
    CHECK(shm_register(&s, ROLE_GPUD, 0) >= 0);
    CHECK(shm_lock(&s) == 0);
    int j = shm_job_register(&s, "jj", "mul", CFG_PRIO_NORMAL, 2, 0, NULL);
    shm_unlock(&s);
    CHECK(j >= 0);
    uint64_t now = shm_now_ns();
    for (uint32_t i = 0; i < OBS_TIMELINE_MAX + 50; i++)
        shm_step(&s, &(shm_pass_t){.job = (uint32_t)j, .part = i % 2, .slab = 0}, STEP_GPU_PROVE, now, 1000, 0);
    char *t = obs_timeline_json(&s, 60ull * 1000000000ull);
    json_object *o = json_tokener_parse(t), *ev, *x;
    CHECK(o && json_object_object_get_ex(o, "events", &ev));
    CHECK_EQ_INT(json_object_array_length(ev), OBS_TIMELINE_MAX); /* the newest only */
    x = json_object_array_get_idx(ev, 0);
    CHECK(json_object_object_get_ex(x, "type", &x) && !strcmp(json_object_get_string(x), "gpu.prove"));
    json_object_put(o);
    free(t);
    t = obs_status_json(&s, NULL);
    o = json_tokener_parse(t);
    CHECK(o);
    json_object *jobs, *slabs, *stages;
    CHECK(json_object_object_get_ex(o, "jobs", &jobs) && json_object_array_length(jobs) == 1);
    CHECK(json_object_object_get_ex(json_object_array_get_idx(jobs, 0), "partitions", &x) &&
          json_object_array_length(x) == 2);
    CHECK(json_object_object_get_ex(o, "slabs", &slabs) && json_object_array_length(slabs) == 2);
    CHECK(json_object_object_get_ex(o, "stages", &stages) && json_object_array_length(stages) == 1);
    CHECK(json_object_object_get_ex(json_object_array_get_idx(stages, 0), "stage", &x) &&
          !strcmp(json_object_get_string(x), "gpud"));
    json_object_put(o);
    free(t);
    shm_close(&s);
    return 0;
}
