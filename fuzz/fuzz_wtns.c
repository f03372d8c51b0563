/* libFuzzer target: the .wtns reader (zk_wtns_parse) and its match against a key's header. */
#include <stdint.h>

#include "fuzz.h"
#include "zk/wtns.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char name[] = "fuzz.wtns";
    zk_wtns_t w;
    zk_err_t err = {{0}};
    int rc = zk_wtns_parse(&w, name, data, size, &err);
    fuzz_check_error(rc, err.msg, name);
    if (rc < 0) return 0;
    fuzz_touch(w.values, (size_t)w.n * 32);
    zk_zkey_t z = {.curve = &zk_curve_bn128, .n_vars = 3};
    rc = zk_wtns_check_zkey(&w, name, &z, "k.zkey", &err);
    fuzz_check_error(rc, err.msg, name);
    zk_wtns_free(&w);
    return 0;
}
