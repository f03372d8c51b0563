/* libFuzzer target: public.json (zk_public_parse_json) against each curve's scalar field. */
#include <stdint.h>

#include "fuzz.h"
#include "zk/verify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char name[] = "fuzz_public.json";
    const zk_curve_t *curves[2] = {&zk_curve_bn128, &zk_curve_bls12381};
    for (int i = 0; i < 2; i++) {
        uint8_t *pub = NULL;
        uint32_t n = 0;
        zk_err_t err = {{0}};
        int rc = zk_public_parse_json(&pub, &n, curves[i], name, (const char *)data, size, &err);
        fuzz_check_error(rc, err.msg, name);
        if (rc == 0) {
            fuzz_touch(pub, (size_t)n * 32);
            free(pub);
        }
    }
    return 0;
}
