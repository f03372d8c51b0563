/* Multi-scalar multiplication on G1 and G2 of both curves (zk/msm_tmpl.h). */
#pragma once
#include "curve.h"

/* Window width for n points (bases of point_size bytes). */
unsigned zk_msm_window(size_t n, size_t point_size);
/* Signed base-2^c digits of a 256-bit scalar k (< 2^255) into d[0..nwin), |d| <= 2^(c-1). */
void zk_msm_signed_digits(int16_t *d, const uint64_t k[4], unsigned c, unsigned nwin);

void bn_g1_msm(bn_g1_xyzz_t *out, const bn_g1_aff_t *bases, const uint8_t *scalars, size_t n, int threads);
void bn_g2_msm(bn_g2_xyzz_t *out, const bn_g2_aff_t *bases, const uint8_t *scalars, size_t n, int threads);
void bls_g1_msm(bls_g1_xyzz_t *out, const bls_g1_aff_t *bases, const uint8_t *scalars, size_t n, int threads);
void bls_g2_msm(bls_g2_xyzz_t *out, const bls_g2_aff_t *bases, const uint8_t *scalars, size_t n, int threads);
