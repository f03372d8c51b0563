/* zk_backend_cuda: the proving core of formats.md §5.3-5.4 on one GPU. Slabs are registered once
 * (cudaHostRegister, ≤ 64 GiB per call); a circuit's points stay in device memory after load_key;
 * prove() copies the witness and a, b, c from the slab on a copy stream, starts the four witness
 * MSMs as soon as the witness is there (overlapping the a, b, c copy), then H on the device
 * (three coset NTTs and A·B − C), then the H MSM; the only wait is on the compute stream at the end. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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
        c->used -= b->cap;
    }
    b->p = nullptr;
    b->cap = 0;
    cudaError_t e = cudaMalloc(&b->p, bytes);
    if (e == cudaSuccess) b->cap = bytes, c->used += bytes;
    return e;
}

void zc_release(zc_ctx *c, zc_buf *b) {
    if (!b->p) return;
    zc_idle(c);
    cudaFree(b->p);
    c->used -= b->cap;
    b->p = nullptr;
    b->cap = 0;
}

/* What a plan may use (zc_plan_budget): min([gpu] device_memory, what this context holds + the
 * device's free memory now − a reserve for the runtime), so that several gpud on one GPU each plan
 * against what is left. */
static size_t zc_budget(zc_ctx *c) {
    size_t fr = 0, total = 0;
    if (cudaMemGetInfo(&fr, &total) != cudaSuccess) (void)cudaGetLastError(), fr = total = 0;
    return zc_plan_budget(c->cap, c->used, fr, total);
}

extern "C" int zkcuda_device_count(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
    return n;
}

extern "C" const char *zkcuda_device_info(void *ctx) { return ((zc_ctx *)ctx)->info; }

#ifndef ZC_ARCHS /* set by gpud/cuda/meson.build from -Dgpu_archs */
#error "ZC_ARCHS (the architectures this backend is built for) is not defined"
#endif

/* The image of a build carrying SASS for the architectures in `sass` ("80,86,89,90") and PTX for
 * compute_`ptx` that runs on a device of compute capability cc (10·major + minor): SASS for sm_XY
 * runs on major X with minor ≥ Y (the newest such is taken), else the driver JIT-compiles the PTX
 * for any cc ≥ ptx. Writes "sm_86 SASS" or "compute_90 PTX, JIT-compiled by the driver" and returns
 * 1, or 0 when neither runs there. */
extern "C" int zkcuda_arch_image(const char *sass, int ptx, int cc, char *buf, size_t len) {
    int best = -1;
    for (const char *p = sass; *p;) {
        char *end;
        int a = (int)strtol(p, &end, 10);
        if (end == p) break;
        if (a / 10 == cc / 10 && a % 10 <= cc % 10 && a > best) best = a;
        for (p = end; *p == ',' || *p == ' ';) p++;
    }
    if (best >= 0) return snprintf(buf, len, "sm_%d SASS", best), 1;
    if (ptx > 0 && cc >= ptx) return snprintf(buf, len, "compute_%d PTX, JIT-compiled by the driver", ptx), 1;
    return 0;
}

/* The images this build carries, e.g. "SASS sm_80, sm_86, sm_89, sm_90 and PTX compute_90". */
static void zc_arch_built(char *buf, size_t len) {
    size_t n = (size_t)snprintf(buf, len, "SASS");
    for (const char *p = ZC_ARCHS; *p && n < len;) {
        char *end;
        int a = (int)strtol(p, &end, 10);
        if (end == p) break;
        n += (size_t)snprintf(buf + n, len - n, "%s sm_%d", n > 4 ? "," : "", a);
        for (p = end; *p == ',' || *p == ' ';) p++;
    }
    if (n < len) snprintf(buf + n, len - n, " and PTX compute_%d", ZC_PTX_ARCH);
}

#ifdef __CUDACC__
/* The kernel the runtime is asked about: cudaFuncGetAttributes loads the module for the device, so
 * a build without a usable image fails here, at init, and names the image's version otherwise. */
