/* shm/: create-or-attach, geometry refusal, slab state machine, priority claims, reserve, reclaim
 * of dead owners (real child processes killed with SIGKILL), a dead or live holder of the
 * registration lock, pid reuse, partition give-up, futex wake across processes, events, cancel. */
#include "shm/shm.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/text.h"
#include "common/stage.h"
#include "test.h"

static char seg_path[256];
static const shm_geometry_t geo = {.slabs = 4, .jobs = 8, .events = 64, .slab_size = 2u << 20};

static char made[32][sizeof seg_path]; /* every segment path handed out, removed by the teardown */
static int n_made;

static void fresh_path(const char *tag) {
    snprintf(seg_path, sizeof seg_path, "/dev/shm/zkpipe-test-shm-%d-%s", (int)getpid(), tag);
    (void)unlink(seg_path);
    if (n_made < 32) snprintf(made[n_made++], sizeof made[0], "%s", seg_path);
}

/* A case that fails half-way leaves no segment behind. */
TEST_TEARDOWN() {
    for (int i = 0; i < n_made; i++) (void)unlink(made[i]);
    return 0;
}

/* Registers a job under the registration lock; its slot, or a negative errno. */
static int new_job(shm_t *s, const char *id, uint32_t prio, uint32_t n_parts) {
    if (shm_lock(s) < 0) return -EIO;
    int j = shm_job_register(s, id, "mul", prio, n_parts, 0, NULL);
    shm_unlock(s);
    return j;
}

/* A fresh segment for one case, this process registered in it, and with n_parts a NORMAL job named
 * after the tag in *ret_job. */
static int open_fresh(shm_t *s, const char *tag, uint32_t role, uint32_t n_parts, int *ret_job) {
    char err[512];
    fresh_path(tag);
    CHECK_MSG(shm_open_segment(s, seg_path, &geo, true, err, sizeof err) == 0, "%s", err);
    CHECK(shm_register(s, role, 0) >= 0);
    if (n_parts) {
        *ret_job = new_job(s, tag, 2, n_parts);
        CHECK(*ret_job >= 0);
    }
    return 0;
}

/* The end of a case: the segment closed and removed. */
static int close_fresh(shm_t *s) {
    shm_close(s);
    shm_unlink_segment(seg_path);
    return 0;
}

static uint32_t part_state(shm_t *s, int job, uint32_t part) {
    return shm_word_state(atomic_load(&s->jobs[job].parts[part].word));
}
static uint64_t counter(shm_t *s, int c) { return atomic_load(&s->hdr->counters[c]); }

TEST(create_attach_geometry) {
    fresh_path("geo");
    shm_t a, b;
    char err[512];
    CHECK_MSG(shm_open_segment(&a, seg_path, &geo, true, err, sizeof err) == 0, "%s", err);
    CHECK(a.created);
    CHECK((uintptr_t)a.data % (2u << 20) == 0);
    CHECK_EQ_INT(a.hdr->n_slabs, 4);
    CHECK_EQ_INT(a.hdr->total_size % (2u << 20), 0);
    CHECK_MSG(shm_open_segment(&b, seg_path, &geo, true, err, sizeof err) == 0, "%s", err);
    CHECK(!b.created);
    CHECK(a.hdr->generation == b.hdr->generation);
    /* both mappings see the same memory */
    shm_slab_data(&a, 3)[100] = 42;
    CHECK_EQ_INT(shm_slab_data(&b, 3)[100], 42);
    shm_close(&b);
    shm_geometry_t g2 = geo;
    g2.slabs = 2;
    CHECK(shm_open_segment(&b, seg_path, &g2, true, err, sizeof err) == -ESTALE);
    CHECK_STR_CONTAINS(err, "slabs is 4 in the segment, 2 in the config");
    /* attach-only to a missing segment */
    CHECK(shm_open_segment(&b, "/dev/shm/zkpipe-test-does-not-exist", &geo, false, err, sizeof err) == -ENOENT);
    shm_close(&a);
    CHECK(shm_unlink_segment(seg_path) == 0);
    return 0;
}

/* A segment of an older layout (version 6: events and histograms numbered before the step table)
 * is refused, read-write and read-only, naming both versions; it is never reinterpreted. */
TEST(older_layout_refused) {
    shm_t a, b;
    char err[512];
    fresh_path("version");
    CHECK_MSG(shm_open_segment(&a, seg_path, &geo, true, err, sizeof err) == 0, "%s", err);
    a.hdr->version = SHM_LAYOUT_VERSION - 1;
    shm_close(&a);
    CHECK_EQ_INT(shm_open_segment(&b, seg_path, &geo, true, err, sizeof err), -EPROTO);
    char want[200];
    snprintf(want, sizeof want, "layout version %u (header %zu bytes), this build uses %u", SHM_LAYOUT_VERSION - 1,
             sizeof(shm_header_t), SHM_LAYOUT_VERSION);
    CHECK_MSG(strstr(err, want), "%s", err);
    CHECK_EQ_INT(shm_open_readonly(&b, seg_path, err, sizeof err), -EPROTO);
    shm_unlink_segment(seg_path);
    return 0;
}

