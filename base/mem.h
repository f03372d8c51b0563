/* Large scratch buffers in 2 MiB pages where the kernel has transparent huge pages.
 *
 * A proof writes each of its big buffers (a, b, c, the NTT's scratch, a key section's aligned copy)
 * once, into pages the kernel must first fault in and zero: 4 KiB at a time, that was 3,516 faults
 * for a 2^15 proof (bench/RESULTS.md, `bench/ab` counts them). mem_big_alloc maps such a
 * buffer so that 2 MiB pages can back it: an anonymous private mapping (MAP_NORESERVE: no page
 * exists until written; reads as zero), for 1 MiB or more 2 MiB-aligned, its length rounded up to
 * 2 MiB and advised MADV_HUGEPAGE. Where THP is `never`, or no huge page is free, the kernel backs
 * it with small pages as any mapping, and nothing else changes. mem_big_free takes the size given
 * to mem_big_alloc. */
#pragma once
#include <stddef.h>

/* NULL when the mapping fails (errno from mmap). */
void *mem_big_alloc(size_t size);
void mem_big_free(void *p, size_t size);
