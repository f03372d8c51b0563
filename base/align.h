/* Rounding sizes and offsets up to an alignment (slab layouts, the segment's regions). */
#pragma once
#include <stdint.h>

/* v rounded up to a multiple of a (a > 0). */
static inline uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
