/* rapidsnark's prover API (include/rapidsnark/prover.h) on zkpipe's prover: the same calls, codes,
 * size protocol and JSON text (compact, keys in order, as rapidsnark's library writes it), for bn128
 * and bls12381 keys, with every proof verified before it is returned (docs/library.md). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "include/rapidsnark/prover.h"
#include "zk/field.h"
#include "zk/json_out.h"

#define API __attribute__((visibility("default")))

/* The proof text without coordinates (95 bytes): eight coordinates of at most 77 (bn128) or 115
 * (bls12381) decimal digits go into it. */
#define PROOF_FRAME 95
/* rapidsnark's minimum sizes */
#define PROOF_MIN_SIZE 810ull
#define PUBLIC_PER_SIGNAL 82ull

static void put_error(char *msg, unsigned long long cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void put_error(char *msg, unsigned long long cap, const char *fmt, ...) {
    if (!msg || cap == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, cap > 1u << 30 ? 1u << 30 : (size_t)cap, fmt, ap);
    va_end(ap);
}

static int fail(const zk_err_t *err, int code, char *msg, unsigned long long cap) {
    put_error(msg, cap, "%s", err->msg[0] ? err->msg : "failed");
    return code;
}

/* The bytes (with the NUL) a proof of this curve can take at most. */
static unsigned long long proof_bound(const zk_curve_t *c) {
    return PROOF_FRAME + 8 * (c->id == ZK_CURVE_BN128 ? 77 : 115) + 1;
}

/* rapidsnark's proof text: {"pi_a":[x,y,"1"],"pi_b":[[x0,x1],[y0,y1],["1","0"]],"pi_c":[x,y,"1"],
 * "protocol":"groth16"}, infinity as snarkjs writes it. out holds proof_bound() bytes. */
static size_t proof_text(const zk_curve_t *c, const zk_proof_t *p, char *out, size_t cap) {
    char d[8][130];
    const uint8_t *pts[3] = {p->a, p->b, p->c};
    bool inf[3];
    for (int i = 0; i < 3; i++) {
        size_t len = (i == 1 ? 4 : 2) * c->n8q;
        inf[i] = true;
        for (size_t j = 0; j < len; j++) inf[i] &= pts[i][j] == 0;
    }
    for (int i = 0; i < 2; i++) zk_json_dec(c, p->a + i * c->n8q, d[i]);
    for (int i = 0; i < 4; i++) zk_json_dec(c, p->b + i * c->n8q, d[2 + i]);
    for (int i = 0; i < 2; i++) zk_json_dec(c, p->c + i * c->n8q, d[6 + i]);
    char g1a[300], g2[600], g1c[300];
    if (inf[0]) snprintf(g1a, sizeof g1a, "[\"0\",\"1\",\"0\"]");
    else snprintf(g1a, sizeof g1a, "[\"%s\",\"%s\",\"1\"]", d[0], d[1]);
    if (inf[1]) snprintf(g2, sizeof g2, "[[\"0\",\"0\"],[\"1\",\"0\"],[\"0\",\"0\"]]");
    else snprintf(g2, sizeof g2, "[[\"%s\",\"%s\"],[\"%s\",\"%s\"],[\"1\",\"0\"]]", d[2], d[3], d[4], d[5]);
    if (inf[2]) snprintf(g1c, sizeof g1c, "[\"0\",\"1\",\"0\"]");
    else snprintf(g1c, sizeof g1c, "[\"%s\",\"%s\",\"1\"]", d[6], d[7]);
    int n = snprintf(out, cap, "{\"pi_a\":%s,\"pi_b\":%s,\"pi_c\":%s,\"protocol\":\"groth16\"}", g1a, g2, g1c);
    return n < 0 ? 0 : (size_t)n;
}

/* ["s1","s2",...] (w[1..nPub] in decimal), malloc'd; "[]" without public signals. */
static char *public_text(const zk_wtns_t *w, uint32_t n_pub, size_t *ret_len) {
    char *t = malloc(PUBLIC_PER_SIGNAL * n_pub + 4), *p = t;
    if (!t) return NULL;
    *p++ = '[';
    for (uint32_t i = 1; i <= n_pub; i++) {
        uint64_t v[4];
        memcpy(v, w->values + 32 * (size_t)i, 32);
        if (i > 1) *p++ = ',';
        *p++ = '"';
        p += zk_bigint_to_dec(v, 4, p);
        *p++ = '"';
    }
    *p++ = ']';
    *p = 0;
    *ret_len = (size_t)(p - t);
    return t;
}

API int groth16_public_size_for_zkey_buf(const void *zkey_buffer, unsigned long long zkey_size,
                                         unsigned long long *public_size, char *error_msg,
                                         unsigned long long error_msg_maxsize) {
    zk_err_t err = {{0}};
    zk_zkey_t z;
    if (!public_size) return put_error(error_msg, error_msg_maxsize, "public_size is NULL"), PROVER_ERROR;
    if (!zkey_buffer) return put_error(error_msg, error_msg_maxsize, "the zkey buffer is NULL"), PROVER_ERROR;
    /* the full check of the key, on the caller's bytes (an unaligned section is copied for the time of it) */
    if (zk_zkey_parse(&z, "zkey buffer", zkey_buffer, (size_t)zkey_size, &err) < 0)
        return fail(&err, PROVER_ERROR, error_msg, error_msg_maxsize);
    *public_size = PUBLIC_PER_SIGNAL * z.n_pub + 4;
    zk_zkey_close(&z);
    return PROVER_OK;
}

API int groth16_public_size_for_zkey_file(const char *zkey_fname, unsigned long long *public_size, char *error_msg,
                                          unsigned long long error_msg_maxsize) {
    zk_err_t err = {{0}};
    zk_zkey_t z;
    if (!public_size) return put_error(error_msg, error_msg_maxsize, "public_size is NULL"), PROVER_ERROR;
    if (!zkey_fname) return put_error(error_msg, error_msg_maxsize, "the zkey path is NULL"), PROVER_ERROR;
    if (zk_zkey_open(&z, zkey_fname, &err) < 0) return fail(&err, PROVER_ERROR, error_msg, error_msg_maxsize);
    *public_size = PUBLIC_PER_SIGNAL * z.n_pub + 4;
    zk_zkey_close(&z);
    return PROVER_OK;
}

API void groth16_proof_size(unsigned long long *proof_size) {
    if (proof_size) *proof_size = PROOF_MIN_SIZE;
}

API int groth16_prover_create(void **prover_object, const void *zkey_buffer, unsigned long long zkey_size,
                              char *error_msg, unsigned long long error_msg_maxsize) {
    zk_err_t err = {{0}};
    if (!prover_object) return put_error(error_msg, error_msg_maxsize, "prover_object is NULL"), PROVER_ERROR;
    *prover_object = NULL;
    lib_key_t *k;
    if (lib_key_open_buffer(&k, zkey_buffer, (size_t)zkey_size, &err) < 0)
        return fail(&err, PROVER_ERROR, error_msg, error_msg_maxsize);
    *prover_object = k;
    return PROVER_OK;
}

API int groth16_prover_create_zkey_file(void **prover_object, const char *zkey_file_path, char *error_msg,
                                        unsigned long long error_msg_maxsize) {
    zk_err_t err = {{0}};
    if (!prover_object) return put_error(error_msg, error_msg_maxsize, "prover_object is NULL"), PROVER_ERROR;
    *prover_object = NULL;
    lib_key_t *k;
    if (lib_key_open_file(&k, zkey_file_path, &err) < 0) return fail(&err, PROVER_ERROR, error_msg, error_msg_maxsize);
    *prover_object = k;
    return PROVER_OK;
}

API int groth16_prover_prove(void *prover_object, const void *wtns_buffer, unsigned long long wtns_size,
                             char *proof_buffer, unsigned long long *proof_size, char *public_buffer,
                             unsigned long long *public_size, char *error_msg, unsigned long long error_msg_maxsize) {
    static const char *const null_what[6] = {"prover_object", "wtns_buffer", "proof_buffer",
                                             "proof_size",    "public_buffer", "public_size"};
    const void *args[6] = {prover_object, wtns_buffer, proof_buffer, proof_size, public_buffer, public_size};
    for (int i = 0; i < 6; i++)
        if (!args[i]) return put_error(error_msg, error_msg_maxsize, "%s is NULL", null_what[i]), PROVER_ERROR;
    const lib_key_t *k = prover_object;
    zk_err_t err = {{0}};
    zk_wtns_t w;
    int wrong_length;
    if (lib_witness(k, &w, wtns_buffer, (size_t)wtns_size, &wrong_length, &err) < 0)
        return fail(&err, wrong_length ? PROVER_INVALID_WITNESS_LENGTH : PROVER_ERROR, error_msg, error_msg_maxsize);
    int rc = PROVER_ERROR;
    size_t pub_len;
    char *pub = public_text(&w, k->z.n_pub, &pub_len);
    if (!pub) {
        zk_fail(&err, ENOMEM, "out of memory for %u public signals", k->z.n_pub);
        goto out;
    }
    /* sizes first: a short buffer is answered before anything is proven, with sizes that suffice */
    unsigned long long need_proof = proof_bound(k->z.curve), need_pub = pub_len + 1;
    if (*proof_size < need_proof || *public_size < need_pub) {
        put_error(error_msg, error_msg_maxsize,
                  "buffers too short: the proof needs %llu bytes (%llu given), the public signals %llu (%llu given)",
                  need_proof, *proof_size, need_pub, *public_size);
        *proof_size = need_proof;
        *public_size = need_pub;
        rc = PROVER_ERROR_SHORT_BUFFER;
        goto out;
    }
    zk_proof_t proof;
    if (lib_prove(k, &w, &proof, &err) < 0) goto out;
    *proof_size = proof_text(k->z.curve, &proof, proof_buffer, (size_t)need_proof);
    memcpy(public_buffer, pub, pub_len + 1);
    *public_size = pub_len;
    rc = PROVER_OK;
out:
    if (rc == PROVER_ERROR) fail(&err, rc, error_msg, error_msg_maxsize);
    free(pub);
    zk_wtns_free(&w);
    return rc;
}

API void groth16_prover_destroy(void *prover_object) { lib_key_free(prover_object); }

API int groth16_prover(const void *zkey_buffer, unsigned long long zkey_size, const void *wtns_buffer,
                       unsigned long long wtns_size, char *proof_buffer, unsigned long long *proof_size,
                       char *public_buffer, unsigned long long *public_size, char *error_msg,
                       unsigned long long error_msg_maxsize) {
    void *k;
    int rc = groth16_prover_create(&k, zkey_buffer, zkey_size, error_msg, error_msg_maxsize);
    if (rc != PROVER_OK) return rc;
    rc = groth16_prover_prove(k, wtns_buffer, wtns_size, proof_buffer, proof_size, public_buffer, public_size,
                              error_msg, error_msg_maxsize);
    groth16_prover_destroy(k);
    return rc;
}

API int groth16_prover_zkey_file(const char *zkey_file_path, const void *wtns_buffer, unsigned long long wtns_size,
                                 char *proof_buffer, unsigned long long *proof_size, char *public_buffer,
                                 unsigned long long *public_size, char *error_msg,
                                 unsigned long long error_msg_maxsize) {
    void *k;
    int rc = groth16_prover_create_zkey_file(&k, zkey_file_path, error_msg, error_msg_maxsize);
    if (rc != PROVER_OK) return rc;
    rc = groth16_prover_prove(k, wtns_buffer, wtns_size, proof_buffer, proof_size, public_buffer, public_size,
                              error_msg, error_msg_maxsize);
    groth16_prover_destroy(k);
    return rc;
}
