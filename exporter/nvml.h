/* GPU utilisation, memory and temperature from NVML, loaded at run time with
 * dlopen("libnvidia-ml.so.1") (ZKPIPE_NVML_LIBRARY overrides the name, for tests). Without the
 * library, or when nvmlInit fails, nvml_metrics prints nothing: the metrics are simply absent. */
#pragma once
#include <stdbool.h>
#include <stdio.h>

/* Loads and initialises NVML once; false when it is not there. */
bool nvml_init(void);
bool nvml_available(void);
/* Device `device`'s free and total memory in bytes (NVML's reading: no CUDA context is made);
 * false without NVML or such a device. zkpipe plan's device budget. */
bool nvml_memory(unsigned device, unsigned long long *ret_free, unsigned long long *ret_total);
/* zkpipe_gpu_utilization_ratio, zkpipe_gpu_memory_used_bytes, zkpipe_gpu_temperature_celsius
 * {device="N"} for every device; nothing without NVML. */
void nvml_metrics(FILE *out);