TEST(slab_cycle_and_priority) {
    fresh_path("cycle");
    shm_t s;
    char err[512];
    CHECK_MSG(shm_open_segment(&s, seg_path, &geo, true, err, sizeof err) == 0, "%s", err);
    CHECK(shm_register(&s, ROLE_SYNTHD, 1) >= 0);
    CHECK(shm_lock(&s) == 0);
    int jn = shm_job_register(&s, "normal-job", "mul", 2, 3, 0, NULL);
    bool done_mask[2] = {true, false};
    int jc = shm_job_register(&s, "crit-job", "mul", 0, 2, 0, done_mask);
    CHECK(jn >= 0 && jc >= 0 && jn != jc);
    CHECK_EQ_INT(shm_job_register(&s, "normal-job", "mul", 2, 3, 0, NULL), jn); /* idempotent */
    shm_unlock(&s);
    uint32_t slab, job, part;
    /* CRITICAL first; its partition 0 is already done */
    CHECK(shm_slab_take_free(&s, 0, false, &slab, NULL) == 0);
    CHECK_EQ_INT(shm_slab_state(&s, slab), SLAB_FILLING);
    CHECK(shm_part_claim(&s, slab, false, &job, &part) == 0);
    CHECK_EQ_INT(job, jc);
    CHECK_EQ_INT(part, 1);
    CHECK(shm_slab_move(&s, slab, SLAB_FILLING, SLAB_READY) == 0);
    /* then the NORMAL job in ascending partition order */
    uint32_t s2, s3;
    CHECK(shm_slab_take_free(&s, 0, false, &s2, NULL) == 0);
    CHECK(shm_part_claim(&s, s2, false, &job, &part) == 0);
    CHECK(job == (uint32_t)jn && part == 0);
    CHECK(shm_slab_take_free(&s, 0, false, &s3, NULL) == 0);
    CHECK(shm_part_claim(&s, s3, false, &job, &part) == 0);
    CHECK(job == (uint32_t)jn && part == 1);
    /* a claim given back (shm_part_retry) is not counted: synth_count counts the claims a synthd
     * never gave back (deaths, hangs), which WITGEN_MAX_CLAIMS caps */
    CHECK_EQ_INT(atomic_load(&s.jobs[jn].parts[1].synth_count), 1);
    CHECK(shm_part_retry(&s, s3, job, part));
    CHECK_EQ_INT(atomic_load(&s.jobs[jn].parts[1].synth_count), 0);
    CHECK(shm_slab_take_free(&s, 0, false, &s3, NULL) == 0);
    CHECK(shm_part_claim(&s, s3, false, &job, &part) == 0);
    CHECK(job == (uint32_t)jn && part == 1);
    CHECK_EQ_INT(atomic_load(&s.jobs[jn].parts[1].synth_count), 1);
    /* publish them out of order: the GPU still picks by (prio, order, partition) */
    CHECK(shm_slab_move(&s, s3, SLAB_FILLING, SLAB_READY) == 0);
    CHECK(shm_slab_move(&s, s2, SLAB_FILLING, SLAB_READY) == 0);
    uint32_t p1, p2, p3;
    CHECK(shm_slab_pick(&s, SLAB_READY, SLAB_PROVING, &p1) == 0 && p1 == slab);
    CHECK(shm_slab_pick(&s, SLAB_READY, SLAB_PROVING, &p2) == 0 && p2 == s2);
    CHECK(shm_slab_pick(&s, SLAB_READY, SLAB_PROVING, &p3) == 0 && p3 == s3);
    CHECK(shm_slab_pick(&s, SLAB_READY, SLAB_PROVING, &p3) == -EAGAIN);
    /* only the owner's word moves a slab on */
    CHECK(shm_slab_move(&s, p1, SLAB_READY, SLAB_PROVED) == -ESTALE);
    CHECK(shm_slab_move(&s, p1, SLAB_PROVING, SLAB_PROVED) == 0);
    CHECK(shm_slab_move(&s, p1, SLAB_PROVED, SLAB_FINALIZING) == 0);
    CHECK(shm_slab_move(&s, p1, SLAB_FINALIZING, SLAB_FREE) == 0);
    uint32_t counts[SLAB_NSTATES];
    shm_slab_counts(&s, counts);
    CHECK_EQ_INT(counts[SLAB_FREE], 2);
    CHECK_EQ_INT(counts[SLAB_PROVING], 2);
    shm_close(&s);
    shm_unlink_segment(seg_path);
    return 0;
}

TEST(reserve_critical) {
    fresh_path("reserve");
    shm_t s;
    char err[512];
    CHECK(shm_open_segment(&s, seg_path, &geo, true, err, sizeof err) == 0);
    CHECK(shm_register(&s, ROLE_SYNTHD, 1) >= 0);
    uint32_t idx;
    bool reserved;
    /* 4 slabs, 1 reserved: three for anyone, the fourth only for CRITICAL */
    for (int i = 0; i < 3; i++) CHECK(shm_slab_take_free(&s, 1, false, &idx, &reserved) == 0 && !reserved);
    CHECK(shm_slab_take_free(&s, 1, false, &idx, &reserved) == -EAGAIN);
    CHECK(!shm_critical_pending(&s));
    CHECK(shm_lock(&s) == 0);
    CHECK(shm_job_register(&s, "urgent", "mul", 0, 1, 0, NULL) >= 0);
    shm_unlock(&s);
    CHECK(shm_critical_pending(&s));
    CHECK(shm_slab_take_free(&s, 1, true, &idx, &reserved) == 0 && reserved);
    shm_close(&s);
    shm_unlink_segment(seg_path);
    return 0;
}

