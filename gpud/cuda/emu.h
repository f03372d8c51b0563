/* Host emulation of the part of the CUDA runtime and CUB the backend uses (see rt.cuh).
 * Work on a stream is queued, not run: it runs when the host waits for it (stream or event
 * synchronisation, cudaFree, a synchronous copy), in an adversarial order: each wait draws a
 * priority order of the streams (seed: ZKPIPE_EMU_SEED, default 1) and runs the first stream that
 * may run as far as it can, and an operation that waits for an event runs only once that event's
 * recorded work has run. So a
 * missing cudaStreamWaitEvent, a host read of results before the wait, or a host buffer rewritten
 * before its copy ran gives wrong numbers, as it may on a device. Copies read their source when
 * they run (as from pinned memory). Also checked as on a device: launch configurations (an empty
 * grid, a block over 1024 threads or over 48 KB of shared memory fail), CUB temporary-storage
 * sizes; device memory is filled with garbage when allocated. Operations on the legacy stream
 * (nullptr) run at once. Not modelled: real concurrency, timing, the PTX. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <numeric>
#include <random>
#include <unordered_map>
#include <vector>

#define __global__
#define __noinline__

struct zc_emu_dim {
    unsigned x, y, z;
};
inline thread_local zc_emu_dim threadIdx{0, 0, 0}, blockIdx{0, 0, 0}, blockDim{1, 1, 1};
inline thread_local uint8_t *zc_emu_smem;
inline void __syncthreads() {}
inline unsigned __brev(unsigned x) {
    unsigned r = 0;
    for (int i = 0; i < 32; i++) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}
#define ZC_DYN_SHARED(T, name) T *name = (T *)zc_emu_smem

typedef enum {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorDevicesUnavailable = 46,
    cudaErrorNoDevice = 100,
    cudaErrorECCUncorrectable = 214,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorNotReady = 600,
    cudaErrorIllegalAddress = 700,
    cudaErrorLaunchTimeout = 702,
    cudaErrorAssert = 710,
    cudaErrorHardwareStackError = 714,
    cudaErrorIllegalInstruction = 715,
    cudaErrorMisalignedAddress = 716,
    cudaErrorInvalidAddressSpace = 717,
    cudaErrorInvalidPc = 718,
    cudaErrorLaunchFailure = 719,
    cudaErrorUnknown = 999,
} cudaError_t;
enum cudaMemcpyKind {
    cudaMemcpyHostToHost,
    cudaMemcpyHostToDevice,
    cudaMemcpyDeviceToHost,
    cudaMemcpyDeviceToDevice,
    cudaMemcpyDefault
};
#define cudaStreamNonBlocking 1u
#define cudaEventDefault 0u
#define cudaEventBlockingSync 1u
#define cudaHostRegisterPortable 1u

struct zc_emu_event {
    double ms;
    uint64_t recorded, done; /* generations: recorded by cudaEventRecord, done when that work ran */
};
typedef zc_emu_event *cudaEvent_t;
struct zc_emu_op {
    std::function<void()> run;
    zc_emu_event *wait; /* runs only once wait->done >= gen */
    uint64_t gen;
};
struct zc_emu_stream {
    std::deque<zc_emu_op> q;
};
typedef zc_emu_stream *cudaStream_t;
struct cudaDeviceProp {
    char name[256];
    int major, minor;
};

inline thread_local cudaError_t zc_emu_last = cudaSuccess;
inline cudaError_t zc_emu_fail(cudaError_t e) { return zc_emu_last = e; }
/* Fault injection for tests: ZKPIPE_EMU_FAULT=N makes the N-th kernel launch of the process fault
 * when it runs (cudaErrorLaunchFailure); from then on, as on a device, every call returns it. */
inline cudaError_t zc_emu_sticky = cudaSuccess;
inline unsigned long zc_emu_launches;
#define ZC_EMU_STICKY()                                                                                                \
    do {                                                                                                               \
        if (zc_emu_sticky) return zc_emu_sticky;                                                                       \
    } while (0)

