/* NTT over Fr on the device (formats.md §5.2-5.3): bit-reversal copy (with the coset/scale
 * factors fused in: factor(i) = lo[i mod 2^split]·hi[i >> split]), then radix-2 DIT, the first
 * ten stages of each 1024-element tile in shared memory in one pass, the rest one global pass per
 * stage. Twiddle tables hold ω^k (or ω^-k) for k < n/2, built on the device from two small tables. */
#pragma once
#include "gpud/cuda/rt.cuh"

#include "ff.cuh"
#include "fr_host.cuh"

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

template <class F> __global__ void zc_k_dit_stage(F *x, uint32_t logn, uint32_t st, const F *tw) {
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= ((size_t)1 << (logn - 1))) return;
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

/* DIT on data already in bit-reversed order: natural-order result, in place. */
template <class F> static void zc_ntt_dit(F *x, uint32_t logn, const F *tw, cudaStream_t st) {
    if (logn == 0) return;
    uint32_t S = logn < ZC_NTT_TILE_LOG ? logn : ZC_NTT_TILE_LOG;
    uint32_t T = 1u << S;
    size_t tiles = ((size_t)1 << logn) >> S;
    unsigned threads = T / 2 < 256 ? T / 2 : 256;
    ZC_LAUNCH((unsigned)tiles, threads, T * sizeof(F), st, zc_k_dit_shared<F>)(x, logn, S, tw);
    size_t half = (size_t)1 << (logn - 1);
    for (uint32_t s = S + 1; s <= logn; s++)
        ZC_LAUNCH((unsigned)((half + 255) / 256), 256, 0, st, zc_k_dit_stage<F>)(x, logn, s, tw);
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
