/* Large scratch buffers in huge pages where there are (mem.h). */
#include "mem.h"

#include <stdint.h>
#include <sys/mman.h>

#define MEM_HUGE ((size_t)2 << 20)
#define MEM_HUGE_FROM ((size_t)1 << 20)

static size_t mapped_len(size_t size) {
    if (size == 0) size = 1;
    return size < MEM_HUGE_FROM ? size : (size + MEM_HUGE - 1) & ~(MEM_HUGE - 1);
}

void *mem_big_alloc(size_t size) {
    size_t len = mapped_len(size);
    if (len < MEM_HUGE_FROM) {
        void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        return m == MAP_FAILED ? NULL : m;
    }
    /* 2 MiB more than needed, then the unaligned head and the tail given back */
    if (len > SIZE_MAX - MEM_HUGE) return NULL;
    uint8_t *r = mmap(NULL, len + MEM_HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED) return NULL;
    uint8_t *p = (uint8_t *)(((uintptr_t)r + MEM_HUGE - 1) & ~(uintptr_t)(MEM_HUGE - 1));
    if (p > r) (void)munmap(r, (size_t)(p - r));
    if (r + len + MEM_HUGE > p + len) (void)munmap(p + len, (size_t)(r + len + MEM_HUGE - (p + len)));
    (void)madvise(p, len, MADV_HUGEPAGE); /* EINVAL without THP in the kernel: small pages */
    return p;
}

void mem_big_free(void *p, size_t size) {
    if (p) (void)munmap(p, mapped_len(size));
}
