/* Quadratic extension F[u]/(u^2 + 1), instantiated by zk/field.h with F2 (prefix) over F (base prefix).
 * Both curves use u^2 = -1 (formats.md §8). */

#define F2_CAT2(a, b) a##_##b
#define F2_CAT(a, b) F2_CAT2(a, b)
#define F2F(name) F2_CAT(F2, name)
#define FB(name) F2_CAT(F, name)
#define F2_T F2_CAT(F2, t)
#define FB_T F2_CAT(F, t)

typedef struct {
    FB_T c0, c1;
} F2_T;

static inline void F2F(zero)(F2_T *r) { memset(r, 0, sizeof(*r)); }
static inline void F2F(one)(F2_T *r) {
    FB(one)(&r->c0);
    FB(zero)(&r->c1);
}
static inline bool F2F(is_zero)(const F2_T *a) { return FB(is_zero)(&a->c0) && FB(is_zero)(&a->c1); }
static inline bool F2F(eq)(const F2_T *a, const F2_T *b) { return FB(eq)(&a->c0, &b->c0) && FB(eq)(&a->c1, &b->c1); }
static inline void F2F(add)(F2_T *r, const F2_T *a, const F2_T *b) {
    FB(add)(&r->c0, &a->c0, &b->c0);
    FB(add)(&r->c1, &a->c1, &b->c1);
}
static inline void F2F(sub)(F2_T *r, const F2_T *a, const F2_T *b) {
    FB(sub)(&r->c0, &a->c0, &b->c0);
    FB(sub)(&r->c1, &a->c1, &b->c1);
}
static inline void F2F(dbl)(F2_T *r, const F2_T *a) { F2F(add)(r, a, a); }
static inline void F2F(neg)(F2_T *r, const F2_T *a) {
    FB(neg)(&r->c0, &a->c0);
    FB(neg)(&r->c1, &a->c1);
}
static inline void F2F(conj)(F2_T *r, const F2_T *a) {
    r->c0 = a->c0;
    FB(neg)(&r->c1, &a->c1);
}
/* Karatsuba: (a0 + a1 u)(b0 + b1 u) = a0b0 - a1b1 + ((a0+a1)(b0+b1) - a0b0 - a1b1) u */
static inline void F2F(mul)(F2_T *r, const F2_T *a, const F2_T *b) {
    FB_T t0, t1, s0, s1;
    FB(mul)(&t0, &a->c0, &b->c0);
    FB(mul)(&t1, &a->c1, &b->c1);
    FB(add)(&s0, &a->c0, &a->c1);
    FB(add)(&s1, &b->c0, &b->c1);
    FB(mul)(&s0, &s0, &s1);
    FB(sub)(&r->c0, &t0, &t1);
    FB(sub)(&s0, &s0, &t0);
    FB(sub)(&r->c1, &s0, &t1);
}
/* (a0 + a1 u)^2 = (a0+a1)(a0-a1) + 2 a0 a1 u */
static inline void F2F(sqr)(F2_T *r, const F2_T *a) {
    FB_T s, d, p;
    FB(add)(&s, &a->c0, &a->c1);
    FB(sub)(&d, &a->c0, &a->c1);
    FB(mul)(&p, &a->c0, &a->c1);
    FB(mul)(&r->c0, &s, &d);
    FB(dbl)(&r->c1, &p);
}
static inline void F2F(mul_base)(F2_T *r, const F2_T *a, const FB_T *b) {
    FB(mul)(&r->c0, &a->c0, b);
    FB(mul)(&r->c1, &a->c1, b);
}
/* 1/(a0 + a1 u) = (a0 - a1 u)/(a0^2 + a1^2) */
static inline void F2F(inv)(F2_T *r, const F2_T *a) {
    FB_T t0, t1;
    FB(sqr)(&t0, &a->c0);
    FB(sqr)(&t1, &a->c1);
    FB(add)(&t0, &t0, &t1);
    FB(inv)(&t0, &t0);
    FB(mul)(&r->c0, &a->c0, &t0);
    FB(mul)(&t1, &a->c1, &t0);
    FB(neg)(&r->c1, &t1);
}
/* Batch inversion through the norms: 1/a = conj(a) / (a0^2 + a1^2), the norms inverted together in
 * the base field (FB(batch_inv)); zeros stay zero. tmp must hold n elements (it holds 2n base-field
 * ones here: the norms and the base field's scratch). */
static inline void F2F(batch_inv)(F2_T *a, F2_T *tmp, size_t n) {
    FB_T *nrm = &tmp[0].c0, *scratch = nrm + n;
    for (size_t i = 0; i < n; i++) {
        FB_T t;
        FB(sqr)(&nrm[i], &a[i].c0);
        FB(sqr)(&t, &a[i].c1);
        FB(add)(&nrm[i], &nrm[i], &t); /* zero only for a = 0 (-1 is not a square) */
    }
    FB(batch_inv)(nrm, scratch, n);
    for (size_t i = 0; i < n; i++) {
        FB_T t;
        FB(mul)(&a[i].c0, &a[i].c0, &nrm[i]);
        FB(mul)(&t, &a[i].c1, &nrm[i]);
        FB(neg)(&a[i].c1, &t);
    }
}

#undef FB_T
#undef F2_T
#undef FB
#undef F2F
#undef F2_CAT
#undef F2_CAT2