static __global__ void zc_k_probe(int *x) {
    if (x) *x = 0;
}
#endif

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
    cudaDeviceProp prop;
    ZC_CK("cudaGetDeviceProperties", cudaGetDeviceProperties(&prop, device));
    char image[96], built[256];
    int cc = prop.major * 10 + prop.minor;
    zc_arch_built(built, sizeof built);
    if (!zkcuda_arch_image(ZC_ARCHS, ZC_PTX_ARCH, cc, image, sizeof image))
        return zk_fail(err, ENOEXEC,
                       "CUDA: device %d (%s) has compute capability %d.%d, and this build carries no image for it "
                       "(%s); rebuild with -Dgpu_archs including %d",
                       device, prop.name, prop.major, prop.minor, built, cc);
#ifdef __CUDACC__
    cudaFuncAttributes fa;
    cudaError_t pe = cudaFuncGetAttributes(&fa, zc_k_probe);
    if (pe != cudaSuccess) {
        (void)cudaGetLastError();
        return zk_fail(err, pe == cudaErrorNoKernelImageForDevice ? ENOEXEC : ENODEV,
                       "CUDA: device %d (%s, compute capability %d.%d) cannot load this build's kernels (%s): %s",
                       device, prop.name, prop.major, prop.minor, built, cudaGetErrorString(pe));
    }
#endif
    zc_ctx *c = new (std::nothrow) zc_ctx();
    if (!c) return zk_fail(err, ENOMEM, "CUDA: out of memory");
    c->device = device;
    snprintf(c->name, sizeof c->name, "%s", prop.name);
    snprintf(c->info, sizeof c->info, "device %d %s, compute capability %d.%d, image %s (built: %s)", device, prop.name,
             prop.major, prop.minor, image, built);
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

static void zc_key_free(zc_ctx *c, zc_key *k) {
    cudaFree(k->a);
    cudaFree(k->b1);
    cudaFree(k->b2);
    cudaFree(k->c);
    cudaFree(k->h);
    if (k->a) c->used -= k->plan.key;
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
        zc_key_free(c, k);
        c->keys[i] = c->keys[--c->n_keys];
        return nullptr;
    }
    return nullptr;
}

/* ---- device memory (docs/cuda.md, "Device memory") ---- */

static zc_plan_circuit_t zc_circuit_of(const zk_zkey_t *z) {
    return zc_plan_circuit_t{z->curve, z->n_vars, z->n_pub, z->log_domain};
}

/* CUB's temporary sizes for the plan (devplan.h), asked of CUB through a group's plan (they do not
 * depend on the group). */
struct zc_cub_arg {
    const zc_group_ops *g;
    cudaError_t e;
};
static int zc_cub_sizes(zc_msm_plan *p, void *arg) {
    zc_cub_arg *a = (zc_cub_arg *)arg;
    a->e = a->g->plan(p, p->n, p->c);
    return a->e == cudaSuccess ? 0 : -EIO;
}

/* Chooses how z's partitions use the device (zc_plan_choose): -ENOMEM naming what is short when
 * not even the smallest plan fits the budget. */
static int zc_mem_plan(zc_ctx *c, const zk_zkey_t *z, zc_dev_plan_t *p, zk_err_t *err) {
    zc_cub_arg a = {zc_curve(z->curve)->g1, cudaSuccess};
    zc_plan_cub_t cub = {zc_cub_sizes, &a};
    zc_plan_circuit_t k = zc_circuit_of(z);
    int r = zc_plan_choose(&k, zc_budget(c), &cub, p);
    if (r == -ENOMEM) {
        char d[300];
        zc_plan_describe(&k, p, d, sizeof d);
        return zk_fail(err, ENOMEM,
                       "CUDA: device memory: a partition of this circuit (%u wires, domain %u) needs at least %.1f MiB "
                       "on the device (%s), the budget is %.1f MiB (device free memory%s)",
                       z->n_vars, z->domain_size, p->need / 1048576.0, d, p->budget / 1048576.0,
                       c->cap ? " and [gpu] device_memory" : "");
    }
    if (r < 0) return zc_fail_cuda(err, "MSM plan", a.e);
    return 0;
}

