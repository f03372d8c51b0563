/* The zc_fr_ops of one scalar field, instantiated once per fr_*.cu unit. */
#pragma once
#include "gpud/cuda/group.cuh"
#include "gpud/cuda/ntt.cuh"

#define ZC_FR_UNIT(NAME, F)                                                                                            \
    static void *NAME##_tables_new(uint32_t logn, cudaStream_t st, cudaError_t *ret_err) {                             \
        zc_ntt_tables<F> *t = new zc_ntt_tables<F>();                                                                  \
        cudaError_t e = zc_ntt_tables_make(t, logn, st);                                                               \
        if (e != cudaSuccess) {                                                                                        \
            zc_ntt_tables_free(t);                                                                                     \
            delete t;                                                                                                  \
            *ret_err = e;                                                                                              \
            return nullptr;                                                                                            \
        }                                                                                                              \
        return t;                                                                                                      \
    }                                                                                                                  \
    static void NAME##_tables_free(void *t) {                                                                          \
        if (!t) return;                                                                                                \
        zc_ntt_tables_free((zc_ntt_tables<F> *)t);                                                                     \
        delete (zc_ntt_tables<F> *)t;                                                                                  \
    }                                                                                                                  \
    static uint32_t NAME##_tables_logn(const void *t) { return ((const zc_ntt_tables<F> *)t)->logn; }                  \
    static void NAME##_coset(void *x, void *tmp, const void *t, cudaStream_t st) {                                     \
        zc_ntt_coset<F>((F *)x, (F *)tmp, (const zc_ntt_tables<F> *)t, st);                                            \
    }                                                                                                                  \
    static void NAME##_abc(void *a, const void *b, const void *c, size_t n, cudaStream_t st) {                         \
        ZC_LAUNCH(zc_blocks(n, 256), 256, 0, st, zc_k_abc<F>)((F *)a, (const F *)b, (const F *)c, n);                  \
    }                                                                                                                  \
    static void *NAME##_btables_new(uint32_t logn, uint32_t logr, cudaStream_t st, cudaError_t *ret_err) {             \
        zc_ntt_btables<F> *t = new zc_ntt_btables<F>();                                                                \
        cudaError_t e = zc_ntt_btables_make(t, logn, logr, st);                                                        \
        if (e != cudaSuccess) {                                                                                        \
            zc_ntt_btables_free(t);                                                                                    \
            delete t;                                                                                                  \
            *ret_err = e;                                                                                              \
            return nullptr;                                                                                            \
        }                                                                                                              \
        return t;                                                                                                      \
    }                                                                                                                  \
    static void NAME##_btables_free(void *t) {                                                                         \
        if (!t) return;                                                                                                \
        zc_ntt_btables_free((zc_ntt_btables<F> *)t);                                                                   \
        delete (zc_ntt_btables<F> *)t;                                                                                 \
    }                                                                                                                  \
    static void NAME##_bcols(void *blk, void *tmp, size_t w, size_t c0, int inverse, const void *t, cudaStream_t st) { \
        zc_ntt_bcols<F>((F *)blk, (F *)tmp, w, c0, inverse != 0, (const zc_ntt_btables<F> *)t, st);                    \
    }                                                                                                                  \
    static void NAME##_brows(void *blk, void *tmp, size_t h, size_t r0, const void *t, cudaStream_t st) {              \
        zc_ntt_brows<F>((F *)blk, (F *)tmp, h, r0, (const zc_ntt_btables<F> *)t, st);                                  \
    }                                                                                                                  \
    extern const zc_fr_ops zc_ops_##NAME = {                                                                           \
        NAME##_tables_new,  NAME##_tables_free,  NAME##_tables_logn, NAME##_coset, NAME##_abc,                         \
        NAME##_btables_new, NAME##_btables_free, NAME##_bcols,       NAME##_brows,                                     \
    };
