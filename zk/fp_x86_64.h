/* x86-64 field kernels for 4 and 6 limbs: Montgomery multiplication with MULX/ADCX/ADOX (BMI2 +
 * ADX), and branch-free modular add/sub (ADC/SBB + CMOV). Compiled into every x86-64 build
 * (ZK_X86_KERNELS, meson.build): FPF(add)/FPF(sub)/FPF(dbl) in zk/fp_tmpl.h always use the add/sub
 * (baseline x86-64), FPF(mul)/FPF(sqr) the multiplication only while the CPU's cpuid allows it
 * (zk/kernels.h); FPF(mul_portable), FPF(add_portable) and FPF(sub_portable) stay the reference
 * (tests/test_field_asm.c).
 *
 * Algorithm: CIOS without the extra carry word ("no-carry" CIOS, as in gnark-crypto), valid
 * because every modulus here has p[N-1] < 2^63 - 1: for each limb b[i] the row a*b[i] is added
 * to t[0..N-1] with the low halves on the OF chain (ADOX) and the high halves on the CF chain
 * (ADCX), its top word collected in A; then m = t[0]*inv, and t = (t + m*p) / 2^64 is formed
 * with the same two chains, A folded into the top word. The result (< 2p for inputs < p) is
 * reduced once by a SUB/SBB chain and CMOVNC, branch-free.
 *
 * Squaring for 4 limbs has its own kernel (zk_x86_mont_sqr4: 10 products instead of 16 before the
 * reduction); for 6 limbs FPF(sqr) is the multiplication a*a.
 *
 * The kernels take the modulus as a pointer; inlined with FPF(P).l the limbs become RIP-relative
 * memory operands, so no register holds them. Inputs must be < p (the fields keep every value
 * fully reduced); r may alias a or b (all loads happen before the results leave the asm). */
#pragma once
#include <stdint.h>

#define ZK_X86_ALWAYS_INLINE static inline __attribute__((always_inline))

/* One reduction round of zk_x86_mont_mul4: m = t0·inv, (t0..t3) <- (t0..t3 + m·p) / 2^64, the high
 * halves on the CF chain and the low halves on the OF chain, the row's top word A folded into t3. */
#define ZK_X86_MUL4_REDC_ROUND                                                                                         \
    "movq %[t0], %%rdx\n\t"                                                                                            \
    "imulq %[inv], %%rdx\n\t"                                                                                          \
    "xorl %k[lo], %k[lo]\n\t"                                                                                          \
    "mulxq %[p0], %[lo], %[hi]\n\t"                                                                                    \
    "adcxq %[t0], %[lo]\n\t"                                                                                           \
    "movq %[hi], %[t0]\n\t"                                                                                            \
    "adcxq %[t1], %[t0]\n\t"                                                                                           \
    "mulxq %[p1], %[lo], %[t1]\n\t"                                                                                    \
    "adoxq %[lo], %[t0]\n\t"                                                                                           \
    "adcxq %[t2], %[t1]\n\t"                                                                                           \
    "mulxq %[p2], %[lo], %[t2]\n\t"                                                                                    \
    "adoxq %[lo], %[t1]\n\t"                                                                                           \
    "adcxq %[t3], %[t2]\n\t"                                                                                           \
    "mulxq %[p3], %[lo], %[t3]\n\t"                                                                                    \
    "adoxq %[lo], %[t2]\n\t"                                                                                           \
    "movl $0, %k[lo]\n\t"                                                                                              \
    "adcxq %[lo], %[t3]\n\t"                                                                                           \
    "adoxq %[A], %[t3]\n\t"

/* One multiply round of zk_x86_mont_mul4 for the limb of b at byte offset OFF (8, 16, ...):
 * (t0..t3, A) += a·b[OFF/8], the low halves on the OF chain, the high halves on the CF chain. */
#define ZK_X86_MUL4_MAC_ROUND(OFF)                                                                                     \
    "movq " #OFF "(%[b]), %%rdx\n\t"                                                                                   \
    "xorl %k[lo], %k[lo]\n\t"                                                                                          \
    "mulxq 0(%[a]), %[lo], %[hi]\n\t"                                                                                  \
    "adoxq %[lo], %[t0]\n\t"                                                                                           \
    "adcxq %[hi], %[t1]\n\t"                                                                                           \
    "mulxq 8(%[a]), %[lo], %[hi]\n\t"                                                                                  \
    "adoxq %[lo], %[t1]\n\t"                                                                                           \
    "adcxq %[hi], %[t2]\n\t"                                                                                           \
    "mulxq 16(%[a]), %[lo], %[hi]\n\t"                                                                                 \
    "adoxq %[lo], %[t2]\n\t"                                                                                           \
    "adcxq %[hi], %[t3]\n\t"                                                                                           \
    "mulxq 24(%[a]), %[lo], %[A]\n\t"                                                                                  \
    "adoxq %[lo], %[t3]\n\t"                                                                                           \
    "movl $0, %k[lo]\n\t"                                                                                              \
    "adcxq %[lo], %[A]\n\t"                                                                                            \
    "adoxq %[lo], %[A]\n\t"

/* The first row of a product: (t0..t(N-1), A) = a·b[0], the low halves added on the OF chain;
 * its first three words are the same for 4 and 6 words. */
