/* zk_backend_cuda: the proving core of formats.md §5.3-5.4 on one GPU. Slabs are registered once
 * (cudaHostRegister, ≤ 64 GiB per call); a circuit's points stay in device memory after load_key;
 * prove() copies the witness and a, b, c from the slab on a copy stream, starts the four witness
 * MSMs as soon as the witness is there (overlapping the a, b, c copy), then H on the device
 * (three coset NTTs and A·B − C), then the H MSM; the only wait is on the compute stream at the end. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include <new>

#include <algorithm>

#include "gpud/cuda/ctx.cuh"

static const zc_curve_ops zc_bn = {&zc_ops_bn_g1, &zc_ops_bn_g2, &zc_ops_bn_fr};
static const zc_curve_ops zc_bls = {&zc_ops_bls_g1, &zc_ops_bls_g2, &zc_ops_bls_fr};
const zc_curve_ops *zc_curve(const zk_curve_t *c) { return c->id == ZK_CURVE_BN128 ? &zc_bn : &zc_bls; }

/* Errors after which the CUDA context cannot be used again (a kernel faulted, the device fell off
 * the bus, ECC): the backend reports ENODEV, and gpud restarts instead of failing partitions. */
static bool zc_context_lost(cudaError_t e) {
    switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorECCUncorrectable:
    case cudaErrorDevicesUnavailable:
    case cudaErrorNoDevice:
    case cudaErrorUnknown:
        return true;
    default:
        return false;
    }
}

int zc_fail_cuda(zk_err_t *err, const char *what, cudaError_t e) {
    int code = zc_context_lost(e) ? ENODEV : e == cudaErrorMemoryAllocation ? ENOMEM : EIO;
    return zk_fail(err, code, "CUDA: %s: %s", what, cudaGetErrorString(e));
}

/* Waits for everything queued on both streams: before memory in use by queued work is freed
 * (a buffer grows, a key is evicted). Outside the steady state only. */
static cudaError_t zc_idle(zc_ctx *c) {
    cudaError_t e = cudaStreamSynchronize(c->cs);
    cudaError_t f = cudaStreamSynchronize(c->xs);
    return e != cudaSuccess ? e : f;
}

/* Grows a device buffer (never shrinks); growth happens on the first partition of a bigger
 * circuit, outside the steady state, after the queued work that may still use the old one. */
cudaError_t zc_ensure(zc_ctx *c, zc_buf *b, size_t bytes) {
    if (b->cap >= bytes) return cudaSuccess;
    if (b->p) {
        cudaError_t e = zc_idle(c);
        if (e == cudaSuccess) e = cudaFree(b->p);
        if (e != cudaSuccess) return e;
    }
    b->p = nullptr;
    b->cap = 0;
    cudaError_t e = cudaMalloc(&b->p, bytes);
    if (e == cudaSuccess) b->cap = bytes;
    return e;
}

extern "C" int zkcuda_device_count(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
    return n;
}

extern "C" const char *zkcuda_device_name(void *ctx) { return ((zc_ctx *)ctx)->name; }

static int zc_init(void **ret_ctx, int device, int threads, uint64_t precompute, zk_err_t *err) {
    (void)threads, (void)precompute;
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0)
        return zk_fail(err, ENODEV,
                       "CUDA: no usable GPU (cudaGetDeviceCount: %s; the backend needs an NVIDIA driver for CUDA "
                       "13.0 or newer and access to /dev/nvidia*)",
                       e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    if (device < 0 || device >= n)
        return zk_fail(err, ENODEV, "CUDA: device %d does not exist (%d present)", device, n);
    ZC_CK("cudaSetDevice", cudaSetDevice(device));
    zc_ctx *c = new (std::nothrow) zc_ctx();
    if (!c) return zk_fail(err, ENOMEM, "CUDA: out of memory");
    c->device = device;
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, device) == cudaSuccess) snprintf(c->name, sizeof c->name, "%s", prop.name);
    if ((e = cudaStreamCreateWithFlags(&c->cs, cudaStreamNonBlocking)) != cudaSuccess ||
        (e = cudaStreamCreateWithFlags(&c->xs, cudaStreamNonBlocking)) != cudaSuccess) {
        delete c;
        return zc_fail_cuda(err, "cudaStreamCreate", e);
    }
    for (int l = 0; l < ZK_BACKEND_MAX_LANES && e == cudaSuccess; l++)
        for (int i = 0; i < 11 && e == cudaSuccess; i++) /* collect sleeps on "done" instead of spinning */
            e = cudaEventCreateWithFlags(&c->lane[l].ev[i], i == 10 ? cudaEventBlockingSync : cudaEventDefault);
    if (e != cudaSuccess) {
        delete c;
        return zc_fail_cuda(err, "cudaEventCreate", e);
    }
    *ret_ctx = c;
    return 0;
}

