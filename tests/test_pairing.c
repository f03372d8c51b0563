/* Pairings of zk/pairing.h: bilinearity, non-degeneracy, the order of GT, the tower's Frobenius and
 * cyclotomic squaring against plain arithmetic, multi-Miller loops, and the subgroup checks against
 * [r]P = 0 on points inside and outside the subgroups. */
#include <sys/random.h>

#include "test.h"
#include "zk/pairing.h"

/* Points on the curves but outside the prime-order subgroups, standard form (found in Python:
 * the smallest x >= 5 (x >= 5 + u on the twists) with x^3 + b a square). */
/* BN254 twist point (x = 5 + u) outside G2 */
static const uint64_t bn_g2_bad_std[4][4] = {
    {0x0000000000000005ULL, 0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL},
    {0x0000000000000001ULL, 0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL},
    {0x9568223266784540ULL, 0x197651b9e6288735ULL, 0x69ffd8eaec5cd0e2ULL, 0x031d14917c0ef543ULL},
    {0x3214e4a4a041de6bULL, 0xae38e90e3287cadeULL, 0xa254f432320c2e7bULL, 0x237844edbccd623aULL}};
/* BLS12-381 twist point outside G2 */
static const uint64_t bls_g2_bad_std[4][6] = {{0x0000000000000005ULL, 0x0000000000000000ULL, 0x0000000000000000ULL,
                                               0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL},
                                              {0x0000000000000001ULL, 0x0000000000000000ULL, 0x0000000000000000ULL,
                                               0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL},
                                              {0x1eb5e7ba32515862ULL, 0xe833b5263c25872cULL, 0x8f2fe4a5a98166faULL,
                                               0xcc3cd8a19c151b5cULL, 0x50b8ac0d8152555cULL, 0x109de07dfa1cce04ULL},
                                              {0x2fbf74f2f770e741ULL, 0x8e554d84ffba293fULL, 0x58e440701f671bd2ULL,
                                               0x01065095248eed06ULL, 0xf477af74a1905b57ULL, 0x07bd6bf739241700ULL}};
/* BLS12-381 G1 curve point outside G1 */
static const uint64_t bls_g1_bad_std[2][6] = {{0x0000000000000005ULL, 0x0000000000000000ULL, 0x0000000000000000ULL,
                                               0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL},
                                              {0x43ea7df67dbad60dULL, 0x5df092c8a7ceb648ULL, 0x506d2bb2185f5371ULL,
                                               0x9b180a8e59196825ULL, 0x7bc0790f1e6e7d66ULL, 0x0d3c6da1211ebe79ULL}};

static const uint64_t bn_r[4] = BN_FR_P, bls_r[4] = BLS_FR_P;

/* A random scalar below r (rejection sampling on the top limb's spare bits). */
static void rand_scalar(uint64_t k[4], const uint64_t r[4]) {
    do {
        if (getrandom(k, 32, 0) != 32) abort();
        k[3] &= 0x7fffffffffffffffULL;
    } while (!zk_bigint_lt(k, r, 4));
}

/* k = a*b mod r, via the Montgomery Fr of the curve. */
#define SCALAR_MUL(FR, k, a, b)                                                                                        \
    do {                                                                                                               \
        FR##_t _a, _b, _c;                                                                                             \
        memcpy(_a.l, a, 32);                                                                                           \
        memcpy(_b.l, b, 32);                                                                                           \
        FR##_to_mont(&_a, &_a);                                                                                        \
        FR##_to_mont(&_b, &_b);                                                                                        \
        FR##_mul(&_c, &_a, &_b);                                                                                       \
        FR##_from_mont(&_c, &_c);                                                                                      \
        memcpy(k, _c.l, 32);                                                                                           \
    } while (0)

/* Generic square-and-multiply in Fq12 (no cyclotomic tricks), for cross-checks. */
#define DEF_POW12(T)                                                                                                   \
    static void T##_fq12_pow_plain(T##_fq12_t *r, const T##_fq12_t *a, const uint64_t *e, int n) {                     \
        T##_fq12_t acc;                                                                                                \
        T##_fq12_one(&acc);                                                                                            \
        for (int i = n * 64 - 1; i >= 0; i--) {                                                                        \
            T##_fq12_sqr(&acc, &acc);                                                                                  \
            if ((e[i / 64] >> (i % 64)) & 1) T##_fq12_mul(&acc, &acc, a);                                              \
        }                                                                                                              \
        *r = acc;                                                                                                      \
    }
DEF_POW12(bn)
DEF_POW12(bls)