#define ZK_X86_FIRST_ROW_HEAD                                                                                          \
    "movq 0(%[b]), %%rdx\n\t"                                                                                          \
    "xorl %k[lo], %k[lo]\n\t"                                                                                          \
    "mulxq 0(%[a]), %[t0], %[t1]\n\t"                                                                                  \
    "mulxq 8(%[a]), %[lo], %[t2]\n\t"                                                                                  \
    "adoxq %[lo], %[t1]\n\t"                                                                                           \
    "mulxq 16(%[a]), %[lo], %[t3]\n\t"                                                                                 \
    "adoxq %[lo], %[t2]\n\t"
#define ZK_X86_MUL4_FIRST_ROW                                                                                          \
    ZK_X86_FIRST_ROW_HEAD                                                                                              \
    "mulxq 24(%[a]), %[lo], %[A]\n\t"                                                                                  \
    "adoxq %[lo], %[t3]\n\t"                                                                                           \
    "movl $0, %k[lo]\n\t"                                                                                              \
    "adoxq %[lo], %[A]\n\t"

/* (t0..t3) -= p unless that borrows (a value < 2p fully reduced), branch-free: the subtraction
 * into lo, hi, A and rdx (scratch), then the selection by the borrow (also the low words of
 * ZK_X86_COND_SUB6). */
#define ZK_X86_SUB_P_LOW4                                                                                              \
    "movq %[t0], %[lo]\n\t"                                                                                            \
    "subq %[p0], %[lo]\n\t"                                                                                            \
    "movq %[t1], %[hi]\n\t"                                                                                            \
    "sbbq %[p1], %[hi]\n\t"                                                                                            \
    "movq %[t2], %[A]\n\t"                                                                                             \
    "sbbq %[p2], %[A]\n\t"                                                                                             \
    "movq %[t3], %%rdx\n\t"                                                                                            \
    "sbbq %[p3], %%rdx\n\t"
#define ZK_X86_SELECT_LOW4                                                                                             \
    "cmovncq %[lo], %[t0]\n\t"                                                                                         \
    "cmovncq %[hi], %[t1]\n\t"                                                                                         \
    "cmovncq %[A], %[t2]\n\t"                                                                                          \
    "cmovncq %%rdx, %[t3]\n\t"
#define ZK_X86_COND_SUB4 ZK_X86_SUB_P_LOW4 ZK_X86_SELECT_LOW4

/* r = a*b/2^256 mod p, for a, b < p < 2^255 with p[3] < 2^63 - 1; inv = -p^-1 mod 2^64. */
ZK_X86_ALWAYS_INLINE void zk_x86_mont_mul4(uint64_t r[4], const uint64_t a[4], const uint64_t b[4], const uint64_t p[4],
                                           uint64_t inv) {
    uint64_t t0, t1, t2, t3, A, lo, hi, rdx;
    const uint64_t *ap = a, *bp = b;
    __asm__(
        ZK_X86_MUL4_FIRST_ROW
        // clang-format off
        ZK_X86_MUL4_REDC_ROUND
        ZK_X86_MUL4_MAC_ROUND(8)
        ZK_X86_MUL4_REDC_ROUND
        ZK_X86_MUL4_MAC_ROUND(16)
        ZK_X86_MUL4_REDC_ROUND
        ZK_X86_MUL4_MAC_ROUND(24)
        ZK_X86_MUL4_REDC_ROUND
        // clang-format on
        ZK_X86_COND_SUB4
        : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [A] "=&r"(A), [lo] "=&r"(lo), [hi] "=&r"(hi),
          "=&d"(rdx), [a] "+r"(ap), [b] "+r"(bp)
        : [p0] "m"(p[0]), [p1] "m"(p[1]), [p2] "m"(p[2]), [p3] "m"(p[3]), [inv] "rm"(inv),
          "m"(*(const uint64_t(*)[4])a), "m"(*(const uint64_t(*)[4])b)
        : "cc");
    (void)A, (void)lo, (void)hi, (void)rdx;
    r[0] = t0, r[1] = t1, r[2] = t2, r[3] = t3;
}

/* One reduction round of zk_x86_mont_mul6: m = t0·inv, (t0..t5) <- (t0..t5 + m·p) / 2^64, the high
 * halves on the CF chain and the low halves on the OF chain, the row's top word A folded into t5. */
#define ZK_X86_MUL6_REDC_ROUND                                                                                         \
    "movq %[t0], %%rdx\n\t"                                                                                            \
    "imulq %[inv], %%rdx\n\t"                                                                                          \
    "xorl %k[lo], %k[lo]\n\t"                                                                                          \
    "mulxq %[p0], %[lo], %[hi]\n\t"                                                                                    \
    "adcxq %[t0], %[lo]\n\t"                                                                                           \
    "movq %[hi], %[t0]\n\t"                                                                                            \
    "adcxq %[t1], %[t0]\n\t"                                                                                           \
    "mulxq %[p1], %[lo], %[t1]\n\t"                                                                                    \
    "adoxq %[lo], %[t0]\n\t"                                                                                           \
    "adcxq %[t2], %[t1]\n\t"                                                                                           \
    "mulxq %[p2], %[lo], %[t2]\n\t"                                                                                    \
    "adoxq %[lo], %[t1]\n\t"                                                                                           \
    "adcxq %[t3], %[t2]\n\t"                                                                                           \
    "mulxq %[p3], %[lo], %[t3]\n\t"                                                                                    \
    "adoxq %[lo], %[t2]\n\t"                                                                                           \
    "adcxq %[t4], %[t3]\n\t"                                                                                           \
    "mulxq %[p4], %[lo], %[t4]\n\t"                                                                                    \
    "adoxq %[lo], %[t3]\n\t"                                                                                           \
    "adcxq %[t5], %[t4]\n\t"                                                                                           \
    "mulxq %[p5], %[lo], %[t5]\n\t"                                                                                    \
    "adoxq %[lo], %[t4]\n\t"                                                                                           \
    "movl $0, %k[lo]\n\t"                                                                                              \
    "adcxq %[lo], %[t5]\n\t"                                                                                           \
    "adoxq %[A], %[t5]\n\t"

