/* libFuzzer target: the .r1cs reader (zk_r1cs_parse), then the constraint check on an accepted circuit
 * (zk_r1cs_check walks every term the reader validated) with a witness of small values. */
#include <stdint.h>

#include "fuzz.h"
#include "zk/r1cs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char name[] = "fuzz.r1cs";
    zk_r1cs_t r;
    zk_err_t err = {{0}};
    int rc = zk_r1cs_parse(&r, name, data, size, &err);
    fuzz_check_error(rc, err.msg, name);
    if (rc < 0) return 0;
    if (r.n_wires <= (1u << 16)) { /* nWires costs no file bytes: bound the witness made for it */
        uint8_t *w = calloc(r.n_wires, 32);
        if (!w) abort();
        for (uint32_t i = 0; i < r.n_wires; i++) w[32 * (size_t)i] = (uint8_t)(i == 0 ? 1 : i * 7 + 3);
        int64_t bad;
        rc = zk_r1cs_check(&r, name, w, r.n_wires, &bad, &err);
        fuzz_check_error(rc, err.msg, name);
        if ((rc == 0) != (bad < 0)) abort();
        free(w);
    }
    zk_r1cs_close(&r);
    return 0;
}
