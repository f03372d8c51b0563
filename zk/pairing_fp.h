/* Fq and Fq2 operations for the pairing code, on the same types and values as zk/field.h
 * (bn_fq_t, bls_fq_t, bn_fq2_t, bls_fq2_t). When zk/field.h is built with its own x86-64 kernels
 * (ZK_ASM, zk/fp_x86_64.h) they are used as they are; otherwise this header supplies carry-flag
 * additions and a CIOS multiplication with two carry chains (MULX/ADCX/ADOX inline assembly) on CPUs
 * that have BMI2 and ADX, falling back to zk/field.h's portable multiplication. Instantiates
 * zk/fpx_tmpl.h as bnx_* and blsx_*. tests/test_pairing.c checks the kernels against zk/field.h. */
#pragma once
#include <stdint.h>
#include <x86intrin.h>

#include "field.h"

/* Set once at start-up (zk/pairing_bn.c) from CPUID. */
extern int zkx_have_adx;

/* r = a*b/R mod p (result < 2p: the caller reduces once), CIOS with two carry chains (ADX). */
static inline void zkx_mont_mul4_adx(unsigned long long *r, const uint64_t *a, const uint64_t *b,
                                     const uint64_t *p_inv) {
    uint64_t t0, t1, t2, t3, t4, lo, hi;
    __asm__ volatile(
        "xorl %k[t0], %k[t0]\n\t"
        "xorl %k[t1], %k[t1]\n\t"
        "xorl %k[t2], %k[t2]\n\t"
        "xorl %k[t3], %k[t3]\n\t"
        "xorl %k[t4], %k[t4]\n\t"
        "movq 0(%[b]), %%rdx\n\t"
        "mulxq 0(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t0]\n\t"
        "adcxq %[hi], %[t1]\n\t"
        "mulxq 8(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t1]\n\t"
        "adcxq %[hi], %[t2]\n\t"
        "mulxq 16(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t2]\n\t"
        "adcxq %[hi], %[t3]\n\t"
        "mulxq 24(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t3]\n\t"
        "adcxq %[hi], %[t4]\n\t"
        "movl $0, %k[lo]\n\t"
        "adoxq %[lo], %[t4]\n\t"
        "movq %[t0], %%rdx\n\t"
        "imulq 32(%[p]), %%rdx\n\t"
        "xorl %k[lo], %k[lo]\n\t"
        "mulxq 0(%[p]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t0]\n\t"
        "adcxq %[hi], %[t1]\n\t"
        "mulxq 8(%[p]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t1]\n\t"
        "adcxq %[hi], %[t2]\n\t"
        "mulxq 16(%[p]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t2]\n\t"
        "adcxq %[hi], %[t3]\n\t"
        "mulxq 24(%[p]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t3]\n\t"
        "adcxq %[hi], %[t4]\n\t"
        "movl $0, %k[lo]\n\t"
        "adoxq %[lo], %[t4]\n\t"
        "xorl %k[t0], %k[t0]\n\t"
        "movq 8(%[b]), %%rdx\n\t"
        "mulxq 0(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t1]\n\t"
        "adcxq %[hi], %[t2]\n\t"
        "mulxq 8(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t2]\n\t"
        "adcxq %[hi], %[t3]\n\t"
        "mulxq 16(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t3]\n\t"
        "adcxq %[hi], %[t4]\n\t"
        "mulxq 24(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t4]\n\t"
        "adcxq %[hi], %[t0]\n\t"
        "movl $0, %k[lo]\n\t"
        "adoxq %[lo], %[t0]\n\t"
        "movq %[t1], %%rdx\n\t"
        "imulq 32(%[p]), %%rdx\n\t"
        "xorl %k[lo], %k[lo]\n\t"
        "mulxq 0(%[p]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t1]\n\t"
        "adcxq %[hi], %[t2]\n\t"
        "mulxq 8(%[p]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t2]\n\t"
        "adcxq %[hi], %[t3]\n\t"
        "mulxq 16(%[p]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t3]\n\t"
        "adcxq %[hi], %[t4]\n\t"
        "mulxq 24(%[p]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t4]\n\t"
        "adcxq %[hi], %[t0]\n\t"
        "movl $0, %k[lo]\n\t"
        "adoxq %[lo], %[t0]\n\t"
        "xorl %k[t1], %k[t1]\n\t"
        "movq 16(%[b]), %%rdx\n\t"
        "mulxq 0(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t2]\n\t"
        "adcxq %[hi], %[t3]\n\t"
        "mulxq 8(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t3]\n\t"
        "adcxq %[hi], %[t4]\n\t"
        "mulxq 16(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t4]\n\t"
        "adcxq %[hi], %[t0]\n\t"
        "mulxq 24(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t0]\n\t"
        "adcxq %[hi], %[t1]\n\t"
        "movl $0, %k[lo]\n\t"
        "adoxq %[lo], %[t1]\n\t"
        "movq %[t2], %%rdx\n\t"
        "imulq 32(%[p]), %%rdx\n\t"
        "xorl %k[lo], %k[lo]\n\t"
        "mulxq 0(%[p]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t2]\n\t"
        "adcxq %[hi], %[t3]\n\t"
        "mulxq 8(%[p]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t3]\n\t"
        "adcxq %[hi], %[t4]\n\t"
        "mulxq 16(%[p]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t4]\n\t"
        "adcxq %[hi], %[t0]\n\t"
        "mulxq 24(%[p]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t0]\n\t"
        "adcxq %[hi], %[t1]\n\t"
        "movl $0, %k[lo]\n\t"
        "adoxq %[lo], %[t1]\n\t"
        "xorl %k[t2], %k[t2]\n\t"
        "movq 24(%[b]), %%rdx\n\t"
        "mulxq 0(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t3]\n\t"
        "adcxq %[hi], %[t4]\n\t"
        "mulxq 8(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t4]\n\t"
        "adcxq %[hi], %[t0]\n\t"
        "mulxq 16(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t0]\n\t"
        "adcxq %[hi], %[t1]\n\t"
        "mulxq 24(%[a]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t1]\n\t"
        "adcxq %[hi], %[t2]\n\t"
        "movl $0, %k[lo]\n\t"
        "adoxq %[lo], %[t2]\n\t"
        "movq %[t3], %%rdx\n\t"
        "imulq 32(%[p]), %%rdx\n\t"
        "xorl %k[lo], %k[lo]\n\t"
        "mulxq 0(%[p]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t3]\n\t"
        "adcxq %[hi], %[t4]\n\t"
        "mulxq 8(%[p]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t4]\n\t"
        "adcxq %[hi], %[t0]\n\t"
        "mulxq 16(%[p]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t0]\n\t"
        "adcxq %[hi], %[t1]\n\t"
        "mulxq 24(%[p]), %[lo], %[hi]\n\t"
        "adoxq %[lo], %[t1]\n\t"
        "adcxq %[hi], %[t2]\n\t"
        "movl $0, %k[lo]\n\t"
        "adoxq %[lo], %[t2]\n\t"
        "movq %[t4], 0(%[r])\n\t"
        "movq %[t0], 8(%[r])\n\t"
        "movq %[t1], 16(%[r])\n\t"
        "movq %[t2], 24(%[r])\n\t"
        : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4), [lo] "=&r"(lo), [hi] "=&r"(hi)
        : [a] "r"(a), [b] "r"(b), [p] "r"(p_inv), [r] "r"(r)
        : "rdx", "cc", "memory");
}

