/* Pippenger MSM on the device: signed c-bit digits, (window, |digit|) keys sorted with CUB radix
 * sort, buckets summed in chunks of at most ZC_MSM_K entries over a few levels (so a bucket that
 * holds every "1" witness value is summed by many threads, not one), windows reduced in segments
 * on the device; the host only does the last ceil(256/c) doublings-and-adds.
 * Zero scalars and infinity points produce no key at all (they sort past the last bucket); a
 * scalar 1 produces a single key (window 0, bucket 1) and costs one mixed addition. */
#pragma once
#include <cuda_runtime.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "ec.cuh"
#include "zkcuda_int.cuh"

#define ZC_MSM_K 32 /* entries per bucket-sum task */

template <class G>
__global__ void zc_k_digits(const typename G::aff_t *pts, const uint32_t *sc, uint32_t n, int c, int nw, uint32_t nb,
                            uint32_t *keys, uint32_t *vals) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const uint32_t sentinel = (uint32_t)nw * nb;
    uint32_t s[8];
    const uint4 *sv = (const uint4 *)(sc + 8 * (size_t)i);
    uint4 s0 = sv[0], s1 = sv[1];
    s[0] = s0.x, s[1] = s0.y, s[2] = s0.z, s[3] = s0.w, s[4] = s1.x, s[5] = s1.y, s[6] = s1.z, s[7] = s1.w;
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
static __global__ void zc_k_runs(const uint32_t *keys, size_t m, uint32_t *start, uint32_t *end) {
    size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= m) return;
    uint32_t k = keys[e];
    if (e == 0 || keys[e - 1] != k) start[k] = (uint32_t)e;
    if (e == m - 1 || keys[e + 1] != k) end[k] = (uint32_t)(e + 1);
}

/* cnt = end - start (level 0) and the number of tasks of each bucket; tasks[nbt] = 0 so that the
 * exclusive scan's last entry is the total. */
static __global__ void zc_k_tasks(const uint32_t *start, uint32_t *cnt, const uint32_t *end, uint32_t *tasks, size_t nbt, int first) {
    size_t b = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (b > nbt) return;
    if (b == nbt) {
        tasks[b] = 0;
        return;
    }
    if (first) cnt[b] = end[b] - start[b];
    tasks[b] = (cnt[b] + ZC_MSM_K - 1) / ZC_MSM_K;
}

/* One thread per task: sums at most K consecutive entries of one bucket. */
template <class G, bool FIRST>
__global__ void zc_k_bucket_sum(const typename G::aff_t *pts, const uint32_t *vals, const G *in, const uint32_t *start,
                                const uint32_t *cnt, const uint32_t *off, size_t nbt, G *out) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= off[nbt]) return;
    size_t lo = 0, hi = nbt;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (off[mid] <= t) lo = mid;
        else hi = mid;
    }
    size_t b = lo;
    uint32_t e0 = start[b] + (t - off[b]) * ZC_MSM_K;
    uint32_t e1 = min(start[b] + cnt[b], e0 + ZC_MSM_K);
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

/* After a level: the bucket's partial sums are the tasks just written. */
static __global__ void zc_k_next_level(uint32_t *start, uint32_t *cnt, const uint32_t *tasks, const uint32_t *off, size_t nbt) {
    size_t b = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= nbt) return;
    cnt[b] = tasks[b];
    start[b] = off[b];
}

/* Window w, digits [lo, hi): Σ j·B_j = Σ (j-lo+1)·B_j + (lo-1)·Σ B_j, by running sums. */
template <class G>
__global__ void zc_k_window_seg(const G *part, const uint32_t *start, const uint32_t *cnt, int nw, uint32_t nb,
                                uint32_t seg, uint32_t nseg, G *out) {
    uint32_t id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= (uint32_t)nw * nseg) return;
    uint32_t w = id / nseg, s = id % nseg;
    uint32_t lo = 1 + s * seg, hi = min(nb + 1, lo + seg);
    G run = G::inf(), acc = G::inf();
    for (uint32_t j = hi; j-- > lo;) {
        size_t b = (size_t)w * nb + j - 1;
        if (cnt[b]) run = run.add(part[start[b]]);
        acc = acc.add(run);
    }
    out[id] = acc.add(run.mul_small(lo - 1));
}