static const zc_fr_ops *zc_fr_of(int curve_idx) {
    return curve_idx == 0 ? zc_curve(&zk_curve_bn128)->fr : zc_curve(&zk_curve_bls12381)->fr;
}

/* Frees curve_idx's NTT tables (after the queued work) and uncounts them. */
static void zc_tables_free(zc_ctx *c, int curve_idx) {
    auto &t = c->tab[curve_idx];
    if (!t.p) return;
    zc_idle(c);
    c->used -= zc_plan_tables_bytes(t.logn, t.blocked, t.logr);
    if (t.blocked)
        zc_fr_of(curve_idx)->btables_free(t.p);
    else
        zc_fr_of(curve_idx)->tables_free(t.p);
    t.p = nullptr;
}

static bool zc_tables_are(const zc_ctx *c, int curve_idx, uint32_t logn, bool blocked, uint32_t logr) {
    auto &t = c->tab[curve_idx];
    return t.p && t.logn == logn && t.blocked == blocked && (!blocked || t.logr == logr);
}

/* Makes room for key k's plan: what the context would hold once the plan's buffers are grown must
 * fit the budget; other keys are evicted (least recently used first), then the other curve's NTT
 * tables and buffers larger than the plan needs are freed (all after the queued work). */
static void zc_make_room(zc_ctx *c, const zc_key *k, int curve_idx) {
    const zc_dev_plan_t x = k->plan;
    uint32_t logn = (uint32_t)__builtin_ctz(k->domain);
    bool blocked = x.ntt_block != 0;
    auto grow = [](const zc_buf &b, size_t want) { return want > b.cap ? want - b.cap : 0; };
    auto projected = [&]() {
        size_t p = c->used;
        for (int l = 0; l < ZC_DEPTH; l++)
            p += grow(c->lane[l].wit, x.wit) + grow(c->lane[l].abc, x.abc) + grow(c->lane[l].win, x.win);
        p += grow(c->ws, x.ws) + grow(c->tmp, x.ntt) + grow(c->stage, x.stage) + grow(c->sstage, x.sstage);
        auto &t = c->tab[curve_idx];
        if (!zc_tables_are(c, curve_idx, logn, blocked, x.log_rows))
            p += x.tables - (t.p ? zc_plan_tables_bytes(t.logn, t.blocked, t.logr) : 0);
        if (x.resident && !k->a) p += x.key;
        return p;
    };
    size_t budget = zc_budget(c);
    while (projected() > budget) {
        int lru = -1;
        for (int i = 0; i < c->n_keys; i++)
            if (&c->keys[i] != k && c->keys[i].a && (lru < 0 || c->keys[i].used < c->keys[lru].used)) lru = i;
        if (lru < 0) break;
        zc_idle(c);
        zc_key_free(c, &c->keys[lru]);
        c->keys[lru] = c->keys[--c->n_keys];
        if (k == &c->keys[c->n_keys]) k = &c->keys[lru]; /* k was the moved entry */
    }
    if (projected() <= budget) return;
    zc_tables_free(c, 1 - curve_idx);
    auto shrink = [&](zc_buf &b, size_t want) {
        if (b.cap > want) zc_release(c, &b);
    };
    for (int l = 0; l < ZC_DEPTH; l++)
        shrink(c->lane[l].wit, x.wit), shrink(c->lane[l].abc, x.abc), shrink(c->lane[l].win, x.win);
    shrink(c->ws, x.ws), shrink(c->tmp, x.ntt), shrink(c->stage, x.stage), shrink(c->sstage, x.sstage);
}

