/* The device-memory plan of the CUDA backend (docs/cuda.md, "Device memory"): how the partitions of
 * one circuit use the device (key points resident or streamed, MSMs whole or in chunks, the NTT
 * whole or in blocks with the scalars streamed) and the bytes each part takes. Plain C, no CUDA:
 * the backend plans every key with it at load_key (CUB's temporary sizes asked of CUB), and
 * zkpipe plan prints the same plan (CUB's sizes estimated, zc_plan_cub_estimate). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpud/cuda/msm_plan.h"

#ifdef __cplusplus
extern "C" {
#endif

#include "zk/curve_info.h"

#define ZC_PLAN_LANES 2         /* partitions in flight (the backend's depth): per-lane buffers count twice */
#define ZC_MIN_CHUNK (1u << 10) /* the smallest MSM chunk tried */

/* CUB's temporary storage for an MSM's geometry: fills p->sort_tmp and p->scan_tmp; 0 or -errno. */
typedef struct {
    int (*sizes)(zc_msm_plan *p, void *arg);
    void *arg;
} zc_plan_cub_t;
/* zkpipe plan's stand-in: CUB 3's onesweep radix sort (CUDA 13) asks for the sorted keys' and
 * values' second buffers (8 bytes an item), a lookback table of 256 counters per tile of about
 * 8000 items (an eighth of a byte an item) and a few KiB of bins; the scan's tile states are
 * small. An estimate, not CUB's own answer. */
extern const zc_plan_cub_t zc_plan_cub_estimate;

/* What the plan needs to know of a circuit (zk_zkey_t's fields). */
typedef struct {
    const zk_curve_t *curve;
    uint32_t n_vars, n_pub, log_domain;
} zc_plan_circuit_t;

typedef struct {
    uint32_t chunk;     /* points per MSM chunk (≥ the largest MSM: not chunked) */
    bool resident;      /* the key's points stay on the device; else streamed from its mapping, chunk by chunk */
    uint32_t ntt_block; /* 0: the NTT runs whole (a, b, c and the witness on the device per lane); else the
                         * elements of one block of the blocked NTT (a, b, c streamed from the slab in
                         * column and row blocks through pinned host vectors, MSM scalars streamed) */
    uint32_t log_rows;  /* blocked: the domain as 2^log_rows rows × 2^(log_domain − log_rows) columns */
    zc_msm_plan pv1, pv2, pc1, ph1; /* the full chunks' plans: A and B1 (G1), B2 (G2), C, H */
    /* device bytes */
    size_t key;      /* the five sections' points (counted in need when resident) */
    size_t wit, abc; /* per lane, NTT whole: the witness; a, b, c */
    size_t win;      /* per lane: the five MSMs' window sums */
    size_t ws;       /* the MSM workspace, shared by the lanes */
    size_t ntt;      /* the NTT buffer: one domain (whole) or four blocks (blocked) */
    size_t tables;   /* the NTT's twiddle and coset tables */
    size_t stage;    /* a chunk of streamed points (key not resident) */
    size_t sstage;   /* a chunk of streamed scalars (blocked) */
    size_t need;     /* all of the above that the plan holds */
    size_t pinned;   /* the backend's own pinned host memory: window sums per lane, the blocked NTT's vectors */
    size_t budget;   /* what it was planned against */
} zc_dev_plan_t;

/* The needs of one choice. -E2BIG when an MSM has too many keys for 32-bit offsets, or CUB's error. */
int zc_plan_needs(const zc_plan_circuit_t *k, uint32_t chunk, bool resident, uint32_t ntt_block,
                  const zc_plan_cub_t *cub, zc_dev_plan_t *p);
/* The first plan that fits budget, in this order: the key resident with the NTT whole, the key
 * streamed with the NTT whole, then the NTT in blocks (key resident, then streamed); in each, the
 * largest MSM chunk first (no chunking, then powers of two down to ZC_MIN_CHUNK), and in blocks,
 * the largest block. -ENOMEM when none fits: *p is then the smallest plan (what is needed at
 * least). A chunk with too many keys (-E2BIG) is passed over for smaller ones. Other errors from
 * zc_plan_needs. */
int zc_plan_choose(const zc_plan_circuit_t *k, size_t budget, const zc_plan_cub_t *cub, zc_dev_plan_t *p);
/* What a plan may use: min(cap, held + free − a reserve for the runtime of min(256 MiB, total/32));
 * cap 0: no cap ([gpu] device_memory); held: what the context already holds (its keys and buffers
 * are the plan's to reuse); free and total: the device's (cudaMemGetInfo, or NVML in zkpipe plan). */
size_t zc_plan_budget(size_t cap, size_t held, size_t free, size_t total);
/* Device bytes of the NTT tables: whole (log_rows ignored) or blocked. */
size_t zc_plan_tables_bytes(uint32_t log_domain, bool blocked, uint32_t log_rows);
/* "key points resident (24.0 MiB), MSMs in chunks of 16384 points, NTT whole; 51.0 MiB" */
void zc_plan_describe(const zc_plan_circuit_t *k, const zc_dev_plan_t *p, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
