/* shm/: create-or-attach, geometry refusal, slab state machine, priority claims, reserve, reclaim
 * of dead owners (real child processes killed with SIGKILL), futex wake across processes, events. */
#include "shm/shm.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

static char seg_path[256];
static const shm_geometry_t geo = {.slabs = 4, .jobs = 8, .events = 64, .slab_size = 2u << 20};

static void fresh_path(const char *tag) {
    snprintf(seg_path, sizeof seg_path, "/dev/shm/zkpipe-test-shm-%d-%s", (int)getpid(), tag);
    (void)unlink(seg_path);
}

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

TEST(events_and_cancel) {
    fresh_path("events");
    shm_t s;
    char err[512];
    CHECK(shm_open_segment(&s, seg_path, &geo, true, err, sizeof err) == 0);
    CHECK(shm_register(&s, ROLE_FINALIZERD, 0) >= 0);
    CHECK(shm_lock(&s) == 0);
    int j = shm_job_register(&s, "evjob", "mul", 2, 3, 0, NULL);
    shm_unlock(&s);
    for (int i = 0; i < 100; i++) shm_event(&s, EV_GPU_PROVE, j, i % 3, 0, 1000 + i, 10, i);
    CHECK_EQ_INT(atomic_load(&s.hdr->ev_head), 100);
    shm_event_t *e = &s.events[99 % 64];
    CHECK_EQ_INT(atomic_load(&e->seq), 100);
    CHECK(!strcmp(e->job, "evjob"));
    CHECK_EQ_INT(e->value, 99);
    CHECK(shm_job_cancel(&s, j) == 0);
    CHECK_EQ_INT(atomic_load(&s.jobs[j].state), JOB_CANCELLING);
    CHECK_EQ_INT(shm_job_outstanding(&s, j), 0); /* pending partitions were dropped */
    uint32_t idx, jj, k;
    CHECK(shm_slab_take_free(&s, 0, false, &idx, NULL) == 0);
    CHECK(shm_part_claim(&s, idx, false, &jj, &k) == -EAGAIN);
    shm_job_fail(&s, j, "first reason");
    shm_job_fail(&s, j, "second reason");
    CHECK(!strcmp(s.jobs[j].error, "first reason"));
    CHECK(!strcmp(shm_event_name(EV_GPU_PROVE), "gpu.prove"));
    shm_close(&s);
    shm_unlink_segment(seg_path);
    return 0;
}
