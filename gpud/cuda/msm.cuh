/* Pippenger MSM on the device: signed c-bit digits, (window, |digit|) keys sorted with CUB radix
 * sort, buckets summed in chunks of at most ZC_MSM_K entries over a few levels (so a bucket that
 * holds every "1" witness value is summed by many threads, not one), windows reduced in segments
 * on the device; the host only does the last ceil(256/c) doublings-and-adds.
 * Zero scalars and infinity points produce no key at all (they sort past the last bucket); a
 * scalar 1 produces a single key (window 0, bucket 1) and costs one mixed addition. */
#pragma once
#include "gpud/cuda/rt.cuh"

#include "msm_body.cuh"
#include "zkcuda_int.cuh"

#define ZC_TID ((size_t)blockIdx.x * blockDim.x + threadIdx.x)

template <class G>
__global__ void zc_k_digits(const typename G::aff_t *pts, const uint32_t *sc, uint32_t n, int c, int nw, uint32_t nb,
                            uint32_t *keys, uint32_t *vals) {
    if (ZC_TID < n) zc_b_digits<G>(pts, sc, n, c, nw, nb, keys, vals, (uint32_t)ZC_TID);
}
static __global__ void zc_k_runs(const uint32_t *keys, size_t m, uint32_t *start, uint32_t *end) {
    zc_b_runs(keys, m, start, end, ZC_TID);
}
static __global__ void zc_k_tasks(const uint32_t *start, uint32_t *cnt, const uint32_t *end, uint32_t *tasks,
                                  size_t nbt, int first) {
    zc_b_tasks(start, cnt, end, tasks, nbt, first, ZC_TID);
}
template <class G, bool FIRST>
__global__ void zc_k_bucket_sum(const typename G::aff_t *pts, const uint32_t *vals, const G *in, const uint32_t *start,
                                const uint32_t *cnt, const uint32_t *off, size_t nbt, G *out) {
    zc_b_bucket_sum<G, FIRST>(pts, vals, in, start, cnt, off, nbt, out, (uint32_t)ZC_TID);
}
static __global__ void zc_k_next_level(uint32_t *start, uint32_t *cnt, const uint32_t *tasks, const uint32_t *off,
                                       size_t nbt) {
    zc_b_next_level(start, cnt, tasks, off, nbt, ZC_TID);
}
template <class G>
__global__ void zc_k_window_seg(const G *part, const uint32_t *start, const uint32_t *cnt, int nw, uint32_t nb,
                                uint32_t seg, uint32_t nseg, G *out) {
    zc_b_window_seg<G>(part, start, cnt, nw, nb, seg, nseg, out, (uint32_t)ZC_TID);
}
template <class G> __global__ void zc_k_sum_groups(const G *in, uint32_t m, uint32_t group, int nw, G *out) {
    zc_b_sum_groups<G>(in, m, group, nw, out, (uint32_t)ZC_TID);
}
/* out[w] = win[w] (first chunk of an MSM) or out[w] + win[w] (a later chunk), w < nw. */
template <class G> __global__ void zc_k_win_out(const G *win, int nw, int accumulate, G *out) {
    size_t w = ZC_TID;
    if (w < (size_t)nw) out[w] = accumulate ? out[w].add(win[w]) : win[w];
}

template <class G> static cudaError_t zc_msm_plan_make(zc_msm_plan *p, uint32_t n, int c) {
    zc_msm_geometry(p, n, c);
    /* keys are indexed by 32-bit offsets (CUB's num_items, start/end, a task's e0 + ZC_MSM_K) */
    if (p->m > UINT32_MAX - ZC_MSM_K) return cudaErrorInvalidValue;
    cudaError_t e =
        cub::DeviceRadixSort::SortPairs(nullptr, p->sort_tmp, (uint32_t *)nullptr, (uint32_t *)nullptr,
                                        (uint32_t *)nullptr, (uint32_t *)nullptr, (uint32_t)p->m, 0, p->end_bit);
    if (e != cudaSuccess) return e;
    return cub::DeviceScan::ExclusiveSum(nullptr, p->scan_tmp, (uint32_t *)nullptr, (uint32_t *)nullptr,
                                         (int)(p->nbt + 1));
}

/* Bytes of device workspace for this plan (carved below in the order zc_msm_ws_bytes counts). */
template <class G> static size_t zc_msm_ws_size(const zc_msm_plan *p) { return zc_msm_ws_bytes(p, sizeof(G)); }

