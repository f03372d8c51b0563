/* Montgomery prime-field arithmetic, instantiated once per field by zk/field.h.
 * Before including: FP (prefix, e.g. bn_fq), FP_N (64-bit limbs), FP_CONST (constant-name
 * prefix in zk/constants.h, e.g. BN_FQ). Every modulus has a spare top bit (p < 2^(64N-1)),
 * which the add/mul paths rely on. Values are kept fully reduced (< p). */

#if defined(ZK_X86_KERNELS) && defined(__x86_64__) && (FP_N == 4 || FP_N == 6)
#include "fp_x86_64.h"
#include "kernels.h"
#define FP_USE_X86_ASM 1
/* Whether FPF(mul)/FPF(sqr) take the MULX/ADX kernel: chosen at start-up (zk/kernels.h), or fixed
 * for a whole translation unit compiled as one kernel set's copy (ZK_KERNELS_FIXED = 0 or 1). */
#ifdef ZK_KERNELS_FIXED
#define FP_MULX_ON (ZK_KERNELS_FIXED)
#define FP_MUL_FALLBACK FPF(mul_portable) /* a fixed portable copy inlines the portable product */
#else
#define FP_MUL_FALLBACK FPF(mul_cold)
#define FP_MULX_ON __builtin_expect(zk_kernels_mulx, 1)
#endif
#endif

#define FP_CAT2(a, b) a##_##b
#define FP_CAT(a, b) FP_CAT2(a, b)
#define FPF(name) FP_CAT(FP, name)
#define FPC2(a, b) a##_##b
#define FPC(a, b) FPC2(a, b)
#define FP_T FP_CAT(FP, t)

typedef struct {
    uint64_t l[FP_N];
} FP_T;

static const FP_T FPF(P) = {FPC(FP_CONST, P)};
static const FP_T FPF(ONE) = {FPC(FP_CONST, ONE)};
static const FP_T FPF(R2) = {FPC(FP_CONST, R2)};
static const FP_T FPF(R3) = {FPC(FP_CONST, R3)};
static const FP_T FPF(PM2) = {FPC(FP_CONST, PM2)};

static inline void FPF(zero)(FP_T *r) { memset(r, 0, sizeof(*r)); }
static inline void FPF(one)(FP_T *r) { *r = FPF(ONE); }

static inline bool FPF(is_zero)(const FP_T *a) {
    uint64_t x = 0;
    for (int i = 0; i < FP_N; i++) x |= a->l[i];
    return x == 0;
}

static inline bool FPF(eq)(const FP_T *a, const FP_T *b) {
    uint64_t x = 0;
    for (int i = 0; i < FP_N; i++) x |= a->l[i] ^ b->l[i];
    return x == 0;
}

/* a >= p, on raw limbs (used for range checks of untrusted input). */
static inline bool FPF(geq_p)(const uint64_t *a) {
    for (int i = FP_N - 1; i >= 0; i--) {
        if (a[i] > FPF(P).l[i]) return true;
        if (a[i] < FPF(P).l[i]) return false;
    }
    return true;
}

/* r = t - p if t >= p (t < 2p), else t. */
static inline void FPF(reduce_once)(FP_T *r, const uint64_t *t) {
    uint64_t s[FP_N];
    unsigned __int128 borrow = 0;
    for (int i = 0; i < FP_N; i++) {
        unsigned __int128 d = (unsigned __int128)t[i] - FPF(P).l[i] - (uint64_t)borrow;
        s[i] = (uint64_t)d;
        borrow = (d >> 64) & 1;
    }
    /* borrow set: t < p, keep t */
    uint64_t mask = (uint64_t)0 - (uint64_t)borrow;
    for (int i = 0; i < FP_N; i++) r->l[i] = (t[i] & mask) | (s[i] & ~mask);
}

static inline void FPF(add_portable)(FP_T *r, const FP_T *a, const FP_T *b) {
    uint64_t t[FP_N];
    unsigned __int128 c = 0;
    for (int i = 0; i < FP_N; i++) {
        c += (unsigned __int128)a->l[i] + b->l[i];
        t[i] = (uint64_t)c;
        c >>= 64;
    }
    FPF(reduce_once)(r, t);
}

