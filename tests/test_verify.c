/* The Groth16 verifier (zk/verify.h) and `zkpipe verify`: every fixture proof verifies (from vk.json
 * and from the .zkey), and every tampering is refused with the right code: a changed coordinate
 * (off the curve: malformed), a point moved along the curve, a changed public signal, A and C
 * swapped, another circuit's key (invalid); points outside the subgroup and malformed JSON (errors
 * that name the key). */
#include <errno.h>
#include <json-c/json.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "zk/pairing.h"
#include "zk/verify.h"

struct fixture {
    const char *dir, *zkey, *proof, *pub, *wtns;
};
static const struct fixture fixtures[] = {
    {"bn128/mulchain", "mulchain.zkey", "proof-1.json", "public-1.json", "witness-1.wtns"},
    {"bn128/mulchain", "mulchain.zkey", "proof-2.json", "public-2.json", "witness-2.wtns"},
    {"bn128/poseidon", "poseidon.zkey", "proof-1.json", "public-1.json", "witness-1.wtns"},
    {"bn128/poseidon", "poseidon.zkey", "proof-2.json", "public-2.json", "witness-2.wtns"},
    {"bn128/poseidon", "poseidon.zkey", "proof-3.json", "public-3.json", "witness-3.wtns"},
    {"bn128/poseidon", "poseidon.zkey", "proof-4.json", "public-4.json", "witness-4.wtns"},
    {"bn128/medium", "medium.zkey", "proof.json", "public.json", "witness.wtns"},
    {"bls12381/mulchain", "mulchain.zkey", "proof-1.json", "public-1.json", "witness-1.wtns"},
    {"bls12381/mulchain", "mulchain.zkey", "proof-2.json", "public-2.json", "witness-2.wtns"},
};
#define N_FIX (sizeof(fixtures) / sizeof(fixtures[0]))

static const char *fpath(const struct fixture *f, const char *name) {
    static char buf[8][1024];
    static int k;
    char *b = buf[k++ % 8];
    snprintf(b, 1024, "%s/%s/%s", TEST_DATA_DIR, f->dir, name);
    return b;
}

/* Everything about one fixture, loaded. */
struct loaded {
    zk_vk_t vk;
    zk_proof_t proof;
    uint8_t *pub;
    uint32_t n_pub;
};

static int load(struct loaded *l, const struct fixture *f, zk_err_t *err) {
    int rc = zk_vk_from_json(&l->vk, fpath(f, "vk.json"), err);
    if (rc < 0) return rc;
    if ((rc = zk_proof_from_json(&l->proof, l->vk.curve, fpath(f, f->proof), err)) < 0) return rc;
    return zk_public_from_json(&l->pub, &l->n_pub, l->vk.curve, fpath(f, f->pub), err);
}

static void unload(struct loaded *l) {
    zk_vk_free(&l->vk);
    free(l->pub);
}

/* Known answer from an independent implementation: snarkjs writes e(alpha1, beta2) into vk.json as
 * vk_alphabeta_12 (Fq12 = Fq6[w]/(w^2 - v), [2][3][2] decimals); our pairing gives the same value. */
