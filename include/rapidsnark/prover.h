/* rapidsnark's C prover API, as zkpipe's librapidsnark implements it (docs/library.md): the same
 * functions, types, codes and buffer protocol, so that a program written for rapidsnark builds and
 * runs unchanged. zkpipe also proves bls12381 keys, lets many threads prove on one prover object at
 * once, and checks every proof with its verifier before returning it.
 *
 * Sizes are in bytes. A proof or public buffer's size is passed in *size; on PROVER_OK it becomes
 * the length written (the text is NUL-terminated, the NUL not counted); on
 * PROVER_ERROR_SHORT_BUFFER both sizes become what a retry needs, and nothing was proven. Messages
 * are one line, cut to error_msg_maxsize bytes with the NUL (error_msg may be NULL). */
#ifndef PROVER_HPP
#define PROVER_HPP

#ifdef __cplusplus
extern "C" {
#endif

#define PROVER_OK                     0x0
#define PROVER_ERROR                  0x1
#define PROVER_ERROR_SHORT_BUFFER     0x2
#define PROVER_INVALID_WITNESS_LENGTH 0x3

/* The public buffer's minimum size for the key in the buffer (82 bytes a public signal, plus 4). */
int groth16_public_size_for_zkey_buf(const void *zkey_buffer, unsigned long long zkey_size,
                                     unsigned long long *public_size, char *error_msg,
                                     unsigned long long error_msg_maxsize);

/* The same for a .zkey file. */
int groth16_public_size_for_zkey_file(const char *zkey_fname, unsigned long long *public_size, char *error_msg,
                                      unsigned long long error_msg_maxsize);

/* The proof buffer's minimum size (810); a bls12381 proof needs more: the short-buffer answer says how much. */
void groth16_proof_size(unsigned long long *proof_size);

/* A prover object for the key in the buffer (copied: the buffer may be freed afterwards). */
int groth16_prover_create(void **prover_object, const void *zkey_buffer, unsigned long long zkey_size,
                          char *error_msg, unsigned long long error_msg_maxsize);

/* A prover object for a .zkey file. */
int groth16_prover_create_zkey_file(void **prover_object, const char *zkey_file_path, char *error_msg,
                                    unsigned long long error_msg_maxsize);

/* Proves the .wtns image in wtns_buffer into proof and public JSON. PROVER_INVALID_WITNESS_LENGTH:
 * the witness has another number of values than the key's circuit. Safe to call from many threads
 * on one prover object. */
int groth16_prover_prove(void *prover_object, const void *wtns_buffer, unsigned long long wtns_size,
                         char *proof_buffer, unsigned long long *proof_size, char *public_buffer,
                         unsigned long long *public_size, char *error_msg, unsigned long long error_msg_maxsize);

/* Frees a prover object (NULL is ignored). */
void groth16_prover_destroy(void *prover_object);

/* groth16_prover_create, groth16_prover_prove and groth16_prover_destroy in one call. */
int groth16_prover(const void *zkey_buffer, unsigned long long zkey_size, const void *wtns_buffer,
                   unsigned long long wtns_size, char *proof_buffer, unsigned long long *proof_size,
                   char *public_buffer, unsigned long long *public_size, char *error_msg,
                   unsigned long long error_msg_maxsize);

/* The same with the key read from a .zkey file. */
int groth16_prover_zkey_file(const char *zkey_file_path, const void *wtns_buffer, unsigned long long wtns_size,
                             char *proof_buffer, unsigned long long *proof_size, char *public_buffer,
                             unsigned long long *public_size, char *error_msg, unsigned long long error_msg_maxsize);

#ifdef __cplusplus
}
#endif

#endif /* PROVER_HPP */