/* One multiply round of zk_x86_mont_mul6 for the limb of b at byte offset OFF (8, 16, ...):
 * (t0..t5, A) += a·b[OFF/8], the low halves on the OF chain, the high halves on the CF chain. */
#define ZK_X86_MUL6_MAC_ROUND(OFF)                                                                                     \
    "movq " #OFF "(%[b]), %%rdx\n\t"                                                                                   \
    "xorl %k[lo], %k[lo]\n\t"                                                                                          \
    "mulxq 0(%[a]), %[lo], %[hi]\n\t"                                                                                  \
    "adoxq %[lo], %[t0]\n\t"                                                                                           \
    "adcxq %[hi], %[t1]\n\t"                                                                                           \
    "mulxq 8(%[a]), %[lo], %[hi]\n\t"                                                                                  \
    "adoxq %[lo], %[t1]\n\t"                                                                                           \
    "adcxq %[hi], %[t2]\n\t"                                                                                           \
    "mulxq 16(%[a]), %[lo], %[hi]\n\t"                                                                                 \
    "adoxq %[lo], %[t2]\n\t"                                                                                           \
    "adcxq %[hi], %[t3]\n\t"                                                                                           \
    "mulxq 24(%[a]), %[lo], %[hi]\n\t"                                                                                 \
    "adoxq %[lo], %[t3]\n\t"                                                                                           \
    "adcxq %[hi], %[t4]\n\t"                                                                                           \
    "mulxq 32(%[a]), %[lo], %[hi]\n\t"                                                                                 \
    "adoxq %[lo], %[t4]\n\t"                                                                                           \
    "adcxq %[hi], %[t5]\n\t"                                                                                           \
    "mulxq 40(%[a]), %[lo], %[A]\n\t"                                                                                  \
    "adoxq %[lo], %[t5]\n\t"                                                                                           \
    "movl $0, %k[lo]\n\t"                                                                                              \
    "adcxq %[lo], %[A]\n\t"                                                                                            \
    "adoxq %[lo], %[A]\n\t"

/* The first row of a 6-word product: (t0..t5, A) = a·b[0]. */
#define ZK_X86_MUL6_FIRST_ROW                                                                                          \
    ZK_X86_FIRST_ROW_HEAD                                                                                              \
    "mulxq 24(%[a]), %[lo], %[t4]\n\t"                                                                                 \
    "adoxq %[lo], %[t3]\n\t"                                                                                           \
    "mulxq 32(%[a]), %[lo], %[t5]\n\t"                                                                                 \
    "adoxq %[lo], %[t4]\n\t"                                                                                           \
    "mulxq 40(%[a]), %[lo], %[A]\n\t"                                                                                  \
    "adoxq %[lo], %[t5]\n\t"                                                                                           \
    "movl $0, %k[lo]\n\t"                                                                                              \
    "adoxq %[lo], %[A]\n\t"

/* (t0..t5) -= p unless that borrows; lo, hi, A, rdx, a and b are scratch. */
#define ZK_X86_COND_SUB6                                                                                               \
    ZK_X86_SUB_P_LOW4                                                                                                  \
    "movq %[t4], %[a]\n\t"                                                                                             \
    "sbbq %[p4], %[a]\n\t"                                                                                             \
    "movq %[t5], %[b]\n\t"                                                                                             \
    "sbbq %[p5], %[b]\n\t"                                                                                             \
    ZK_X86_SELECT_LOW4                                                                                                 \
    "cmovncq %[a], %[t4]\n\t"                                                                                          \
    "cmovncq %[b], %[t5]\n\t"

/* r = a*b/2^384 mod p, for a, b < p < 2^383 with p[5] < 2^63 - 1; inv = -p^-1 mod 2^64. */
ZK_X86_ALWAYS_INLINE void zk_x86_mont_mul6(uint64_t r[6], const uint64_t a[6], const uint64_t b[6], const uint64_t p[6],
                                           uint64_t inv) {
    uint64_t t0, t1, t2, t3, t4, t5, A, lo, hi, rdx;
    const uint64_t *ap = a, *bp = b;
    __asm__(
            ZK_X86_MUL6_FIRST_ROW
            // clang-format off
            ZK_X86_MUL6_REDC_ROUND
            ZK_X86_MUL6_MAC_ROUND(8)
            ZK_X86_MUL6_REDC_ROUND
            ZK_X86_MUL6_MAC_ROUND(16)
            ZK_X86_MUL6_REDC_ROUND
            ZK_X86_MUL6_MAC_ROUND(24)
            ZK_X86_MUL6_REDC_ROUND
            ZK_X86_MUL6_MAC_ROUND(32)
            ZK_X86_MUL6_REDC_ROUND
            ZK_X86_MUL6_MAC_ROUND(40)
            ZK_X86_MUL6_REDC_ROUND
            // clang-format on
            ZK_X86_COND_SUB6
            : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4), [t5] "=&r"(t5),
              [A] "=&r"(A), [lo] "=&r"(lo), [hi] "=&r"(hi), "=&d"(rdx), [a] "+r"(ap), [b] "+r"(bp)
            : [p0] "m"(p[0]), [p1] "m"(p[1]), [p2] "m"(p[2]), [p3] "m"(p[3]), [p4] "m"(p[4]), [p5] "m"(p[5]),
              [inv] "rm"(inv), "m"(*(const uint64_t(*)[6])a), "m"(*(const uint64_t(*)[6])b)
            : "cc");
    (void)A, (void)lo, (void)hi, (void)rdx, (void)ap, (void)bp;
    r[0] = t0, r[1] = t1, r[2] = t2, r[3] = t3, r[4] = t4, r[5] = t5;
}

