/* Native versions of the hot part of circom's wasm field runtime (the Fr_* functions circom 2
 * writes into every witness generator), compiled into the generator object after wasm2c's
 * circuit.c (`#include "circuit.c"` then this file; witgen/module.h, WITGEN_GLUE_SOURCE).
 *
 * build.c uses this file only when every wasm function it stands for, and every wasm function
 * those call, is byte for byte the wasm2c text it was written against (witgen/build.c, fr_prints);
 * it then renames each replaced w2c_Fr_X to w2c_Fr_X_wasm, so the
 * wasm's code calls these instead, and defines WITGEN_NATIVE_FR (1 bn128, 2 bls12381: the only
 * difference in the fingerprinted code between the two is the prime's Montgomery constant).
 *
 * The invariant: each function here leaves memory exactly as the wasm function it replaces does
 * (the result, and the inputs the runtime converts in place, such as Fr_toNormal on an argument),
 * and returns the same value, for every input (arguments the same value or disjoint ones, as circom's
 * code passes them: its values never partly overlap), except for bytes of the runtime's own scratch area
 * that the wasm function writes before it reads them (1504..1568 and 992..1024 of
 * Fr_F1m_fromMontgomery's reduction): those it does not write. test_witgen compares every function
 * here with the wasm's own (WITGEN_FR_* in module.h) on random and edge values.
 *
 * circom's value layout (40 bytes at address a): a+0 short value (i32), a+4 type word (bit 31
 * long, bit 30 Montgomery), a+8 the long value (4 x 64-bit LE). The runtime's constants, at the
 * addresses the fingerprinted code reads them: q at 608, R^2 mod q at 672, zero at 768, (q-1)/2 at
 * 1920 (R = 2^256). */

#if defined(__x86_64__)
#include <x86intrin.h>
#else /* the same carry chains, portably */
static inline unsigned char _addcarry_u64(unsigned char c, u64 a, u64 b, unsigned long long *r) {
    unsigned __int128 s = (unsigned __int128)a + b + c;
    *r = (u64)s;
    return (unsigned char)(s >> 64);
}
static inline unsigned char _subborrow_u64(unsigned char c, u64 a, u64 b, unsigned long long *r) {
    unsigned __int128 d = (unsigned __int128)a - b - c;
    *r = (u64)d;
    return (unsigned char)(d >> 64) & 1;
}
#endif

#if WITGEN_NATIVE_FR == 1 /* bn128's r */
#define FRN_Q0 0x43e1f593f0000001ull
#define FRN_Q1 0x2833e84879b97091ull
#define FRN_Q2 0xb85045b68181585dull
#define FRN_Q3 0x30644e72e131a029ull
#define FRN_NP 0xc2e1f593efffffffull /* -q^-1 mod 2^64 */
#elif WITGEN_NATIVE_FR == 2          /* bls12-381's r */
#define FRN_Q0 0xffffffff00000001ull
#define FRN_Q1 0x53bda402fffe5bfeull
#define FRN_Q2 0x3339d80809a1d805ull
#define FRN_Q3 0x73eda753299d7d48ull
#define FRN_NP 0xfffffffeffffffffull
#else
#error "WITGEN_NATIVE_FR must be 1 (bn128) or 2 (bls12381)"
#endif

#define FRN_A_Q 608u
#define FRN_A_R2 672u
#define FRN_A_ZERO 768u
#define FRN_A_HALF 1920u
#define FRN_LONG 0x80u /* in the type word's top byte, a+7 */
#define FRN_MONT 0x40u

#define FRN_UNROLL _Pragma("GCC unroll 4")
typedef unsigned __int128 frn_u128;
static const u64 frn_q[4] = {FRN_Q0, FRN_Q1, FRN_Q2, FRN_Q3};