TEST(alphabeta_known_answer) {
    static const char *dirs[4] = {"bn128/mulchain", "bn128/poseidon", "bn128/medium", "bls12381/mulchain"};
    for (int d = 0; d < 4; d++) {
        struct fixture f = {dirs[d], NULL, NULL, NULL, NULL};
        zk_err_t err = {{0}};
        zk_vk_t vk;
        CHECK_MSG(zk_vk_from_json(&vk, fpath(&f, "vk.json"), &err) == 0, "%s", err.msg);
        struct json_object *o = json_object_from_file(fpath(&f, "vk.json")), *ab = NULL;
        CHECK(o && json_object_object_get_ex(o, "vk_alphabeta_12", &ab));
        int n = (int)vk.curve->n8q / 8;
        uint64_t v[12][6];
        for (int i = 0; i < 12; i++) {
            struct json_object *e = json_object_array_get_idx(
                json_object_array_get_idx(json_object_array_get_idx(ab, (size_t)i / 6), (size_t)(i / 2) % 3),
                (size_t)i % 2);
            CHECK(e && zk_bigint_from_dec(json_object_get_string(e), v[i], n) == 0);
        }
        /* element order of the struct: c0.c0.c0, c0.c0.c1, c0.c1.c0, ... = the JSON order */
        if (vk.curve->id == ZK_CURVE_BN128) {
            bn_fq12_t want, got;
            bn_fq_t *fe = (bn_fq_t *)(void *)&want;
            for (int i = 0; i < 12; i++) {
                memcpy(fe[i].l, v[i], 32);
                bn_fq_to_mont(&fe[i], &fe[i]);
            }
            bn_g1_aff_t a;
            bn_g2_aff_t b;
            memcpy(&a, vk.alpha1, sizeof(a));
            memcpy(&b, vk.beta2, sizeof(b));
            bn_pairing(&got, &a, &b);
            CHECK_MSG(bn_fq12_eq(&got, &want), "%s", dirs[d]);
        } else {
            bls_fq12_t want, got;
            bls_fq_t *fe = (bls_fq_t *)(void *)&want;
            for (int i = 0; i < 12; i++) {
                memcpy(fe[i].l, v[i], 48);
                bls_fq_to_mont(&fe[i], &fe[i]);
            }
            bls_g1_aff_t a;
            bls_g2_aff_t b;
            memcpy(&a, vk.alpha1, sizeof(a));
            memcpy(&b, vk.beta2, sizeof(b));
            bls_pairing(&got, &a, &b);
            CHECK_MSG(bls_fq12_eq(&got, &want), "%s", dirs[d]);
        }
        json_object_put(o);
        zk_vk_free(&vk);
    }
    return 0;
}

TEST(fixtures_verify) {
    for (size_t i = 0; i < N_FIX; i++) {
        const struct fixture *f = &fixtures[i];
        zk_err_t err = {{0}};
        struct loaded l = {0};
        CHECK_MSG(load(&l, f, &err) == 0, "%s: %s", f->dir, err.msg);
        int rc = zk_verify_proof(&l.vk, &l.proof, l.pub, l.n_pub, &err);
        CHECK_MSG(rc == 0, "%s %s: rc %d: %s", f->dir, f->proof, rc, err.msg);
        /* the key from the zkey is the same key */
        zk_vk_t zv;
        rc = zk_vk_load(&zv, fpath(f, f->zkey), &err);
        CHECK_MSG(rc == 0, "%s: %s", f->zkey, err.msg);
        CHECK(zv.curve == l.vk.curve && zv.n_pub == l.vk.n_pub);
        CHECK(!memcmp(zv.alpha1, l.vk.alpha1, sizeof(zv.alpha1)));
        CHECK(!memcmp(zv.beta2, l.vk.beta2, sizeof(zv.beta2)));
        CHECK(!memcmp(zv.gamma2, l.vk.gamma2, sizeof(zv.gamma2)));
        CHECK(!memcmp(zv.delta2, l.vk.delta2, sizeof(zv.delta2)));
        CHECK(!memcmp(zv.ic, l.vk.ic, (size_t)(zv.n_pub + 1) * zv.curve->g1_size));
        rc = zk_verify_proof(&zv, &l.proof, l.pub, l.n_pub, &err);
        CHECK_MSG(rc == 0, "%s via zkey: %s", f->dir, err.msg);
        zk_vk_free(&zv);
        unload(&l);
    }
    return 0;
}

/* Adds 1 (in the field) to the j-th base-field element of a point's bytes. */
static void bump(const zk_curve_t *c, uint8_t *pt, unsigned j) {
    uint8_t *e = pt + j * c->n8q;
    if (c->id == ZK_CURVE_BN128) {
        bn_fq_t v;
        memcpy(&v, e, 32);
        bn_fq_add(&v, &v, &bn_fq_ONE);
        memcpy(e, &v, 32);
    } else {
        bls_fq_t v;
        memcpy(&v, e, 48);
        bls_fq_add(&v, &v, &bls_fq_ONE);
        memcpy(e, &v, 48);
    }
}

/* Negates a G1 (ng = 2 coordinates) or G2 (ng = 4) point in place: still on the curve, still in the subgroup. */
static void negate(const zk_curve_t *c, uint8_t *pt, unsigned ng) {
    for (unsigned j = ng / 2; j < ng; j++) {
        uint8_t *e = pt + j * c->n8q;
        if (c->id == ZK_CURVE_BN128) {
            bn_fq_t v;
            memcpy(&v, e, 32);
            bn_fq_neg(&v, &v);
            memcpy(e, &v, 32);
        } else {
            bls_fq_t v;
            memcpy(&v, e, 48);
            bls_fq_neg(&v, &v);
            memcpy(e, &v, 48);
        }
    }
}

