/* The per-thread bodies of the MSM kernels (msm.cuh) and the plan geometry, free of CUDA so that
 * tests/test_cuda_host.cpp runs the very same index logic on the host, thread by thread. */
#pragma once
#include <string.h>

#include "ec.cuh"
#include "msm_plan.h"

ZC_HD uint32_t zc_min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

/* Point i: its nw keys (window·nb + |digit| − 1, or the sentinel nw·nb for a zero digit or an
 * infinity point) and values (i << 1 | sign) at [w·n + i]. */
template <class G>
ZC_HD void zc_b_digits(const typename G::aff_t *pts, const uint32_t *sc, uint32_t n, int c, int nw, uint32_t nb,
                       uint32_t *keys, uint32_t *vals, uint32_t i) {
    if (i >= n) return;
    const uint32_t sentinel = (uint32_t)nw * nb;
    uint32_t s[8];
#ifdef __CUDA_ARCH__
    const uint4 *sv = (const uint4 *)(sc + 8 * (size_t)i);
    uint4 s0 = sv[0], s1 = sv[1];
    s[0] = s0.x, s[1] = s0.y, s[2] = s0.z, s[3] = s0.w, s[4] = s1.x, s[5] = s1.y, s[6] = s1.z, s[7] = s1.w;
#else
    memcpy(s, sc + 8 * (size_t)i, 32);
#endif
    bool skip = pts[i].is_inf();
    uint32_t carry = 0;
    for (int w = 0; w < nw; w++) {
        int d = zc_window_digit(s, w, c, &carry);
        size_t o = (size_t)w * n + i;
        if (d == 0 || skip) {
            keys[o] = sentinel;
            vals[o] = 0;
        } else {
            keys[o] = (uint32_t)w * nb + (uint32_t)(d < 0 ? -d : d) - 1;
            vals[o] = i << 1 | (uint32_t)(d < 0);
        }
    }
}

/* start[k] and end[k] of every key's run in the sorted keys (both zeroed before). */
ZC_HD void zc_b_runs(const uint32_t *keys, size_t m, uint32_t *start, uint32_t *end, size_t e) {
    if (e >= m) return;
    uint32_t k = keys[e];
    if (e == 0 || keys[e - 1] != k) start[k] = (uint32_t)e;
    if (e == m - 1 || keys[e + 1] != k) end[k] = (uint32_t)(e + 1);
}

/* cnt = end − start (level 0) and the tasks of each bucket; tasks[nbt] = 0 so that the exclusive
 * scan's last entry is the total. */
ZC_HD void zc_b_tasks(const uint32_t *start, uint32_t *cnt, const uint32_t *end, uint32_t *tasks, size_t nbt, int first,
                      size_t b) {
    if (b > nbt) return;
    if (b == nbt) {
        tasks[b] = 0;
        return;
    }
    if (first) cnt[b] = end[b] - start[b];
    tasks[b] = (cnt[b] + ZC_MSM_K - 1) / ZC_MSM_K;
}

/* Task t: sums at most K consecutive entries of one bucket (found by bisection in off). */
template <class G, bool FIRST>
ZC_HD void zc_b_bucket_sum(const typename G::aff_t *pts, const uint32_t *vals, const G *in, const uint32_t *start,
                           const uint32_t *cnt, const uint32_t *off, size_t nbt, G *out, uint32_t t) {
    if (t >= off[nbt]) return;
    size_t lo = 0, hi = nbt;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (off[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    size_t b = lo;
    uint32_t e0 = start[b] + (t - off[b]) * ZC_MSM_K;
    uint32_t e1 = zc_min_u32(start[b] + cnt[b], e0 + ZC_MSM_K);
    G acc = G::inf();
    for (uint32_t e = e0; e < e1; e++) {
        if (FIRST) {
            uint32_t v = vals[e];
            typename G::aff_t p = pts[v >> 1];
            acc = acc.add((v & 1) ? p.neg() : p);
        } else {
            acc = acc.add(in[e]);
        }
    }
    out[t] = acc;
}

/* After a level: a bucket's partial sums are the tasks just written. */
ZC_HD void zc_b_next_level(uint32_t *start, uint32_t *cnt, const uint32_t *tasks, const uint32_t *off, size_t nbt,
                           size_t b) {
    if (b >= nbt) return;
    cnt[b] = tasks[b];
    start[b] = off[b];
}

/* Window w, digits [lo, hi): Σ j·B_j = Σ (j−lo+1)·B_j + (lo−1)·Σ B_j, by running sums. */
template <class G>
ZC_HD void zc_b_window_seg(const G *part, const uint32_t *start, const uint32_t *cnt, int nw, uint32_t nb, uint32_t seg,
                           uint32_t nseg, G *out, uint32_t id) {
    if (id >= (uint32_t)nw * nseg) return;
    uint32_t w = id / nseg, s = id % nseg;
    uint32_t lo = 1 + s * seg, hi = zc_min_u32(nb + 1, lo + seg);
    G run = G::inf(), acc = G::inf();
    for (uint32_t j = hi; j-- > lo;) {
        size_t b = (size_t)w * nb + j - 1;
        if (cnt[b]) run = run.add(part[start[b]]);
        acc = acc.add(run);
    }
    out[id] = acc.add(run.mul_small(lo - 1));
}

/* out[w·ng + g] = Σ in[w·m + g·group .. +group) (clipped to m), ng = ceil(m/group). */
template <class G> ZC_HD void zc_b_sum_groups(const G *in, uint32_t m, uint32_t group, int nw, G *out, uint32_t id) {
    uint32_t ng = (m + group - 1) / group;
    if (id >= (uint32_t)nw * ng) return;
    uint32_t w = id / ng, g = id % ng;
    uint32_t e1 = zc_min_u32(m, (g + 1) * group);
    G acc = G::inf();
    for (uint32_t e = g * group; e < e1; e++) acc = acc.add(in[(size_t)w * m + e]);
    out[id] = acc;
}

#define ZC_MSM_GROUP 8 /* segment sums added per thread in each reduction pass */
