/* The prover's stages against the reference vectors of an independent prover
 * (tests/data/vectors/<curve>_mc_vectors.json, computed by groth16_ref.py from the same zkey and wtns):
 * roots, buffA/B/C, odd-coset values, P, and the five raw MSM results; then a full proof is
 * checked to be deterministic for r = s = 0 and different for fresh r, s. */
#include <json-c/json.h>
#include <stdlib.h>

#include "test.h"
#include "zk/field.h"
#include "zk/groth16.h"
#include "zk/ntt.h"
#include "zk/wtns.h"
#include "zk/zkey.h"

static json_object *vec_get(json_object *root, const char *prefix) {
    json_object_object_foreach(root, key, val) {
        if (!strncmp(key, prefix, strlen(prefix))) return val;
    }
    return NULL;
}

/* Standard-form decimal -> 32-byte LE limbs */
static int dec32(const char *s, uint64_t out[4]) { return zk_bigint_from_dec(s, out, 4); }

/* Montgomery Fr -> standard limbs */
static void fr_std(const zk_curve_t *c, const void *mont, uint64_t out[4]) {
    if (c->id == ZK_CURVE_BN128) {
        bn_fr_t x;
        memcpy(x.l, mont, 32);
        bn_fr_from_mont(&x, &x);
        memcpy(out, x.l, 32);
    } else {
        bls_fr_t x;
        memcpy(x.l, mont, 32);
        bls_fr_from_mont(&x, &x);
        memcpy(out, x.l, 32);
    }
}

static int check_fr_list(const zk_curve_t *c, json_object *arr, const uint8_t *vals, bool mont, const char *what) {
    CHECK_MSG(arr && json_object_is_type(arr, json_type_array), "vector %s missing", what);
    for (size_t i = 0; i < json_object_array_length(arr); i++) {
        uint64_t want[4], got[4];
        CHECK(dec32(json_object_get_string(json_object_array_get_idx(arr, i)), want) == 0);
        if (mont)
            fr_std(c, vals + 32 * i, got);
        else
            memcpy(got, vals + 32 * i, 32);
        CHECK_MSG(!memcmp(want, got, 32), "%s[%zu] differs", what, i);
    }
    return 0;
}

/* Affine Montgomery coordinate(s) vs decimal strings. */
static int check_coord(const zk_curve_t *c, const uint8_t *mont, const char *dec, const char *what) {
    uint64_t want[6] = {0}, got[6] = {0};
    unsigned nl = c->n8q / 8;
    CHECK(zk_bigint_from_dec(dec, want, (int)nl) == 0);
    if (c->id == ZK_CURVE_BN128) {
        bn_fq_t x;
        memcpy(x.l, mont, 32);
        bn_fq_from_mont(&x, &x);
        memcpy(got, x.l, 32);
    } else {
        bls_fq_t x;
        memcpy(x.l, mont, 48);
        bls_fq_from_mont(&x, &x);
        memcpy(got, x.l, 48);
    }
    CHECK_MSG(!memcmp(want, got, 8 * nl), "%s differs", what);
    return 0;
}

static int check_g1(const zk_curve_t *c, json_object *arr, const uint8_t *p, const char *what) {
    CHECK_MSG(arr != NULL, "vector %s missing", what);
    CHECK(check_coord(c, p, json_object_get_string(json_object_array_get_idx(arr, 0)), what) == 0);
    CHECK(check_coord(c, p + c->n8q, json_object_get_string(json_object_array_get_idx(arr, 1)), what) == 0);
    return 0;
}

static int check_g2(const zk_curve_t *c, json_object *arr, const uint8_t *p, const char *what) {
    CHECK_MSG(arr != NULL, "vector %s missing", what);
    for (int k = 0; k < 2; k++) {
        json_object *xy = json_object_array_get_idx(arr, k);
        for (int j = 0; j < 2; j++)
            CHECK(check_coord(c, p + (2 * k + j) * c->n8q, json_object_get_string(json_object_array_get_idx(xy, j)),
                              what) == 0);
    }
    return 0;
}

