/* Groth16 verification (zk/verify.h): readers of snarkjs's vk, proof and public JSON files and of a
 * .zkey's verifying part, then the pairing check of zk/verify_tmpl.h for the key's curve. */
#include "verify.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#ifdef ZK_HAVE_JSONC
#include <json-c/json.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binfile.h"
#include "field.h"
#include "pairing.h"

#define VT bn
#define VT_FQN 4
#define VT_G1_IN_SUBGROUP(p) ((void)(p), true) /* cofactor 1: every curve point is in G1 */
#include "verify_tmpl.h"
#undef VT
#undef VT_FQN
#undef VT_G1_IN_SUBGROUP

#define VT bls
#define VT_FQN 6
#define VT_G1_IN_SUBGROUP(p) bls_g1_in_subgroup(p)
#include "verify_tmpl.h"
#undef VT
#undef VT_FQN
#undef VT_G1_IN_SUBGROUP

#ifdef ZK_HAVE_JSONC
/* ---- JSON ---- */

/* Parses a JSON image (name is only used in messages); anything after the value but whitespace is
 * an error. */
static int json_parse(struct json_object **ret, const char *name, const char *buf, size_t len, zk_err_t *err) {
    if (memchr(buf, 0, len)) return zk_fail(err, EINVAL, "%s: not JSON (contains a NUL byte)", name);
    if (len > INT32_MAX) return zk_fail(err, EFBIG, "%s: %zu bytes is too large for a JSON file", name, len);
    struct json_tokener *tok = json_tokener_new();
    if (!tok) return zk_fail(err, ENOMEM, "%s: out of memory", name);
    struct json_object *obj = json_tokener_parse_ex(tok, buf, (int)len);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t used = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    int rc = 0;
    if (!obj || jerr != json_tokener_success) {
        if (jerr == json_tokener_continue) jerr = json_tokener_error_parse_eof;
        rc = zk_fail(err, EINVAL, "%s: bad JSON: %s", name, json_tokener_error_desc(jerr));
    } else {
        for (size_t i = used; i < len; i++)
            if (!strchr(" \t\r\n", buf[i])) {
                rc = zk_fail(err, EINVAL, "%s: bad JSON: trailing data after the value", name);
                break;
            }
    }
    if (rc < 0) {
        json_object_put(obj);
        return rc;
    }
    *ret = obj;
    return 0;
}

/* Reads (a regular file only, bounded by its size: zk_read_file) and parses a whole JSON file. */
static int json_load(struct json_object **ret, const char *path, zk_err_t *err) {
    uint8_t *buf;
    size_t len;
    int rc = zk_read_file(path, 0, &buf, &len, err);
    if (rc < 0) return rc;
    rc = json_parse(ret, path, (const char *)buf, len, err);
    free(buf);
    return rc;
}

/* A decimal string < modulus (n limbs) into standard-form limbs. */
static int parse_dec(uint64_t *out, int n, const uint64_t *modulus, const char *modname, struct json_object *v,
                     const char *path, const char *key, zk_err_t *err) {
    if (!v) return zk_fail(err, EINVAL, "%s: %s: missing", path, key);
    if (!json_object_is_type(v, json_type_string))
        return zk_fail(err, EINVAL, "%s: %s: expected a decimal string", path, key);
    const char *s = json_object_get_string(v);
    if (strlen(s) != (size_t)json_object_get_string_len(v))
        return zk_fail(err, EINVAL, "%s: %s: not a non-negative decimal number (contains a NUL)", path, key);
    int rc = zk_bigint_from_dec(s, out, n);
    if (rc == -EINVAL) {
        char t[64];
        zk_printable(s, strlen(s), t, sizeof(t));
        return zk_fail(err, EINVAL, "%s: %s: not a non-negative decimal number: \"%s\"", path, key, t);
    }
    if (rc == -ERANGE || !zk_bigint_lt(out, modulus, n))
        return zk_fail(err, EINVAL, "%s: %s: value is not below the field modulus %s", path, key, modname);
    return 0;
}

static struct json_object *arr_get(struct json_object *a, size_t i) {
    if (!a || !json_object_is_type(a, json_type_array) || i >= json_object_array_length(a)) return NULL;
    return json_object_array_get_idx(a, i);
}

/* A point is [x, y, z] or, as ffjavascript also reads it, [x, y] with z = 1: its element count. */
static int point_len(struct json_object *a) {
    if (a && json_object_is_type(a, json_type_array) && json_object_array_length(a) == 2) return 2;
    return 3;
}

