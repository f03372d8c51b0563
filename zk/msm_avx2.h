/* AVX2 batch-affine bucket additions for BN254 G1 (zk/msm_tmpl.h's flush, four additions per vector),
 * used while the avx2 kernel set is selected (zk/kernels.h). The flush keeps its prefix products
 * on the stack: about 74 KB besides the caller's frame. */
#pragma once
#include <stdint.h>

#define ZK_AVX2_BATCH_MAX 1024 /* at most this many additions per call */

/* For j < n: bucket[bidx[j]] += pt[j] (bn_g1_aff_t), where den[j] = pt[j].x - bucket[bidx[j]].x
 * (bn_fq_t) is not zero and the bidx[j] are distinct: one batched inversion, four additions per
 * vector. Exactly the result of the scalar flush. Reads pt and den only below n. Only on a CPU with
 * AVX2 (zk_kernels_avx2). The signature is zk/msm_ifma.h's zk_vec_flush_fn. */
void zk_avx2_bn_g1_flush(void *bucket, const uint32_t *bidx, const void *pt, const void *den, unsigned n);

/* 1 where this CPU runs the flush's four-lane products clearly faster than four MULX products
 * (timed once, about 0.2 ms: zk/kernels.c asks at start-up, on a CPU with AVX2 and no IFMA, to
 * choose between the avx2 and mulx sets); 0 elsewhere. */
int zk_avx2_probe(void);
