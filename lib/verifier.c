/* rapidsnark's verifier API (include/rapidsnark/verifier.h) on zkpipe's native verifier: the
 * outcome of `zkpipe verify` on the same texts (docs/library.md). */
#include <errno.h>
#include <stdio.h>

#include "core.h"
#include "include/rapidsnark/verifier.h"

__attribute__((visibility("default"))) int groth16_verify(const char *proof, const char *inputs,
                                                          const char *verification_key, char *error_msg,
                                                          unsigned long error_msg_maxsize) {
    zk_err_t err = {{0}};
    int rc = lib_verify_json(proof, inputs, verification_key, &err);
    if (rc == 0) return VERIFIER_VALID_PROOF;
    /* the reason, for an invalid proof too */
    if (error_msg && error_msg_maxsize)
        snprintf(error_msg, error_msg_maxsize > 1ul << 30 ? 1ul << 30 : error_msg_maxsize, "%s", err.msg);
    return rc == -EBADMSG ? VERIFIER_INVALID_PROOF : VERIFIER_ERROR;
}