static int expect_array(struct json_object *a, size_t len, const char *path, const char *key, zk_err_t *err) {
    if (!a) return zk_fail(err, EINVAL, "%s: missing key \"%s\"", path, key);
    if (!json_object_is_type(a, json_type_array)) return zk_fail(err, EINVAL, "%s: %s: expected an array", path, key);
    if (json_object_array_length(a) != len)
        return zk_fail(err, EINVAL, "%s: %s: expected %zu elements, found %zu", path, key, len,
                       json_object_array_length(a));
    return 0;
}

/* G1 as ["x", "y", "z"] (Jacobian; snarkjs writes z = 1) into affine Montgomery bytes, on-curve checked
 * and, with subgroup, checked to be in the prime-order subgroup (so that the error names the file). */
static int parse_g1(uint8_t *out, const zk_curve_t *c, struct json_object *a, const char *path, const char *key,
                    bool subgroup, zk_err_t *err) {
    int rc, n = (int)c->n8q / 8;
    int len = point_len(a);
    if ((rc = expect_array(a, (size_t)len, path, key, err)) < 0) return rc;
    uint64_t v[3][6] = {{0}};
    v[2][0] = 1; /* z = 1 when absent */
    for (int i = 0; i < len; i++) {
        char k[96];
        snprintf(k, sizeof(k), "%s[%d]", key, i);
        if ((rc = parse_dec(v[i], n, (const uint64_t *)(const void *)c->q, "q", arr_get(a, i), path, k, err)) < 0)
            return rc;
    }
    bool on;
    if (c->id == ZK_CURVE_BN128) {
        bn_g1_from_jac(out, v[0], v[1], v[2]);
        bn_g1_aff_t p;
        memcpy(&p, out, sizeof(p));
        on = bn_g1_aff_on_curve(&p);
    } else {
        bls_g1_from_jac(out, v[0], v[1], v[2]);
        bls_g1_aff_t p;
        memcpy(&p, out, sizeof(p));
        on = bls_g1_aff_on_curve(&p);
        if (on && subgroup && !bls_g1_in_subgroup(&p))
            return zk_fail(err, EINVAL, "%s: %s: point is not in the prime-order subgroup of G1", path, key);
    }
    if (!on) return zk_fail(err, EINVAL, "%s: %s: point is not on the curve", path, key);
    return 0;
}

/* G2 as [["x.c0","x.c1"], ["y.c0","y.c1"], ["z.c0","z.c1"]]. */
static int parse_g2(uint8_t *out, const zk_curve_t *c, struct json_object *a, const char *path, const char *key,
                    bool subgroup, zk_err_t *err) {
    int rc, n = (int)c->n8q / 8;
    int len = point_len(a);
    if ((rc = expect_array(a, (size_t)len, path, key, err)) < 0) return rc;
    uint64_t v[6 * 6] = {0};
    v[4 * n] = 1; /* z = 1 + 0u when absent */
    for (int i = 0; i < len; i++) {
        char k[96];
        snprintf(k, sizeof(k), "%s[%d]", key, i);
        struct json_object *e = arr_get(a, (size_t)i);
        if ((rc = expect_array(e, 2, path, k, err)) < 0) return rc;
        for (int j = 0; j < 2; j++) {
            snprintf(k, sizeof(k), "%s[%d][%d]", key, i, j);
            if ((rc = parse_dec(v + (2 * i + j) * n, n, (const uint64_t *)(const void *)c->q, "q", arr_get(e, j), path,
                                k, err)) < 0)
                return rc;
        }
    }
    bool on, in = true;
    if (c->id == ZK_CURVE_BN128) {
        bn_g2_from_jac(out, v);
        bn_g2_aff_t p;
        memcpy(&p, out, sizeof(p));
        on = bn_g2_aff_on_curve(&p);
        if (on && subgroup) in = bn_g2_in_subgroup(&p);
    } else {
        bls_g2_from_jac(out, v);
        bls_g2_aff_t p;
        memcpy(&p, out, sizeof(p));
        on = bls_g2_aff_on_curve(&p);
        if (on && subgroup) in = bls_g2_in_subgroup(&p);
    }
    if (!on) return zk_fail(err, EINVAL, "%s: %s: point is not on the twist curve", path, key);
    if (!in) return zk_fail(err, EINVAL, "%s: %s: point is not in the prime-order subgroup of G2", path, key);
    return 0;
}

