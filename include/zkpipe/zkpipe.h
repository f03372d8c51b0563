/* zkpipe's C library (libzkpipe, docs/library.md): Groth16 proofs for circom/snarkjs circuits on
 * bn128 and bls12381.
 *
 *   a key loaded once      zkpipe_key_load_file / zkpipe_key_load_buffer   (either curve, from the zkey)
 *   a witness from inputs  zkpipe_witgen_open + zkpipe_witgen_calc          (circom's wasm, compiled once)
 *   a proof of a witness   zkpipe_prove -> zkpipe_proof_json, zkpipe_public_json, zkpipe_proof_points
 *   a check                zkpipe_verify (a loaded key) / zkpipe_verify_json (snarkjs's vk JSON)
 *
 * One error convention: every function that can fail returns 0 or a negative errno (-EINVAL bad
 * input, -EBADMSG a proof that does not verify, -ENOMEM, -ENOENT and the like from a file) and, when
 * err is not NULL, puts one line naming what is wrong in err->message. Output pointers are set only
 * on success. Nothing prints, nothing exits. A key, and zkpipe_prove and zkpipe_verify on it, may be
 * used from many threads at once; every proof is checked with the native verifier before it is
 * returned. Worker threads: ZKPIPE_THREADS, else every CPU the process may run on, shared among
 * the proofs running at once. */
#ifndef ZKPIPE_H
#define ZKPIPE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zkpipe_error {
    char message[512];
} zkpipe_error;

/* ---- keys ---- */

typedef struct zkpipe_key zkpipe_key;

/* A snarkjs Groth16 .zkey, validated whole (sizes, curve, coefficients, the verifying key's points).
 * A buffer is copied: the caller may free it after the call. */
int zkpipe_key_load_file(zkpipe_key **ret, const char *zkey_path, zkpipe_error *err);
int zkpipe_key_load_buffer(zkpipe_key **ret, const void *zkey, size_t size, zkpipe_error *err);
void zkpipe_key_free(zkpipe_key *key); /* NULL is ignored */

typedef struct zkpipe_key_info {
    const char *curve;    /* "bn128" or "bls12381" */
    uint32_t n_vars;      /* values in a witness, wire 0 included */
    uint32_t n_public;    /* public signals */
    uint32_t domain_size; /* a power of two */
    unsigned coord_bytes; /* bytes of a base-field coordinate: 32 (bn128), 48 (bls12381) */
} zkpipe_key_info;

void zkpipe_key_get_info(const zkpipe_key *key, zkpipe_key_info *info);

/* ---- proofs ---- */

typedef struct zkpipe_proof zkpipe_proof;

/* Proves the .wtns image (as `zkpipe witness` or snarkjs writes it; any alignment) with the key.
 * -EINVAL: not a witness of this key's circuit and curve; -EBADMSG: the proof does not verify (a
 * witness that does not satisfy the circuit, or a corrupt key point, which the message names). */
int zkpipe_prove(const zkpipe_key *key, const void *wtns, size_t wtns_size, zkpipe_proof **ret, zkpipe_error *err);
void zkpipe_proof_free(zkpipe_proof *proof); /* NULL is ignored */

/* proof.json and public.json exactly as `zkpipe prove` and snarkjs write them (NUL-terminated, owned
 * by the proof). */
const char *zkpipe_proof_json(const zkpipe_proof *proof);
const char *zkpipe_public_json(const zkpipe_proof *proof);

/* The raw proof: affine points, each coordinate big-endian in standard (not Montgomery) form in the
 * first coord_bytes bytes of its slot; the point at infinity is all zeros. G2 coordinates are
 * (c0, c1) as snarkjs orders them (Ethereum's pairing precompile takes (c1, c0)). */
typedef struct zkpipe_points {
    unsigned coord_bytes;
    uint8_t a[2][48];    /* πA: x, y */
    uint8_t b[2][2][48]; /* πB: x (c0, c1), y (c0, c1) */
    uint8_t c[2][48];    /* πC: x, y */
} zkpipe_points;

void zkpipe_proof_points(const zkpipe_proof *proof, zkpipe_points *out);
/* The public signals (the witness's values 1..n_public): n_public scalars of 32 bytes, big-endian. */
uint32_t zkpipe_proof_n_public(const zkpipe_proof *proof);
const uint8_t *zkpipe_proof_public(const zkpipe_proof *proof);

/* ---- verification ---- */

/* 0 valid, -EBADMSG a well-formed proof that does not verify, -EINVAL malformed input (bad JSON, a
 * point off its curve or outside its subgroup, a value out of range, a wrong number of signals):
 * the outcome of `zkpipe verify`. zkpipe_verify uses the loaded key's verifying key. */
int zkpipe_verify(const zkpipe_key *key, const char *proof_json, const char *public_json, zkpipe_error *err);
int zkpipe_verify_json(const char *vk_json, const char *proof_json, const char *public_json, zkpipe_error *err);

/* ---- witnesses from circuit inputs ---- */

typedef struct zkpipe_witgen zkpipe_witgen;

/* circom's witness generator (circuit.wasm), compiled to native code once and kept in cache_dir (NULL:
 * the cache `zkpipe witness` uses: $ZKPIPE_CACHE, else $XDG_CACHE_HOME/zkpipe, else ~/.cache/zkpipe).
 * The first open of a wasm compiles it (wasm2c and the C compiler; seconds). */
int zkpipe_witgen_open(zkpipe_witgen **ret, const char *wasm_path, const char *cache_dir, zkpipe_error *err);
void zkpipe_witgen_close(zkpipe_witgen *gen); /* NULL is ignored */

/* The witness of circom input JSON (text of len bytes), as a .wtns image (the bytes of `snarkjs wtns
 * calculate`) in *ret_wtns, freed with zkpipe_free. An input the circuit rejects (a failed assert, a
 * missing or unknown signal) is -EINVAL with the circuit's message. Runs one at a time per process
 * (the wasm runtime's trap state is global); the circuit's log() lines are dropped. */
int zkpipe_witgen_calc(zkpipe_witgen *gen, const char *input_json, size_t len, void **ret_wtns, size_t *ret_size,
                       zkpipe_error *err);

void zkpipe_free(void *p);

#ifdef __cplusplus
}
#endif

#endif /* ZKPIPE_H */