/* r = a*b/R mod p (result < 2p: the caller reduces once), CIOS with two carry chains (ADX). */
static inline void zkx_mont_mul6_adx(unsigned long long *r, const uint64_t *a, const uint64_t *b,
                                     const uint64_t *p_inv) {
    uint64_t t0, t1, t2, t3, t4, t5, t6, lo, hi;
    __asm__ volatile("xorl %k[t0], %k[t0]\n\t"
                     "xorl %k[t1], %k[t1]\n\t"
                     "xorl %k[t2], %k[t2]\n\t"
                     "xorl %k[t3], %k[t3]\n\t"
                     "xorl %k[t4], %k[t4]\n\t"
                     "xorl %k[t5], %k[t5]\n\t"
                     "xorl %k[t6], %k[t6]\n\t"
                     "movq 0(%[b]), %%rdx\n\t"
                     "mulxq 0(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t0]\n\t"
                     "adcxq %[hi], %[t1]\n\t"
                     "mulxq 8(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t1]\n\t"
                     "adcxq %[hi], %[t2]\n\t"
                     "mulxq 16(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t2]\n\t"
                     "adcxq %[hi], %[t3]\n\t"
                     "mulxq 24(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t3]\n\t"
                     "adcxq %[hi], %[t4]\n\t"
                     "mulxq 32(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t4]\n\t"
                     "adcxq %[hi], %[t5]\n\t"
                     "mulxq 40(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t5]\n\t"
                     "adcxq %[hi], %[t6]\n\t"
                     "movl $0, %k[lo]\n\t"
                     "adoxq %[lo], %[t6]\n\t"
                     "movq %[t0], %%rdx\n\t"
                     "imulq 48(%[p]), %%rdx\n\t"
                     "xorl %k[lo], %k[lo]\n\t"
                     "mulxq 0(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t0]\n\t"
                     "adcxq %[hi], %[t1]\n\t"
                     "mulxq 8(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t1]\n\t"
                     "adcxq %[hi], %[t2]\n\t"
                     "mulxq 16(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t2]\n\t"
                     "adcxq %[hi], %[t3]\n\t"
                     "mulxq 24(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t3]\n\t"
                     "adcxq %[hi], %[t4]\n\t"
                     "mulxq 32(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t4]\n\t"
                     "adcxq %[hi], %[t5]\n\t"
                     "mulxq 40(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t5]\n\t"
                     "adcxq %[hi], %[t6]\n\t"
                     "movl $0, %k[lo]\n\t"
                     "adoxq %[lo], %[t6]\n\t"
                     "xorl %k[t0], %k[t0]\n\t"
                     "movq 8(%[b]), %%rdx\n\t"
                     "mulxq 0(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t1]\n\t"
                     "adcxq %[hi], %[t2]\n\t"
                     "mulxq 8(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t2]\n\t"
                     "adcxq %[hi], %[t3]\n\t"
                     "mulxq 16(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t3]\n\t"
                     "adcxq %[hi], %[t4]\n\t"
                     "mulxq 24(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t4]\n\t"
                     "adcxq %[hi], %[t5]\n\t"
                     "mulxq 32(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t5]\n\t"
                     "adcxq %[hi], %[t6]\n\t"
                     "mulxq 40(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t6]\n\t"
                     "adcxq %[hi], %[t0]\n\t"
                     "movl $0, %k[lo]\n\t"
                     "adoxq %[lo], %[t0]\n\t"
                     "movq %[t1], %%rdx\n\t"
                     "imulq 48(%[p]), %%rdx\n\t"
                     "xorl %k[lo], %k[lo]\n\t"
                     "mulxq 0(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t1]\n\t"
                     "adcxq %[hi], %[t2]\n\t"
                     "mulxq 8(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t2]\n\t"
                     "adcxq %[hi], %[t3]\n\t"
                     "mulxq 16(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t3]\n\t"
                     "adcxq %[hi], %[t4]\n\t"
                     "mulxq 24(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t4]\n\t"
                     "adcxq %[hi], %[t5]\n\t"
                     "mulxq 32(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t5]\n\t"
                     "adcxq %[hi], %[t6]\n\t"
                     "mulxq 40(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t6]\n\t"
                     "adcxq %[hi], %[t0]\n\t"
                     "movl $0, %k[lo]\n\t"
                     "adoxq %[lo], %[t0]\n\t"
                     "xorl %k[t1], %k[t1]\n\t"
                     "movq 16(%[b]), %%rdx\n\t"
                     "mulxq 0(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t2]\n\t"
                     "adcxq %[hi], %[t3]\n\t"
                     "mulxq 8(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t3]\n\t"
                     "adcxq %[hi], %[t4]\n\t"
                     "mulxq 16(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t4]\n\t"
                     "adcxq %[hi], %[t5]\n\t"
                     "mulxq 24(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t5]\n\t"
                     "adcxq %[hi], %[t6]\n\t"
                     "mulxq 32(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t6]\n\t"
                     "adcxq %[hi], %[t0]\n\t"
                     "mulxq 40(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t0]\n\t"
                     "adcxq %[hi], %[t1]\n\t"
                     "movl $0, %k[lo]\n\t"
                     "adoxq %[lo], %[t1]\n\t"
                     "movq %[t2], %%rdx\n\t"
                     "imulq 48(%[p]), %%rdx\n\t"
                     "xorl %k[lo], %k[lo]\n\t"
                     "mulxq 0(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t2]\n\t"
                     "adcxq %[hi], %[t3]\n\t"
                     "mulxq 8(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t3]\n\t"
                     "adcxq %[hi], %[t4]\n\t"
                     "mulxq 16(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t4]\n\t"
                     "adcxq %[hi], %[t5]\n\t"
                     "mulxq 24(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t5]\n\t"
                     "adcxq %[hi], %[t6]\n\t"
                     "mulxq 32(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t6]\n\t"
                     "adcxq %[hi], %[t0]\n\t"
                     "mulxq 40(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t0]\n\t"
                     "adcxq %[hi], %[t1]\n\t"
                     "movl $0, %k[lo]\n\t"
                     "adoxq %[lo], %[t1]\n\t"
                     "xorl %k[t2], %k[t2]\n\t"
                     "movq 24(%[b]), %%rdx\n\t"
                     "mulxq 0(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t3]\n\t"
                     "adcxq %[hi], %[t4]\n\t"
                     "mulxq 8(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t4]\n\t"
                     "adcxq %[hi], %[t5]\n\t"
                     "mulxq 16(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t5]\n\t"
                     "adcxq %[hi], %[t6]\n\t"
                     "mulxq 24(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t6]\n\t"
                     "adcxq %[hi], %[t0]\n\t"
                     "mulxq 32(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t0]\n\t"
                     "adcxq %[hi], %[t1]\n\t"
                     "mulxq 40(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t1]\n\t"
                     "adcxq %[hi], %[t2]\n\t"
                     "movl $0, %k[lo]\n\t"
                     "adoxq %[lo], %[t2]\n\t"
                     "movq %[t3], %%rdx\n\t"
                     "imulq 48(%[p]), %%rdx\n\t"
                     "xorl %k[lo], %k[lo]\n\t"
                     "mulxq 0(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t3]\n\t"
                     "adcxq %[hi], %[t4]\n\t"
                     "mulxq 8(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t4]\n\t"
                     "adcxq %[hi], %[t5]\n\t"
                     "mulxq 16(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t5]\n\t"
                     "adcxq %[hi], %[t6]\n\t"
                     "mulxq 24(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t6]\n\t"
                     "adcxq %[hi], %[t0]\n\t"
                     "mulxq 32(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t0]\n\t"
                     "adcxq %[hi], %[t1]\n\t"
                     "mulxq 40(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t1]\n\t"
                     "adcxq %[hi], %[t2]\n\t"
                     "movl $0, %k[lo]\n\t"
                     "adoxq %[lo], %[t2]\n\t"
                     "xorl %k[t3], %k[t3]\n\t"
                     "movq 32(%[b]), %%rdx\n\t"
                     "mulxq 0(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t4]\n\t"
                     "adcxq %[hi], %[t5]\n\t"
                     "mulxq 8(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t5]\n\t"
                     "adcxq %[hi], %[t6]\n\t"
                     "mulxq 16(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t6]\n\t"
                     "adcxq %[hi], %[t0]\n\t"
                     "mulxq 24(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t0]\n\t"
                     "adcxq %[hi], %[t1]\n\t"
                     "mulxq 32(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t1]\n\t"
                     "adcxq %[hi], %[t2]\n\t"
                     "mulxq 40(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t2]\n\t"
                     "adcxq %[hi], %[t3]\n\t"
                     "movl $0, %k[lo]\n\t"
                     "adoxq %[lo], %[t3]\n\t"
                     "movq %[t4], %%rdx\n\t"
                     "imulq 48(%[p]), %%rdx\n\t"
                     "xorl %k[lo], %k[lo]\n\t"
                     "mulxq 0(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t4]\n\t"
                     "adcxq %[hi], %[t5]\n\t"
                     "mulxq 8(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t5]\n\t"
                     "adcxq %[hi], %[t6]\n\t"
                     "mulxq 16(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t6]\n\t"
                     "adcxq %[hi], %[t0]\n\t"
                     "mulxq 24(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t0]\n\t"
                     "adcxq %[hi], %[t1]\n\t"
                     "mulxq 32(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t1]\n\t"
                     "adcxq %[hi], %[t2]\n\t"
                     "mulxq 40(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t2]\n\t"
                     "adcxq %[hi], %[t3]\n\t"
                     "movl $0, %k[lo]\n\t"
                     "adoxq %[lo], %[t3]\n\t"
                     "xorl %k[t4], %k[t4]\n\t"
                     "movq 40(%[b]), %%rdx\n\t"
                     "mulxq 0(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t5]\n\t"
                     "adcxq %[hi], %[t6]\n\t"
                     "mulxq 8(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t6]\n\t"
                     "adcxq %[hi], %[t0]\n\t"
                     "mulxq 16(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t0]\n\t"
                     "adcxq %[hi], %[t1]\n\t"
                     "mulxq 24(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t1]\n\t"
                     "adcxq %[hi], %[t2]\n\t"
                     "mulxq 32(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t2]\n\t"
                     "adcxq %[hi], %[t3]\n\t"
                     "mulxq 40(%[a]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t3]\n\t"
                     "adcxq %[hi], %[t4]\n\t"
                     "movl $0, %k[lo]\n\t"
                     "adoxq %[lo], %[t4]\n\t"
                     "movq %[t5], %%rdx\n\t"
                     "imulq 48(%[p]), %%rdx\n\t"
                     "xorl %k[lo], %k[lo]\n\t"
                     "mulxq 0(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t5]\n\t"
                     "adcxq %[hi], %[t6]\n\t"
                     "mulxq 8(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t6]\n\t"
                     "adcxq %[hi], %[t0]\n\t"
                     "mulxq 16(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t0]\n\t"
                     "adcxq %[hi], %[t1]\n\t"
                     "mulxq 24(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t1]\n\t"
                     "adcxq %[hi], %[t2]\n\t"
                     "mulxq 32(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t2]\n\t"
                     "adcxq %[hi], %[t3]\n\t"
                     "mulxq 40(%[p]), %[lo], %[hi]\n\t"
                     "adoxq %[lo], %[t3]\n\t"
                     "adcxq %[hi], %[t4]\n\t"
                     "movl $0, %k[lo]\n\t"
                     "adoxq %[lo], %[t4]\n\t"
                     "movq %[t6], 0(%[r])\n\t"
                     "movq %[t0], 8(%[r])\n\t"
                     "movq %[t1], 16(%[r])\n\t"
                     "movq %[t2], 24(%[r])\n\t"
                     "movq %[t3], 32(%[r])\n\t"
                     "movq %[t4], 40(%[r])\n\t"
                     : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4), [t5] "=&r"(t5),
                       [t6] "=&r"(t6), [lo] "=&r"(lo), [hi] "=&r"(hi)
                     : [a] "r"(a), [b] "r"(b), [p] "r"(p_inv), [r] "r"(r)
                     : "rdx", "cc", "memory");
}