inline const char *cudaGetErrorString(cudaError_t e) {
    switch (e) {
    case cudaSuccess:
        return "no error";
    case cudaErrorInvalidValue:
        return "invalid argument (emulated)";
    case cudaErrorMemoryAllocation:
        return "out of memory (emulated)";
    case cudaErrorInvalidConfiguration:
        return "invalid configuration argument (emulated)";
    case cudaErrorNoDevice:
        return "no CUDA-capable device is detected (emulated)";
    case cudaErrorLaunchFailure:
        return "unspecified launch failure (emulated)";
    default:
        return "unknown error (emulated)";
    }
}
inline cudaError_t cudaGetLastError() {
    ZC_EMU_STICKY();
    cudaError_t e = zc_emu_last;
    zc_emu_last = cudaSuccess;
    return e;
}
inline cudaError_t cudaGetDeviceCount(int *n) { return *n = 1, cudaSuccess; }
inline cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : zc_emu_fail(cudaErrorInvalidValue); }
/* The emulated device's compute capability: ZKPIPE_EMU_CC=M.N (default 9.0), so that a test can ask
 * for a device this build has no image for. */
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int) {
    snprintf(p->name, sizeof p->name, "host emulation");
    p->major = 9, p->minor = 0;
    const char *cc = getenv("ZKPIPE_EMU_CC");
    if (cc && sscanf(cc, "%d.%d", &p->major, &p->minor) != 2) {
        fprintf(stderr, "CUDA emulation: ZKPIPE_EMU_CC=%s: expected MAJOR.MINOR, e.g. 7.5\n", cc);
        abort();
    }
    return cudaSuccess;
}

/* ---- the queues and the scheduler ---- */
inline std::vector<zc_emu_stream *> &zc_emu_streams() {
    static std::vector<zc_emu_stream *> v;
    return v;
}
inline std::mt19937_64 &zc_emu_rng() {
    static std::mt19937_64 r(getenv("ZKPIPE_EMU_SEED") ? strtoull(getenv("ZKPIPE_EMU_SEED"), nullptr, 10) : 1);
    return r;
}
inline bool zc_emu_runnable(const zc_emu_stream *s) {
    return !s->q.empty() && (!s->q.front().wait || s->q.front().wait->done >= s->q.front().gen);
}
/* Runs queued operations until done() holds. Each call draws a priority order of the streams and
 * always runs the first runnable stream in it: a consumer stream that comes first runs as far as
 * it may before its producer catches up, so a missing wait shows up in one order or another. */
template <class Done> inline cudaError_t zc_emu_progress(Done done) {
    std::vector<zc_emu_stream *> order = zc_emu_streams();
    std::shuffle(order.begin(), order.end(), zc_emu_rng());
    while (!done()) {
        if (zc_emu_sticky) return zc_emu_sticky;
        zc_emu_stream *s = nullptr;
        for (zc_emu_stream *x : order)
            if (zc_emu_runnable(x)) {
                s = x;
                break;
            }
        if (!s) {
            fprintf(stderr, "CUDA emulation: the host waits for work that waits for an event never recorded\n");
            abort();
        }
        zc_emu_op op = std::move(s->q.front());
        s->q.pop_front();
        if (op.run) op.run();
        if (zc_emu_sticky) { /* a fault: nothing queued runs any more */
            for (zc_emu_stream *x : zc_emu_streams()) x->q.clear();
            return zc_emu_sticky;
        }
    }
    return zc_emu_sticky;
}
inline cudaError_t zc_emu_drain() {
    return zc_emu_progress([] {
        for (zc_emu_stream *s : zc_emu_streams())
            if (!s->q.empty()) return false;
        return true;
    });
}
/* Queues fn on s (runs it at once on the legacy stream). */
inline void zc_emu_enqueue(cudaStream_t s, std::function<void()> fn, zc_emu_event *wait = nullptr, uint64_t gen = 0) {
    if (!s) {
        if (wait) zc_emu_progress([&] { return wait->done >= gen; });
        fn();
        return;
    }
    s->q.push_back(zc_emu_op{std::move(fn), wait, gen});
}