static zc_key *zc_key_slot(zc_ctx *c, const zk_zkey_t *z) {
    for (int i = 0; i < c->n_keys; i++)
        if (c->keys[i].id == z->points_a && c->keys[i].print == zc_key_print(z)) return &c->keys[i];
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
    if (z->n_vars < z->n_pub + 1) return zk_fail(err, EINVAL, "CUDA: key has nVars %u < nPublic+1", z->n_vars);
    zc_dev_plan_t plan;
    int r = zc_mem_plan(c, z, &plan, err);
    if (r < 0) return r;
    if (c->n_keys == ZC_MAX_KEYS) { /* evict the least recently used circuit, once no lane uses it */
        cudaError_t e = zc_idle(c);
        if (e != cudaSuccess) return zc_fail_cuda(err, "waiting for the device before evicting a key", e);
        int lru = 0;
        for (int i = 1; i < c->n_keys; i++)
            if (c->keys[i].used < c->keys[lru].used) lru = i;
        zc_key_free(c, &c->keys[lru]);
        c->keys[lru] = c->keys[--c->n_keys];
    }
    k = &c->keys[c->n_keys];
    memset(k, 0, sizeof *k);
    k->plan = plan;
    k->id = z->points_a;
    k->print = zc_key_print(z);
    k->curve = z->curve;
    k->n_vars = z->n_vars;
    k->n_pub = z->n_pub;
    k->domain = z->domain_size;
    k->used = ++c->clock;
    c->n_keys++;
    if (!plan.resident) return 0; /* submit streams the points from z's mapping */
    zc_make_room(c, k, z->curve->id == ZK_CURVE_BN128 ? 0 : 1);
    k = zc_key_slot(c, z); /* eviction may have moved the entry */
    size_t g1 = z->curve->g1_size, g2 = z->curve->g2_size;
    size_t nc = z->n_vars - z->n_pub - 1;
    void *dst[5] = {nullptr, nullptr, nullptr, nullptr, nullptr};
    struct {
        const void *src;
        size_t bytes;
    } sec[5] = {{z->points_a, z->n_vars * g1},
                {z->points_b1, z->n_vars * g1},
                {z->points_b2, z->n_vars * g2},
                {z->points_c, nc * g1},
                {z->points_h, (size_t)z->domain_size * g1}};
    cudaError_t e = cudaSuccess;
    for (int i = 0; i < 5 && e == cudaSuccess; i++) {
        e = cudaMalloc(&dst[i], sec[i].bytes ? sec[i].bytes : 1);
        if (e == cudaSuccess && sec[i].bytes)
            e = cudaMemcpyAsync(dst[i], sec[i].src, sec[i].bytes, cudaMemcpyHostToDevice, c->xs);
    }
    if (e == cudaSuccess) e = cudaStreamSynchronize(c->xs); /* once per circuit */
    if (e != cudaSuccess) {
        for (void *d : dst) cudaFree(d);
        c->keys[k - c->keys] = c->keys[--c->n_keys];
        return zc_fail_cuda(err, "loading the key's points", e);
    }
    k->a = dst[0], k->b1 = dst[1], k->b2 = dst[2], k->c = dst[3], k->h = dst[4];
    c->used += plan.key; /* counted as the plan counts it (the 1-byte stand-ins of empty sections aside) */
    return 0;
}

/* One line on the key's device-memory plan (gpud logs it after load_key). */
static const char *zc_key_info(void *ctx, const zk_zkey_t *z) {
    zc_ctx *c = (zc_ctx *)ctx;
    const zc_key *k = zc_key_slot(c, z);
    if (!k) return nullptr;
    zc_plan_circuit_t kc = zc_circuit_of(z);
    char d[300];
    zc_plan_describe(&kc, &k->plan, d, sizeof d);
    snprintf(c->keyinfo, sizeof c->keyinfo, "device memory: %s of a %.1f MiB budget (%s); pinned host memory %.1f MiB",
             d, k->plan.budget / 1048576.0, c->cap ? "[gpu] device_memory" : "the device's free memory",
             k->plan.pinned / 1048576.0);
    return c->keyinfo;
}

static int zc_set_device_memory(void *ctx, uint64_t bytes, zk_err_t *err) {
    (void)err;
    ((zc_ctx *)ctx)->cap = (size_t)bytes;
    return 0;
}

