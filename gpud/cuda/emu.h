/* Host emulation of the part of the CUDA runtime and CUB the backend uses (see rt.cuh). Everything
 * runs synchronously when it is enqueued, so stream order is trivially kept and events time
 * nothing useful; what it checks is everything else: launch configurations (a zero-sized grid, a
 * block over 1024 threads or over 48 KB of shared memory fail as on a device), every kernel's
 * index logic and bounds, CUB temporary-storage sizing, buffer carving and the orchestration.
 * Device memory is filled with garbage when allocated, as a device's would hold anything. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <numeric>
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
    cudaErrorNoDevice = 100,
    cudaErrorInvalidResourceHandle = 400,
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

struct zc_emu_stream {
    int id;
};
typedef zc_emu_stream *cudaStream_t;
struct zc_emu_event {
    double ms;
};
typedef zc_emu_event *cudaEvent_t;
struct cudaDeviceProp {
    char name[256];
};

inline thread_local cudaError_t zc_emu_last = cudaSuccess;
inline cudaError_t zc_emu_fail(cudaError_t e) { return zc_emu_last = e; }

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
    default:
        return "unknown error (emulated)";
    }
}
inline cudaError_t cudaGetLastError() {
    cudaError_t e = zc_emu_last;
    zc_emu_last = cudaSuccess;
    return e;
}
inline cudaError_t cudaGetDeviceCount(int *n) { return *n = 1, cudaSuccess; }
inline cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : zc_emu_fail(cudaErrorInvalidValue); }
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int) {
    snprintf(p->name, sizeof p->name, "host emulation");
    return cudaSuccess;
}

template <class T> inline cudaError_t cudaMalloc(T **p, size_t n) {
    void *m = n ? malloc(n) : nullptr;
    if (n && !m) return zc_emu_fail(cudaErrorMemoryAllocation);
    if (m) memset(m, 0xa5, n);
    *p = (T *)m;
    return cudaSuccess;
}
inline cudaError_t cudaFree(void *p) { return free(p), cudaSuccess; }
template <class T> inline cudaError_t cudaMallocHost(T **p, size_t n) { return cudaMalloc(p, n); }
inline cudaError_t cudaFreeHost(void *p) { return free(p), cudaSuccess; }
inline cudaError_t cudaHostRegister(void *, size_t, unsigned) { return cudaSuccess; }
inline cudaError_t cudaHostUnregister(void *) { return cudaSuccess; }
inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n, cudaMemcpyKind) {
    if (n && (!d || !s)) return zc_emu_fail(cudaErrorInvalidValue);
    if (n) memmove(d, s, n);
    return cudaSuccess;
}
inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind k, cudaStream_t = nullptr) {
    return cudaMemcpy(d, s, n, k);
}
inline cudaError_t cudaMemsetAsync(void *d, int v, size_t n, cudaStream_t = nullptr) {
    if (n && !d) return zc_emu_fail(cudaErrorInvalidValue);
    if (n) memset(d, v, n);
    return cudaSuccess;
}

inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned) {
    return *s = new zc_emu_stream(), cudaSuccess;
}
inline cudaError_t cudaStreamDestroy(cudaStream_t s) { return delete s, cudaSuccess; }
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t e, unsigned) {
    return e ? cudaSuccess : zc_emu_fail(cudaErrorInvalidResourceHandle);
}
inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned) { return *e = new zc_emu_event(), cudaSuccess; }
inline cudaError_t cudaEventCreate(cudaEvent_t *e) { return cudaEventCreateWithFlags(e, 0); }
inline cudaError_t cudaEventDestroy(cudaEvent_t e) { return delete e, cudaSuccess; }
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t = nullptr) {
    if (!e) return zc_emu_fail(cudaErrorInvalidResourceHandle);
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    e->ms = t.tv_sec * 1e3 + t.tv_nsec / 1e6;
    return cudaSuccess;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t e) {
    return e ? cudaSuccess : zc_emu_fail(cudaErrorInvalidResourceHandle);
}
inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) {
    *ms = (float)(b->ms - a->ms);
    return cudaSuccess;
}

/* A launch: checks the configuration as a device would, then runs every block (in parallel) and,
 * within a block, every thread in turn; a kernel with dynamic shared memory runs one thread per
 * block (rt.cuh). */
template <class... P> struct zc_emu_launch {
    unsigned grid, block;
    size_t smem;
    void (*k)(P...);
    template <class... A> void operator()(A &&...a) const {
        if (grid == 0 || block == 0 || block > 1024 || smem > 48 * 1024) {
            zc_emu_fail(cudaErrorInvalidConfiguration);
            return;
        }
#pragma omp parallel for schedule(dynamic, 16)
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
inline zc_emu_launch<P...> zc_emu_launcher(unsigned grid, unsigned block, size_t smem, cudaStream_t, void (*k)(P...)) {
    return zc_emu_launch<P...>{grid, block, smem, k};
}
#define ZC_LAUNCH(grid, block, smem, st, ...) zc_emu_launcher((grid), (block), (smem), (st), __VA_ARGS__)

/* CUB's two device algorithms the MSM uses; the temporary storage asked for is real, and a call
 * given less than it asked for fails, as CUB's would. */
namespace cub {
struct DeviceRadixSort {
    template <class K, class V, class N>
    static cudaError_t SortPairs(void *tmp, size_t &bytes, const K *kin, K *kout, const V *vin, V *vout, N num,
                                 int begin_bit = 0, int end_bit = (int)sizeof(K) * 8, cudaStream_t = nullptr) {
        size_t need = 256 + (size_t)num * (sizeof(K) + sizeof(V));
        if (!tmp) return bytes = need, cudaSuccess;
        if (bytes < need || begin_bit < 0 || end_bit > (int)sizeof(K) * 8 || begin_bit > end_bit)
            return zc_emu_fail(cudaErrorInvalidValue);
        K mask = end_bit - begin_bit >= (int)sizeof(K) * 8 ? (K) ~(K)0 : (K)((((K)1) << (end_bit - begin_bit)) - 1);
        std::vector<size_t> ord((size_t)num);
        std::iota(ord.begin(), ord.end(), (size_t)0);
        std::stable_sort(ord.begin(), ord.end(), [&](size_t x, size_t y) {
            return ((kin[x] >> begin_bit) & mask) < ((kin[y] >> begin_bit) & mask);
        });
        std::vector<K> ks((size_t)num);
        std::vector<V> vs((size_t)num);
        for (size_t i = 0; i < (size_t)num; i++) ks[i] = kin[ord[i]], vs[i] = vin[ord[i]];
        std::copy(ks.begin(), ks.end(), kout);
        std::copy(vs.begin(), vs.end(), vout);
        return cudaSuccess;
    }
};
struct DeviceScan {
    template <class I, class O, class N>
    static cudaError_t ExclusiveSum(void *tmp, size_t &bytes, I in, O out, N num, cudaStream_t = nullptr) {
        size_t need = 256;
        if (!tmp) return bytes = need, cudaSuccess;
        if (bytes < need) return zc_emu_fail(cudaErrorInvalidValue);
        std::vector<typename std::remove_reference<decltype(*out)>::type> v((size_t)num);
        for (size_t i = 0; i < (size_t)num; i++) v[i] = in[i];
        typename std::remove_reference<decltype(*out)>::type acc = 0;
        for (size_t i = 0; i < (size_t)num; i++) {
            out[i] = acc;
            acc += v[i];
        }
        return cudaSuccess;
    }
};
} // namespace cub
