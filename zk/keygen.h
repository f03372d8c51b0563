/* Development-only Groth16 key generation from a circom .r1cs: random toxic waste (τ, α, β, δ from
 * getrandom(2), γ = 1), forgotten when the call returns, and a zkey written exactly as formats.md §4
 * describes it, so snarkjs 0.7.6 and zkpipe prove with it. NOT a trusted setup: whoever runs it
 * could have kept the secrets and forge proofs. For tests and benchmarks only. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "curve_info.h"
#include "r1cs.h"

/* Per-step times in nanoseconds, and what was made. */
typedef struct zk_keygen_stats {
    uint32_t n_vars, n_pub, n_constraints, domain_size, n_coefs;
    uint64_t eval_ns;  /* Lagrange basis at τ and A_s(τ), B_s(τ), C_s(τ) */
    uint64_t table_ns; /* fixed-base window tables of the G1 and G2 generators */
    uint64_t g1_ns;    /* all G1 points (IC, A, B1, C, H), with conversion to affine */
    uint64_t g2_ns;    /* B2 */
    uint64_t write_ns; /* everything else (coefs, headers, writes, fsync) */
    uint64_t file_size;
} zk_keygen_stats_t;

/* domainSize snarkjs's setup chooses: the smallest power of two >= nConstraints + nPublic + 1. */
uint64_t zk_keygen_domain_size(const zk_r1cs_t *r);

/* Writes a fresh Groth16 key for the circuit to zkey_path (atomically: PATH.tmp.<pid>, fsync,
 * rename) and, if vk_path is not NULL, its verification key exactly as `snarkjs zkey export
 * verificationkey` writes it. threads <= 0: zk_threads_default(). stats may be NULL.
 * Errors: -EINVAL for a circuit it cannot make a key for (a wire id >= nWires, a coefficient >= r,
 * a domain larger than the curve's two-adicity allows), -errno for I/O, with err->msg set. */
int zk_keygen_insecure(const zk_r1cs_t *r, const char *r1cs_name, const char *zkey_path, const char *vk_path,
                       int threads, zk_keygen_stats_t *stats, zk_err_t *err);

/* Test hook: fixed-base products k·G1 and k·G2 through a window-c table (4 <= c <= 15), for edge
 * scalars and n_random random ones, compared with double-and-add. 0 if all agree. */
int zk_keygen_fixed_base_selftest(const zk_curve_t *curve, unsigned c, size_t n_random, zk_err_t *err);
