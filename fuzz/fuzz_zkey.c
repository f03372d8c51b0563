/* libFuzzer target: the .zkey reader (zk_zkey_parse), then what `zkpipe verify KEY.zkey` and a failed
 * prove do with an accepted key: its verifying part (zk_vk_from_zkey: ranges, curve and subgroup
 * checks, pairing preparation) and the scan of every point (zk_zkey_check_points). */
#include <stdint.h>

#include "fuzz.h"
#include "zk/verify.h"
#include "zk/zkey.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char name[] = "fuzz.zkey";
    zk_zkey_t z;
    zk_err_t err = {{0}};
    int rc = zk_zkey_parse(&z, name, data, size, &err);
    fuzz_check_error(rc, err.msg, name);
    if (rc < 0) return 0;
    const size_t g1 = z.curve->g1_size, g2 = z.curve->g2_size;
    fuzz_touch(z.alpha1, g1);
    fuzz_touch(z.delta2, g2);
    fuzz_touch(z.ic, ((size_t)z.n_pub + 1) * g1);
    fuzz_touch(z.coefs, (size_t)z.n_coefs * (12 + z.curve->n8r));
    fuzz_touch(z.points_a, (size_t)z.n_vars * g1);
    fuzz_touch(z.points_b2, (size_t)z.n_vars * g2);
    fuzz_touch(z.points_c, ((size_t)z.n_vars - z.n_pub - 1) * g1);
    fuzz_touch(z.points_h, (size_t)z.domain_size * g1);
    zk_vk_t vk;
    if (zk_vk_from_zkey(&vk, &z, &err) == 0) zk_vk_free(&vk);
    rc = zk_zkey_check_points(&z, name, false, &err);
    fuzz_check_error(rc, err.msg, name);
    zk_zkey_close(&z);
    return 0;
}
