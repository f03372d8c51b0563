/* Host-side Fr helpers of the NTT set-up (roots of unity, inverses, power tables), kept free of
 * CUDA so that tests/test_cuda_host.cpp checks them against zk/; also the per-thread bodies of the
 * NTT kernels, which the host test runs in the kernels' launch order. */
#pragma once
#include "ff.cuh"

#define ZC_NTT_TILE_LOG 10 /* the first stages run on 2^10-element tiles in shared memory */

/* Host-side exponentiation by a multi-word exponent (table setup only). */
template <class F> static F zc_pow_words(F b, const uint32_t *e, int nwords) {
    F acc = F::one();
    for (int i = nwords * 32 - 1; i >= 0; i--) {
        acc = acc.sqr();
        if ((e[i / 32] >> (i % 32)) & 1) acc = acc * b;
    }
    return acc;
}
/* e = p - k, with the borrow carried (BLS12-381 r ends in the word 0x00000001) */
template <class F> static void zc_p_minus(uint32_t *e, uint32_t k) {
    uint64_t borrow = k;
    for (int i = 0; i < F::N; i++) {
        uint64_t v = (uint64_t)F::modulus().l[i] - borrow;
        e[i] = (uint32_t)v;
        borrow = (v >> 63) & 1;
    }
}
template <class F> static F zc_inv(F a) {
    uint32_t e[F::N];
    zc_p_minus<F>(e, 2);
    return zc_pow_words(a, e, F::N);
}
template <class F> static F zc_from_u64(uint64_t v) {
    F s = F::zero();
    s.l[0] = (uint32_t)v;
    s.l[1] = (uint32_t)(v >> 32);
    return s.to_mont();
}
/* w[k] = 5^((r-1)/2^k), the snarkjs roots (formats.md §5.2). */
template <class F> static F zc_root(uint32_t k) {
    uint32_t e[F::N];
    zc_p_minus<F>(e, 1);
    for (uint32_t s = 0; s < k; s++) { /* e >>= 1 */
        for (int i = 0; i < F::N; i++) e[i] = (e[i] >> 1) | (i + 1 < F::N ? e[i + 1] << 31 : 0);
    }
    return zc_pow_words(zc_from_u64<F>(5), e, F::N);
}

template <class F> static void zc_host_pow_halves(F base, F first, uint32_t logn, uint32_t split, F *lo, F *hi) {
    /* lo[j] = first·base^j (j < 2^split), hi[k] = base^(k·2^split) (k < 2^(logn-split)) */
    F acc = first;
    for (uint32_t j = 0; j < (1u << split); j++) {
        lo[j] = acc;
        acc = acc * base;
    }
    F step = base;
    for (uint32_t i = 0; i < split; i++) step = step.sqr();
    acc = F::one();
    uint32_t nh = logn > split ? 1u << (logn - split) : 1;
    for (uint32_t k = 0; k < nh; k++) {
        hi[k] = acc;
        acc = acc * step;
    }
}

/* out[j] = in[i]·factor(i), j = bit-reverse of i (the caller computes it: __brev on the device). */
template <class F>
ZC_HD void zc_b_bitrev(const F *in, F *out, uint32_t logn, const F *lo, const F *hi, uint32_t split, size_t i,
                       size_t j) {
    (void)logn;
    F v = in[i];
    if (lo) v = v * (lo[i & ((1u << split) - 1)] * hi[i >> split]);
    out[j] = v;
}

/* Butterfly t of DIT stage st (blocks of 2^st): (x[i0], x[i1]) <- (u + w·v, u − w·v) with
 * w = ω_(2^st)^j = tw[j·2^(logn−st)]. The same on a shared-memory tile (local t) as on the whole
 * array: tiles start at multiples of 2^st, so j does not change. */
template <class F> ZC_HD void zc_b_butterfly(F *x, uint32_t logn, uint32_t st, const F *tw, size_t t) {
    size_t half = (size_t)1 << (st - 1);
    size_t j = t & (half - 1);
    size_t i0 = ((t >> (st - 1)) << st) | j, i1 = i0 + half;
    F w = tw[j << (logn - st)];
    F u = x[i0], v = x[i1] * w;
    x[i0] = u + v;
    x[i1] = u - v;
}

/* P[i] = standard(A[i]·B[i] − C[i]), over A. */
template <class F> ZC_HD void zc_b_abc(F *a, const F *b, const F *c, size_t i) {
    a[i] = (a[i] * b[i] - c[i]).from_mont();
}