int zc_get_tables(zc_ctx *c, const zk_curve_t *curve, uint32_t logn, bool blocked, uint32_t logr, void **ret,
                  zk_err_t *err) {
    int i = curve->id == ZK_CURVE_BN128 ? 0 : 1;
    auto &t = c->tab[i];
    if (!zc_tables_are(c, i, logn, blocked, logr)) {
        zc_tables_free(c, i); /* they changed: once, outside the steady state */
        const zc_fr_ops *fr = zc_curve(curve)->fr;
        cudaError_t e = cudaSuccess;
        t.p = blocked ? fr->btables_new(logn, logr, c->cs, &e) : fr->tables_new(logn, c->cs, &e);
        if (!t.p) return zc_fail_cuda(err, "NTT tables", e);
        t.blocked = blocked, t.logn = logn, t.logr = logr;
        c->used += zc_plan_tables_bytes(logn, blocked, logr);
    }
    *ret = t.p;
    return 0;
}

float zc_ms(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    if (cudaEventElapsedTime(&ms, a, b) != cudaSuccess) return 0;
    return ms;
}

cudaError_t zc_hntt_ensure(zc_ctx *c, size_t bytes) {
    if (c->hntt_cap >= bytes) return cudaSuccess;
    cudaError_t e = zc_idle(c); /* queued work of the other lane may still use them */
    if (e != cudaSuccess) return e;
    if (c->hntt) cudaFreeHost(c->hntt);
    c->hntt = nullptr;
    c->hntt_cap = 0;
    if ((e = cudaMallocHost(&c->hntt, bytes)) == cudaSuccess) c->hntt_cap = bytes;
    return e;
}

/* The H step with the NTT in blocks (ntt.cuh, docs/cuda.md "NTT in blocks"), all on the compute
 * stream: a, b, c (natural order, Montgomery, host memory: the slab) go through the three passes
 * into the pinned host vectors c->hntt (a's, b's, c's, n elements each), the last pass of all
 * three at once, block by block, writing P = standard(A·B − C) over a's vector: the H MSM's
 * scalars. The device holds the blocks only: three of B elements and one to permute into. */
cudaError_t zc_ntt_blocked(zc_ctx *c, const zc_fr_ops *fr, const void *tab, const zc_dev_plan_t *x, uint32_t logn,
                           const void *a, const void *b, const void *cc) {
    size_t n = (size_t)1 << logn, R = (size_t)1 << x->log_rows, C = n / R, B = x->ntt_block;
    size_t w = B / R, h = B / C, row = C * 32, wb = w * 32;
    uint8_t *blk = (uint8_t *)c->tmp.p, *tmp = blk + 3 * B * 32;
    uint8_t *hv[3] = {(uint8_t *)c->hntt, (uint8_t *)c->hntt + n * 32, (uint8_t *)c->hntt + 2 * n * 32};
    const uint8_t *src[3] = {(const uint8_t *)a, (const uint8_t *)b, (const uint8_t *)cc};
    cudaError_t e;
    for (int v = 0; v < 3; v++) {
        for (size_t c0 = 0; c0 < C; c0 += w) { /* pass 1: columns c0 … c0+w−1 */
            if ((e = cudaMemcpy2DAsync(blk, wb, src[v] + c0 * 32, row, wb, R, cudaMemcpyHostToDevice, c->cs))) return e;
            fr->bcols(blk, tmp, w, c0, 1, tab, c->cs);
            if ((e = cudaMemcpy2DAsync(hv[v] + c0 * 32, row, blk, wb, wb, R, cudaMemcpyDeviceToHost, c->cs))) return e;
        }
        for (size_t r0 = 0; r0 < R; r0 += h) { /* pass 2: rows r0 … r0+h−1 */
            if ((e = cudaMemcpyAsync(blk, hv[v] + r0 * row, h * row, cudaMemcpyHostToDevice, c->cs))) return e;
            fr->brows(blk, tmp, h, r0, tab, c->cs);
            if ((e = cudaMemcpyAsync(hv[v] + r0 * row, blk, h * row, cudaMemcpyDeviceToHost, c->cs))) return e;
        }
    }
    for (size_t c0 = 0; c0 < C; c0 += w) { /* pass 3: the same columns of a, b and c, then P */
        for (int v = 0; v < 3; v++) {
            uint8_t *bv = blk + v * B * 32;
            if ((e = cudaMemcpy2DAsync(bv, wb, hv[v] + c0 * 32, row, wb, R, cudaMemcpyHostToDevice, c->cs))) return e;
            fr->bcols(bv, tmp, w, c0, 0, tab, c->cs);
        }
        fr->abc(blk, blk + B * 32, blk + 2 * B * 32, B, c->cs);
        if ((e = cudaMemcpy2DAsync(hv[0] + c0 * 32, row, blk, wb, wb, R, cudaMemcpyDeviceToHost, c->cs))) return e;
    }
    return cudaGetLastError();
}

