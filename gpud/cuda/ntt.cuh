/* NTT over Fr on the device (formats.md §5.2-5.3): bit-reversal copy (with the coset/scale
 * factors fused in: factor(i) = lo[i mod 2^split]·hi[i >> split]), then radix-2 DIT, the first
 * ten stages of each 1024-element tile in shared memory in one pass, the rest one global pass per
 * stage. Twiddle tables hold ω^k (or ω^-k) for k < n/2, built on the device from two small tables. */
#pragma once
#include "gpud/cuda/rt.cuh"

#include "ff.cuh"
#include "fr_host.cuh"
#include "msm_plan.h"

template <class F> __global__ void zc_k_pow_table(F *out, size_t count, const F *lo, const F *hi, uint32_t split) {
    size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= count) return;
    out[k] = lo[k & ((1u << split) - 1)] * hi[k >> split];
}

/* out[rev(i)] = in[i]·factor(i) (factor 1 when lo is NULL); in and out must differ. */
template <class F>
__global__ void zc_k_bitrev(const F *in, F *out, uint32_t logn, const F *lo, const F *hi, uint32_t split) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >> logn) return;
    zc_b_bitrev(in, out, logn, lo, hi, split, i, logn ? (size_t)(__brev((uint32_t)i) >> (32 - logn)) : 0);
}

template <class F> __global__ void zc_k_dit_shared(F *x, uint32_t logn, uint32_t S, const F *tw) {
    ZC_DYN_SHARED(F, s);
    uint32_t T = 1u << S;
    size_t base = (size_t)blockIdx.x * T;
    for (uint32_t i = threadIdx.x; i < T; i += blockDim.x) s[i] = x[base + i];
    __syncthreads();
    for (uint32_t st = 1; st <= S; st++) {
        for (uint32_t t = threadIdx.x; t < T / 2; t += blockDim.x) {
            zc_b_butterfly(s, logn, st, tw, t);
        }
        __syncthreads();
    }
    for (uint32_t i = threadIdx.x; i < T; i += blockDim.x) x[base + i] = s[i];
}

/* Stage st of every vector of 2^logn elements in x (half: the butterflies of all of them). */
template <class F> __global__ void zc_k_dit_stage(F *x, uint32_t logn, uint32_t st, const F *tw, size_t half) {
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= half) return;
    zc_b_butterfly(x, logn, st, tw, t);
}

template <class F> __global__ void zc_k_scale(F *x, size_t n, F f) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * f;
}

/* P[i] = A[i]·B[i] − C[i], in standard form (the H MSM's scalars), written over A. */
template <class F> __global__ void zc_k_abc(F *a, const F *b, const F *c, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) zc_b_abc(a, b, c, i);
}

/* Per-domain tables, device memory: twiddles (forward, inverse; n/2 each) and the coset factors
 * n^-1·ω_2n^i as lo/hi halves. */
template <class F> struct zc_ntt_tables {
    uint32_t logn = 0, split = 0;
    F *tw_f = nullptr, *tw_i = nullptr, *co_lo = nullptr, *co_hi = nullptr;
    F ninv;
};