#define FRN_M(in) ((in)->w2c_memory.data)
static inline u64 frn_ld64(const u8 *m, u64 a) {
    u64 v;
    memcpy(&v, m + a, 8);
    return v;
}
static inline void frn_st64(u8 *m, u64 a, u64 v) { memcpy(m + a, &v, 8); }
/* limb by limb, as the runtime's own 8-byte accesses (no wide loads of narrower stores) */
static inline void frn_ld(const u8 *m, u32 a, u64 v[4]) {
    v[0] = frn_ld64(m, a), v[1] = frn_ld64(m, (u64)a + 8), v[2] = frn_ld64(m, (u64)a + 16);
    v[3] = frn_ld64(m, (u64)a + 24);
}
static inline void frn_st(u8 *m, u32 a, const u64 v[4]) {
    frn_st64(m, a, v[0]), frn_st64(m, (u64)a + 8, v[1]), frn_st64(m, (u64)a + 16, v[2]), frn_st64(m, (u64)a + 24, v[3]);
}
static inline u8 frn_type(const u8 *m, u32 a) { return m[(u64)a + 7]; }
static inline void frn_st32(u8 *m, u64 a, u32 v) { memcpy(m + a, &v, 4); }
static inline s32 frn_short(const u8 *m, u32 a) {
    s32 v;
    memcpy(&v, m + (u64)a, 4);
    return v;
}

/* r = x + y mod 2^256, returns the carry (adc: base x86-64, no ADX needed) */
static inline u64 frn_add(u64 r[4], const u64 x[4], const u64 y[4]) {
    unsigned long long s0, s1, s2, s3;
    unsigned char c = _addcarry_u64(0, x[0], y[0], &s0);
    c = _addcarry_u64(c, x[1], y[1], &s1);
    c = _addcarry_u64(c, x[2], y[2], &s2);
    c = _addcarry_u64(c, x[3], y[3], &s3);
    r[0] = s0, r[1] = s1, r[2] = s2, r[3] = s3;
    return c;
}
/* r = x - y mod 2^256, returns 1 on a borrow */
static inline u64 frn_sub(u64 r[4], const u64 x[4], const u64 y[4]) {
    unsigned long long d0, d1, d2, d3;
    unsigned char b = _subborrow_u64(0, x[0], y[0], &d0);
    b = _subborrow_u64(b, x[1], y[1], &d1);
    b = _subborrow_u64(b, x[2], y[2], &d2);
    b = _subborrow_u64(b, x[3], y[3], &d3);
    r[0] = d0, r[1] = d1, r[2] = d2, r[3] = d3;
    return b;
}
static inline int frn_ge(const u64 x[4], const u64 y[4]) {
    u64 d[4];
    return !frn_sub(d, x, y);
}
static inline int frn_eq(const u64 x[4], const u64 y[4]) {
    return ((x[0] ^ y[0]) | (x[1] ^ y[1]) | (x[2] ^ y[2]) | (x[3] ^ y[3])) == 0;
}
/* t -= q when carry or t >= q: the runtime's final step of Fr_F1m_add, _mul and _mReduct */
static inline void frn_reduce_once(u64 t[4], u64 carry) {
    u64 d[4];
    u64 b = frn_sub(d, t, frn_q);
    if (carry || !b) t[0] = d[0], t[1] = d[1], t[2] = d[2], t[3] = d[3];
}

/* T = (x*y + m*q) / 2^256 for the unique m < 2^256 that makes it exact (CIOS, 4 x 64 bits), then
 * the runtime's conditional subtraction. Any word size gives the same T, so the wasm's 8 x 32-bit
 * product and this one agree for all x, y < 2^256. */