#define G1MUL(T, out, gen, k)                                                                                          \
    do {                                                                                                               \
        T##_g1_xyzz_t _p;                                                                                              \
        T##_g1_xyzz_from_aff(&_p, gen);                                                                                \
        T##_g1_xyzz_mul(&_p, &_p, k, 4);                                                                               \
        T##_g1_xyzz_to_aff(out, &_p);                                                                                  \
    } while (0)
#define G2MUL(T, out, gen, k)                                                                                          \
    do {                                                                                                               \
        T##_g2_xyzz_t _p;                                                                                              \
        T##_g2_xyzz_from_aff(&_p, gen);                                                                                \
        T##_g2_xyzz_mul(&_p, &_p, k, 4);                                                                               \
        T##_g2_xyzz_to_aff(out, &_p);                                                                                  \
    } while (0)

/* e(aP, bQ) = e(P, Q)^(ab) = e(abP, Q), for random a, b and P, Q random multiples of the generators. */
#define BILINEAR_TEST(T, FR, R)                                                                                        \
    TEST(T##_bilinear) {                                                                                               \
        for (int it = 0; it < 3; it++) {                                                                               \
            uint64_t s[4], t[4], a[4], b[4], ab[4];                                                                    \
            rand_scalar(s, R);                                                                                         \
            rand_scalar(t, R);                                                                                         \
            rand_scalar(a, R);                                                                                         \
            rand_scalar(b, R);                                                                                         \
            SCALAR_MUL(FR, ab, a, b);                                                                                  \
            T##_g1_aff_t P, aP, abP;                                                                                   \
            T##_g2_aff_t Q, bQ;                                                                                        \
            G1MUL(T, &P, &T##_g1_gen, s);                                                                              \
            G2MUL(T, &Q, &T##_g2_gen, t);                                                                              \
            G1MUL(T, &aP, &P, a);                                                                                      \
            G2MUL(T, &bQ, &Q, b);                                                                                      \
            G1MUL(T, &abP, &P, ab);                                                                                    \
            T##_fq12_t e1, e2, e3;                                                                                     \
            T##_pairing(&e1, &aP, &bQ);                                                                                \
            T##_pairing(&e2, &P, &Q);                                                                                  \
            T##_fq12_pow_plain(&e2, &e2, ab, 4);                                                                       \
            T##_pairing(&e3, &abP, &Q);                                                                                \
            CHECK(T##_fq12_eq(&e1, &e2));                                                                              \
            CHECK(T##_fq12_eq(&e1, &e3));                                                                              \
            CHECK(!T##_fq12_is_one(&e1));                                                                              \
        }                                                                                                              \
        return 0;                                                                                                      \
    }
BILINEAR_TEST(bn, bn_fr, bn_r)
BILINEAR_TEST(bls, bls_fr, bls_r)

/* e(G1, G2) != 1 and e(G1, G2)^r = 1 (so its order is exactly r, a prime). Pairs with infinity give 1. */
#define NONDEGEN_TEST(T, R)                                                                                            \
    TEST(T##_nondegenerate) {                                                                                          \
        T##_fq12_t e, t;                                                                                               \
        T##_pairing(&e, &T##_g1_gen, &T##_g2_gen);                                                                     \
        CHECK(!T##_fq12_is_one(&e));                                                                                   \
        T##_fq12_pow_plain(&t, &e, R, 4);                                                                              \
        CHECK(T##_fq12_is_one(&t));                                                                                    \
        T##_g1_aff_t inf1;                                                                                             \
        T##_g2_aff_t inf2;                                                                                             \
        memset(&inf1, 0, sizeof(inf1));                                                                                \
        memset(&inf2, 0, sizeof(inf2));                                                                                \
        T##_pairing(&t, &inf1, &T##_g2_gen);                                                                           \
        CHECK(T##_fq12_is_one(&t));                                                                                    \
        T##_pairing(&t, &T##_g1_gen, &inf2);                                                                           \
        CHECK(T##_fq12_is_one(&t));                                                                                    \
        return 0;                                                                                                      \
    }
NONDEGEN_TEST(bn, bn_r)
NONDEGEN_TEST(bls, bls_r)

/* One multi-Miller loop with one final exponentiation equals the product of single pairings, and
 * e(-P, Q) e(P, Q) = 1. */
#define MULTI_TEST(T, R)                                                                                               \
    TEST(T##_multi_miller) {                                                                                           \
        T##_g1_aff_t P[3];                                                                                             \
        T##_g2_aff_t Q[3];                                                                                             \
        static T##_g2_prep_t prep[3];                                                                                  \
        const T##_g2_prep_t *pp[3];                                                                                    \
        T##_fq12_t prod, e, f;                                                                                         \
        T##_fq12_one(&prod);                                                                                           \
        for (int i = 0; i < 3; i++) {                                                                                  \
            uint64_t s[4], t[4];                                                                                       \
            rand_scalar(s, R);                                                                                         \
            rand_scalar(t, R);                                                                                         \
            G1MUL(T, &P[i], &T##_g1_gen, s);                                                                           \
            G2MUL(T, &Q[i], &T##_g2_gen, t);                                                                           \
            T##_g2_prepare(&prep[i], &Q[i]);                                                                           \
            pp[i] = &prep[i];                                                                                          \
            T##_pairing(&e, &P[i], &Q[i]);                                                                             \
            T##_fq12_mul(&prod, &prod, &e);                                                                            \
        }                                                                                                              \
        T##_miller_loop(&f, P, pp, 3);                                                                                 \
        T##_final_exp(&f, &f);                                                                                         \
        CHECK(T##_fq12_eq(&f, &prod));                                                                                 \
        T##_g1_aff_t P2[2];                                                                                            \
        P2[0] = P[0];                                                                                                  \
        T##_g1_aff_neg(&P2[1], &P[0]);                                                                                 \
        const T##_g2_prep_t *pq[2] = {&prep[0], &prep[0]};                                                             \
        T##_miller_loop(&f, P2, pq, 2);                                                                                \
        T##_final_exp(&f, &f);                                                                                         \
        CHECK(T##_fq12_is_one(&f));                                                                                    \
        return 0;                                                                                                      \
    }
MULTI_TEST(bn, bn_r)
MULTI_TEST(bls, bls_r)

/* The Frobenius table against a^q by exponentiation, and Granger-Scott squaring against plain
 * squaring on an element of the cyclotomic subgroup (a pairing value). */
#define TOWER_TEST(T, FQ_N)                                                                                            \
    TEST(T##_tower) {                                                                                                  \
        T##_fq12_t a, b, c;                                                                                            \
        /* a = some non-GT element with all coefficients non-zero */                                                   \
        T##_fq2_t *co = (T##_fq2_t *)&a;                                                                               \
        for (int i = 0; i < 6; i++) {                                                                                  \
            T##_fq_set_u64(&co[i].c0, 1000 + 7 * i);                                                                   \
            T##_fq_set_u64(&co[i].c1, 3 + 11 * i);                                                                     \
        }                                                                                                              \
        T##_fq12_t x = a;                                                                                              \
        T##_fq12_pow_plain(&b, &a, T##_fq_P.l, FQ_N);                                                                  \
        T##_fq12_frobenius(&c, &x, 1);                                                                                 \
        CHECK(T##_fq12_eq(&b, &c));                                                                                    \
        T##_fq12_pow_plain(&b, &b, T##_fq_P.l, FQ_N);                                                                  \
        T##_fq12_frobenius(&c, &x, 2);                                                                                 \
        CHECK(T##_fq12_eq(&b, &c));                                                                                    \
        T##_fq12_pow_plain(&b, &b, T##_fq_P.l, FQ_N);                                                                  \
        T##_fq12_frobenius(&c, &x, 3);                                                                                 \
        CHECK(T##_fq12_eq(&b, &c));                                                                                    \
        T##_fq12_t ia;                                                                                                 \
        T##_fq12_inv(&ia, &a);                                                                                         \
        T##_fq12_mul(&b, &ia, &a);                                                                                     \
        CHECK(T##_fq12_is_one(&b));                                                                                    \
        T##_pairing(&a, &T##_g1_gen, &T##_g2_gen);                                                                     \
        T##_fq12_sqr(&b, &a);                                                                                          \
        T##_fq12_cyc_sqr(&c, &a);                                                                                      \
        CHECK(T##_fq12_eq(&b, &c));                                                                                    \
        return 0;                                                                                                      \
    }
TOWER_TEST(bn, 4)
TOWER_TEST(bls, 6)

static void load_std(uint64_t *dst, const uint64_t *src, int n, void (*to_mont)(void *, const void *)) {
    memcpy(dst, src, (size_t)n * 8);
    to_mont(dst, dst);
}
static void bn_tm(void *r, const void *a) { bn_fq_to_mont(r, a); }
static void bls_tm(void *r, const void *a) { bls_fq_to_mont(r, a); }

#define R_TIMES_IS_INF(T, G, out, pt, R)                                                                               \
    do {                                                                                                               \
        T##_##G##_xyzz_t _p;                                                                                           \
        T##_##G##_xyzz_from_aff(&_p, pt);                                                                              \
        T##_##G##_xyzz_mul(&_p, &_p, R, 4);                                                                            \
        out = T##_##G##_xyzz_is_inf(&_p);                                                                              \
    } while (0)

/* ψ acts as q mod r on G2 (and φ as −x² on BLS G1): checks the endomorphism constants. */
TEST(endomorphisms) {
    /* BN: q mod r = q - r = 6x^2 */
    uint64_t qmr[4];
    const uint64_t bq[4] = BN_FQ_P;
    unsigned __int128 br = 0;
    for (int i = 0; i < 4; i++) {
        unsigned __int128 d = (unsigned __int128)bq[i] - bn_r[i] - (uint64_t)br;
        qmr[i] = (uint64_t)d;
        br = (d >> 64) & 1;
    }
    bn_g2_xyzz_t g, a, b;
    bn_g2_xyzz_from_aff(&g, &bn_g2_gen);
    bn_g2_psi(&a, &g);
    bn_g2_xyzz_mul(&b, &g, qmr, 4);
    CHECK(bn_g2_xyzz_eq(&a, &b));
    /* BLS: ψ = [x] on G2, x = -0xd201000000010000 */
    uint64_t xa = 0xd201000000010000ULL;
    bls_g2_xyzz_t h, c, d;
    bls_g2_xyzz_from_aff(&h, &bls_g2_gen);
    bls_g2_psi(&c, &h);
    bls_g2_xyzz_mul(&d, &h, &xa, 1);
    bls_g2_xyzz_neg(&d, &d);
    CHECK(bls_g2_xyzz_eq(&c, &d));
    bls_g1_xyzz_t p, e, f;
    bls_g1_xyzz_from_aff(&p, &bls_g1_gen);
    bls_g1_phi(&e, &p);
    bls_g1_xyzz_mul(&f, &p, &xa, 1);
    bls_g1_xyzz_mul(&f, &f, &xa, 1);
    bls_g1_xyzz_neg(&f, &f);
    CHECK(bls_g1_xyzz_eq(&e, &f));
    return 0;
}

/* The fast subgroup checks agree with [r]P = 0 on random subgroup points and on points outside,
 * including sums of a subgroup point and an outside one. */
TEST(subgroup_checks) {
    bn_g2_aff_t bn_bad;
    load_std(bn_bad.x.c0.l, bn_g2_bad_std[0], 4, bn_tm);
    load_std(bn_bad.x.c1.l, bn_g2_bad_std[1], 4, bn_tm);
    load_std(bn_bad.y.c0.l, bn_g2_bad_std[2], 4, bn_tm);
    load_std(bn_bad.y.c1.l, bn_g2_bad_std[3], 4, bn_tm);
    bls_g2_aff_t bls_bad2;
    load_std(bls_bad2.x.c0.l, bls_g2_bad_std[0], 6, bls_tm);
    load_std(bls_bad2.x.c1.l, bls_g2_bad_std[1], 6, bls_tm);
    load_std(bls_bad2.y.c0.l, bls_g2_bad_std[2], 6, bls_tm);
    load_std(bls_bad2.y.c1.l, bls_g2_bad_std[3], 6, bls_tm);
    bls_g1_aff_t bls_bad1;
    load_std(bls_bad1.x.l, bls_g1_bad_std[0], 6, bls_tm);
    load_std(bls_bad1.y.l, bls_g1_bad_std[1], 6, bls_tm);
    CHECK(bn_g2_aff_on_curve(&bn_bad));
    CHECK(bls_g2_aff_on_curve(&bls_bad2));
    CHECK(bls_g1_aff_on_curve(&bls_bad1));
    CHECK(bn_g2_in_subgroup(&bn_g2_gen));
    CHECK(bls_g2_in_subgroup(&bls_g2_gen));
    CHECK(bls_g1_in_subgroup(&bls_g1_gen));
    for (int it = 0; it < 8; it++) {
        uint64_t k[4];
        bool inf;
        rand_scalar(k, bn_r);
        bn_g2_aff_t q, qb;
        G2MUL(bn, &q, &bn_g2_gen, k);
        CHECK(bn_g2_in_subgroup(&q));
        /* outside: k * bad (cofactor part survives unless k kills it) and q + bad */
        G2MUL(bn, &qb, &bn_bad, k);
        R_TIMES_IS_INF(bn, g2, inf, &qb, bn_r);
        CHECK_EQ_INT(bn_g2_in_subgroup(&qb), inf);
        bn_g2_xyzz_t s;
        bn_g2_xyzz_from_aff(&s, &q);
        bn_g2_xyzz_add_aff(&s, &s, &bn_bad);
        bn_g2_xyzz_to_aff(&qb, &s);
        CHECK(!bn_g2_in_subgroup(&qb));

        rand_scalar(k, bls_r);
        bls_g2_aff_t q2, q2b;
        G2MUL(bls, &q2, &bls_g2_gen, k);
        CHECK(bls_g2_in_subgroup(&q2));
        G2MUL(bls, &q2b, &bls_bad2, k);
        R_TIMES_IS_INF(bls, g2, inf, &q2b, bls_r);
        CHECK_EQ_INT(bls_g2_in_subgroup(&q2b), inf);
        bls_g2_xyzz_t s2;
        bls_g2_xyzz_from_aff(&s2, &q2);
        bls_g2_xyzz_add_aff(&s2, &s2, &bls_bad2);
        bls_g2_xyzz_to_aff(&q2b, &s2);
        CHECK(!bls_g2_in_subgroup(&q2b));

        bls_g1_aff_t p1, p1b;
        G1MUL(bls, &p1, &bls_g1_gen, k);
        CHECK(bls_g1_in_subgroup(&p1));
        G1MUL(bls, &p1b, &bls_bad1, k);
        R_TIMES_IS_INF(bls, g1, inf, &p1b, bls_r);
        CHECK_EQ_INT(bls_g1_in_subgroup(&p1b), inf);
        bls_g1_xyzz_t s1;
        bls_g1_xyzz_from_aff(&s1, &p1);
        bls_g1_xyzz_add_aff(&s1, &s1, &bls_bad1);
        bls_g1_xyzz_to_aff(&p1b, &s1);
        CHECK(!bls_g1_in_subgroup(&p1b));
    }
    /* the outside points themselves, and [h]bad which is in the subgroup */
    CHECK(!bn_g2_in_subgroup(&bn_bad));
    CHECK(!bls_g2_in_subgroup(&bls_bad2));
    CHECK(!bls_g1_in_subgroup(&bls_bad1));
    const uint64_t h1[2] = {0x8c00aaab0000aaabULL, 0x396c8c005555e156ULL};
    bls_g1_aff_t cleared;
    G1MUL(bls, &cleared, &bls_bad1, ((uint64_t[4]){h1[0], h1[1], 0, 0}));
    CHECK(bls_g1_in_subgroup(&cleared));
    const uint64_t bn_h2[4] = {0x345f2299c0f9fa8dULL, 0x06ceecda572a2489ULL, 0xb85045b68181585eULL,
                               0x30644e72e131a029ULL};
    bn_g2_aff_t bcl;
    G2MUL(bn, &bcl, &bn_bad, bn_h2);
    CHECK(bn_g2_in_subgroup(&bcl));
    return 0;
}

/* zk/pairing.h's multiplication by ξ (the one Fq2 helper the tower adds to zk/field.h) against a
 * full Fq2 multiplication by ξ = 9+u (BN254) or 1+u (BLS12-381), on random values and 0, 1, -1. */
#define MUL_XI_CHECK(T, N, XI0)                                                                                        \
    do {                                                                                                               \
        T##_fq2_t v[6], xi;                                                                                            \
        for (int i = 0; i < 6; i++) {                                                                                  \
            T##_fq_t *c[2] = {&v[i].c0, &v[i].c1};                                                                     \
            for (int j = 0; j < 2; j++) do {                                                                           \
                    if (getrandom(c[j]->l, sizeof(c[j]->l), 0) != sizeof(c[j]->l)) abort();                            \
                    c[j]->l[N - 1] >>= 2;                                                                              \
                } while (T##_fq_geq_p(c[j]->l));                                                                       \
        }                                                                                                              \
        T##_fq2_zero(&v[0]);                                                                                           \
        T##_fq2_one(&v[1]);                                                                                            \
        T##_fq2_neg(&v[2], &v[1]);                                                                                     \
        T##_fq_set_u64(&xi.c0, XI0);                                                                                   \
        T##_fq_set_u64(&xi.c1, 1);                                                                                     \
        for (int i = 0; i < 6; i++) {                                                                                  \
            T##_fq2_t r1, r2 = v[i];                                                                                   \
            T##_fq2_mul(&r1, &v[i], &xi);                                                                              \
            T##_fq2_mul_xi(&r2, &r2); /* in place, as the tower calls it */                                            \
            CHECK(T##_fq2_eq(&r1, &r2));                                                                               \
        }                                                                                                              \
    } while (0)

TEST(mul_xi) {
    for (int it = 0; it < 200; it++) {
        MUL_XI_CHECK(bn, 4, 9);
        MUL_XI_CHECK(bls, 6, 1);
    }
    return 0;
}