template <class F> static cudaError_t zc_ntt_tables_make(zc_ntt_tables<F> *t, uint32_t logn, cudaStream_t st) {
    cudaError_t e;
    t->logn = logn;
    t->split = (logn + 1) / 2;
    size_t n = (size_t)1 << logn, half = n / 2 ? n / 2 : 1;
    uint32_t nlo = 1u << t->split, nhi = 1u << (logn - t->split);
    F w = zc_root<F>(logn), wi = zc_inv(w), w2 = zc_root<F>(logn + 1);
    t->ninv = zc_inv(zc_from_u64<F>(n));
    F *h = new F[2 * (size_t)(nlo + nhi)];
    F *d_tmp = nullptr;
    if ((e = cudaMalloc(&t->tw_f, half * sizeof(F))) != cudaSuccess) goto out;
    if ((e = cudaMalloc(&t->tw_i, half * sizeof(F))) != cudaSuccess) goto out;
    if ((e = cudaMalloc(&t->co_lo, nlo * sizeof(F))) != cudaSuccess) goto out;
    if ((e = cudaMalloc(&t->co_hi, nhi * sizeof(F))) != cudaSuccess) goto out;
    if ((e = cudaMalloc(&d_tmp, 2 * (size_t)(nlo + nhi) * sizeof(F))) != cudaSuccess) goto out;
    /* forward twiddles */
    zc_host_pow_halves(w, F::one(), logn, t->split, h, h + nlo);
    zc_host_pow_halves(wi, F::one(), logn, t->split, h + nlo + nhi, h + 2 * nlo + nhi);
    /* Copies on st, not cudaMemcpy: st is a non-blocking stream, which does not wait for the legacy
     * default stream, and a cudaMemcpy from pageable memory may return before its DMA has landed. */
    if ((e = cudaMemcpyAsync(d_tmp, h, 2 * (size_t)(nlo + nhi) * sizeof(F), cudaMemcpyHostToDevice, st)) != cudaSuccess)
        goto out;
    ZC_LAUNCH((unsigned)((half + 255) / 256), 256, 0, st, zc_k_pow_table<F>)
    (t->tw_f, half, d_tmp, d_tmp + nlo, t->split);
    ZC_LAUNCH((unsigned)((half + 255) / 256), 256, 0, st, zc_k_pow_table<F>)
    (t->tw_i, half, d_tmp + nlo + nhi, d_tmp + 2 * nlo + nhi, t->split);
    if ((e = cudaGetLastError()) != cudaSuccess) goto out;
    if ((e = cudaStreamSynchronize(st)) != cudaSuccess) goto out; /* h is rewritten next */
    /* coset factors: n^-1 · ω_2n^i */
    zc_host_pow_halves(w2, t->ninv, logn, t->split, h, h + nlo);
    if ((e = cudaMemcpyAsync(t->co_lo, h, nlo * sizeof(F), cudaMemcpyHostToDevice, st)) != cudaSuccess) goto out;
    if ((e = cudaMemcpyAsync(t->co_hi, h + nlo, nhi * sizeof(F), cudaMemcpyHostToDevice, st)) != cudaSuccess) goto out;
    e = cudaStreamSynchronize(st); /* table setup, once per domain size: d_tmp and h are freed next */
out:
    if (d_tmp) cudaFree(d_tmp);
    delete[] h;
    return e;
}

template <class F> static void zc_ntt_tables_free(zc_ntt_tables<F> *t) {
    cudaFree(t->tw_f);
    cudaFree(t->tw_i);
    cudaFree(t->co_lo);
    cudaFree(t->co_hi);
    t->tw_f = t->tw_i = t->co_lo = t->co_hi = nullptr;
    t->logn = 0;
}

/* DIT on `count` contiguous vectors of 2^lg elements each, already in bit-reversed order:
 * natural-order results, in place; tw: the twiddles of 2^lg. A stage of blocks of 2^st never
 * crosses a vector, so the vectors are simply one longer array to the kernels. */
template <class F> static void zc_ntt_dit_batch(F *x, uint32_t lg, size_t count, const F *tw, cudaStream_t st) {
    if (lg == 0) return;
    uint32_t S = lg < ZC_NTT_TILE_LOG ? lg : ZC_NTT_TILE_LOG;
    uint32_t T = 1u << S;
    size_t total = count << lg, tiles = total >> S, half = total / 2;
    unsigned threads = T / 2 < 256 ? T / 2 : 256;
    ZC_LAUNCH((unsigned)tiles, threads, T * sizeof(F), st, zc_k_dit_shared<F>)(x, lg, S, tw);
    for (uint32_t s = S + 1; s <= lg; s++)
        ZC_LAUNCH(zc_blocks(half, 256), 256, 0, st, zc_k_dit_stage<F>)(x, lg, s, tw, half);
}

/* DIT on data already in bit-reversed order: natural-order result, in place. */
template <class F> static void zc_ntt_dit(F *x, uint32_t logn, const F *tw, cudaStream_t st) {
    zc_ntt_dit_batch(x, logn, 1, tw, st);
}

/* X (natural order, Montgomery) -> X(ω_2n·ω^i) for i < n: iNTT, ·n^-1·ω_2n^k, NTT. tmp: n elements. */
template <class F> static void zc_ntt_coset(F *x, F *tmp, const zc_ntt_tables<F> *t, cudaStream_t st) {
    size_t n = (size_t)1 << t->logn;
    unsigned b = (unsigned)((n + 255) / 256);
    ZC_LAUNCH(b, 256, 0, st, zc_k_bitrev<F>)(x, tmp, t->logn, nullptr, nullptr, 0);
    zc_ntt_dit(tmp, t->logn, t->tw_i, st);
    ZC_LAUNCH(b, 256, 0, st, zc_k_bitrev<F>)(tmp, x, t->logn, t->co_lo, t->co_hi, t->split);
    zc_ntt_dit(x, t->logn, t->tw_f, st);
}