/* A + G1 generator. */
static void add_gen(const zk_curve_t *c, uint8_t *pt) {
    if (c->id == ZK_CURVE_BN128) {
        bn_g1_aff_t a;
        bn_g1_xyzz_t s;
        memcpy(&a, pt, sizeof(a));
        bn_g1_xyzz_from_aff(&s, &a);
        bn_g1_xyzz_add_aff(&s, &s, &bn_g1_gen);
        bn_g1_xyzz_to_aff(&a, &s);
        memcpy(pt, &a, sizeof(a));
    } else {
        bls_g1_aff_t a;
        bls_g1_xyzz_t s;
        memcpy(&a, pt, sizeof(a));
        bls_g1_xyzz_from_aff(&s, &a);
        bls_g1_xyzz_add_aff(&s, &s, &bls_g1_gen);
        bls_g1_xyzz_to_aff(&a, &s);
        memcpy(pt, &a, sizeof(a));
    }
}

TEST(tamper_points) {
    for (size_t i = 0; i < N_FIX; i++) {
        const struct fixture *f = &fixtures[i];
        zk_err_t err = {{0}};
        struct loaded l = {0};
        CHECK_MSG(load(&l, f, &err) == 0, "%s: %s", f->dir, err.msg);
        const zk_curve_t *c = l.vk.curve;
        /* any one coordinate changed: the point leaves the curve */
        for (unsigned k = 0; k < 8; k++) {
            zk_proof_t p = l.proof;
            if (k < 2)
                bump(c, p.a, k);
            else if (k < 6)
                bump(c, p.b, k - 2);
            else
                bump(c, p.c, k - 6);
            int rc = zk_verify_proof(&l.vk, &p, l.pub, l.n_pub, &err);
            CHECK_MSG(rc == -EINVAL, "%s coordinate %u: rc %d", f->dir, k, rc);
            CHECK_STR_CONTAINS(err.msg, k < 2   ? "pi_a is not on the"
                                        : k < 6 ? "pi_b is not on the"
                                                : "pi_c is not on the");
        }
        /* points moved along the curve, and A and C swapped: well-formed, invalid */
        for (unsigned k = 0; k < 5; k++) {
            zk_proof_t p = l.proof;
            if (k == 0) negate(c, p.a, 2);
            if (k == 1) negate(c, p.b, 4);
            if (k == 2) negate(c, p.c, 2);
            if (k == 3) add_gen(c, p.a);
            if (k == 4) {
                memcpy(p.a, l.proof.c, sizeof(p.a));
                memcpy(p.c, l.proof.a, sizeof(p.c));
            }
            int rc = zk_verify_proof(&l.vk, &p, l.pub, l.n_pub, &err);
            CHECK_MSG(rc == -EBADMSG, "%s on-curve change %u: rc %d", f->dir, k, rc);
            CHECK_STR_CONTAINS(err.msg, "pairing check failed");
        }
        /* a coordinate >= q in a zk_proof_t from elsewhere */
        zk_proof_t p = l.proof;
        memset(p.c, 0xff, c->n8q);
        CHECK_EQ_INT(zk_verify_proof(&l.vk, &p, l.pub, l.n_pub, &err), -EINVAL);
        CHECK_STR_CONTAINS(err.msg, "not below q");
        unload(&l);
    }
    return 0;
}

