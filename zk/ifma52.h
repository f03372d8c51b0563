/* AVX-512 IFMA arithmetic modulo a prime, eight elements per vector in 52-bit limbs, for
 * zk/msm_ifma.c (Fq, Fq2 of BN254 and BLS12-381) and zk/ntt_ifma.c (Fr of BN254). Every function
 * carries the target attribute itself, so a file that includes this header may be compiled for
 * baseline x86-64; its callers run only where zk/kernels.c selected the ifma set.
 *
 * Two instances of zk/ifma52_tmpl.h: v52_ for primes below 2^255 in 4 words (five limbs) and
 * v52x_ for primes below 2^383 in 6 words (eight limbs).
 *
 * Representation: an element a·2^(64 W) mod p (the Montgomery form of zk/fp_tmpl.h, unchanged, W
 * words) is held as L 52-bit limbs, one lane per element. The vector Montgomery product reduces by
 * 2^(52 L) (L rounds of 52 bits), so M(x, y) = x·y·2^-(52 L); every product here takes one operand
 * times 2^s, s = 52 L - 64 W (4 with five limbs, 32 with eight; shifted in by shl: 2^s·y < 2^(52 L)
 * as y < 2^(64 W - 1)), so that M(x, 2^s·y) = x·y·2^-(64 W) is exactly the scalar kernel's product.
 * Bounds: for x < 2p and y < 2p, (x·2^s·y + m·p)/2^(52 L) < x·y/2^(64 W) + p < 2p (4p < 2^(64 W)
 * for both primes, and 2^s·y < 2^(52 L) still), so one conditional subtraction leaves a product
 * < p. Values in memory, and every operation's inputs and outputs, are fully reduced (< p), except
 * the lazy forms, which the MSM's flush uses between its loads and stores: mul_lz/mulr_lz (< 2p,
 * no subtraction), mul2_lz (a·b + c·d in one reduction, < 3p: Fq2's products), neg2_lz (2p - a),
 * sub_lz (a - b + p, no condition) and csub (one conditional subtraction of p or 2p); its values
 * stay below 2p wherever they enter a product (zk/msm_ifma_tmpl.h, IFMA_FLUSH). */
#pragma once
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define IFMA_FN static inline __attribute__((always_inline, target("avx512f,avx512ifma")))
#define M52 0xfffffffffffffULL

#define V52_NL 5
#define V52_NW 4
#define V52_(name) v52_##name
#define V52_T v52_t
#define V52_MOD_T v52_mod_t
#define V52_MUL_FN IFMA_FN
#include "ifma52_tmpl.h"

#define V52_NL 8
#define V52_NW 6
#define V52_(name) v52x_##name
#define V52_T v52x_t
#define V52_MOD_T v52x_mod_t
/* the eight-limb product is a call: inlined in every use it made msm_ifma.c take minutes to compile,
 * and at ~270 multiply-adds a call costs nothing measurable */
#define V52_MUL_FN static __attribute__((noinline, target("avx512f,avx512ifma")))
#include "ifma52_tmpl.h"
#endif
