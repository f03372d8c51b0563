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
/* Name of the device ctx runs on (static storage of ctx). */
const char *zkcuda_device_name(void *ctx);

#ifdef __cplusplus
}
#endif