TEST(tamper_public) {
    for (size_t i = 0; i < N_FIX; i++) {
        const struct fixture *f = &fixtures[i];
        zk_err_t err = {{0}};
        struct loaded l = {0};
        CHECK_MSG(load(&l, f, &err) == 0, "%s: %s", f->dir, err.msg);
        const uint64_t *r = (const uint64_t *)(const void *)l.vk.curve->r;
        uint8_t *pub = malloc(32 * (size_t)l.n_pub);
        for (uint32_t s = 0; s < l.n_pub; s++) {
            /* +1 mod r */
            memcpy(pub, l.pub, 32 * (size_t)l.n_pub);
            uint64_t v[4];
            memcpy(v, pub + 32 * s, 32);
            for (int j = 0; j < 4 && ++v[j] == 0; j++) {
            }
            if (!memcmp(v, r, 32)) memset(v, 0, 32);
            memcpy(pub + 32 * s, v, 32);
            int rc = zk_verify_proof(&l.vk, &l.proof, pub, l.n_pub, &err);
            CHECK_MSG(rc == -EBADMSG, "%s signal %u: rc %d", f->dir, s, rc);
            /* = r: out of range */
            memcpy(pub + 32 * s, r, 32);
            CHECK_EQ_INT(zk_verify_proof(&l.vk, &l.proof, pub, l.n_pub, &err), -EINVAL);
            CHECK_STR_CONTAINS(err.msg, "not below r");
        }
        /* one signal too few */
        CHECK_EQ_INT(zk_verify_proof(&l.vk, &l.proof, l.pub, l.n_pub - 1, &err), -EINVAL);
        CHECK_STR_CONTAINS(err.msg, "wrong number of public signals");
        free(pub);
        unload(&l);
    }
    return 0;
}

/* Each proof against every other circuit's key of its curve: invalid (or a count mismatch). */
TEST(other_circuit_key) {
    int invalid = 0;
    for (size_t i = 0; i < N_FIX; i++)
        for (size_t j = 0; j < N_FIX; j++) {
            const struct fixture *f = &fixtures[i], *g = &fixtures[j];
            if (!strcmp(f->dir, g->dir)) continue;
            zk_err_t err = {{0}};
            struct loaded l = {0};
            CHECK_MSG(load(&l, f, &err) == 0, "%s: %s", f->dir, err.msg);
            zk_vk_t other;
            CHECK_MSG(zk_vk_from_json(&other, fpath(g, "vk.json"), &err) == 0, "%s", err.msg);
            if (other.curve != l.vk.curve) {
                /* a proof file of the other curve is refused when read against this key */
                zk_proof_t p;
                CHECK_EQ_INT(zk_proof_from_json(&p, other.curve, fpath(f, f->proof), &err), -EINVAL);
                CHECK_STR_CONTAINS(err.msg, "curve");
            } else {
                int rc = zk_verify_proof(&other, &l.proof, l.pub, l.n_pub, &err);
                if (other.n_pub == l.n_pub) {
                    CHECK_MSG(rc == -EBADMSG, "%s with %s's key: rc %d", f->dir, g->dir, rc);
                    invalid++;
                } else {
                    CHECK_EQ_INT(rc, -EINVAL);
                }
            }
            zk_vk_free(&other);
            unload(&l);
        }
    CHECK(invalid > 0);
    return 0;
}

/* ---- JSON files ---- */

static char tmpdir[64];
static const char *tmp(const char *name);
static void tmp_cleanup(void) {
    static const char *names[] = {"proof.json", "public.json", "vk.json", "cli.out", "cli.err"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) unlink(tmp(names[i]));
    rmdir(tmpdir);
}
static const char *tmp(const char *name) {
    static char buf[16][256];
    static int k;
    if (!tmpdir[0]) {
        strcpy(tmpdir, "/tmp/zk-test-verify-XXXXXX");
        if (!mkdtemp(tmpdir)) abort();
        atexit(tmp_cleanup);
    }
    char *b = buf[k++ % 16];
    snprintf(b, 256, "%s/%s", tmpdir, name);
    return b;
}
static void write_str(const char *path, const char *s) {
    FILE *f = fopen(path, "w");
    if (!f) abort();
    fputs(s, f);
    fclose(f);
}
static void write_obj(const char *path, struct json_object *o) { write_str(path, json_object_to_json_string(o)); }

