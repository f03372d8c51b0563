/* The CPU backend of gpud: the proving core of the zk library on private scratch memory. Slab
 * memory needs no registration; keys are used where gpud's circuit cache read them, into its own
 * memory (common/circuits.c: the points' sections only, never a file mapping). With a precompute
 * budget, load_key builds window tables of the key's points (zk/msm_fixed.h) once, and every
 * partition of that key proves with them; a key loaded again (its file changed) drops its old
 * tables first, and a partition whose key does not match its tables (address and fingerprint)
 * proves without them. With more than one lane (set_lanes: [gpu] inflight), each lane's partition
 * is proved on a thread of the lane's own, the lanes side by side, each with threads / lanes
 * OpenMP threads and its own scratch; submit starts it, poll asks, collect joins. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "zk/msm_fixed.h"
#include "zk/threads.h"

typedef struct cpu_ctx cpu_ctx_t;
typedef struct cpu_lane {
    cpu_ctx_t *ctx;
    void *scratch; /* lanes > 1: the lane's own; one lane: lane 0's serves every lane index */
    size_t scratch_size;
    /* the partition in flight (lanes > 1) */
    const zk_zkey_t *z;
    const uint8_t *witness;
    const void *a, *b, *c;
    pthread_t thread;
    bool running;     /* a thread was started and not yet joined */
    atomic_bool done; /* its work has ended */
    int rc;           /* 0 or the failure of the partition's work */
    zk_err_t err;
    zk_raw_t raw;
    zk_core_times_t times;
} cpu_lane_t;

struct cpu_ctx {
    int threads;
    int lanes;           /* 1: proved in submit on all threads; more: a thread each (set_lanes) */
    uint64_t precompute; /* bytes of window tables, all keys together */
    zk_key_tables_t *keys; /* the keys with tables */
    int n_keys;
    char info[1024]; /* the last load_key's tables */
    cpu_lane_t lane[ZK_BACKEND_MAX_LANES];
};

static int cpu_init(void **ret_ctx, int device, int threads, uint64_t precompute, zk_err_t *err) {
    (void)device;
    cpu_ctx_t *c = calloc(1, sizeof *c);
    if (!c) return zk_fail(err, ENOMEM, "cpu backend: out of memory");
    c->threads = threads > 0 ? threads : zk_threads_default();
    c->lanes = 1;
    c->precompute = precompute;
    for (int l = 0; l < ZK_BACKEND_MAX_LANES; l++) c->lane[l].ctx = c;
    /* The proofs run on this thread (submit); a team that takes every CPU gets one per worker. */
    (void)zk_threads_place(c->threads);
    *ret_ctx = c;
    return 0;
}

static int (*huge_advise)(void *p, size_t len, bool collapse);

void zk_backend_cpu_hugepages(int (*advise)(void *p, size_t len, bool collapse)) { huge_advise = advise; }

/* The rows of each table into huge pages (whole pages of the malloc'd rows). */
static void advise_tables(const zk_key_tables_t *kt, const zk_zkey_t *z) {
    const uintptr_t page = 4096;
    for (int m = 0; m < ZK_MSM_COUNT && huge_advise; m++) {
        if (!kt->t[m].pts) continue;
        size_t bytes = zk_fixed_bytes(&kt->t[m].plan, kt->t[m].m, m == ZK_MSM_B2 ? z->curve->g2_size : z->curve->g1_size);
        uintptr_t a = (uintptr_t)kt->t[m].pts & ~(page - 1), e = (uintptr_t)kt->t[m].pts + bytes;
        (void)huge_advise((void *)a, e - a, true);
    }
}

static int cpu_register_memory(void *ctx, void *base, size_t len, zk_err_t *err) {
    (void)ctx, (void)base, (void)len, (void)err;
    return 0;
}

static int ensure_scratch(cpu_lane_t *l, size_t need, zk_err_t *err) {
    if (need <= l->scratch_size) return 0;
    void *p = NULL;
    if (posix_memalign(&p, 64, need))
        return zk_fail(err, ENOMEM, "cpu backend: cannot allocate %zu bytes of scratch", need);
    free(l->scratch);
    l->scratch = p;
    l->scratch_size = need;
    return 0;
}