static int check_protocol(struct json_object *root, const char *path, bool required, zk_err_t *err) {
    struct json_object *v;
    if (!json_object_object_get_ex(root, "protocol", &v)) {
        if (required) return zk_fail(err, EINVAL, "%s: missing key \"protocol\"", path);
        return 0;
    }
    if (!json_object_is_type(v, json_type_string) || strcmp(json_object_get_string(v), "groth16"))
        return zk_fail(err, EINVAL, "%s: protocol: expected \"groth16\"", path);
    return 0;
}
#endif /* ZK_HAVE_JSONC */

/* ---- verifying key ---- */

static void prefix_path(zk_err_t *err, const char *path) {
    if (!err) return;
    char m[sizeof(err->msg)];
    memcpy(m, err->msg, sizeof(m));
    (void)zk_fail(err, 0, "%.200s: %.300s", path, m);
}

static int vk_finish(zk_vk_t *vk, zk_err_t *err) {
    if (vk->curve->id == ZK_CURVE_BN128) return bn_vk_prepare(vk, err);
    return bls_vk_prepare(vk, err);
}

void zk_vk_free(zk_vk_t *vk) {
    free(vk->ic);
    free(vk->pre);
    vk->ic = NULL;
    vk->pre = NULL;
}

#ifdef ZK_HAVE_JSONC
static int vk_from_root(zk_vk_t *vk, struct json_object *root, const char *path, zk_err_t *err) {
    struct json_object *v;
    int rc;
    zk_vk_t k = {0};
    if (!json_object_is_type(root, json_type_object)) {
        rc = zk_fail(err, EINVAL, "%s: expected a JSON object (a verification key)", path);
        goto out;
    }
    if ((rc = check_protocol(root, path, true, err)) < 0) goto out;
    if (!json_object_object_get_ex(root, "curve", &v) || !json_object_is_type(v, json_type_string)) {
        rc = zk_fail(err, EINVAL, "%s: missing key \"curve\"", path);
        goto out;
    }
    k.curve = zk_curve_by_name(json_object_get_string(v));
    if (!k.curve) {
        char t[64];
        zk_printable(json_object_get_string(v), (size_t)json_object_get_string_len(v), t, sizeof(t));
        rc = zk_fail(err, EINVAL, "%s: curve: unknown curve \"%s\"", path, t);
        goto out;
    }
    if (!json_object_object_get_ex(root, "nPublic", &v)) {
        rc = zk_fail(err, EINVAL, "%s: missing key \"nPublic\"", path);
        goto out;
    }
    errno = 0;
    int64_t np = json_object_get_int64(v);
    if (!json_object_is_type(v, json_type_int) || errno || np < 0 || np > (1 << 24)) {
        rc = zk_fail(err, EINVAL, "%s: nPublic: expected a non-negative integer", path);
        goto out;
    }
    k.n_pub = (uint32_t)np;
    static const char *g2keys[3] = {"vk_beta_2", "vk_gamma_2", "vk_delta_2"};
    uint8_t *g2dst[3] = {k.beta2, k.gamma2, k.delta2};
    if ((rc = parse_g1(k.alpha1, k.curve, json_object_object_get_ex(root, "vk_alpha_1", &v) ? v : NULL, path,
                       "vk_alpha_1", false, err)) < 0)
        goto out;
    for (int i = 0; i < 3; i++)
        if ((rc = parse_g2(g2dst[i], k.curve, json_object_object_get_ex(root, g2keys[i], &v) ? v : NULL, path,
                           g2keys[i], false, err)) < 0)
            goto out;
    struct json_object *ic = json_object_object_get_ex(root, "IC", &v) ? v : NULL;
    if ((rc = expect_array(ic, k.n_pub + 1, path, "IC", err)) < 0) goto out;
    k.ic = calloc(k.n_pub + 1, k.curve->g1_size);
    if (!k.ic) {
        rc = zk_fail(err, ENOMEM, "%s: out of memory", path);
        goto out;
    }
    for (uint32_t i = 0; i <= k.n_pub; i++) {
        char key[32];
        snprintf(key, sizeof(key), "IC[%u]", i);
        if ((rc = parse_g1(k.ic + (size_t)i * k.curve->g1_size, k.curve, arr_get(ic, i), path, key, false, err)) < 0)
            goto out;
    }
    if ((rc = vk_finish(&k, err)) < 0) {
        prefix_path(err, path);
        goto out;
    }
    *vk = k;
    k.ic = NULL;
out:
    free(k.ic);
    return rc;
}