static inline void frn_mont_mul_c(u64 r[4], const u64 a[4], const u64 b[4]) {
    u64 t0 = 0, t1 = 0, t2 = 0, t3 = 0, t4 = 0;
    FRN_UNROLL
    for (int i = 0; i < 4; i++) {
        frn_u128 c;
        u64 bi = b[i], t5;
        c = (frn_u128)a[0] * bi + t0;
        t0 = (u64)c;
        c = (frn_u128)a[1] * bi + t1 + (u64)(c >> 64);
        t1 = (u64)c;
        c = (frn_u128)a[2] * bi + t2 + (u64)(c >> 64);
        t2 = (u64)c;
        c = (frn_u128)a[3] * bi + t3 + (u64)(c >> 64);
        t3 = (u64)c;
        c = (frn_u128)t4 + (u64)(c >> 64);
        t4 = (u64)c;
        t5 = (u64)(c >> 64);
        u64 m = t0 * FRN_NP;
        c = (frn_u128)m * FRN_Q0 + t0;
        c = (frn_u128)m * FRN_Q1 + t1 + (u64)(c >> 64);
        t0 = (u64)c;
        c = (frn_u128)m * FRN_Q2 + t2 + (u64)(c >> 64);
        t1 = (u64)c;
        c = (frn_u128)m * FRN_Q3 + t3 + (u64)(c >> 64);
        t2 = (u64)c;
        c = (frn_u128)t4 + (u64)(c >> 64);
        t3 = (u64)c;
        t4 = t5 + (u64)(c >> 64);
    }
    r[0] = t0, r[1] = t1, r[2] = t2, r[3] = t3;
    frn_reduce_once(r, t4);
}

#if defined(__x86_64__)
/* The same CIOS product with BMI2's mulx and ADX's two carry chains (adox for the low halves, adcx
 * for the high ones), for CPUs that have both (frn_adx, from cpuid when the object is loaded; the
 * object runs on any x86-64). One round: T += a*b_i, then T = (T + m*q) / 2^64 with m = T*(-1/q) mod
 * 2^64; T lives in six registers that rotate by one each round, the one that falls out being 0. */
static int frn_adx;
static const u64 frn_np = FRN_NP;
#define FRN_ADX_ROUND(B, T0, T1, T2, T3, T4, T5)                                                                       \
    "movq " B ", %%rdx\n\t"                                                                                            \
    "xorl %k[z], %k[z]\n\t"                                                                                            \
    "mulxq 0(%[a]), %[lo], %[hi]\n\t"                                                                                  \
    "adoxq %[lo], %[" T0 "]\n\t"                                                                                       \
    "adcxq %[hi], %[" T1 "]\n\t"                                                                                       \
    "mulxq 8(%[a]), %[lo], %[hi]\n\t"                                                                                  \
    "adoxq %[lo], %[" T1 "]\n\t"                                                                                       \
    "adcxq %[hi], %[" T2 "]\n\t"                                                                                       \
    "mulxq 16(%[a]), %[lo], %[hi]\n\t"                                                                                 \
    "adoxq %[lo], %[" T2 "]\n\t"                                                                                       \
    "adcxq %[hi], %[" T3 "]\n\t"                                                                                       \
    "mulxq 24(%[a]), %[lo], %[hi]\n\t"                                                                                 \
    "adoxq %[lo], %[" T3 "]\n\t"                                                                                       \
    "adcxq %[hi], %[" T4 "]\n\t"                                                                                       \
    "adoxq %[z], %[" T4 "]\n\t"                                                                                        \
    "adcxq %[z], %[" T5 "]\n\t"                                                                                        \
    "adoxq %[z], %[" T5 "]\n\t"                                                                                        \
    "movq %[" T0 "], %%rdx\n\t"                                                                                        \
    "imulq %[np], %%rdx\n\t"                                                                                           \
    "xorl %k[z], %k[z]\n\t"                                                                                            \
    "mulxq %[q0], %[lo], %[hi]\n\t"                                                                                    \
    "adoxq %[lo], %[" T0 "]\n\t"                                                                                       \
    "adcxq %[hi], %[" T1 "]\n\t"                                                                                       \
    "mulxq %[q1], %[lo], %[hi]\n\t"                                                                                    \
    "adoxq %[lo], %[" T1 "]\n\t"                                                                                       \
    "adcxq %[hi], %[" T2 "]\n\t"                                                                                       \
    "mulxq %[q2], %[lo], %[hi]\n\t"                                                                                    \
    "adoxq %[lo], %[" T2 "]\n\t"                                                                                       \
    "adcxq %[hi], %[" T3 "]\n\t"                                                                                       \
    "mulxq %[q3], %[lo], %[hi]\n\t"                                                                                    \
    "adoxq %[lo], %[" T3 "]\n\t"                                                                                       \
    "adcxq %[hi], %[" T4 "]\n\t"                                                                                       \
    "adoxq %[z], %[" T4 "]\n\t"                                                                                        \
    "adcxq %[z], %[" T5 "]\n\t"                                                                                        \
    "adoxq %[z], %[" T5 "]\n\t"
