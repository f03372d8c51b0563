/* The CPU backend of gpud: the proving core of the zk library on private scratch memory. Slab
 * memory needs no registration; keys are used where gpud's circuit cache read them, into its own
 * memory (common/circuits.c: the points' sections only, never a file mapping). With a precompute
 * budget, load_key builds window tables of the key's points (zk/msm_fixed.h) once, and every
 * partition of that key proves with them; a key loaded again (its file changed) drops its old
 * tables first, and a partition whose key does not match its tables (address and fingerprint)
 * proves without them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "zk/msm_fixed.h"
#include "zk/threads.h"

typedef struct cpu_ctx {
    int threads;
    uint64_t precompute; /* bytes of window tables, all keys together */
    void *scratch;
    size_t scratch_size;
    zk_key_tables_t *keys; /* the keys with tables */
    int n_keys;
    char info[1024]; /* the last load_key's tables */
    struct {
        int rc; /* 0 or the failure of the work done in submit */
        zk_err_t err;
        zk_raw_t raw;
        zk_core_times_t times;
    } lane[ZK_BACKEND_MAX_LANES];
} cpu_ctx_t;

static int cpu_init(void **ret_ctx, int device, int threads, uint64_t precompute, zk_err_t *err) {
    (void)device;
    cpu_ctx_t *c = calloc(1, sizeof *c);
    if (!c) return zk_fail(err, ENOMEM, "cpu backend: out of memory");
    c->threads = threads;
    c->precompute = precompute;
    /* The proofs run on this thread (submit); a team that takes every CPU gets one per worker. */
    (void)zk_threads_place(threads > 0 ? threads : zk_threads_default());
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

static int ensure_scratch(cpu_ctx_t *c, size_t need, zk_err_t *err) {
    if (need <= c->scratch_size) return 0;
    void *p = NULL;
    if (posix_memalign(&p, 64, need))
        return zk_fail(err, ENOMEM, "cpu backend: cannot allocate %zu bytes of scratch", need);
    free(c->scratch);
    c->scratch = p;
    c->scratch_size = need;
    return 0;
}

static int cpu_load_key(void *ctx, const zk_zkey_t *z, zk_err_t *err) {
    cpu_ctx_t *c = ctx;
    /* Scratch is sized here, once per circuit, so proving never allocates. */
    zk_zkey_prefault(z);
    int r = ensure_scratch(c, zk_core_scratch_size(z), err);
    if (r < 0) return r;
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

/* The work happens here; collect hands over the lane's result. */
static int cpu_submit(void *ctx, int lane, const zk_zkey_t *z, const uint8_t *witness, const void *a, const void *b,
                      const void *c, zk_err_t *err) {
    cpu_ctx_t *x = ctx;
    if (lane < 0 || lane >= ZK_BACKEND_MAX_LANES) return zk_fail(err, EINVAL, "cpu backend: no lane %d", lane);
    memset(&x->lane[lane].times, 0, sizeof x->lane[lane].times);
    int r = ensure_scratch(x, zk_core_scratch_size(z), err);
    if (r == 0) {
        const zk_key_tables_t *kt = tables_of(x, z);
        r = kt ? zk_prove_core_fixed(kt, z, witness, a, b, c, x->scratch, &x->lane[lane].raw, &x->lane[lane].times,
                                     x->threads)
               : zk_prove_core(z, witness, a, b, c, x->scratch, &x->lane[lane].raw, &x->lane[lane].times, x->threads);
        if (r < 0) r = zk_fail(err, -r, "cpu backend: proving core failed: %s", strerror(-r));
    }
    x->lane[lane].rc = r;
    if (r < 0) x->lane[lane].err = *err;
    return r;
}

static int cpu_collect(void *ctx, int lane, zk_raw_t *out, zk_core_times_t *times, zk_err_t *err) {
    cpu_ctx_t *x = ctx;
    if (lane < 0 || lane >= ZK_BACKEND_MAX_LANES) return zk_fail(err, EINVAL, "cpu backend: no lane %d", lane);
    if (x->lane[lane].rc < 0) {
        *err = x->lane[lane].err;
        return x->lane[lane].rc;
    }
    *out = x->lane[lane].raw;
    if (times) *times = x->lane[lane].times;
    return 0;
}

/* The work was done in submit: a lane in flight has always finished. */
static int cpu_poll(void *ctx, int lane, uint64_t *ret_left_ns, zk_err_t *err) {
    (void)ctx;
    *ret_left_ns = 0;
    if (lane < 0 || lane >= ZK_BACKEND_MAX_LANES) return zk_fail(err, EINVAL, "cpu backend: no lane %d", lane);
    return 1;
}

static void cpu_destroy(void *ctx) {
    cpu_ctx_t *c = ctx;
    if (!c) return;
    for (int i = 0; i < c->n_keys; i++) zk_key_tables_free(&c->keys[i]);
    free(c->keys);
    free(c->scratch);
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