/* The wide product and the separate reduction, for Fq2's product in one reduction per half
 * (zk/fp2_tmpl.h): there a sum of products is formed in 2N words and reduced once.
 *
 * Between two rows of a wide product the lowest word is final: it is stored, and the window of N
 * words and the row's top word A moves down one word (register moves, no arithmetic). */
#define ZK_X86_WIDE4_SHIFT(OFF)                                                                                        \
    "movq %[t0], " #OFF "(%[o])\n\t"                                                                                   \
    "movq %[t1], %[t0]\n\t"                                                                                            \
    "movq %[t2], %[t1]\n\t"                                                                                            \
    "movq %[t3], %[t2]\n\t"                                                                                            \
    "movq %[A], %[t3]\n\t"

/* t[0..8) = a·b for any a, b < 2^256 (the rows of zk_x86_mont_mul4 without their reductions);
 * t must not overlap a or b. */
ZK_X86_ALWAYS_INLINE void zk_x86_mul4_wide(uint64_t t[8], const uint64_t a[4], const uint64_t b[4]) {
    uint64_t t0, t1, t2, t3, A, lo, hi, rdx;
    const uint64_t *ap = a, *bp = b;
    __asm__(
            ZK_X86_MUL4_FIRST_ROW
            // clang-format off
            ZK_X86_WIDE4_SHIFT(0)
            ZK_X86_MUL4_MAC_ROUND(8)
            ZK_X86_WIDE4_SHIFT(8)
            ZK_X86_MUL4_MAC_ROUND(16)
            ZK_X86_WIDE4_SHIFT(16)
            ZK_X86_MUL4_MAC_ROUND(24)
            // clang-format on
            "movq %[t0], 24(%[o])\n\t"
            "movq %[t1], 32(%[o])\n\t"
            "movq %[t2], 40(%[o])\n\t"
            "movq %[t3], 48(%[o])\n\t"
            "movq %[A], 56(%[o])\n\t"
            : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [A] "=&r"(A), [lo] "=&r"(lo), [hi] "=&r"(hi),
              "=&d"(rdx), [a] "+r"(ap), [b] "+r"(bp), "=m"(*(uint64_t(*)[8])t)
            : [o] "r"(t), "m"(*(const uint64_t(*)[4])a), "m"(*(const uint64_t(*)[4])b)
            : "cc");
    (void)t0, (void)t1, (void)t2, (void)t3, (void)A, (void)lo, (void)hi, (void)rdx, (void)ap, (void)bp;
}

/* r = t/2^256 mod p, for t < p·2^256 (t[0..8)), p < 2^255 with p[3] < 2^63 - 1; inv = -p^-1 mod 2^64:
 * the four reduction rounds of zk_x86_mont_mul4 (with no row's top word, A = 0) on the low half,
 * leaving a value <= p, the high half (< p) added, p subtracted once if the sum is >= p. */
ZK_X86_ALWAYS_INLINE void zk_x86_redc4(uint64_t r[4], const uint64_t t[8], const uint64_t p[4], uint64_t inv) {
    uint64_t t0, t1, t2, t3, A, lo, hi, rdx;
    __asm__(
        "movq 0(%[tp]), %[t0]\n\t"
        "movq 8(%[tp]), %[t1]\n\t"
        "movq 16(%[tp]), %[t2]\n\t"
        "movq 24(%[tp]), %[t3]\n\t"
        "xorl %k[A], %k[A]\n\t" /* no row's top word to fold in */
        // clang-format off
        ZK_X86_MUL4_REDC_ROUND
        ZK_X86_MUL4_REDC_ROUND
        ZK_X86_MUL4_REDC_ROUND
        ZK_X86_MUL4_REDC_ROUND
        // clang-format on
        "addq 32(%[tp]), %[t0]\n\t"
        "adcq 40(%[tp]), %[t1]\n\t"
        "adcq 48(%[tp]), %[t2]\n\t"
        "adcq 56(%[tp]), %[t3]\n\t"
        ZK_X86_COND_SUB4
        : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [A] "=&r"(A), [lo] "=&r"(lo), [hi] "=&r"(hi),
          "=&d"(rdx)
        : [tp] "r"(t), [p0] "m"(p[0]), [p1] "m"(p[1]), [p2] "m"(p[2]), [p3] "m"(p[3]), [inv] "rm"(inv),
          "m"(*(const uint64_t(*)[8])t)
        : "cc");
    (void)A, (void)lo, (void)hi, (void)rdx;
    r[0] = t0, r[1] = t1, r[2] = t2, r[3] = t3;
}

