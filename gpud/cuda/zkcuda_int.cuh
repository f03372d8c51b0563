/* Internal interface between the host orchestration (backend.cu) and the per-curve kernel units
 * (g_*.cu: MSM of one group; fr_*.cu: NTT and H of one scalar field). Splitting them
 * lets nvcc compile the heavy units in parallel and keeps backend.cu free of kernels. The device
 * check's own kernels (single field, curve and NTT operations) are in check.cu, not here. */
#pragma once
#include "gpud/cuda/rt.cuh"
#include <stddef.h>
#include <stdint.h>

#include "msm_plan.h"

struct zc_group_ops {
    size_t aff_size, xyzz_size;
    cudaError_t (*plan)(zc_msm_plan *p, uint32_t n, int c);
    size_t (*ws_size)(const zc_msm_plan *p);
    /* Enqueues the MSM; its nw window sums (XYZZ) are written to out_win (device memory), or added
     * to it when accumulate (a later chunk of points of the same MSM, planned with the same window). */
    cudaError_t (*enqueue)(const zc_msm_plan *p, const void *pts, const uint32_t *sc, void *ws, void *out_win,
                           int accumulate, cudaStream_t st);
    /* Host: Horner over the window sums, then affine Montgomery bytes (zk/ code). */
    void (*finish)(const zc_msm_plan *p, const void *win, void *out_aff);
};

struct zc_fr_ops {
    /* Twiddles and coset factors of one domain size (device memory); NULL on failure. */
    void *(*tables_new)(uint32_t logn, cudaStream_t st, cudaError_t *ret_err);
    void (*tables_free)(void *t);
    uint32_t (*tables_logn)(const void *t);
    /* x (natural order evaluations) -> evaluations on the odd coset; tmp: n elements. */
    void (*coset)(void *x, void *tmp, const void *t, cudaStream_t st);
    /* a = standard(a·b − c) */
    void (*abc)(void *a, const void *b, const void *c, size_t n, cudaStream_t st);
    /* The blocked NTT (ntt.cuh): its tables for 2^logn as 2^logr rows (NULL on failure), and its
     * passes in place on one block: bcols the columns c0 … c0+w−1 (pass 1 inverse, pass 3 not),
     * brows the rows r0 … r0+h−1 (pass 2); tmp: as many elements as the block. */
    void *(*btables_new)(uint32_t logn, uint32_t logr, cudaStream_t st, cudaError_t *ret_err);
    void (*btables_free)(void *t);
    void (*bcols)(void *blk, void *tmp, size_t w, size_t c0, int inverse, const void *t, cudaStream_t st);
    void (*brows)(void *blk, void *tmp, size_t h, size_t r0, const void *t, cudaStream_t st);
};

extern const zc_group_ops zc_ops_bn_g1, zc_ops_bn_g2, zc_ops_bls_g1, zc_ops_bls_g2;
extern const zc_fr_ops zc_ops_bn_fr, zc_ops_bls_fr;