static int zc_register(void *ctx, void *base, size_t len, zk_err_t *err) {
    zc_ctx *c = (zc_ctx *)ctx;
    cudaSetDevice(c->device);
    int first = c->n_reg;
    for (size_t off = 0; off < len; off += ZK_BACKEND_REGISTER_MAX) {
        size_t l = len - off < ZK_BACKEND_REGISTER_MAX ? len - off : ZK_BACKEND_REGISTER_MAX;
        if (c->n_reg == 64) return zk_fail(err, E2BIG, "CUDA: too many registered regions");
        cudaError_t e = cudaHostRegister((uint8_t *)base + off, l, cudaHostRegisterPortable);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            struct rlimit rl;
            char lim[64] = "unknown";
            if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
                if (rl.rlim_cur == RLIM_INFINITY)
                    snprintf(lim, sizeof lim, "unlimited");
                else
                    snprintf(lim, sizeof lim, "%llu bytes", (unsigned long long)rl.rlim_cur);
            }
            while (c->n_reg > first) cudaHostUnregister(c->reg[--c->n_reg].base);
            return zk_fail(err, e == cudaErrorMemoryAllocation ? ENOMEM : EIO,
                           "CUDA: cudaHostRegister of the slab area %p (%zu bytes), chunk at offset %zu (%zu bytes), "
                           "failed: %s; RLIMIT_MEMLOCK is %s (the whole slab area must be lockable: raise "
                           "LimitMEMLOCK= or ulimit -l)",
                           base, len, off, l, cudaGetErrorString(e), lim);
        }
        c->reg[c->n_reg].base = (uint8_t *)base + off;
        c->reg[c->n_reg].len = l;
        c->n_reg++;
    }
    return 0;
}

static void zc_key_free(zc_key *k) {
    cudaFree(k->a);
    cudaFree(k->b1);
    cudaFree(k->b2);
    cudaFree(k->c);
    cudaFree(k->h);
    memset(k, 0, sizeof *k);
}

/* FNV-1a over delta2 and the first and last points of the sections: tells two keys apart when
 * the second is mapped where the first was (a closed and reopened zkey). */
static uint64_t zc_key_print(const zk_zkey_t *z) {
    uint64_t h = 1469598103934665603ull;
    auto mix = [&](const void *p, size_t len) {
        for (size_t i = 0; p && i < len; i++) h = (h ^ ((const uint8_t *)p)[i]) * 1099511628211ull;
    };
    size_t g1 = z->curve->g1_size, g2 = z->curve->g2_size;
    mix(z->delta2, g2);
    mix(z->points_b2, g2);
    if (z->n_vars) {
        mix(z->points_a, g1);
        mix(z->points_a ? (const uint8_t *)z->points_a + (size_t)(z->n_vars - 1) * g1 : nullptr, g1);
    }
    if (z->domain_size) {
        mix(z->points_h, g1);
        mix(z->points_h ? (const uint8_t *)z->points_h + (size_t)(z->domain_size - 1) * g1 : nullptr, g1);
    }
    return h;
}

/* The resident copy of z's points, or NULL. An entry at z's address whose points differ is a key
 * that is gone: it is dropped here (after the queued work that may still read it). */
static zc_key *zc_key_find(zc_ctx *c, const zk_zkey_t *z) {
    for (int i = 0; i < c->n_keys; i++) {
        zc_key *k = &c->keys[i];
        if (k->id != z->points_a || k->curve != z->curve || k->n_vars != z->n_vars || k->domain != z->domain_size)
            continue;
        if (k->print == zc_key_print(z)) return k;
        zc_idle(c);
        zc_key_free(k);
        c->keys[i] = c->keys[--c->n_keys];
        return nullptr;
    }
    return nullptr;
}