/* ---- The blocked NTT (docs/cuda.md, "NTT in blocks"): the domain of n = R·C elements as an R × C
 * row-major matrix (R = 2^logr rows, index C·row + column), the coset step as three passes over
 * blocks that each fit the device, the vectors in pinned host memory between passes:
 *   1. column blocks: each column's inverse NTT of R, then ·ω^-(column·row);
 *   2. row blocks: each row's inverse NTT of C (the iNTT's value at row + R·column), ·n^-1·ω_2n^(row +
 *      R·column), the forward NTT of C, ·ω^(row·column);
 *   3. column blocks: each column's forward NTT of R, which leaves X(ω_2n·ω^i) at i in natural order.
 * (The iNTT's four-step output order, row + R·column, is the forward NTT's input order, so no
 * transposition is needed.) Within a block, vector v's element i is at v·vs + i·s; zc_k_permute
 * gathers it bit-reversed into a contiguous layout (v·2^lg + i), the DIT runs there, and it
 * scatters it back, each optionally times a power ω^((a0 + a1·v)·i + b0 + b1·v) from lo/hi halves. ---- */
struct zc_bexp {
    uint64_t a0, a1, b0, b1;
};

template <class F> ZC_HD F zc_bfactor(const F *lo, const F *hi, uint32_t split, zc_bexp x, size_t v, size_t i) {
    uint64_t e = (x.a0 + x.a1 * v) * i + x.b0 + x.b1 * v;
    return lo[e & ((1ull << split) - 1)] * hi[e >> split];
}

/* gather: out[v·2^lg + rev(i)] = in[v·vs + i·s]·f; scatter: out[v·vs + i·s] = in[v·2^lg + i]·f (f the
 * power of ω of element (v, i) when lo is not NULL, else 1); v < count, i < 2^lg. */
template <class F, bool GATHER>
__global__ void zc_k_permute(const F *in, F *out, uint32_t lg, size_t count, size_t s, size_t vs, const F *lo,
                             const F *hi, uint32_t split, zc_bexp x) {
    size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= count << lg) return;
    size_t v = e >> lg, i = e & (((size_t)1 << lg) - 1), strided = v * vs + i * s;
    size_t flat = GATHER ? (v << lg) + (lg ? (size_t)(__brev((uint32_t)i) >> (32 - lg)) : 0) : e;
    F val = in[GATHER ? strided : flat];
    if (lo) val = val * zc_bfactor(lo, hi, split, x, v, i);
    out[GATHER ? flat : strided] = val;
}

/* The blocked NTT's tables for 2^logn as 2^logr rows (one allocation of
 * zc_plan_tables_bytes(logn, true, logr) bytes): the rows' and columns' twiddles both ways, and
 * ω^e, ω^-e and the coset factors n^-1·ω_2n^e as lo/hi halves. */
template <class F> struct zc_ntt_btables {
    uint32_t logn = 0, logr = 0, split = 0;
    F *mem = nullptr;
    F *twr_f, *twr_i, *twc_f, *twc_i, *w_lo, *w_hi, *wi_lo, *wi_hi, *co_lo, *co_hi;
};

