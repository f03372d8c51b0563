/* The device check's entry points (zkcuda_check.h): single field, curve, MSM and NTT operations and
 * a timed copy, run on a backend context against the CPU code by tests/gpu/test_cuda_device.c (and
 * on the host emulation by test_cuda_emu). Built into libzkcuda_check, which only the check
 * programs link: gpud carries none of this. The MSM and the coset NTT are the production kernels
 * (zc_group_ops, zc_fr_ops); the field and curve kernels and the plain NTT/iNTT are the check's. */
#include <errno.h>
#include <string.h>

#include <new>

#include "gpud/cuda/ctx.cuh"
#include "gpud/cuda/ec.cuh"
#include "gpud/cuda/ntt.cuh"
#include "gpud/cuda/zkcuda_check.h"

struct zc_check {
    zc_buf io;          /* inputs and outputs of the single-kernel runs */
    cudaEvent_t tev[4]; /* 0–1 a kernel's start and end (compute stream), 2–3 a timed copy (copy stream) */
};

static void zc_check_free(zc_ctx *c) {
    if (!c->check) return;
    zc_release(c, &c->check->io);
    for (cudaEvent_t e : c->check->tev) cudaEventDestroy(e);
    delete c->check;
    c->check = nullptr;
}

/* The context's check state, made on first use. */
static int zc_check_get(zc_ctx *c, zc_check **ret, zk_err_t *err) {
    cudaSetDevice(c->device);
    if (!c->check) {
        zc_check *k = new (std::nothrow) zc_check();
        if (!k) return zk_fail(err, ENOMEM, "CUDA: out of memory");
        int made = 0;
        cudaError_t e = cudaSuccess;
        while (made < 4 && (e = cudaEventCreate(&k->tev[made])) == cudaSuccess) made++;
        if (made < 4) {
            while (made > 0) cudaEventDestroy(k->tev[--made]);
            delete k;
            return zc_fail_cuda(err, "cudaEventCreate", e);
        }
        c->check = k;
        c->check_free = zc_check_free;
    }
    *ret = c->check;
    return 0;
}

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

/* The device types of one curve, and the check's kernels on them. */
template <class G1, class G2, class FR> struct zc_check_curve {
    typedef decltype(G1::x) FQ;
    typedef decltype(G2::x) FQ2;

    template <class F>
    static cudaError_t fop(int op, const void *a, const void *b, void *out, size_t n, cudaStream_t st) {
        if (n) ZC_LAUNCH(zc_blocks(n, 128), 128, 0, st, zc_k_field_op<F>)(op, (const F *)a, (const F *)b, (F *)out, n);
        return cudaGetLastError();
    }
    static cudaError_t field_op(int field, int op, const void *a, const void *b, void *out, size_t n, cudaStream_t st) {
        return field == ZKCUDA_FQ   ? fop<FQ>(op, a, b, out, n, st)
               : field == ZKCUDA_FR ? fop<FR>(op, a, b, out, n, st)
                                    : fop<FQ2>(op, a, b, out, n, st);
    }
    template <class G>
    static cudaError_t eop(int op, const void *p, const void *q, void *out, size_t n, cudaStream_t st) {
        if (n) ZC_LAUNCH(zc_blocks(n, 128), 128, 0, st, zc_k_ec_op<G>)(op, (const G *)p, q, (G *)out, n);
        return cudaGetLastError();
    }
    static cudaError_t ec_op(int g2, int op, const void *p, const void *q, void *out, size_t n, cudaStream_t st) {
        return g2 ? eop<G2>(op, p, q, out, n, st) : eop<G1>(op, p, q, out, n, st);
    }
    /* out = NTT(in) or iNTT(in) (in != out), natural order, with the backend's tables and kernels */
    static void ntt(const void *in, void *out, const void *tv, int inverse, cudaStream_t st) {
        const zc_ntt_tables<FR> *t = (const zc_ntt_tables<FR> *)tv;
        size_t n = (size_t)1 << t->logn;
        ZC_LAUNCH(zc_blocks(n, 256), 256, 0, st, zc_k_bitrev<FR>)
        ((const FR *)in, (FR *)out, t->logn, nullptr, nullptr, 0);
        zc_ntt_dit<FR>((FR *)out, t->logn, inverse ? t->tw_i : t->tw_f, st);
        if (inverse) ZC_LAUNCH(zc_blocks(n, 256), 256, 0, st, zc_k_scale<FR>)((FR *)out, n, t->ninv);
    }
};
typedef zc_check_curve<zc_bn_g1, zc_bn_g2, zc_bn_fr> zc_check_bn;
typedef zc_check_curve<zc_bls_g1, zc_bls_g2, zc_bls_fr> zc_check_bls;

/* Copies nin inputs to the device io buffer, runs fn(device pointers, device out) between two
 * events, copies out_bytes back and waits. */
