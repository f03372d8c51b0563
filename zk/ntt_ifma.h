/* AVX-512 IFMA NTT stages over the scalar field Fr of either curve (zk/ntt_ifma.c), used by
 * bn_ntt_dif/bn_ntt_dit and bls_ntt_dif/bls_ntt_dit (zk/ntt_tmpl.h) while the ifma kernel set is
 * selected (zk/kernels.h).
 *
 * Layout: the vector stages work on "lanes" order, blocks of 8 elements with limb k of element e of a
 * block at word 8k + e (the same 256 bytes as the 8 elements in natural layout, so a block boundary
 * stays where it was); zk_ifma_fr_to_lanes/from_lanes convert in place. Element indices and counts
 * passed here are multiples of 8. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "field.h"

/* The field of a transform: p and 1 in Montgomery form (4 words, p < 2^255), -p^-1 mod 2^64. */
typedef struct {
    uint64_t p[4], one[4], inv;
} zk_ifma_fr_mod_t;
extern const zk_ifma_fr_mod_t zk_ifma_bn_fr, zk_ifma_bls_fr;

/* a, tw: arrays of the curve's fr_t (untyped so that zk/ntt_tmpl.h can name them for both curves). */
void zk_ifma_fr_to_lanes(void *a, size_t n);
void zk_ifma_fr_from_lanes(void *a, size_t n);
/* The radix-2 stage of half-length len >= 8 for butterflies [lo, hi) (as in ntt_tmpl.h's
 * dif_stage/dit_stage): DIF x, y <- x + y, (x - y)·tw[j·stride]; DIT x, y <- x + y·tw, x - y·tw. */
void zk_ifma_fr_dif_stage(const zk_ifma_fr_mod_t *f, void *a, size_t len, size_t stride, const void *tw, size_t lo, size_t hi);
void zk_ifma_fr_dit_stage(const zk_ifma_fr_mod_t *f, void *a, size_t len, size_t stride, const void *tw, size_t lo, size_t hi);
/* The stages of half-length len and len/2 in one pass (len/2 >= 8; DIF len first, DIT len/2 first),
 * for the quads [lo, hi) of n/4 (multiples of 8): quad i is elements j, j + len/2, j + len, j + 3len/2
 * of block i / (len/2) of 2·len elements, j = i % (len/2); stride is the len stage's (the len/2 stage
 * takes 2·stride). */
void zk_ifma_fr_stage2(const zk_ifma_fr_mod_t *f, void *a, size_t len, size_t stride, const void *tw, size_t lo,
                       size_t hi, bool dit);
/* The three stages of half-length 4, 2, 1 inside every block of a[0..n), in registers: DIF in that
 * order with stride4 the stride of the half-length-4 stage (2·stride4, 4·stride4 after it); DIT in
 * the order 1, 2, 4 with stride1 the stride of the half-length-1 stage (stride1/2, stride1/4 after). */
void zk_ifma_fr_dif_small(const zk_ifma_fr_mod_t *f, void *a, size_t n, size_t stride4, const void *tw);
void zk_ifma_fr_dit_small(const zk_ifma_fr_mod_t *f, void *a, size_t n, size_t stride1, const void *tw);
/* The odd-coset scaling (zk/ntt_tmpl.h: to_odd_coset) on a in lanes order: lanes-blocks (eight
 * elements) [q0, q0 + chains·cl) in chains of cl blocks, chain c starting from the factors f0[8c ..
 * 8c + 8) (natural layout, one per lane) and multiplied after block q by step[t], t the trailing
 * ones of q; chains <= ZK_IFMA_SCALE_CHAINS. */
#define ZK_IFMA_SCALE_CHAINS 4
void zk_ifma_fr_coset_scale(const zk_ifma_fr_mod_t *f, void *a, size_t q0, size_t cl, unsigned chains, const void *f0,
                            const void *step);
/* Elementwise on the lanes-blocks [q0, q1) (elements 8·q0 .. 8·q1) of a and b, both in lanes order:
 * a = a·b; a = the standard form of a - b (the prover's H scalars). */
void zk_ifma_fr_mul_lanes(const zk_ifma_fr_mod_t *f, void *a, const void *b, size_t q0, size_t q1);
void zk_ifma_fr_sub_std_lanes(const zk_ifma_fr_mod_t *f, void *a, const void *b, size_t q0, size_t q1);
