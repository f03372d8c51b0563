/* What librapidsnark and libzkpipe share (docs/library.md): a key loaded once (file or buffer, either
 * curve) with its verifying key prepared, and one proof of a parsed witness, checked with the native
 * verifier before it is handed out. Everything here may be called from many threads at once on one
 * key: the key is only read after lib_key_open, and each proof has its own memory. Nothing prints,
 * nothing exits: errors are one line in zk_err_t and a negative errno. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "zk/groth16.h"
#include "zk/verify.h"
#include "zk/wtns.h"
#include "zk/zkey.h"

typedef struct lib_key {
    zk_zkey_t z;
    zk_vk_t vk;
    char name[256]; /* the path, or "zkey buffer", for messages */
    int threads;    /* worker threads a proof may use: ZKPIPE_THREADS, else the CPUs this process may run on */
    void *image;    /* the private copy of a key given as a buffer (anonymous memory), or NULL */
    size_t image_size;
} lib_key_t;

/* ZKPIPE_THREADS (1..1024) when it is set, else the CPUs in the affinity mask; -EINVAL names a bad value. */
int lib_threads(int *ret, zk_err_t *err);

/* A key from a .zkey file (mapped) or from a buffer (copied first, so the caller may free it). */
int lib_key_open_file(lib_key_t **ret, const char *path, zk_err_t *err);
int lib_key_open_buffer(lib_key_t **ret, const void *data, size_t size, zk_err_t *err);
void lib_key_free(lib_key_t *k);

/* Parses a .wtns image and checks it against the key (same curve, nVars values). On failure *ret_length
 * (may be NULL) says whether the number of values was the reason. */
int lib_witness(const lib_key_t *k, zk_wtns_t *w, const void *data, size_t size, int *ret_length, zk_err_t *err);

/* Proves w (checked by lib_witness) with k and verifies the proof; a proof that does not verify is
 * never returned: the error names a corrupt key point or, with a sound key, the witness. The
 * threads of the key are shared among the proofs running at once in the process. */
int lib_prove(const lib_key_t *k, const zk_wtns_t *w, zk_proof_t *out, zk_err_t *err);

/* Verifies snarkjs JSON texts (NUL-terminated) as `zkpipe verify` does: 0 valid, -EBADMSG a
 * well-formed proof that does not verify, another negative errno for malformed input (the reason in
 * err). The curve comes from the key. */
int lib_verify_json(const char *proof, const char *public_json, const char *vk_json, zk_err_t *err);
/* The same with a verifying key at hand (a loaded key's). */
int lib_verify_with(const zk_vk_t *vk, const char *proof, const char *public_json, zk_err_t *err);
