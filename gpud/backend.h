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
    const char *name; /* "cpu" | "cuda" | "replay" */
    /* Creates a context for device `device` (ignored by the CPU backend); threads = CPU threads;
     * precompute = bytes the backend may spend on precomputed multiples of the keys' points, all keys
     * together (the CPU backend's window tables, docs/prover.md; 0 = none; ignored by CUDA). */
    int (*init)(void **ret_ctx, int device, int threads, uint64_t precompute, zk_err_t *err);
    /* init fails with -ENOEXEC when the device cannot run this build at all (CUDA: no image for its
     * compute capability): gpud exits ZK_BACKEND_EXIT_UNSUPPORTED, which its unit does not restart. */
    /* Called at start for the slab data area, in groups of whole slabs (zk_backend_register_slabs;
     * cudaHostRegister on CUDA, in chunks of at most ZK_BACKEND_REGISTER_MAX; no-op on CPU). */
    int (*register_memory)(void *ctx, void *base, size_t len, zk_err_t *err);
    /* Makes the key's points resident (device memory on CUDA); called once per circuit. */
    int (*load_key)(void *ctx, const zk_zkey_t *z, zk_err_t *err);
    /* Partitions in flight at once: submit(lane) starts one, collect(lane) finishes it. gpud
     * submits to any lane 0 … depth−1 that is not in flight and collects lanes in any order (the
     * one poll says has finished), each collected before it is submitted again; a backend keeps
     * each lane's inputs and results apart. The CPU backend does the work inside submit (depth 1
     * is its natural setting; told more lanes by set_lanes, it proves them side by side on a thread
     * each); CUDA enqueues copies and kernels and returns, so the next
     * partition's copy overlaps this one's MSMs (depth 2). */
    int depth;
    /* Starts proving one partition: a, b, c (Montgomery Fr, domain_size each) and the witness
     * (standard form, nVars values), all in memory the caller keeps unchanged until collect. */
    int (*submit)(void *ctx, int lane, const zk_zkey_t *z, const uint8_t *witness, const void *a, const void *b,
                  const void *c, zk_err_t *err);
    /* Waits for the lane's partition: five raw points and the backend's step times (may be NULL).
     * An error from submit's work is reported here or by submit, never lost. Errors are -errno;
     * -ENODEV (from any call) means the device is lost for this process (CUDA: the context is
     * unusable after a kernel fault, ECC, the device gone), not that the partition is bad. */
    int (*collect)(void *ctx, int lane, zk_raw_t *out, zk_core_times_t *times, zk_err_t *err);
    /* Whether the lane's partition has finished, without waiting: 1 (collect will not block), 0
     * (still running) or an error as collect's (-ENODEV: the device is lost). With 0, *ret_left_ns
     * is how long it will still take when the backend knows (the replay's modelled end), else 0.
     * gpud polls its lanes while it waits for READY slabs, so that a slab that becomes READY while
     * a lane is busy is submitted at once, not when that lane ends (CUDA: cudaEventQuery). */
    int (*poll)(void *ctx, int lane, uint64_t *ret_left_ns, zk_err_t *err);
    void (*destroy)(void *ctx);
    /* Optional (NULL): one line on what the backend built for the key at its last load_key beyond
     * making its points resident (CPU: the window tables chosen and their sizes); valid until the
     * next call into the backend. */
    const char *(*key_info)(void *ctx, const zk_zkey_t *z);
    /* Optional (NULL): one line on the device the context runs on (CUDA: index, name, compute
     * capability, the image used and the images built), for gpud's log and the segment. */
    const char *(*device_info)(void *ctx);
    /* Optional (NULL): caps the device memory the context may use ([gpu] device_memory), before
     * the first load_key; 0 = no cap. CUDA plans every partition against min(cap, free memory):
     * MSMs in chunks, key points streamed when they do not fit (docs/cuda.md, "Device memory"). */
    int (*set_device_memory)(void *ctx, uint64_t bytes, zk_err_t *err);
    /* Optional (NULL): the lanes gpud will keep in flight ([gpu] inflight), before the first
     * load_key. The CPU backend then proves each lane on a thread of its own, side by side, the
     * threads divided among the lanes and a scratch area each; with 1 (its default) it proves in
     * submit on all threads. */
    int (*set_lanes)(void *ctx, int lanes, zk_err_t *err);
} zk_backend_ops_t;

#define ZK_BACKEND_MAX_LANES 4
/* gpud's exit status when init says -ENOEXEC (systemd: RestartPreventExitStatus=). */
#define ZK_BACKEND_EXIT_UNSUPPORTED 5
/* The most one register_memory call takes (cudaHostRegister is given at most 64 GiB at a time). */
#define ZK_BACKEND_REGISTER_MAX ((size_t)64 << 30)

/* Registers n_slabs slabs of slab_size bytes from base in groups of whole slabs of at most
 * ZK_BACKEND_REGISTER_MAX bytes (one slab per call when a slab is larger), so that no partition's
 * copy ever spans two registrations. On failure *ret_first is the group's first slab. */
static inline int zk_backend_register_slabs(const zk_backend_ops_t *b, void *ctx, uint8_t *base, uint32_t n_slabs,
                                            size_t slab_size, uint32_t *ret_first, zk_err_t *err) {
    size_t per = slab_size >= ZK_BACKEND_REGISTER_MAX || !slab_size ? 1 : ZK_BACKEND_REGISTER_MAX / slab_size;
    for (uint32_t i = 0; i < n_slabs; i += (uint32_t)per) {
        size_t k = n_slabs - i < per ? n_slabs - i : per;
        *ret_first = i;
        int r = b->register_memory(ctx, base + (size_t)i * slab_size, k * slab_size, err);
        if (r < 0) return r;
    }
    return 0;
}

/* One partition from submit to collect on lane 0 (tests, tools). */
static inline int zk_backend_prove(const zk_backend_ops_t *b, void *ctx, const zk_zkey_t *z, const uint8_t *witness,
                                   const void *a, const void *bb, const void *c, zk_raw_t *out, zk_core_times_t *times,
                                   zk_err_t *err) {
    int r = b->submit(ctx, 0, z, witness, a, bb, c, err);
    if (r < 0) return r;
    return b->collect(ctx, 0, out, times, err);
}

extern const zk_backend_ops_t zk_backend_cpu;
/* [pipeline] hugepages: the CPU backend hands each window table it builds to advise (gpud passes
 * shm_hugepages_advise) so that the tables sit in huge pages; NULL (the default): no advice. */
void zk_backend_cpu_hugepages(int (*advise)(void *p, size_t len, bool collapse));
/* The replay backend (gpud/backend_replay.c, docs/replay.md): a device model's timing, results from
 * the cache `zkpipe replay prepare` fills. Never chosen by "auto" nor found by
 * zk_backend_by_name (gpud selects it by name); setup (the model file and the
 * cache directory, [gpu] replay_model and replay_cache) comes before init, which refuses no model. */
extern const zk_backend_ops_t zk_backend_replay;
void zk_backend_replay_setup(const char *model, const char *cache);
/* Present when built with CUDA (-Dcuda); NULL-safe lookup below. */
const zk_backend_ops_t *zk_backend_by_name(const char *name);