#define ZK_X86_WIDE6_SHIFT(OFF)                                                                                        \
    "movq %[t0], " #OFF "(%[o])\n\t"                                                                                   \
    "movq %[t1], %[t0]\n\t"                                                                                            \
    "movq %[t2], %[t1]\n\t"                                                                                            \
    "movq %[t3], %[t2]\n\t"                                                                                            \
    "movq %[t4], %[t3]\n\t"                                                                                            \
    "movq %[t5], %[t4]\n\t"                                                                                            \
    "movq %[A], %[t5]\n\t"

/* t[0..12) = a·b for any a, b < 2^384; t must not overlap a or b. */
ZK_X86_ALWAYS_INLINE void zk_x86_mul6_wide(uint64_t t[12], const uint64_t a[6], const uint64_t b[6]) {
    uint64_t t0, t1, t2, t3, t4, t5, A, lo, hi, rdx;
    const uint64_t *ap = a, *bp = b;
    __asm__(
            ZK_X86_MUL6_FIRST_ROW
            // clang-format off
            ZK_X86_WIDE6_SHIFT(0)
            ZK_X86_MUL6_MAC_ROUND(8)
            ZK_X86_WIDE6_SHIFT(8)
            ZK_X86_MUL6_MAC_ROUND(16)
            ZK_X86_WIDE6_SHIFT(16)
            ZK_X86_MUL6_MAC_ROUND(24)
            ZK_X86_WIDE6_SHIFT(24)
            ZK_X86_MUL6_MAC_ROUND(32)
            ZK_X86_WIDE6_SHIFT(32)
            ZK_X86_MUL6_MAC_ROUND(40)
            // clang-format on
            "movq %[t0], 40(%[o])\n\t"
            "movq %[t1], 48(%[o])\n\t"
            "movq %[t2], 56(%[o])\n\t"
            "movq %[t3], 64(%[o])\n\t"
            "movq %[t4], 72(%[o])\n\t"
            "movq %[t5], 80(%[o])\n\t"
            "movq %[A], 88(%[o])\n\t"
            : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4), [t5] "=&r"(t5),
              [A] "=&r"(A), [lo] "=&r"(lo), [hi] "=&r"(hi), "=&d"(rdx), [a] "+r"(ap), [b] "+r"(bp),
              "=m"(*(uint64_t(*)[12])t)
            : [o] "r"(t), "m"(*(const uint64_t(*)[6])a), "m"(*(const uint64_t(*)[6])b)
            : "cc");
    (void)t0, (void)t1, (void)t2, (void)t3, (void)t4, (void)t5, (void)A, (void)lo, (void)hi, (void)rdx, (void)ap,
        (void)bp;
}

/* r = t/2^384 mod p, for t < p·2^384 (t[0..12)), p < 2^383 with p[5] < 2^63 - 1 (as zk_x86_redc4). */
ZK_X86_ALWAYS_INLINE void zk_x86_redc6(uint64_t r[6], const uint64_t t[12], const uint64_t p[6], uint64_t inv) {
    uint64_t t0, t1, t2, t3, t4, t5, A, lo, hi, rdx, sa, sb;
    __asm__(
        "movq 0(%[tp]), %[t0]\n\t"
        "movq 8(%[tp]), %[t1]\n\t"
        "movq 16(%[tp]), %[t2]\n\t"
        "movq 24(%[tp]), %[t3]\n\t"
        "movq 32(%[tp]), %[t4]\n\t"
        "movq 40(%[tp]), %[t5]\n\t"
        "xorl %k[A], %k[A]\n\t"
        // clang-format off
        ZK_X86_MUL6_REDC_ROUND
        ZK_X86_MUL6_REDC_ROUND
        ZK_X86_MUL6_REDC_ROUND
        ZK_X86_MUL6_REDC_ROUND
        ZK_X86_MUL6_REDC_ROUND
        ZK_X86_MUL6_REDC_ROUND
        // clang-format on
        "addq 48(%[tp]), %[t0]\n\t"
        "adcq 56(%[tp]), %[t1]\n\t"
        "adcq 64(%[tp]), %[t2]\n\t"
        "adcq 72(%[tp]), %[t3]\n\t"
        "adcq 80(%[tp]), %[t4]\n\t"
        "adcq 88(%[tp]), %[t5]\n\t"
        ZK_X86_COND_SUB6
        : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4), [t5] "=&r"(t5),
          [A] "=&r"(A), [lo] "=&r"(lo), [hi] "=&r"(hi), "=&d"(rdx), [a] "=&r"(sa), [b] "=&r"(sb)
        : [tp] "r"(t), [p0] "m"(p[0]), [p1] "m"(p[1]), [p2] "m"(p[2]), [p3] "m"(p[3]), [p4] "m"(p[4]),
          [p5] "m"(p[5]), [inv] "rm"(inv), "m"(*(const uint64_t(*)[12])t)
        : "cc");
    (void)A, (void)lo, (void)hi, (void)rdx, (void)sa, (void)sb;
    r[0] = t0, r[1] = t1, r[2] = t2, r[3] = t3, r[4] = t4, r[5] = t5;
}

/* r = a + b mod p and r = a - b mod p, for a, b < p < 2^(64N-1): one ADD/ADC (SUB/SBB) chain, then
 * a conditional subtraction (addition) of p selected with CMOVNC (a borrow mask), branch-free.
 * The spare top bit of p means a + b never carries out of the top limb. */
