/* The pipeline's client commands: submit, wait, status, cancel, trace (docs/pipeline.md). They talk
 * to the daemons only through the spool and the shared segment. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "common/spool.h"
#include "config/config.h"
#include "shm/shm.h"

static int load_config(const char *path, cfg_t *c) {
    char err[1200];
    if (cfg_load(c, path, err, sizeof err) < 0) {
        fprintf(stderr, "zkpipe: %s\n", err);
        return -1;
    }
    return 0;
}

/* Attaches to the live segment of any geometry; false when there is none. */
static bool attach(const cfg_t *c, shm_t *s, bool quiet) {
    char err[1200];
    int r = shm_open_segment(s, c->segment, NULL, false, err, sizeof err);
    if (r < 0 && !quiet && r != -ENOENT) fprintf(stderr, "zkpipe: %s\n", err);
    return r == 0;
}

static int copy_file(const char *from, const char *to) {
    int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0) return -errno;
    int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (out < 0) {
        int e = -errno;
        close(in);
        return e;
    }
    char buf[1 << 16];
    ssize_t n;
    int r = 0;
    while ((n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n) {
            r = -EIO;
            break;
        }
    if (n < 0) r = -errno;
    if (r == 0 && fsync(out) < 0) r = -errno;
    close(in);
    close(out);
    return r;
}

static void rm_rf(const char *dir) {
    char **names;
    size_t n;
    if (spool_list(dir, &names, &n) == 0) {
        for (size_t i = 0; i < n; i++) {
            char p[1400];
            snprintf(p, sizeof p, "%s/%s", dir, names[i]);
            unlink(p);
        }
        spool_free_list(names, n);
    }
    rmdir(dir);
}

/* Options of a command whose only option is --config: returns -1 to go on (operands from optind),
 * else the exit status (0 after --help, 2 for a bad option). */
