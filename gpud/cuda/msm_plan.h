/* Geometry of one MSM (shared by the host orchestration, the kernels, the host test and the
 * device-memory plan, gpud/cuda/devplan.c). Plain C: zkpipe plan computes the same geometry. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#define ZC_MSM_K 32 /* entries per bucket-sum task */

typedef struct zc_msm_plan {
    int c, nw;                 /* window bits, windows */
    uint32_t nb, n;            /* buckets per window (2^(c-1)), points */
    size_t nbt, m, cap0, cap1; /* buckets in all, keys (nw·n), partial-sum capacities */
    size_t nseg, seg;          /* window segments and their length */
    int levels, end_bit;       /* bucket-sum levels, radix-sort bits */
    size_t sort_tmp, scan_tmp; /* CUB temporary storage */
} zc_msm_plan;

static inline size_t zc_align(size_t x) { return (x + 255) & ~(size_t)255; }
static inline unsigned zc_blocks(size_t n, unsigned t) { return (unsigned)((n + t - 1) / t); }

/* The window of n points: lg n − 4 up to 2^16 points, then 12 up to 2^19, then lg n − 7, at most
 * 16. Measured on an H200 (bench/RESULTS.md "GPU", test_cuda_device msm_windows): at 2^20 points,
 * half of the scalars zero or one, c = 12 took 8.2 / 34.8 ms (G1 / G2 bn128), c = 13 8.9 / 35.8,
 * c = 16 10.7 / 42.2; a witness's scalars make the bucket sums dearer, which moves the best window
 * up, hence 13. The window sums cost 2^c per window and grow faster than the bucket additions
 * shrink; the best window moves up about one bit when n doubles. */
static inline int zc_msm_window(uint32_t n) {
    int lg = 0;
    while ((1ull << lg) < n) lg++;
    int c = lg <= 16 ? lg - 4 : (lg - 7 > 12 ? lg - 7 : 12);
    if (c < 4) c = 4;
    if (c > 16) c = 16;
    return c;
}

/* Everything of the plan but CUB's temporary sizes; c = 0: the window of n points. */
static inline void zc_msm_geometry(zc_msm_plan *p, uint32_t n, int c) {
    p->n = n;
    p->c = c ? c : zc_msm_window(n);
    p->nw = (256 + p->c - 1) / p->c;
    p->nb = 1u << (p->c - 1);
    p->nbt = (size_t)p->nw * p->nb;
    p->m = (size_t)p->nw * n;
    p->cap0 = p->m / ZC_MSM_K + p->nbt + 1;
    p->cap1 = p->cap0 / ZC_MSM_K + p->nbt + 1;
    p->levels = 1;
    for (uint64_t r = ZC_MSM_K; r < n; r *= ZC_MSM_K) p->levels++;
    p->end_bit = 1;
    while ((1ull << p->end_bit) <= p->nbt) p->end_bit++;
    p->seg = p->nb >= 4096 ? 32 : (p->nb >= 256 ? 16 : 4);
    p->nseg = (p->nb + p->seg - 1) / p->seg;
    p->sort_tmp = 0;
    p->scan_tmp = 0;
}

/* Bytes of device workspace of one MSM plan whose XYZZ points take xyzz bytes; zc_msm_enqueue
 * (msm.cuh) carves it in this order. */
static inline size_t zc_msm_ws_bytes(const zc_msm_plan *p, size_t xyzz) {
    size_t s = 0;
    s += 4 * zc_align(p->m * 4);         /* keys, vals, sorted keys, sorted vals */
    s += 5 * zc_align((p->nbt + 1) * 4); /* start, end, cnt, tasks, off */
    s += zc_align(p->cap0 * xyzz) + zc_align(p->cap1 * xyzz);
    s += 2 * zc_align((size_t)p->nw * p->nseg * xyzz);
    s += zc_align(p->sort_tmp > p->scan_tmp ? p->sort_tmp : p->scan_tmp);
    return s;
}
