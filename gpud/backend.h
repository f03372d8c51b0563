/* The proving-core backend interface of gpud: one implementation on the CPU (zk/ library) and one
 * on CUDA (gpud/cuda/). gpud registers the whole slab area once at start, loads each circuit's key
 * once, then proves one slab at a time in place: inputs are read where synthd wrote them (the slab
 * in shared memory); the backend writes nothing but *out and its own private memory. */
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
    /* Proves one partition: a, b, c (Montgomery Fr, domain_size each) and the witness (standard
     * form, nVars values) -> five raw points. */
    int (*prove)(void *ctx, const zk_zkey_t *z, const uint8_t *witness, const void *a, const void *b, const void *c,
                 zk_raw_t *out, zk_core_times_t *times, zk_err_t *err);
    void (*destroy)(void *ctx);
} zk_backend_ops_t;

extern const zk_backend_ops_t zk_backend_cpu;
/* Present when built with CUDA (-Dcuda); NULL-safe lookup below. */
const zk_backend_ops_t *zk_backend_by_name(const char *name);