/* The emulated device's memory: ZKPIPE_EMU_DEVICE_MEMORY bytes (a suffix K, M or G; default 80G).
 * cudaMalloc fails with cudaErrorMemoryAllocation, as on a device, once the allocations would
 * exceed it; cudaMemGetInfo reports what is left. Pinned host memory (cudaMallocHost) does not count. */
inline size_t zc_emu_device_size() {
    static size_t total = [] {
        const char *v = getenv("ZKPIPE_EMU_DEVICE_MEMORY");
        if (!v) return (size_t)80 << 30;
        char *end;
        unsigned long long x = strtoull(v, &end, 10);
        int sh = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
        if (end == v || (sh && end[1]) || (!sh && *end)) {
            fprintf(stderr, "CUDA emulation: ZKPIPE_EMU_DEVICE_MEMORY=%s: expected bytes, e.g. 64M\n", v);
            abort();
        }
        return (size_t)x << sh;
    }();
    return total;
}
inline std::unordered_map<void *, size_t> &zc_emu_allocs() {
    static std::unordered_map<void *, size_t> m;
    return m;
}
inline size_t zc_emu_allocated;
template <class T> inline cudaError_t cudaMalloc(T **p, size_t n) {
    ZC_EMU_STICKY();
    if (n > zc_emu_device_size() - zc_emu_allocated) return zc_emu_fail(cudaErrorMemoryAllocation);
    void *m = n ? malloc(n) : nullptr;
    if (n && !m) return zc_emu_fail(cudaErrorMemoryAllocation);
    if (m) {
        memset(m, 0xa5, n);
        zc_emu_allocs()[m] = n;
        zc_emu_allocated += n;
    }
    *p = (T *)m;
    return cudaSuccess;
}
inline cudaError_t cudaMemGetInfo(size_t *fr, size_t *total) {
    *total = zc_emu_device_size();
    *fr = *total - zc_emu_allocated;
    return cudaSuccess;
}
/* cudaFree and cudaFreeHost wait for the device first, as they do on one */
inline cudaError_t cudaFree(void *p) {
    zc_emu_drain();
    auto it = zc_emu_allocs().find(p);
    if (it != zc_emu_allocs().end()) zc_emu_allocated -= it->second, zc_emu_allocs().erase(it);
    free(p);
    return cudaSuccess;
}
template <class T> inline cudaError_t cudaMallocHost(T **p, size_t n) {
    ZC_EMU_STICKY();
    void *m = n ? malloc(n) : nullptr;
    if (n && !m) return zc_emu_fail(cudaErrorMemoryAllocation);
    if (m) memset(m, 0xa5, n);
    *p = (T *)m;
    return cudaSuccess;
}
inline cudaError_t cudaFreeHost(void *p) { return zc_emu_drain(), free(p), cudaSuccess; }
inline cudaError_t cudaHostRegister(void *, size_t, unsigned) { return cudaSuccess; }
inline cudaError_t cudaHostUnregister(void *) { return cudaSuccess; }
inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind, cudaStream_t st = nullptr) {
    ZC_EMU_STICKY();
    ZC_EMU_STICKY();
    if (n && (!d || !s)) return zc_emu_fail(cudaErrorInvalidValue);
    if (n) zc_emu_enqueue(st, [=] { memmove(d, s, n); });
    return cudaSuccess;
}
/* height rows of width bytes, rows dpitch and spitch bytes apart (the blocked NTT's column blocks) */
inline cudaError_t cudaMemcpy2DAsync(void *d, size_t dpitch, const void *s, size_t spitch, size_t width, size_t height,
                                     cudaMemcpyKind, cudaStream_t st = nullptr) {
    ZC_EMU_STICKY();
    if (width > dpitch || width > spitch) return zc_emu_fail(cudaErrorInvalidValue);
    if (width && height && (!d || !s)) return zc_emu_fail(cudaErrorInvalidValue);
    if (width && height)
        zc_emu_enqueue(st, [=] {
            for (size_t r = 0; r < height; r++)
                memmove((uint8_t *)d + r * dpitch, (const uint8_t *)s + r * spitch, width);
        });
    return cudaSuccess;
}
inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n, cudaMemcpyKind k) {
    zc_emu_drain();
    return cudaMemcpyAsync(d, s, n, k, nullptr);
}
inline cudaError_t cudaMemsetAsync(void *d, int v, size_t n, cudaStream_t st = nullptr) {
    ZC_EMU_STICKY();
    if (n && !d) return zc_emu_fail(cudaErrorInvalidValue);
    if (n) zc_emu_enqueue(st, [=] { memset(d, v, n); });
    return cudaSuccess;
}

inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned) {
    *s = new zc_emu_stream();
    zc_emu_streams().push_back(*s);
    return cudaSuccess;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t s) {
    ZC_EMU_STICKY();
    if (!s) return zc_emu_drain();
    return zc_emu_progress([s] { return s->q.empty(); });
}
inline cudaError_t cudaStreamDestroy(cudaStream_t s) {
    cudaStreamSynchronize(s);
    auto &v = zc_emu_streams();
    v.erase(std::remove(v.begin(), v.end(), s), v.end());
    delete s;
    return cudaSuccess;
}
inline cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned) {
    ZC_EMU_STICKY();
    if (!e) return zc_emu_fail(cudaErrorInvalidResourceHandle);
    zc_emu_enqueue(s, nullptr, e, e->recorded);
    return cudaSuccess;
}
inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned) { return *e = new zc_emu_event(), cudaSuccess; }
inline cudaError_t cudaEventCreate(cudaEvent_t *e) { return cudaEventCreateWithFlags(e, 0); }
inline cudaError_t cudaEventDestroy(cudaEvent_t e) { return delete e, cudaSuccess; }
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t st = nullptr) {
    ZC_EMU_STICKY();
    if (!e) return zc_emu_fail(cudaErrorInvalidResourceHandle);
    uint64_t g = ++e->recorded;
    zc_emu_enqueue(st, [e, g] {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        e->ms = t.tv_sec * 1e3 + t.tv_nsec / 1e6;
        if (g > e->done) e->done = g;
    });
    return cudaSuccess;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t e) {
    ZC_EMU_STICKY();
    if (!e) return zc_emu_fail(cudaErrorInvalidResourceHandle);
    uint64_t g = e->recorded;
    return zc_emu_progress([e, g] { return e->done >= g; });
}
/* As on a device, queued work goes on while the host polls: each query runs at most one queued
 * operation (the scheduler's pick), then says whether the event's work has run (cudaErrorNotReady
 * until it has; an event never recorded has). */
inline cudaError_t cudaEventQuery(cudaEvent_t e) {
    ZC_EMU_STICKY();
    if (!e) return zc_emu_fail(cudaErrorInvalidResourceHandle);
    uint64_t g = e->recorded;
    int ran = 0;
    cudaError_t r = zc_emu_progress([e, g, &ran] { return e->done >= g || ran++ > 0; });
    if (r != cudaSuccess) return r;
    return e->done >= g ? cudaSuccess : cudaErrorNotReady;
}
/* cudaErrorNotReady, as on a device, when either event's work has not run */
inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) {
    if (a->done < a->recorded || b->done < b->recorded || !a->recorded || !b->recorded) return cudaErrorNotReady;
    *ms = (float)(b->ms - a->ms);
    return cudaSuccess;
}

/* A launch: checks the configuration as a device would, then runs every block (in parallel) and,
 * within a block, every thread in turn; a kernel with dynamic shared memory runs one thread per
 * block (rt.cuh). */