/* A child registers, takes slabs into FILLING and PROVING and is killed with SIGKILL. */
TEST(reclaim_dead_owner) {
    fresh_path("reclaim");
    shm_t s;
    char err[512];
    CHECK(shm_open_segment(&s, seg_path, &geo, true, err, sizeof err) == 0);
    CHECK(shm_register(&s, ROLE_GPUD, 0) >= 0);
    CHECK(shm_lock(&s) == 0);
    int j = shm_job_register(&s, "job", "mul", 2, 2, 0, NULL);
    shm_unlock(&s);
    CHECK(j >= 0);
    int pfd[2];
    CHECK(pipe(pfd) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed check in the parent must not leave it behind */
        shm_t c;
        char e[256];
        if (shm_open_segment(&c, seg_path, &geo, false, e, sizeof e) < 0 || shm_register(&c, ROLE_SYNTHD, 1) < 0)
            _exit(1);
        uint32_t a, b, jj, k;
        if (shm_slab_take_free(&c, 0, false, &a, NULL) || shm_part_claim(&c, a, false, &jj, &k)) _exit(2);
        if (shm_slab_take_free(&c, 0, false, &b, NULL) || shm_part_claim(&c, b, false, &jj, &k)) _exit(3);
        if (shm_slab_move(&c, b, SLAB_FILLING, SLAB_READY)) _exit(4);
        uint32_t p;
        if (shm_slab_pick(&c, SLAB_READY, SLAB_PROVING, &p) || p != b) _exit(5);
        char ok = 'k';
        (void)!write(pfd[1], &ok, 1);
        pause();
        _exit(0);
    }
    char ok = 0;
    CHECK(read(pfd[0], &ok, 1) == 1 && ok == 'k');
    uint32_t counts[SLAB_NSTATES];
    shm_slab_counts(&s, counts);
    CHECK_EQ_INT(counts[SLAB_FILLING], 1);
    CHECK_EQ_INT(counts[SLAB_PROVING], 1);
    CHECK_EQ_INT(shm_reclaim(&s), 0); /* the owner is alive: nothing to take */
    kill(pid, SIGKILL);
    /* not reaped yet: a zombie owns nothing either */
    usleep(20000);
    CHECK_EQ_INT(shm_reclaim(&s), 2);
    waitpid(pid, NULL, 0);
    shm_slab_counts(&s, counts);
    CHECK_EQ_INT(counts[SLAB_FREE], 3);  /* the FILLING one went back to FREE */
    CHECK_EQ_INT(counts[SLAB_READY], 1); /* the PROVING one kept its data and is READY again */
    /* the partition of the FILLING slab is pending again, the other still in flight */
    CHECK_EQ_INT(atomic_load(&s.jobs[j].parts[0].word) & 0xff, PART_PENDING);
    CHECK_EQ_INT(atomic_load(&s.jobs[j].parts[1].word) & 0xff, PART_INFLIGHT);
    CHECK(atomic_load(&s.hdr->counters[CNT_RECLAIMED]) == 2);
    close(pfd[0]);
    close(pfd[1]);
    shm_close(&s);
    shm_unlink_segment(seg_path);
    return 0;
}

TEST(futex_wake_across_processes) {
    fresh_path("futex");
    shm_t s;
    char err[512];
    CHECK(shm_open_segment(&s, seg_path, &geo, true, err, sizeof err) == 0);
    uint32_t seen = atomic_load(&s.hdr->slab_seq);
    CHECK(shm_wait(&s.hdr->slab_seq, seen, 20) == -ETIMEDOUT);
    pid_t pid = fork();
    if (pid == 0) {
        shm_t c;
        char e[256];
        if (shm_open_segment(&c, seg_path, NULL, false, e, sizeof e) < 0) _exit(1);
        usleep(50000);
        shm_bump(&c.hdr->slab_seq);
        _exit(0);
    }
    uint64_t t0 = shm_now_ns();
    int r = shm_wait(&s.hdr->slab_seq, seen, 5000);
    uint64_t dt = shm_now_ns() - t0;
    int st;
    waitpid(pid, &st, 0);
    CHECK_EQ_INT(r, 0);
    CHECK(dt < 2000000000ull); /* woken, not timed out */
    CHECK(atomic_load(&s.hdr->slab_seq) != seen);
    shm_close(&s);
    shm_unlink_segment(seg_path);
    return 0;
}

TEST(event_ring) {
    shm_t s;
    int j;
    if (open_fresh(&s, "events", ROLE_FINALIZERD, 3, &j)) return 1;
    /* 100 records into a ring of 64: the head counts all of them, the newest overwrote the oldest */
    for (int i = 0; i < 100; i++) {
        shm_pass_t ps = shm_pass((uint32_t)j, (uint32_t)i % 3, 0);
        shm_step(&s, &ps, STEP_GPU_PROVE, 1000 + i, 10, i);
    }
    CHECK_EQ_INT(atomic_load(&s.hdr->ev_head), 100);
    shm_event_t *e = &s.events[99 % 64];
    CHECK_EQ_INT(atomic_load(&e->seq), 100);
    CHECK(!strcmp(e->job, "events"));
    CHECK_EQ_INT(e->value, 99);
    CHECK_EQ_INT(e->part, 99 % 3);
    CHECK_EQ_INT(e->type, EV_STEP + STEP_GPU_PROVE);
    CHECK_EQ_INT(e->role, ROLE_FINALIZERD);
    /* slot 35 now holds record 99 (checked above); slot 36 still holds record 36 */
    CHECK_EQ_INT(atomic_load(&s.events[36].seq), 37);
    CHECK_EQ_INT(s.events[36].value, 36);
    return close_fresh(&s);
}

TEST(event_names) {
    CHECK(!strcmp(shm_event_name(EV_STEP + STEP_GPU_PROVE), "gpu.prove"));
    CHECK(!strcmp(shm_event_name(EV_RECLAIM), "reclaim"));
    for (uint32_t t = EV_STEP; t < EV_MAX; t++) CHECK_MSG(strcmp(shm_event_name(t), "?"), "event %u", t);
    CHECK(!strcmp(shm_event_name(EV_MAX), "?"));
    CHECK(!strcmp(shm_event_name(0), "?"));
    return 0;
}

/* The shm_part_t field a step's table row names, read by its name (not through the table). */
static uint64_t part_field_by_name(shm_part_t *p, const char *name) {
    if (!name) return 0;
    if (!strcmp(name, "synth_ns")) return atomic_load(&p->synth_ns);
    if (!strcmp(name, "gpu_ns")) return atomic_load(&p->gpu_ns);
    if (!strcmp(name, "fin_ns")) return atomic_load(&p->fin_ns);
    return UINT64_MAX; /* a field this test does not know */
}

