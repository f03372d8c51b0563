/* The shared segment of one pipeline (docs/shm.md): header, process table, slab table, job table,
 * event ring, counters, slab data. Offsets, never pointers.
 *
 * Invariants (who may write what):
 * - The header's geometry is written once by the creator, before the segment is linked under its
 *   final name; attachers only ever see a fully initialised segment.
 * - A slab's state word changes only by CAS. FILLING, PROVING and FINALIZING carry the owner
 *   (process slot, incarnation); only that owner moves the slab on, except that anyone may reclaim a
 *   slab whose owner is dead (FILLING -> FREE after resetting its partition to PENDING, PROVING ->
 *   READY, FINALIZING -> PROVED). READY and PROVED have no owner.
 * - A slab's descriptor fields (job, partition, key) and its data are written only by the FILLING
 *   owner, before the release-CAS to READY; the raw result only by the PROVING owner before PROVED.
 * - A partition word moves PENDING -> INFLIGHT(slab) by the synthd that owns that slab (FILLING),
 *   INFLIGHT -> DONE by the finalizer owning the slab, INFLIGHT -> PENDING by a reclaimer of a dead
 *   FILLING owner, PENDING/INFLIGHT -> FAILED/DROPPED by whoever fails or drops it. All by CAS.
 * - Job records are created and retired only under the registration lock (an owner-tagged word,
 *   forced open when its owner is dead). The job state moves ACTIVE -> CANCELLING/FAILING by CAS
 *   from anyone; terminal states are set under the lock by the finalizer.
 * - Every change of slab state bumps slab_seq; every change of jobs bumps job_seq. Waiters futex on
 *   those words (shared futexes: no FUTEX_PRIVATE_FLAG), always with a timeout, and re-check.
 * - Times: a step's duration reaches the event ring, its histogram and the partition's stage time
 *   (synth_ns, gpu_ns, fin_ns) through shm_step only, as the step table (SHM_STEPS) says; a
 *   partition's stamps (t_*_ns) are written by the stage that owns its slab at that moment (shm_part_t).
 */
#pragma once
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/shared.h"

#define SHM_MAGIC 0x3168736570697a6bull /* "kzipesh1" */
/* 2: part lost_count; 3: disk-wait gauge, pinned sizes; 4: histograms, keys gauge; 5: gpud's device, steps;
 * 6: synthd's compile in progress (shm_proc_t.compiling, 256-byte process slots); 7: events and
 * histograms numbered by the step table, the unread step times of the slab header and the slab's
 * t_proved_ns gone */
#define SHM_LAYOUT_VERSION 7u
#define SHM_MAX_PROCS 128u
#define SHM_MAX_PARTS 256u
#define SHM_ID_MAX 48
#define SHM_CIRCUIT_MAX 64
#define SHM_ERROR_MAX 320
#define SHM_NONE 0xffffu

/* Slab states. */
enum {
    SLAB_FREE = 0,
    SLAB_FILLING = 1,
    SLAB_READY = 2,
    SLAB_PROVING = 3,
    SLAB_PROVED = 4,
    SLAB_FINALIZING = 5,
    SLAB_NSTATES = 6
};
/* Partition states. */
enum { PART_PENDING = 0, PART_INFLIGHT = 1, PART_DONE = 2, PART_FAILED = 3, PART_DROPPED = 4, PART_NSTATES = 5 };
/* Job states. FREE slots are unused; DONE/FAILED/CANCELLED records stay for `status` until reused. */
enum {
    JOB_FREE = 0,
    JOB_LOADING = 1,
    JOB_ACTIVE = 2,
    JOB_FAILING = 3,
    JOB_CANCELLING = 4,
    JOB_DONE = 5,
    JOB_FAILED = 6,
    JOB_CANCELLED = 7,
    JOB_NSTATES = 8
};
/* Process roles. */
enum { ROLE_NONE = 0, ROLE_SYNTHD = 1, ROLE_GPUD = 2, ROLE_FINALIZERD = 3, ROLE_CLI = 4 };

/* The steps: every duration a stage measures, one line each. One call records a step (shm_step)
 * and this table says where it goes, so that a new step is one line here and its sinks cannot
 * disagree:
 * - the event ring: type EV_STEP + step, named "<stage>.<name>" (zkpipe trace, the live page);
 * - the histogram of index step (zkpipe metrics' stage and step labels; top, advise, status);
 * - the journal: field JOURNAL of the stage's entry for the partition (stage_log_pass in
 *   common/stage.h); NULL for a step of no partition;
 * - the partition: FIELD of shm_part_t (none: no field) holds the sum of the steps of the stage's
 *   latest pass that name it; synth_ns, gpu_ns and fin_ns are written so and in no other way.
 * The GPU steps H2D..MSM_H are in the order of the backend's step times (gpud lays them end to end
 * inside PROVE). X(ID, stage, name, JOURNAL, FIELD): */