static inline void frn_mont_mul_adx(u64 r[4], const u64 *a, const u64 *b) {
    u64 r0 = 0, r1 = 0, r2 = 0, r3 = 0, r4 = 0, r5 = 0, lo, hi, z;
    /* clang-format off */
    __asm__(FRN_ADX_ROUND("0(%[b])", "r0", "r1", "r2", "r3", "r4", "r5")
            FRN_ADX_ROUND("8(%[b])", "r1", "r2", "r3", "r4", "r5", "r0")
            FRN_ADX_ROUND("16(%[b])", "r2", "r3", "r4", "r5", "r0", "r1")
            FRN_ADX_ROUND("24(%[b])", "r3", "r4", "r5", "r0", "r1", "r2")
            : [r0] "+&r"(r0), [r1] "+&r"(r1), [r2] "+&r"(r2), [r3] "+&r"(r3), [r4] "+&r"(r4), [r5] "+&r"(r5),
              [lo] "=&r"(lo), [hi] "=&r"(hi), [z] "=&r"(z)
            : [a] "r"(a), [b] "r"(b), "m"(*(const u64(*)[4])a), "m"(*(const u64(*)[4])b), [np] "m"(frn_np),
              [q0] "m"(frn_q[0]), [q1] "m"(frn_q[1]), [q2] "m"(frn_q[2]), [q3] "m"(frn_q[3])
            : "rdx", "cc");
    /* clang-format on */
    r[0] = r4, r[1] = r5, r[2] = r0, r[3] = r1;
    frn_reduce_once(r, r2);
}
#include <cpuid.h>
static int frn_cpu_adx(void) {
    unsigned a, b, c, d;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 8)) && (b & (1u << 19)); /* BMI2, ADX */
}
__attribute__((constructor)) static void frn_cpu(void) { frn_adx = frn_cpu_adx(); }
/* test_witgen's way to the portable product on any CPU (frn_call with nat = 2) */
static void frn_portable(int on) { frn_adx = on ? 0 : frn_cpu_adx(); }
#define FRN_HAVE_ADX frn_adx
#else
#define FRN_HAVE_ADX 0
#define frn_mont_mul_adx frn_mont_mul_c
static void frn_portable(int on) { (void)on; }
#endif

/* a*b in Montgomery form; a and b may point into the wasm memory (unaligned) */
static inline void frn_mont_mul(u64 r[4], const u64 *a, const u64 *b) {
    if (FRN_HAVE_ADX) {
        frn_mont_mul_adx(r, a, b);
    } else {
        u64 x[4], y[4];
        memcpy(x, a, 32), memcpy(y, b, 32);
        frn_mont_mul_c(r, x, y);
    }
}