static int zc_load_key(void *ctx, const zk_zkey_t *z, zk_err_t *err) {
    zc_ctx *c = (zc_ctx *)ctx;
    cudaSetDevice(c->device);
    zc_key *k = zc_key_find(c, z);
    if (k) {
        k->used = ++c->clock;
        return 0;
    }
    if (c->n_keys == ZC_MAX_KEYS) { /* evict the least recently used circuit, once no lane uses it */
        cudaError_t e = zc_idle(c);
        if (e != cudaSuccess) return zc_fail_cuda(err, "waiting for the device before evicting a key", e);
        int lru = 0;
        for (int i = 1; i < c->n_keys; i++)
            if (c->keys[i].used < c->keys[lru].used) lru = i;
        zc_key_free(&c->keys[lru]);
        c->keys[lru] = c->keys[--c->n_keys];
    }
    k = &c->keys[c->n_keys];
    memset(k, 0, sizeof *k);
    size_t g1 = z->curve->g1_size, g2 = z->curve->g2_size;
    size_t nc = z->n_vars - z->n_pub - 1;
    struct {
        void **dst;
        const void *src;
        size_t bytes;
    } sec[5] = {{&k->a, z->points_a, z->n_vars * g1},
                {&k->b1, z->points_b1, z->n_vars * g1},
                {&k->b2, z->points_b2, z->n_vars * g2},
                {&k->c, z->points_c, nc * g1},
                {&k->h, z->points_h, (size_t)z->domain_size * g1}};
    for (int i = 0; i < 5; i++) {
        cudaError_t e = cudaMalloc(sec[i].dst, sec[i].bytes ? sec[i].bytes : 1);
        if (e == cudaSuccess && sec[i].bytes)
            e = cudaMemcpyAsync(*sec[i].dst, sec[i].src, sec[i].bytes, cudaMemcpyHostToDevice, c->xs);
        if (e != cudaSuccess) {
            zc_key_free(k);
            return zc_fail_cuda(err, "loading the key's points", e);
        }
    }
    cudaError_t e = cudaStreamSynchronize(c->xs); /* once per circuit: the mapping may go away after */
    if (e != cudaSuccess) {
        zc_key_free(k);
        return zc_fail_cuda(err, "loading the key's points", e);
    }
    k->id = z->points_a;
    k->print = zc_key_print(z);
    k->curve = z->curve;
    k->n_vars = z->n_vars;
    k->n_pub = z->n_pub;
    k->domain = z->domain_size;
    k->used = ++c->clock;
    c->n_keys++;
    return 0;
}

int zc_get_tables(zc_ctx *c, const zk_curve_t *curve, uint32_t logn, void **ret, zk_err_t *err) {
    const zc_fr_ops *fr = zc_curve(curve)->fr;
    void **t = &c->tab[curve->id == ZK_CURVE_BN128 ? 0 : 1];
    if (!*t || fr->tables_logn(*t) != logn) {
        if (*t) {
            cudaStreamSynchronize(c->cs); /* domain size changed: once, outside the steady state */
            fr->tables_free(*t);
            *t = nullptr;
        }
        cudaError_t e = cudaSuccess;
        *t = fr->tables_new(logn, c->cs, &e);
        if (!*t) return zc_fail_cuda(err, "NTT tables", e);
    }
    *ret = *t;
    return 0;
}

float zc_ms(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    if (cudaEventElapsedTime(&ms, a, b) != cudaSuccess) return 0;
    return ms;
}

/* Enqueues one partition on the lane (formats.md §5.3-5.4) and returns:
 *   copy stream:    witness ──► a ──► b ──► c
 *   compute stream:          └► MSM A, B1 (G1), B2 (G2), C ─ waits for c ┘► coset NTTs, P = std(A·B − C) ─► MSM H
 * The compute stream runs the lanes one after another, so the next lane's copies (queued behind
 * this lane's on the copy stream) land while this lane's MSMs run. */