template <class Fn>
static int zc_io(zc_ctx *c, const void *const *in, const size_t *in_bytes, int nin, void *out, size_t out_bytes, Fn fn,
                 zk_err_t *err) {
    zc_check *k = nullptr;
    int r = zc_check_get(c, &k, err);
    if (r < 0) return r;
    size_t total = zc_align(out_bytes);
    for (int i = 0; i < nin; i++) total += zc_align(in_bytes[i]);
    ZC_CK("allocating test buffers", zc_ensure(c, &k->io, total));
    uint8_t *p = (uint8_t *)k->io.p;
    void *dev[4];
    for (int i = 0; i < nin; i++) {
        dev[i] = p;
        if (in[i]) ZC_CK("copy in", cudaMemcpyAsync(p, in[i], in_bytes[i], cudaMemcpyHostToDevice, c->cs));
        p += zc_align(in_bytes[i]);
    }
    void *dout = p;
    ZC_CK("event", cudaEventRecord(k->tev[0], c->cs));
    ZC_CK("kernel", fn(dev, dout));
    ZC_CK("kernel", cudaGetLastError());
    ZC_CK("event", cudaEventRecord(k->tev[1], c->cs));
    if (out_bytes) ZC_CK("copy out", cudaMemcpyAsync(out, dout, out_bytes, cudaMemcpyDeviceToHost, c->cs));
    ZC_CK("kernel run", cudaStreamSynchronize(c->cs));
    return 0;
}

extern "C" int zkcuda_field_op(void *ctx, const zk_curve_t *curve, int field, int op, const void *a, const void *b,
                               void *out, size_t n, zk_err_t *err) {
    zc_ctx *c = (zc_ctx *)ctx;
    size_t es;
    switch (field) {
    case ZKCUDA_FQ:
        es = curve->n8q;
        break;
    case ZKCUDA_FR:
        es = 32;
        break;
    case ZKCUDA_FQ2:
        es = 2 * curve->n8q;
        break;
    default:
        return zk_fail(err, EINVAL, "unknown field %d", field);
    }
    auto fn = curve->id == ZK_CURVE_BN128 ? zc_check_bn::field_op : zc_check_bls::field_op;
    const void *in[2] = {a, b};
    size_t bytes[2] = {n * es, n * es};
    return zc_io(
        c, in, bytes, 2, out, n * es, [&](void **d, void *o) { return fn(field, op, d[0], d[1], o, n, c->cs); }, err);
}

extern "C" int zkcuda_ec_op(void *ctx, const zk_curve_t *curve, int g2, int op, const void *p, const void *q, void *out,
                            size_t n, zk_err_t *err) {
    zc_ctx *c = (zc_ctx *)ctx;
    const zc_group_ops *g = g2 ? zc_curve(curve)->g2 : zc_curve(curve)->g1;
    auto fn = curve->id == ZK_CURVE_BN128 ? zc_check_bn::ec_op : zc_check_bls::ec_op;
    const void *in[2] = {p, q};
    size_t bytes[2] = {n * g->xyzz_size, n * (op == ZKCUDA_EC_ADD_AFF ? g->aff_size : g->xyzz_size)};
    return zc_io(
        c, in, bytes, 2, out, n * g->xyzz_size, [&](void **d, void *o) { return fn(g2, op, d[0], d[1], o, n, c->cs); },
        err);
}

extern "C" int zkcuda_msm(void *ctx, const zk_curve_t *curve, int g2, const void *points, const uint8_t *scalars,
                          size_t n, int window, void *out, double *ms, zk_err_t *err) {
    zc_ctx *c = (zc_ctx *)ctx;
    cudaSetDevice(c->device);
    if (n >= (1u << 31)) return zk_fail(err, E2BIG, "CUDA: MSM of %zu points is too large", n);
    if (window < 0 || window > 16) return zk_fail(err, EINVAL, "CUDA: MSM window %d out of range", window);
    const zc_group_ops *g = g2 ? zc_curve(curve)->g2 : zc_curve(curve)->g1;
    zc_msm_plan p;
    ZC_CK("MSM plan", g->plan(&p, (uint32_t)n, window));
    ZC_CK("allocating the MSM workspace", zc_ensure(c, &c->ws, g->ws_size(&p)));
    void *win = nullptr;
    ZC_CK("cudaMallocHost", cudaMallocHost(&win, (size_t)p.nw * g->xyzz_size));
    const void *in[2] = {points, scalars};
    size_t bytes[2] = {n * g->aff_size, n * 32};
    int r = zc_io(
        c, in, bytes, 2, win, (size_t)p.nw * g->xyzz_size,
        [&](void **d, void *o) { return g->enqueue(&p, d[0], (const uint32_t *)d[1], c->ws.p, o, 0, c->cs); }, err);
    if (r == 0) {
        if (ms) *ms = zc_ms(c->check->tev[0], c->check->tev[1]);
        g->finish(&p, win, out);
    }
    cudaFreeHost(win);
    return r;
}