static int parse_config_only(int argc, char **argv, const char *usage, const char **config) {
    static const struct option opts[] = {
        {"config", required_argument, NULL, 'c'}, {"help", no_argument, NULL, 'h'}, {0}};
    int o;
    *config = CFG_DEFAULT_PATH;
    optind = 1;
    while ((o = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
        switch (o) {
        case 'c':
            *config = optarg;
            break;
        case 'h':
            printf("Usage: %s\n", usage);
            return 0;
        default:
            return 2;
        }
    }
    return -1;
}

/* zkpipe submit --input: the operands are circuit inputs (input-<k>.json in the job), which needs a
 * circuit with a witness generator (docs/witgen.md). Gives the partition file name pattern. */
static const char *submit_partition_format(bool inputs, const cfg_circuit_t *ci, const char *config) {
    if (!inputs) return "%s/witness-%u.wtns";
    if (!ci->wasm[0] && !ci->witness_cmd[0]) {
        fprintf(stderr, "zkpipe: --input: circuit %s has no witness generator (wasm or witness_cmd) in %s\n", ci->name,
                config);
        return NULL;
    }
    return "%s/input-%u.json";
}

int zkpipe_cmd_submit(int argc, char **argv) {
    static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
                                         {"circuit", required_argument, NULL, 'C'},
                                         {"priority", required_argument, NULL, 'p'},
                                         {"input", no_argument, NULL, 'I'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    const char *config = CFG_DEFAULT_PATH, *circuit = NULL, *prio_s = NULL;
    bool inputs = false;
    int o;
    optind = 1;
    while ((o = getopt_long(argc, argv, "c:C:p:h", opts, NULL)) != -1) {
        switch (o) {
        case 'I':
            inputs = true;
            break;
        case 'c':
            config = optarg;
            break;
        case 'C':
            circuit = optarg;
            break;
        case 'p':
            prio_s = optarg;
            break;
        case 'h':
            printf("Usage: zkpipe submit [--config FILE] --circuit NAME [--priority CRITICAL|HIGH|NORMAL|LOW] W1.wtns "
                   "[W2.wtns ...]\n"
                   "       zkpipe submit [--config FILE] --circuit NAME [--priority P] --input IN1.json [IN2.json ...]\n"
                   "--input: the files are circuit inputs; synthd computes each witness with the circuit's generator\n");
            return 0;
        default:
            return 2;
        }
    }
    if (!circuit || optind >= argc) {
        fprintf(stderr, "Usage: zkpipe submit [--config FILE] --circuit NAME [--priority P] W1.wtns [W2.wtns ...]\n");
        return 2;
    }
    uint32_t n = (uint32_t)(argc - optind);
    if (n > SHM_MAX_PARTS) {
        fprintf(stderr, "zkpipe: %u witnesses; a job has at most %u partitions\n", n, SHM_MAX_PARTS);
        return 2;
    }
    cfg_t c;
    if (load_config(config, &c) < 0) return 1;
    const cfg_circuit_t *ci = cfg_circuit(&c, circuit);
    if (!ci) {
        fprintf(stderr, "zkpipe: circuit %s is not configured in %s\n", circuit, config);
        return 2;
    }
    const char *part_fmt = submit_partition_format(inputs, ci, config);
    if (!part_fmt) return 2;
    int prio = ci->priority;
    if (prio_s && (prio = cfg_parse_priority(prio_s)) < 0) {
        fprintf(stderr, "zkpipe: --priority %s: expected CRITICAL, HIGH, NORMAL or LOW\n", prio_s);
        return 2;
    }
    char err[1200];
    if (spool_init(c.spool, err, sizeof err) < 0) {
        fprintf(stderr, "zkpipe: %s\n", err);
        return 1;
    }
    spool_job_t j = {.prio = prio, .n_parts = n, .submit_ns = shm_realtime_ns(), .inputs = inputs};
    spool_new_id(j.id);
    snprintf(j.circuit, sizeof j.circuit, "%s", circuit);
    char tmp[1400], dst[1400];
    snprintf(tmp, sizeof tmp, "%s/tmp/%s", c.spool, j.id);
    snprintf(dst, sizeof dst, "%s/incoming/%s", c.spool, j.id);
    if (mkdir(tmp, 0775) < 0) {
        fprintf(stderr, "zkpipe: cannot create %s: %m\n", tmp);
        return 1;
    }
    /* The stages (user zkpipe) must rename the job directory into active/ (moving a directory needs
     * write access to it) and write proofs into it, whoever submits: group-writable whatever the
     * submitter's umask, with the spool's group (setgid, docs/deploy.md). */
    (void)chmod(tmp, 02770);
    for (uint32_t k = 0; k < n; k++) {
        const char *w = argv[optind + (int)k];
        char to[1500];
        snprintf(to, sizeof to, part_fmt, tmp, k);
        int r = link(w, to) == 0 ? 0 : copy_file(w, to); /* a hard link when on the same file system */
        if (r < 0) {
            fprintf(stderr, "zkpipe: cannot copy %s into the spool: %s\n", w, strerror(-r));
            rm_rf(tmp);
            return 1;
        }
    }
    int r = spool_write_job(tmp, &j);
    if (r == 0) r = spool_fsync_dir(tmp);
    if (r == 0 && rename(tmp, dst) < 0) r = -errno;
    if (r < 0) {
        fprintf(stderr, "zkpipe: cannot submit into %s: %s\n", dst, strerror(-r));
        rm_rf(tmp);
        return 1;
    }
    char inc[1400];
    snprintf(inc, sizeof inc, "%s/incoming", c.spool);
    (void)spool_fsync_dir(inc);
    shm_t s;
    if (attach(&c, &s, true)) { /* wake the synthds at once */
        shm_bump(&s.hdr->job_seq);
        shm_close(&s);
    }
    printf("submitted %u partition%s of circuit %s, priority %s\n%s\n", n, n == 1 ? "" : "s", circuit,
           cfg_priority_name(prio), j.id);
    return 0;
}

/* Reads status and error from a result.json. */
static int read_result(const char *path, char *status, size_t slen, char *error, size_t elen, uint32_t *n_parts) {
    json_object *o = json_object_from_file(path);
    if (!o) return -EINVAL;
    json_object *v;
    snprintf(status, slen, "%s", json_object_object_get_ex(o, "status", &v) ? json_object_get_string(v) : "?");
    snprintf(error, elen, "%s", json_object_object_get_ex(o, "error", &v) ? json_object_get_string(v) : "");
    *n_parts = json_object_object_get_ex(o, "partitions", &v) ? (uint32_t)json_object_array_length(v) : 0;
    json_object_put(o);
    return 0;
}

/* Where a job is: "incoming", "active", "done", "failed" or NULL. */
/* A job only moves forward (incoming -> active -> done | failed), each step one rename, so scanning
 * in that order cannot miss a job that moves while we look. */
static const char *job_place(const cfg_t *c, const char *id) {
    static const char *places[] = {"incoming", "active", "done", "failed"};
    for (int i = 0; i < 4; i++) {
        char p[1400];
        snprintf(p, sizeof p, "%s/%s/%s", c->spool, places[i], id);
        if (spool_exists(p)) return places[i];
    }
    return NULL;
}

int zkpipe_cmd_wait(int argc, char **argv) {
    static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
                                         {"timeout", required_argument, NULL, 't'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    const char *config = CFG_DEFAULT_PATH;
    double timeout = -1;
    int o;
    optind = 1;
    while ((o = getopt_long(argc, argv, "c:t:h", opts, NULL)) != -1) {
        switch (o) {
        case 'c':
            config = optarg;
            break;
        case 't':
            timeout = atof(optarg);
            break;
        case 'h':
            printf("Usage: zkpipe wait [--config FILE] [--timeout SECONDS] JOB\n");
            return 0;
        default:
            return 2;
        }
    }
    if (optind + 1 != argc || !spool_valid_id(argv[optind])) {
        fprintf(stderr, "Usage: zkpipe wait [--config FILE] [--timeout SECONDS] JOB\n");
        return 2;
    }
    const char *id = argv[optind];
    cfg_t c;
    if (load_config(config, &c) < 0) return 2;
    if (!job_place(&c, id)) {
        fprintf(stderr, "zkpipe: no job %s in %s\n", id, c.spool);
        return 2;
    }
    shm_t s;
    bool attached = false;
    uint64_t t0 = shm_now_ns();
    for (;;) {
        if (!attached) attached = attach(&c, &s, true);
        uint32_t seq = attached ? atomic_load(&s.hdr->job_seq) : 0;
        const char *place = job_place(&c, id);
        char res[1500], status[32], error[1024];
        uint32_t n = 0;
        if (place && (!strcmp(place, "done") || !strcmp(place, "failed"))) {
            snprintf(res, sizeof res, "%s/%s/%s/result.json", c.spool, place, id);
            if (read_result(res, status, sizeof status, error, sizeof error, &n) < 0) {
                fprintf(stderr, "zkpipe: job %s: cannot read %s\n", id, res);
                return 1;
            }
            if (attached) shm_close(&s);
            if (!strcmp(status, "done")) {
                for (uint32_t k = 0; k < n; k++)
                    printf("%s/done/%s/proof-%u.json %s/done/%s/public-%u.json\n", c.spool, id, k, c.spool, id, k);
                printf("%s\n", res);
                return 0;
            }
            fprintf(stderr, "zkpipe: job %s %s: %s\n", id, status, error[0] ? error : "(no reason recorded)");
            return 1;
        }
        if (!place) {
            fprintf(stderr, "zkpipe: job %s disappeared from %s\n", id, c.spool);
            return 1;
        }
        if (timeout >= 0 && (shm_now_ns() - t0) / 1e9 > timeout) {
            fprintf(stderr, "zkpipe: job %s not finished after %.0f s (still in %s/)\n", id, timeout, place);
            if (attached) shm_close(&s);
            return 1;
        }
        /* the finalizer bumps job_seq when a job ends; the timeout covers a missing segment */
        if (attached)
            (void)shm_wait(&s.hdr->job_seq, seq, 500);
        else
            usleep(200000);
    }
}

static void print_counters(shm_t *s) {
    _Atomic uint64_t *c = s->hdr->counters;
    printf(
        "counters: synthesized %llu proved %llu finalized %llu partitions_failed %llu jobs_done %llu jobs_failed %llu "
        "reclaimed %llu trims %llu verify_failed %llu bytes_copied %llu\n",
        (unsigned long long)c[CNT_SYNTHESIZED], (unsigned long long)c[CNT_PROVED], (unsigned long long)c[CNT_FINALIZED],
        (unsigned long long)c[CNT_PART_FAILED], (unsigned long long)c[CNT_JOBS_DONE],
        (unsigned long long)c[CNT_JOBS_FAILED], (unsigned long long)c[CNT_RECLAIMED], (unsigned long long)c[CNT_TRIMS],
        (unsigned long long)c[CNT_VERIFY_FAILED], (unsigned long long)c[CNT_BYTES_COPIED]);
    uint64_t sp = c[CNT_SYNTHESIZED], pr = c[CNT_PROVED], fi = c[CNT_FINALIZED];
    printf("stage times: synth %.1f ms/partition, gpu %.1f ms/partition, finalize %.1f ms/partition\n",
           sp ? c[CNT_SYNTH_BUSY_NS] / 1e6 / sp : 0.0, pr ? c[CNT_GPU_BUSY_NS] / 1e6 / pr : 0.0,
           fi ? c[CNT_FIN_BUSY_NS] / 1e6 / fi : 0.0);
}

static void print_job(shm_t *s, uint32_t i, bool parts) {
    shm_job_t *j = &s->jobs[i];
    uint32_t st = atomic_load(&j->state);
    uint32_t cnt[5] = {0};
    for (uint32_t k = 0; k < j->n_parts; k++) cnt[atomic_load(&j->parts[k].word) & 0xff]++;
    printf("job %s circuit %s priority %s state %s partitions %u done %u inflight %u pending %u failed %u dropped "
           "%u%s%s\n",
           j->id, j->circuit, cfg_priority_name((int)j->prio), shm_job_state_name(st), j->n_parts, cnt[PART_DONE],
           cnt[PART_INFLIGHT], cnt[PART_PENDING], cnt[PART_FAILED], cnt[PART_DROPPED],
           atomic_load(&j->err_set) == 2 ? " error: " : "", atomic_load(&j->err_set) == 2 ? j->error : "");
    if (!parts) return;
    for (uint32_t k = 0; k < j->n_parts; k++) {
        shm_part_t *p = &j->parts[k];
        uint64_t w = atomic_load(&p->word);
        printf("  partition %u %s%s%.0u synth %.1f ms gpu %.1f ms finalize %.1f ms synthesized %u times, proved %u "
               "times, GPU lost %u times\n",
               k, shm_part_state_name(w & 0xff), (w & 0xff) == PART_INFLIGHT ? " slab " : "",
               (w & 0xff) == PART_INFLIGHT ? (unsigned)(w >> 8) : 0u, atomic_load(&p->synth_ns) / 1e6,
               atomic_load(&p->gpu_ns) / 1e6, atomic_load(&p->fin_ns) / 1e6, atomic_load(&p->synth_count),
               atomic_load(&p->prove_count), atomic_load(&p->lost_count));
    }
}

int zkpipe_cmd_status(int argc, char **argv) {
    const char *config;
    int parsed = parse_config_only(argc, argv, "zkpipe status [--config FILE] [JOB]", &config);
    if (parsed >= 0) return parsed;
    if (optind + 1 < argc) {
        fprintf(stderr, "Usage: zkpipe status [--config FILE] [JOB]\n");
        return 2;
    }
    const char *id = optind < argc ? argv[optind] : NULL;
    cfg_t c;
    if (load_config(config, &c) < 0) return 2;
    shm_t s;
    bool att = attach(&c, &s, false);
    if (id) {
        int slot = att ? shm_job_find(&s, id) : -ENOENT;
        if (slot >= 0) print_job(&s, (uint32_t)slot, true);
        const char *place = job_place(&c, id);
        if (place && (!strcmp(place, "done") || !strcmp(place, "failed"))) {
            char res[1500], status[32], error[1024];
            uint32_t n;
            snprintf(res, sizeof res, "%s/%s/%s/result.json", c.spool, place, id);
            if (read_result(res, status, sizeof status, error, sizeof error, &n) == 0)
                printf("result %s status %s%s%s\n", res, status, error[0] ? " error: " : "", error);
        } else if (place && slot < 0) {
            printf("job %s is in %s/%s, not yet registered by a synthd\n", id, c.spool, place);
        }
        if (att) shm_close(&s);
        if (!place && slot < 0) {
            fprintf(stderr, "zkpipe: no job %s\n", id);
            return 1;
        }
        return 0;
    }
    printf("pipeline %s spool %s\n", c.name, c.spool);
    if (!att) {
        printf("segment %s: not present (no stage is running)\n", c.segment);
    } else {
        shm_header_t *h = s.hdr;
        printf("segment %s: %u slabs of %llu MiB, %u job records, generation %016llx\n", c.segment, h->n_slabs,
               (unsigned long long)(h->slab_size >> 20), h->n_jobs, (unsigned long long)h->generation);
        uint32_t counts[SLAB_NSTATES];
        shm_slab_counts(&s, counts);
        printf("slabs:");
        for (int i = 0; i < SLAB_NSTATES; i++) printf(" %s %u", shm_slab_state_name(i), counts[i]);
        printf("\n");
        print_counters(&s);
        uint64_t now = shm_now_ns();
        for (uint32_t i = 0; i < SHM_MAX_PROCS; i++) {
            shm_proc_t *p = &s.procs[i];
            uint64_t claim = atomic_load(&p->claim);
            if ((claim & 0xffffffffu) == 0) continue;
            bool alive = shm_owner_alive(&s, shm_word(0, i, (uint32_t)(claim >> 32)));
            uint32_t cs = atomic_load(&p->cur_slab);
            uint64_t up = now - atomic_load(&p->started_ns);
            printf("process %s@%u pid %u %s heartbeat %.1f s ago busy %.1f%%%s", shm_role_name(atomic_load(&p->role)),
                   atomic_load(&p->instance), (unsigned)(claim & 0xffffffffu), alive ? "alive" : "dead",
                   (now - atomic_load(&p->heartbeat_ns)) / 1e9, up ? 100.0 * atomic_load(&p->busy_ns) / up : 0.0,
                   cs != SHM_NONE ? " slab " : "");
            if (cs != SHM_NONE) printf("%u", cs);
            printf("\n");
        }
        for (uint32_t i = 0; i < h->n_jobs; i++)
            if (atomic_load(&s.jobs[i].state) != JOB_FREE) print_job(&s, i, false);
    }
    static const char *places[] = {"incoming", "active", "done", "failed"};
    printf("spool:");
    for (int i = 0; i < 4; i++) {
        char d[1400], **names;
        size_t n = 0;
        snprintf(d, sizeof d, "%s/%s", c.spool, places[i]);
        if (spool_list(d, &names, &n) == 0) spool_free_list(names, n);
        printf(" %s %zu", places[i], n);
    }
    printf("\n");
    if (att) shm_close(&s);
    return 0;
}

int zkpipe_cmd_cancel(int argc, char **argv) {
    const char *config;
    int parsed = parse_config_only(argc, argv, "zkpipe cancel [--config FILE] JOB", &config);
    if (parsed >= 0) return parsed;
    if (optind + 1 != argc || !spool_valid_id(argv[optind])) {
        fprintf(stderr, "Usage: zkpipe cancel [--config FILE] JOB\n");
        return 2;
    }
    const char *id = argv[optind];
    cfg_t c;
    if (load_config(config, &c) < 0) return 2;
    shm_t s;
    bool att = attach(&c, &s, true);
    if (att) {
        int slot = shm_job_find(&s, id);
        if (slot >= 0 && shm_job_live(atomic_load(&s.jobs[slot].state))) {
            int r = shm_job_cancel(&s, (uint32_t)slot);
            shm_close(&s);
            if (r < 0) {
                fprintf(stderr, "zkpipe: job %s is already failing or finished\n", id);
                return 1;
            }
            printf("cancelling job %s: its partitions are dropped at their next step\n", id);
            return 0;
        }
        (void)shm_register(&s, ROLE_CLI, 0);
        shm_lock(&s); /* no synthd registers it while we move it */
    }
    int rc = 1;
    const char *place = job_place(&c, id);
    if (place && (!strcmp(place, "incoming") || !strcmp(place, "active"))) {
        char dir[1400];
        snprintf(dir, sizeof dir, "%s/%s/%s", c.spool, place, id);
        int r = spool_fail_dir(c.spool, dir, id, "cancelled", "cancelled before it started");
        if (r < 0)
            fprintf(stderr, "zkpipe: cannot move %s to failed/: %s\n", dir, strerror(-r));
        else
            printf("cancelled job %s\n", id), rc = 0;
    } else if (place) {
        fprintf(stderr, "zkpipe: job %s has already finished (%s/)\n", id, place);
    } else {
        fprintf(stderr, "zkpipe: no job %s\n", id);
        rc = 2;
    }
    if (att) {
        shm_unlock(&s);
        shm_bump(&s.hdr->job_seq);
        shm_close(&s);
    }
    return rc;
}

int zkpipe_cmd_trace(int argc, char **argv) {
    static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
                                         {"out", required_argument, NULL, 'o'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    const char *config = CFG_DEFAULT_PATH, *out = NULL;
    int o;
    optind = 1;
    while ((o = getopt_long(argc, argv, "c:o:h", opts, NULL)) != -1) {
        switch (o) {
        case 'c':
            config = optarg;
            break;
        case 'o':
            out = optarg;
            break;
        case 'h':
            printf("Usage: zkpipe trace [--config FILE] --out FILE\n");
            return 0;
        default:
            return 2;
        }
    }
    if (!out || optind != argc) {
        fprintf(stderr, "Usage: zkpipe trace [--config FILE] --out FILE\n");
        return 2;
    }
    cfg_t c;
    if (load_config(config, &c) < 0) return 2;
    shm_t s;
    if (!attach(&c, &s, false)) {
        fprintf(stderr, "zkpipe: no segment %s: nothing to trace\n", c.segment);
        return 1;
    }
    FILE *f = fopen(out, "we");
    if (!f) {
        fprintf(stderr, "zkpipe: cannot write %s: %m\n", out);
        shm_close(&s);
        return 1;
    }
    uint64_t head = atomic_load(&s.hdr->ev_head), n = s.hdr->n_events;
    uint64_t first = head > n ? head - n : 0;
    fprintf(f, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
    bool comma = false;
    uint32_t pids[256];
    uint32_t roles[256];
    int npids = 0;
    size_t written = 0;
    for (uint64_t i = first; i < head; i++) {
        shm_event_t *e = &s.events[i % n];
        if (atomic_load_explicit(&e->seq, memory_order_acquire) != i + 1) continue;
        shm_event_t ev = *e;
        if (atomic_load_explicit(&e->seq, memory_order_acquire) != i + 1) continue; /* overwritten meanwhile */
        int k;
        for (k = 0; k < npids && pids[k] != ev.pid; k++) {
        }
        if (k == npids && npids < 256) pids[npids] = ev.pid, roles[npids++] = ev.role;
        char job[64];
        spool_json_escape(ev.job, job, sizeof job);
        fprintf(f,
                "%s{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":%u,\"tid\":%u,"
                "\"args\":{\"job\":\"%s\",\"partition\":%u,\"slab\":%d,\"value\":%llu}}",
                comma ? ",\n" : "", shm_event_name(ev.type), shm_role_name(ev.role), ev.t_ns / 1e3, ev.dur_ns / 1e3,
                ev.pid, ev.pid, job, ev.part, ev.slab == SHM_NONE ? -1 : (int)ev.slab, (unsigned long long)ev.value);
        comma = true;
        written++;
    }
    for (int k = 0; k < npids; k++)
        fprintf(f, "%s{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"args\":{\"name\":\"%s %u\"}}",
                comma ? ",\n" : "", pids[k], shm_role_name(roles[k]), pids[k]),
            comma = true;
    fprintf(f, "\n]}\n");
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "zkpipe: error writing %s\n", out);
        shm_close(&s);
        return 1;
    }
    printf("%zu events from %d processes written to %s\n", written, npids, out);
    shm_close(&s);
    return 0;
}

/* Creates the segment and the spool from the ini, or checks that the live segment has the ini's
 * geometry (systemd's zkpipe-segment.service runs this before any stage). */
int zkpipe_cmd_setup(int argc, char **argv) {
    const char *config;
    int parsed = parse_config_only(argc, argv, "zkpipe setup [--config FILE]", &config);
    if (parsed >= 0) return parsed;
    if (optind != argc) {
        fprintf(stderr, "Usage: zkpipe setup [--config FILE]\n");
        return 2;
    }
    cfg_t c;
    char err[1200];
    if (load_config(config, &c) < 0) return 1;
    if (cfg_resolve_slab_size(&c, err, sizeof err) < 0 || spool_init(c.spool, err, sizeof err) < 0) {
        fprintf(stderr, "zkpipe: %s\n", err);
        return 1;
    }
    shm_geometry_t g = {.slabs = c.slabs, .jobs = c.jobs, .events = c.events, .slab_size = c.slab_size};
    shm_t s;
    if (shm_open_segment(&s, c.segment, &g, true, err, sizeof err) < 0) {
        fprintf(stderr, "zkpipe: %s\n", err);
        return 1;
    }
    printf("segment %s %s: %u slabs of %llu MiB (%llu MiB in all); spool %s\n", c.segment,
           s.created ? "created" : "present with the same geometry", s.hdr->n_slabs,
           (unsigned long long)(s.hdr->slab_size >> 20), (unsigned long long)(s.hdr->total_size >> 20), c.spool);
    shm_close(&s);
    return 0;
}
