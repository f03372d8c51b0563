/* libFuzzer target: proof.json (zk_proof_parse_json) against each curve, and an accepted proof through
 * the whole check (zk_verify_proof) with the fixture key and public signals of that curve
 * (tests/data/<curve>/mulchain, read once). */
#include <stdint.h>

#include "fuzz.h"
#include "zk/verify.h"

#ifndef FUZZ_DATA_DIR
#error "FUZZ_DATA_DIR: the tests/data folder"
#endif

static struct {
    zk_vk_t vk;
    uint8_t *pub;
    uint32_t n_pub;
} fix[2];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    static const char *const dirs[2] = {FUZZ_DATA_DIR "/bn128/mulchain", FUZZ_DATA_DIR "/bls12381/mulchain"};
    for (int i = 0; i < 2; i++) {
        char path[1024];
        zk_err_t err;
        snprintf(path, sizeof path, "%s/vk.json", dirs[i]);
        if (zk_vk_from_json(&fix[i].vk, path, &err) < 0) {
            fprintf(stderr, "fuzz_proof: %s\n", err.msg);
            abort();
        }
        snprintf(path, sizeof path, "%s/public-1.json", dirs[i]);
        if (zk_public_from_json(&fix[i].pub, &fix[i].n_pub, fix[i].vk.curve, path, &err) < 0) {
            fprintf(stderr, "fuzz_proof: %s\n", err.msg);
            abort();
        }
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char name[] = "fuzz_proof.json";
    for (int i = 0; i < 2; i++) {
        zk_proof_t p;
        zk_err_t err = {{0}};
        int rc = zk_proof_parse_json(&p, fix[i].vk.curve, name, (const char *)data, size, &err);
        fuzz_check_error(rc, err.msg, name);
        if (rc < 0) continue;
        /* a proof the reader accepted is well-formed: it verifies or it is invalid, never malformed */
        rc = zk_verify_proof(&fix[i].vk, &p, fix[i].pub, fix[i].n_pub, &err);
        if (rc != 0 && rc != -EBADMSG) {
            fprintf(stderr, "accepted proof, then rc %d: %s\n", rc, err.msg);
            abort();
        }
    }
    return 0;
}