#define SHM_STEPS(X)                                                                                                   \
    X(SYNTH_WITNESS, SYNTHD, witness, "ZKPIPE_WITNESS_NS", synth_ns) /* the witness from input.json */                 \
    X(SYNTH_READ, SYNTHD, read, "ZKPIPE_READ_NS", synth_ns)          /* the .wtns file into the slab */                \
    X(SYNTH_CHECK, SYNTHD, check, "ZKPIPE_CHECK_NS", synth_ns)                                                         \
    X(SYNTH_EVAL, SYNTHD, eval, "ZKPIPE_EVAL_NS", synth_ns)                                                            \
    X(SYNTH_TRIM, SYNTHD, trim, "ZKPIPE_TRIM_NS", none)                                                                \
    X(SYNTH_WAIT_SLAB, SYNTHD, wait_slab, NULL, none)                 /* waited for a FREE slab (backpressure) */      \
    X(GPU_WAIT_READY, GPUD, wait_ready, "ZKPIPE_WAIT_READY_NS", none) /* idle: no READY slab was there */              \
    X(GPU_IDLE_READY, GPUD, idle_ready, "ZKPIPE_IDLE_READY_NS", none) /* idle while a READY slab waited */             \
    X(GPU_HANDOFF, GPUD, handoff, "ZKPIPE_HANDOFF_NS", none)          /* READY -> picked up */                         \
    X(GPU_LOAD_KEY, GPUD, load_key, NULL, none)                       /* value: the circuit's index */                 \
    X(GPU_H2D, GPUD, h2d, "ZKPIPE_H2D_NS", none)                                                                       \
    X(GPU_NTT, GPUD, ntt, "ZKPIPE_NTT_NS", none)                                                                       \
    X(GPU_MSM_A, GPUD, msm_a, "ZKPIPE_MSM_A_NS", none)                                                                 \
    X(GPU_MSM_B1, GPUD, msm_b1, "ZKPIPE_MSM_B1_NS", none)                                                              \
    X(GPU_MSM_B2, GPUD, msm_b2, "ZKPIPE_MSM_B2_NS", none)                                                              \
    X(GPU_MSM_C, GPUD, msm_c, "ZKPIPE_MSM_C_NS", none)                                                                 \
    X(GPU_MSM_H, GPUD, msm_h, "ZKPIPE_MSM_H_NS", none)                                                                 \
    X(GPU_PROVE, GPUD, prove, "ZKPIPE_PROVE_NS", gpu_ns) /* the whole proving core */                                  \
    X(FIN_RANDOMIZE, FINALIZERD, randomize, "ZKPIPE_RANDOMIZE_NS", fin_ns)                                             \
    X(FIN_VERIFY, FINALIZERD, verify, "ZKPIPE_VERIFY_NS", fin_ns) /* value: 1 when the proof verified */               \
    X(FIN_WRITE, FINALIZERD, write, "ZKPIPE_WRITE_NS", fin_ns)

enum {
#define SHM_STEP_ENUM(id, stage, name, journal, field) STEP_##id,
    SHM_STEPS(SHM_STEP_ENUM)
#undef SHM_STEP_ENUM
        STEP_MAX
};
_Static_assert(STEP_GPU_MSM_H - STEP_GPU_H2D == 6, "the GPU core's steps: contiguous, in the backend's order");

/* Event types of the ring: one per step (EV_STEP + step), then the events that are no step. */
enum {
    EV_STEP = 1,
    EV_JOB_DONE = EV_STEP + STEP_MAX, /* value: the terminal state */
    EV_RECLAIM,                       /* value: the state the slab was reclaimed from */
    EV_MAX
};

/* Counters (header.counters[]). */
enum {
    CNT_SYNTHESIZED = 0,
    CNT_PROVED,
    CNT_FINALIZED,
    CNT_PART_FAILED,
    CNT_JOBS_DONE,
    CNT_JOBS_FAILED,
    CNT_RECLAIMED,
    CNT_TRIMS,
    CNT_BYTES_COPIED,
    CNT_GPU_BUSY_NS,
    CNT_SYNTH_BUSY_NS,
    CNT_FIN_BUSY_NS,
    CNT_VERIFY_FAILED,
    CNT_DISK_FULL, /* episodes of a finalizer waiting for spool space */
    CNT_MAX
};

