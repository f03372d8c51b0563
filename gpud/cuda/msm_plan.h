/* Geometry of one MSM (shared by the host orchestration, the kernels and the host test). */
#pragma once
#include <stddef.h>
#include <stdint.h>

struct zc_msm_plan {
    int c, nw;                 /* window bits, windows */
    uint32_t nb, n;            /* buckets per window (2^(c-1)), points */
    size_t nbt, m, cap0, cap1; /* buckets in all, keys (nw·n), partial-sum capacities */
    size_t nseg, seg;          /* window segments and their length */
    int levels, end_bit;       /* bucket-sum levels, radix-sort bits */
    size_t sort_tmp, scan_tmp; /* CUB temporary storage */
};

static inline size_t zc_align(size_t x) { return (x + 255) & ~(size_t)255; }
static inline unsigned zc_blocks(size_t n, unsigned t) { return (unsigned)((n + t - 1) / t); }