/* Enqueues one partition on the lane (formats.md §5.3-5.4) and returns:
 *   copy stream:    witness ──► a ──► b ──► c
 *   compute stream:          └► MSM A, B1 (G1), B2 (G2), C ─ waits for c ┘► coset NTTs, P = std(A·B − C) ─► MSM H
 * The compute stream runs the lanes one after another, so the next lane's copies (queued behind
 * this lane's on the copy stream) land while this lane's MSMs run. A plan with the NTT in blocks
 * copies nothing on the copy stream: the compute stream streams the scalars and a, b, c itself. */
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
    zc_make_room(c, k, z->curve->id == ZK_CURVE_BN128 ? 0 : 1);
    k = zc_key_slot(c, z);
    const zc_dev_plan_t x = k->plan;
    bool blocked = x.ntt_block != 0;
    void *tab;
    int r = zc_get_tables(c, z->curve, z->log_domain, blocked, x.log_rows, &tab, err);
    if (r < 0) return r;
    L->pv1 = x.pv1, L->pv2 = x.pv2, L->pc1 = x.pc1, L->ph1 = x.ph1;
    L->co = co;
    ZC_CK("allocating the MSM workspace", zc_ensure(c, &c->ws, x.ws));
    ZC_CK("allocating the NTT buffer", zc_ensure(c, &c->tmp, x.ntt));
    ZC_CK("allocating the witness buffer", zc_ensure(c, &L->wit, x.wit));
    ZC_CK("allocating a, b, c", zc_ensure(c, &L->abc, x.abc));
    ZC_CK("allocating the window sums", zc_ensure(c, &L->win, x.win));
    if (x.stage) ZC_CK("allocating the staging buffer for the key's points", zc_ensure(c, &c->stage, x.stage));
    if (x.sstage) ZC_CK("allocating the staging buffer for scalars", zc_ensure(c, &c->sstage, x.sstage));
    if (blocked) ZC_CK("allocating the NTT's host vectors", zc_hntt_ensure(c, 3 * n * 32));
    if (L->host_win_cap < x.win) { /* the lane is idle: nothing queued writes here */
        if (L->host_win) cudaFreeHost(L->host_win);
        L->host_win = nullptr;
        L->host_win_cap = 0;
        ZC_CK("cudaMallocHost", cudaMallocHost(&L->host_win, x.win));
        L->host_win_cap = x.win;
    }
    size_t x1 = co->g1->xyzz_size;
    uint8_t *w_a = (uint8_t *)L->win.p, *w_b1 = w_a + L->pv1.nw * x1, *w_c = w_b1 + L->pv1.nw * x1;
    uint8_t *w_h = w_c + L->pc1.nw * x1, *w_b2 = w_h + L->ph1.nw * x1;

    cudaEvent_t *ev = L->ev;
    uint32_t *d_wit = blocked ? nullptr : (uint32_t *)L->wit.p;
    uint8_t *d_a = (uint8_t *)L->abc.p, *d_b = d_a + 32 * n, *d_c = d_b + 32 * n;
    ZC_CK("event", cudaEventRecord(ev[0], c->xs));
    if (!blocked) ZC_CK("copying the witness", cudaMemcpyAsync(d_wit, witness, nv * 32, cudaMemcpyHostToDevice, c->xs));
    ZC_CK("event", cudaEventRecord(ev[1], c->xs));
    if (!blocked) {
        ZC_CK("copying a", cudaMemcpyAsync(d_a, a, n * 32, cudaMemcpyHostToDevice, c->xs));
        ZC_CK("copying b", cudaMemcpyAsync(d_b, b, n * 32, cudaMemcpyHostToDevice, c->xs));
        ZC_CK("copying c", cudaMemcpyAsync(d_c, cc, n * 32, cudaMemcpyHostToDevice, c->xs));
    }
    ZC_CK("event", cudaEventRecord(ev[2], c->xs));

    /* One MSM: its points in chunks of the plan's size, each chunk's window sums added into out
     * on the device. The points come from the resident copy (dev) or, streamed, from the key's
     * mapping (host) into the staging buffer; the scalars from device memory (dsc) or, streamed,
     * from host memory (hsc) into theirs; both copies on the compute stream, after the previous
     * chunk's kernels read the buffers. */
    auto msm = [&](const zc_group_ops *g, const zc_msm_plan *full, size_t count, const void *dev, const void *host,
                   const uint32_t *dsc, const uint8_t *hsc, void *out) -> cudaError_t {
        if (count == 0) return g->enqueue(full, dev, dsc, c->ws.p, out, 0, c->cs);
        for (size_t off = 0; off < count; off += full->n) {
            uint32_t len = (uint32_t)std::min((size_t)full->n, count - off);
            zc_msm_plan tail;
            const zc_msm_plan *p = full;
            cudaError_t e;
            if (len != full->n) {
                if ((e = g->plan(&tail, len, full->c)) != cudaSuccess) return e;
                p = &tail;
            }
            const void *pts = dev ? (const uint8_t *)dev + off * g->aff_size : c->stage.p;
            if (!dev && (e = cudaMemcpyAsync(c->stage.p, (const uint8_t *)host + off * g->aff_size, len * g->aff_size,
                                             cudaMemcpyHostToDevice, c->cs)) != cudaSuccess)
                return e;
            const uint32_t *sc = dsc ? dsc + 8 * off : (const uint32_t *)c->sstage.p;
            if (!dsc && (e = cudaMemcpyAsync(c->sstage.p, hsc + 32 * off, (size_t)len * 32, cudaMemcpyHostToDevice,
                                             c->cs)) != cudaSuccess)
                return e;
            if ((e = g->enqueue(p, pts, sc, c->ws.p, out, off > 0, c->cs)) != cudaSuccess) return e;
        }
        return cudaSuccess;
    };
    const uint32_t *d_wc = blocked ? nullptr : d_wit + 8 * (z->n_pub + 1);
    const uint8_t *h_wc = witness + 32 * (size_t)(z->n_pub + 1);
    ZC_CK("wait", cudaStreamWaitEvent(c->cs, ev[1], 0));
    ZC_CK("event", cudaEventRecord(ev[3], c->cs));
    ZC_CK("MSM A", msm(co->g1, &L->pv1, nv, k->a, z->points_a, d_wit, witness, w_a));
    ZC_CK("event", cudaEventRecord(ev[4], c->cs));
    ZC_CK("MSM B1", msm(co->g1, &L->pv1, nv, k->b1, z->points_b1, d_wit, witness, w_b1));
    ZC_CK("event", cudaEventRecord(ev[5], c->cs));
    ZC_CK("MSM B2", msm(co->g2, &L->pv2, nv, k->b2, z->points_b2, d_wit, witness, w_b2));
    ZC_CK("event", cudaEventRecord(ev[6], c->cs));
    ZC_CK("MSM C", msm(co->g1, &L->pc1, nc, k->c, z->points_c, d_wc, h_wc, w_c));
    ZC_CK("event", cudaEventRecord(ev[7], c->cs));
    ZC_CK("wait", cudaStreamWaitEvent(c->cs, ev[2], 0));
    ZC_CK("event", cudaEventRecord(ev[8], c->cs));
    const uint8_t *h_p = nullptr; /* blocked: P in the host vectors */
    if (!blocked) {
        co->fr->coset(d_a, c->tmp.p, tab, c->cs);
        co->fr->coset(d_b, c->tmp.p, tab, c->cs);
        co->fr->coset(d_c, c->tmp.p, tab, c->cs);
        co->fr->abc(d_a, d_b, d_c, n, c->cs);
    } else {
        ZC_CK("the NTT in blocks", zc_ntt_blocked(c, co->fr, tab, &x, z->log_domain, a, b, cc));
        h_p = (const uint8_t *)c->hntt;
    }
    ZC_CK("H kernels", cudaGetLastError());
    ZC_CK("event", cudaEventRecord(ev[9], c->cs));
    ZC_CK("MSM H", msm(co->g1, &L->ph1, n, k->h, z->points_h, blocked ? nullptr : (const uint32_t *)d_a, h_p, w_h));
    ZC_CK("copying the window sums", cudaMemcpyAsync(L->host_win, L->win.p, x.win, cudaMemcpyDeviceToHost, c->cs));
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

