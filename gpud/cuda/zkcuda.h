/* The CUDA backend of gpud (docs/cuda.md), as seen from C: the backend ops, plus the entry points
 * the device check uses to test and time single kernels against the CPU code. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "gpud/backend.h"
#include "zk/curve_info.h"

extern const zk_backend_ops_t zk_backend_cuda;

/* Number of usable CUDA devices; 0 when there is no GPU or no driver. */
int zkcuda_device_count(void);
/* Name of the device ctx runs on (static storage of ctx). */
const char *zkcuda_device_name(void *ctx);

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

/* Times one host-to-device copy of len bytes from src on the copy stream; GB/s out. */
int zkcuda_h2d(void *ctx, const void *src, size_t len, double *gbps, zk_err_t *err);

#ifdef __cplusplus
}
#endif