/* Montgomery reduction of t (< 2^256, high half zero): (t + m*q) / 2^256, then the subtraction */
static inline void frn_mont_redc(u64 r[4], const u64 x[4]) {
    u64 t0 = x[0], t1 = x[1], t2 = x[2], t3 = x[3], t4 = 0;
    FRN_UNROLL
    for (int i = 0; i < 4; i++) {
        u64 m = t0 * FRN_NP;
        frn_u128 c = (frn_u128)m * FRN_Q0 + t0;
        c = (frn_u128)m * FRN_Q1 + t1 + (u64)(c >> 64);
        t0 = (u64)c;
        c = (frn_u128)m * FRN_Q2 + t2 + (u64)(c >> 64);
        t1 = (u64)c;
        c = (frn_u128)m * FRN_Q3 + t3 + (u64)(c >> 64);
        t2 = (u64)c;
        c = (frn_u128)t4 + (u64)(c >> 64);
        t3 = (u64)c;
        t4 = (u64)(c >> 64);
    }
    r[0] = t0, r[1] = t1, r[2] = t2, r[3] = t3;
    frn_reduce_once(r, t4);
}

/* ---- the 256-bit integer layer (Fr_int_*) ---- */

static u32 w2c_Fr_int_add(Z_circuit_instance_t *in, u32 px, u32 py, u32 pr) {
    u8 *m = FRN_M(in);
    u64 x[4], y[4], r[4];
    frn_ld(m, px, x), frn_ld(m, py, y);
    u64 c = frn_add(r, x, y);
    frn_st(m, pr, r);
    return (u32)c;
}
/* the wasm returns the borrow as an arithmetic shift of the last limb's difference: 0 or -1 */
static u32 w2c_Fr_int_sub(Z_circuit_instance_t *in, u32 px, u32 py, u32 pr) {
    u8 *m = FRN_M(in);
    u64 x[4], y[4], r[4];
    frn_ld(m, px, x), frn_ld(m, py, y);
    u64 b = frn_sub(r, x, y);
    frn_st(m, pr, r);
    return b ? 0xffffffffu : 0;
}
static u32 w2c_Fr_int_gt(Z_circuit_instance_t *in, u32 px, u32 py) {
    u8 *m = FRN_M(in);
    u64 x[4], y[4];
    frn_ld(m, px, x), frn_ld(m, py, y);
    return !frn_ge(y, x);
}
static u32 w2c_Fr_int_gte(Z_circuit_instance_t *in, u32 px, u32 py) {
    u8 *m = FRN_M(in);
    u64 x[4], y[4];
    frn_ld(m, px, x), frn_ld(m, py, y);
    return frn_ge(x, y);
}
static u32 w2c_Fr_int_eq(Z_circuit_instance_t *in, u32 px, u32 py) {
    u8 *m = FRN_M(in);
    u64 x[4], y[4];
    frn_ld(m, px, x), frn_ld(m, py, y);
    return frn_eq(x, y);
}
static u32 w2c_Fr_int_isZero(Z_circuit_instance_t *in, u32 px) {
    u64 x[4];
    frn_ld(FRN_M(in), px, x);
    return (x[0] | x[1] | x[2] | x[3]) == 0;
}
static void w2c_Fr_int_copy(Z_circuit_instance_t *in, u32 px, u32 pr) {
    u8 *m = FRN_M(in);
    u64 x[4];
    frn_ld(m, px, x);
    frn_st(m, pr, x);
}
static void w2c_Fr_int_zero(Z_circuit_instance_t *in, u32 pr) {
    static const u64 z[4];
    frn_st(FRN_M(in), pr, z);
}

/* ---- the field layer (Fr_F1m_*) ---- */

static void w2c_Fr_F1m_add(Z_circuit_instance_t *in, u32 px, u32 py, u32 pr) {
    u8 *m = FRN_M(in);
    u64 x[4], y[4], r[4];
    frn_ld(m, px, x), frn_ld(m, py, y);
    frn_reduce_once(r, frn_add(r, x, y));
    frn_st(m, pr, r);
}
static void w2c_Fr_F1m_sub(Z_circuit_instance_t *in, u32 px, u32 py, u32 pr) {
    u8 *m = FRN_M(in);
    u64 x[4], y[4], r[4];
    frn_ld(m, px, x), frn_ld(m, py, y);
    if (frn_sub(r, x, y)) frn_add(r, r, frn_q);
    frn_st(m, pr, r);
}
static void w2c_Fr_F1m_mul(Z_circuit_instance_t *in, u32 px, u32 py, u32 pr) {
    u8 *m = FRN_M(in);
    u64 r[4];
    frn_mont_mul(r, (const u64 *)(m + (u64)px), (const u64 *)(m + (u64)py));
    frn_st(m, pr, r);
}
/* the wasm: copy x to the scratch 1504, zero 1536.., Fr_F1m_mReduct(1504, r) (which works in
 * place on the scratch and keeps its carries at 992..1024): the same T as frn_mont_redc */