extern "C" int zkcuda_ntt(void *ctx, const zk_curve_t *curve, void *data, uint32_t log_n, int mode, double *ms,
                          zk_err_t *err) {
    zc_ctx *c = (zc_ctx *)ctx;
    cudaSetDevice(c->device);
    if (log_n > 27) return zk_fail(err, E2BIG, "CUDA: NTT of 2^%u elements is not supported", log_n);
    const zc_fr_ops *fr = zc_curve(curve)->fr;
    auto ntt = curve->id == ZK_CURVE_BN128 ? zc_check_bn::ntt : zc_check_bls::ntt;
    void *t;
    int r = zc_get_tables(c, curve, log_n, false, 0, &t, err);
    if (r < 0) return r;
    size_t n = (size_t)1 << log_n;
    ZC_CK("allocating the NTT buffer", zc_ensure(c, &c->tmp, n * 32));
    const void *in[1] = {data};
    size_t bytes[1] = {n * 32};
    r = zc_io(
        c, in, bytes, 1, data, n * 32,
        [&](void **d, void *o) {
            if (mode == ZKCUDA_NTT_COSET) {
                fr->coset(d[0], c->tmp.p, t, c->cs);
                return cudaMemcpyAsync(o, d[0], n * 32, cudaMemcpyDeviceToDevice, c->cs);
            }
            ntt(d[0], o, t, mode == ZKCUDA_NTT_INVERSE, c->cs);
            return cudaSuccess;
        },
        err);
    if (r == 0 && ms) *ms = zc_ms(c->check->tev[0], c->check->tev[1]);
    return r;
}

extern "C" int zkcuda_h_blocked(void *ctx, const zk_curve_t *curve, const void *a, const void *b, const void *cc,
                                void *p, uint32_t log_n, uint32_t block, zk_err_t *err) {
    zc_ctx *c = (zc_ctx *)ctx;
    cudaSetDevice(c->device);
    zc_dev_plan_t x = {};
    x.ntt_block = block;
    x.log_rows = log_n / 2;
    size_t n = (size_t)1 << log_n;
    if (log_n < 1 || log_n > 27 || block < (n >> x.log_rows) || block > n || (block & (block - 1)))
        return zk_fail(err, EINVAL, "CUDA: no NTT in blocks of %u for 2^%u", block, log_n);
    void *t;
    int r = zc_get_tables(c, curve, log_n, true, x.log_rows, &t, err);
    if (r < 0) return r;
    ZC_CK("allocating the NTT blocks", zc_ensure(c, &c->tmp, 4 * (size_t)block * 32));
    ZC_CK("allocating the NTT's host vectors", zc_hntt_ensure(c, 3 * n * 32));
    ZC_CK("the NTT in blocks", zc_ntt_blocked(c, zc_curve(curve)->fr, t, &x, log_n, a, b, cc));
    ZC_CK("the NTT in blocks", cudaStreamSynchronize(c->cs));
    memcpy(p, c->hntt, n * 32);
    return 0;
}

extern "C" int zkcuda_memory(void *ctx, const zk_zkey_t *z, zkcuda_memory_t *out, zk_err_t *err) {
    zc_ctx *c = (zc_ctx *)ctx;
    cudaSetDevice(c->device);
    memset(out, 0, sizeof *out);
    out->held = c->used;
    size_t fr = 0, total = 0;
    ZC_CK("cudaMemGetInfo", cudaMemGetInfo(&fr, &total));
    out->device_free = fr, out->device_total = total;
    for (int i = 0; i < c->n_keys; i++) {
        const zc_key *k = &c->keys[i];
        if (k->id != z->points_a || k->curve != z->curve || k->n_vars != z->n_vars || k->domain != z->domain_size)
            continue;
        out->plan_need = k->plan.need;
        out->plan_lane = k->plan.wit + k->plan.abc + k->plan.win;
        out->plan_pinned = k->plan.pinned;
        out->blocked = k->plan.ntt_block != 0;
        return 0;
    }
    return zk_fail(err, ENOENT, "CUDA: the key is not loaded");
}

extern "C" int zkcuda_h2d(void *ctx, const void *src, size_t len, double *gbps, zk_err_t *err) {
    zc_ctx *c = (zc_ctx *)ctx;
    zc_check *k = nullptr;
    int r = zc_check_get(c, &k, err);
    if (r < 0) return r;
    ZC_CK("allocating the copy target", zc_ensure(c, &k->io, len));
    ZC_CK("event", cudaEventRecord(k->tev[2], c->xs));
    ZC_CK("H2D copy", cudaMemcpyAsync(k->io.p, src, len, cudaMemcpyHostToDevice, c->xs));
    ZC_CK("event", cudaEventRecord(k->tev[3], c->xs));
    ZC_CK("H2D copy", cudaStreamSynchronize(c->xs));
    double ms = zc_ms(k->tev[2], k->tev[3]);
    *gbps = ms > 0 ? (double)len / (ms * 1e6) : 0;
    return 0;
}
