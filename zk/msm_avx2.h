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

/* The time of the flush's four-lane products over that of four MULX products on this CPU (eight
 * chains of each, the least of three rounds, about 0.13 ms in all); a huge value where there is no
 * AVX2 code. zk/kernels.c asks once at start-up where the CPU has AVX2: on a CPU without IFMA the
 * avx2 set is the best one only when this is below ZK_AVX2_PROBE_MAX. */
double zk_avx2_probe(void);
/* The flush's other work (loads, carries, conditional subtractions) costs more in vectors than in
 * words, so its products must win by a margin. Where this was written the race gave 0.35-0.36 and
 * the flushes 0.85 (G1) and 0.94 (G2) of the scalar ones (bench/RESULTS.md, "Issue 22, the avx2
 * set"); if the products are about two thirds of a vector flush's time (an estimate from its
 * instruction counts), G1's flush would lose at a race of about 0.44, G2's at about 0.38; four of
 * a proof's five MSMs are G1's. */
#define ZK_AVX2_PROBE_MAX 0.42