static int zc_submit(void *ctx, int lane, const zk_zkey_t *z, const uint8_t *witness, const void *a, const void *b,
                     const void *cc, zk_err_t *err) {
    zc_ctx *c = (zc_ctx *)ctx;
    cudaSetDevice(c->device);
    if (lane < 0 || lane >= ZK_BACKEND_MAX_LANES) return zk_fail(err, EINVAL, "CUDA: no lane %d", lane);
    zc_lane *L = &c->lane[lane];
    if (L->busy) return zk_fail(err, EBUSY, "CUDA: lane %d is submitted and not yet collected", lane);
    if (z->n_vars < z->n_pub + 1) return zk_fail(err, EINVAL, "CUDA: key has nVars %u < nPublic+1", z->n_vars);
    const zc_curve_ops *co = zc_curve(z->curve);
    zc_key *k = zc_key_find(c, z);
    if (!k) {
        int r = zc_load_key(c, z, err);
        if (r < 0) return r;
        k = zc_key_find(c, z);
    }
    k->used = ++c->clock;
    size_t n = z->domain_size, nv = z->n_vars, nc = nv - z->n_pub - 1;
    void *tab;
    int r = zc_get_tables(c, z->curve, z->log_domain, &tab, err);
    if (r < 0) return r;

    ZC_CK("MSM plan", co->g1->plan(&L->pv1, (uint32_t)nv, 0));
    ZC_CK("MSM plan", co->g2->plan(&L->pv2, (uint32_t)nv, 0));
    ZC_CK("MSM plan", co->g1->plan(&L->pc1, (uint32_t)nc, 0));
    ZC_CK("MSM plan", co->g1->plan(&L->ph1, (uint32_t)n, 0));
    L->co = co;
    /* one workspace for the five MSMs (run one after another); the size is not monotone in n
     * (the window changes with n), so every plan counts */
    size_t ws = std::max(
        {co->g1->ws_size(&L->pv1), co->g2->ws_size(&L->pv2), co->g1->ws_size(&L->pc1), co->g1->ws_size(&L->ph1)});
    ZC_CK("allocating the MSM workspace", zc_ensure(c, &c->ws, ws));
    ZC_CK("allocating the NTT buffer", zc_ensure(c, &c->tmp, n * 32));
    ZC_CK("allocating the witness buffer", zc_ensure(c, &L->wit, nv * 32));
    ZC_CK("allocating a, b, c", zc_ensure(c, &L->abc, 3 * n * 32));
    size_t x1 = co->g1->xyzz_size, x2 = co->g2->xyzz_size;
    size_t win_bytes = (2 * (size_t)L->pv1.nw + L->pc1.nw + L->ph1.nw) * x1 + (size_t)L->pv2.nw * x2;
    if (L->host_win_cap < win_bytes) { /* the lane is idle: nothing queued writes here */
        if (L->host_win) cudaFreeHost(L->host_win);
        L->host_win = nullptr;
        L->host_win_cap = 0;
        ZC_CK("cudaMallocHost", cudaMallocHost(&L->host_win, win_bytes));
        L->host_win_cap = win_bytes;
    }
    uint8_t *w_a = (uint8_t *)L->host_win, *w_b1 = w_a + L->pv1.nw * x1, *w_c = w_b1 + L->pv1.nw * x1;
    uint8_t *w_h = w_c + L->pc1.nw * x1, *w_b2 = w_h + L->ph1.nw * x1;

    cudaEvent_t *ev = L->ev;
    uint32_t *d_wit = (uint32_t *)L->wit.p;
    uint8_t *d_a = (uint8_t *)L->abc.p, *d_b = d_a + 32 * n, *d_c = d_b + 32 * n;
    ZC_CK("event", cudaEventRecord(ev[0], c->xs));
    ZC_CK("copying the witness", cudaMemcpyAsync(d_wit, witness, nv * 32, cudaMemcpyHostToDevice, c->xs));
    ZC_CK("event", cudaEventRecord(ev[1], c->xs));
    ZC_CK("copying a", cudaMemcpyAsync(d_a, a, n * 32, cudaMemcpyHostToDevice, c->xs));
    ZC_CK("copying b", cudaMemcpyAsync(d_b, b, n * 32, cudaMemcpyHostToDevice, c->xs));
    ZC_CK("copying c", cudaMemcpyAsync(d_c, cc, n * 32, cudaMemcpyHostToDevice, c->xs));
    ZC_CK("event", cudaEventRecord(ev[2], c->xs));

    ZC_CK("wait", cudaStreamWaitEvent(c->cs, ev[1], 0));
    ZC_CK("event", cudaEventRecord(ev[3], c->cs));
    ZC_CK("MSM A", co->g1->enqueue(&L->pv1, k->a, d_wit, c->ws.p, w_a, c->cs));
    ZC_CK("event", cudaEventRecord(ev[4], c->cs));
    ZC_CK("MSM B1", co->g1->enqueue(&L->pv1, k->b1, d_wit, c->ws.p, w_b1, c->cs));
    ZC_CK("event", cudaEventRecord(ev[5], c->cs));
    ZC_CK("MSM B2", co->g2->enqueue(&L->pv2, k->b2, d_wit, c->ws.p, w_b2, c->cs));
    ZC_CK("event", cudaEventRecord(ev[6], c->cs));
    ZC_CK("MSM C", co->g1->enqueue(&L->pc1, k->c, d_wit + 8 * (z->n_pub + 1), c->ws.p, w_c, c->cs));
    ZC_CK("event", cudaEventRecord(ev[7], c->cs));
    ZC_CK("wait", cudaStreamWaitEvent(c->cs, ev[2], 0));
    ZC_CK("event", cudaEventRecord(ev[8], c->cs));
    co->fr->coset(d_a, c->tmp.p, tab, c->cs);
    co->fr->coset(d_b, c->tmp.p, tab, c->cs);
    co->fr->coset(d_c, c->tmp.p, tab, c->cs);
    co->fr->abc(d_a, d_b, d_c, n, c->cs);
    ZC_CK("H kernels", cudaGetLastError());
    ZC_CK("event", cudaEventRecord(ev[9], c->cs));
    ZC_CK("MSM H", co->g1->enqueue(&L->ph1, k->h, (const uint32_t *)d_a, c->ws.p, w_h, c->cs));
    ZC_CK("event", cudaEventRecord(ev[10], c->cs));
    L->busy = true;
    return 0;
}