static const uint64_t zkx_bn_p_inv[5] = {0x3c208c16d87cfd47ULL, 0x97816a916871ca8dULL, 0xb85045b68181585dULL,
                                         0x30644e72e131a029ULL, BN_FQ_INV};
static const uint64_t zkx_bls_p_inv[7] = {0xb9feffffffffaaabULL,
                                          0x1eabfffeb153ffffULL,
                                          0x6730d2a0f6b0f624ULL,
                                          0x64774b84f38512bfULL,
                                          0x4b1ba7b6434bacd7ULL,
                                          0x1a0111ea397fe69aULL,
                                          BLS_FQ_INV};

/* Additions, explicitly unrolled (GCC keeps the carry flag in a register then). */
static inline __attribute__((always_inline)) void zkx_reduce4(uint64_t *r, const unsigned long long *t) {
    unsigned long long t0 = t[0], t1 = t[1], t2 = t[2], t3 = t[3];
    unsigned long long s0, s1, s2, s3;
    unsigned char br = 0;
    br = _subborrow_u64(br, t0, zkx_bn_p_inv[0], &s0);
    br = _subborrow_u64(br, t1, zkx_bn_p_inv[1], &s1);
    br = _subborrow_u64(br, t2, zkx_bn_p_inv[2], &s2);
    br = _subborrow_u64(br, t3, zkx_bn_p_inv[3], &s3);
    uint64_t m = 0 - (uint64_t)br;
    r[0] = (t0 & m) | (s0 & ~m);
    r[1] = (t1 & m) | (s1 & ~m);
    r[2] = (t2 & m) | (s2 & ~m);
    r[3] = (t3 & m) | (s3 & ~m);
}
static inline __attribute__((always_inline)) void zkx_add4(uint64_t *r, const uint64_t *a, const uint64_t *b) {
    unsigned long long t0, t1, t2, t3;
    unsigned char c = 0;
    c = _addcarry_u64(c, a[0], b[0], &t0);
    c = _addcarry_u64(c, a[1], b[1], &t1);
    c = _addcarry_u64(c, a[2], b[2], &t2);
    c = _addcarry_u64(c, a[3], b[3], &t3);
    (void)c;
    unsigned long long s0, s1, s2, s3;
    unsigned char br = 0;
    br = _subborrow_u64(br, t0, zkx_bn_p_inv[0], &s0);
    br = _subborrow_u64(br, t1, zkx_bn_p_inv[1], &s1);
    br = _subborrow_u64(br, t2, zkx_bn_p_inv[2], &s2);
    br = _subborrow_u64(br, t3, zkx_bn_p_inv[3], &s3);
    uint64_t m = 0 - (uint64_t)br;
    r[0] = (t0 & m) | (s0 & ~m);
    r[1] = (t1 & m) | (s1 & ~m);
    r[2] = (t2 & m) | (s2 & ~m);
    r[3] = (t3 & m) | (s3 & ~m);
}
static inline __attribute__((always_inline)) void zkx_sub4(uint64_t *r, const uint64_t *a, const uint64_t *b) {
    unsigned long long t0, t1, t2, t3, u0, u1, u2, u3;
    unsigned char br = 0, c = 0;
    br = _subborrow_u64(br, a[0], b[0], &t0);
    br = _subborrow_u64(br, a[1], b[1], &t1);
    br = _subborrow_u64(br, a[2], b[2], &t2);
    br = _subborrow_u64(br, a[3], b[3], &t3);
    uint64_t m = 0 - (uint64_t)br;
    c = _addcarry_u64(c, t0, zkx_bn_p_inv[0] & m, &u0);
    c = _addcarry_u64(c, t1, zkx_bn_p_inv[1] & m, &u1);
    c = _addcarry_u64(c, t2, zkx_bn_p_inv[2] & m, &u2);
    c = _addcarry_u64(c, t3, zkx_bn_p_inv[3] & m, &u3);
    (void)c;
    r[0] = u0;
    r[1] = u1;
    r[2] = u2;
    r[3] = u3;
}