/* Histograms (header.hist[]): durations in ns, lossless (docs/shm.md, "Histograms"). Histogram
 * STEP_* is that step's (shm_step); HIST_JOB + priority is a job's end-to-end latency, recorded by
 * shm_job_end. */
enum { HIST_JOB = STEP_MAX, HIST_MAX = HIST_JOB + CFG_PRIO_COUNT };
/* Bucket k < SHM_HIST_BUCKETS - 1 counts values v <= 2^(k + SHM_HIST_SHIFT) ns (and above the bucket
 * before it): 1.024 us, 2.048 us, ... 2^40 ns (about 1100 s); the last bucket counts the rest. */
#define SHM_HIST_BUCKETS 32u
#define SHM_HIST_SHIFT 10u

/* One histogram, on cache lines of its own. Writers add with relaxed atomics: the bucket, then the
 * sum, then the count (release); never a lock. */
typedef struct shm_hist {
    alignas(64) _Atomic uint64_t bucket[SHM_HIST_BUCKETS];
    _Atomic uint64_t sum_ns;
    _Atomic uint64_t count;
} shm_hist_t;

typedef struct shm_header {
    uint64_t magic;
    uint32_t version, header_size;
    uint32_t n_slabs, n_jobs, n_events, n_procs;
    uint64_t slab_size, total_size;
    uint64_t procs_off, slabs_off, jobs_off, events_off, data_off;
    uint64_t generation; /* random at creation: tells clients the segment was re-created */
    uint64_t created_ns; /* CLOCK_REALTIME */
    char name[64];
    alignas(64) _Atomic uint32_t slab_seq;
    alignas(64) _Atomic uint32_t job_seq;
    alignas(64) _Atomic uint64_t next_order;
    _Atomic uint64_t reg_lock; /* owner tag (shm_tag) or 0 */
    alignas(64) _Atomic uint64_t ev_head;
    alignas(64) _Atomic uint64_t counters[CNT_MAX];
    shm_hist_t hist[HIST_MAX];
} shm_header_t;

typedef struct shm_proc {
    alignas(64) _Atomic uint64_t claim; /* incarnation << 32 | pid; pid 0 = free */
    _Atomic uint64_t starttime;         /* /proc/<pid>/stat field 22 of the owner */
    _Atomic uint32_t ready_inc;         /* == claim's incarnation once starttime is valid */
    _Atomic uint32_t role, instance;
    _Atomic uint32_t cur_slab;     /* slab being worked on, SHM_NONE if idle */
    _Atomic uint64_t heartbeat_ns; /* CLOCK_MONOTONIC of the last loop step */
    _Atomic uint64_t started_ns;
    _Atomic uint64_t busy_ns;
    _Atomic uint64_t steps; /* partitions this process completed (gpud: proved; others: 0) */
    /* Gauge (finalizers): partitions whose proofs this process holds back (slab PROVED) until the
     * spool has space again, and since when (CLOCK_MONOTONIC); 0 when none. A dead process's
     * gauge is not counted. */
    _Atomic uint32_t disk_wait;
    _Atomic uint64_t disk_wait_since_ns;
    _Atomic uint32_t keys; /* gauge (gpud): circuit keys resident in the backend */
    /* gpud: its backend and device ("cuda 0"), written once after registration; "" otherwise. */
    char device[40];
    /* synthd: the circuit whose witness generator this process is compiling now, and since when
     * (CLOCK_MONOTONIC); since 0 = none. Written by shm_proc_compiling only (since last). */
    _Atomic uint64_t compile_since_ns;
    char compiling[SHM_CIRCUIT_MAX];
} shm_proc_t;

typedef struct shm_slab {
    alignas(64) _Atomic uint64_t word; /* state | slot << 8 | incarnation << 24 */
    /* Written by the FILLING owner, read after READY (acquire). */
    _Atomic uint32_t job, job_gen, part, prio;
    _Atomic uint64_t order;
    _Atomic uint32_t fills; /* times this slab was filled (diagnostics) */
} shm_slab_t;

