/* MSM instantiations and the window/digit helpers they share. */
#include "msm.h"

#include <stdlib.h>

unsigned zk_msm_window(size_t n, size_t point_size) {
    /* cost ~ windows * (n bucket additions + 2^(c-1) buckets * 2 full additions ~ 3 bucket
     * additions); G2 buckets are twice as large, so caches favour fewer of them (measured: one bit
     * less saves ~12% of the G2 MSM at 2^16) */
    double bucket_weight = point_size >= 128 ? 6.0 : 3.0;
    unsigned best = 2;
    double best_cost = 1e300;
    for (unsigned c = 2; c <= 15; c++) /* digits are int16_t */ {
        double nwin = (double)((255 + c) / c);
        double cost = nwin * ((double)n + bucket_weight * (double)((size_t)1 << (c - 1)));
        if (cost < best_cost) best_cost = cost, best = c;
    }
    return best;
}

void zk_msm_signed_digits(int16_t *d, const uint64_t k[4], unsigned c, unsigned nwin) {
    unsigned carry = 0;
    uint32_t full = 1u << c, half = 1u << (c - 1);
    for (unsigned w = 0; w < nwin; w++) {
        unsigned bit = w * c;
        uint32_t v = 0;
        if (bit < 256) {
            unsigned limb = bit / 64, off = bit % 64;
            uint64_t x = k[limb] >> off;
            if (off + c > 64 && limb + 1 < 4) x |= k[limb + 1] << (64 - off);
            v = (uint32_t)(x & (full - 1));
        }
        v += carry;
        if (v > half) {
            d[w] = (int16_t)((int32_t)v - (int32_t)full);
            carry = 1;
        } else {
            d[w] = (int16_t)v;
            carry = 0;
        }
    }
}

#define ZK_GROUP_TMPL "msm_tmpl.h"
#include "each_group.h"