static inline __attribute__((always_inline)) void zkx_reduce6(uint64_t *r, const unsigned long long *t) {
    unsigned long long t0 = t[0], t1 = t[1], t2 = t[2], t3 = t[3], t4 = t[4], t5 = t[5];
    unsigned long long s0, s1, s2, s3, s4, s5;
    unsigned char br = 0;
    br = _subborrow_u64(br, t0, zkx_bls_p_inv[0], &s0);
    br = _subborrow_u64(br, t1, zkx_bls_p_inv[1], &s1);
    br = _subborrow_u64(br, t2, zkx_bls_p_inv[2], &s2);
    br = _subborrow_u64(br, t3, zkx_bls_p_inv[3], &s3);
    br = _subborrow_u64(br, t4, zkx_bls_p_inv[4], &s4);
    br = _subborrow_u64(br, t5, zkx_bls_p_inv[5], &s5);
    uint64_t m = 0 - (uint64_t)br;
    r[0] = (t0 & m) | (s0 & ~m);
    r[1] = (t1 & m) | (s1 & ~m);
    r[2] = (t2 & m) | (s2 & ~m);
    r[3] = (t3 & m) | (s3 & ~m);
    r[4] = (t4 & m) | (s4 & ~m);
    r[5] = (t5 & m) | (s5 & ~m);
}
static inline __attribute__((always_inline)) void zkx_add6(uint64_t *r, const uint64_t *a, const uint64_t *b) {
    unsigned long long t0, t1, t2, t3, t4, t5;
    unsigned char c = 0;
    c = _addcarry_u64(c, a[0], b[0], &t0);
    c = _addcarry_u64(c, a[1], b[1], &t1);
    c = _addcarry_u64(c, a[2], b[2], &t2);
    c = _addcarry_u64(c, a[3], b[3], &t3);
    c = _addcarry_u64(c, a[4], b[4], &t4);
    c = _addcarry_u64(c, a[5], b[5], &t5);
    (void)c;
    unsigned long long s0, s1, s2, s3, s4, s5;
    unsigned char br = 0;
    br = _subborrow_u64(br, t0, zkx_bls_p_inv[0], &s0);
    br = _subborrow_u64(br, t1, zkx_bls_p_inv[1], &s1);
    br = _subborrow_u64(br, t2, zkx_bls_p_inv[2], &s2);
    br = _subborrow_u64(br, t3, zkx_bls_p_inv[3], &s3);
    br = _subborrow_u64(br, t4, zkx_bls_p_inv[4], &s4);
    br = _subborrow_u64(br, t5, zkx_bls_p_inv[5], &s5);
    uint64_t m = 0 - (uint64_t)br;
    r[0] = (t0 & m) | (s0 & ~m);
    r[1] = (t1 & m) | (s1 & ~m);
    r[2] = (t2 & m) | (s2 & ~m);
    r[3] = (t3 & m) | (s3 & ~m);
    r[4] = (t4 & m) | (s4 & ~m);
    r[5] = (t5 & m) | (s5 & ~m);
}
static inline __attribute__((always_inline)) void zkx_sub6(uint64_t *r, const uint64_t *a, const uint64_t *b) {
    unsigned long long t0, t1, t2, t3, t4, t5, u0, u1, u2, u3, u4, u5;
    unsigned char br = 0, c = 0;
    br = _subborrow_u64(br, a[0], b[0], &t0);
    br = _subborrow_u64(br, a[1], b[1], &t1);
    br = _subborrow_u64(br, a[2], b[2], &t2);
    br = _subborrow_u64(br, a[3], b[3], &t3);
    br = _subborrow_u64(br, a[4], b[4], &t4);
    br = _subborrow_u64(br, a[5], b[5], &t5);
    uint64_t m = 0 - (uint64_t)br;
    c = _addcarry_u64(c, t0, zkx_bls_p_inv[0] & m, &u0);
    c = _addcarry_u64(c, t1, zkx_bls_p_inv[1] & m, &u1);
    c = _addcarry_u64(c, t2, zkx_bls_p_inv[2] & m, &u2);
    c = _addcarry_u64(c, t3, zkx_bls_p_inv[3] & m, &u3);
    c = _addcarry_u64(c, t4, zkx_bls_p_inv[4] & m, &u4);
    c = _addcarry_u64(c, t5, zkx_bls_p_inv[5] & m, &u5);
    (void)c;
    r[0] = u0;
    r[1] = u1;
    r[2] = u2;
    r[3] = u3;
    r[4] = u4;
    r[5] = u5;
}

