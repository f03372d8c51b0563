/* Optimal ate pairing on BN254 (D-type twist, ξ = 9+u): 6x+2 in NAF plus the two Frobenius lines,
 * the line steps of zk/miller_tmpl.h, and the
 * Fuentes-Castañeda et al. hard part with cyclotomic squarings. G2 subgroup check of Dai et al. */
#include <pthread.h>

#include "pairing.h"

#define BN_X 0x44e992b44a6909f1ULL /* positive */

static struct {
    bn_fq_t two_inv;
    bn_fq2_t frob[4][6];   /* frob[k][i] = ξ^(i(q^k-1)/6) */
    bn_fq2_t psi_x, psi_y; /* ξ^((q-1)/3), ξ^((q-1)/2) */
    int8_t loop[72];       /* NAF of 6x+2, most significant first, without its leading 1 */
    int loop_len;
    int8_t x_naf[72]; /* NAF of x, most significant first */
    int x_len;
} K;
static pthread_once_t K_once = PTHREAD_ONCE_INIT;

static void fq2_pow(bn_fq2_t *r, const bn_fq2_t *a, const uint64_t *e, int n) {
    bn_fq2_t acc;
    bn_fq2_one(&acc);
    for (int i = n * 64 - 1; i >= 0; i--) {
        bn_fq2_sqr(&acc, &acc);
        if ((e[i / 64] >> (i % 64)) & 1) bn_fq2_mul(&acc, &acc, a);
    }
    *r = acc;
}

/* NAF of v (as unsigned __int128), least significant digit first; returns the length. */
static int naf(int8_t *d, unsigned __int128 v) {
    int n = 0;
    while (v) {
        if (v & 1) {
            int z = 2 - (int)(v & 3); /* 1 or -1 */
            d[n] = (int8_t)z;
            if (z == 1)
                v -= 1;
            else
                v += 1;
        } else {
            d[n] = 0;
        }
        v >>= 1;
        n++;
    }
    return n;
}

static void init_consts(void) {
    bn_fq_t two;
    bn_fq_set_u64(&two, 2);
    bn_fq_inv(&K.two_inv, &two);

    /* e = (q-1)/6 */
    uint64_t e[4];
    memcpy(e, bn_fq_P.l, sizeof(e));
    e[0] -= 1;
    unsigned __int128 rem = 0;
    for (int i = 3; i >= 0; i--) {
        unsigned __int128 cur = (rem << 64) | e[i];
        e[i] = (uint64_t)(cur / 6);
        rem = cur % 6;
    }
    bn_fq2_t xi, g;
    bn_fq_set_u64(&xi.c0, 9);
    bn_fq_set_u64(&xi.c1, 1);
    fq2_pow(&g, &xi, e, 4);
    /* ξ^((q^k-1)/6) = g^(1 + q + ... + q^(k-1)), and g^q = conj(g) */
    bn_fq2_t gk[4];
    bn_fq2_one(&gk[0]);
    gk[1] = g;
    bn_fq2_t gc;
    bn_fq2_conj(&gc, &g);
    bn_fq2_mul(&gk[2], &g, &gc);
    bn_fq2_mul(&gk[3], &gk[2], &g);
    for (int k = 0; k < 4; k++) {
        bn_fq2_one(&K.frob[k][0]);
        for (int i = 1; i < 6; i++) bn_fq2_mul(&K.frob[k][i], &K.frob[k][i - 1], &gk[k]);
    }
    K.psi_x = K.frob[1][2];
    K.psi_y = K.frob[1][3];

    int8_t t[72];
    int n = naf(t, (unsigned __int128)BN_X * 6 + 2);
    K.loop_len = n - 1;
    for (int i = 0; i < K.loop_len; i++) K.loop[i] = t[n - 2 - i];
    K.x_len = naf(t, BN_X);
    for (int i = 0; i < K.x_len; i++) K.x_naf[i] = t[K.x_len - 1 - i];
}

static inline void consts(void) { (void)pthread_once(&K_once, init_consts); }

void bn_fq12_frobenius(bn_fq12_t *r, const bn_fq12_t *a, int k) {
    consts();
    bn_fq12_frob(r, a, k, K.frob[k]);
}

#define TW bn
#define MILLER_TWIST_D 1
#include "miller_tmpl.h"
#undef TW
#undef MILLER_TWIST_D

static void psi_aff(bn_g2_aff_t *r, const bn_g2_aff_t *p) {
    bn_fq2_conj(&r->x, &p->x);
    bn_fq2_mul(&r->x, &r->x, &K.psi_x);
    bn_fq2_conj(&r->y, &p->y);
    bn_fq2_mul(&r->y, &r->y, &K.psi_y);
}

static void psi_x(bn_g2_xyzz_t *r, const bn_g2_xyzz_t *p) {
    bn_fq2_conj(&r->x, &p->x);
    bn_fq2_mul(&r->x, &r->x, &K.psi_x);
    bn_fq2_conj(&r->y, &p->y);
    bn_fq2_mul(&r->y, &r->y, &K.psi_y);
    bn_fq2_conj(&r->zz, &p->zz);
    bn_fq2_conj(&r->zzz, &p->zzz);
}

void bn_g2_psi(bn_g2_xyzz_t *r, const bn_g2_xyzz_t *p) {
    consts();
    psi_x(r, p);
}