/* The lane indices in use: with one lane submit proves at once, so any index up to the most is
 * accepted (gpud with [gpu] inflight and a backend that was not told); with more, set_lanes's. */
static int lane_ok(const cpu_ctx_t *x, int lane) {
    return lane >= 0 && lane < (x->lanes > 1 ? x->lanes : ZK_BACKEND_MAX_LANES);
}

static int cpu_set_lanes(void *ctx, int lanes, zk_err_t *err) {
    cpu_ctx_t *c = ctx;
    if (lanes < 1 || lanes > ZK_BACKEND_MAX_LANES)
        return zk_fail(err, EINVAL, "cpu backend: %d lanes (expected 1 to %d)", lanes, ZK_BACKEND_MAX_LANES);
    c->lanes = lanes;
    return 0;
}

/* Waits until no lane's thread is working (their results stay for collect): load_key changes the
 * tables and the scratch areas that a lane in flight reads. */
static void lanes_quiesce(cpu_ctx_t *c) {
    for (int l = 0; l < ZK_BACKEND_MAX_LANES; l++)
        while (c->lane[l].running && !atomic_load(&c->lane[l].done))
            nanosleep(&(struct timespec){.tv_nsec = 100000}, NULL);
}

static int cpu_load_key(void *ctx, const zk_zkey_t *z, zk_err_t *err) {
    cpu_ctx_t *c = ctx;
    lanes_quiesce(c);
    /* Scratch is sized here, once per circuit, so proving never allocates. */
    zk_zkey_prefault(z);
    for (int l = 0; l < c->lanes; l++) { /* set_lanes comes before the first load_key */
        int r = ensure_scratch(&c->lane[l], zk_core_scratch_size(z), err);
        if (r < 0) return r;
    }
    c->info[0] = 0;
    for (int i = 0; i < c->n_keys; i++) /* this key loaded again: its old tables go first */
        if (c->keys[i].z == z) {
            zk_key_tables_free(&c->keys[i]);
            c->keys[i] = c->keys[--c->n_keys];
            break;
        }
    if (!c->precompute) return 0;
    uint64_t used = 0;
    for (int i = 0; i < c->n_keys; i++) used += c->keys[i].bytes;
    zk_key_tables_t *k = realloc(c->keys, (size_t)(c->n_keys + 1) * sizeof(*k));
    if (!k) return 0; /* no room to keep tables: this key proves without them */
    c->keys = k;
    uint64_t left = used < c->precompute ? c->precompute - used : 0;
    zk_key_tables_build(&k[c->n_keys], z, left > SIZE_MAX ? SIZE_MAX : (size_t)left, c->threads, c->info,
                        sizeof c->info);
    if (k[c->n_keys].bytes) advise_tables(&k[c->n_keys], z), c->n_keys++;
    else zk_key_tables_free(&k[c->n_keys]);
    return 0;
}

static const char *cpu_key_info(void *ctx, const zk_zkey_t *z) {
    (void)z;
    cpu_ctx_t *c = ctx;
    return c->info[0] ? c->info : NULL;
}

static const zk_key_tables_t *tables_of(const cpu_ctx_t *c, const zk_zkey_t *z) {
    for (int i = 0; i < c->n_keys; i++)
        if (zk_key_tables_match(&c->keys[i], z)) return &c->keys[i];
    return NULL;
}

/* One partition on lane l with `threads` threads; its result stays in the lane. */
static int prove_lane(cpu_lane_t *l, int threads) {
    cpu_ctx_t *x = l->ctx;
    cpu_lane_t *s = x->lanes > 1 ? l : &x->lane[0]; /* whose scratch */
    zk_err_t err = {0};
    memset(&l->times, 0, sizeof l->times);
    int r = ensure_scratch(s, zk_core_scratch_size(l->z), &err);
    if (r == 0) {
        const zk_key_tables_t *kt = tables_of(x, l->z);
        r = kt ? zk_prove_core_fixed(kt, l->z, l->witness, l->a, l->b, l->c, s->scratch, &l->raw, &l->times, threads)
               : zk_prove_core(l->z, l->witness, l->a, l->b, l->c, s->scratch, &l->raw, &l->times, threads);
        if (r < 0) r = zk_fail(&err, -r, "cpu backend: proving core failed: %s", strerror(-r));
    }
    l->rc = r;
    if (r < 0) l->err = err;
    return r;
}