static inline void FPF(sub_portable)(FP_T *r, const FP_T *a, const FP_T *b) {
    uint64_t t[FP_N];
    unsigned __int128 borrow = 0;
    for (int i = 0; i < FP_N; i++) {
        unsigned __int128 d = (unsigned __int128)a->l[i] - b->l[i] - (uint64_t)borrow;
        t[i] = (uint64_t)d;
        borrow = (d >> 64) & 1;
    }
    uint64_t mask = (uint64_t)0 - (uint64_t)borrow;
    unsigned __int128 c = 0;
    for (int i = 0; i < FP_N; i++) {
        c += (unsigned __int128)t[i] + (FPF(P).l[i] & mask);
        r->l[i] = (uint64_t)c;
        c >>= 64;
    }
}

/* r = a + b, r = a - b (mod p); on x86-64 the ADC/SBB + CMOV kernels of zk/fp_x86_64.h (baseline
 * x86-64 instructions: every CPU runs them). */
static inline void FPF(add)(FP_T *r, const FP_T *a, const FP_T *b) {
#if defined(FP_USE_X86_ASM) && FP_N == 4
    zk_x86_mod_add4(r->l, a->l, b->l, FPF(P).l);
#elif defined(FP_USE_X86_ASM) && FP_N == 6
    zk_x86_mod_add6(r->l, a->l, b->l, FPF(P).l);
#else
    FPF(add_portable)(r, a, b);
#endif
}

static inline void FPF(sub)(FP_T *r, const FP_T *a, const FP_T *b) {
#if defined(FP_USE_X86_ASM) && FP_N == 4
    zk_x86_mod_sub4(r->l, a->l, b->l, FPF(P).l);
#elif defined(FP_USE_X86_ASM) && FP_N == 6
    zk_x86_mod_sub6(r->l, a->l, b->l, FPF(P).l);
#else
    FPF(sub_portable)(r, a, b);
#endif
}

static inline void FPF(dbl)(FP_T *r, const FP_T *a) { FPF(add)(r, a, a); }

static inline void FPF(neg)(FP_T *r, const FP_T *a) {
    if (FPF(is_zero)(a)) {
        FPF(zero)(r);
        return;
    }
    unsigned __int128 borrow = 0;
    for (int i = 0; i < FP_N; i++) {
        unsigned __int128 d = (unsigned __int128)FPF(P).l[i] - a->l[i] - (uint64_t)borrow;
        r->l[i] = (uint64_t)d;
        borrow = (d >> 64) & 1;
    }
}

/* Montgomery product a*b*2^(-64N) mod p (CIOS), portable C; the reference for the asm path. */
static inline void FPF(mul_portable)(FP_T *r, const FP_T *a, const FP_T *b) {
    uint64_t t[FP_N + 1];
    for (int i = 0; i < FP_N + 1; i++) t[i] = 0;
    for (int i = 0; i < FP_N; i++) {
        unsigned __int128 c = 0;
        uint64_t bi = b->l[i];
        for (int j = 0; j < FP_N; j++) {
            c += (unsigned __int128)a->l[j] * bi + t[j];
            t[j] = (uint64_t)c;
            c >>= 64;
        }
        uint64_t tn = t[FP_N] + (uint64_t)c; /* spare bit: no overflow */
        uint64_t m = t[0] * FPC(FP_CONST, INV);
        c = (unsigned __int128)m * FPF(P).l[0] + t[0];
        c >>= 64;
        for (int j = 1; j < FP_N; j++) {
            c += (unsigned __int128)m * FPF(P).l[j] + t[j];
            t[j - 1] = (uint64_t)c;
            c >>= 64;
        }
        c += tn;
        t[FP_N - 1] = (uint64_t)c;
        t[FP_N] = (uint64_t)(c >> 64);
    }
    FPF(reduce_once)(r, t);
}

