/* Curve descriptors and the library's error helper. */
#include "curve_info.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "constants.h"

static const uint64_t bn_q[4] = BN_FQ_P, bn_r[4] = BN_FR_P;
static const uint64_t bls_q[6] = BLS_FQ_P, bls_r[4] = BLS_FR_P;

/* The limb arrays are little-endian u64s; on the little-endian hosts we support that is also the
 * byte order of the file formats. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "zkpipe needs a little-endian host");

const zk_curve_t zk_curve_bn128 = {
    .id = ZK_CURVE_BN128, .name = "bn128", .n8q = 32, .n8r = 32, .g1_size = 64, .g2_size = 128,
    .q = (const uint8_t *)bn_q, .r = (const uint8_t *)bn_r,
};
const zk_curve_t zk_curve_bls12381 = {
    .id = ZK_CURVE_BLS12381, .name = "bls12381", .n8q = 48, .n8r = 32, .g1_size = 96, .g2_size = 192,
    .q = (const uint8_t *)bls_q, .r = (const uint8_t *)bls_r,
};

const zk_curve_t *zk_curve_by_r(const uint8_t *r, size_t n8) {
    if (n8 == 32 && memcmp(r, zk_curve_bn128.r, 32) == 0) return &zk_curve_bn128;
    if (n8 == 32 && memcmp(r, zk_curve_bls12381.r, 32) == 0) return &zk_curve_bls12381;
    return NULL;
}

const zk_curve_t *zk_curve_by_q(const uint8_t *q, size_t n8) {
    if (n8 == 32 && memcmp(q, zk_curve_bn128.q, 32) == 0) return &zk_curve_bn128;
    if (n8 == 48 && memcmp(q, zk_curve_bls12381.q, 48) == 0) return &zk_curve_bls12381;
    return NULL;
}

const zk_curve_t *zk_curve_by_name(const char *name) {
    if (!strcasecmp(name, "bn128") || !strcasecmp(name, "bn254") || !strcasecmp(name, "alt_bn128"))
        return &zk_curve_bn128;
    if (!strcasecmp(name, "bls12381") || !strcasecmp(name, "bls12-381")) return &zk_curve_bls12381;
    return NULL;
}

int zk_fail(zk_err_t *err, int code, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
    }
    return -code;
}
