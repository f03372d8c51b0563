/* Optimal ate pairing on BLS12-381 (M-type twist, ξ = 1+u): loop over the bits of |x|, conjugate at
 * the end because x < 0, the line steps of zk/miller_tmpl.h, and the hard part of the final
 * exponentiation of Hayashida-Hayasaka-Teruya (ePrint 2020/875) with cyclotomic squarings.
 * Subgroup checks by the endomorphisms φ (G1) and ψ (G2), ePrint 2021/1130 and 2022/352. */
#include <pthread.h>

#include "pairing.h"

#define BLS_X_ABS 0xd201000000010000ULL /* x = -BLS_X_ABS */

static struct {
    bls_fq_t two_inv;
    bls_fq2_t frob[4][6];   /* frob[k][i] = ξ^(i(q^k-1)/6) */
    bls_fq2_t psi_x, psi_y; /* 1/ξ^((q-1)/3), 1/ξ^((q-1)/2) */
    bls_fq_t beta;          /* cube root of unity for φ */
    int8_t x_bits[64];      /* |x|, most significant first */
    int x_len;
} K;
static pthread_once_t K_once = PTHREAD_ONCE_INIT;

static void fq2_pow(bls_fq2_t *r, const bls_fq2_t *a, const uint64_t *e, int n) {
    bls_fq2_t acc;
    bls_fq2_one(&acc);
    for (int i = n * 64 - 1; i >= 0; i--) {
        bls_fq2_sqr(&acc, &acc);
        if ((e[i / 64] >> (i % 64)) & 1) bls_fq2_mul(&acc, &acc, a);
    }
    *r = acc;
}

/* e = (q + add) / div, for the exponents below */
static void q_div(uint64_t e[6], int64_t add, unsigned div) {
    memcpy(e, bls_fq_P.l, 6 * 8);
    e[0] += (uint64_t)add; /* no carry/borrow for the small adds used here: q's low limb is ...aaab */
    unsigned __int128 rem = 0;
    for (int i = 5; i >= 0; i--) {
        unsigned __int128 cur = (rem << 64) | e[i];
        e[i] = (uint64_t)(cur / div);
        rem = cur % div;
    }
}

static void mul_x_abs(bls_g1_xyzz_t *r, const bls_g1_xyzz_t *p) {
    uint64_t x = BLS_X_ABS;
    bls_g1_xyzz_mul(r, p, &x, 1);
}

static void phi_raw(bls_g1_xyzz_t *r, const bls_g1_xyzz_t *p) {
    /* x = X/ZZ, so scaling X scales x */
    *r = *p;
    bls_fq_mul(&r->x, &p->x, &K.beta);
}

static void init_consts(void) {
    bls_fq_t two;
    bls_fq_set_u64(&two, 2);
    bls_fq_inv(&K.two_inv, &two);

    uint64_t e[6];
    q_div(e, -1, 6);
    bls_fq2_t xi, g, gk[4], gc;
    bls_fq_set_u64(&xi.c0, 1);
    bls_fq_set_u64(&xi.c1, 1);
    fq2_pow(&g, &xi, e, 6);
    bls_fq2_one(&gk[0]);
    gk[1] = g;
    bls_fq2_conj(&gc, &g);
    bls_fq2_mul(&gk[2], &g, &gc);
    bls_fq2_mul(&gk[3], &gk[2], &g);
    for (int k = 0; k < 4; k++) {
        bls_fq2_one(&K.frob[k][0]);
        for (int i = 1; i < 6; i++) bls_fq2_mul(&K.frob[k][i], &K.frob[k][i - 1], &gk[k]);
    }
    bls_fq2_inv(&K.psi_x, &K.frob[1][2]);
    bls_fq2_inv(&K.psi_y, &K.frob[1][3]);

    K.x_len = 0;
    for (int i = 63; i >= 0; i--)
        if (K.x_len || ((BLS_X_ABS >> i) & 1)) K.x_bits[K.x_len++] = (int8_t)((BLS_X_ABS >> i) & 1);

    /* β = (-1 + sqrt(-3)) / 2; q ≡ 3 mod 4, so sqrt(a) = a^((q+1)/4). Of the two primitive cube roots
     * take the one whose φ acts on G1 as −x² (the other acts as x² − 1): checked on the generator. */
    bls_fq_t m3, s, one;
    bls_fq_set_u64(&m3, 3);
    bls_fq_neg(&m3, &m3);
    q_div(e, 1, 4);
    bls_fq_pow(&s, &m3, e, 6);
    bls_fq_one(&one);
    bls_fq_sub(&s, &s, &one);
    bls_fq_mul(&K.beta, &s, &K.two_inv);
    bls_g1_xyzz_t G, a, b;
    bls_g1_xyzz_from_aff(&G, &bls_g1_gen);
    phi_raw(&a, &G);
    mul_x_abs(&b, &G);
    mul_x_abs(&b, &b);
    bls_g1_xyzz_neg(&b, &b);
    if (!bls_g1_xyzz_eq(&a, &b)) bls_fq_sqr(&K.beta, &K.beta);
}

static inline void consts(void) { (void)pthread_once(&K_once, init_consts); }

void bls_fq12_frobenius(bls_fq12_t *r, const bls_fq12_t *a, int k) {
    consts();
    bls_fq12_frob(r, a, k, K.frob[k]);
}

