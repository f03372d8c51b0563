/* Montgomery prime-field arithmetic on 32-bit limbs for the CUDA backend, with the same R as zk/
 * (2^256 for the 254/255-bit fields, 2^384 for BLS12-381 Fq), so zkey bytes load as they are.
 * Every carry chain goes through zc_chain: PTX add.cc/addc/madc under __CUDA_ARCH__, and an
 * emulated carry flag on the host, so the host build runs the very same instruction sequence and
 * CI can test it against zk/ without a GPU (tests/test_cuda_host.cpp). */
#pragma once
#include <stdint.h>

#ifndef __CUDACC__
#define __host__
#define __device__
#define __forceinline__ inline __attribute__((always_inline))
#endif

#include "zk/constants.h"

/* Inlined everywhere on the device; plain inline on the host, where the test and the table setup
 * only need correctness and forced inlining of the unrolled chains makes g++ crawl. */
#ifdef __CUDA_ARCH__
#define ZC_HD __host__ __device__ __forceinline__
#else
#define ZC_HD __host__ __device__ inline
#endif
/* Curve operations are real calls on the device: inlining ~15 field products per call into every
 * kernel makes the code (and nvcc's time) explode, for no gain at this size. */
#ifdef __CUDA_ARCH__
#define ZC_HD_CALL __host__ __device__ __noinline__
#else
#define ZC_HD_CALL __host__ __device__ inline
#endif
#ifdef __CUDA_ARCH__
#define ZC_UNROLL _Pragma("unroll")
#else
#define ZC_UNROLL
#endif

/* One carry chain. On the device the flag is the hardware CC.CF (nvcc keeps it across
 * consecutive asm statements, as sppark relies on); on the host it is a member. For subtraction
 * the flag is a borrow, as in PTX. */
struct zc_chain {
#ifndef __CUDA_ARCH__
    uint32_t cf = 0;
#endif
#ifdef __CUDA_ARCH__
#define ZC_ASM2(op, d, a, b) asm volatile(op " %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b))
#define ZC_ASM3(op, d, a, b, c) asm volatile(op " %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c))
    __device__ __forceinline__ uint32_t add_cc(uint32_t a, uint32_t b) {
        uint32_t d;
        ZC_ASM2("add.cc.u32", d, a, b);
        return d;
    }
    __device__ __forceinline__ uint32_t addc_cc(uint32_t a, uint32_t b) {
        uint32_t d;
        ZC_ASM2("addc.cc.u32", d, a, b);
        return d;
    }
    __device__ __forceinline__ uint32_t addc(uint32_t a, uint32_t b) {
        uint32_t d;
        ZC_ASM2("addc.u32", d, a, b);
        return d;
    }
    __device__ __forceinline__ uint32_t sub_cc(uint32_t a, uint32_t b) {
        uint32_t d;
        ZC_ASM2("sub.cc.u32", d, a, b);
        return d;
    }
    __device__ __forceinline__ uint32_t subc_cc(uint32_t a, uint32_t b) {
        uint32_t d;
        ZC_ASM2("subc.cc.u32", d, a, b);
        return d;
    }
    __device__ __forceinline__ uint32_t subc(uint32_t a, uint32_t b) {
        uint32_t d;
        ZC_ASM2("subc.u32", d, a, b);
        return d;
    }
    __device__ __forceinline__ uint32_t mad_lo_cc(uint32_t a, uint32_t b, uint32_t c) {
        uint32_t d;
        ZC_ASM3("mad.lo.cc.u32", d, a, b, c);
        return d;
    }
    __device__ __forceinline__ uint32_t madc_lo_cc(uint32_t a, uint32_t b, uint32_t c) {
        uint32_t d;
        ZC_ASM3("madc.lo.cc.u32", d, a, b, c);
        return d;
    }
    __device__ __forceinline__ uint32_t mad_hi_cc(uint32_t a, uint32_t b, uint32_t c) {
        uint32_t d;
        ZC_ASM3("mad.hi.cc.u32", d, a, b, c);
        return d;
    }
    __device__ __forceinline__ uint32_t madc_hi_cc(uint32_t a, uint32_t b, uint32_t c) {
        uint32_t d;
        ZC_ASM3("madc.hi.cc.u32", d, a, b, c);
        return d;
    }
#undef ZC_ASM2
#undef ZC_ASM3
#else
    inline uint32_t add_cc(uint32_t a, uint32_t b) {
        uint64_t s = (uint64_t)a + b;
        cf = (uint32_t)(s >> 32);
        return (uint32_t)s;
    }
    inline uint32_t addc_cc(uint32_t a, uint32_t b) {
        uint64_t s = (uint64_t)a + b + cf;
        cf = (uint32_t)(s >> 32);
        return (uint32_t)s;
    }
    inline uint32_t addc(uint32_t a, uint32_t b) { return a + b + cf; }
    inline uint32_t sub_cc(uint32_t a, uint32_t b) {
        cf = a < b;
        return a - b;
    }
    inline uint32_t subc_cc(uint32_t a, uint32_t b) {
        uint64_t s = (uint64_t)b + cf;
        uint32_t d = (uint32_t)((uint64_t)a - s);
        cf = (uint64_t)a < s;
        return d;
    }
    inline uint32_t subc(uint32_t a, uint32_t b) { return a - b - cf; }
    inline uint32_t mad_lo_cc(uint32_t a, uint32_t b, uint32_t c) { return add_cc(a * b, c); }
    inline uint32_t madc_lo_cc(uint32_t a, uint32_t b, uint32_t c) { return addc_cc(a * b, c); }
    inline uint32_t mad_hi_cc(uint32_t a, uint32_t b, uint32_t c) {
        return add_cc((uint32_t)(((uint64_t)a * b) >> 32), c);
    }
    inline uint32_t madc_hi_cc(uint32_t a, uint32_t b, uint32_t c) {
        return addc_cc((uint32_t)(((uint64_t)a * b) >> 32), c);
    }
#endif
};