typedef struct shm_part {
    _Atomic uint64_t word; /* state | slab << 8 */
    _Atomic uint32_t synth_count, prove_count;
    _Atomic uint32_t lost_count; /* times it was in flight when gpud lost its device */
    /* When (CLOCK_MONOTONIC), each written by the stage that owns the partition's slab at that
     * moment: t_claim_ns by shm_part_claim (synthd), t_ready_ns by synthd before READY,
     * t_prove_start_ns (picked) and t_proved_ns (collected) by gpud, t_fin_start_ns and t_done_ns
     * by the finalizer. */
    _Atomic uint64_t t_claim_ns, t_ready_ns, t_prove_start_ns, t_proved_ns, t_fin_start_ns, t_done_ns;
    /* Each stage's time on it: the sum of the steps of its latest pass that name the field in the
     * step table (SHM_STEPS), written by shm_step only. */
    _Atomic uint64_t synth_ns, gpu_ns, fin_ns;
} shm_part_t;

typedef struct shm_job {
    alignas(64) _Atomic uint32_t state;
    _Atomic uint32_t gen; /* bumped each time the slot is (re)used */
    char id[SHM_ID_MAX];
    char circuit[SHM_CIRCUIT_MAX];
    char error[SHM_ERROR_MAX]; /* first failure reason, set once (err_set) */
    _Atomic uint32_t err_set;
    uint32_t prio, n_parts;
    uint64_t order;
    uint64_t submit_ns;       /* CLOCK_REALTIME from job.ini */
    uint64_t registered_ns;   /* CLOCK_MONOTONIC */
    _Atomic uint64_t done_ns; /* CLOCK_MONOTONIC when it became terminal */
    shm_part_t parts[SHM_MAX_PARTS];
} shm_job_t;

typedef struct shm_event {
    _Atomic uint64_t seq; /* head+1 once written; readers skip records that change under them */
    uint64_t t_ns;        /* start, CLOCK_MONOTONIC */
    uint64_t dur_ns;
    uint64_t value;
    uint32_t pid, role, type, slab, part, job_slot;
    char job[SHM_ID_MAX - 16];
} shm_event_t;

/* The segment's layout is SHM_LAYOUT_VERSION: these pin it, so that a change to any shared struct
 * fails the build until the version is bumped (attachers refuse other versions) and the sizes are
 * updated here and in docs/shm.md. */
_Static_assert(SHM_LAYOUT_VERSION == 7, "update the layout asserts below for the new version");
_Static_assert(sizeof(shm_hist_t) == 320 && offsetof(shm_hist_t, count) == 264, "shm_hist_t layout");
_Static_assert(HIST_MAX == 25, "shm_header_t.hist: update the sizes below");
_Static_assert(sizeof(shm_header_t) == 8576 && offsetof(shm_header_t, reg_lock) == 328 &&
                   offsetof(shm_header_t, ev_head) == 384 && offsetof(shm_header_t, counters) == 448 &&
                   offsetof(shm_header_t, hist) == 576,
               "shm_header_t layout");
_Static_assert(sizeof(shm_proc_t) == 256 && offsetof(shm_proc_t, disk_wait) == 64 && offsetof(shm_proc_t, keys) == 80 &&
                   offsetof(shm_proc_t, device) == 84 && offsetof(shm_proc_t, compile_since_ns) == 128 &&
                   offsetof(shm_proc_t, compiling) == 136,
               "shm_proc_t layout");
_Static_assert(sizeof(shm_slab_t) == 64 && offsetof(shm_slab_t, fills) == 32, "shm_slab_t layout");
_Static_assert(sizeof(shm_part_t) == 96, "shm_part_t layout");
_Static_assert(sizeof(shm_job_t) == 25088 && offsetof(shm_job_t, parts) == 488, "shm_job_t layout");
_Static_assert(sizeof(shm_event_t) == 88, "shm_event_t layout");

typedef struct shm_geometry {
    uint32_t slabs, jobs, events;
    uint64_t slab_size; /* multiple of 2 MiB */
} shm_geometry_t;
/* The bytes of a segment of this geometry (header, tables and slab data: what shm_open_segment
 * creates). */
uint64_t shm_segment_size(const shm_geometry_t *g);

typedef struct shm {
    int fd;
    uint8_t *base;
    size_t size;
    shm_header_t *hdr;
    shm_proc_t *procs;
    shm_slab_t *slabs;
    shm_job_t *jobs;
    shm_event_t *events;
    uint8_t *data;
    int self; /* own process slot, -1 if not registered */
    uint32_t self_inc;
    uint32_t self_role;
    bool created;
    bool readonly; /* shm_open_readonly: mapped PROT_READ, never written */
    char path[1024];
} shm_t;