int zk_vk_from_json(zk_vk_t *vk, const char *path, zk_err_t *err) {
    struct json_object *root = NULL;
    int rc = json_load(&root, path, err);
    if (rc < 0) return rc;
    rc = vk_from_root(vk, root, path, err);
    json_object_put(root);
    return rc;
}

int zk_vk_parse_json(zk_vk_t *vk, const char *name, const char *text, size_t len, zk_err_t *err) {
    struct json_object *root = NULL;
    int rc = json_parse(&root, name, text, len, err);
    if (rc < 0) return rc;
    rc = vk_from_root(vk, root, name, err);
    json_object_put(root);
    return rc;
}
#endif /* ZK_HAVE_JSONC */

int zk_vk_from_zkey(zk_vk_t *vk, const zk_zkey_t *z, zk_err_t *err) {
    zk_vk_t k = {0};
    k.curve = z->curve;
    k.n_pub = z->n_pub;
    memcpy(k.alpha1, z->alpha1, k.curve->g1_size);
    memcpy(k.beta2, z->beta2, k.curve->g2_size);
    memcpy(k.gamma2, z->gamma2, k.curve->g2_size);
    memcpy(k.delta2, z->delta2, k.curve->g2_size);
    k.ic = malloc((size_t)(k.n_pub + 1) * k.curve->g1_size);
    if (!k.ic) return zk_fail(err, ENOMEM, "out of memory");
    memcpy(k.ic, z->ic, (size_t)(k.n_pub + 1) * k.curve->g1_size);
    /* the zkey reader range-checks nothing inside points; values >= q would break the field code */
    const uint8_t *pts[4] = {k.alpha1, k.beta2, k.gamma2, k.delta2};
    const unsigned nfe[4] = {2, 4, 4, 4};
    const uint64_t *q = (const uint64_t *)(const void *)k.curve->q;
    int n = (int)k.curve->n8q / 8;
    for (int i = 0; i < 4; i++)
        for (unsigned j = 0; j < nfe[i]; j++) {
            uint64_t l[6];
            memcpy(l, pts[i] + j * k.curve->n8q, k.curve->n8q);
            if (!zk_bigint_lt(l, q, n)) {
                free(k.ic);
                static const char *const names[4] = {"alpha1", "beta2", "gamma2", "delta2"};
                return zk_fail(err, EINVAL, "section 2 (groth16 header): point %s: coordinate not below q", names[i]);
            }
        }
    for (uint32_t i = 0; i < 2 * (k.n_pub + 1); i++) {
        uint64_t l[6];
        memcpy(l, k.ic + (size_t)i * k.curve->n8q, k.curve->n8q);
        if (!zk_bigint_lt(l, q, n)) {
            free(k.ic);
            return zk_fail(err, EINVAL, "section 3 (IC): point %u: coordinate not below q", i / 2);
        }
    }
    int rc = vk_finish(&k, err);
    if (rc < 0) {
        free(k.ic);
        return rc;
    }
    *vk = k;
    return 0;
}

int zk_zkey_check_points(const zk_zkey_t *z, const char *name, bool subgroup, zk_err_t *err) {
    const zk_curve_t *c = z->curve;
    const struct {
        int id;
        const char *section, *point; /* point: the header point's name, NULL for a numbered section */
        const void *p;
        uint64_t n;
        bool g2;
    } secs[] = {
        {2, "groth16 header", "alpha1", z->alpha1, 1, false},
        {2, "groth16 header", "beta1", z->beta1, 1, false},
        {2, "groth16 header", "beta2", z->beta2, 1, true},
        {2, "groth16 header", "gamma2", z->gamma2, 1, true},
        {2, "groth16 header", "delta1", z->delta1, 1, false},
        {2, "groth16 header", "delta2", z->delta2, 1, true},
        {3, "IC", NULL, z->ic, (uint64_t)z->n_pub + 1, false},
        {5, "PointsA", NULL, z->points_a, z->n_vars, false},
        {6, "PointsB1", NULL, z->points_b1, z->n_vars, false},
        {7, "PointsB2", NULL, z->points_b2, z->n_vars, true},
        {8, "PointsC", NULL, z->points_c, (uint64_t)z->n_vars - z->n_pub - 1, false},
        {9, "PointsH", NULL, z->points_h, z->domain_size, false},
    };
    static const char *const whys[4] = {"", "has a coordinate that is not below q", "is not on the curve",
                                        "is not in the prime-order subgroup"};
    for (size_t i = 0; i < sizeof(secs) / sizeof(secs[0]); i++) {
        int why = 0;
        int64_t bad = c->id == ZK_CURVE_BN128 ? bn_first_bad_point(c, secs[i].p, secs[i].n, secs[i].g2, subgroup, &why)
                                              : bls_first_bad_point(c, secs[i].p, secs[i].n, secs[i].g2, subgroup, &why);
        if (bad < 0) continue;
        if (secs[i].point)
            return zk_fail(err, EINVAL, "%s: section %d (%s): point %s %s", name, secs[i].id, secs[i].section,
                           secs[i].point, whys[why]);
        return zk_fail(err, EINVAL, "%s: section %d (%s): point %" PRId64 " (%s) %s", name, secs[i].id,
                       secs[i].section, bad, secs[i].g2 ? "G2" : "G1", whys[why]);
    }
    return 0;
}