/* Whether the lane's last event has run, without waiting (cudaEventQuery). */
static int zc_poll(void *ctx, int lane, uint64_t *ret_left_ns, zk_err_t *err) {
    zc_ctx *c = (zc_ctx *)ctx;
    cudaSetDevice(c->device);
    *ret_left_ns = 0;
    if (lane < 0 || lane >= ZK_BACKEND_MAX_LANES) return zk_fail(err, EINVAL, "CUDA: no lane %d", lane);
    zc_lane *L = &c->lane[lane];
    if (!L->busy) return zk_fail(err, EINVAL, "CUDA: lane %d has nothing submitted", lane);
    cudaError_t e = cudaEventQuery(L->ev[10]);
    if (e == cudaErrorNotReady) {
        /* a state, not an error: should the runtime keep it as the thread's last error, the next
         * submit's launch check (cudaGetLastError) must not read it */
        (void)cudaGetLastError();
        return 0;
    }
    ZC_CK("proving on the GPU", e);
    return 1;
}

static void zc_destroy(void *ctx) {
    zc_ctx *c = (zc_ctx *)ctx;
    if (!c) return;
    cudaSetDevice(c->device);
    zc_idle(c);
    if (c->check_free) c->check_free(c);
    for (int i = 0; i < c->n_keys; i++) zc_key_free(c, &c->keys[i]);
    for (zc_lane &L : c->lane) {
        cudaFree(L.wit.p);
        cudaFree(L.abc.p);
        cudaFree(L.win.p);
        if (L.host_win) cudaFreeHost(L.host_win);
        for (cudaEvent_t e : L.ev) cudaEventDestroy(e);
    }
    zc_buf *bufs[] = {&c->tmp, &c->ws, &c->stage, &c->sstage};
    for (zc_buf *b : bufs) cudaFree(b->p);
    if (c->hntt) cudaFreeHost(c->hntt);
    zc_tables_free(c, 0);
    zc_tables_free(c, 1);
    while (c->n_reg > 0) cudaHostUnregister(c->reg[--c->n_reg].base);
    cudaStreamDestroy(c->cs);
    cudaStreamDestroy(c->xs);
    delete c;
}

extern "C" const zk_backend_ops_t zk_backend_cuda = {
    "cuda",     zc_init, zc_register, zc_load_key, ZC_DEPTH,           zc_submit,
    zc_collect, zc_poll, zc_destroy,  zc_key_info, zkcuda_device_info, zc_set_device_memory,
    nullptr, /* set_lanes: the streams and events keep the lanes apart already */
};