static int run_vectors(const char *stem) {
    char zp[256], wp[256], vp[256];
    snprintf(zp, sizeof zp, "vectors/%s.zkey", stem);
    snprintf(wp, sizeof wp, "vectors/%s.wtns", stem);
    snprintf(vp, sizeof vp, "vectors/%s_vectors.json", stem);
    zk_err_t err = {{0}};
    zk_zkey_t z;
    zk_wtns_t w;
    CHECK_MSG(zk_zkey_open(&z, test_data(zp), &err) == 0, "%s", err.msg);
    CHECK_MSG(zk_wtns_load(&w, test_data(wp), &err) == 0, "%s", err.msg);
    json_object *v = json_object_from_file(test_data(vp));
    CHECK(v != NULL);
    const zk_curve_t *c = z.curve;
    size_t n = z.domain_size;

    uint8_t root[32];
    uint64_t got[4], want[4];
    zk_fr_root_of_unity(c, z.log_domain, root);
    fr_std(c, root, got);
    CHECK(dec32(json_object_get_string(vec_get(v, "omega_n")), want) == 0);
    CHECK(!memcmp(got, want, 32));
    zk_fr_root_of_unity(c, z.log_domain + 1, root);
    fr_std(c, root, got);
    CHECK(dec32(json_object_get_string(vec_get(v, "omega_2n_inc")), want) == 0);
    CHECK(!memcmp(got, want, 32));

    uint8_t *abc = aligned_alloc(64, zk_abc_size(&z));
    uint8_t *scratch = aligned_alloc(64, zk_core_scratch_size(&z));
    uint8_t *tmp = aligned_alloc(64, n * 32);
    uint8_t *a = abc, *b = a + 32 * n, *cc = b + 32 * n;
    CHECK(zk_synth(&z, w.values, a, b, cc, 2) == 0);
    CHECK(check_fr_list(c, vec_get(v, "buffA"), a, true, "buffA") == 0);
    CHECK(check_fr_list(c, vec_get(v, "buffB"), b, true, "buffB") == 0);
    CHECK(check_fr_list(c, vec_get(v, "buffC"), cc, true, "buffC") == 0);
    const char *names[3] = {"A_odd", "B_odd", "C_odd"};
    for (int k = 0; k < 3; k++) {
        memcpy(tmp, abc + 32 * n * k, 32 * n);
        CHECK(zk_fr_to_odd_coset(c, tmp, z.log_domain, 2) == 0);
        CHECK(check_fr_list(c, vec_get(v, names[k]), tmp, true, names[k]) == 0);
    }

    zk_raw_t raw;
    zk_core_times_t t;
    memcpy(tmp, abc, 32 * n); /* the core must leave its inputs alone */
    CHECK(zk_prove_core(&z, w.values, a, b, cc, scratch, &raw, &t, 2) == 0);
    CHECK(!memcmp(tmp, abc, 32 * n));
    CHECK(check_fr_list(c, vec_get(v, "P["), scratch, false, "P") == 0);
    CHECK(check_g1(c, vec_get(v, "msm_A"), raw.a, "msm_A") == 0);
    CHECK(check_g1(c, vec_get(v, "msm_B1"), raw.b1, "msm_B1") == 0);
    CHECK(check_g2(c, vec_get(v, "msm_B2"), raw.b2, "msm_B2") == 0);
    CHECK(check_g1(c, vec_get(v, "msm_C"), raw.c, "msm_C") == 0);
    CHECK(check_g1(c, vec_get(v, "msm_H"), raw.h, "msm_H") == 0);
    /* the in-place core (the one-shot prover's): the same points, P in the first domain of abc */
    {
        zk_raw_t raw2;
        void *sc2 = aligned_alloc(64, (zk_core_inplace_scratch_size(&z) + 63) & ~(size_t)63);
        uint8_t *abc2 = aligned_alloc(64, 96 * n);
        memcpy(abc2, abc, 96 * n);
        CHECK(zk_prove_core_inplace(&z, w.values, abc2, sc2, &raw2, NULL, 2) == 0);
        CHECK(!memcmp(&raw2, &raw, sizeof raw));
        CHECK(check_fr_list(c, vec_get(v, "P["), abc2, false, "P (in place)") == 0);
        free(abc2);
        free(sc2);
    }

    /* randomisation: r = s = 0 is deterministic; fresh r, s give another proof */
    uint8_t zero[32] = {0}, r[32], s[32];
    zk_proof_t p0, p1, p2;
    CHECK(zk_finalize(&z, &raw, zero, zero, &p0) == 0);
    CHECK(zk_finalize(&z, &raw, zero, zero, &p1) == 0);
    CHECK(!memcmp(&p0, &p1, sizeof p0));
    CHECK(zk_random_rs(c, r, s) == 0);
    CHECK(memcmp(r, s, 32) != 0);
    CHECK(zk_finalize(&z, &raw, r, s, &p2) == 0);
    CHECK(memcmp(p0.a, p2.a, sizeof p0.a) != 0);

    char *pub;
    CHECK(zk_public_json(w.values, z.n_pub, &pub) == 0);
    char pubpath[256];
    snprintf(pubpath, sizeof pubpath, "vectors/%s_public.json", stem);
    FILE *f = fopen(test_data(pubpath), "rb");
    CHECK(f != NULL);
    char ref[4096] = {0};
    size_t len = fread(ref, 1, sizeof ref - 1, f);
    fclose(f);
    CHECK(len == strlen(pub) && !memcmp(ref, pub, len)); /* byte-identical to snarkjs */
    free(pub);

    json_object_put(v);
    free(abc);
    free(scratch);
    free(tmp);
    zk_wtns_free(&w);
    zk_zkey_close(&z);
    return 0;
}

