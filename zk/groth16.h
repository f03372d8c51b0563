/* The Groth16 prover of formats.md §5, split into the three stages the pipeline runs in separate
 * processes. Every stage's inputs and outputs are flat memory regions without pointers, so they can
 * live in a shared-memory slab:
 *   synthesis:  witness (standard LE)            -> a, b, c  (n Fr elements each, Montgomery)
 *   core:       a, b, c, witness, key points     -> zk_raw_t (five MSM results, affine)
 *   finalize:   zk_raw_t, r, s, key header       -> zk_proof_t (affine A, B, C) -> JSON
 */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "curve_info.h"
#include "zkey.h"

/* The five raw MSM results before randomisation, affine Montgomery bytes (curve's sizes; the rest
 * of each field is zero). */
typedef struct zk_raw {
    uint8_t a[ZK_MAX_G1];   /* Σ w_i·A_i */
    uint8_t b1[ZK_MAX_G1];  /* Σ w_i·B1_i */
    uint8_t b2[ZK_MAX_G2];  /* Σ w_i·B2_i */
    uint8_t c[ZK_MAX_G1];   /* Σ w_i·C_i, i > nPub */
    uint8_t h[ZK_MAX_G1];   /* Σ P_i·H_i */
} zk_raw_t;

/* A final proof: affine Montgomery bytes. */
typedef struct zk_proof {
    uint8_t a[ZK_MAX_G1];
    uint8_t b[ZK_MAX_G2];
    uint8_t c[ZK_MAX_G1];
} zk_proof_t;

/* Per-step times of the proving core, in nanoseconds. */
typedef struct zk_core_times {
    uint64_t h2d_ns;   /* host-to-device copies (0 on the CPU backend) */
    uint64_t ntt_ns;   /* three iNTT + coset NTT and P */
    uint64_t msm_a_ns, msm_b1_ns, msm_b2_ns, msm_c_ns, msm_h_ns;
} zk_core_times_t;

/* Bytes of a, b and c together (3 * domain_size * 32). */
size_t zk_abc_size(const zk_zkey_t *z);

/* Synthesis: a = A·w, b = B·w (from the zkey's coefs), c = a∘b, each domain_size elements of 32
 * bytes, Montgomery form, written to the caller's memory. witness: nVars standard-form values.
 * threads < 1 here and in the cores below: zk_threads_default() (the CPUs of the affinity mask). */
int zk_synth(const zk_zkey_t *z, const uint8_t *witness, void *a, void *b, void *c, int threads);

/* Scratch the core needs besides its inputs (it never writes a, b, c or the witness). */
size_t zk_core_scratch_size(const zk_zkey_t *z);

/* Proving core on the CPU: H by the odd-coset trick and the five MSMs. scratch must be 64-byte
 * aligned and zk_core_scratch_size() long. times may be NULL. */
int zk_prove_core(const zk_zkey_t *z, const uint8_t *witness, const void *a, const void *b, const void *c,
                  void *scratch, zk_raw_t *out, zk_core_times_t *times, int threads);

/* After zk_prove_core, the first domain_size*32 bytes of scratch hold P, the H-MSM scalars
 * (standard form): useful to compare with reference vectors. */

/* The same proof for a caller that does not need a, b, c afterwards (the one-shot prover): abc
 * (zk_abc_size bytes, a then b then c, as zk_synth wrote them) is transformed in place, so scratch
 * holds only the twiddles (zk_core_inplace_scratch_size, 64-byte aligned), and b, c go back to the
 * kernel (MADV_DONTNEED) before the MSMs: 4 domains of 32 bytes less at the peak. Afterwards the
 * first domain_size*32 bytes of abc hold P; the rest of abc reads as zero. */
size_t zk_core_inplace_scratch_size(const zk_zkey_t *z);
int zk_prove_core_inplace(const zk_zkey_t *z, const uint8_t *witness, void *abc, void *scratch, zk_raw_t *out,
                          zk_core_times_t *times, int threads);

/* One value uniformly in [0, mod) from getrandom(2), mod a 32-byte LE modulus (standard form). */
int zk_random_below(const uint8_t *mod, uint8_t out[32]);

/* Draws r, s uniformly in [0, r) from getrandom(2) (standard form, 32 bytes LE each). */
int zk_random_rs(const zk_curve_t *curve, uint8_t r[32], uint8_t s[32]);

/* Finalisation: πA = α1 + A + r·δ1, πB = β2 + B2 + s·δ2, ρ = β1 + B1 + s·δ1,
 * πC = C + H + s·πA + r·ρ − rs·δ1. */
int zk_finalize(const zk_zkey_t *z, const zk_raw_t *raw, const uint8_t r[32], const uint8_t s[32], zk_proof_t *out);

/* JSON exactly as snarkjs writes it (indent 1, no trailing newline). *ret_json is malloc'd. */
int zk_proof_json(const zk_curve_t *curve, const zk_proof_t *p, char **ret_json);
int zk_public_json(const uint8_t *witness, uint32_t n_pub, char **ret_json);

/* Writes a file atomically through the ground floor's writer (base/file.h: file_write_atomic: a
 * temporary made with O_EXCL|O_NOFOLLOW, fsync, rename, fsync of the folder). */
int zk_write_file_atomic(const char *path, const char *data, size_t len, zk_err_t *err);
/* For writers that stream into a temporary file themselves (zk/zkey_write.c):
 * tmp = "PATH.tmp.<pid>" (ENAMETOOLONG if it does not fit in size bytes); then, once tmp is complete
 * and synced, rename it over path (removing tmp if that fails) and fsync the directory. */
int zk_tmp_path(char *tmp, size_t size, const char *path, zk_err_t *err);
int zk_rename_synced(const char *tmp, const char *path, zk_err_t *err);