#ifdef FP_USE_X86_ASM
/* The portable product out of line, for the call sites of FPF(mul)/FPF(sqr) when the MULX/ADX kernel
 * is not selected: they stay small, and the kernel's path has no second copy of the CIOS beside it. */
__attribute__((noinline, cold, unused)) static void FPF(mul_cold)(FP_T *r, const FP_T *a, const FP_T *b) {
    FPF(mul_portable)(r, a, b);
}
#endif

/* Montgomery product; the MULX/ADX kernel of zk/fp_x86_64.h on x86-64 CPUs that have it (zk/kernels.h). */
static inline void FPF(mul)(FP_T *r, const FP_T *a, const FP_T *b) {
#if defined(FP_USE_X86_ASM) && FP_N == 4
    if (FP_MULX_ON) {
        zk_x86_mont_mul4(r->l, a->l, b->l, FPF(P).l, FPC(FP_CONST, INV));
        return;
    }
    FP_MUL_FALLBACK(r, a, b);
#elif defined(FP_USE_X86_ASM) && FP_N == 6
    if (FP_MULX_ON) {
        zk_x86_mont_mul6(r->l, a->l, b->l, FPF(P).l, FPC(FP_CONST, INV));
        return;
    }
    FP_MUL_FALLBACK(r, a, b);
#else
    FPF(mul_portable)(r, a, b);
#endif
}

static inline void FPF(sqr)(FP_T *r, const FP_T *a) {
#if defined(FP_USE_X86_ASM) && FP_N == 4
    if (FP_MULX_ON) {
        zk_x86_mont_sqr4(r->l, a->l, FPF(P).l, FPC(FP_CONST, INV));
        return;
    }
    FP_MUL_FALLBACK(r, a, a);
#else
    FPF(mul)(r, a, a);
#endif
}

static inline void FPF(to_mont)(FP_T *r, const FP_T *a) { FPF(mul)(r, a, &FPF(R2)); }

static inline void FPF(from_mont)(FP_T *r, const FP_T *a) {
    FP_T one_std;
    FPF(zero)(&one_std);
    one_std.l[0] = 1;
    FPF(mul)(r, a, &one_std);
}

/* r = a^e, e given as little-endian limbs (nlimbs of them); a in Montgomery form. */
static inline void FPF(pow)(FP_T *r, const FP_T *a, const uint64_t *e, int nlimbs) {
    FP_T acc = FPF(ONE), base = *a;
    for (int i = nlimbs * 64 - 1; i >= 0; i--) {
        FPF(sqr)(&acc, &acc);
        if ((e[i / 64] >> (i % 64)) & 1) FPF(mul)(&acc, &acc, &base);
    }
    *r = acc;
}

/* Inverse by Fermat, a^(p-2) with 4-bit windows (a^0..a^15 first: 14 products, then 4 squarings
 * and at most one product per nibble, against one product per set bit); inv(0) = 0. */
static inline void FPF(inv)(FP_T *r, const FP_T *a) {
    FP_T t[16], acc = FPF(ONE);
    t[0] = FPF(ONE);
    t[1] = *a;
    for (int i = 2; i < 16; i++) FPF(mul)(&t[i], &t[i - 1], a);
    bool started = false;
    for (int i = FP_N * 16 - 1; i >= 0; i--) {
        unsigned nib = (unsigned)(FPF(PM2).l[i / 16] >> (4 * (i % 16))) & 15;
        if (started)
            for (int k = 0; k < 4; k++) FPF(sqr)(&acc, &acc);
        if (nib) {
            if (started)
                FPF(mul)(&acc, &acc, &t[nib]);
            else
                acc = t[nib], started = true;
        }
    }
    *r = acc;
}

/* Variable-time inversion for FPF(batch_inv) (the MSM's buckets and the keys' tables, whose timing
 * is not kept secret: their bucket choices already depend on the data): Kaliski's almost-Montgomery
 * inverse with every run of trailing zeros shifted out at once, a few hundred word operations
 * against FPF(inv)'s ~320 products. Keeps u·s + v·q = p (u, v odd after each step, so q, s <= p
 * and q + s <= p: no reduction inside the loop); at v = 0, p − q (q < 2p, reduced once) is
 * a^-1·2^k, 64N−1 <= k <= 2(64N). Multiplying by R^3 (one product) gives a^-1·2^k·R^2, and k
 * Montgomery halvings (a 64-bit round at a time, then one of k mod 64 bits) leave the Montgomery
 * form a^-1·R^2 of the inverse. inv(0) = 0, as FPF(inv). */
