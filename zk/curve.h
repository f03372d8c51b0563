/* G1 and G2 of BN254 (bn_g1, bn_g2) and BLS12-381 (bls_g1, bls_g2). */
#pragma once
#include "field.h"

#define G bn_g1
#define F bn_fq
#define G_B_VALUE {BN_G1_B}
#include "ec_tmpl.h"
#undef G
#undef F
#undef G_B_VALUE

#define G bn_g2
#define F bn_fq2
#define G_B_VALUE {{BN_G2_B_C0}, {BN_G2_B_C1}}
#include "ec_tmpl.h"
#undef G
#undef F
#undef G_B_VALUE

#define G bls_g1
#define F bls_fq
#define G_B_VALUE {BLS_G1_B}
#include "ec_tmpl.h"
#undef G
#undef F
#undef G_B_VALUE

#define G bls_g2
#define F bls_fq2
#define G_B_VALUE {{BLS_G2_B_C0}, {BLS_G2_B_C1}}
#include "ec_tmpl.h"
#undef G
#undef F
#undef G_B_VALUE

static const bn_g1_aff_t bn_g1_gen = {{BN_G1_GEN_X}, {BN_G1_GEN_Y}};
static const bn_g2_aff_t bn_g2_gen = {{{BN_G2_GEN_X_C0}, {BN_G2_GEN_X_C1}}, {{BN_G2_GEN_Y_C0}, {BN_G2_GEN_Y_C1}}};
static const bls_g1_aff_t bls_g1_gen = {{BLS_G1_GEN_X}, {BLS_G1_GEN_Y}};
static const bls_g2_aff_t bls_g2_gen = {{{BLS_G2_GEN_X_C0}, {BLS_G2_GEN_X_C1}}, {{BLS_G2_GEN_Y_C0}, {BLS_G2_GEN_Y_C1}}};
