/* The Miller loop's line steps, written once for both twists: included by pairing_bn.c (BN254, a
 * D-type twist) and pairing_bls.c (BLS12-381, an M-type twist). Before including: TW (bn or bls),
 * and MILLER_TWIST_D 1 for a D-type twist, 0 for an M-type one.
 *
 * R runs in homogeneous projective coordinates (Costello-Lange-Naehrig, as in arkworks). A step
 * gives the line through R (and Q) evaluated at the G1 point P as y_P·ly + x_P·lx + l1 (pairing.h's
 * TW_ell_t): the three coefficients are the same for both twists; only where they sit in Fq12 is
 * the twist's — D-type: 1, w, vw hold y_P·ly, x_P·lx, l1 (mul_by_034); M-type: 1, v, vw hold l1,
 * x_P·lx, y_P·ly (mul_by_014). The loop's digits are given most significant first, without the
 * leading 1, each -1, 0 or 1 (an addition of −Q, none, of Q after the doubling). */

#define MT_CAT2(a, b) a##_##b
#define MT_CAT(a, b) MT_CAT2(a, b)
#define MT(name) MT_CAT(TW, name)
#define MT_F2(name) MT_CAT(MT(fq2), name)
#define MT_F2_T MT(fq2_t)
#define MT_F_T MT(fq_t)

typedef struct {
    MT_F2_T x, y, z;
} proj_t;

/* R = 2R; the tangent line at R. */
static void miller_dbl(proj_t *R, MT(ell_t) * l, const MT_F_T *two_inv) {
    MT_F2_T a, b, c, e, f, g, h, i, j, t, e2;
    MT_F2(mul)(&a, &R->x, &R->y);
    MT_F2(mul_base)(&a, &a, two_inv);
    MT_F2(sqr)(&b, &R->y);
    MT_F2(sqr)(&c, &R->z);
    MT_F2(dbl)(&t, &c);
    MT_F2(add)(&t, &t, &c);
    MT_F2(mul)(&e, &MT(g2_B), &t);
    MT_F2(dbl)(&f, &e);
    MT_F2(add)(&f, &f, &e);
    MT_F2(add)(&g, &b, &f);
    MT_F2(mul_base)(&g, &g, two_inv);
    MT_F2(add)(&h, &R->y, &R->z);
    MT_F2(sqr)(&h, &h);
    MT_F2(add)(&t, &b, &c);
    MT_F2(sub)(&h, &h, &t);
    MT_F2(sub)(&i, &e, &b);
    MT_F2(sqr)(&j, &R->x);
    MT_F2(sqr)(&e2, &e);
    MT_F2(sub)(&t, &b, &f);
    MT_F2(mul)(&R->x, &a, &t);
    MT_F2(sqr)(&R->y, &g);
    MT_F2(dbl)(&t, &e2);
    MT_F2(add)(&t, &t, &e2);
    MT_F2(sub)(&R->y, &R->y, &t);
    MT_F2(mul)(&R->z, &b, &h);
    MT_F2(neg)(&l->ly, &h);
    MT_F2(dbl)(&l->lx, &j);
    MT_F2(add)(&l->lx, &l->lx, &j);
    l->l1 = i;
}

/* R = R + Q (Q affine); the chord through R and Q. */
static void miller_add(proj_t *R, const MT(g2_aff_t) * Q, MT(ell_t) * l) {
    MT_F2_T theta, lambda, c, d, e, f, g, h, j, t;
    MT_F2(mul)(&t, &Q->y, &R->z);
    MT_F2(sub)(&theta, &R->y, &t);
    MT_F2(mul)(&t, &Q->x, &R->z);
    MT_F2(sub)(&lambda, &R->x, &t);
    MT_F2(sqr)(&c, &theta);
    MT_F2(sqr)(&d, &lambda);
    MT_F2(mul)(&e, &lambda, &d);
    MT_F2(mul)(&f, &R->z, &c);
    MT_F2(mul)(&g, &R->x, &d);
    MT_F2(add)(&h, &e, &f);
    MT_F2(sub)(&h, &h, &g);
    MT_F2(sub)(&h, &h, &g);
    MT_F2(mul)(&R->x, &lambda, &h);
    MT_F2(sub)(&t, &g, &h);
    MT_F2(mul)(&t, &theta, &t);
    MT_F2(mul)(&R->y, &e, &R->y);
    MT_F2(sub)(&R->y, &t, &R->y);
    MT_F2(mul)(&R->z, &R->z, &e);
    MT_F2(mul)(&j, &theta, &Q->x);
    MT_F2(mul)(&t, &lambda, &Q->y);
    MT_F2(sub)(&j, &j, &t);
    l->ly = lambda;
    MT_F2(neg)(&l->lx, &theta);
    l->l1 = j;
}

/* f = f · ℓ(P), the line placed where the twist puts it. */
static inline void miller_line(MT(fq12_t) * f, const MT(ell_t) * l, const MT(g1_aff_t) * p) {
    MT_F2_T y, x;
    MT_F2(mul_base)(&y, &l->ly, &p->y);
    MT_F2(mul_base)(&x, &l->lx, &p->x);
#if MILLER_TWIST_D
    MT(fq12_mul_by_034)(f, f, &y, &x, &l->l1);
#else
    MT(fq12_mul_by_014)(f, f, &l->l1, &x, &y);
#endif
}

/* The lines of the loop over digits (n of them) for q into r->ell, R left at [loop]q. false when q
 * is infinity (r->inf, no lines). */
static bool miller_prepare(MT(g2_prep_t) * r, proj_t *R, const MT(g2_aff_t) * q, const int8_t *digits, int n,
                           const MT_F_T *two_inv) {
    r->n = 0;
    r->inf = MT(g2_aff_is_inf)(q);
    if (r->inf) return false;
    MT(g2_aff_t) nq;
    MT(g2_aff_neg)(&nq, q);
    R->x = q->x;
    R->y = q->y;
    MT_F2(one)(&R->z);
    for (int i = 0; i < n; i++) {
        miller_dbl(R, &r->ell[r->n++], two_inv);
        if (digits[i] == 1) miller_add(R, q, &r->ell[r->n++]);
        if (digits[i] == -1) miller_add(R, &nq, &r->ell[r->n++]);
    }
    return true;
}

/* f = prod_k of the loop's lines of q[k] at p[k] (pairs with an infinite point skipped), sharing
 * the squarings; the index of the first line after the loop (a curve's extra lines). */
static uint32_t miller_loop_lines(MT(fq12_t) * f, const MT(g1_aff_t) * p, const MT(g2_prep_t) *const *q, size_t n,
                                  const int8_t *digits, int nd) {
    MT(fq12_one)(f);
    uint32_t idx = 0;
    for (int i = 0; i < nd; i++) {
        if (i) MT(fq12_sqr)(f, f);
        int d = digits[i];
        for (size_t k = 0; k < n; k++) {
            if (q[k]->inf || MT(g1_aff_is_inf)(&p[k])) continue;
            miller_line(f, &q[k]->ell[idx], &p[k]);
            if (d) miller_line(f, &q[k]->ell[idx + 1], &p[k]);
        }
        idx += d ? 2 : 1;
    }
    return idx;
}

#undef MT_CAT2
#undef MT_CAT
#undef MT
#undef MT_F2
#undef MT_F2_T
#undef MT_F_T