/* Segment lifecycle. With create, a missing segment is created (initialised under a temporary name,
 * then linked into place, so attachers never see it half-built). Without, -ENOENT when missing.
 * A segment whose geometry differs from g is refused (-EEXIST... -> -ESTALE) with err naming the
 * differences; g may be NULL to attach to any geometry (CLI). */
int shm_open_segment(shm_t *s, const char *path, const shm_geometry_t *g, bool create, char *err, size_t errlen);
/* Attaches an existing segment of any geometry read-only (opened O_RDONLY, mapped PROT_READ): for
 * observers (zkpipe-exporter), which must never write the segment nor take its lock. Only the read
 * functions below may be used on it (a write faults). Errors as for shm_open_segment. */
int shm_open_readonly(shm_t *s, const char *path, char *err, size_t errlen);
void shm_close(shm_t *s);

/* [pipeline] hugepages = yes (docs/shm.md "Huge pages"). shm_hugepages_advise asks for huge pages on
 * [p, p + len) of this process (madvise MADV_HUGEPAGE, then, with collapse, MADV_COLLAPSE for pages
 * already there): 0 or -errno of the first that failed. shm_segment_hugepages does it for the slab
 * data of an attached segment and describes the outcome in one phrase: "hugetlbfs" (huge by the file
 * system), or the file system and how much of the slab data is now in huge pages in this process. */
int shm_hugepages_advise(void *p, size_t len, bool collapse);
int shm_segment_hugepages(shm_t *s, char *desc, size_t desclen);
/* This process's memory from /proc/self/status and smaps_rollup, in bytes (0 where not found). */
typedef struct shm_mem_usage {
    uint64_t rss, anon, file, shmem, anon_huge, shmem_huge;
} shm_mem_usage_t;
void shm_mem_usage(shm_mem_usage_t *u);
int shm_unlink_segment(const char *path);

/* Process table. */
int shm_register(shm_t *s, uint32_t role, uint32_t instance);
void shm_unregister(shm_t *s);
uint64_t shm_tag(const shm_t *s, uint32_t state); /* own state word with owner */
static inline uint32_t shm_word_state(uint64_t w) { return (uint32_t)(w & 0xff); }
static inline uint32_t shm_word_slot(uint64_t w) { return (uint32_t)((w >> 8) & 0xffff); }
static inline uint32_t shm_word_inc(uint64_t w) { return (uint32_t)(w >> 24); }
static inline uint64_t shm_word(uint32_t state, uint32_t slot, uint32_t inc) {
    return (uint64_t)state | (uint64_t)(slot & 0xffff) << 8 | (uint64_t)inc << 24;
}
bool shm_owner_alive(shm_t *s, uint64_t word);
int shm_proc_starttime(int pid, uint64_t *ret);
void shm_heartbeat(shm_t *s, uint32_t cur_slab);

/* Reclaims slabs of dead owners, LOADING job slots and a dead registration lock. Returns how many
 * slabs were reclaimed. */
int shm_reclaim(shm_t *s);

/* Slabs. */
static inline uint8_t *shm_slab_data(shm_t *s, uint32_t i) { return s->data + (uint64_t)i * s->hdr->slab_size; }
uint32_t shm_slab_state(shm_t *s, uint32_t i);
/* FREE -> FILLING(self). Counts FREE slabs first: takes one only when more than `reserve` are FREE,
 * or when critical_ok. *ret_reserved says the slab came out of the reserve. -EAGAIN when none. */
int shm_slab_take_free(shm_t *s, uint32_t reserve, bool critical_ok, uint32_t *ret_idx, bool *ret_reserved);
/* Picks the slab in state `from` with the smallest (prio, order, part) and CASes it to `to` owned by
 * self. -EAGAIN when none. */
int shm_slab_pick(shm_t *s, uint32_t from, uint32_t to, uint32_t *ret_idx);
/* Own slab: CAS from self-owned `from` to `to` (owned by self when to is FILLING/PROVING/FINALIZING,
 * unowned otherwise). Bumps slab_seq and wakes waiters. -ESTALE when the slab is no longer ours. */
int shm_slab_move(shm_t *s, uint32_t idx, uint32_t from, uint32_t to);
void shm_slab_counts(shm_t *s, uint32_t counts[SLAB_NSTATES]);

/* Futex wait on a sequence word until it differs from seen, or timeout_ms passes (-ETIMEDOUT), or a
 * signal arrives (-EINTR). */
