/* AVX-512 IFMA bucket additions and reductions for the batch-affine MSM (zk/msm_tmpl.h), used
 * while the ifma kernel set is selected (zk/kernels.h). A flush keeps its prefix products on the
 * stack: about 40 KB (BN254 G1) to 128 KB (BLS12-381 G2) besides the caller's frame, so callers' threads need a
 * stack of a few hundred KB at least (OpenMP's and glibc's defaults are megabytes). */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "curve.h"

#define ZK_IFMA_BATCH_MAX 1024 /* at most this many additions per call */

/* For j < n: bucket[bidx[j]] += pt[j] (affine), where den[j] = pt[j].x - bucket[bidx[j]].x is not
 * zero and the bidx[j] are distinct: one batched inversion, eight additions per vector. Exactly the
 * result of the scalar msm_flush. pt and den are read in whole vectors: they must hold n rounded up
 * to a multiple of 8 elements (what lies past n is ignored; msm_ctx_t's arrays hold MSM_BATCH).
 * Only on a CPU with AVX512F + AVX512IFMA (zk_kernels_ifma). */
typedef void (*zk_vec_flush_fn)(void *bucket, const uint32_t *bidx, const void *pt, const void *den, unsigned n);
/* bucket, pt: bn_g1_aff_t; den: bn_fq_t (untyped so that zk/msm_tmpl.h can name it for every group). */
void zk_ifma_bn_g1_flush(void *bucket, const uint32_t *bidx, const void *pt, const void *den, unsigned n);
/* bucket, pt: bn_g2_aff_t; den: bn_fq2_t. */
void zk_ifma_bn_g2_flush(void *bucket, const uint32_t *bidx, const void *pt, const void *den, unsigned n);
/* The same for BLS12-381: bls_g1_aff_t and bls_fq_t, bls_g2_aff_t and bls_fq2_t. */
void zk_ifma_bls_g1_flush(void *bucket, const uint32_t *bidx, const void *pt, const void *den, unsigned n);
void zk_ifma_bls_g2_flush(void *bucket, const uint32_t *bidx, const void *pt, const void *den, unsigned n);

/* The bucket reduction of zk/msm_tmpl.h (msm_reduce): *out (the group's xyzz_t) = sum over i < nb of
 * (i+1)·(bucket[i] if state[i] & 1, plus side[i] if state[i] & 4), bucket the group's aff_t array,
 * side its xyzz_t array. nb a power of two, at least 8. Eight runs of buckets, one per lane. */
#define ZK_IFMA_REDUCE_MIN 64 /* below this many buckets the scalar reduction is used */
typedef void (*zk_vec_reduce_fn)(void *out, const void *bucket, const void *side, const uint8_t *state, size_t nb);
void zk_ifma_bn_g1_reduce(void *out, const void *bucket, const void *side, const uint8_t *state, size_t nb);
void zk_ifma_bn_g2_reduce(void *out, const void *bucket, const void *side, const uint8_t *state, size_t nb);
void zk_ifma_bls_g1_reduce(void *out, const void *bucket, const void *side, const uint8_t *state, size_t nb);
void zk_ifma_bls_g2_reduce(void *out, const void *bucket, const void *side, const uint8_t *state, size_t nb);