#define TW bls
#define MILLER_TWIST_D 0
#include "miller_tmpl.h"
#undef TW
#undef MILLER_TWIST_D

/* The loop runs over the bits of |x| after its leading 1 (x_bits + 1). */
void bls_g2_prepare(bls_g2_prep_t *r, const bls_g2_aff_t *q) {
    consts();
    proj_t R;
    (void)miller_prepare(r, &R, q, K.x_bits + 1, K.x_len - 1, &K.two_inv);
}

void bls_miller_loop(bls_fq12_t *f, const bls_g1_aff_t *p, const bls_g2_prep_t *const *q, size_t n) {
    consts();
    (void)miller_loop_lines(f, p, q, n, K.x_bits + 1, K.x_len - 1);
    bls_fq12_conj(f, f); /* x < 0 */
}

/* f^x (x < 0) for f in the cyclotomic subgroup */
static void exp_by_x(bls_fq12_t *r, const bls_fq12_t *f) {
    bls_fq12_cyc_exp(r, f, K.x_bits, K.x_len);
    bls_fq12_conj(r, r);
}

void bls_final_exp(bls_fq12_t *out, const bls_fq12_t *f) {
    consts();
    bls_fq12_t f1, f2, r;
    bls_fq12_conj(&f1, f);
    bls_fq12_inv(&f2, f);
    bls_fq12_mul(&r, &f1, &f2);
    f2 = r;
    bls_fq12_frob(&r, &r, 2, K.frob[2]);
    bls_fq12_mul(&r, &r, &f2);
    /* hard part, ePrint 2020/875 (as in gnark-crypto and arkworks) */
    bls_fq12_t y0, y1, y2;
    bls_fq12_cyc_sqr(&y0, &r);
    exp_by_x(&y1, &r);
    bls_fq12_conj(&y2, &r);
    bls_fq12_mul(&y1, &y1, &y2);
    exp_by_x(&y2, &y1);
    bls_fq12_conj(&y1, &y1);
    bls_fq12_mul(&y1, &y1, &y2);
    exp_by_x(&y2, &y1);
    bls_fq12_frob(&y1, &y1, 1, K.frob[1]);
    bls_fq12_mul(&y1, &y1, &y2);
    bls_fq12_mul(&r, &r, &y0);
    exp_by_x(&y0, &y1);
    exp_by_x(&y2, &y0);
    bls_fq12_frob(&y0, &y1, 2, K.frob[2]);
    bls_fq12_conj(&y1, &y1);
    bls_fq12_mul(&y1, &y1, &y2);
    bls_fq12_mul(&y1, &y1, &y0);
    bls_fq12_mul(&r, &r, &y1);
    *out = r;
}

void bls_pairing(bls_fq12_t *r, const bls_g1_aff_t *p, const bls_g2_aff_t *q) {
    static __thread bls_g2_prep_t prep;
    bls_g2_prepare(&prep, q);
    const bls_g2_prep_t *qs[1] = {&prep};
    bls_fq12_t f;
    bls_miller_loop(&f, p, qs, 1);
    bls_final_exp(r, &f);
}

static void psi_x(bls_g2_xyzz_t *r, const bls_g2_xyzz_t *p) {
    bls_fq2_conj(&r->x, &p->x);
    bls_fq2_mul(&r->x, &r->x, &K.psi_x);
    bls_fq2_conj(&r->y, &p->y);
    bls_fq2_mul(&r->y, &r->y, &K.psi_y);
    bls_fq2_conj(&r->zz, &p->zz);
    bls_fq2_conj(&r->zzz, &p->zzz);
}

void bls_g2_psi(bls_g2_xyzz_t *r, const bls_g2_xyzz_t *p) {
    consts();
    psi_x(r, p);
}

void bls_g1_phi(bls_g1_xyzz_t *r, const bls_g1_xyzz_t *p) {
    consts();
    phi_raw(r, p);
}

/* ePrint 2021/1130 §6 (proof corrected in 2022/352): P ∈ G1 iff φ(P) = −[x²]P. */
bool bls_g1_in_subgroup(const bls_g1_aff_t *p) {
    consts();
    if (bls_g1_aff_is_inf(p)) return true;
    bls_g1_xyzz_t P, a, b;
    bls_g1_xyzz_from_aff(&P, p);
    phi_raw(&a, &P);
    mul_x_abs(&b, &P);
    mul_x_abs(&b, &b);
    bls_g1_xyzz_neg(&b, &b);
    return bls_g1_xyzz_eq(&a, &b);
}

/* ePrint 2021/1130 §4 (proof corrected in 2022/352): Q ∈ G2 iff ψ(Q) = [x]Q. */
bool bls_g2_in_subgroup(const bls_g2_aff_t *q) {
    consts();
    if (bls_g2_aff_is_inf(q)) return true;
    bls_g2_xyzz_t Q, a, b;
    bls_g2_xyzz_from_aff(&Q, q);
    psi_x(&a, &Q);
    uint64_t x = BLS_X_ABS;
    bls_g2_xyzz_mul(&b, &Q, &x, 1);
    bls_g2_xyzz_neg(&b, &b);
    return bls_g2_xyzz_eq(&a, &b);
}
