/* The CUDA backend's context and the helpers that the host orchestration (backend.cu) shares with
 * the device check's entry points (check.cu, linked only into the check programs). Host code only;
 * everything here is defined in backend.cu. */
#pragma once
#include "gpud/cuda/zkcuda.h"
#include "gpud/cuda/zkcuda_int.cuh"

#define ZC_MAX_KEYS 8
#define ZC_DEPTH 2 /* partitions in flight: the next one's copy overlaps this one's MSMs */

struct zc_curve_ops {
    const zc_group_ops *g1, *g2;
    const zc_fr_ops *fr;
};
const zc_curve_ops *zc_curve(const zk_curve_t *c);

struct zc_key {
    const void *id; /* points_a of the zkey mapping */
    uint64_t print; /* zc_key_print: a mapping's address can be reused by another key */
    const zk_curve_t *curve;
    uint32_t n_vars, n_pub, domain;
    void *a, *b1, *b2, *c, *h;
    uint64_t used;
};

struct zc_buf {
    void *p = nullptr;
    size_t cap = 0;
};

/* One partition in flight: its inputs on the device, its window sums in pinned host memory, its
 * plans (for the host's Horner step) and the events that order and time its steps. */
struct zc_lane {
    zc_buf wit, abc;
    void *host_win;
    size_t host_win_cap;
    cudaEvent_t ev[11]; /* 0–2 copies (start, witness, a/b/c), 3–7 MSM A…C, 8–9 NTT+H, 10 done */
    zc_msm_plan pv1, pv2, pc1, ph1;
    const zc_curve_ops *co;
    bool busy;
};

struct zc_check; /* check.cu's state (buffers, timing events); absent from gpud */

struct zc_ctx {
    int device;
    char name[256];
    cudaStream_t cs, xs; /* compute, copy */
    zc_lane lane[ZK_BACKEND_MAX_LANES];
    zc_key keys[ZC_MAX_KEYS];
    int n_keys;
    uint64_t clock;
    struct {
        void *base;
        size_t len;
    } reg[64];
    int n_reg;
    zc_buf tmp, ws; /* shared by the lanes: used on the compute stream only, one kernel after another */
    void *tab[2];   /* NTT tables of the last domain size, per curve (bn128, bls12381) */
    /* Made by the first device-check call, freed (through check_free) by destroy. */
    zc_check *check;
    void (*check_free)(zc_ctx *c);
};

/* One-line error for a failed CUDA call: ENODEV when the context is lost, ENOMEM, else EIO. */
int zc_fail_cuda(zk_err_t *err, const char *what, cudaError_t e);
#define ZC_CK(what, expr)                                                                                              \
    do {                                                                                                               \
        cudaError_t _e = (expr);                                                                                       \
        if (_e != cudaSuccess) return zc_fail_cuda(err, what, _e);                                                     \
    } while (0)

/* Grows a device buffer (never shrinks), after the queued work that may still use the old one. */
cudaError_t zc_ensure(zc_ctx *c, zc_buf *b, size_t bytes);
/* The NTT tables of 2^logn for curve (built on the compute stream when the size changed). */
int zc_get_tables(zc_ctx *c, const zk_curve_t *curve, uint32_t logn, void **ret, zk_err_t *err);
/* Milliseconds between two recorded events, 0 when unknown. */
float zc_ms(cudaEvent_t a, cudaEvent_t b);