static uint64_t hist_total(shm_t *s) {
    uint64_t n = 0;
    for (uint32_t h = 0; h < HIST_MAX; h++) {
        shm_hist_snap_t x;
        (void)shm_hist_read(s, h, &x);
        n += x.count;
    }
    return n;
}

/* Issue 20, 3: every step of the table reaches every sink its row names, and only those: the event
 * (type, name, times, value, partition), its own histogram (count and sum; no other moves), the
 * journal field of the pass, and the partition's field (the pass's sum of the steps naming it). A
 * row without one of them, or a sink that a step misses, fails here. */
TEST(step_table_sinks) {
    shm_t s;
    int j;
    if (open_fresh(&s, "steps", ROLE_GPUD, 2, &j)) return 1;
    static const char *const prefix[] = {[ROLE_SYNTHD] = "synth", [ROLE_GPUD] = "gpu", [ROLE_FINALIZERD] = "finalize"};
    CHECK(shm_step_info(STEP_MAX) == NULL);
    for (uint32_t k = 0; k < STEP_MAX; k++) {
        const shm_step_info_t *st = shm_step_info(k);
        CHECK(st && st->name && st->name[0] && st->event);
        CHECK_MSG(st->role == ROLE_SYNTHD || st->role == ROLE_GPUD || st->role == ROLE_FINALIZERD, "step %s", st->name);
        char want[96];
        snprintf(want, sizeof want, "%s.%s", prefix[st->role], st->name);
        CHECK_MSG(!strcmp(st->event, want), "step %s: event %s", st->name, st->event);
        CHECK(!strcmp(shm_event_name(EV_STEP + k), st->event));
        if (st->journal) {
            size_t n = snprintf(want, sizeof want, "ZKPIPE_");
            for (const char *c = st->name; *c; c++) want[n++] = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
            snprintf(want + n, sizeof want - n, "_NS");
            CHECK_MSG(!strcmp(st->journal, want), "step %s: journal %s", st->name, st->journal);
        }
        /* a partition's field only for a step of a partition (one with a journal field) */
        CHECK_MSG(!st->part_field || st->journal, "step %s", st->name);
        for (uint32_t k2 = 0; k2 < k; k2++)
            CHECK_MSG(strcmp(shm_step_info(k2)->name, st->name), "two steps named %s", st->name);

        uint32_t part = k % 2;
        shm_part_t *P = &s.jobs[j].parts[part];
        shm_pass_t ps = shm_pass((uint32_t)j, part, 3);
        shm_hist_snap_t before, after;
        (void)shm_hist_read(&s, k, &before);
        uint64_t all_before = hist_total(&s), first, head0, head;
        uint64_t fields_before[3] = {atomic_load(&P->synth_ns), atomic_load(&P->gpu_ns), atomic_load(&P->fin_ns)};
        shm_event_range(&s, &first, &head0);
        uint64_t dur = 100000 + k * 7;
        shm_step(&s, st->journal ? &ps : NULL, k, 5000 + k, dur, 40 + k);
        /* the event */
        shm_event_range(&s, &first, &head);
        CHECK_EQ_INT(head, head0 + 1);
        shm_event_t e;
        CHECK(shm_event_read(&s, head0, &e));
        CHECK_EQ_INT(e.type, EV_STEP + k);
        CHECK(e.t_ns == 5000 + k && e.dur_ns == dur && e.value == 40 + k && e.role == ROLE_GPUD);
        if (st->journal)
            CHECK_MSG(e.job_slot == (uint32_t)j && e.part == part && e.slab == 3 && !strcmp(e.job, "steps"), "step %s",
                      st->name);
        else
            CHECK_MSG(e.job_slot == UINT32_MAX && e.slab == SHM_NONE, "step %s", st->name);
        /* its histogram, and no other */
        (void)shm_hist_read(&s, k, &after);
        CHECK_MSG(after.count == before.count + 1 && after.sum_ns == before.sum_ns + dur, "step %s", st->name);
        CHECK_EQ_INT(hist_total(&s), all_before + 1);
        /* the journal field of the pass */
        char bufs[STEP_MAX][48];
        const char *fields[STEP_MAX + 1];
        if (st->journal) {
            CHECK(ps.recorded == 1ull << k && ps.ns[k] == dur);
            CHECK_EQ_INT(stage_pass_fields(&ps, bufs, fields), 1);
            snprintf(want, sizeof want, "%s=%llu", st->journal, (unsigned long long)dur);
            CHECK_MSG(!strcmp(fields[0], want) && !fields[1], "step %s: %s", st->name, fields[0]);
        }
        /* the partition's field it names, and no other */
        uint64_t fields_after[3] = {atomic_load(&P->synth_ns), atomic_load(&P->gpu_ns), atomic_load(&P->fin_ns)};
        static const char *const names[3] = {"synth_ns", "gpu_ns", "fin_ns"};
        for (int f = 0; f < 3; f++) {
            bool named = st->part_field && !strcmp(st->part_field, names[f]);
            CHECK_MSG(named ? fields_after[f] == dur : fields_after[f] == fields_before[f], "step %s: %s", st->name,
                      names[f]);
        }
        if (st->part_field) {
            CHECK_MSG(part_field_by_name(P, st->part_field) == dur, "step %s: field %s", st->name, st->part_field);
            CHECK(shm_part_step_ns(P, k) == dur);
        }
    }
    /* a pass's field is the sum of its steps that name it; the next pass replaces it */
    shm_pass_t a = shm_pass((uint32_t)j, 1, 0), b = shm_pass((uint32_t)j, 1, 0);
    shm_step(&s, &a, STEP_SYNTH_READ, 0, 100, 0);
    shm_step(&s, &a, STEP_SYNTH_CHECK, 0, 200, 0);
    shm_step(&s, &a, STEP_SYNTH_EVAL, 0, 300, 0);
    shm_step(&s, &a, STEP_SYNTH_TRIM, 0, 5000, 0); /* no field */
    CHECK_EQ_INT(atomic_load(&s.jobs[j].parts[1].synth_ns), 600);
    char bufs[STEP_MAX][48];
    const char *fields[STEP_MAX + 1];
    CHECK_EQ_INT(stage_pass_fields(&a, bufs, fields), 4);
    CHECK(!strcmp(fields[0], "ZKPIPE_READ_NS=100") && !strcmp(fields[3], "ZKPIPE_TRIM_NS=5000"));
    shm_step(&s, &b, STEP_SYNTH_READ, 0, 50, 0);
    CHECK_EQ_INT(atomic_load(&s.jobs[j].parts[1].synth_ns), 50);
    /* no step past the table: nothing recorded */
    uint64_t all = hist_total(&s), first, h0, h1;
    shm_event_range(&s, &first, &h0);
    shm_step(&s, &a, STEP_MAX, 0, 1, 0);
    shm_event_range(&s, &first, &h1);
    CHECK(h1 == h0 && hist_total(&s) == all);
    return close_fresh(&s);
}