int zk_vk_load(zk_vk_t *vk, const char *path, zk_err_t *err) {
    char magic[4] = {0};
    int fd;
    size_t size;
    int orc = zk_open_regular(path, &fd, &size, err);
    if (orc < 0) return orc;
    ssize_t got = size >= 4 ? pread(fd, magic, 4, 0) : 0;
    close(fd);
    if (got == 4 && !memcmp(magic, "zkey", 4)) {
        zk_zkey_t z;
        int rc = zk_zkey_open(&z, path, err);
        if (rc < 0) return rc;
        rc = zk_vk_from_zkey(vk, &z, err);
        zk_zkey_close(&z);
        if (rc < 0) prefix_path(err, path);
        return rc;
    }
#ifdef ZK_HAVE_JSONC
    int rc = zk_vk_from_json(vk, path, err);
    if (rc == -EINVAL && err && strstr(err->msg, "not JSON (contains a NUL byte)"))
        (void)zk_fail(err, EINVAL, "%.300s: neither a .zkey (no \"zkey\" magic) nor a verification key in JSON", path);
    return rc;
#else
    (void)vk;
    return zk_fail(err, ENOTSUP, "%.300s: not a .zkey, and this build has no JSON support (json-c)", path);
#endif
}

/* ---- proof and public signals ---- */

#ifdef ZK_HAVE_JSONC
static int proof_from_root(zk_proof_t *p, const zk_curve_t *curve, struct json_object *root, const char *path,
                           zk_err_t *err) {
    struct json_object *v;
    int rc;
    zk_proof_t pf;
    memset(&pf, 0, sizeof(pf));
    if (!json_object_is_type(root, json_type_object)) {
        rc = zk_fail(err, EINVAL, "%s: expected a JSON object (a proof)", path);
        goto out;
    }
    if ((rc = check_protocol(root, path, false, err)) < 0) goto out;
    if (json_object_object_get_ex(root, "curve", &v)) {
        const zk_curve_t *c =
            json_object_is_type(v, json_type_string) ? zk_curve_by_name(json_object_get_string(v)) : NULL;
        if (c != curve) {
            char t[64] = "?";
            if (json_object_is_type(v, json_type_string))
                zk_printable(json_object_get_string(v), (size_t)json_object_get_string_len(v), t, sizeof(t));
            rc = zk_fail(err, EINVAL, "%s: curve: the proof is for \"%s\", the key for \"%s\"", path, t, curve->name);
            goto out;
        }
    }
    if ((rc = parse_g1(pf.a, curve, json_object_object_get_ex(root, "pi_a", &v) ? v : NULL, path, "pi_a", true, err)) < 0)
        goto out;
    if ((rc = parse_g2(pf.b, curve, json_object_object_get_ex(root, "pi_b", &v) ? v : NULL, path, "pi_b", true, err)) < 0)
        goto out;
    if ((rc = parse_g1(pf.c, curve, json_object_object_get_ex(root, "pi_c", &v) ? v : NULL, path, "pi_c", true, err)) < 0)
        goto out;
    *p = pf;
out:
    return rc;
}

int zk_proof_from_json(zk_proof_t *p, const zk_curve_t *curve, const char *path, zk_err_t *err) {
    struct json_object *root = NULL;
    int rc = json_load(&root, path, err);
    if (rc < 0) return rc;
    rc = proof_from_root(p, curve, root, path, err);
    json_object_put(root);
    return rc;
}