static void *lane_main(void *arg) {
    cpu_lane_t *l = arg;
    cpu_ctx_t *x = l->ctx;
    int threads = x->threads / x->lanes;
    (void)prove_lane(l, threads > 0 ? threads : 1);
    atomic_store(&l->done, true);
    return NULL;
}

/* With one lane the work happens here; with more it starts on the lane's thread. collect hands
 * over the lane's result. */
static int cpu_submit(void *ctx, int lane, const zk_zkey_t *z, const uint8_t *witness, const void *a, const void *b,
                      const void *c, zk_err_t *err) {
    cpu_ctx_t *x = ctx;
    if (!lane_ok(x, lane)) return zk_fail(err, EINVAL, "cpu backend: no lane %d", lane);
    cpu_lane_t *l = &x->lane[lane];
    if (l->running) return zk_fail(err, EBUSY, "cpu backend: lane %d is in flight", lane);
    l->z = z, l->witness = witness, l->a = a, l->b = b, l->c = c;
    if (x->lanes == 1) {
        int r = prove_lane(l, x->threads);
        if (r < 0) *err = l->err;
        return r;
    }
    atomic_store(&l->done, false);
    int r = pthread_create(&l->thread, NULL, lane_main, l);
    if (r) return zk_fail(err, r, "cpu backend: cannot start lane %d: %s", lane, strerror(r));
    l->running = true;
    return 0;
}

/* Waits for the lane's thread, if it has one. */
static void lane_join(cpu_lane_t *l) {
    if (!l->running) return;
    pthread_join(l->thread, NULL);
    l->running = false;
}

static int cpu_collect(void *ctx, int lane, zk_raw_t *out, zk_core_times_t *times, zk_err_t *err) {
    cpu_ctx_t *x = ctx;
    if (!lane_ok(x, lane)) return zk_fail(err, EINVAL, "cpu backend: no lane %d", lane);
    cpu_lane_t *l = &x->lane[lane];
    lane_join(l);
    if (l->rc < 0) {
        *err = l->err;
        return l->rc;
    }
    *out = l->raw;
    if (times) *times = l->times;
    return 0;
}

/* One lane: its work was done in submit, so a lane in flight has always finished; more: whether
 * the lane's thread has ended. */
static int cpu_poll(void *ctx, int lane, uint64_t *ret_left_ns, zk_err_t *err) {
    cpu_ctx_t *x = ctx;
    *ret_left_ns = 0;
    if (!lane_ok(x, lane)) return zk_fail(err, EINVAL, "cpu backend: no lane %d", lane);
    return !x->lane[lane].running || atomic_load(&x->lane[lane].done) ? 1 : 0;
}

static void cpu_destroy(void *ctx) {
    cpu_ctx_t *c = ctx;
    if (!c) return;
    for (int l = 0; l < ZK_BACKEND_MAX_LANES; l++) {
        lane_join(&c->lane[l]);
        free(c->lane[l].scratch);
    }
    for (int i = 0; i < c->n_keys; i++) zk_key_tables_free(&c->keys[i]);
    free(c->keys);
    free(c);
}

const zk_backend_ops_t zk_backend_cpu = {
    .name = "cpu",
    .init = cpu_init,
    .register_memory = cpu_register_memory,
    .load_key = cpu_load_key,
    .depth = 1,
    .submit = cpu_submit,
    .collect = cpu_collect,
    .poll = cpu_poll,
    .destroy = cpu_destroy,
    .key_info = cpu_key_info,
    .set_lanes = cpu_set_lanes,
};

#ifdef HAVE_CUDA
extern const zk_backend_ops_t zk_backend_cuda;
#endif

const zk_backend_ops_t *zk_backend_by_name(const char *name) {
    if (!name || !strcmp(name, "auto")) {
#ifdef HAVE_CUDA
        return &zk_backend_cuda;
#else
        return &zk_backend_cpu;
#endif
    }
    if (!strcmp(name, "cpu")) return &zk_backend_cpu;
#ifdef HAVE_CUDA
    if (!strcmp(name, "cuda")) return &zk_backend_cuda;
#endif
    return NULL;
}
