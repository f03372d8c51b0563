/* The CUDA backend of gpud (docs/cuda.md), as seen from C: the backend ops and the device queries.
 * The entry points that test and time single kernels are the device check's (zkcuda_check.h). */
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
/* One line on the device ctx runs on: index, name, compute capability, the image of this build it
 * runs (SASS or PTX) and the images built (storage of ctx). */
const char *zkcuda_device_info(void *ctx);
/* The image of a build with SASS for the comma-separated architectures `sass` ("80,86,89,90") and
 * PTX for compute_`ptx` that a device of compute capability cc (10·major + minor) runs, named in
 * buf ("sm_86 SASS", "compute_90 PTX, JIT-compiled by the driver"); 0 when none does. zc_init
 * asks it for this build's own list (-Dgpu_archs) and refuses the device on 0. */
int zkcuda_arch_image(const char *sass, int ptx, int cc, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