#define FX bnx
#define FB bn_fq
#define FX_N 4
#define FX_MUL_ADX zkx_mont_mul4_adx
#define FX_ADD zkx_add4
#define FX_SUB zkx_sub4
#define FX_REDUCE zkx_reduce4
#define FX_P_INV zkx_bn_p_inv
#define FX_MUL_XI(r, a) /* (a0 + a1 u)(9 + u) = (9 a0 - a1) + (a0 + 9 a1) u */                                         \
    do {                                                                                                               \
        bnx_fq_t _t0, _t1;                                                                                             \
        bnx_fq_dbl(&_t0, &(a)->c0);                                                                                    \
        bnx_fq_dbl(&_t0, &_t0);                                                                                        \
        bnx_fq_dbl(&_t0, &_t0);                                                                                        \
        bnx_fq_add(&_t0, &_t0, &(a)->c0);                                                                              \
        bnx_fq_dbl(&_t1, &(a)->c1);                                                                                    \
        bnx_fq_dbl(&_t1, &_t1);                                                                                        \
        bnx_fq_dbl(&_t1, &_t1);                                                                                        \
        bnx_fq_add(&_t1, &_t1, &(a)->c1);                                                                              \
        bnx_fq_sub(&_t0, &_t0, &(a)->c1);                                                                              \
        bnx_fq_add(&(r)->c1, &_t1, &(a)->c0);                                                                          \
        (r)->c0 = _t0;                                                                                                 \
    } while (0)
