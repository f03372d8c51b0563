/* rapidsnark's C verifier API, as zkpipe's librapidsnark implements it (docs/library.md): the same
 * function and codes; bn128 and bls12381 keys (the curve comes from the key). */
#ifndef VERIFIER_HPP
#define VERIFIER_HPP

#ifdef __cplusplus
extern "C" {
#endif

#define VERIFIER_VALID_PROOF   0x0
#define VERIFIER_INVALID_PROOF 0x1
#define VERIFIER_ERROR         0x2

/* proof, inputs (the public signals) and verification_key are NUL-terminated snarkjs JSON texts.
 * VERIFIER_VALID_PROOF or VERIFIER_INVALID_PROOF, or VERIFIER_ERROR for malformed input (bad JSON, a
 * point off its curve, a wrong number of signals...) with a one-line message in error_msg. */
int groth16_verify(const char *proof, const char *inputs, const char *verification_key, char *error_msg,
                   unsigned long error_msg_maxsize);

#ifdef __cplusplus
}
#endif

#endif /* VERIFIER_HPP */
