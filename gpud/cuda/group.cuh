/* The zc_group_ops of one group, instantiated once per g_*.cu unit:
 * ZC_GROUP_UNIT(name, device XYZZ type, zk/ prefix of the group). */
#pragma once
#include <string.h>

extern "C" {
#include "zk/curve.h"
}
#include "gpud/cuda/msm.cuh"
#include "gpud/cuda/zkcuda.h"

template <class F> __global__ void zc_k_field_op(int op, const F *a, const F *b, F *out, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    switch (op) {
    case ZKCUDA_ADD:
        out[i] = a[i] + b[i];
        break;
    case ZKCUDA_SUB:
        out[i] = a[i] - b[i];
        break;
    case ZKCUDA_MUL:
        out[i] = a[i] * b[i];
        break;
    default:
        out[i] = a[i].sqr();
        break;
    }
}

template <class F>
static cudaError_t zc_field_op(int op, const void *a, const void *b, void *out, size_t n, cudaStream_t st) {
    if (n) ZC_LAUNCH(zc_blocks(n, 128), 128, 0, st, zc_k_field_op<F>)(op, (const F *)a, (const F *)b, (F *)out, n);
    return cudaGetLastError();
}

template <class G> __global__ void zc_k_ec_op(int op, const G *p, const void *q, G *out, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (op == ZKCUDA_EC_ADD_AFF)
        out[i] = p[i].add(((const typename G::aff_t *)q)[i]);
    else if (op == ZKCUDA_EC_ADD)
        out[i] = p[i].add(((const G *)q)[i]);
    else
        out[i] = p[i].dbl();
}

#define ZC_GROUP_UNIT(NAME, G, ZK)                                                                                     \
    static cudaError_t NAME##_plan(zc_msm_plan *p, uint32_t n, int c) { return zc_msm_plan_make<G>(p, n, c); }         \
    static size_t NAME##_ws_size(const zc_msm_plan *p) { return zc_msm_ws_size<G>(p); }                                \
    static cudaError_t NAME##_enqueue(const zc_msm_plan *p, const void *pts, const uint32_t *sc, void *ws,             \
                                      void *host_out, cudaStream_t st) {                                               \
        return zc_msm_enqueue<G>(p, (const G::aff_t *)pts, sc, ws, (G *)host_out, st);                                 \
    }                                                                                                                  \
    static void NAME##_finish(const zc_msm_plan *p, const void *win, void *out_aff) {                                  \
        G r = zc_msm_finish<G>(p, (const G *)win);                                                                     \
        ZK##_xyzz_t h;                                                                                                 \
        static_assert(sizeof h == sizeof r, "XYZZ layouts differ");                                                    \
        memcpy(&h, &r, sizeof h);                                                                                      \
        ZK##_xyzz_to_aff((ZK##_aff_t *)out_aff, &h);                                                                   \
    }                                                                                                                  \
    static cudaError_t NAME##_ec_op(int op, const void *p, const void *q, void *out, size_t n, cudaStream_t st) {      \
        if (n) ZC_LAUNCH(zc_blocks(n, 128), 128, 0, st, zc_k_ec_op<G>)(op, (const G *)p, q, (G *)out, n);              \
        return cudaGetLastError();                                                                                     \
    }                                                                                                                  \
    extern const zc_group_ops zc_ops_##NAME = {                                                                        \
        sizeof(G::aff_t), sizeof(G),     NAME##_plan,  NAME##_ws_size,                                                 \
        NAME##_enqueue,   NAME##_finish, NAME##_ec_op, zc_field_op<decltype(G::x)>,                                    \
    };