/* Takes a FREE slab and claims the next pending partition into it, as synthd does. */
static int claim_one(shm_t *s, uint32_t *ret_slab, uint32_t *ret_job) {
    uint32_t part;
    CHECK(shm_slab_take_free(s, 0, false, ret_slab, NULL) == 0);
    CHECK(shm_part_claim(s, *ret_slab, false, ret_job, &part) == 0);
    return 0;
}

/* shm_slab_stale, gpud's and the finalizer's one check before working on a slab: the job it was
 * filled for is still that job (same generation) and ACTIVE. */
TEST(slab_stale) {
    shm_t s;
    int j;
    uint32_t slab, job;
    if (open_fresh(&s, "stale", ROLE_GPUD, 2, &j) || claim_one(&s, &slab, &job)) return 1;
    CHECK(job == (uint32_t)j && !shm_slab_stale(&s, slab));
    atomic_fetch_add(&s.jobs[j].gen, 1); /* the record reused for another job */
    CHECK(shm_slab_stale(&s, slab));
    atomic_fetch_sub(&s.jobs[j].gen, 1);
    CHECK(!shm_slab_stale(&s, slab));
    CHECK(shm_job_cancel(&s, (uint32_t)j) == 0);
    CHECK(shm_slab_stale(&s, slab));
    return close_fresh(&s);
}

/* shm_part_pending, synthd's question before it takes a slab: a PENDING partition of an ACTIVE job
 * that the filter does not pass over. */
static bool skip_all(uint32_t job, void *ctx) {
    (void)job;
    (void)ctx;
    return true;
}

TEST(part_pending) {
    shm_t s;
    int j;
    if (open_fresh(&s, "pending", ROLE_SYNTHD, 1, &j)) return 1;
    CHECK(shm_part_pending(&s, false, NULL, NULL));
    CHECK(!shm_part_pending(&s, false, skip_all, NULL));
    uint32_t slab, job;
    if (claim_one(&s, &slab, &job)) return 1;
    CHECK(!shm_part_pending(&s, false, NULL, NULL)); /* in flight: nothing pending */
    int j2 = new_job(&s, "pending2", 2, 1);
    CHECK(j2 >= 0 && shm_part_pending(&s, false, NULL, NULL));
    CHECK(shm_job_cancel(&s, (uint32_t)j2) == 0);
    CHECK(!shm_part_pending(&s, false, NULL, NULL)); /* its partition dropped, the job not ACTIVE */
    return close_fresh(&s);
}

TEST(cancel_drops_pending) {
    shm_t s;
    int j;
    if (open_fresh(&s, "cancel", ROLE_SYNTHD, 3, &j)) return 1;
    uint32_t a, jj, k;
    CHECK(shm_slab_take_free(&s, 0, false, &a, NULL) == 0);
    CHECK(shm_part_claim(&s, a, false, &jj, &k) == 0 && k == 0);
    uint32_t seq = atomic_load(&s.hdr->job_seq);
    CHECK(shm_job_cancel(&s, j) == 0);
    CHECK_EQ_INT(atomic_load(&s.jobs[j].state), JOB_CANCELLING);
    CHECK(atomic_load(&s.hdr->job_seq) != seq);
    /* the pending partitions were dropped; the one in flight is left to its owner */
    CHECK_EQ_INT(part_state(&s, j, 0), PART_INFLIGHT);
    CHECK_EQ_INT(part_state(&s, j, 1), PART_DROPPED);
    CHECK_EQ_INT(part_state(&s, j, 2), PART_DROPPED);
    CHECK_EQ_INT(shm_job_outstanding(&s, j), 1);
    /* nothing of it can be claimed any more */
    uint32_t b;
    CHECK(shm_slab_take_free(&s, 0, false, &b, NULL) == 0);
    CHECK(shm_part_claim(&s, b, false, &jj, &k) == -EAGAIN);
    CHECK(shm_job_cancel(&s, j) == 0);   /* again: still cancelling */
    int j2 = new_job(&s, "cjob2", 2, 2); /* all pending: nothing left outstanding */
    CHECK(j2 >= 0);
    CHECK(shm_job_cancel(&s, j2) == 0);
    CHECK_EQ_INT(shm_job_outstanding(&s, j2), 0);
    shm_job_fail(&s, j, "late failure");
    CHECK_EQ_INT(atomic_load(&s.jobs[j].state), JOB_CANCELLING); /* a failure does not undo a cancel */
    return close_fresh(&s);
}

static bool skip_job(uint32_t job, void *ctx) { return job == *(uint32_t *)ctx; }

/* synthd passes over the jobs of a circuit whose generator compiles (shm_part_claim_skip) and shows
 * the compile in its process slot (shm_proc_compiling, read by shm_proc_info) */
