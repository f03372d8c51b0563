/* NVML through dlopen (exporter/nvml.h). The few entry points are declared here with the ABI that
 * NVML documents (nvml.h is not packaged in Debian main). */
#include "nvml.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

typedef void *nvml_device_t;
typedef struct {
    unsigned gpu, memory; /* percent over the last sample period */
} nvml_util_t;
typedef struct {
    unsigned long long total, free, used; /* bytes */
} nvml_mem_t;

static struct {
    bool tried, ok;
    int (*init)(void);
    int (*count)(unsigned *);
    int (*handle)(unsigned, nvml_device_t *);
    int (*util)(nvml_device_t, nvml_util_t *);
    int (*mem)(nvml_device_t, nvml_mem_t *);
    int (*temp)(nvml_device_t, int, unsigned *);
} N;

bool nvml_init(void) {
    if (N.tried) return N.ok;
    N.tried = true;
    const char *name = getenv("ZKPIPE_NVML_LIBRARY");
    void *h = dlopen(name && *name ? name : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return false;
    *(void **)&N.init = dlsym(h, "nvmlInit_v2");
    *(void **)&N.count = dlsym(h, "nvmlDeviceGetCount_v2");
    *(void **)&N.handle = dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
    *(void **)&N.util = dlsym(h, "nvmlDeviceGetUtilizationRates");
    *(void **)&N.mem = dlsym(h, "nvmlDeviceGetMemoryInfo");
    *(void **)&N.temp = dlsym(h, "nvmlDeviceGetTemperature");
    N.ok = N.init && N.count && N.handle && N.util && N.mem && N.temp && N.init() == 0;
    if (!N.ok) dlclose(h);
    return N.ok;
}

bool nvml_available(void) { return N.ok; }

bool nvml_memory(unsigned device, unsigned long long *ret_free, unsigned long long *ret_total) {
    unsigned n = 0;
    nvml_device_t d;
    nvml_mem_t m;
    if (!nvml_init() || N.count(&n) != 0 || device >= n || N.handle(device, &d) != 0 || N.mem(d, &m) != 0) return false;
    *ret_free = m.free;
    *ret_total = m.total;
    return true;
}

void nvml_metrics(FILE *o) {
    unsigned n = 0;
    if (!N.ok || N.count(&n) != 0 || !n) return;
    nvml_device_t d[16];
    bool have[16] = {0};
    if (n > 16) n = 16;
    for (unsigned i = 0; i < n; i++) have[i] = N.handle(i, &d[i]) == 0;
    fprintf(o, "# HELP zkpipe_gpu_utilization_ratio Fraction of the last sample period a kernel ran (NVML).\n"
               "# TYPE zkpipe_gpu_utilization_ratio gauge\n");
    for (unsigned i = 0; i < n; i++) {
        nvml_util_t u;
        if (have[i] && N.util(d[i], &u) == 0)
            fprintf(o, "zkpipe_gpu_utilization_ratio{device=\"%u\"} %.2f\n", i, u.gpu / 100.0);
    }
    fprintf(o, "# HELP zkpipe_gpu_memory_used_bytes Device memory in use (NVML).\n"
               "# TYPE zkpipe_gpu_memory_used_bytes gauge\n");
    for (unsigned i = 0; i < n; i++) {
        nvml_mem_t m;
        if (have[i] && N.mem(d[i], &m) == 0)
            fprintf(o, "zkpipe_gpu_memory_used_bytes{device=\"%u\"} %llu\n", i, m.used);
    }
    fprintf(o, "# HELP zkpipe_gpu_temperature_celsius GPU die temperature (NVML).\n"
               "# TYPE zkpipe_gpu_temperature_celsius gauge\n");
    for (unsigned i = 0; i < n; i++) {
        unsigned t;
        if (have[i] && N.temp(d[i], 0 /* NVML_TEMPERATURE_GPU */, &t) == 0)
            fprintf(o, "zkpipe_gpu_temperature_celsius{device=\"%u\"} %u\n", i, t);
    }
}
