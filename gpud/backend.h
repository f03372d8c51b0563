/* The proving-core backend interface of gpud: one implementation on the CPU (zk/ library) and one
 * on CUDA (gpud/cuda/). gpud registers the whole slab area once at start, loads each circuit's key
 * once, then proves slabs in place, up to `depth` of them in flight: inputs are read where synthd
 * wrote them (the slab in shared memory); the backend writes nothing but *out and its own private
 * memory. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "zk/groth16.h"

typedef struct zk_backend_ops {
    const char *name; /* "cpu" | "cuda" */
    /* Creates a context for device `device` (ignored by the CPU backend); threads = CPU threads. */
    int (*init)(void **ret_ctx, int device, int threads, zk_err_t *err);
    /* Called once at start for the whole slab data area (cudaHostRegister on CUDA; no-op on CPU). */
    int (*register_memory)(void *ctx, void *base, size_t len, zk_err_t *err);
    /* Makes the key's points resident (device memory on CUDA); called once per circuit. */
    int (*load_key)(void *ctx, const zk_zkey_t *z, zk_err_t *err);
    /* Partitions in flight at once: submit(lane) starts one, collect(lane) finishes it. Lanes
     * are used in turn 0, 1, …, depth−1, 0, …, each collected before it is submitted again, and
     * collected in submission order. The CPU backend does the work inside submit (depth 1 is
     * its natural setting); CUDA enqueues copies and kernels and returns, so the next partition's
     * copy overlaps this one's MSMs (depth 2). */
    int depth;
    /* Starts proving one partition: a, b, c (Montgomery Fr, domain_size each) and the witness
     * (standard form, nVars values), all in memory the caller keeps unchanged until collect. */
    int (*submit)(void *ctx, int lane, const zk_zkey_t *z, const uint8_t *witness, const void *a, const void *b,
                  const void *c, zk_err_t *err);
    /* Waits for the lane's partition: five raw points and the backend's step times (may be NULL).
     * An error from submit's work is reported here or by submit, never lost. */
    int (*collect)(void *ctx, int lane, zk_raw_t *out, zk_core_times_t *times, zk_err_t *err);
    void (*destroy)(void *ctx);
} zk_backend_ops_t;

#define ZK_BACKEND_MAX_LANES 4

/* One partition from submit to collect on lane 0 (tests, tools). */
static inline int zk_backend_prove(const zk_backend_ops_t *b, void *ctx, const zk_zkey_t *z, const uint8_t *witness,
                                   const void *a, const void *bb, const void *c, zk_raw_t *out, zk_core_times_t *times,
                                   zk_err_t *err) {
    int r = b->submit(ctx, 0, z, witness, a, bb, c, err);
    if (r < 0) return r;
    return b->collect(ctx, 0, out, times, err);
}

extern const zk_backend_ops_t zk_backend_cpu;
/* Present when built with CUDA (-Dcuda); NULL-safe lookup below. */
const zk_backend_ops_t *zk_backend_by_name(const char *name);
