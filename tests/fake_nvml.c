/* A stand-in for libnvidia-ml.so.1 with two devices and fixed readings, for test_metrics: the
 * exporter's dlopen path (exporter/nvml.c) without a GPU. Same entry points and structs as NVML. */
typedef struct {
    unsigned gpu, memory;
} util_t;
typedef struct {
    unsigned long long total, free, used;
} mem_t;
int nvmlInit_v2(void) { return 0; }
int nvmlDeviceGetCount_v2(unsigned *n) { return *n = 2, 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **h) { return *h = (void *)(unsigned long)(i + 1), 0; }
int nvmlDeviceGetUtilizationRates(void *h, util_t *u) { return u->gpu = h == (void *)1 ? 87 : 5, u->memory = 0, 0; }
int nvmlDeviceGetMemoryInfo(void *h, mem_t *m) {
    return m->total = 8ull << 30, m->used = (unsigned long)h << 30, m->free = m->total - m->used, 0;
}
int nvmlDeviceGetTemperature(void *h, int sensor, unsigned *t) {
    return *t = sensor == 0 ? 60 + (unsigned)(unsigned long)h : 0, 0;
}
