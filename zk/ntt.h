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
/* The prover's conversion to the odd coset (zk/ntt_tmpl.h): tw = w^k, itw = w^-k (k <= n/2), coef
 * = {w_2n, n^-1}; to_odd_coset takes natural-order values on {w^i} to those on {w_2n^(2i+1)}. */
void bn_odd_coset_tables(bn_fr_t *tw, bn_fr_t *itw, bn_fr_t *coef, unsigned logn, int threads);
void bls_odd_coset_tables(bls_fr_t *tw, bls_fr_t *itw, bls_fr_t *coef, unsigned logn, int threads);
void bn_to_odd_coset(bn_fr_t *x, size_t n, unsigned logn, const bn_fr_t *tw, const bn_fr_t *itw, const bn_fr_t *coef,
                     int threads);
void bls_to_odd_coset(bls_fr_t *x, size_t n, unsigned logn, const bls_fr_t *tw, const bls_fr_t *itw,
                      const bls_fr_t *coef, int threads);
/* The same, but where the ifma set runs the transforms in lanes order (zk/ntt_ifma.h) the result
 * is left in lanes order: returns true then, false when x is in natural order. */
bool bn_to_odd_coset_lanes(bn_fr_t *x, size_t n, unsigned logn, const bn_fr_t *tw, const bn_fr_t *itw,
                           const bn_fr_t *coef, int threads);
bool bls_to_odd_coset_lanes(bls_fr_t *x, size_t n, unsigned logn, const bls_fr_t *tw, const bls_fr_t *itw,
                            const bls_fr_t *coef, int threads);
/* x (Montgomery Fr, natural order, 2^logn values on {w^i}) -> values on the odd coset
 * {w_2n^(2i+1)}, in place (iNTT, scale by n^-1·w_2n^k, NTT). */
int zk_fr_to_odd_coset(const zk_curve_t *curve, void *x, unsigned logn, int threads);

/* w[k] = 5^((r-1)/2^k) in Montgomery form (32 bytes). */
void zk_fr_root_of_unity(const zk_curve_t *curve, unsigned k, uint8_t out[32]);
