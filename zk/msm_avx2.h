/* AVX2 batch-affine bucket additions for BN254 G1 and G2 (zk/msm_tmpl.h's flush, four additions
 * per vector), used while the avx2 kernel set is selected (zk/kernels.h). A flush keeps its prefix
 * products on the stack: 32 KB (G1) or 64 KB (G2) besides the caller's frame. */
#pragma once
#include <stdint.h>

#define ZK_AVX2_BATCH_MAX 1024 /* at most this many additions per call */

/* For j < n: bucket[bidx[j]] += pt[j] (bn_g1_aff_t), where den[j] = pt[j].x - bucket[bidx[j]].x
 * (bn_fq_t) is not zero and the bidx[j] are distinct: one batched inversion, four additions per
 * vector. Exactly the result of the scalar flush. Reads pt and den only below n. Only on a CPU with
 * AVX2 (zk_kernels_avx2). The signature is zk/msm_ifma.h's zk_vec_flush_fn. */
void zk_avx2_bn_g1_flush(void *bucket, const uint32_t *bidx, const void *pt, const void *den, unsigned n);
/* The same for G2: bucket, pt bn_g2_aff_t; den bn_fq2_t. */
void zk_avx2_bn_g2_flush(void *bucket, const uint32_t *bidx, const void *pt, const void *den, unsigned n);