TEST(claim_skip_and_compiling) {
    shm_t s;
    int j;
    if (open_fresh(&s, "skip", ROLE_SYNTHD, 2, &j)) return 1;
    int j2 = new_job(&s, "skip2", 2, 1); /* same priority, later: claimed after j without the filter */
    CHECK(j2 >= 0);
    uint32_t a, jj, k, skip = (uint32_t)j;
    CHECK(shm_slab_take_free(&s, 0, false, &a, NULL) == 0);
    CHECK(shm_part_claim_skip(&s, a, false, skip_job, &skip, &jj, &k) == 0 && jj == (uint32_t)j2 && k == 0);
    uint32_t b;
    CHECK(shm_slab_take_free(&s, 0, false, &b, NULL) == 0);
    CHECK(shm_part_claim_skip(&s, b, false, skip_job, &skip, &jj, &k) == -EAGAIN); /* only j is left */
    CHECK_EQ_INT(part_state(&s, j, 0), PART_PENDING);
    CHECK(shm_part_claim(&s, b, false, &jj, &k) == 0 && jj == (uint32_t)j && k == 0);
    shm_proc_info_t pi;
    CHECK(shm_proc_info(&s, (uint32_t)s.self, &pi) && !pi.compile_since_ns && !pi.compiling[0]);
    uint64_t t0 = shm_now_ns();
    shm_proc_compiling(&s, "poseidon");
    CHECK(shm_proc_info(&s, (uint32_t)s.self, &pi) && pi.compile_since_ns >= t0 && !strcmp(pi.compiling, "poseidon"));
    shm_proc_compiling(&s, NULL);
    CHECK(shm_proc_info(&s, (uint32_t)s.self, &pi) && !pi.compile_since_ns && !pi.compiling[0]);
    return close_fresh(&s);
}

TEST(job_fail_reason_once) {
    shm_t s;
    int j;
    if (open_fresh(&s, "fail", ROLE_SYNTHD, 3, &j)) return 1;
    shm_job_fail(&s, j, "first reason");
    CHECK_EQ_INT(atomic_load(&s.jobs[j].state), JOB_FAILING);
    CHECK_EQ_INT(shm_job_outstanding(&s, j), 0); /* its pending partitions were dropped */
    shm_job_fail(&s, j, "second reason");
    CHECK(!strcmp(s.jobs[j].error, "first reason"));
    CHECK_EQ_INT(atomic_load(&s.jobs[j].err_set), 2);
    CHECK(shm_job_cancel(&s, j) == -EALREADY); /* a failing job cannot be cancelled */
    return close_fresh(&s);
}

/* A reason enters the segment as valid UTF-8 (issue 25, 3): bytes that are not become \xHH, and a
 * reason longer than SHM_ERROR_MAX is cut between characters, never inside one. */
TEST(job_error_utf8) {
    shm_t s;
    int j;
    if (open_fresh(&s, "utf8", ROLE_SYNTHD, 1, &j)) return 1;
    CHECK(shm_job_set_error(&s, (uint32_t)j, "signal q\xff\xfe"));
    CHECK(!strcmp(shm_job_error(&s.jobs[j]), "signal q\\xFF\\xFE"));
    close_fresh(&s);
    for (int odd = 0; odd < 2; odd++) {
        char reason[1024] = "";
        size_t n = odd ? 1 : 0;
        if (odd) reason[0] = 'a';
        for (int k = 0; k < 400; k++) n += (size_t)snprintf(reason + n, sizeof reason - n, "\xc3\xa9");
        if (open_fresh(&s, odd ? "utf8-odd" : "utf8-even", ROLE_SYNTHD, 1, &j)) return 1;
        CHECK(shm_job_set_error(&s, (uint32_t)j, reason));
        CHECK_MSG(text_utf8_valid(shm_job_error(&s.jobs[j])), "cut inside a character (%s)", odd ? "odd" : "even");
        CHECK(strlen(shm_job_error(&s.jobs[j])) >= SHM_ERROR_MAX - 3);
        close_fresh(&s);
    }
    return 0;
}

/* A stage gives up the partition of its own slab with a reason: the partition FAILED, the slab FREE,
 * the job failing with the first reason, the other pending partitions dropped, one failure counted
 * per partition. */
TEST(give_up_fails_partition) {
    shm_t s;
    int j;
    if (open_fresh(&s, "giveup", ROLE_SYNTHD, 3, &j)) return 1;
    uint32_t a, b, jj, k0, k1;
    CHECK(shm_slab_take_free(&s, 0, false, &a, NULL) == 0);
    CHECK(shm_part_claim(&s, a, false, &jj, &k0) == 0 && jj == (uint32_t)j && k0 == 0);
    CHECK(shm_slab_take_free(&s, 0, false, &b, NULL) == 0);
    CHECK(shm_part_claim(&s, b, false, &jj, &k1) == 0 && k1 == 1);
    uint32_t slab_seq = atomic_load(&s.hdr->slab_seq), job_seq = atomic_load(&s.hdr->job_seq);
    shm_part_give_up(&s, a, SLAB_FILLING, j, k0, "witness-0.wtns: bad");
    CHECK_EQ_INT(part_state(&s, j, 0), PART_FAILED);
    CHECK_EQ_INT(shm_slab_state(&s, a), SLAB_FREE);
    CHECK_EQ_INT(atomic_load(&s.jobs[j].state), JOB_FAILING);
    CHECK(!strcmp(s.jobs[j].error, "witness-0.wtns: bad"));
    CHECK_EQ_INT(part_state(&s, j, 1), PART_INFLIGHT); /* another stage's, left to it */
    CHECK_EQ_INT(part_state(&s, j, 2), PART_DROPPED);
    CHECK_EQ_INT(counter(&s, CNT_PART_FAILED), 1);
    CHECK(atomic_load(&s.hdr->slab_seq) != slab_seq && atomic_load(&s.hdr->job_seq) != job_seq);
    /* the second partition fails too: counted, but the job keeps its first reason */
    shm_part_give_up(&s, b, SLAB_FILLING, j, k1, "witness-1.wtns: bad");
    CHECK_EQ_INT(part_state(&s, j, 1), PART_FAILED);
    CHECK_EQ_INT(shm_slab_state(&s, b), SLAB_FREE);
    CHECK(!strcmp(s.jobs[j].error, "witness-0.wtns: bad"));
    CHECK_EQ_INT(counter(&s, CNT_PART_FAILED), 2);
    CHECK_EQ_INT(shm_job_outstanding(&s, j), 0);
    return close_fresh(&s);
}

