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
static inline __attribute__((always_inline)) void FPF(mul)(FP_T *r, const FP_T *a, const FP_T *b) {
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

static inline __attribute__((always_inline)) void FPF(sqr)(FP_T *r, const FP_T *a) {
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

#ifdef FP_USE_X86_ASM
/* The product in two steps, for sums of products reduced once (Fq2's product, zk/fp2_tmpl.h):
 * FPF(mulw) the 2N-word product of any a, b < 2^(64N) (not only < p), FPF(redc) t·2^(-64N) mod p
 * for t < p·2^(64N), fully reduced. Taken only while FPF(wide_on)(), the MULX/ADX kernel set. */
static inline bool FPF(wide_on)(void) { return FP_MULX_ON; }
static inline __attribute__((always_inline)) void FPF(mulw)(uint64_t t[2 * FP_N], const uint64_t a[FP_N],
                                                          const uint64_t b[FP_N]) {
#if FP_N == 4
    zk_x86_mul4_wide(t, a, b);
#else
    zk_x86_mul6_wide(t, a, b);
#endif
}
static inline __attribute__((always_inline)) void FPF(redc)(FP_T *r, const uint64_t t[2 * FP_N]) {
#if FP_N == 4
    zk_x86_redc4(r->l, t, FPF(P).l, FPC(FP_CONST, INV));
#else
    zk_x86_redc6(r->l, t, FPF(P).l, FPC(FP_CONST, INV));
#endif
}
#endif

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
 * is not kept secret: their bucket choices already depend on the data): Bernstein and Yang's
 * divsteps ("Fast constant-time gcd computation and modular inversion", 2019), 62 of them at a
 * time. f = p and g = a (the Montgomery form a·R, an integer < p) are kept as FP_L signed limbs of
 * 62 bits (the lower ones in [0, 2^62), the top one signed), with d, e such that f ≡ d·aR and
 * g ≡ e·aR (mod p); f is odd throughout. One round reads only the low 64 bits of f and g: it finds
 * the 2×2 matrix T of the next 62 divsteps (zk_vt_divsteps62), then [f, g] <- T·[f, g] / 2^62 (exact)
 * and [d, e] <- T·[d, e] / 2^62 (mod p: a multiple of p that clears the low 62 bits is added
 * first). At g = 0, f = ±1 and ±d is (aR)^-1; one product by R^3 gives a^-1·R. Against Kaliski's
 * inverse of one bit or zero run per step that this replaced: 1.13 µs instead of 3.1 µs for
 * BN254's Fq, 1.83 instead of 7.3 for BLS12-381's (bench/msm_ntt --only inv --lo 16 --hi 16).
 * inv(0) = 0, as FPF(inv). */
#ifndef FP_VT_DEFINED
#define FP_VT_DEFINED
#define FP_M62 (UINT64_MAX >> 2)
/* The matrix t = {u, v, q, r} of 62 divsteps on the low bits of f and g (f odd), scaled by 2^62:
 * f·2^62 = u·f0 + v·g0 and g·2^62 = q·f0 + r·g0 when they end; returns eta (minus delta) after
 * them. A run of zeros of g is one shift; while no swap can come (eta >= 0) up to 6 bits of g are
 * cleared at once by g += w·f, w = -g/f mod 2^k (k <= eta + 1: the steps that add f). */
static inline int64_t zk_vt_divsteps62(int64_t eta, uint64_t f, uint64_t g, int64_t t[4]) {
    uint64_t u = 1, v = 0, q = 0, r = 1;
    int i = 62;
    for (;;) {
        int z = __builtin_ctzll(g | (UINT64_MAX << i));
        g >>= z, u <<= z, v <<= z, eta -= z, i -= z;
        if (i == 0) break;
        if (eta < 0) { /* delta > 0 and g odd: (f, g) <- (g, -f) */
            uint64_t x;
            eta = -eta;
            x = f, f = g, g = -x;
            x = u, u = q, q = -x;
            x = v, v = r, r = -x;
        }
        int k = eta + 1 < i ? (int)eta + 1 : i;
        if (k > 6) k = 6;
        /* f^-1 mod 2^6 = f·(2 - f^2) (f^2 = 1 mod 8 for odd f) */
        uint64_t w = (g * f * (f * f - 2)) & (UINT64_MAX >> (64 - k));
        g += f * w, q += u * w, r += v * w;
    }
    t[0] = (int64_t)u, t[1] = (int64_t)v, t[2] = (int64_t)q, t[3] = (int64_t)r;
    return eta;
}
#endif

#define FP_L (FP_N + 1) /* 62-bit limbs: 64·FP_N bits, the sign and the growth of d, e (< 20p) */
/* The FP_L 62-bit limbs of the FP_N-word integer w (< 2^(64 FP_N)). */
static inline void FPF(vt_to62)(int64_t *s, const uint64_t *w) {
    for (int i = 0; i < FP_L; i++) {
        int b = 62 * i, k = b / 64, o = b % 64;
        uint64_t x = k < FP_N ? w[k] >> o : 0;
        if (o > 2 && k + 1 < FP_N) x |= w[k + 1] << (64 - o);
        s[i] = (int64_t)(x & FP_M62);
    }
}
/* [x, y] <- T·[x, y] / 2^62 where the low 62 bits of both are zero (f, g); with p, also for d, e
 * where they are not: md·p, me·p (|md|, |me| <= 2^61) are added first to clear them. */
static inline void FPF(vt_update)(int64_t *x, int64_t *y, const int64_t t[4], const int64_t *p, uint64_t pinv62) {
    __int128 cx = (__int128)t[0] * x[0] + (__int128)t[1] * y[0];
    __int128 cy = (__int128)t[2] * x[0] + (__int128)t[3] * y[0];
    int64_t mx = 0, my = 0;
    if (p) { /* m = -c·p^-1 mod 2^62, centred */
        mx = (int64_t)((0 - (uint64_t)cx * pinv62) << 2) >> 2;
        my = (int64_t)((0 - (uint64_t)cy * pinv62) << 2) >> 2;
        cx += (__int128)mx * p[0];
        cy += (__int128)my * p[0];
    }
    cx >>= 62, cy >>= 62;
    for (int i = 1; i < FP_L; i++) {
        cx += (__int128)t[0] * x[i] + (__int128)t[1] * y[i];
        cy += (__int128)t[2] * x[i] + (__int128)t[3] * y[i];
        if (p) cx += (__int128)mx * p[i], cy += (__int128)my * p[i];
        x[i - 1] = (int64_t)((uint64_t)cx & FP_M62), cx >>= 62;
        y[i - 1] = (int64_t)((uint64_t)cy & FP_M62), cy >>= 62;
    }
    x[FP_L - 1] = (int64_t)cx, y[FP_L - 1] = (int64_t)cy;
}
/* x += s·p (s = ±1), limbs renormalized. */
static inline void FPF(vt_addp)(int64_t *x, const int64_t *p, int s) {
    int64_t c = 0;
    for (int i = 0; i < FP_L; i++) {
        c += x[i] + s * p[i];
        if (i + 1 < FP_L) x[i] = c & (int64_t)FP_M62, c >>= 62;
        else x[i] = c;
    }
}
static inline void FPF(inv_vartime)(FP_T *r, const FP_T *a) {
    if (FPF(is_zero)(a)) {
        FPF(zero)(r);
        return;
    }
    int64_t f[FP_L], g[FP_L], d[FP_L] = {0}, e[FP_L] = {1}, p[FP_L], t[4];
    FPF(vt_to62)(p, FPF(P).l);
    FPF(vt_to62)(g, a->l);
    memcpy(f, p, sizeof(f));
    uint64_t pinv62 = (0 - FPC(FP_CONST, INV)) & FP_M62; /* p^-1 mod 2^62 */
    int64_t eta = -1;
    for (;;) {
        eta = zk_vt_divsteps62(eta, (uint64_t)f[0] | (uint64_t)f[1] << 62, (uint64_t)g[0] | (uint64_t)g[1] << 62, t);
        FPF(vt_update)(f, g, t, NULL, 0);
        FPF(vt_update)(d, e, t, p, pinv62);
        int64_t any = 0;
        for (int i = 0; i < FP_L; i++) any |= g[i];
        if (!any) break;
    }
    if (f[FP_L - 1] < 0) { /* f = -1: d = -(aR)^-1 */
        int64_t c = 0;
        for (int i = 0; i < FP_L; i++) {
            c -= d[i];
            if (i + 1 < FP_L) d[i] = c & (int64_t)FP_M62, c >>= 62;
            else d[i] = c;
        }
    }
    while (d[FP_L - 1] < 0) FPF(vt_addp)(d, p, 1); /* into [0, p): |d| < 20p */
    for (;;) {
        int64_t s[FP_L];
        memcpy(s, d, sizeof(s));
        FPF(vt_addp)(s, p, -1);
        if (s[FP_L - 1] < 0) break;
        memcpy(d, s, sizeof(s));
    }
    FP_T y;
    for (int k = 0; k < FP_N; k++) { /* back to 64-bit words */
        uint64_t x = 0;
        for (int i = 0; i < FP_L; i++) {
            int b = 62 * i - 64 * k;
            if (b <= -62 || b >= 64) continue;
            x |= b >= 0 ? (uint64_t)d[i] << b : (uint64_t)d[i] >> -b;
        }
        y.l[k] = x;
    }
    FPF(mul)(r, &y, &FPF(R3)); /* (aR)^-1·R^3·R^-1 = a^-1·R */
}
#undef FP_L

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