static void w2c_Fr_F1m_fromMontgomery(Z_circuit_instance_t *in, u32 px, u32 pr) {
    u8 *m = FRN_M(in);
    u64 x[4], r[4];
    frn_ld(m, px, x);
    frn_mont_redc(r, x);
    frn_st(m, pr, r);
}

/* ---- circom values (Fr_*) ---- */

/* word by word, as the wasm (a wide copy of values just written word by word stalls store forwarding) */
static inline void w2c_Fr_copy(Z_circuit_instance_t *in, u32 pr, u32 px) {
    u8 *m = FRN_M(in);
    u64 v0 = frn_ld64(m, px), v1 = frn_ld64(m, (u64)px + 8), v2 = frn_ld64(m, (u64)px + 16),
        v3 = frn_ld64(m, (u64)px + 24), v4 = frn_ld64(m, (u64)px + 32);
    frn_st64(m, pr, v0), frn_st64(m, (u64)pr + 8, v1), frn_st64(m, (u64)pr + 16, v2), frn_st64(m, (u64)pr + 24, v3);
    frn_st64(m, (u64)pr + 32, v4);
}

/* a long Montgomery value to long normal form, in place; anything else is left alone */
static inline void w2c_Fr_toNormal(Z_circuit_instance_t *in, u32 pa) {
    u8 *m = FRN_M(in);
    if ((frn_type(m, pa) & (FRN_LONG | FRN_MONT)) != (FRN_LONG | FRN_MONT)) return;
    frn_st32(m, (u64)pa + 4, 0x80000000u);
    w2c_Fr_F1m_fromMontgomery(in, pa + 8, pa + 8);
}

/* the long form of a 64-bit signed value: |v|, negated mod q when v <= 0 (as the wasm: v = 0 takes
 * the negative branch, which gives 0) */
static inline void w2c_Fr_rawCopyS2L(Z_circuit_instance_t *in, u32 pr, u64 v) {
    u8 *m = FRN_M(in);
    u64 x[4] = {(s64)v > 0 ? v : (u64)0 - v, 0, 0, 0};
    if ((s64)v > 0) {
        frn_st(m, pr, x);
        return;
    }
    /* Fr_F1m_neg(pr, pr) = Fr_F1m_sub(zero, pr, pr) */
    u64 z[4], r[4];
    frn_ld(m, FRN_A_ZERO, z);
    if (frn_sub(r, z, x)) frn_add(r, r, frn_q);
    frn_st(m, pr, r);
}

static void w2c_Fr_toMontgomery(Z_circuit_instance_t *in, u32 pa) {
    u8 *m = FRN_M(in);
    u8 t = frn_type(m, pa);
    if (t & FRN_MONT) return;
    u64 r[4];
    if (t & FRN_LONG) {
        frn_st32(m, (u64)pa + 4, 0xc0000000u);
    } else {
        w2c_Fr_rawCopyS2L(in, pa + 8, (u64)(s64)frn_short(m, pa));
    }
    frn_mont_mul(r, (const u64 *)(m + (u64)(u32)(pa + 8)), (const u64 *)(m + FRN_A_R2));
    frn_st(m, pa + 8, r);
    if (!(t & FRN_LONG)) frn_st32(m, (u64)pa + 4, 0x40000000u);
}

