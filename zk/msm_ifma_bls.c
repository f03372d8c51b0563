/* AVX-512 IFMA batch-affine bucket additions and bucket reductions for G1 and G2 of BLS12-381
 * (zk/msm_ifma.h), eight field elements per vector in 52-bit limbs, from the templates of
 * zk/msm_ifma_tmpl.h.
 *
 * Compiled for every x86-64 build with function-level target attributes only, so the rest of the
 * binary never contains an AVX-512 instruction; zk/kernels.c selects it only where cpuid reports
 * AVX512F + AVX512IFMA and XGETBV says the OS saves the zmm state. */
#include "msm_ifma.h"

#include <stdlib.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include "msm_ifma_tmpl.h"

/* Fq in 6 words, eight limbs; the Fq2 products are calls, as the Fq product is (zk/ifma52.h) */
IFMA_ELEMS(e1x, e2x, v52x, 6, static __attribute__((noinline, target("avx512f,avx512ifma"))))

/* BLS12-381 G1: elements and points by gathers (six words do not transpose as neatly). */
IFMA_FN void e1x_load_seq(e1x_t *r, __mmask8 k, const uint64_t *base, size_t j0, bool one, const v52x_mod_t *m) {
    e1x_gload_seq(r, k, base, j0, one, m);
}
IFMA_FN void e1x_load_pts(e1x_t *x, e1x_t *y, __mmask8 k, const uint64_t *base, size_t j0, const v52x_mod_t *m) {
    e1x_gload_pts(x, y, k, base, j0, m);
}

IFMA_CURVE(bls, e1x, e2x, v52x, 6, bls_fq, BLS_FQ_INV)

#endif /* elsewhere zk/msm_ifma.c has the stubs of both curves */