/* Runs zkpipe verify; returns the exit code, out/errline get the first line of stdout/stderr. */
static int run_cli(const char *vk, const char *pub, const char *proof, char *out, char *errline) {
    const char *root = getenv("ZKPIPE_BUILD_ROOT");
    char exe[1024];
    snprintf(exe, sizeof(exe), "%s/cli/zkpipe", root);
    const char *o = tmp("cli.out"), *e = tmp("cli.err");
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen(o, "w", stdout) || !freopen(e, "w", stderr)) _exit(99);
        execl(exe, exe, "verify", vk, pub, proof, (char *)NULL);
        _exit(98);
    }
    int st;
    waitpid(pid, &st, 0);
    FILE *f = fopen(o, "r");
    out[0] = errline[0] = 0;
    if (f) {
        if (!fgets(out, 512, f)) out[0] = 0;
        fclose(f);
    }
    f = fopen(e, "r");
    if (f) {
        if (!fgets(errline, 512, f)) errline[0] = 0;
        fclose(f);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* Decimal coordinates of points on the curves outside the subgroups (tests/test_pairing.c). */
static const char *bn_g2_bad[4] = {"5", "1",
                                   "1408319067812452414633879940013592055621582375252427422757364816067320890688",
                                   "16043447076329872375887584556683436513165016484529127304231559706947902103147"};
static const char *bls_g2_bad[4] = {"5", "1",
                                    "2557545240012361364181394415358041394315770726725079182644431181134329138535229804"
                                    "065688344929833524071666981886050",
                                    "1191284053338279295472485777864375003371461652466905874686561372901259727300056415"
                                    "467168829210837294894227043444545"};
static const char *bls_g1_bad[2] = {"5", "20372142105735831704646916116594235172690653296851744215297372342523141881594"
                                         "18646987978679703439991468731867518477"};

static struct json_object *g2_json(const char *const v[4]) {
    struct json_object *a = json_object_new_array();
    for (int i = 0; i < 2; i++) {
        struct json_object *e = json_object_new_array();
        json_object_array_add(e, json_object_new_string(v[2 * i]));
        json_object_array_add(e, json_object_new_string(v[2 * i + 1]));
        json_object_array_add(a, e);
    }
    struct json_object *z = json_object_new_array();
    json_object_array_add(z, json_object_new_string("1"));
    json_object_array_add(z, json_object_new_string("0"));
    json_object_array_add(a, z);
    return a;
}

/* Decimal affine coordinates (nfe of them: 2 for G1, 4 for G2) into the zkey byte layout. */
static void dec_to_mont(const zk_curve_t *c, const char *const *v, unsigned nfe, uint8_t *out) {
    for (unsigned j = 0; j < nfe; j++) {
        uint64_t l[6] = {0};
        if (zk_bigint_from_dec(v[j], l, (int)c->n8q / 8) < 0) abort();
        if (c->id == ZK_CURVE_BN128) {
            bn_fq_t t;
            memcpy(t.l, l, sizeof(t.l));
            bn_fq_to_mont(&t, &t);
            memcpy(out + j * c->n8q, t.l, sizeof(t.l));
        } else {
            bls_fq_t t;
            memcpy(t.l, l, sizeof(t.l));
            bls_fq_to_mont(&t, &t);
            memcpy(out + j * c->n8q, t.l, sizeof(t.l));
        }
    }
}

/* Points outside the prime-order subgroup: malformed (exit 2), through the JSON path and the CLI. */
TEST(subgroup_errors) {
    if (!getenv("ZKPIPE_BUILD_ROOT")) return TEST_SKIP;
    const struct fixture *fs[2] = {&fixtures[0], &fixtures[7]};
    for (int i = 0; i < 2; i++) {
        const struct fixture *f = fs[i];
        bool bls = strstr(f->dir, "bls") != NULL;
        for (int which = 0; which < (bls ? 2 : 1); which++) {
            struct json_object *p = json_object_from_file(fpath(f, f->proof));
            CHECK(p);
            if (which == 0) {
                json_object_object_add(p, "pi_b", g2_json(bls ? bls_g2_bad : bn_g2_bad));
            } else {
                struct json_object *a = json_object_new_array();
                json_object_array_add(a, json_object_new_string(bls_g1_bad[0]));
                json_object_array_add(a, json_object_new_string(bls_g1_bad[1]));
                json_object_array_add(a, json_object_new_string("1"));
                json_object_object_add(p, "pi_a", a);
            }
            write_obj(tmp("proof.json"), p);
            json_object_put(p);
            zk_err_t err = {{0}};
            struct loaded l = {0};
            CHECK(load(&l, f, &err) == 0);
            /* the reader refuses it, naming the file and the point */
            zk_proof_t pf;
            CHECK_EQ_INT(zk_proof_from_json(&pf, l.vk.curve, tmp("proof.json"), &err), -EINVAL);
            CHECK_STR_CONTAINS(err.msg, tmp("proof.json"));
            CHECK_STR_CONTAINS(err.msg, which == 0 ? "pi_b: point is not in the prime-order subgroup of G2"
                                                   : "pi_a: point is not in the prime-order subgroup of G1");
            /* and so does the check itself, for a zk_proof_t from elsewhere */
            pf = l.proof;
            if (which == 0)
                dec_to_mont(l.vk.curve, bls ? bls_g2_bad : bn_g2_bad, 4, pf.b);
            else
                dec_to_mont(l.vk.curve, bls_g1_bad, 2, pf.a);
            CHECK_EQ_INT(zk_verify_proof(&l.vk, &pf, l.pub, l.n_pub, &err), -EINVAL);
            CHECK_STR_CONTAINS(err.msg, which == 0 ? "pi_b is not in the prime-order subgroup of G2"
                                                   : "pi_a is not in the prime-order subgroup of G1");
            unload(&l);
            char out[512], el[512];
            CHECK_EQ_INT(run_cli(fpath(f, "vk.json"), fpath(f, f->pub), tmp("proof.json"), out, el), 2);
            CHECK_STR_CONTAINS(el, "not in the prime-order subgroup");
            CHECK_STR_CONTAINS(el, tmp("proof.json"));
        }
    }
    return 0;
}

/* A JSON edit and the message the CLI must print (exit 2). */
struct bad_case {
    const char *file; /* "proof", "public" or "vk" */
    const char *what;
    const char *expect;
};

static void set_str(struct json_object *arr, size_t i, const char *s) {
    json_object_array_put_idx(arr, i, json_object_new_string(s));
}

static struct json_object *get(struct json_object *o, const char *k) {
    struct json_object *v = NULL;
    json_object_object_get_ex(o, k, &v);
    return v;
}

TEST(cli_exit_codes) {
    if (!getenv("ZKPIPE_BUILD_ROOT")) return TEST_SKIP;
    char out[512], el[512];
    for (size_t i = 0; i < N_FIX; i += 3) {
        const struct fixture *f = &fixtures[i];
        const char *vk = fpath(f, "vk.json"), *pub = fpath(f, f->pub), *proof = fpath(f, f->proof);
        CHECK_EQ_INT(run_cli(vk, pub, proof, out, el), 0);
        CHECK(!strcmp(out, "OK\n"));
        CHECK_EQ_INT(run_cli(fpath(f, f->zkey), pub, proof, out, el), 0);
        /* A and C swapped: INVALID, exit 1 */
        struct json_object *p = json_object_from_file(proof);
        struct json_object *a = json_object_get(get(p, "pi_a")), *c = json_object_get(get(p, "pi_c"));
        json_object_object_add(p, "pi_a", c);
        json_object_object_add(p, "pi_c", a);
        write_obj(tmp("proof.json"), p);
        json_object_put(p);
        CHECK_EQ_INT(run_cli(vk, pub, tmp("proof.json"), out, el), 1);
        CHECK_STR_CONTAINS(out, "INVALID: ");
    }
    const struct fixture *f = &fixtures[0];
    const char *vk = fpath(f, "vk.json"), *pub = fpath(f, f->pub), *proof = fpath(f, f->proof);
    /* malformed inputs: exit 2 and a line naming the problem */
    static const char *q_bn = "21888242871839275222246405745257275088696311157297823662689037894645226208583";
    static const char *r_bn = "21888242871839275222246405745257275088548364400416034343698204186575808495617";
    for (int k = 0; k < 17; k++) {
        struct json_object *pj = json_object_from_file(proof), *uj = json_object_from_file(pub),
                           *vj = json_object_from_file(vk);
        const char *expect = NULL;
        const char *raw_proof = NULL;
        switch (k) {
        case 0:
            raw_proof = "{\"pi_a\": [\"1\", ";
            expect = "bad JSON";
            break;
        case 1:
            set_str(get(pj, "pi_a"), 0, "12a");
            expect = "pi_a[0]: not a non-negative decimal";
            break;
        case 2:
            set_str(get(pj, "pi_a"), 1, "-5");
            expect = "pi_a[1]: not a non-negative decimal";
            break;
        case 3:
            set_str(get(pj, "pi_c"), 0, q_bn);
            expect = "pi_c[0]: value is not below the field modulus q";
            break;
        case 4:
            json_object_object_del(pj, "pi_c");
            expect = "missing key \"pi_c\"";
            break;
        case 5:
            json_object_object_add(pj, "curve", json_object_new_string("bls12381"));
            expect = "curve";
            break;
        case 6:
            json_object_array_del_idx(uj, 0, 1);
            expect = "wrong number of public signals";
            break;
        case 7:
            set_str(uj, 0, r_bn);
            expect = "[0]: value is not below the field modulus r";
            break;
        case 8:
            set_str(get(pj, "pi_a"), 0, "2");
            expect = "pi_a: point is not on the curve";
            break;
        case 9:
            set_str(json_object_array_get_idx(get(pj, "pi_b"), 1), 1, "7");
            expect = "pi_b: point is not on the twist";
            break;
        case 10:
            json_object_array_del_idx(get(vj, "IC"), 0, 1);
            expect = "IC: expected 3 elements";
            break;
        case 11:
            json_object_object_add(vj, "curve", json_object_new_string("bn999"));
            expect = "unknown curve";
            break;
        case 12:
            json_object_array_put_idx(get(pj, "pi_a"), 0, json_object_new_int(5));
            expect = "pi_a[0]: expected a decimal string";
            break;
        case 13:
            set_str(json_object_array_get_idx(get(vj, "vk_delta_2"), 0), 0, "");
            expect = "vk_delta_2[0][0]: not a non-negative decimal";
            break;
        case 14:
            json_object_array_put_idx(get(pj, "pi_c"), 1,
                                      json_object_new_string_len("12\0"
                                                                 "34",
                                                                 5));
            expect = "pi_c[1]: not a non-negative decimal";
            break;
        case 15: /* text from the input is escaped: a newline in it does not split the message */
            set_str(uj, 0, "12\n34");
            expect = "[0]: not a non-negative decimal number: \"12\\x0a34\"";
            break;
        case 16:
            json_object_object_add(vj, "curve", json_object_new_string("bn\n128"));
            expect = "curve: unknown curve \"bn\\x0a128\"";
            break;
        }
        if (raw_proof)
            write_str(tmp("proof.json"), raw_proof);
        else
            write_obj(tmp("proof.json"), pj);
        write_obj(tmp("public.json"), uj);
        write_obj(tmp("vk.json"), vj);
        json_object_put(pj);
        json_object_put(uj);
        json_object_put(vj);
        int rc = run_cli(tmp("vk.json"), tmp("public.json"), tmp("proof.json"), out, el);
        CHECK_MSG(rc == 2, "case %d: exit %d (%s%s)", k, rc, out, el);
        CHECK_MSG(strstr(el, expect) != NULL, "case %d: \"%s\" lacks \"%s\"", k, el, expect);
        CHECK_MSG(strstr(el, tmpdir) != NULL, "case %d: \"%s\" names no file", k, el);
        if (k == 6) { /* the count: both the public file and the key are named */
            CHECK_STR_CONTAINS(el, tmp("public.json"));
            CHECK_STR_CONTAINS(el, tmp("vk.json"));
        }
        CHECK(!strchr(el, '\n') || strchr(el, '\n')[1] == 0); /* one line */
    }
    /* points without their z (ffjavascript reads [x, y] as z = 1): still OK */
    {
        struct json_object *pj = json_object_from_file(proof);
        json_object_array_del_idx(get(pj, "pi_a"), 2, 1);
        json_object_array_del_idx(get(pj, "pi_b"), 2, 1);
        write_obj(tmp("proof.json"), pj);
        json_object_put(pj);
        CHECK_EQ_INT(run_cli(vk, pub, tmp("proof.json"), out, el), 0);
        CHECK(!strcmp(out, "OK\n"));
    }
    /* a key file that is neither a zkey nor JSON, and a broken zkey (the zkey reader's message) */
    CHECK_EQ_INT(run_cli(test_data("bad/wrong_magic.zkey"), pub, proof, out, el), 2);
    CHECK_STR_CONTAINS(el, "neither a .zkey");
    CHECK_EQ_INT(run_cli(test_data("bad/zkey_truncated.zkey"), pub, proof, out, el), 2);
    CHECK_STR_CONTAINS(el, "zkey_truncated.zkey: ");
    /* usage errors: one line */
    CHECK_EQ_INT(run_cli(vk, pub, "--bogus", out, el), 2);
    CHECK_STR_CONTAINS(el, "unknown option '--bogus'");
    /* a missing file */
    CHECK_EQ_INT(run_cli(vk, pub, "/nonexistent/proof.json", out, el), 2);
    CHECK_STR_CONTAINS(el, "cannot open");
    return 0;
}

/* Proofs made by `zkpipe prove` (fresh random r, s) verify, from the vk.json and from the zkey. */
TEST(zkpipe_prove_proofs_verify) {
    const char *root = getenv("ZKPIPE_BUILD_ROOT");
    if (!root) return TEST_SKIP;
    char exe[1024];
    snprintf(exe, sizeof(exe), "%s/cli/zkpipe", root);
    for (size_t i = 0; i < N_FIX; i++) {
        const struct fixture *f = &fixtures[i];
        const char *pf = tmp("proof.json"), *pu = tmp("public.json");
        pid_t pid = fork();
        if (pid == 0) {
            if (!freopen("/dev/null", "w", stdout)) _exit(99);
            execl(exe, exe, "prove", fpath(f, f->zkey), fpath(f, f->wtns), pf, pu, (char *)NULL);
            _exit(98);
        }
        int st;
        waitpid(pid, &st, 0);
        CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "zkpipe prove %s %s failed", f->dir, f->wtns);
        zk_err_t err = {{0}};
        zk_vk_t vk;
        CHECK_MSG(zk_vk_load(&vk, fpath(f, i % 2 ? "vk.json" : f->zkey), &err) == 0, "%s", err.msg);
        zk_proof_t p;
        uint8_t *pub = NULL;
        uint32_t n = 0;
        CHECK_MSG(zk_proof_from_json(&p, vk.curve, pf, &err) == 0, "%s", err.msg);
        CHECK_MSG(zk_public_from_json(&pub, &n, vk.curve, pu, &err) == 0, "%s", err.msg);
        int rc = zk_verify_proof(&vk, &p, pub, n, &err);
        CHECK_MSG(rc == 0, "%s %s: %s", f->dir, f->wtns, err.msg);
        /* and the proof is bound to its public signals */
        pub[0] ^= 1;
        CHECK_EQ_INT(zk_verify_proof(&vk, &p, pub, n, &err), -EBADMSG);
        free(pub);
        zk_vk_free(&vk);
    }
    return 0;
}