int zk_proof_parse_json(zk_proof_t *p, const zk_curve_t *curve, const char *name, const char *text, size_t len,
                        zk_err_t *err) {
    struct json_object *root = NULL;
    int rc = json_parse(&root, name, text, len, err);
    if (rc < 0) return rc;
    rc = proof_from_root(p, curve, root, name, err);
    json_object_put(root);
    return rc;
}

static int public_from_root(uint8_t **ret_pub, uint32_t *ret_n, const zk_curve_t *curve, struct json_object *root,
                            const char *path, zk_err_t *err) {
    int rc = 0;
    uint8_t *pub = NULL;
    if (!json_object_is_type(root, json_type_array)) {
        rc = zk_fail(err, EINVAL, "%s: expected a JSON array of decimal strings", path);
        goto out;
    }
    size_t n = json_object_array_length(root);
    if (n > (1u << 24)) {
        rc = zk_fail(err, EINVAL, "%s: too many public signals (%zu)", path, n);
        goto out;
    }
    if (n) {
        pub = malloc(n * 32);
        if (!pub) {
            rc = zk_fail(err, ENOMEM, "%s: out of memory", path);
            goto out;
        }
    }
    for (size_t i = 0; i < n; i++) {
        char key[32];
        snprintf(key, sizeof(key), "[%zu]", i);
        uint64_t l[4];
        if ((rc = parse_dec(l, 4, (const uint64_t *)(const void *)curve->r, "r", json_object_array_get_idx(root, i),
                            path, key, err)) < 0)
            goto out;
        memcpy(pub + 32 * i, l, 32);
    }
    *ret_pub = pub;
    *ret_n = (uint32_t)n;
    pub = NULL;
out:
    free(pub);
    return rc;
}

int zk_public_from_json(uint8_t **ret_pub, uint32_t *ret_n, const zk_curve_t *curve, const char *path, zk_err_t *err) {
    struct json_object *root = NULL;
    int rc = json_load(&root, path, err);
    if (rc < 0) return rc;
    rc = public_from_root(ret_pub, ret_n, curve, root, path, err);
    json_object_put(root);
    return rc;
}

int zk_public_parse_json(uint8_t **ret_pub, uint32_t *ret_n, const zk_curve_t *curve, const char *name,
                         const char *text, size_t len, zk_err_t *err) {
    struct json_object *root = NULL;
    int rc = json_parse(&root, name, text, len, err);
    if (rc < 0) return rc;
    rc = public_from_root(ret_pub, ret_n, curve, root, name, err);
    json_object_put(root);
    return rc;
}
#endif /* ZK_HAVE_JSONC */

int zk_verify_proof(const zk_vk_t *vk, const zk_proof_t *p, const uint8_t *pub, uint32_t n_pub, zk_err_t *err) {
    if (!vk->pre) return zk_fail(err, EINVAL, "verifying key not loaded");
    if (n_pub != vk->n_pub)
        return zk_fail(err, EINVAL, "wrong number of public signals: %u given, the key expects %u", n_pub, vk->n_pub);
    const uint64_t *r = (const uint64_t *)(const void *)vk->curve->r;
    for (uint32_t i = 0; i < n_pub; i++) {
        uint64_t l[4];
        memcpy(l, pub + 32 * (size_t)i, 32);
        if (!zk_bigint_lt(l, r, 4)) return zk_fail(err, EINVAL, "public signal %u is not below r", i);
    }
    /* coordinates must be reduced for the field code (a zk_proof_t may come from anywhere) */
    const uint64_t *q = (const uint64_t *)(const void *)vk->curve->q;
    int n = (int)vk->curve->n8q / 8;
    const uint8_t *pts[3] = {p->a, p->b, p->c};
    const unsigned nfe[3] = {2, 4, 2};
    static const char *names[3] = {"pi_a", "pi_b", "pi_c"};
    for (int i = 0; i < 3; i++)
        for (unsigned j = 0; j < nfe[i]; j++) {
            uint64_t l[6];
            memcpy(l, pts[i] + j * vk->curve->n8q, vk->curve->n8q);
            if (!zk_bigint_lt(l, q, n)) return zk_fail(err, EINVAL, "proof point %s: coordinate not below q", names[i]);
        }
    if (vk->curve->id == ZK_CURVE_BN128) return bn_verify(vk, p, pub, n_pub, err);
    return bls_verify(vk, p, pub, n_pub, err);
}
