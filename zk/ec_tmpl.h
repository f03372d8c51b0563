/* Short-Weierstrass curve y^2 = x^3 + b (a = 0) over a field F, instantiated by zk/curve.h with
 * G (prefix), F (field prefix) and G_B_VALUE (the constant b, Montgomery form).
 * Affine points have the zkey byte layout (x then y, Montgomery LE); all-zero = infinity.
 * Arithmetic runs in XYZZ coordinates (x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2); ZZ = 0 is infinity. */

#define EC_CAT2(a, b) a##_##b
#define EC_CAT(a, b) EC_CAT2(a, b)
#define GF(name) EC_CAT(G, name)
#define FF(name) EC_CAT(F, name)
#define F_T EC_CAT(F, t)
#define AFF_T EC_CAT(G, aff_t)
#define XYZZ_T EC_CAT(G, xyzz_t)

typedef struct {
    F_T x, y;
} AFF_T;

typedef struct {
    F_T x, y, zz, zzz;
} XYZZ_T;

static const F_T GF(B) = G_B_VALUE;

static inline bool GF(aff_is_inf)(const AFF_T *p) { return FF(is_zero)(&p->x) && FF(is_zero)(&p->y); }

/* Infinity counts as on the curve. */
static inline bool GF(aff_on_curve)(const AFF_T *p) {
    if (GF(aff_is_inf)(p)) return true;
    F_T l, r;
    FF(sqr)(&l, &p->y);
    FF(sqr)(&r, &p->x);
    FF(mul)(&r, &r, &p->x);
    FF(add)(&r, &r, &GF(B));
    return FF(eq)(&l, &r);
}

static inline void GF(aff_neg)(AFF_T *r, const AFF_T *p) {
    r->x = p->x;
    FF(neg)(&r->y, &p->y);
}

static inline void GF(xyzz_set_inf)(XYZZ_T *r) { memset(r, 0, sizeof(*r)); }
static inline bool GF(xyzz_is_inf)(const XYZZ_T *p) { return FF(is_zero)(&p->zz); }

static inline void GF(xyzz_from_aff)(XYZZ_T *r, const AFF_T *p) {
    if (GF(aff_is_inf)(p)) {
        GF(xyzz_set_inf)(r);
        return;
    }
    r->x = p->x;
    r->y = p->y;
    FF(one)(&r->zz);
    FF(one)(&r->zzz);
}

static inline void GF(xyzz_neg)(XYZZ_T *r, const XYZZ_T *p) {
    *r = *p;
    FF(neg)(&r->y, &p->y);
}

/* dbl-2008-s-1 */
static inline void GF(xyzz_dbl)(XYZZ_T *r, const XYZZ_T *p) {
    if (GF(xyzz_is_inf)(p) || FF(is_zero)(&p->y)) {
        GF(xyzz_set_inf)(r);
        return;
    }
    F_T u, v, w, s, m, t;
    FF(dbl)(&u, &p->y);
    FF(sqr)(&v, &u);
    FF(mul)(&w, &u, &v);
    FF(mul)(&s, &p->x, &v);
    FF(sqr)(&m, &p->x);
    FF(dbl)(&t, &m);
    FF(add)(&m, &m, &t);
    FF(mul)(&r->zz, &v, &p->zz);
    FF(mul)(&r->zzz, &w, &p->zzz);
    FF(mul)(&w, &w, &p->y);
    FF(sqr)(&t, &m);
    FF(sub)(&t, &t, &s);
    FF(sub)(&r->x, &t, &s);
    FF(sub)(&s, &s, &r->x);
    FF(mul)(&s, &s, &m);
    FF(sub)(&r->y, &s, &w);
}

/* mdbl-2008-s-1: r = 2*q for an affine, finite q. */
static inline void GF(xyzz_dbl_aff)(XYZZ_T *r, const AFF_T *q) {
    XYZZ_T t;
    GF(xyzz_from_aff)(&t, q);
    GF(xyzz_dbl)(r, &t);
}

