/* Field and curve arithmetic against independent facts: Montgomery constants, inverses, the
 * group order annihilating the generators, decimal round trips. */

#include "kernel_sets.h"
#include "test.h"
#include "test_random.h"
#include "zk/curve.h"

#define FIELD_TESTS(F, NL)                                                                                           \
    TEST(F##_axioms) {                                                                                               \
        for (int it = 0; it < 200; it++) {                                                                           \
            F##_t a, b, c, t1, t2, t3;                                                                               \
            rnd(&a, sizeof a); rnd(&b, sizeof b); rnd(&c, sizeof c);                                                 \
            a.l[NL - 1] >>= 4; b.l[NL - 1] >>= 4; c.l[NL - 1] >>= 4; /* < p */                                        \
            F##_mul(&t1, &a, &b); F##_mul(&t2, &b, &a); CHECK(F##_eq(&t1, &t2));                                     \
            F##_add(&t1, &a, &b); F##_mul(&t1, &t1, &c);                                                             \
            F##_mul(&t2, &a, &c); F##_mul(&t3, &b, &c); F##_add(&t2, &t2, &t3); CHECK(F##_eq(&t1, &t2));             \
            F##_sub(&t1, &a, &b); F##_add(&t1, &t1, &b); CHECK(F##_eq(&t1, &a));                                     \
            F##_neg(&t1, &a); F##_add(&t1, &t1, &a); CHECK(F##_is_zero(&t1));                                        \
            F##_inv(&t1, &a); F##_mul(&t1, &t1, &a); CHECK(F##_is_zero(&a) || F##_eq(&t1, &F##_ONE));               \
            F##_to_mont(&t1, &a); F##_from_mont(&t1, &t1); CHECK(F##_eq(&t1, &a));                                   \
            CHECK(!F##_geq_p(a.l));                                                                                  \
        }                                                                                                            \
        F##_t two, four, x;                                                                                          \
        F##_set_u64(&two, 2); F##_set_u64(&four, 4); F##_mul(&x, &two, &two); CHECK(F##_eq(&x, &four));             \
        CHECK(F##_geq_p(F##_P.l));                                                                                   \
        /* inverse edges: inv(0) = 0, inv(1) = 1, inv(-1) = -1, inv(2)·2 = 1, and the same as pow(p-2) */          \
        F##_t z, m1, y;                                                                                              \
        F##_zero(&z); F##_inv(&x, &z); CHECK(F##_is_zero(&x));                                                       \
        F##_inv(&x, &F##_ONE); CHECK(F##_eq(&x, &F##_ONE));                                                          \
        F##_neg(&m1, &F##_ONE); F##_inv(&x, &m1); CHECK(F##_eq(&x, &m1));                                            \
        F##_inv(&x, &two); F##_mul(&x, &x, &two); CHECK(F##_eq(&x, &F##_ONE));                                       \
        for (int it = 0; it < 20; it++) {                                                                            \
            rnd(&y, sizeof y); y.l[NL - 1] >>= 4;                                                                    \
            F##_inv(&x, &y); F##_pow(&z, &y, F##_PM2.l, NL); CHECK(F##_eq(&x, &z));                                  \
        }                                                                                                            \
        return 0;                                                                                                    \
    }                                                                                                                \
    /* the variable-time inverse of batch_inv against the Fermat one, on raw limbs that stress its word shifts      \
     * (2^j: long runs of zeros), the top of the range (p − 1, p − 2^j) and random values */                       \
    TEST(F##_inv_vartime) {                                                                                          \
        F##_t x, y, z;                                                                                               \
        F##_zero(&x); F##_inv_vartime(&y, &x); CHECK(F##_is_zero(&y));                                               \
        for (int j = 0; j < 64 * NL - 2; j++) {                                                                      \
            F##_zero(&x); x.l[j / 64] = 1ULL << (j % 64);                                                            \
            F##_inv(&y, &x); F##_inv_vartime(&z, &x); CHECK(F##_eq(&y, &z));                                         \
            x = F##_P; x.l[j / 64] -= 1ULL << (j % 64); /* p − 2^j: no borrow needed below bit j */                  \
            if (x.l[j / 64] > F##_P.l[j / 64]) continue;                                                             \
            F##_inv(&y, &x); F##_inv_vartime(&z, &x); CHECK(F##_eq(&y, &z));                                         \
        }                                                                                                            \
        for (int it = 0; it < 3000; it++) {                                                                          \
            rnd(&x, sizeof x); x.l[NL - 1] >>= 4;                                                                    \
            if (it % 3 == 1) x.l[0] = 0; /* a whole zero limb first */                                               \
            if (it % 3 == 2) x.l[0] &= ~0xffffULL;                                                                   \
            F##_inv(&y, &x); F##_inv_vartime(&z, &x); CHECK(F##_eq(&y, &z));                                         \
            F##_mul(&z, &z, &x); CHECK(F##_is_zero(&x) || F##_eq(&z, &F##_ONE));                                      \
        }                                                                                                            \
        return 0;                                                                                                    \
    }

FIELD_TESTS(bn_fq, 4)
FIELD_TESTS(bn_fr, 4)
FIELD_TESTS(bls_fq, 6)
FIELD_TESTS(bls_fr, 4)

TEST(fq2_inverse_and_square) {
    for (int it = 0; it < 50; it++) {
        bn_fq2_t a, t, s;
        rnd(&a, sizeof a);
        a.c0.l[3] >>= 4; a.c1.l[3] >>= 4;
        bn_fq2_inv(&t, &a); bn_fq2_mul(&t, &t, &a);
        bn_fq2_t one; bn_fq2_one(&one);
        CHECK(bn_fq2_eq(&t, &one));
        bn_fq2_sqr(&t, &a); bn_fq2_mul(&s, &a, &a); CHECK(bn_fq2_eq(&t, &s));
        bls_fq2_t b, u, v;
        rnd(&b, sizeof b);
        b.c0.l[5] >>= 4; b.c1.l[5] >>= 4;
        bls_fq2_sqr(&u, &b); bls_fq2_mul(&v, &b, &b); CHECK(bls_fq2_eq(&u, &v));
    }
    return 0;
}

TEST(decimal_roundtrip) {
    char buf[200];
    uint64_t v[6], w[6];
    CHECK_EQ_INT(zk_bigint_to_dec((uint64_t[4]){0}, 4, buf), 1);
    CHECK(strcmp(buf, "0") == 0);
    static const uint64_t r[4] = BN_FR_P;
    zk_bigint_to_dec(r, 4, buf);
    CHECK(strcmp(buf, "21888242871839275222246405745257275088548364400416034343698204186575808495617") == 0);
    for (int it = 0; it < 100; it++) {
        rnd(v, sizeof v);
        zk_bigint_to_dec(v, 6, buf);
        CHECK_EQ_INT(zk_bigint_from_dec(buf, w, 6), 0);
        CHECK(memcmp(v, w, sizeof v) == 0);
    }
    CHECK(zk_bigint_from_dec("", w, 4) < 0);
    CHECK(zk_bigint_from_dec("12a", w, 4) < 0);
    CHECK(zk_bigint_from_dec("-1", w, 4) < 0);
    CHECK(zk_bigint_from_dec("115792089237316195423570985008687907853269984665640564039457584007913129639936", w, 4) < 0);
    return 0;
}

#define ORDER_TEST(G, RP)                                                                                            \
    TEST(G##_order) {                                                                                                \
        static const uint64_t r[4] = RP;                                                                             \
        G##_xyzz_t p, q, t;                                                                                          \
        G##_xyzz_from_aff(&p, &G##_gen);                                                                             \
        CHECK(G##_aff_on_curve(&G##_gen));                                                                           \
        G##_xyzz_mul(&q, &p, r, 4);                                                                                  \
        CHECK(G##_xyzz_is_inf(&q));                                                                                  \
        /* (r-1)G = -G */                                                                                           \
        uint64_t rm1[4]; memcpy(rm1, r, sizeof rm1); rm1[0] -= 1;                                                    \
        G##_xyzz_mul(&q, &p, rm1, 4); G##_xyzz_neg(&t, &p); CHECK(G##_xyzz_eq(&q, &t));                              \
        /* 2G + G == 3G, via the mixed and the full addition */                                                     \
        G##_xyzz_t a, b; G##_xyzz_dbl(&a, &p); G##_xyzz_add_aff(&a, &a, &G##_gen);                                   \
        G##_xyzz_mul(&b, &p, (uint64_t[4]){3}, 4); CHECK(G##_xyzz_eq(&a, &b));                                       \
        G##_xyzz_dbl(&a, &p); G##_xyzz_add(&a, &a, &p); CHECK(G##_xyzz_eq(&a, &b));                                  \
        G##_aff_t af; G##_xyzz_to_aff(&af, &b); CHECK(G##_aff_on_curve(&af));                                        \
        /* P + (-P) = inf, P + P = 2P through add */                                                                \
        G##_xyzz_neg(&t, &b); G##_xyzz_add(&a, &b, &t); CHECK(G##_xyzz_is_inf(&a));                                  \
        G##_xyzz_add(&a, &b, &b); G##_xyzz_dbl(&t, &b); CHECK(G##_xyzz_eq(&a, &t));                                  \
        G##_xyzz_add_aff(&a, &b, &af); CHECK(G##_xyzz_eq(&a, &t));                                                   \
        return 0;                                                                                                    \
    }

ORDER_TEST(bn_g1, BN_FR_P)
ORDER_TEST(bn_g2, BN_FR_P)
ORDER_TEST(bls_g1, BLS_FR_P)
ORDER_TEST(bls_g2, BLS_FR_P)