/* Without a reason (a cancel) the partition is DROPPED: no failure counted, no error set. */
TEST(give_up_drops_partition) {
    shm_t s;
    int j;
    if (open_fresh(&s, "drop", ROLE_GPUD, 2, &j)) return 1;
    uint32_t a, jj, k, p;
    CHECK(shm_slab_take_free(&s, 0, false, &a, NULL) == 0);
    CHECK(shm_part_claim(&s, a, false, &jj, &k) == 0);
    CHECK(shm_slab_move(&s, a, SLAB_FILLING, SLAB_READY) == 0);
    CHECK(shm_slab_pick(&s, SLAB_READY, SLAB_PROVING, &p) == 0 && p == a);
    CHECK(shm_job_cancel(&s, j) == 0);
    shm_part_give_up(&s, a, SLAB_PROVING, j, k, NULL);
    CHECK_EQ_INT(part_state(&s, j, k), PART_DROPPED);
    CHECK_EQ_INT(shm_slab_state(&s, a), SLAB_FREE);
    CHECK_EQ_INT(atomic_load(&s.jobs[j].state), JOB_CANCELLING);
    CHECK_EQ_INT(atomic_load(&s.jobs[j].err_set), 0);
    CHECK_EQ_INT(counter(&s, CNT_PART_FAILED), 0);
    return close_fresh(&s);
}

/* Giving up a partition that this call does not move (it was already given up) counts nothing and
 * fails no job a second time. */
TEST(give_up_twice) {
    shm_t s;
    int j;
    if (open_fresh(&s, "lost", ROLE_SYNTHD, 3, &j)) return 1;
    uint32_t a, jj, k;
    CHECK(shm_slab_take_free(&s, 0, false, &a, NULL) == 0);
    CHECK(shm_part_claim(&s, a, false, &jj, &k) == 0);
    shm_part_give_up(&s, a, SLAB_FILLING, j, k, "first");
    CHECK_EQ_INT(counter(&s, CNT_PART_FAILED), 1);
    shm_part_give_up(&s, a, SLAB_FILLING, j, k, "again");
    CHECK_EQ_INT(counter(&s, CNT_PART_FAILED), 1); /* the second call moved nothing */
    CHECK(!strcmp(s.jobs[j].error, "first"));
    return close_fresh(&s);
}

/* A stage that was taken for dead: its slab was reclaimed (the partition PENDING again) and the
 * partition now fills another slab. Its late give-up must leave that work and the job alone. */
TEST(give_up_after_reclaim) {
    shm_t stale, live;
    uint32_t jj, k;
    char err[512];
    if (open_fresh(&stale, "stale", ROLE_SYNTHD, 0, NULL)) return 1;
    CHECK_MSG(shm_open_segment(&live, seg_path, &geo, false, err, sizeof err) == 0, "%s", err);
    CHECK(shm_register(&live, ROLE_SYNTHD, 1) >= 0);
    int j = new_job(&live, "sjob", 2, 2);
    CHECK(j >= 0);
    uint32_t sa, la, lb;
    CHECK(shm_slab_take_free(&stale, 0, false, &sa, NULL) == 0);
    CHECK(shm_part_claim(&stale, sa, false, &jj, &k) == 0 && k == 0);
    /* stale's slot loses its pid (as after a crash): its words read as dead */
    uint32_t stale_slot = (uint32_t)stale.self, stale_inc = stale.self_inc;
    atomic_store(&stale.procs[stale_slot].claim, (uint64_t)stale_inc << 32);
    CHECK_EQ_INT(shm_reclaim(&live), 1);
    CHECK_EQ_INT(part_state(&live, j, 0), PART_PENDING);
    CHECK(shm_slab_take_free(&live, 0, false, &la, NULL) == 0 && la == sa); /* held, so the next is another */
    CHECK(shm_slab_take_free(&live, 0, false, &lb, NULL) == 0 && lb != sa);
    CHECK(shm_part_claim(&live, lb, false, &jj, &k) == 0 && k == 0);
    shm_part_give_up(&stale, sa, SLAB_FILLING, j, 0, "stale stage");
    CHECK_EQ_INT(part_state(&live, j, 0), PART_INFLIGHT);
    CHECK_EQ_INT(atomic_load(&live.jobs[j].parts[0].word) >> 8, lb); /* still in lb */
    CHECK_EQ_INT(atomic_load(&live.jobs[j].state), JOB_ACTIVE);
    CHECK_EQ_INT(atomic_load(&live.jobs[j].err_set), 0);
    CHECK_EQ_INT(counter(&live, CNT_PART_FAILED), 0);
    CHECK_EQ_INT(shm_slab_state(&live, la), SLAB_FILLING); /* live's slab, not stale's to free */
    shm_close(&stale);
    return close_fresh(&live);
}

/* A child takes the registration lock, leaves a job slot LOADING (as if it died in the middle of a
 * registration) and exits without unlocking. */
static int lock_and_die(int loading_slot) {
    pid_t pid = fork();
    if (pid == 0) {
        shm_t c;
        char e[256];
        if (shm_open_segment(&c, seg_path, &geo, false, e, sizeof e) < 0 || shm_register(&c, ROLE_CLI, 0) < 0) _exit(1);
        if (shm_lock(&c) < 0) _exit(2);
        atomic_store(&c.jobs[loading_slot].state, JOB_LOADING);
        _exit(0);
    }
    int st;
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    return 0;
}