int shm_wait(_Atomic uint32_t *word, uint32_t seen, int timeout_ms);
/* The same with a timeout in nanoseconds (gpud's waits between polls of its lanes). */
int shm_wait_ns(_Atomic uint32_t *word, uint32_t seen, uint64_t timeout_ns);
void shm_bump(_Atomic uint32_t *word);

/* Registration lock (job table structure). Waits for a live owner; forces a dead one open. */
int shm_lock(shm_t *s);
void shm_unlock(shm_t *s);

/* Jobs. */
int shm_job_find(shm_t *s, const char *id); /* slot or -ENOENT (any state, newest gen) */
/* Under the lock: registers a job (idempotent: returns the existing live slot). done_mask marks
 * partitions already finished (their proofs exist); may be NULL. -ENOSPC when the table is full
 * of live jobs. */
int shm_job_register(shm_t *s, const char *id, const char *circuit, uint32_t prio, uint32_t n_parts, uint64_t submit_ns,
                     const bool *done_mask);
bool shm_job_live(uint32_t state); /* ACTIVE, FAILING or CANCELLING */
/* Sets the job's error once and moves ACTIVE -> FAILING; drops its pending partitions. */
void shm_job_fail(shm_t *s, uint32_t slot, const char *reason);
int shm_job_cancel(shm_t *s, uint32_t slot); /* ACTIVE -> CANCELLING */
/* The job's first failure reason ("" when none). Set once: the first shm_job_set_error wins
 * (false for the later ones). */
const char *shm_job_error(const shm_job_t *j);
bool shm_job_set_error(shm_t *s, uint32_t slot, const char *reason);
static inline uint32_t shm_job_state(const shm_job_t *j) { return atomic_load_explicit(&j->state, memory_order_acquire); }
/* The record's generation: bumped each time its slot is used for another job. */
static inline uint32_t shm_job_gen(const shm_job_t *j) { return atomic_load_explicit(&j->gen, memory_order_acquire); }
/* Whether the job can end now (live, nothing pending or in flight) and how: JOB_DONE, JOB_FAILED
 * or JOB_CANCELLED; 0 when it cannot. A job that would fail without a recorded reason gets one. */
uint32_t shm_job_outcome(shm_t *s, uint32_t slot);
/* Under the lock, by the finalizer once the job's directory is in done/ or failed/: the terminal
 * state (final from shm_job_outcome), its time, the counters and the event; wakes job waiters. */
void shm_job_end(shm_t *s, uint32_t slot, uint32_t final);

/* Partition words (state | slab << 8). */
static inline uint32_t shm_part_state(const shm_part_t *p) {
    return (uint32_t)(atomic_load_explicit(&p->word, memory_order_acquire) & 0xff);
}
/* The slab of an INFLIGHT partition (SHM_NONE otherwise). */
static inline uint32_t shm_part_slab(const shm_part_t *p) {
    uint64_t w = atomic_load_explicit(&p->word, memory_order_acquire);
    return (w & 0xff) == PART_INFLIGHT ? (uint32_t)(w >> 8) : SHM_NONE;
}
void shm_part_counts(shm_t *s, uint32_t slot, uint32_t counts[PART_NSTATES]);
/* A stage gives up the partition it holds in slab idx (in state `from`): the partition becomes
 * FAILED and the job fails with reason, or DROPPED when reason is NULL (a cancel); the slab goes
 * back to FREE and job waiters are woken. Only while the caller still owns the slab (else nothing
 * moves). true when this call moved the partition (only then is the failure counted and the reason
 * recorded); false when it was no longer in flight there. */
bool shm_part_give_up(shm_t *s, uint32_t idx, uint32_t from, uint32_t job, uint32_t part, const char *reason);
/* synthd cannot fill the partition it holds in slab idx (FILLING) now, but may later (no space to
 * build the circuit's generator): the partition goes back to PENDING (DROPPED when the job is no
 * longer active), the slab to FREE, and the claim is not counted (synth_count counts the claims a
 * synthd did not give back: deaths and hangs, which witgen's WITGEN_MAX_CLAIMS caps). true when
 * this call moved the partition. */
bool shm_part_retry(shm_t *s, uint32_t idx, uint32_t job, uint32_t part);
/* The finalizer committed the partition's proof: INFLIGHT(idx) -> DONE, the slab FINALIZING -> FREE,
 * job waiters woken. -ESTALE when the partition or the slab was no longer ours. */