void bn_g2_prepare(bn_g2_prep_t *r, const bn_g2_aff_t *q) {
    consts();
    proj_t R;
    if (!miller_prepare(r, &R, q, K.loop, K.loop_len, &K.two_inv)) return;
    /* R = [6x+2]Q; add π(Q) and −π²(Q) (x > 0, so no negation of R) */
    bn_g2_aff_t q1, q2;
    psi_aff(&q1, q);
    psi_aff(&q2, &q1);
    bn_fq2_neg(&q2.y, &q2.y);
    miller_add(&R, &q1, &r->ell[r->n++]);
    miller_add(&R, &q2, &r->ell[r->n++]);
}

void bn_miller_loop(bn_fq12_t *f, const bn_g1_aff_t *p, const bn_g2_prep_t *const *q, size_t n) {
    consts();
    uint32_t idx = miller_loop_lines(f, p, q, n, K.loop, K.loop_len);
    for (size_t k = 0; k < n; k++) { /* the two Frobenius lines */
        if (q[k]->inf || bn_g1_aff_is_inf(&p[k])) continue;
        miller_line(f, &q[k]->ell[idx], &p[k]);
        miller_line(f, &q[k]->ell[idx + 1], &p[k]);
    }
}

/* f^(-x) for f in the cyclotomic subgroup */
static void exp_by_neg_x(bn_fq12_t *r, const bn_fq12_t *f) {
    bn_fq12_cyc_exp(r, f, K.x_naf, K.x_len);
    bn_fq12_conj(r, r);
}

void bn_final_exp(bn_fq12_t *out, const bn_fq12_t *f) {
    consts();
    /* easy part: f^((q^6-1)(q^2+1)) */
    bn_fq12_t f1, f2, r;
    bn_fq12_conj(&f1, f);
    bn_fq12_inv(&f2, f);
    bn_fq12_mul(&r, &f1, &f2);
    f2 = r;
    bn_fq12_frob(&r, &r, 2, K.frob[2]);
    bn_fq12_mul(&r, &r, &f2);
    /* hard part (Fuentes-Castañeda, Knapp, Rodríguez-Henríquez, "Faster hashing to G2") */
    bn_fq12_t y0, y1, y2, y3, y4, y5, y6, y7, y8, y9, y10, y11, y12, y13, y14, y15, y16;
    exp_by_neg_x(&y0, &r);
    bn_fq12_cyc_sqr(&y1, &y0);
    bn_fq12_cyc_sqr(&y2, &y1);
    bn_fq12_mul(&y3, &y2, &y1);
    exp_by_neg_x(&y4, &y3);
    bn_fq12_cyc_sqr(&y5, &y4);
    exp_by_neg_x(&y6, &y5);
    bn_fq12_conj(&y3, &y3);
    bn_fq12_conj(&y6, &y6);
    bn_fq12_mul(&y7, &y6, &y4);
    bn_fq12_mul(&y8, &y7, &y3);
    bn_fq12_mul(&y9, &y8, &y1);
    bn_fq12_mul(&y10, &y8, &y4);
    bn_fq12_mul(&y11, &y10, &r);
    bn_fq12_frob(&y12, &y9, 1, K.frob[1]);
    bn_fq12_mul(&y13, &y12, &y11);
    bn_fq12_frob(&y8, &y8, 2, K.frob[2]);
    bn_fq12_mul(&y14, &y8, &y13);
    bn_fq12_conj(&r, &r);
    bn_fq12_mul(&y15, &r, &y9);
    bn_fq12_frob(&y15, &y15, 3, K.frob[3]);
    bn_fq12_mul(&y16, &y15, &y14);
    *out = y16;
}

void bn_pairing(bn_fq12_t *r, const bn_g1_aff_t *p, const bn_g2_aff_t *q) {
    static __thread bn_g2_prep_t prep;
    bn_g2_prepare(&prep, q);
    const bn_g2_prep_t *qs[1] = {&prep};
    bn_fq12_t f;
    bn_miller_loop(&f, p, qs, 1);
    bn_final_exp(r, &f);
}

/* Dai, Lin, Zhao, Zhou, "Fast subgroup membership testings for G1, G2 and GT on pairing-friendly
 * curves" (ePrint 2022/348, §5.1), as in gnark-crypto: for BN curves, a point Q of the twist is in
 * G2 iff [x+1]Q + ψ([x]Q) + ψ²([x]Q) = ψ³([2x]Q). One 63-bit multiplication instead of a 254-bit
 * one. tests/test_pairing.c checks it against [r]Q = 0 on points in and out of G2. */
bool bn_g2_in_subgroup(const bn_g2_aff_t *q) {
    consts();
    if (bn_g2_aff_is_inf(q)) return true;
    bn_g2_xyzz_t Q, xQ, t, lhs, rhs;
    bn_g2_xyzz_from_aff(&Q, q);
    uint64_t x = BN_X;
    bn_g2_xyzz_mul(&xQ, &Q, &x, 1);
    bn_g2_xyzz_add(&lhs, &xQ, &Q);
    psi_x(&t, &xQ);
    bn_g2_xyzz_add(&lhs, &lhs, &t);
    psi_x(&t, &t);
    bn_g2_xyzz_add(&lhs, &lhs, &t);
    bn_g2_xyzz_dbl(&rhs, &xQ);
    psi_x(&rhs, &rhs);
    psi_x(&rhs, &rhs);
    psi_x(&rhs, &rhs);
    return bn_g2_xyzz_eq(&lhs, &rhs);
}
