/* zkpipe's own C API (include/zkpipe/zkpipe.h) on lib/core.c and witgen/ (docs/library.md). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core.h"
#include "include/zkpipe/zkpipe.h"
#include "zk/field.h"

#define API __attribute__((visibility("default")))

struct zkpipe_key {
    lib_key_t *k;
};

struct zkpipe_proof {
    const zk_curve_t *curve;
    zk_proof_t p;
    char *proof_json, *public_json;
    uint32_t n_public;
    uint8_t *pub; /* n_public x 32 bytes, big-endian */
};

static int put(zkpipe_error *err, const zk_err_t *e, int rc) {
    if (err) snprintf(err->message, sizeof err->message, "%s", e->msg[0] ? e->msg : "failed");
    return rc;
}

static int key_wrap(zkpipe_key **ret, lib_key_t *k, zk_err_t *e) {
    zkpipe_key *key = malloc(sizeof *key);
    if (!key) {
        lib_key_free(k);
        return zk_fail(e, ENOMEM, "out of memory");
    }
    key->k = k;
    *ret = key;
    return 0;
}

API int zkpipe_key_load_file(zkpipe_key **ret, const char *zkey_path, zkpipe_error *err) {
    zk_err_t e = {{0}};
    lib_key_t *k;
    if (!ret) return put(err, &e, zk_fail(&e, EINVAL, "ret is NULL"));
    int rc = lib_key_open_file(&k, zkey_path, &e);
    if (rc == 0) rc = key_wrap(ret, k, &e);
    return rc < 0 ? put(err, &e, rc) : 0;
}

API int zkpipe_key_load_buffer(zkpipe_key **ret, const void *zkey, size_t size, zkpipe_error *err) {
    zk_err_t e = {{0}};
    lib_key_t *k;
    if (!ret) return put(err, &e, zk_fail(&e, EINVAL, "ret is NULL"));
    int rc = lib_key_open_buffer(&k, zkey, size, &e);
    if (rc == 0) rc = key_wrap(ret, k, &e);
    return rc < 0 ? put(err, &e, rc) : 0;
}

API void zkpipe_key_free(zkpipe_key *key) {
    if (!key) return;
    lib_key_free(key->k);
    free(key);
}

API void zkpipe_key_get_info(const zkpipe_key *key, zkpipe_key_info *info) {
    const zk_zkey_t *z = &key->k->z;
    *info = (zkpipe_key_info){.curve = z->curve->name,
                              .n_vars = z->n_vars,
                              .n_public = z->n_pub,
                              .domain_size = z->domain_size,
                              .coord_bytes = z->curve->n8q};
}

/* A Montgomery base-field coordinate (the zkey's layout) as big-endian standard-form bytes. */
static void coord_be(const zk_curve_t *c, const uint8_t *mont, uint8_t *out) {
    uint64_t l[6];
    if (c->id == ZK_CURVE_BN128) {
        bn_fq_t x;
        memcpy(x.l, mont, sizeof x.l);
        bn_fq_from_mont(&x, &x);
        memcpy(l, x.l, sizeof x.l);
    } else {
        bls_fq_t x;
        memcpy(x.l, mont, sizeof x.l);
        bls_fq_from_mont(&x, &x);
        memcpy(l, x.l, sizeof x.l);
    }
    const uint8_t *b = (const uint8_t *)l;
    for (unsigned i = 0; i < c->n8q; i++) out[i] = b[c->n8q - 1 - i];
}

static bool is_zero(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i]) return false;
    return true;
}

API int zkpipe_prove(const zkpipe_key *key, const void *wtns, size_t wtns_size, zkpipe_proof **ret,
                     zkpipe_error *err) {
    zk_err_t e = {{0}};
    if (!key || !ret) return put(err, &e, zk_fail(&e, EINVAL, "the %s is NULL", !key ? "key" : "ret pointer"));
    const lib_key_t *k = key->k;
    zk_wtns_t w;
    int rc = lib_witness(k, &w, wtns, wtns_size, NULL, &e);
    if (rc < 0) return put(err, &e, rc);
    zkpipe_proof *p = calloc(1, sizeof *p);
    uint32_t n = k->z.n_pub;
    if (!p || !(p->pub = malloc(32 * (size_t)n + 1))) {
        rc = zk_fail(&e, ENOMEM, "out of memory");
        goto fail;
    }
    if ((rc = lib_prove(k, &w, &p->p, &e)) < 0) goto fail;
    p->curve = k->z.curve;
    p->n_public = n;
    for (uint32_t i = 0; i < n; i++)
        for (int j = 0; j < 32; j++) p->pub[32 * (size_t)i + j] = w.values[32 * ((size_t)i + 1) + 31 - j];
    zk_proof_json(p->curve, &p->p, &p->proof_json);
    zk_public_json(w.values, n, &p->public_json);
    zk_wtns_free(&w);
    *ret = p;
    return 0;
fail:
    zk_wtns_free(&w);
    zkpipe_proof_free(p);
    return put(err, &e, rc);
}

API void zkpipe_proof_free(zkpipe_proof *p) {
    if (!p) return;
    free(p->proof_json);
    free(p->public_json);
    free(p->pub);
    free(p);
}

API const char *zkpipe_proof_json(const zkpipe_proof *p) { return p->proof_json; }
API const char *zkpipe_public_json(const zkpipe_proof *p) { return p->public_json; }
API uint32_t zkpipe_proof_n_public(const zkpipe_proof *p) { return p->n_public; }
API const uint8_t *zkpipe_proof_public(const zkpipe_proof *p) { return p->pub; }

API void zkpipe_proof_points(const zkpipe_proof *p, zkpipe_points *out) {
    const zk_curve_t *c = p->curve;
    const unsigned q = c->n8q;
    memset(out, 0, sizeof *out);
    out->coord_bytes = q;
    if (!is_zero(p->p.a, 2 * q))
        for (int i = 0; i < 2; i++) coord_be(c, p->p.a + i * q, out->a[i]);
    if (!is_zero(p->p.b, 4 * q))
        for (int i = 0; i < 4; i++) coord_be(c, p->p.b + i * q, out->b[i / 2][i % 2]);
    if (!is_zero(p->p.c, 2 * q))
        for (int i = 0; i < 2; i++) coord_be(c, p->p.c + i * q, out->c[i]);
}

API int zkpipe_verify(const zkpipe_key *key, const char *proof_json, const char *public_json, zkpipe_error *err) {
    zk_err_t e = {{0}};
    if (!key) return put(err, &e, zk_fail(&e, EINVAL, "the key is NULL"));
    int rc = lib_verify_with(&key->k->vk, proof_json, public_json, &e);
    return rc < 0 ? put(err, &e, rc) : 0;
}

API int zkpipe_verify_json(const char *vk_json, const char *proof_json, const char *public_json, zkpipe_error *err) {
    zk_err_t e = {{0}};
    int rc = lib_verify_json(proof_json, public_json, vk_json, &e);
    return rc < 0 ? put(err, &e, rc) : 0;
}

API void zkpipe_free(void *p) { free(p); }