int shm_part_finish(shm_t *s, uint32_t idx, uint32_t job, uint32_t part);
/* Claims the pending partition with the smallest (prio, order, part) into slab idx (owned, FILLING):
 * writes the slab descriptor, then CASes the partition to INFLIGHT. critical_only restricts it to
 * CRITICAL jobs. -EAGAIN when there is none. */
int shm_part_claim(shm_t *s, uint32_t slab, bool critical_only, uint32_t *ret_job, uint32_t *ret_part);
/* The same, passing over every live job for which skip(job slot, ctx) is true (synthd: input jobs of
 * a circuit whose generator is being compiled); skip may be NULL. */
int shm_part_claim_skip(shm_t *s, uint32_t slab, bool critical_only, bool (*skip)(uint32_t job, void *ctx), void *ctx,
                        uint32_t *ret_job, uint32_t *ret_part);
/* Number of partitions of a live job still pending or in flight. */
uint32_t shm_job_outstanding(shm_t *s, uint32_t slot);
/* A pending partition of an ACTIVE job exists (of a CRITICAL one with critical_only) that
 * shm_part_claim_skip would not pass over for skip (NULL: none). */
bool shm_part_pending(shm_t *s, bool critical_only, bool (*skip)(uint32_t job, void *ctx), void *ctx);
/* Pending partitions of a live CRITICAL job exist. */
static inline bool shm_critical_pending(shm_t *s) { return shm_part_pending(s, true, NULL, NULL); }
/* Whether the work in slab idx (owned by the caller, READY or later) is no longer wanted: the job it
 * was filled for is no longer ACTIVE, or its record was reused for another job since (another
 * generation). The stage then gives the partition up as a cancel (shm_part_give_up, reason NULL). */
bool shm_slab_stale(shm_t *s, uint32_t idx);
/* Drops every PENDING partition of a job (cancel / failure). */
void shm_job_drop_pending(shm_t *s, uint32_t slot);

/* Read side of the process table, for status: false for a free slot. */
typedef struct shm_proc_info {
    uint32_t pid, role, instance, cur_slab; /* cur_slab SHM_NONE when idle */
    bool alive;
    uint64_t heartbeat_ns, started_ns, busy_ns; /* CLOCK_MONOTONIC, busy time */
    uint32_t disk_wait;                         /* the gauge of shm_disk_wait */
    uint64_t disk_wait_since_ns;
    uint32_t keys;   /* the gauge of shm_keys_resident */
    uint64_t steps;  /* partitions this process completed (gpud: proved) */
    char device[40]; /* gpud: shm_proc_device's name ("" when none) */
    char compiling[SHM_CIRCUIT_MAX]; /* synthd: the circuit of shm_proc_compiling ("" when none) */
    uint64_t compile_since_ns;       /* and since when (CLOCK_MONOTONIC), 0 when none */
} shm_proc_info_t;
bool shm_proc_info(shm_t *s, uint32_t slot, shm_proc_info_t *ret);
static inline uint64_t shm_counter(const shm_t *s, int c) {
    return atomic_load_explicit(&s->hdr->counters[c], memory_order_relaxed);
}

/* Spool space (finalizers): a partition whose proof cannot be written for want of space starts
 * waiting (+1) or stops (-1); the gauge and its start time are in the own process slot. */
void shm_disk_wait(shm_t *s, int delta);

/* Gauge (gpud): how many circuit keys this process holds resident in its backend. */
void shm_keys_resident(shm_t *s, uint32_t n);
/* gpud: names its backend and device in its process slot ("cuda 1"), once after registering. */
void shm_proc_device(shm_t *s, const char *name);
/* synthd: starts compiling circuit's generator now (its name and the time in the own process slot),
 * or, with NULL, no longer compiles. From any thread of the process; one compile at a time. */
void shm_proc_compiling(shm_t *s, const char *circuit);

/* Read side of the slab table, for status: the state, the owner's pid (0 when unowned or the owner
 * is dead) and, unless FREE, the job slot and partition it was filled for. */
typedef struct shm_slab_info {
    uint32_t state, owner_pid, job, part, prio;
    bool owner_alive;
} shm_slab_info_t;
void shm_slab_info(shm_t *s, uint32_t idx, shm_slab_info_t *ret);

/* Histograms (STEP_* or HIST_JOB + priority), written by shm_step and shm_job_end only.
 * shm_hist_read copies one; true when the copy is a snapshot (count equal to the sum of the buckets
 * and unchanged while copying), else the count is the buckets' sum, so the copy is always
 * self-consistent. */
