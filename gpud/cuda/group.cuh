/* The zc_group_ops of one group, instantiated once per g_*.cu unit:
 * ZC_GROUP_UNIT(name, device XYZZ type, zk/ prefix of the group). */
#pragma once
#include <string.h>

extern "C" {
#include "zk/curve.h"
}
#include "gpud/cuda/msm.cuh"

#define ZC_GROUP_UNIT(NAME, G, ZK)                                                                                     \
    static cudaError_t NAME##_plan(zc_msm_plan *p, uint32_t n, int c) { return zc_msm_plan_make<G>(p, n, c); }         \
    static size_t NAME##_ws_size(const zc_msm_plan *p) { return zc_msm_ws_size<G>(p); }                                \
    static cudaError_t NAME##_enqueue(const zc_msm_plan *p, const void *pts, const uint32_t *sc, void *ws,             \
                                      void *out_win, int accumulate, cudaStream_t st) {                                \
        return zc_msm_enqueue<G>(p, (const G::aff_t *)pts, sc, ws, (G *)out_win, accumulate, st);                      \
    }                                                                                                                  \
    static void NAME##_finish(const zc_msm_plan *p, const void *win, void *out_aff) {                                  \
        G r = zc_msm_finish<G>(p, (const G *)win);                                                                     \
        ZK##_xyzz_t h;                                                                                                 \
        static_assert(sizeof h == sizeof r, "XYZZ layouts differ");                                                    \
        memcpy(&h, &r, sizeof h);                                                                                      \
        ZK##_xyzz_to_aff((ZK##_aff_t *)out_aff, &h);                                                                   \
    }                                                                                                                  \
    extern const zc_group_ops zc_ops_##NAME = {                                                                        \
        sizeof(G::aff_t), sizeof(G), NAME##_plan, NAME##_ws_size, NAME##_enqueue, NAME##_finish,                       \
    };
