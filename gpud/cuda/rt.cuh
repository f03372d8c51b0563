/* The CUDA runtime as the backend's code sees it. Under nvcc: the real runtime and CUB. Otherwise
 * (ZC_EMU, a host C++ build of the same .cu files): gpud/cuda/emu.h, a host emulation that runs
 * each launch at once, block by block, so that the whole backend (plans, workspace carving, every
 * kernel in its launch order, lanes, the host's Horner step) runs in CI without a GPU
 * (tests/gpu/meson.build: test_cuda_emu). Kernels are launched only through ZC_LAUNCH, and a
 * kernel that uses dynamic shared memory takes it through ZC_DYN_SHARED and is written for any
 * block size (its loops stride by blockDim.x): the emulation runs such a kernel with one thread
 * per block, which makes __syncthreads() a no-op. */
#pragma once
#ifdef __CUDACC__
#include <cuda_runtime.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#define ZC_LAUNCH(grid, block, smem, st, ...) __VA_ARGS__<<<(grid), (block), (smem), (st)>>>
#define ZC_DYN_SHARED(T, name)                                                                                         \
    extern __shared__ uint4 zc_smem_[];                                                                                \
    T *name = (T *)zc_smem_
#else
#include "gpud/cuda/emu.h"
#endif