ZK_X86_ALWAYS_INLINE void zk_x86_mod_add4(uint64_t r[4], const uint64_t a[4], const uint64_t b[4],
                                          const uint64_t p[4]) {
    uint64_t t0, t1, t2, t3, s0, s1;
    const uint64_t *ap = a, *bp = b;
    __asm__("movq 0(%[a]), %[t0]\n\t"
            "movq 8(%[a]), %[t1]\n\t"
            "movq 16(%[a]), %[t2]\n\t"
            "movq 24(%[a]), %[t3]\n\t"
            "addq 0(%[b]), %[t0]\n\t"
            "adcq 8(%[b]), %[t1]\n\t"
            "adcq 16(%[b]), %[t2]\n\t"
            "adcq 24(%[b]), %[t3]\n\t"
            "movq %[t0], %[s0]\n\t"
            "subq %[p0], %[s0]\n\t"
            "movq %[t1], %[s1]\n\t"
            "sbbq %[p1], %[s1]\n\t"
            "movq %[t2], %[a]\n\t"
            "sbbq %[p2], %[a]\n\t"
            "movq %[t3], %[b]\n\t"
            "sbbq %[p3], %[b]\n\t"
            "cmovncq %[s0], %[t0]\n\t"
            "cmovncq %[s1], %[t1]\n\t"
            "cmovncq %[a], %[t2]\n\t"
            "cmovncq %[b], %[t3]\n\t"
            : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [s0] "=&r"(s0), [s1] "=&r"(s1),
              [a] "+r"(ap), [b] "+r"(bp)
            : [p0] "m"(p[0]), [p1] "m"(p[1]), [p2] "m"(p[2]), [p3] "m"(p[3]), "m"(*(const uint64_t(*)[4])a),
              "m"(*(const uint64_t(*)[4])b)
            : "cc");
    (void)s0, (void)s1, (void)ap, (void)bp;
    r[0] = t0, r[1] = t1, r[2] = t2, r[3] = t3;
}

ZK_X86_ALWAYS_INLINE void zk_x86_mod_sub4(uint64_t r[4], const uint64_t a[4], const uint64_t b[4],
                                          const uint64_t p[4]) {
    uint64_t t0, t1, t2, t3, s0, s1;
    const uint64_t *ap = a, *bp = b;
    __asm__("movq 0(%[a]), %[t0]\n\t"
            "movq 8(%[a]), %[t1]\n\t"
            "movq 16(%[a]), %[t2]\n\t"
            "movq 24(%[a]), %[t3]\n\t"
            "subq 0(%[b]), %[t0]\n\t"
            "sbbq 8(%[b]), %[t1]\n\t"
            "sbbq 16(%[b]), %[t2]\n\t"
            "sbbq 24(%[b]), %[t3]\n\t"
            "sbbq %[b], %[b]\n\t"
            "movq %[b], %[s0]\n\t"
            "andq %[p0], %[s0]\n\t"
            "movq %[b], %[s1]\n\t"
            "andq %[p1], %[s1]\n\t"
            "movq %[b], %[a]\n\t"
            "andq %[p2], %[a]\n\t"
            "andq %[p3], %[b]\n\t"
            "addq %[s0], %[t0]\n\t"
            "adcq %[s1], %[t1]\n\t"
            "adcq %[a], %[t2]\n\t"
            "adcq %[b], %[t3]\n\t"
            : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [s0] "=&r"(s0), [s1] "=&r"(s1),
              [a] "+r"(ap), [b] "+r"(bp)
            : [p0] "m"(p[0]), [p1] "m"(p[1]), [p2] "m"(p[2]), [p3] "m"(p[3]), "m"(*(const uint64_t(*)[4])a),
              "m"(*(const uint64_t(*)[4])b)
            : "cc");
    (void)s0, (void)s1, (void)ap, (void)bp;
    r[0] = t0, r[1] = t1, r[2] = t2, r[3] = t3;
}

ZK_X86_ALWAYS_INLINE void zk_x86_mod_add6(uint64_t r[6], const uint64_t a[6], const uint64_t b[6],
                                          const uint64_t p[6]) {
    uint64_t t0, t1, t2, t3, t4, t5, s0, s1, s2, s3;
    const uint64_t *ap = a, *bp = b;
    __asm__("movq 0(%[a]), %[t0]\n\t"
            "movq 8(%[a]), %[t1]\n\t"
            "movq 16(%[a]), %[t2]\n\t"
            "movq 24(%[a]), %[t3]\n\t"
            "movq 32(%[a]), %[t4]\n\t"
            "movq 40(%[a]), %[t5]\n\t"
            "addq 0(%[b]), %[t0]\n\t"
            "adcq 8(%[b]), %[t1]\n\t"
            "adcq 16(%[b]), %[t2]\n\t"
            "adcq 24(%[b]), %[t3]\n\t"
            "adcq 32(%[b]), %[t4]\n\t"
            "adcq 40(%[b]), %[t5]\n\t"
            "movq %[t0], %[s0]\n\t"
            "subq %[p0], %[s0]\n\t"
            "movq %[t1], %[s1]\n\t"
            "sbbq %[p1], %[s1]\n\t"
            "movq %[t2], %[s2]\n\t"
            "sbbq %[p2], %[s2]\n\t"
            "movq %[t3], %[s3]\n\t"
            "sbbq %[p3], %[s3]\n\t"
            "movq %[t4], %[a]\n\t"
            "sbbq %[p4], %[a]\n\t"
            "movq %[t5], %[b]\n\t"
            "sbbq %[p5], %[b]\n\t"
            "cmovncq %[s0], %[t0]\n\t"
            "cmovncq %[s1], %[t1]\n\t"
            "cmovncq %[s2], %[t2]\n\t"
            "cmovncq %[s3], %[t3]\n\t"
            "cmovncq %[a], %[t4]\n\t"
            "cmovncq %[b], %[t5]\n\t"
            : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4), [t5] "=&r"(t5),
              [s0] "=&r"(s0), [s1] "=&r"(s1), [s2] "=&r"(s2), [s3] "=&r"(s3), [a] "+r"(ap), [b] "+r"(bp)
            : [p0] "m"(p[0]), [p1] "m"(p[1]), [p2] "m"(p[2]), [p3] "m"(p[3]), [p4] "m"(p[4]), [p5] "m"(p[5]),
              "m"(*(const uint64_t(*)[6])a), "m"(*(const uint64_t(*)[6])b)
            : "cc");
    (void)s0, (void)s1, (void)s2, (void)s3, (void)ap, (void)bp;
    r[0] = t0, r[1] = t1, r[2] = t2, r[3] = t3, r[4] = t4, r[5] = t5;
}