typedef struct shm_hist_snap {
    uint64_t bucket[SHM_HIST_BUCKETS];
    uint64_t sum_ns, count;
} shm_hist_snap_t;
static inline uint32_t shm_hist_bucket(uint64_t ns) {
    if (ns <= (1ull << SHM_HIST_SHIFT)) return 0;
    uint32_t k = (uint32_t)(64 - __builtin_clzll(ns - 1)) - SHM_HIST_SHIFT;
    return k < SHM_HIST_BUCKETS - 1 ? k : SHM_HIST_BUCKETS - 1;
}
/* The inclusive upper bound of bucket k in ns; UINT64_MAX for the last (+Inf). */
static inline uint64_t shm_hist_bound_ns(uint32_t k) {
    return k < SHM_HIST_BUCKETS - 1 ? 1ull << (k + SHM_HIST_SHIFT) : UINT64_MAX;
}
bool shm_hist_read(shm_t *s, uint32_t h, shm_hist_snap_t *ret);
/* now - before, bucket by bucket (a window of a histogram between two reads). */
void shm_hist_diff(const shm_hist_snap_t *now, const shm_hist_snap_t *before, shm_hist_snap_t *ret);
/* The upper bound (ns) of the bucket holding the q-quantile (0 < q <= 1); 0 when empty, UINT64_MAX
 * when it falls in the last bucket. */
uint64_t shm_hist_quantile_ns(const shm_hist_snap_t *h, double q);
/* The step table (SHM_STEPS), for the stages and the readers: NULL past STEP_MAX. */
typedef struct shm_step_info {
    uint32_t role;          /* the stage that records it (ROLE_*) */
    const char *name;       /* "read": the step's name (histogram label, journal, docs) */
    const char *event;      /* "synth.read": the event's name */
    const char *journal;    /* "ZKPIPE_READ_NS": the journal field; NULL for a step of no partition */
    const char *part_field; /* "synth_ns": the shm_part_t field it adds to in its pass; NULL: none */
} shm_step_info_t;
const shm_step_info_t *shm_step_info(uint32_t step);
/* The value of the shm_part_t field the step adds to (0 for a step without one). */
uint64_t shm_part_step_ns(const shm_part_t *p, uint32_t step);

/* One partition's pass through a stage (a fill, a proof, a finalization): where its steps' events
 * point and what they add up to. A stack or flight variable of the stage; job UINT32_MAX: a pass
 * of no partition. */
typedef struct shm_pass {
    uint32_t job, part, slab;
    uint32_t pad0;
    uint64_t recorded;     /* a bit per step recorded in this pass */
    uint64_t ns[STEP_MAX]; /* each step's time in this pass (summed, were it recorded twice) */
} shm_pass_t;
_Static_assert(STEP_MAX <= 64, "shm_pass_t.recorded has a bit per step");
static inline shm_pass_t shm_pass(uint32_t job, uint32_t part, uint32_t slab) {
    return (shm_pass_t){.job = job, .part = part, .slab = slab};
}
/* Records one step, t_ns (start, CLOCK_MONOTONIC) + dur_ns, into every sink the step table names:
 * the event (value is the step's own: see SHM_STEPS), the histogram, the pass (for the journal),
 * and the partition's field. pass NULL: a step of no partition (its event names none). A step the
 * table lacks is ignored. Lock-free: a few relaxed atomics and one event record. */
void shm_step(shm_t *s, shm_pass_t *pass, uint32_t step, uint64_t t_ns, uint64_t dur_ns, uint64_t value);

/* Event ring (lossy), written by shm_step, shm_job_end and shm_reclaim. Reader: the records still
 * in the ring are [first, head). shm_event_read copies record i and returns false when it was
 * overwritten (or not yet written) meanwhile. */
void shm_event_range(shm_t *s, uint64_t *ret_first, uint64_t *ret_head);
bool shm_event_read(shm_t *s, uint64_t i, shm_event_t *ret);
static inline void shm_count(shm_t *s, int c, uint64_t v) {
    atomic_fetch_add_explicit(&s->hdr->counters[c], v, memory_order_relaxed);
}

uint64_t shm_now_ns(void);      /* CLOCK_MONOTONIC */
uint64_t shm_realtime_ns(void); /* CLOCK_REALTIME */
const char *shm_slab_state_name(uint32_t st);
const char *shm_job_state_name(uint32_t st);
const char *shm_part_state_name(uint32_t st);
const char *shm_role_name(uint32_t role);
const char *shm_event_name(uint32_t type); /* "synth.read", "job.done", "reclaim"; "?" */