/* out[w*ng + g] = Σ in[w*m + g*group .. +group) (clipped to m), ng = ceil(m/group). */
template <class G>
__global__ void zc_k_sum_groups(const G *in, uint32_t m, uint32_t group, int nw, G *out) {
    uint32_t ng = (m + group - 1) / group;
    uint32_t id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= (uint32_t)nw * ng) return;
    uint32_t w = id / ng, g = id % ng;
    uint32_t e1 = min(m, (g + 1) * group);
    G acc = G::inf();
    for (uint32_t e = g * group; e < e1; e++) acc = acc.add(in[(size_t)w * m + e]);
    out[id] = acc;
}

static inline int zc_msm_window(uint32_t n) {
    int lg = 0;
    while ((1ull << lg) < n) lg++;
    int c = lg - 4;
    if (c < 4) c = 4;
    if (c > 16) c = 16;
    return c;
}

template <class G>
static cudaError_t zc_msm_plan_make(zc_msm_plan *p, uint32_t n, int c) {
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
    /* about 32 threads' worth of segments per window-bucket range */
    p->seg = p->nb >= 4096 ? 32 : (p->nb >= 256 ? 16 : 4);
    p->nseg = (p->nb + p->seg - 1) / p->seg;
    p->sort_tmp = 0;
    p->scan_tmp = 0;
    cudaError_t e = cub::DeviceRadixSort::SortPairs(nullptr, p->sort_tmp, (uint32_t *)nullptr, (uint32_t *)nullptr,
                                                    (uint32_t *)nullptr, (uint32_t *)nullptr, (int)p->m, 0, p->end_bit);
    if (e != cudaSuccess) return e;
    return cub::DeviceScan::ExclusiveSum(nullptr, p->scan_tmp, (uint32_t *)nullptr, (uint32_t *)nullptr, (int)(p->nbt + 1));
}

/* Bytes of device workspace for this plan. */
template <class G>
static size_t zc_msm_ws_size(const zc_msm_plan *p) {
    size_t s = 0;
    s += 4 * zc_align(p->m * 4);            /* keys, vals, sorted keys, sorted vals */
    s += 5 * zc_align((p->nbt + 1) * 4);    /* start, end, cnt, tasks, off */
    s += zc_align(p->cap0 * sizeof(G)) + zc_align(p->cap1 * sizeof(G));
    s += 2 * zc_align((size_t)p->nw * p->nseg * sizeof(G));
    s += zc_align(p->sort_tmp > p->scan_tmp ? p->sort_tmp : p->scan_tmp);
    return s;
}

/* Enqueues the MSM Σ sc_i·pts_i (i < n; scalars standard form, 8 words each) on stream; writes
 * nw window sums (XYZZ) to host_out (pinned, nw entries) with an async copy. The caller syncs and
 * then calls zc_msm_finish. ws must hold zc_msm_ws_size bytes. */