static inline int FPF(vt_cmp)(const uint64_t *a, const uint64_t *b) {
    for (int i = FP_N - 1; i >= 0; i--)
        if (a[i] != b[i]) return a[i] > b[i] ? 1 : -1;
    return 0;
}
/* a -= b (a >= b), then the trailing zeros of a (not zero) shifted out; returns their count. */
static inline unsigned FPF(vt_sub_shr)(uint64_t *a, const uint64_t *b) {
    unsigned __int128 bw = 0;
    for (int i = 0; i < FP_N; i++) {
        unsigned __int128 d = (unsigned __int128)a[i] - b[i] - (uint64_t)bw;
        a[i] = (uint64_t)d;
        bw = (d >> 64) & 1;
    }
    int w = 0;
    while (a[w] == 0) w++;
    unsigned z = (unsigned)__builtin_ctzll(a[w]), sh = z;
    if (w) {
        for (int i = 0; i < FP_N; i++) a[i] = i + w < FP_N ? a[i + w] : 0;
    }
    if (sh)
        for (int i = 0; i < FP_N; i++) a[i] = (a[i] >> sh) | (i + 1 < FP_N ? a[i + 1] << (64 - sh) : 0);
    return z + 64u * (unsigned)w;
}
/* a += b, then b <<= z (neither overflows: see FPF(inv_vartime)). */
static inline void FPF(vt_add_shl)(uint64_t *a, uint64_t *b, unsigned z) {
    unsigned __int128 c = 0;
    for (int i = 0; i < FP_N; i++) {
        c += (unsigned __int128)a[i] + b[i];
        a[i] = (uint64_t)c;
        c >>= 64;
    }
    unsigned w = z / 64, sh = z % 64;
    if (w)
        for (int i = FP_N - 1; i >= 0; i--) b[i] = i >= (int)w ? b[i - (int)w] : 0;
    if (sh)
        for (int i = FP_N - 1; i >= 0; i--) b[i] = (b[i] << sh) | (i > 0 ? b[i - 1] >> (64 - sh) : 0);
}
/* w <- (w + m·p) / 2^j with m = (w0·inv) mod 2^j (1 <= j <= 64): w·2^-j mod p, < 2p for w < 2p. */
static inline void FPF(vt_halve)(uint64_t *w, unsigned j) {
    uint64_t m = w[0] * FPC(FP_CONST, INV);
    if (j < 64) m &= ((uint64_t)1 << j) - 1;
    uint64_t t[FP_N + 1];
    unsigned __int128 c = 0;
    for (int i = 0; i < FP_N; i++) {
        c += (unsigned __int128)m * FPF(P).l[i] + w[i];
        t[i] = (uint64_t)c;
        c >>= 64;
    }
    t[FP_N] = (uint64_t)c;
    for (int i = 0; i < FP_N; i++) w[i] = j == 64 ? t[i + 1] : (t[i] >> j) | (t[i + 1] << (64 - j));
}
static inline void FPF(inv_vartime)(FP_T *r, const FP_T *a) {
    if (FPF(is_zero)(a)) {
        FPF(zero)(r);
        return;
    }
    uint64_t u[FP_N], v[FP_N], q[FP_N] = {0}, s[FP_N] = {1};
    memcpy(u, FPF(P).l, sizeof(u));
    memcpy(v, a->l, sizeof(v));
    static const uint64_t zero[FP_N] = {0};
    unsigned k = FPF(vt_sub_shr)(v, zero); /* q = 0: nothing to shift */
    for (;;) {
        int c = FPF(vt_cmp)(u, v);
        if (c > 0) {
            unsigned z = FPF(vt_sub_shr)(u, v);
            FPF(vt_add_shl)(q, s, z);
            k += z;
        } else if (c < 0) {
            unsigned z = FPF(vt_sub_shr)(v, u);
            FPF(vt_add_shl)(s, q, z);
            k += z;
        } else { /* u = v = 1: v − u = 0 ends it */
            FPF(vt_add_shl)(s, q, 1);
            k += 1;
            break;
        }
    }
    FP_T t, w;
    FPF(reduce_once)(&t, q); /* q < p now, and not zero (a is invertible) */
    unsigned __int128 bw = 0;
    for (int i = 0; i < FP_N; i++) { /* t = p − q: a^-1·2^k */
        unsigned __int128 d = (unsigned __int128)FPF(P).l[i] - t.l[i] - (uint64_t)bw;
        t.l[i] = (uint64_t)d;
        bw = (d >> 64) & 1;
    }
    FPF(mul)(&w, &t, &FPF(R3));
    for (; k >= 64; k -= 64) FPF(vt_halve)(w.l, 64);
    if (k) FPF(vt_halve)(w.l, k);
    FPF(reduce_once)(r, w.l);
}