ZK_X86_ALWAYS_INLINE void zk_x86_mod_sub6(uint64_t r[6], const uint64_t a[6], const uint64_t b[6],
                                          const uint64_t p[6]) {
    uint64_t t0, t1, t2, t3, t4, t5, s0, s1, s2, s3;
    const uint64_t *ap = a, *bp = b;
    __asm__("movq 0(%[a]), %[t0]\n\t"
            "movq 8(%[a]), %[t1]\n\t"
            "movq 16(%[a]), %[t2]\n\t"
            "movq 24(%[a]), %[t3]\n\t"
            "movq 32(%[a]), %[t4]\n\t"
            "movq 40(%[a]), %[t5]\n\t"
            "subq 0(%[b]), %[t0]\n\t"
            "sbbq 8(%[b]), %[t1]\n\t"
            "sbbq 16(%[b]), %[t2]\n\t"
            "sbbq 24(%[b]), %[t3]\n\t"
            "sbbq 32(%[b]), %[t4]\n\t"
            "sbbq 40(%[b]), %[t5]\n\t"
            "sbbq %[b], %[b]\n\t"
            "movq %[b], %[s0]\n\t"
            "andq %[p0], %[s0]\n\t"
            "movq %[b], %[s1]\n\t"
            "andq %[p1], %[s1]\n\t"
            "movq %[b], %[s2]\n\t"
            "andq %[p2], %[s2]\n\t"
            "movq %[b], %[s3]\n\t"
            "andq %[p3], %[s3]\n\t"
            "movq %[b], %[a]\n\t"
            "andq %[p4], %[a]\n\t"
            "andq %[p5], %[b]\n\t"
            "addq %[s0], %[t0]\n\t"
            "adcq %[s1], %[t1]\n\t"
            "adcq %[s2], %[t2]\n\t"
            "adcq %[s3], %[t3]\n\t"
            "adcq %[a], %[t4]\n\t"
            "adcq %[b], %[t5]\n\t"
            : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4), [t5] "=&r"(t5),
              [s0] "=&r"(s0), [s1] "=&r"(s1), [s2] "=&r"(s2), [s3] "=&r"(s3), [a] "+r"(ap), [b] "+r"(bp)
            : [p0] "m"(p[0]), [p1] "m"(p[1]), [p2] "m"(p[2]), [p3] "m"(p[3]), [p4] "m"(p[4]), [p5] "m"(p[5]),
              "m"(*(const uint64_t(*)[6])a), "m"(*(const uint64_t(*)[6])b)
            : "cc");
    (void)s0, (void)s1, (void)s2, (void)s3, (void)ap, (void)bp;
    r[0] = t0, r[1] = t1, r[2] = t2, r[3] = t3, r[4] = t4, r[5] = t5;
}

/* One Montgomery reduction round of zk_x86_mont_sqr4 on w0..w3 (the low half of the square):
 * m = w0·inv, (w0..w3) <- (w0..w3 + m·p) / 2^64, the top word taking both carries. */
#define ZK_X86_SQR4_REDC_ROUND                                                                                         \
    "movq %[w0], %%rdx\n\t"                                                                                            \
    "imulq %[inv], %%rdx\n\t"                                                                                          \
    "xorl %k[lo], %k[lo]\n\t"                                                                                          \
    "mulxq %[p0], %[lo], %[hi]\n\t"                                                                                    \
    "adcxq %[w0], %[lo]\n\t"                                                                                           \
    "movq %[hi], %[w0]\n\t"                                                                                            \
    "adcxq %[w1], %[w0]\n\t"                                                                                           \
    "mulxq %[p1], %[lo], %[w1]\n\t"                                                                                    \
    "adoxq %[lo], %[w0]\n\t"                                                                                           \
    "adcxq %[w2], %[w1]\n\t"                                                                                           \
    "mulxq %[p2], %[lo], %[w2]\n\t"                                                                                    \
    "adoxq %[lo], %[w1]\n\t"                                                                                           \
    "adcxq %[w3], %[w2]\n\t"                                                                                           \
    "mulxq %[p3], %[lo], %[w3]\n\t"                                                                                    \
    "adoxq %[lo], %[w2]\n\t"                                                                                           \
    "movl $0, %k[lo]\n\t"                                                                                              \
    "adcxq %[lo], %[w3]\n\t"                                                                                           \
    "adoxq %[lo], %[w3]\n\t"