static inline u32 w2c_Fr_isNegative(Z_circuit_instance_t *in, u32 pa) {
    u8 *m = FRN_M(in);
    if (frn_type(m, pa) & FRN_LONG) {
        w2c_Fr_toNormal(in, pa);
        u64 x[4], h[4];
        frn_ld(m, pa + 8, x), frn_ld(m, FRN_A_HALF, h);
        return !frn_ge(h, x);
    }
    return frn_short(m, pa) < 0;
}

static inline u32 w2c_Fr_getLsb32(Z_circuit_instance_t *in, u32 pa) {
    u8 *m = FRN_M(in);
    u32 v;
    if (frn_type(m, pa) & FRN_LONG) {
        w2c_Fr_toNormal(in, pa);
        memcpy(&v, m + (u64)pa + 8, 4);
    } else {
        memcpy(&v, m + (u64)pa, 4);
    }
    return v;
}

static void w2c_Fr_neg(Z_circuit_instance_t *in, u32 pr, u32 pa) {
    u8 *m = FRN_M(in);
    u8 t = frn_type(m, pa);
    if (t & FRN_LONG) {
        frn_st32(m, (u64)pr + 4, t & FRN_MONT ? 0xc0000000u : 0x80000000u);
        u64 z[4], x[4], r[4];
        frn_ld(m, FRN_A_ZERO, z), frn_ld(m, pa + 8, x);
        if (frn_sub(r, z, x)) frn_add(r, r, frn_q);
        frn_st(m, pr + 8, r);
        return;
    }
    s64 r = -(s64)frn_short(m, pa);
    if (r >= INT32_MIN && r <= INT32_MAX) {
        frn_st32(m, pr, (u32)r);
        frn_st32(m, (u64)pr + 4, 0);
    } else {
        frn_st32(m, (u64)pr + 4, 0x80000000u);
        w2c_Fr_rawCopyS2L(in, pr + 8, (u64)r);
    }
}

/* the wasm negates a negative value into the scratch value at 8 and reads it back from there */
static u32 frn_toInt_slow(Z_circuit_instance_t *in, u32 pa) {
    if (w2c_Fr_isNegative(in, pa)) {
        w2c_Fr_neg(in, 8, pa);
        return 0u - w2c_Fr_getLsb32(in, 8);
    }
    return w2c_Fr_getLsb32(in, pa);
}
/* inline: a short value >= 0 (the loop counters and indices of circom's code) is its own answer */
static inline u32 w2c_Fr_toInt(Z_circuit_instance_t *in, u32 pa) {
    u8 *m = FRN_M(in);
    if (!(frn_type(m, pa) & FRN_LONG) && frn_short(m, pa) >= 0) return (u32)frn_short(m, pa);
    return frn_toInt_slow(in, pa);
}

static inline u32 w2c_Fr_isTrue(Z_circuit_instance_t *in, u32 pa) {
    u8 *m = FRN_M(in);
    if (frn_type(m, pa) & FRN_LONG) return !w2c_Fr_int_isZero(in, pa + 8);
    return frn_short(m, pa) != 0;
}

/* 0 when the instance's q, where the runtime reads it, is the prime this code was compiled for */
static int frn_check(Z_circuit_instance_t *in) {
    u64 q[4];
    frn_ld(FRN_M(in), FRN_A_Q, q);
    return frn_eq(q, frn_q) ? 0 : -1;
}

/* how the glue's frn_call (module.h, WITGEN_FR_GLUE_CASE) calls a function of each kind */
#define FRN_CALL_xyr_ret(f) f(in, a, (u32)b, c)
#define FRN_CALL_xy(f) f(in, a, (u32)b)
#define FRN_CALL_x(f) f(in, a)
#define FRN_CALL_xr(f) (f(in, a, (u32)b), 0u)
#define FRN_CALL_rx(f) (f(in, a, (u32)b), 0u)
#define FRN_CALL_r(f) (f(in, a), 0u)
#define FRN_CALL_xyr(f) (f(in, a, (u32)b, c), 0u)
#define FRN_CALL_rv(f) (f(in, a, b), 0u)