/* Field parameters: N 32-bit limbs, M0 = -p^-1 mod 2^32, and limb i of p, R mod p, R^2 mod p,
 * taken from zk/constants.h (64-bit limbs, little-endian) so both backends share one source. */
#define ZC_FIELD_PARAMS(NAME, CONST, N64)                                                                              \
    struct NAME {                                                                                                      \
        static constexpr int N = 2 * (N64);                                                                            \
        static constexpr uint32_t M0 = (uint32_t)(CONST##_INV);                                                        \
        ZC_HD static constexpr uint32_t p(int i) {                                                                     \
            constexpr uint64_t v[N64] = CONST##_P;                                                                     \
            return (uint32_t)(v[i >> 1] >> (32 * (i & 1)));                                                            \
        }                                                                                                              \
        ZC_HD static constexpr uint32_t one(int i) {                                                                   \
            constexpr uint64_t v[N64] = CONST##_ONE;                                                                   \
            return (uint32_t)(v[i >> 1] >> (32 * (i & 1)));                                                            \
        }                                                                                                              \
        ZC_HD static constexpr uint32_t r2(int i) {                                                                    \
            constexpr uint64_t v[N64] = CONST##_R2;                                                                    \
            return (uint32_t)(v[i >> 1] >> (32 * (i & 1)));                                                            \
        }                                                                                                              \
    }

template <class P> struct zc_fp {
    static constexpr int N = P::N;
    uint32_t l[N];

    ZC_HD static zc_fp zero() {
        zc_fp r;
        for (int i = 0; i < N; i++) r.l[i] = 0;
        return r;
    }
    ZC_HD static zc_fp one() {
        zc_fp r;
        for (int i = 0; i < N; i++) r.l[i] = P::one(i);
        return r;
    }
    ZC_HD static zc_fp modulus() {
        zc_fp r;
        for (int i = 0; i < N; i++) r.l[i] = P::p(i);
        return r;
    }
    ZC_HD static zc_fp r2() {
        zc_fp r;
        for (int i = 0; i < N; i++) r.l[i] = P::r2(i);
        return r;
    }

    ZC_HD bool is_zero() const {
        uint32_t x = 0;
        ZC_UNROLL
        for (int i = 0; i < N; i++) x |= l[i];
        return x == 0;
    }
    ZC_HD bool operator==(const zc_fp &b) const {
        uint32_t x = 0;
        ZC_UNROLL
        for (int i = 0; i < N; i++) x |= l[i] ^ b.l[i];
        return x == 0;
    }
    ZC_HD bool operator!=(const zc_fp &b) const { return !(*this == b); }

    /* t - p if t >= p, else t; t < 2p (every modulus leaves the top bit spare). */
    ZC_HD static zc_fp reduce_once(const uint32_t *t) {
        zc_fp s, r;
        zc_chain ch;
        s.l[0] = ch.sub_cc(t[0], P::p(0));
        ZC_UNROLL
        for (int i = 1; i < N; i++) s.l[i] = ch.subc_cc(t[i], P::p(i));
        uint32_t borrow = ch.subc(0, 0); /* all ones when t < p */
        ZC_UNROLL
        for (int i = 0; i < N; i++) r.l[i] = (t[i] & borrow) | (s.l[i] & ~borrow);
        return r;
    }

    ZC_HD friend zc_fp operator+(const zc_fp &a, const zc_fp &b) {
        uint32_t t[N];
        zc_chain ch;
        t[0] = ch.add_cc(a.l[0], b.l[0]);
        ZC_UNROLL
        for (int i = 1; i < N; i++) t[i] = ch.addc_cc(a.l[i], b.l[i]);
        return reduce_once(t);
    }

    ZC_HD friend zc_fp operator-(const zc_fp &a, const zc_fp &b) {
        zc_fp t, r;
        zc_chain ch;
        t.l[0] = ch.sub_cc(a.l[0], b.l[0]);
        ZC_UNROLL
        for (int i = 1; i < N; i++) t.l[i] = ch.subc_cc(a.l[i], b.l[i]);
        uint32_t mask = ch.subc(0, 0);
        zc_chain ch2;
        r.l[0] = ch2.add_cc(t.l[0], P::p(0) & mask);
        ZC_UNROLL
        for (int i = 1; i < N; i++) r.l[i] = ch2.addc_cc(t.l[i], P::p(i) & mask);
        return r;
    }

    ZC_HD zc_fp dbl() const { return *this + *this; }

    ZC_HD zc_fp neg() const {
        if (is_zero()) return *this;
        zc_fp r;
        zc_chain ch;
        r.l[0] = ch.sub_cc(P::p(0), l[0]);
        ZC_UNROLL
        for (int i = 1; i < N; i++) r.l[i] = ch.subc_cc(P::p(i), l[i]);
        return r;
    }

    /* Montgomery product a*b/R (CIOS). Each row adds a*b[i] (then m*p) into t as two chains, the
     * low halves into t[0..N) and the high halves into t[1..N], carries running into t[N], t[N+1]. */
    ZC_HD friend zc_fp operator*(const zc_fp &a, const zc_fp &b) {
        uint32_t t[N + 2];
        ZC_UNROLL
        for (int i = 0; i < N + 2; i++) t[i] = 0;
        ZC_UNROLL
        for (int i = 0; i < N; i++) {
            uint32_t bi = b.l[i];
            {
                zc_chain ch;
                t[0] = ch.mad_lo_cc(a.l[0], bi, t[0]);
                ZC_UNROLL
                for (int j = 1; j < N; j++) t[j] = ch.madc_lo_cc(a.l[j], bi, t[j]);
                t[N] = ch.addc_cc(t[N], 0);
                t[N + 1] = ch.addc(t[N + 1], 0);
            }
            {
                zc_chain ch;
                t[1] = ch.mad_hi_cc(a.l[0], bi, t[1]);
                ZC_UNROLL
                for (int j = 1; j < N; j++) t[j + 1] = ch.madc_hi_cc(a.l[j], bi, t[j + 1]);
                t[N + 1] = ch.addc(t[N + 1], 0);
            }
            uint32_t m = t[0] * P::M0;
            {
                zc_chain ch;
                t[0] = ch.mad_lo_cc(m, P::p(0), t[0]);
                ZC_UNROLL
                for (int j = 1; j < N; j++) t[j] = ch.madc_lo_cc(m, P::p(j), t[j]);
                t[N] = ch.addc_cc(t[N], 0);
                t[N + 1] = ch.addc(t[N + 1], 0);
            }
            {
                zc_chain ch;
                t[1] = ch.mad_hi_cc(m, P::p(0), t[1]);
                ZC_UNROLL
                for (int j = 1; j < N; j++) t[j + 1] = ch.madc_hi_cc(m, P::p(j), t[j + 1]);
                t[N + 1] = ch.addc(t[N + 1], 0);
            }
            /* t[0] is now zero: divide by 2^32 */
            ZC_UNROLL
            for (int j = 0; j < N + 1; j++) t[j] = t[j + 1];
            t[N + 1] = 0;
        }
        return reduce_once(t);
    }

    ZC_HD zc_fp sqr() const { return *this * *this; }
    ZC_HD zc_fp to_mont() const { return *this * r2(); }
    ZC_HD zc_fp from_mont() const {
        zc_fp u = zero();
        u.l[0] = 1;
        return *this * u;
    }
    /* a^e for a small exponent (used by the host test and table setup, not in hot loops). */
    ZC_HD zc_fp pow(uint64_t e) const {
        zc_fp acc = one(), b = *this;
        while (e) {
            if (e & 1) acc = acc * b;
            b = b.sqr();
            e >>= 1;
        }
        return acc;
    }
};

ZC_FIELD_PARAMS(zc_bn_fq_p, BN_FQ, 4);
ZC_FIELD_PARAMS(zc_bn_fr_p, BN_FR, 4);
ZC_FIELD_PARAMS(zc_bls_fq_p, BLS_FQ, 6);
ZC_FIELD_PARAMS(zc_bls_fr_p, BLS_FR, 4);

typedef zc_fp<zc_bn_fq_p> zc_bn_fq;
typedef zc_fp<zc_bn_fr_p> zc_bn_fr;
typedef zc_fp<zc_bls_fq_p> zc_bls_fq;
typedef zc_fp<zc_bls_fr_p> zc_bls_fr;

/* Fq2 = Fq[u]/(u^2 + 1) for both curves; formulas as zk/fp2_tmpl.h. */
template <class F> struct zc_fp2 {
    F c0, c1;
    ZC_HD static zc_fp2 zero() { return {F::zero(), F::zero()}; }
    ZC_HD static zc_fp2 one() { return {F::one(), F::zero()}; }
    ZC_HD bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
    ZC_HD bool operator==(const zc_fp2 &b) const { return c0 == b.c0 && c1 == b.c1; }
    ZC_HD bool operator!=(const zc_fp2 &b) const { return !(*this == b); }
    ZC_HD friend zc_fp2 operator+(const zc_fp2 &a, const zc_fp2 &b) { return {a.c0 + b.c0, a.c1 + b.c1}; }
    ZC_HD friend zc_fp2 operator-(const zc_fp2 &a, const zc_fp2 &b) { return {a.c0 - b.c0, a.c1 - b.c1}; }
    ZC_HD zc_fp2 dbl() const { return *this + *this; }
    ZC_HD zc_fp2 neg() const { return {c0.neg(), c1.neg()}; }
    ZC_HD friend zc_fp2 operator*(const zc_fp2 &a, const zc_fp2 &b) {
        F t0 = a.c0 * b.c0, t1 = a.c1 * b.c1;
        F s = (a.c0 + a.c1) * (b.c0 + b.c1);
        return {t0 - t1, (s - t0) - t1};
    }
    ZC_HD zc_fp2 sqr() const {
        F p = c0 * c1;
        return {(c0 + c1) * (c0 - c1), p.dbl()};
    }
};

typedef zc_fp2<zc_bn_fq> zc_bn_fq2;
typedef zc_fp2<zc_bls_fq> zc_bls_fq2;