/* madd-2008-s: r = p + q, q affine. r may alias p. */
static inline void GF(xyzz_add_aff)(XYZZ_T *r, const XYZZ_T *p, const AFF_T *q) {
    if (GF(aff_is_inf)(q)) {
        *r = *p;
        return;
    }
    if (GF(xyzz_is_inf)(p)) {
        GF(xyzz_from_aff)(r, q);
        return;
    }
    F_T pp, rr, ppp, qq, t;
    FF(mul)(&pp, &q->x, &p->zz);
    FF(sub)(&pp, &pp, &p->x); /* P */
    FF(mul)(&rr, &q->y, &p->zzz);
    FF(sub)(&rr, &rr, &p->y); /* R */
    if (FF(is_zero)(&pp)) {
        if (FF(is_zero)(&rr))
            GF(xyzz_dbl_aff)(r, q);
        else
            GF(xyzz_set_inf)(r);
        return;
    }
    F_T P = pp;
    FF(sqr)(&pp, &P);       /* PP */
    FF(mul)(&ppp, &P, &pp); /* PPP */
    FF(mul)(&qq, &p->x, &pp);
    FF(mul)(&r->zz, &p->zz, &pp);
    FF(mul)(&r->zzz, &p->zzz, &ppp);
    F_T y1ppp;
    FF(mul)(&y1ppp, &p->y, &ppp);
    FF(sqr)(&t, &rr);
    FF(sub)(&t, &t, &ppp);
    FF(sub)(&t, &t, &qq);
    FF(sub)(&r->x, &t, &qq);
    FF(sub)(&t, &qq, &r->x);
    FF(mul)(&t, &t, &rr);
    FF(sub)(&r->y, &t, &y1ppp);
}

/* add-2008-s: r = p + q. r may alias p or q. */
static inline void GF(xyzz_add)(XYZZ_T *r, const XYZZ_T *p, const XYZZ_T *q) {
    if (GF(xyzz_is_inf)(q)) {
        *r = *p;
        return;
    }
    if (GF(xyzz_is_inf)(p)) {
        *r = *q;
        return;
    }
    F_T u1, u2, s1, s2, P, R, pp, ppp, qq, t;
    FF(mul)(&u1, &p->x, &q->zz);
    FF(mul)(&u2, &q->x, &p->zz);
    FF(mul)(&s1, &p->y, &q->zzz);
    FF(mul)(&s2, &q->y, &p->zzz);
    FF(sub)(&P, &u2, &u1);
    FF(sub)(&R, &s2, &s1);
    if (FF(is_zero)(&P)) {
        if (FF(is_zero)(&R))
            GF(xyzz_dbl)(r, p);
        else
            GF(xyzz_set_inf)(r);
        return;
    }
    FF(sqr)(&pp, &P);
    FF(mul)(&ppp, &P, &pp);
    FF(mul)(&qq, &u1, &pp);
    FF(mul)(&t, &p->zz, &q->zz);
    FF(mul)(&r->zz, &t, &pp);
    FF(mul)(&t, &p->zzz, &q->zzz);
    FF(mul)(&r->zzz, &t, &ppp);
    FF(mul)(&s1, &s1, &ppp);
    FF(sqr)(&t, &R);
    FF(sub)(&t, &t, &ppp);
    FF(sub)(&t, &t, &qq);
    FF(sub)(&r->x, &t, &qq);
    FF(sub)(&t, &qq, &r->x);
    FF(mul)(&t, &t, &R);
    FF(sub)(&r->y, &t, &s1);
}

static inline void GF(xyzz_to_aff)(AFF_T *r, const XYZZ_T *p) {
    if (GF(xyzz_is_inf)(p)) {
        memset(r, 0, sizeof(*r));
        return;
    }
    F_T izzz, iz, izz;
    FF(inv)(&izzz, &p->zzz);
    FF(mul)(&iz, &izzz, &p->zz);
    FF(sqr)(&izz, &iz);
    FF(mul)(&r->x, &p->x, &izz);
    FF(mul)(&r->y, &p->y, &izzz);
}

static inline bool GF(xyzz_eq)(const XYZZ_T *p, const XYZZ_T *q) {
    bool pi = GF(xyzz_is_inf)(p), qi = GF(xyzz_is_inf)(q);
    if (pi || qi) return pi && qi;
    F_T a, b;
    FF(mul)(&a, &p->x, &q->zz);
    FF(mul)(&b, &q->x, &p->zz);
    if (!FF(eq)(&a, &b)) return false;
    FF(mul)(&a, &p->y, &q->zzz);
    FF(mul)(&b, &q->y, &p->zzz);
    return FF(eq)(&a, &b);
}

/* r = k*p, k given as standard-form little-endian limbs; double-and-add (not for hot paths). */
static inline void GF(xyzz_mul)(XYZZ_T *r, const XYZZ_T *p, const uint64_t *k, int nlimbs) {
    XYZZ_T acc;
    GF(xyzz_set_inf)(&acc);
    for (int i = nlimbs * 64 - 1; i >= 0; i--) {
        GF(xyzz_dbl)(&acc, &acc);
        if ((k[i / 64] >> (i % 64)) & 1) GF(xyzz_add)(&acc, &acc, p);
    }
    *r = acc;
}

#undef XYZZ_T
#undef AFF_T
#undef F_T
#undef FF
#undef GF
#undef EC_CAT
#undef EC_CAT2
