/* Random test values for the field, MSM and NTT tests: bytes from getrandom, scalars below r. */
#pragma once
#include <stdint.h>
#include <string.h>
#include <sys/random.h>

#include "zk/field.h"

static inline void rnd(void *p, size_t n) {
    uint8_t *b = p;
    while (n) {
        ssize_t k = getrandom(b, n, 0);
        if (k > 0) b += k, n -= (size_t)k;
    }
}

/* A random scalar below r (32 bytes little-endian each): below 2^255, drawn again until below r. */
static inline void rnd_scalar(uint8_t *s, const uint8_t *r) {
    uint64_t k[4], m[4];
    memcpy(m, r, 32);
    do {
        rnd(k, 32);
        k[3] &= (1ull << 63) - 1;
    } while (!zk_bigint_lt(k, m, 4));
    memcpy(s, k, 32);
}