/* Enqueues the MSM Σ sc_i·pts_i (i < n; scalars standard form, 8 words each) on stream; its nw
 * window sums (XYZZ) are written to out (device memory, nw entries), or added to what out holds
 * when accumulate (the later chunks of an MSM split in chunks of points with one window size: the
 * window sums of the whole are the sums of the chunks'). The caller copies out to the host and
 * calls zc_msm_finish. ws must hold zc_msm_ws_size bytes. */
template <class G>
static cudaError_t zc_msm_enqueue(const zc_msm_plan *p, const typename G::aff_t *pts, const uint32_t *sc, void *ws,
                                  G *out_win, int accumulate, cudaStream_t st) {
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
        if (accumulate) return cudaSuccess;
        return cudaMemsetAsync(out_win, 0, (size_t)p->nw * sizeof(G), st); /* all zero: infinity */
    }
    ZC_LAUNCH(zc_blocks(p->n, 256), 256, 0, st, zc_k_digits<G>)(pts, sc, p->n, p->c, p->nw, p->nb, keys, vals);
    size_t tb = tmp_bytes;
    e = cub::DeviceRadixSort::SortPairs(tmp, tb, keys, skeys, vals, svals, (uint32_t)p->m, 0, p->end_bit, st);
    if (e != cudaSuccess) return e;
    if ((e = cudaMemsetAsync(start, 0, (p->nbt + 1) * 4, st)) != cudaSuccess) return e;
    if ((e = cudaMemsetAsync(end, 0, (p->nbt + 1) * 4, st)) != cudaSuccess) return e;
    ZC_LAUNCH(zc_blocks(p->m, 256), 256, 0, st, zc_k_runs)(skeys, p->m, start, end);

    const G *in = nullptr;
    G *out = part0;
    size_t bound = p->cap0;
    for (int l = 0; l < p->levels; l++) {
        ZC_LAUNCH(zc_blocks(p->nbt + 1, 256), 256, 0, st, zc_k_tasks)(start, cnt, end, tasks, p->nbt, l == 0);
        tb = tmp_bytes;
        e = cub::DeviceScan::ExclusiveSum(tmp, tb, tasks, off, (int)(p->nbt + 1), st);
        if (e != cudaSuccess) return e;
        if (l == 0)
            ZC_LAUNCH(zc_blocks(bound, 128), 128, 0, st, zc_k_bucket_sum<G, true>)
            (pts, svals, nullptr, start, cnt, off, p->nbt, out);
        else
            ZC_LAUNCH(zc_blocks(bound, 128), 128, 0, st, zc_k_bucket_sum<G, false>)
            (pts, nullptr, in, start, cnt, off, p->nbt, out);
        ZC_LAUNCH(zc_blocks(p->nbt, 256), 256, 0, st, zc_k_next_level)(start, cnt, tasks, off, p->nbt);
        in = out;
        out = (out == part0) ? part1 : part0;
        bound = bound / ZC_MSM_K + p->nbt + 1;
    }
    size_t nseg = p->nseg;
    ZC_LAUNCH(zc_blocks((size_t)p->nw * nseg, 64), 64, 0, st, zc_k_window_seg<G>)
    (in, start, cnt, p->nw, p->nb, (uint32_t)p->seg, (uint32_t)nseg, seg0);
    G *a = seg0, *b = seg1;
    while (nseg > 1) {
        uint32_t group = ZC_MSM_GROUP;
        size_t ng = (nseg + group - 1) / group;
        ZC_LAUNCH(zc_blocks((size_t)p->nw * ng, 64), 64, 0, st, zc_k_sum_groups<G>)(a, (uint32_t)nseg, group, p->nw, b);
        G *t = a;
        a = b;
        b = t;
        nseg = ng;
    }
    ZC_LAUNCH(zc_blocks((size_t)p->nw, 64), 64, 0, st, zc_k_win_out<G>)(a, p->nw, accumulate, out_win);
    return cudaGetLastError();
}

/* Horner over the window sums on the host (same template, host build). */
template <class G> static G zc_msm_finish(const zc_msm_plan *p, const G *win) {
    G acc = G::inf();
    for (int w = p->nw - 1; w >= 0; w--) {
        for (int i = 0; i < p->c; i++) acc = acc.dbl();
        acc = acc.add(win[w]);
    }
    return acc;
}
