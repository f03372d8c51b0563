/* The NTT over Fr of both curves (zk/ntt_tmpl.h), with the odd-coset conversion of the prover, and
 * runtime dispatch on the curve. */
#include "ntt.h"

#include <errno.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "ntt_ifma.h"

static inline uint64_t zk_bitrev64(uint64_t x) {
    x = ((x >> 1) & 0x5555555555555555ull) | ((x & 0x5555555555555555ull) << 1);
    x = ((x >> 2) & 0x3333333333333333ull) | ((x & 0x3333333333333333ull) << 2);
    x = ((x >> 4) & 0x0f0f0f0f0f0f0f0full) | ((x & 0x0f0f0f0f0f0f0f0full) << 4);
    return __builtin_bswap64(x);
}

#define ZK_CURVE_TMPL "ntt_tmpl.h"
#include "each_curve.h"

void zk_fr_root_of_unity(const zk_curve_t *curve, unsigned k, uint8_t out[32]) {
    if (curve->id == ZK_CURVE_BN128) {
        bn_fr_t w;
        bn_root_of_unity(&w, k);
        memcpy(out, w.l, 32);
    } else {
        bls_fr_t w;
        bls_root_of_unity(&w, k);
        memcpy(out, w.l, 32);
    }
}

int zk_fr_to_odd_coset(const zk_curve_t *curve, void *x, unsigned logn, int threads) {
    size_t n = (size_t)1 << logn;
    uint8_t *t = aligned_alloc(64, (n + 4) * 32);
    if (!t) return -ENOMEM;
    if (curve->id == ZK_CURVE_BN128) {
        bn_fr_t *tw = (bn_fr_t *)t, *itw = tw + n / 2 + 1, *scale = itw + n / 2 + 1;
        bn_odd_coset_tables(tw, itw, scale, logn, threads);
        bn_to_odd_coset(x, n, logn, tw, itw, scale, threads);
    } else {
        bls_fr_t *tw = (bls_fr_t *)t, *itw = tw + n / 2 + 1, *scale = itw + n / 2 + 1;
        bls_odd_coset_tables(tw, itw, scale, logn, threads);
        bls_to_odd_coset(x, n, logn, tw, itw, scale, threads);
    }
    free(t);
    return 0;
}
