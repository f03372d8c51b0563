/* libFuzzer target: snarkjs's verification_key.json (zk_vk_parse_json: JSON, decimal numbers, ranges,
 * curve and subgroup checks of every key point, pairing preparation). */
#include <stdint.h>

#include "fuzz.h"
#include "zk/verify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char name[] = "fuzz_vk.json";
    zk_vk_t vk;
    zk_err_t err = {{0}};
    int rc = zk_vk_parse_json(&vk, name, (const char *)data, size, &err);
    fuzz_check_error(rc, err.msg, name);
    if (rc == 0) {
        fuzz_touch(vk.ic, ((size_t)vk.n_pub + 1) * vk.curve->g1_size);
        zk_vk_free(&vk);
    }
    return 0;
}