#include "fpx_tmpl.h"
#undef FX
#undef FB
#undef FX_N
#undef FX_MUL_ADX
#undef FX_ADD
#undef FX_SUB
#undef FX_REDUCE
#undef FX_P_INV
#undef FX_MUL_XI

#define FX blsx
#define FB bls_fq
#define FX_N 6
#define FX_MUL_ADX zkx_mont_mul6_adx
#define FX_ADD zkx_add6
#define FX_SUB zkx_sub6
#define FX_REDUCE zkx_reduce6
#define FX_P_INV zkx_bls_p_inv
#define FX_MUL_XI(r, a) /* (a0 + a1 u)(1 + u) = (a0 - a1) + (a0 + a1) u */                                             \
    do {                                                                                                               \
        blsx_fq_t _t0;                                                                                                 \
        blsx_fq_sub(&_t0, &(a)->c0, &(a)->c1);                                                                         \
        blsx_fq_add(&(r)->c1, &(a)->c0, &(a)->c1);                                                                     \
        (r)->c0 = _t0;                                                                                                 \
    } while (0)
#include "fpx_tmpl.h"
#undef FX
#undef FB
#undef FX_N
#undef FX_MUL_ADX
#undef FX_ADD
#undef FX_SUB
#undef FX_REDUCE
#undef FX_P_INV
#undef FX_MUL_XI