TEST(lock_dead_holder) {
    shm_t s;
    int j;
    if (open_fresh(&s, "deadlock", ROLE_SYNTHD, 1, &j)) return 1;
    if (lock_and_die(5)) return 1;
    uint64_t held = atomic_load(&s.hdr->reg_lock);
    CHECK(held != 0 && held != shm_tag(&s, 1));
    CHECK(!shm_owner_alive(&s, held));
    CHECK_EQ_INT(atomic_load(&s.jobs[5].state), JOB_LOADING);
    alarm(10); /* a lock that is never forced open ends the program instead of hanging it */
    CHECK(shm_lock(&s) == 0);
    alarm(0);
    CHECK(atomic_load(&s.hdr->reg_lock) == shm_tag(&s, 1));
    CHECK_EQ_INT(atomic_load(&s.jobs[5].state), JOB_FREE);   /* the half-registered slot is free again */
    CHECK_EQ_INT(atomic_load(&s.jobs[j].state), JOB_ACTIVE); /* a registered job is left alone */
    shm_unlock(&s);
    CHECK(atomic_load(&s.hdr->reg_lock) == 0);

    /* the same through shm_reclaim, which a daemon's loop calls */
    if (lock_and_die(6)) return 1;
    CHECK(atomic_load(&s.hdr->reg_lock) != 0);
    alarm(10);
    CHECK_EQ_INT(shm_reclaim(&s), 0); /* no slab to reclaim, but the lock is opened */
    alarm(0);
    CHECK(atomic_load(&s.hdr->reg_lock) == 0);
    CHECK_EQ_INT(atomic_load(&s.jobs[6].state), JOB_FREE);
    return close_fresh(&s);
}

/* A live holder is waited for, never forced open: the child says "unlocking" just before it
 * unlocks, so the parent that got the lock must find that word already written. */
TEST(lock_live_holder) {
    shm_t s;
    if (open_fresh(&s, "livelock", ROLE_SYNTHD, 0, NULL)) return 1;
    int held[2], unlocking[2];
    CHECK(pipe(held) == 0 && pipe(unlocking) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        shm_t c;
        char e[256];
        if (shm_open_segment(&c, seg_path, &geo, false, e, sizeof e) < 0 || shm_register(&c, ROLE_CLI, 0) < 0) _exit(1);
        if (shm_lock(&c) < 0) _exit(2);
        (void)!write(held[1], "h", 1);
        usleep(200000);
        (void)!write(unlocking[1], "u", 1);
        shm_unlock(&c);
        _exit(0);
    }
    char c = 0;
    CHECK(read(held[0], &c, 1) == 1 && c == 'h');
    CHECK(shm_lock(&s) == 0);
    CHECK(fcntl(unlocking[0], F_SETFL, O_NONBLOCK) == 0);
    CHECK_MSG(read(unlocking[0], &c, 1) == 1 && c == 'u', "the lock of a live holder was forced open");
    shm_unlock(&s);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    for (int i = 0; i < 2; i++) close(held[i]), close(unlocking[i]);
    return close_fresh(&s);
}

/* A process slot whose pid is alive but whose start time differs belongs to a pid that was reused:
 * its owner is dead. Faked by writing a wrong start time into the slot of a live child. */
TEST(pid_reuse) {
    shm_t s;
    int j;
    if (open_fresh(&s, "pidreuse", ROLE_GPUD, 1, &j)) return 1;
    int pfd[2];
    CHECK(pipe(pfd) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed check in the parent must not leave it behind */
        shm_t c;
        char e[256];
        if (shm_open_segment(&c, seg_path, &geo, false, e, sizeof e) < 0) _exit(1);
        int slot = shm_register(&c, ROLE_SYNTHD, 1);
        uint32_t a, jj, k;
        if (slot < 0 || shm_slab_take_free(&c, 0, false, &a, NULL) || shm_part_claim(&c, a, false, &jj, &k)) _exit(2);
        unsigned char msg[2] = {(unsigned char)slot, (unsigned char)a};
        (void)!write(pfd[1], msg, 2);
        pause();
        _exit(0);
    }
    unsigned char msg[2];
    CHECK(read(pfd[0], msg, 2) == 2);
    uint32_t slot = msg[0], slab = msg[1];
    uint64_t w = atomic_load(&s.slabs[slab].word);
    CHECK_EQ_INT(shm_word_state(w), SLAB_FILLING);
    CHECK_EQ_INT(shm_word_slot(w), slot);
    CHECK(shm_owner_alive(&s, w));
    CHECK_EQ_INT(shm_reclaim(&s), 0);
    uint64_t st;
    CHECK(shm_proc_starttime(pid, &st) == 0);
    CHECK(atomic_load(&s.procs[slot].starttime) == st);
    /* the pid now reads as another process than the one that registered */
    atomic_store(&s.procs[slot].starttime, st + 1);
    CHECK(kill(pid, 0) == 0);
    CHECK(!shm_owner_alive(&s, w));
    CHECK_EQ_INT(shm_reclaim(&s), 1);
    CHECK_EQ_INT(shm_slab_state(&s, slab), SLAB_FREE);
    CHECK_EQ_INT(part_state(&s, j, 0), PART_PENDING);
    /* and its slot is free for the next registration, with a new incarnation */
    uint32_t old_inc = (uint32_t)(atomic_load(&s.procs[slot].claim) >> 32);
    shm_t n;
    char err[512];
    CHECK_MSG(shm_open_segment(&n, seg_path, &geo, false, err, sizeof err) == 0, "%s", err);
    CHECK_EQ_INT(shm_register(&n, ROLE_SYNTHD, 2), slot);
    CHECK_EQ_INT(n.self_inc, old_inc + 1);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    close(pfd[0]);
    close(pfd[1]);
    shm_close(&n);
    return close_fresh(&s);
}
