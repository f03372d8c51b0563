/* zkpipe verify: checks a Groth16 proof like `snarkjs groth16 verify` (same argument order), with
 * the native verifier of zk/verify.h. Exit 0 OK, 1 INVALID, 2 malformed input or usage. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "zk/verify.h"

static void verify_usage(FILE *f) {
    fprintf(f, "Usage: zkpipe verify <verification_key.json|circuit.zkey> <public.json> <proof.json>\n"
               "\n"
               "Checks a Groth16 proof (snarkjs conventions, bn128 or bls12381; the curve comes from the key):\n"
               "  e(A, B) == e(alpha1, beta2) * e(vk_x, gamma2) * e(C, delta2),  vk_x = IC0 + sum pub_i IC_i.\n"
               "The key is snarkjs's verification_key.json or a .zkey (its verifying part). Every point must be\n"
               "on its curve and in the prime-order subgroup, every public signal below r, and their number\n"
               "must match the key.\n"
               "\n"
               "Prints OK and exits 0 when the proof is valid; prints INVALID: <reason> and exits 1 when it\n"
               "does not verify; exits 2 with a one-line error for unreadable or malformed input (bad JSON,\n"
               "non-decimal numbers, values >= the modulus, wrong curve, wrong number of public signals,\n"
               "points off the curve or outside the subgroup).\n");
}

int zkpipe_cmd_verify(int argc, char **argv) {
    const char *args[3];
    int na = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            verify_usage(stdout);
            return 0;
        }
        if (argv[i][0] == '-' && argv[i][1] && strcmp(argv[i], "--")) {
            fprintf(stderr, "zkpipe verify: unknown option '%s' (see zkpipe verify --help)\n", argv[i]);
            return 2;
        }
        if (!strcmp(argv[i], "--")) continue;
        if (na == 3) {
            na++;
            break;
        }
        args[na++] = argv[i];
    }
    if (na != 3) {
        fprintf(stderr,
                "zkpipe verify: expected 3 arguments, <vk.json|circuit.zkey> <public.json> <proof.json>, got %s "
                "(see zkpipe verify --help)\n",
                na > 3    ? "more"
                : na == 2 ? "2"
                : na == 1 ? "1"
                          : "none");
        return 2;
    }
    zk_err_t err = {{0}};
    zk_vk_t vk = {0};
    zk_proof_t proof;
    uint8_t *pub = NULL;
    uint32_t n_pub = 0;
    int rc = zk_vk_load(&vk, args[0], &err);
    if (rc < 0) goto error;
    if ((rc = zk_public_from_json(&pub, &n_pub, vk.curve, args[1], &err)) < 0) goto error;
    if ((rc = zk_proof_from_json(&proof, vk.curve, args[2], &err)) < 0) goto error;
    if (n_pub != vk.n_pub) {
        rc = zk_fail(&err, EINVAL, "%s: wrong number of public signals: %u given, the key %s expects %u", args[1], n_pub,
                     args[0], vk.n_pub);
        goto error;
    }
    rc = zk_verify_proof(&vk, &proof, pub, n_pub, &err);
    if (rc == -EBADMSG) {
        printf("INVALID: %s\n", err.msg);
        free(pub);
        zk_vk_free(&vk);
        return 1;
    }
    if (rc < 0) goto error;
    printf("OK\n");
    free(pub);
    zk_vk_free(&vk);
    return 0;
error:
    fprintf(stderr, "zkpipe verify: %s\n", err.msg);
    free(pub);
    zk_vk_free(&vk);
    return 2;
}