/* Waits for the lane's last event, then the host's part: Horner over the window sums, affine. */
static int zc_collect(void *ctx, int lane, zk_raw_t *out, zk_core_times_t *times, zk_err_t *err) {
    zc_ctx *c = (zc_ctx *)ctx;
    cudaSetDevice(c->device);
    if (lane < 0 || lane >= ZK_BACKEND_MAX_LANES) return zk_fail(err, EINVAL, "CUDA: no lane %d", lane);
    zc_lane *L = &c->lane[lane];
    if (!L->busy) return zk_fail(err, EINVAL, "CUDA: lane %d has nothing submitted", lane);
    L->busy = false;
    cudaEvent_t *ev = L->ev;
    ZC_CK("proving on the GPU", cudaEventSynchronize(ev[10]));
    const zc_curve_ops *co = L->co;
    size_t x1 = co->g1->xyzz_size;
    uint8_t *w_a = (uint8_t *)L->host_win, *w_b1 = w_a + L->pv1.nw * x1, *w_c = w_b1 + L->pv1.nw * x1;
    uint8_t *w_h = w_c + L->pc1.nw * x1, *w_b2 = w_h + L->ph1.nw * x1;
    memset(out, 0, sizeof *out);
    co->g1->finish(&L->pv1, w_a, out->a);
    co->g1->finish(&L->pv1, w_b1, out->b1);
    co->g2->finish(&L->pv2, w_b2, out->b2);
    co->g1->finish(&L->pc1, w_c, out->c);
    co->g1->finish(&L->ph1, w_h, out->h);
    if (times) {
        times->h2d_ns = (uint64_t)(zc_ms(ev[0], ev[2]) * 1e6);
        times->msm_a_ns = (uint64_t)(zc_ms(ev[3], ev[4]) * 1e6);
        times->msm_b1_ns = (uint64_t)(zc_ms(ev[4], ev[5]) * 1e6);
        times->msm_b2_ns = (uint64_t)(zc_ms(ev[5], ev[6]) * 1e6);
        times->msm_c_ns = (uint64_t)(zc_ms(ev[6], ev[7]) * 1e6);
        times->ntt_ns = (uint64_t)(zc_ms(ev[8], ev[9]) * 1e6);
        times->msm_h_ns = (uint64_t)(zc_ms(ev[9], ev[10]) * 1e6);
    }
    return 0;
}

static void zc_destroy(void *ctx) {
    zc_ctx *c = (zc_ctx *)ctx;
    if (!c) return;
    cudaSetDevice(c->device);
    zc_idle(c);
    if (c->check_free) c->check_free(c);
    for (int i = 0; i < c->n_keys; i++) zc_key_free(&c->keys[i]);
    for (zc_lane &L : c->lane) {
        cudaFree(L.wit.p);
        cudaFree(L.abc.p);
        if (L.host_win) cudaFreeHost(L.host_win);
        for (cudaEvent_t e : L.ev) cudaEventDestroy(e);
    }
    zc_buf *bufs[] = {&c->tmp, &c->ws};
    for (zc_buf *b : bufs) cudaFree(b->p);
    if (c->tab[0]) zc_bn.fr->tables_free(c->tab[0]);
    if (c->tab[1]) zc_bls.fr->tables_free(c->tab[1]);
    while (c->n_reg > 0) cudaHostUnregister(c->reg[--c->n_reg].base);
    cudaStreamDestroy(c->cs);
    cudaStreamDestroy(c->xs);
    delete c;
}

extern "C" const zk_backend_ops_t zk_backend_cuda = {
    "cuda", zc_init, zc_register, zc_load_key, ZC_DEPTH, zc_submit, zc_collect, zc_destroy, nullptr,
};