/* Loads n8 = 8*FP_N bytes, little-endian; the caller range-checks where the input is untrusted. */
static inline void FPF(load_le)(FP_T *r, const uint8_t *p) { memcpy(r->l, p, sizeof(r->l)); }
static inline void FPF(store_le)(uint8_t *p, const FP_T *a) { memcpy(p, a->l, sizeof(a->l)); }

static inline void FPF(set_u64)(FP_T *r, uint64_t v) {
    FP_T s;
    FPF(zero)(&s);
    s.l[0] = v;
    FPF(to_mont)(r, &s);
}

/* Batch inversion (Montgomery's trick): a[i] <- a[i]^-1 for all non-zero a[i]; zeros stay zero.
 * tmp must hold n elements. Four prefix products run side by side (element i in chain i % 4), so
 * that the products of one step do not wait for each other (one chain is a serial run of
 * products, each waiting on the one before); their four totals are inverted together by one more
 * small trick and one inversion. */
#define FP_BATCH_CHAINS 4
static inline void FPF(batch_inv)(FP_T *a, FP_T *tmp, size_t n) {
    enum { C = FP_BATCH_CHAINS };
    FP_T acc[C], pre[C], inv;
    for (int k = 0; k < C; k++) acc[k] = FPF(ONE);
    for (size_t i0 = 0; i0 < n; i0 += C)
        for (int k = 0; k < C && i0 + (size_t)k < n; k++) {
            size_t i = i0 + (size_t)k;
            tmp[i] = acc[k];
            if (!FPF(is_zero)(&a[i])) FPF(mul)(&acc[k], &acc[k], &a[i]);
        }
    pre[0] = acc[0];
    for (int k = 1; k < C; k++) FPF(mul)(&pre[k], &pre[k - 1], &acc[k]);
    FPF(inv_vartime)(&inv, &pre[C - 1]); /* every acc[k] is a product of non-zero elements (or one) */
    for (int k = C - 1; k > 0; k--) {
        FP_T t;
        FPF(mul)(&t, &inv, &pre[k - 1]);
        FPF(mul)(&inv, &inv, &acc[k]);
        acc[k] = t;
    }
    acc[0] = inv; /* acc[k]: the inverse of chain k's product */
    for (size_t i0 = (n + C - 1) / C * C; i0 > 0; i0 -= C)
        for (int k = C - 1; k >= 0; k--) {
            size_t i = i0 - C + (size_t)k;
            if (i >= n || FPF(is_zero)(&a[i])) continue;
            FP_T t;
            FPF(mul)(&t, &acc[k], &tmp[i]);
            FPF(mul)(&acc[k], &acc[k], &a[i]);
            a[i] = t;
        }
}
#undef FP_BATCH_CHAINS

#undef FP_USE_X86_ASM
#undef FP_MULX_ON
#undef FP_MUL_FALLBACK
#undef FP_T
#undef FPF
#undef FPC
#undef FPC2
#undef FP_CAT
#undef FP_CAT2