TEST(vectors_bn128) { return run_vectors("bn128_mc"); }
TEST(vectors_bls12381) { return run_vectors("bls12381_mc"); }

TEST(roots_match_spec) {
    /* formats.md §8: four of the w[k] listed there for each curve, the largest (w[28], w[32]) included */
    static const char *bn[][2] = {
        {"2", "0x30644e72e131a029048b6e193fd841045cea24f6fd736bec231204708f703636"},
        {"10", "0x06fd19c17017a420ebbebc2bb08771e339ba79c0a8d2d7ab11f995e1bc2e5912"},
        {"21", "0x1ded8980ae2bdd1a4222150e8598fc8c58f50577ca5a5ce3b2c87885fcd0b523"},
        {"28", "0x2a3c09f0a58a7e8500e0a7eb8ef62abc402d111e41112ed49bd61b6e725b19f0"},
    };
    static const char *bls[][2] = {
        {"2", "0x00000000000000008d51ccce760304d0ec030002760300000001000000000000"},
        {"11", "0x43527a8bca252472eb674a1a620890d7a534af14b61e0abe74a1f6718c130477"},
        {"20", "0x3436287f5f686d91556c35f6537d6971870c46fac2f0fcbd20b53cbe41144dea"},
        {"32", "0x0212d79e5b416b6f0fd56dc8d168d6c0c4024ff270b3e0941b788f500b912f1f"},
    };
    for (int curve = 0; curve < 2; curve++) {
        for (int i = 0; i < 4; i++) {
            const char *k = curve ? bls[i][0] : bn[i][0], *hex = curve ? bls[i][1] : bn[i][1];
            const zk_curve_t *c = curve ? &zk_curve_bls12381 : &zk_curve_bn128;
            uint8_t root[32];
            uint64_t got[4], want[4] = {0};
            zk_fr_root_of_unity(c, (unsigned)atoi(k), root);
            fr_std(c, root, got);
            for (int d = 0; d < 64; d++) {
                char ch = hex[2 + d];
                unsigned v = ch <= '9' ? (unsigned)(ch - '0') : (unsigned)(ch - 'a' + 10);
                int bit = (63 - d) * 4;
                want[bit / 64] |= (uint64_t)v << (bit % 64);
            }
            CHECK_MSG(!memcmp(got, want, 32), "%s w[%s]", c->name, k);
        }
    }
    return 0;
}