template <class G>
static cudaError_t zc_msm_enqueue(const zc_msm_plan *p, const typename G::aff_t *pts, const uint32_t *sc, void *ws,
                                  G *host_out, cudaStream_t st) {
    uint8_t *w = (uint8_t *)ws;
    auto take = [&](size_t bytes) {
        void *r = w;
        w += zc_align(bytes);
        return r;
    };
    uint32_t *keys = (uint32_t *)take(p->m * 4), *vals = (uint32_t *)take(p->m * 4);
    uint32_t *skeys = (uint32_t *)take(p->m * 4), *svals = (uint32_t *)take(p->m * 4);
    uint32_t *start = (uint32_t *)take((p->nbt + 1) * 4), *end = (uint32_t *)take((p->nbt + 1) * 4);
    uint32_t *cnt = (uint32_t *)take((p->nbt + 1) * 4), *tasks = (uint32_t *)take((p->nbt + 1) * 4);
    uint32_t *off = (uint32_t *)take((p->nbt + 1) * 4);
    G *part0 = (G *)take(p->cap0 * sizeof(G)), *part1 = (G *)take(p->cap1 * sizeof(G));
    G *seg0 = (G *)take((size_t)p->nw * p->nseg * sizeof(G)), *seg1 = (G *)take((size_t)p->nw * p->nseg * sizeof(G));
    void *tmp = take(p->sort_tmp > p->scan_tmp ? p->sort_tmp : p->scan_tmp);
    size_t tmp_bytes = p->sort_tmp > p->scan_tmp ? p->sort_tmp : p->scan_tmp;
    cudaError_t e;

    if (p->n == 0) {
        cudaMemsetAsync(seg0, 0, (size_t)p->nw * sizeof(G), st);
        return cudaMemcpyAsync(host_out, seg0, (size_t)p->nw * sizeof(G), cudaMemcpyDeviceToHost, st);
    }
    zc_k_digits<G><<<zc_blocks(p->n, 256), 256, 0, st>>>(pts, sc, p->n, p->c, p->nw, p->nb, keys, vals);
    size_t tb = tmp_bytes;
    e = cub::DeviceRadixSort::SortPairs(tmp, tb, keys, skeys, vals, svals, (int)p->m, 0, p->end_bit, st);
    if (e != cudaSuccess) return e;
    cudaMemsetAsync(start, 0, (p->nbt + 1) * 4, st);
    cudaMemsetAsync(end, 0, (p->nbt + 1) * 4, st);
    zc_k_runs<<<zc_blocks(p->m, 256), 256, 0, st>>>(skeys, p->m, start, end);

    const G *in = nullptr;
    G *out = part0;
    size_t bound = p->cap0;
    for (int l = 0; l < p->levels; l++) {
        zc_k_tasks<<<zc_blocks(p->nbt + 1, 256), 256, 0, st>>>(start, cnt, end, tasks, p->nbt, l == 0);
        tb = tmp_bytes;
        e = cub::DeviceScan::ExclusiveSum(tmp, tb, tasks, off, (int)(p->nbt + 1), st);
        if (e != cudaSuccess) return e;
        if (l == 0)
            zc_k_bucket_sum<G, true><<<zc_blocks(bound, 128), 128, 0, st>>>(pts, svals, nullptr, start, cnt, off, p->nbt, out);
        else
            zc_k_bucket_sum<G, false><<<zc_blocks(bound, 128), 128, 0, st>>>(pts, nullptr, in, start, cnt, off, p->nbt, out);
        zc_k_next_level<<<zc_blocks(p->nbt, 256), 256, 0, st>>>(start, cnt, tasks, off, p->nbt);
        in = out;
        out = (out == part0) ? part1 : part0;
        bound = bound / ZC_MSM_K + p->nbt + 1;
    }
    size_t nseg = p->nseg;
    zc_k_window_seg<G><<<zc_blocks((size_t)p->nw * nseg, 64), 64, 0, st>>>(in, start, cnt, p->nw, p->nb,
                                                                             (uint32_t)p->seg, (uint32_t)nseg, seg0);
    G *a = seg0, *b = seg1;
    while (nseg > 1) {
        uint32_t group = 8;
        size_t ng = (nseg + group - 1) / group;
        zc_k_sum_groups<G><<<zc_blocks((size_t)p->nw * ng, 64), 64, 0, st>>>(a, (uint32_t)nseg, group, p->nw, b);
        G *t = a;
        a = b;
        b = t;
        nseg = ng;
    }
    e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    return cudaMemcpyAsync(host_out, a, (size_t)p->nw * sizeof(G), cudaMemcpyDeviceToHost, st);
}

/* Horner over the window sums on the host (same template, host build). */
template <class G>
static G zc_msm_finish(const zc_msm_plan *p, const G *win) {
    G acc = G::inf();
    for (int w = p->nw - 1; w >= 0; w--) {
        for (int i = 0; i < p->c; i++) acc = acc.dbl();
        acc = acc.add(win[w]);
    }
    return acc;
}
