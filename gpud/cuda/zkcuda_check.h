/* The device check's entry points into the CUDA backend (gpud/cuda/check.cu): single kernels run
 * on a backend context (zk_backend_cuda.init) and timed, for tests/gpu/test_cuda_device.c and its
 * host-emulation builds. Linked only into the check programs (zkcuda_check_dep), never into gpud. */
#pragma once
#include "gpud/cuda/zkcuda.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { ZKCUDA_FQ = 0, ZKCUDA_FR = 1, ZKCUDA_FQ2 = 2 };
enum { ZKCUDA_ADD = 0, ZKCUDA_SUB = 1, ZKCUDA_MUL = 2, ZKCUDA_SQR = 3 };
/* out[i] = a[i] op b[i] on the device, n elements of the field's size, Montgomery form. */
int zkcuda_field_op(void *ctx, const zk_curve_t *curve, int field, int op, const void *a, const void *b, void *out,
                    size_t n, zk_err_t *err);

enum { ZKCUDA_EC_ADD_AFF = 0, ZKCUDA_EC_ADD = 1, ZKCUDA_EC_DBL = 2 };
/* out[i] = p[i] + q[i] (q affine for ADD_AFF, XYZZ for ADD; q unused for DBL); p, out XYZZ in the
 * zk/ layout (x, y, zz, zzz), g2 selects G2. */
int zkcuda_ec_op(void *ctx, const zk_curve_t *curve, int g2, int op, const void *p, const void *q, void *out, size_t n,
                 zk_err_t *err);

/* Σ scalars[i]·points[i] (i < n) on the device; points affine zkey layout, scalars 32-byte
 * standard LE; both in host memory (copied first). out: affine Montgomery bytes. ms: time of the
 * MSM on the device without the copies (may be NULL). window: 0 = the backend's choice. */
int zkcuda_msm(void *ctx, const zk_curve_t *curve, int g2, const void *points, const uint8_t *scalars, size_t n,
               int window, void *out, double *ms, zk_err_t *err);

enum { ZKCUDA_NTT_FORWARD = 0, ZKCUDA_NTT_INVERSE = 1, ZKCUDA_NTT_COSET = 2 };
/* In place on 2^log_n Montgomery Fr elements in host memory: FORWARD X[j] = Σ a_k ω^jk;
 * INVERSE its inverse; COSET evaluations on ω^i -> evaluations on ω_2n·ω^i (the H step).
 * ms: device time without the copies. */
int zkcuda_ntt(void *ctx, const zk_curve_t *curve, void *data, uint32_t log_n, int mode, double *ms, zk_err_t *err);

/* P = standard(A·B − C), A, B, C the odd-coset evaluations of a, b, c (2^log_n Montgomery Fr each,
 * host memory), by the NTT in blocks of `block` elements (docs/cuda.md, "NTT in blocks"): the
 * backend's blocked path, to compare with the CPU's. */
int zkcuda_h_blocked(void *ctx, const zk_curve_t *curve, const void *a, const void *b, const void *c, void *p,
                     uint32_t log_n, uint32_t block, zk_err_t *err);

/* The device memory of a context and of one loaded key's plan. */
typedef struct {
    uint64_t held;                      /* what the context counts as held (keys, buffers, tables) */
    uint64_t device_free, device_total; /* cudaMemGetInfo */
    uint64_t plan_need, plan_lane;      /* the key's plan: all its device bytes, those of one lane */
    uint64_t plan_pinned;               /* the key's plan: the backend's own pinned host memory */
    int blocked;                        /* the plan runs the NTT in blocks */
} zkcuda_memory_t;
int zkcuda_memory(void *ctx, const zk_zkey_t *z, zkcuda_memory_t *out, zk_err_t *err);

/* Times one host-to-device copy of len bytes from src on the copy stream; GB/s out. */
int zkcuda_h2d(void *ctx, const void *src, size_t len, double *gbps, zk_err_t *err);

#ifdef __cplusplus
}
#endif