template <class F>
static cudaError_t zc_ntt_btables_make(zc_ntt_btables<F> *t, uint32_t logn, uint32_t logr, cudaStream_t st) {
    t->logn = logn;
    t->logr = logr;
    t->split = (logn + 1) / 2;
    uint32_t logc = logn - logr;
    size_t nr = logr ? (size_t)1 << (logr - 1) : 1, nc = logc ? (size_t)1 << (logc - 1) : 1;
    size_t nlo = (size_t)1 << t->split, nhi = (size_t)1 << (logn - t->split);
    size_t total = 2 * nr + 2 * nc + 3 * (nlo + nhi);
    cudaError_t e = cudaMalloc(&t->mem, total * sizeof(F));
    if (e != cudaSuccess) return e;
    F *h = new F[total];
    F *p = h;
    auto powers = [&](F base, size_t count) { /* base^k, k < count */
                                              F acc = F::one();
                                              for (size_t k = 0; k < count; k++) p[k] = acc, acc = acc * base;
                                              p += count;
    };
    F wr = zc_root<F>(logr), wc = zc_root<F>(logc), w = zc_root<F>(logn), w2 = zc_root<F>(logn + 1);
    F ninv = zc_inv(zc_from_u64<F>((uint64_t)1 << logn));
    powers(wr, nr);
    powers(zc_inv(wr), nr);
    powers(wc, nc);
    powers(zc_inv(wc), nc);
    zc_host_pow_halves(w, F::one(), logn, t->split, p, p + nlo);
    p += nlo + nhi;
    zc_host_pow_halves(zc_inv(w), F::one(), logn, t->split, p, p + nlo);
    p += nlo + nhi;
    zc_host_pow_halves(w2, ninv, logn, t->split, p, p + nlo);
    F *d = t->mem;
    t->twr_f = d, t->twr_i = d + nr, t->twc_f = d + 2 * nr, t->twc_i = d + 2 * nr + nc;
    d += 2 * nr + 2 * nc;
    t->w_lo = d, t->w_hi = d + nlo, t->wi_lo = d + nlo + nhi, t->wi_hi = d + 2 * nlo + nhi;
    t->co_lo = d + 2 * (nlo + nhi), t->co_hi = d + 2 * (nlo + nhi) + nlo;
    e = cudaMemcpyAsync(t->mem, h, total * sizeof(F), cudaMemcpyHostToDevice, st);
    if (e == cudaSuccess) e = cudaStreamSynchronize(st); /* once per domain size: h is freed next */
    delete[] h;
    return e;
}

template <class F> static void zc_ntt_btables_free(zc_ntt_btables<F> *t) {
    cudaFree(t->mem);
    t->mem = nullptr;
    t->logn = 0;
}

/* Pass 1 (inverse) or 3 (forward) on a column block: blk holds the R rows of the w columns c0 …
 * c0+w−1 (pitch w); tmp as many elements. In place in blk. */
template <class F>
static void zc_ntt_bcols(F *blk, F *tmp, size_t w, size_t c0, bool inverse, const zc_ntt_btables<F> *t,
                         cudaStream_t st) {
    uint32_t r = t->logr;
    unsigned nb = zc_blocks(w << r, 256);
    ZC_LAUNCH(nb, 256, 0, st, zc_k_permute<F, true>)
    (blk, tmp, r, w, w, 1, (const F *)nullptr, (const F *)nullptr, 0, zc_bexp{});
    zc_ntt_dit_batch(tmp, r, w, inverse ? t->twr_i : t->twr_f, st);
    ZC_LAUNCH(nb, 256, 0, st, zc_k_permute<F, false>)
    (tmp, blk, r, w, w, 1, inverse ? t->wi_lo : (const F *)nullptr, t->wi_hi, t->split, zc_bexp{c0, 1, 0, 0});
}

/* Pass 2 on a row block: blk holds the h rows r0 … r0+h−1 (C elements each); tmp as many. In place. */
template <class F>
static void zc_ntt_brows(F *blk, F *tmp, size_t h, size_t r0, const zc_ntt_btables<F> *t, cudaStream_t st) {
    uint32_t c = t->logn - t->logr;
    size_t C = (size_t)1 << c, R = (size_t)1 << t->logr;
    unsigned nb = zc_blocks(h << c, 256);
    ZC_LAUNCH(nb, 256, 0, st, zc_k_permute<F, true>)
    (blk, tmp, c, h, 1, C, (const F *)nullptr, (const F *)nullptr, 0, zc_bexp{});
    zc_ntt_dit_batch(tmp, c, h, t->twc_i, st);
    ZC_LAUNCH(nb, 256, 0, st, zc_k_permute<F, true>)
    (tmp, blk, c, h, 1, C, t->co_lo, t->co_hi, t->split, zc_bexp{R, 0, r0, 1});
    zc_ntt_dit_batch(blk, c, h, t->twc_f, st);
    ZC_LAUNCH(nb, 256, 0, st, zc_k_permute<F, false>)
    (blk, blk, c, h, 1, C, t->w_lo, t->w_hi, t->split, zc_bexp{r0, 1, 0, 0});
}