/* The finalizer verifies from several threads with one key: each thread checks a valid and a
 * tampered proof many times, with both curves at once. */
struct conc_arg {
    const struct loaded *l;
    int ok, bad;
};

static void *conc_worker(void *p) {
    struct conc_arg *a = p;
    zk_err_t err;
    uint8_t *pub = malloc(32 * (size_t)a->l->n_pub);
    memcpy(pub, a->l->pub, 32 * (size_t)a->l->n_pub);
    pub[0] ^= 2;
    for (int i = 0; i < 10; i++) {
        a->ok += zk_verify_proof(&a->l->vk, &a->l->proof, a->l->pub, a->l->n_pub, &err) == 0;
        a->bad += zk_verify_proof(&a->l->vk, &a->l->proof, pub, a->l->n_pub, &err) == -EBADMSG;
    }
    free(pub);
    return NULL;
}

TEST(concurrent_verify) {
    struct loaded l[2];
    memset(l, 0, sizeof(l));
    zk_err_t err = {{0}};
    CHECK_MSG(load(&l[0], &fixtures[2], &err) == 0, "%s", err.msg);
    CHECK_MSG(load(&l[1], &fixtures[7], &err) == 0, "%s", err.msg);
    pthread_t th[6];
    struct conc_arg args[6];
    for (int i = 0; i < 6; i++) {
        args[i] = (struct conc_arg){&l[i % 2], 0, 0};
        CHECK(pthread_create(&th[i], NULL, conc_worker, &args[i]) == 0);
    }
    for (int i = 0; i < 6; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 6; i++) {
        CHECK_EQ_INT(args[i].ok, 10);
        CHECK_EQ_INT(args[i].bad, 10);
    }
    unload(&l[0]);
    unload(&l[1]);
    return 0;
}
