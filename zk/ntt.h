/* NTT over Fr (natural-order conventions of formats.md §5.3) for both curves. tw[k] = w^k for
 * k < n/2, w a primitive n-th root (w^-1 for the inverse transform, followed by a scale by n^-1). */
#pragma once
#include "curve_info.h"
#include "field.h"

/* Natural order in, bit-reversed order out. */
void bn_ntt_dif(bn_fr_t *a, size_t n, const bn_fr_t *tw, int threads);
void bls_ntt_dif(bls_fr_t *a, size_t n, const bls_fr_t *tw, int threads);
/* Bit-reversed order in, natural order out. */
void bn_ntt_dit(bn_fr_t *a, size_t n, const bn_fr_t *tw, int threads);
void bls_ntt_dit(bls_fr_t *a, size_t n, const bls_fr_t *tw, int threads);
/* w[k] = 5^((r-1)/2^k) in Montgomery form (32 bytes). */
void zk_fr_root_of_unity(const zk_curve_t *curve, unsigned k, uint8_t out[32]);
