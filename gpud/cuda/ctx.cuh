/* The CUDA backend's context and the helpers that the host orchestration (backend.cu) shares with
 * the device check's entry points (check.cu, linked only into the check programs). Host code only;
 * everything here is defined in backend.cu. */
#pragma once
#include "gpud/cuda/devplan.h"
#include "gpud/cuda/zkcuda.h"
#include "gpud/cuda/zkcuda_int.cuh"

#define ZC_MAX_KEYS 8
#define ZC_DEPTH ZC_PLAN_LANES /* partitions in flight: the next one's copy overlaps this one's MSMs */

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
    void *a, *b1, *b2, *c, *h; /* device copies (NULL when not resident: submit streams them from z) */
    zc_dev_plan_t plan;        /* how its partitions use the device (devplan.h), chosen at load_key */
    uint64_t used;
};

struct zc_buf {
    void *p = nullptr;
    size_t cap = 0;
};

/* One partition in flight: its inputs on the device, its window sums in pinned host memory, its
 * plans (for the host's Horner step) and the events that order and time its steps. */
struct zc_lane {
    zc_buf wit, abc, win; /* win: the five MSMs' window sums on the device, copied to host_win at the end */
    void *host_win;
    size_t host_win_cap;
    cudaEvent_t ev[11];             /* 0–2 copies (start, witness, a/b/c), 3–7 MSM A…C, 8–9 NTT+H, 10 done */
    zc_msm_plan pv1, pv2, pc1, ph1; /* the full chunks' plans (window size and count for Horner) */
    const zc_curve_ops *co;
    bool busy;
};

struct zc_check; /* check.cu's state (buffers, timing events); absent from gpud */

struct zc_ctx {
    int device;
    char name[256];
    char info[800];      /* device, compute capability, the image used and the images built (zc_init) */
    char keyinfo[600];   /* zc_key_info's line */
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
    zc_buf tmp, ws, stage, sstage; /* shared by the lanes: used on the compute stream only, one kernel after
                                    * another (tmp: the NTT buffer; stage, sstage: a chunk of streamed key
                                    * points, of streamed scalars) */
    void *hntt; /* pinned host memory of the blocked NTT: a, b, c between passes (shared by the lanes, as
                 * tmp is: only the compute stream uses it) */
    size_t hntt_cap;
    /* Device memory: `used` counts every buffer, key and table this context holds; a plan may use
     * at most min(cap, used + free − reserve) (zc_budget). cap 0: no cap ([gpu] device_memory). */
    size_t used, cap;
    struct {
        void *p; /* NTT tables of the last domain size, per curve (bn128, bls12381): whole or blocked */
        bool blocked;
        uint32_t logn, logr;
    } tab[2];
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

/* Grows a device buffer (never shrinks), after the queued work that may still use the old one;
 * counted in c->used. */
cudaError_t zc_ensure(zc_ctx *c, zc_buf *b, size_t bytes);
/* Frees a buffer (after the queued work) and uncounts it. */
void zc_release(zc_ctx *c, zc_buf *b);
/* The NTT tables of 2^logn for curve, whole or blocked as 2^logr rows (built on the compute stream
 * when they changed). */
int zc_get_tables(zc_ctx *c, const zk_curve_t *curve, uint32_t logn, bool blocked, uint32_t logr, void **ret,
                  zk_err_t *err);
/* Grows the blocked NTT's pinned host vectors (c->hntt) to bytes (after the queued work). */
cudaError_t zc_hntt_ensure(zc_ctx *c, size_t bytes);
/* Enqueues the H step with the NTT in blocks on the compute stream (x: the block and the rows):
 * a, b, c (host, natural order, Montgomery, 2^logn each) through the blocked tables tab and the
 * NTT buffer c->tmp (4 blocks) into c->hntt, which ends with P = standard(A·B − C) in its first
 * 2^logn elements. */
cudaError_t zc_ntt_blocked(zc_ctx *c, const zc_fr_ops *fr, const void *tab, const zc_dev_plan_t *x, uint32_t logn,
                           const void *a, const void *b, const void *cc);
/* Milliseconds between two recorded events, 0 when unknown. */
float zc_ms(cudaEvent_t a, cudaEvent_t b);