template <class... P> struct zc_emu_launch {
    unsigned grid, block;
    size_t smem;
    cudaStream_t st;
    void (*k)(P...);
    template <class... A> void operator()(A &&...a) const {
        if (grid == 0 || block == 0 || block > 1024 || smem > 48 * 1024) {
            zc_emu_fail(cudaErrorInvalidConfiguration);
            return;
        }
        if (zc_emu_sticky) return;
        unsigned g = grid, bl = block;
        size_t sm = smem;
        void (*kern)(P...) = k;
        static const unsigned long fault_at =
            getenv("ZKPIPE_EMU_FAULT") ? strtoul(getenv("ZKPIPE_EMU_FAULT"), nullptr, 10) : 0;
        bool fault = ++zc_emu_launches == fault_at;
        zc_emu_enqueue(st, [=] {
            if (fault || zc_emu_sticky)
                zc_emu_sticky = cudaErrorLaunchFailure;
            else
                zc_emu_run(g, bl, sm, kern, a...);
        });
    }
    static void zc_emu_run(unsigned grid, unsigned block, size_t smem, void (*k)(P...), P... a) {
        /* small grids in turn: a parallel region costs more than they do (MSMs in small chunks) */
#pragma omp parallel for schedule(dynamic, 16) if (grid >= 64)
        for (unsigned b = 0; b < grid; b++) {
            blockIdx.x = b;
            if (smem) {
                std::vector<uint8_t> sm(smem, 0xa5);
                zc_emu_smem = sm.data();
                blockDim.x = 1;
                threadIdx.x = 0;
                k(a...);
            } else {
                blockDim.x = block;
                for (unsigned t = 0; t < block; t++) {
                    threadIdx.x = t;
                    k(a...);
                }
            }
        }
    }
};
template <class... P>
inline zc_emu_launch<P...> zc_emu_launcher(unsigned grid, unsigned block, size_t smem, cudaStream_t st,
                                           void (*k)(P...)) {
    return zc_emu_launch<P...>{grid, block, smem, st, k};
}
#define ZC_LAUNCH(grid, block, smem, st, ...) zc_emu_launcher((grid), (block), (smem), (st), __VA_ARGS__)

/* CUB's two device algorithms the MSM uses; the temporary storage asked for is real, and a call
 * given less than it asked for fails, as CUB's would. */
namespace cub {
struct DeviceRadixSort {
    template <class K, class V, class N>
    static cudaError_t SortPairs(void *tmp, size_t &bytes, const K *kin, K *kout, const V *vin, V *vout, N num,
                                 int begin_bit = 0, int end_bit = (int)sizeof(K) * 8, cudaStream_t st = nullptr) {
        size_t need = 256 + (size_t)num * (sizeof(K) + sizeof(V));
        if (!tmp) return bytes = need, cudaSuccess;
        if (bytes < need || begin_bit < 0 || end_bit > (int)sizeof(K) * 8 || begin_bit > end_bit)
            return zc_emu_fail(cudaErrorInvalidValue);
        K mask = end_bit - begin_bit >= (int)sizeof(K) * 8 ? (K) ~(K)0 : (K)((((K)1) << (end_bit - begin_bit)) - 1);
        size_t m = (size_t)num;
        zc_emu_enqueue(st, [=] {
            std::vector<size_t> ord(m);
            std::iota(ord.begin(), ord.end(), (size_t)0);
            std::stable_sort(ord.begin(), ord.end(), [&](size_t x, size_t y) {
                return ((kin[x] >> begin_bit) & mask) < ((kin[y] >> begin_bit) & mask);
            });
            for (size_t i = 0; i < m; i++) kout[i] = kin[ord[i]], vout[i] = vin[ord[i]];
        });
        return cudaSuccess;
    }
};
struct DeviceScan {
    template <class I, class O, class N>
    static cudaError_t ExclusiveSum(void *tmp, size_t &bytes, I in, O out, N num, cudaStream_t st = nullptr) {
        size_t need = 256;
        if (!tmp) return bytes = need, cudaSuccess;
        if (bytes < need) return zc_emu_fail(cudaErrorInvalidValue);
        size_t m = (size_t)num;
        zc_emu_enqueue(st, [=] {
            typedef typename std::remove_reference<decltype(*out)>::type T;
            std::vector<T> v(in, in + m);
            T acc = 0;
            for (size_t i = 0; i < m; i++) {
                out[i] = acc;
                acc += v[i];
            }
        });
        return cudaSuccess;
    }
};
} // namespace cub
