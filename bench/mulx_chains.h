/* The two limb benches' yardstick (bench/avx2_limbs.c, bench/fp64_limbs.c): a clock, and seconds per
 * MULX Montgomery product of NW words (4: BN254's base field, 6: BLS12-381's; zk/fp_x86_64.h),
 * eight independent chains, so that the figure is the product's throughput. */
#pragma once
#include <stdint.h>
#include <time.h>

#include "zk/constants.h"
#include "zk/fp_x86_64.h"

static double bench_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

__attribute__((noinline)) static double bench_mulx(int nw, int steps, uint64_t *sink) {
    static const uint64_t p4[4] = BN_FQ_P, one4[4] = BN_FQ_ONE, p6[6] = BLS_FQ_P, one6[6] = BLS_FQ_ONE;
    const uint64_t *one = nw == 4 ? one4 : one6;
    uint64_t x[8][6], k[6];
    for (int l = 0; l < 8; l++)
        for (int i = 0; i < nw; i++) x[l][i] = one[i] ^ (uint64_t)l;
    for (int i = 0; i < nw; i++) k[i] = one[i] ^ 1;
    double t0 = bench_now();
    for (int i = 0; i < steps; i++)
        for (int l = 0; l < 8; l++) {
            if (nw == 4)
                zk_x86_mont_mul4(x[l], x[l], k, p4, BN_FQ_INV);
            else
                zk_x86_mont_mul6(x[l], x[l], k, p6, BLS_FQ_INV);
        }
    double t = bench_now() - t0;
    *sink += x[3][1];
    return t / (steps * 8.0);
}
