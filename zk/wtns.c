/* Reader of circom .wtns witness files: the whole file is read into memory and validated, values
 * stay in standard LE form and end up 8-byte aligned. */
#include "wtns.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "binfile.h"

/* Validates the image; on success gives the curve, the count and the offset of the values. */
static int wtns_validate(const char *name, const uint8_t *data, size_t len, const zk_curve_t **ret_curve,
                         uint32_t *ret_n, size_t *ret_off, zk_err_t *err) {
    zk_bin_t b;
    int rc = zk_bin_parse(&b, name, data, len, "wtns", 1, 2, "witness section", err);
    if (rc < 0) return rc;
    if (!b.sec[1].present) return zk_fail(err, EINVAL, "%s: witness section 1 (header) is missing", name);
    if (!b.sec[2].present) return zk_fail(err, EINVAL, "%s: witness section 2 (values) is missing", name);
    const uint8_t *h = zk_bin_payload(&b, 1);
    uint64_t hs = b.sec[1].size;
    if (hs < 4) return zk_fail(err, EINVAL, "%s: witness section 1 size %" PRIu64 " is too small", name, hs);
    uint32_t n8 = zk_le32(h);
    if (n8 != 32) return zk_fail(err, EINVAL, "%s: witness n8 is %u, expected 32", name, n8);
    if (hs != 8 + (uint64_t)n8)
        return zk_fail(err, EINVAL, "%s: witness section 1 size %" PRIu64 ", expected %u", name, hs, 8 + n8);
    const zk_curve_t *c = zk_curve_by_r(h + 4, n8);
    if (!c) return zk_fail(err, EINVAL, "%s: witness prime is not the scalar field r of bn128 or bls12381", name);
    uint32_t n = zk_le32(h + 4 + n8);
    if (n == 0) return zk_fail(err, EINVAL, "%s: witness has no values", name);
    uint64_t want = (uint64_t)n * n8;
    if (b.sec[2].size != want)
        return zk_fail(err, EINVAL, "%s: witness section 2 size %" PRIu64 ", expected %" PRIu64 " for %u values", name,
                       b.sec[2].size, want, n);
    const uint8_t *v = zk_bin_payload(&b, 2);
    for (uint32_t i = 0; i < n; i++)
        if (!zk_le_lt(v + (size_t)i * n8, c->r, n8))
            return zk_fail(err, EINVAL, "%s: witness value %u is not < r", name, i);
    static const uint8_t one[32] = {1};
    if (memcmp(v, one, 32) != 0) return zk_fail(err, EINVAL, "%s: witness value 0 (the constant wire) is not 1", name);
    *ret_curve = c;
    *ret_n = n;
    *ret_off = b.sec[2].off;
    return 0;
}

void zk_wtns_free(zk_wtns_t *w) {
    if (!w) return;
    free(w->buf);
    free(w->copy);
    memset(w, 0, sizeof(*w));
}

int zk_wtns_parse(zk_wtns_t *w, const char *name, const uint8_t *data, size_t len, zk_err_t *err) {
    memset(w, 0, sizeof(*w));
    const zk_curve_t *c;
    uint32_t n;
    size_t off;
    int rc = wtns_validate(name, data, len, &c, &n, &off, err);
    if (rc < 0) return rc;
    const uint8_t *v = data + off;
    if (((uintptr_t)v & 7) != 0) {
        void *m = NULL;
        if (posix_memalign(&m, 64, (size_t)n * 32) != 0)
            return zk_fail(err, ENOMEM, "%s: out of memory for %u witness values", name, n);
        memcpy(m, v, (size_t)n * 32);
        w->copy = m;
        v = m;
    }
    w->curve = c;
    w->n = n;
    w->values = v;
    return 0;
}

int zk_wtns_load(zk_wtns_t *w, const char *path, zk_err_t *err) {
    memset(w, 0, sizeof(*w));
    /* 8 spare bytes in front so the values can be shifted onto an 8-byte boundary in place. */
    uint8_t *buf;
    size_t len;
    int rc = zk_read_file(path, 8, &buf, &len, err);
    if (rc < 0) return rc;
    const zk_curve_t *c;
    uint32_t n;
    size_t off;
    rc = wtns_validate(path, buf + 8, len, &c, &n, &off, err);
    if (rc < 0) {
        free(buf);
        return rc;
    }
    /* malloc returns 16-byte aligned memory: move the image down so that the values are aligned. */
    uintptr_t at = (uintptr_t)(buf + 8 + off);
    size_t shift = (size_t)(at & 7);
    uint8_t *img = buf + 8 - shift;
    if (shift) memmove(img, buf + 8, len);
    w->curve = c;
    w->n = n;
    w->values = img + off;
    w->buf = buf;
    w->buf_size = len + 9;
    return 0;
}

int zk_wtns_check_zkey(const zk_wtns_t *w, const char *wtns_name, const zk_zkey_t *z, const char *zkey_name,
                       zk_err_t *err) {
    if (w->curve != z->curve)
        return zk_fail(err, EINVAL, "%s: witness is for another curve (%s), the zkey %s is for %s", wtns_name,
                       w->curve->name, zkey_name, z->curve->name);
    if (w->n != z->n_vars)
        return zk_fail(err, EINVAL, "%s: witness is for another circuit: it has %u values, the zkey %s needs %u",
                       wtns_name, w->n, zkey_name, z->n_vars);
    return 0;
}