/* r = a^2/2^256 mod p, for a < p < 2^255 with p[3] < 2^63 - 1: the 8-word square from the 6 cross
 * products (doubled on the CF chain) and the 4 squares (added on the OF chain), 10 MULX instead of
 * 16; then the low half is Montgomery-reduced in place (4 rounds as in zk_x86_mont_mul4, leaving
 * a value <= p), the high half (< p) added, and p subtracted once if the sum is >= p. */
ZK_X86_ALWAYS_INLINE void zk_x86_mont_sqr4(uint64_t r[4], const uint64_t a[4], const uint64_t p[4], uint64_t inv) {
    uint64_t w0, w1, w2, w3, w4, w5, w6, w7, lo, hi, rdx;
    __asm__("movq 0(%[a]), %%rdx\n\t"
            "xorl %k[lo], %k[lo]\n\t"
            "mulxq 8(%[a]), %[w1], %[w2]\n\t"
            "mulxq 16(%[a]), %[lo], %[w3]\n\t"
            "adoxq %[lo], %[w2]\n\t"
            "mulxq 24(%[a]), %[lo], %[w4]\n\t"
            "adoxq %[lo], %[w3]\n\t"
            "movl $0, %k[lo]\n\t"
            "adoxq %[lo], %[w4]\n\t"
            "movq 8(%[a]), %%rdx\n\t"
            "xorl %k[lo], %k[lo]\n\t"
            "mulxq 16(%[a]), %[lo], %[hi]\n\t"
            "adoxq %[lo], %[w3]\n\t"
            "adcxq %[hi], %[w4]\n\t"
            "mulxq 24(%[a]), %[lo], %[w5]\n\t"
            "adoxq %[lo], %[w4]\n\t"
            "movl $0, %k[lo]\n\t"
            "adcxq %[lo], %[w5]\n\t"
            "adoxq %[lo], %[w5]\n\t"
            "movq 16(%[a]), %%rdx\n\t"
            "xorl %k[lo], %k[lo]\n\t"
            "mulxq 24(%[a]), %[lo], %[w6]\n\t"
            "adoxq %[lo], %[w5]\n\t"
            "movl $0, %k[lo]\n\t"
            "adcxq %[lo], %[w6]\n\t"
            "adoxq %[lo], %[w6]\n\t"
            "movl $0, %k[w7]\n\t"
            "movq 0(%[a]), %%rdx\n\t"
            "xorl %k[lo], %k[lo]\n\t"
            "mulxq %%rdx, %[w0], %[hi]\n\t"
            "adcxq %[w1], %[w1]\n\t"
            "adoxq %[hi], %[w1]\n\t"
            "movq 8(%[a]), %%rdx\n\t"
            "mulxq %%rdx, %[lo], %[hi]\n\t"
            "adcxq %[w2], %[w2]\n\t"
            "adoxq %[lo], %[w2]\n\t"
            "adcxq %[w3], %[w3]\n\t"
            "adoxq %[hi], %[w3]\n\t"
            "movq 16(%[a]), %%rdx\n\t"
            "mulxq %%rdx, %[lo], %[hi]\n\t"
            "adcxq %[w4], %[w4]\n\t"
            "adoxq %[lo], %[w4]\n\t"
            "adcxq %[w5], %[w5]\n\t"
            "adoxq %[hi], %[w5]\n\t"
            "movq 24(%[a]), %%rdx\n\t"
            "mulxq %%rdx, %[lo], %[hi]\n\t"
            "adcxq %[w6], %[w6]\n\t"
            "adoxq %[lo], %[w6]\n\t"
            "adcxq %[w7], %[w7]\n\t"
            "adoxq %[hi], %[w7]\n\t"
            // clang-format off
            ZK_X86_SQR4_REDC_ROUND
            ZK_X86_SQR4_REDC_ROUND
            ZK_X86_SQR4_REDC_ROUND
            ZK_X86_SQR4_REDC_ROUND
            // clang-format on
            "addq %[w4], %[w0]\n\t"
            "adcq %[w5], %[w1]\n\t"
            "adcq %[w6], %[w2]\n\t"
            "adcq %[w7], %[w3]\n\t"
            "movq %[w0], %[w4]\n\t"
            "subq %[p0], %[w4]\n\t"
            "movq %[w1], %[w5]\n\t"
            "sbbq %[p1], %[w5]\n\t"
            "movq %[w2], %[w6]\n\t"
            "sbbq %[p2], %[w6]\n\t"
            "movq %[w3], %[w7]\n\t"
            "sbbq %[p3], %[w7]\n\t"
            "cmovncq %[w4], %[w0]\n\t"
            "cmovncq %[w5], %[w1]\n\t"
            "cmovncq %[w6], %[w2]\n\t"
            "cmovncq %[w7], %[w3]\n\t"
            : [w0] "=&r"(w0), [w1] "=&r"(w1), [w2] "=&r"(w2), [w3] "=&r"(w3), [w4] "=&r"(w4), [w5] "=&r"(w5),
              [w6] "=&r"(w6), [w7] "=&r"(w7), [lo] "=&r"(lo), [hi] "=&r"(hi), "=&d"(rdx)
            : [a] "r"(a), [p0] "m"(p[0]), [p1] "m"(p[1]), [p2] "m"(p[2]), [p3] "m"(p[3]), [inv] "rm"(inv),
              "m"(*(const uint64_t(*)[4])a)
            : "cc");
    (void)w4, (void)w5, (void)w6, (void)w7, (void)lo, (void)hi, (void)rdx;
    r[0] = w0, r[1] = w1, r[2] = w2, r[3] = w3;
}
