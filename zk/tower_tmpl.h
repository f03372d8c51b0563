/* Fq6 = Fq2[v]/(v^3 - xi) and Fq12 = Fq6[w]/(w^2 - v) (formats.md §8), instantiated by
 * zk/pairing.h once per curve. Before including: TW (prefix, e.g. bn), F2 (Fq2 prefix), F (Fq prefix);
 * a function F2_mul_xi(r, a) (r = a*xi) must already exist under the name <F2>_mul_xi.
 * Everything is Montgomery form, like the fields below it. */

#define TW_CAT2(a, b) a##_##b
#define TW_CAT(a, b) TW_CAT2(a, b)
#define T6(name) TW_CAT(TW_CAT(TW, fq6), name)
#define T12(name) TW_CAT(TW_CAT(TW, fq12), name)
#define E2(name) TW_CAT(F2, name)
#define E1(name) TW_CAT(F, name)
#define E2_T TW_CAT(F2, t)
#define E1_T TW_CAT(F, t)
#define T6_T TW_CAT(TW_CAT(TW, fq6), t)
#define T12_T TW_CAT(TW_CAT(TW, fq12), t)

typedef struct {
    E2_T c0, c1, c2;
} T6_T;

typedef struct {
    T6_T c0, c1;
} T12_T;

/* ---- Fq6 ---- */

static inline void T6(zero)(T6_T *r) { memset(r, 0, sizeof(*r)); }
static inline void T6(one)(T6_T *r) {
    memset(r, 0, sizeof(*r));
    E2(one)(&r->c0);
}
static inline bool T6(eq)(const T6_T *a, const T6_T *b) {
    return E2(eq)(&a->c0, &b->c0) && E2(eq)(&a->c1, &b->c1) && E2(eq)(&a->c2, &b->c2);
}
static inline bool T6(is_zero)(const T6_T *a) {
    return E2(is_zero)(&a->c0) && E2(is_zero)(&a->c1) && E2(is_zero)(&a->c2);
}
static inline void T6(add)(T6_T *r, const T6_T *a, const T6_T *b) {
    E2(add)(&r->c0, &a->c0, &b->c0);
    E2(add)(&r->c1, &a->c1, &b->c1);
    E2(add)(&r->c2, &a->c2, &b->c2);
}
static inline void T6(sub)(T6_T *r, const T6_T *a, const T6_T *b) {
    E2(sub)(&r->c0, &a->c0, &b->c0);
    E2(sub)(&r->c1, &a->c1, &b->c1);
    E2(sub)(&r->c2, &a->c2, &b->c2);
}
static inline void T6(neg)(T6_T *r, const T6_T *a) {
    E2(neg)(&r->c0, &a->c0);
    E2(neg)(&r->c1, &a->c1);
    E2(neg)(&r->c2, &a->c2);
}
/* r = a*v = (xi*a2, a0, a1) */
static inline void T6(mul_v)(T6_T *r, const T6_T *a) {
    E2_T t;
    E2(mul_xi)(&t, &a->c2);
    r->c2 = a->c1;
    r->c1 = a->c0;
    r->c0 = t;
}
static inline void T6(mul)(T6_T *r, const T6_T *a, const T6_T *b) {
    E2_T aa, bb, cc, t1, t2, t3, s, u;
    E2(mul)(&aa, &a->c0, &b->c0);
    E2(mul)(&bb, &a->c1, &b->c1);
    E2(mul)(&cc, &a->c2, &b->c2);
    /* c0 = aa + xi*((a1+a2)(b1+b2) - bb - cc) */
    E2(add)(&s, &a->c1, &a->c2);
    E2(add)(&u, &b->c1, &b->c2);
    E2(mul)(&t1, &s, &u);
    E2(sub)(&t1, &t1, &bb);
    E2(sub)(&t1, &t1, &cc);
    E2(mul_xi)(&t1, &t1);
    E2(add)(&t1, &t1, &aa);
    /* c1 = (a0+a1)(b0+b1) - aa - bb + xi*cc */
    E2(add)(&s, &a->c0, &a->c1);
    E2(add)(&u, &b->c0, &b->c1);
    E2(mul)(&t2, &s, &u);
    E2(sub)(&t2, &t2, &aa);
    E2(sub)(&t2, &t2, &bb);
    E2(mul_xi)(&s, &cc);
    E2(add)(&t2, &t2, &s);
    /* c2 = (a0+a2)(b0+b2) - aa + bb - cc */
    E2(add)(&s, &a->c0, &a->c2);
    E2(add)(&u, &b->c0, &b->c2);
    E2(mul)(&t3, &s, &u);
    E2(sub)(&t3, &t3, &aa);
    E2(add)(&t3, &t3, &bb);
    E2(sub)(&t3, &t3, &cc);
    r->c0 = t1;
    r->c1 = t2;
    r->c2 = t3;
}
/* Chung-Hasan SQR2 */
static inline void T6(sqr)(T6_T *r, const T6_T *a) {
    E2_T s0, s1, s2, s3, s4, t;
    E2(sqr)(&s0, &a->c0);
    E2(mul)(&s1, &a->c0, &a->c1);
    E2(dbl)(&s1, &s1);
    E2(sub)(&t, &a->c0, &a->c1);
    E2(add)(&t, &t, &a->c2);
    E2(sqr)(&s2, &t);
    E2(mul)(&s3, &a->c1, &a->c2);
    E2(dbl)(&s3, &s3);
    E2(sqr)(&s4, &a->c2);
    E2_T c0, c1, c2;
    E2(mul_xi)(&t, &s3);
    E2(add)(&c0, &s0, &t);
    E2(mul_xi)(&t, &s4);
    E2(add)(&c1, &s1, &t);
    E2(add)(&c2, &s1, &s2);
    E2(add)(&c2, &c2, &s3);
    E2(sub)(&c2, &c2, &s0);
    E2(sub)(&c2, &c2, &s4);
    r->c0 = c0;
    r->c1 = c1;
    r->c2 = c2;
}
static inline void T6(inv)(T6_T *r, const T6_T *a) {
    E2_T c0, c1, c2, t, s;
    E2(sqr)(&c0, &a->c0);
    E2(mul)(&t, &a->c1, &a->c2);
    E2(mul_xi)(&t, &t);
    E2(sub)(&c0, &c0, &t);
    E2(sqr)(&c1, &a->c2);
    E2(mul_xi)(&c1, &c1);
    E2(mul)(&t, &a->c0, &a->c1);
    E2(sub)(&c1, &c1, &t);
    E2(sqr)(&c2, &a->c1);
    E2(mul)(&t, &a->c0, &a->c2);
    E2(sub)(&c2, &c2, &t);
    E2(mul)(&t, &a->c2, &c1);
    E2(mul)(&s, &a->c1, &c2);
    E2(add)(&t, &t, &s);
    E2(mul_xi)(&t, &t);
    E2(mul)(&s, &a->c0, &c0);
    E2(add)(&t, &t, &s);
    E2(inv)(&t, &t);
    E2(mul)(&r->c0, &c0, &t);
    E2(mul)(&r->c1, &c1, &t);
    E2(mul)(&r->c2, &c2, &t);
}
/* r = a * (b0 + b1 v) */
static inline void T6(mul_by_01)(T6_T *r, const T6_T *a, const E2_T *b0, const E2_T *b1) {
    E2_T aa, bb, t1, t2, t3, s, u;
    E2(mul)(&aa, &a->c0, b0);
    E2(mul)(&bb, &a->c1, b1);
    E2(add)(&s, &a->c1, &a->c2);
    E2(mul)(&t1, &s, b1);
    E2(sub)(&t1, &t1, &bb);
    E2(mul_xi)(&t1, &t1);
    E2(add)(&t1, &t1, &aa);
    E2(add)(&s, &a->c0, &a->c2);
    E2(mul)(&t3, &s, b0);
    E2(sub)(&t3, &t3, &aa);
    E2(add)(&t3, &t3, &bb);
    E2(add)(&s, &a->c0, &a->c1);
    E2(add)(&u, b0, b1);
    E2(mul)(&t2, &s, &u);
    E2(sub)(&t2, &t2, &aa);
    E2(sub)(&t2, &t2, &bb);
    r->c0 = t1;
    r->c1 = t2;
    r->c2 = t3;
}
/* r = a * (b1 v) */
static inline void T6(mul_by_1)(T6_T *r, const T6_T *a, const E2_T *b1) {
    E2_T t0, t1, t2;
    E2(mul)(&t0, &a->c2, b1);
    E2(mul_xi)(&t0, &t0);
    E2(mul)(&t1, &a->c0, b1);
    E2(mul)(&t2, &a->c1, b1);
    r->c0 = t0;
    r->c1 = t1;
    r->c2 = t2;
}
static inline void T6(mul_e2)(T6_T *r, const T6_T *a, const E2_T *b) {
    E2(mul)(&r->c0, &a->c0, b);
    E2(mul)(&r->c1, &a->c1, b);
    E2(mul)(&r->c2, &a->c2, b);
}

/* ---- Fq12 ---- */

static inline void T12(one)(T12_T *r) {
    memset(r, 0, sizeof(*r));
    E2(one)(&r->c0.c0);
}
static inline bool T12(eq)(const T12_T *a, const T12_T *b) { return T6(eq)(&a->c0, &b->c0) && T6(eq)(&a->c1, &b->c1); }
static inline bool T12(is_one)(const T12_T *a) {
    T12_T o;
    T12(one)(&o);
    return T12(eq)(a, &o);
}
static inline void T12(mul)(T12_T *r, const T12_T *a, const T12_T *b) {
    T6_T aa, bb, s, u;
    T6(mul)(&aa, &a->c0, &b->c0);
    T6(mul)(&bb, &a->c1, &b->c1);
    T6(add)(&s, &a->c0, &a->c1);
    T6(add)(&u, &b->c0, &b->c1);
    T6(mul)(&s, &s, &u);
    T6(sub)(&s, &s, &aa);
    T6(sub)(&r->c1, &s, &bb);
    T6(mul_v)(&bb, &bb);
    T6(add)(&r->c0, &aa, &bb);
}
/* complex squaring: (a0 + a1 w)^2 = (a0+a1)(a0+v a1) - ab - v ab + 2ab w */
static inline void T12(sqr)(T12_T *r, const T12_T *a) {
    T6_T ab, s, u, t;
    T6(mul)(&ab, &a->c0, &a->c1);
    T6(add)(&s, &a->c0, &a->c1);
    T6(mul_v)(&u, &a->c1);
    T6(add)(&u, &u, &a->c0);
    T6(mul)(&s, &s, &u);
    T6(sub)(&s, &s, &ab);
    T6(mul_v)(&t, &ab);
    T6(sub)(&r->c0, &s, &t);
    T6(add)(&r->c1, &ab, &ab);
}
static inline void T12(conj)(T12_T *r, const T12_T *a) {
    r->c0 = a->c0;
    T6(neg)(&r->c1, &a->c1);
}
static inline void T12(inv)(T12_T *r, const T12_T *a) {
    T6_T t0, t1;
    T6(sqr)(&t0, &a->c0);
    T6(sqr)(&t1, &a->c1);
    T6(mul_v)(&t1, &t1);
    T6(sub)(&t0, &t0, &t1);
    T6(inv)(&t0, &t0);
    T6(mul)(&r->c0, &a->c0, &t0);
    T6(mul)(&t1, &a->c1, &t0);
    T6(neg)(&r->c1, &t1);
}
/* r = a^(q^k). g[i] = xi^(i*(q^k-1)/6), i = 0..5: the coefficient at w^i, since w^6 = xi. */
static inline void T12(frob)(T12_T *r, const T12_T *a, int k, const E2_T g[6]) {
    const E2_T *in[6] = {&a->c0.c0, &a->c1.c0, &a->c0.c1, &a->c1.c1, &a->c0.c2, &a->c1.c2}; /* w^0..w^5 */
    E2_T *out[6] = {&r->c0.c0, &r->c1.c0, &r->c0.c1, &r->c1.c1, &r->c0.c2, &r->c1.c2};
    E2_T t[6];
    for (int i = 0; i < 6; i++) {
        if (k & 1)
            E2(conj)(&t[i], in[i]);
        else
            t[i] = *in[i];
        if (i) E2(mul)(&t[i], &t[i], &g[i]);
    }
    for (int i = 0; i < 6; i++) *out[i] = t[i];
}
/* r = a * (b0 + b1 v + b4 v w): the sparse line of an M-type twist (coefficients 0, 1, 4). */
static inline void T12(mul_by_014)(T12_T *r, const T12_T *a, const E2_T *b0, const E2_T *b1, const E2_T *b4) {
    T6_T aa, bb, s;
    E2_T o;
    T6(mul_by_01)(&aa, &a->c0, b0, b1);
    T6(mul_by_1)(&bb, &a->c1, b4);
    E2(add)(&o, b1, b4);
    T6(add)(&s, &a->c1, &a->c0);
    T6(mul_by_01)(&s, &s, b0, &o);
    T6(sub)(&s, &s, &aa);
    T6(sub)(&r->c1, &s, &bb);
    T6(mul_v)(&bb, &bb);
    T6(add)(&r->c0, &bb, &aa);
}
/* r = a * (b0 + b3 w + b4 v w): the sparse line of a D-type twist (coefficients 0, 3, 4). */
static inline void T12(mul_by_034)(T12_T *r, const T12_T *a, const E2_T *b0, const E2_T *b3, const E2_T *b4) {
    T6_T aa, bb, e;
    E2_T o;
    T6(mul_e2)(&aa, &a->c0, b0);
    T6(mul_by_01)(&bb, &a->c1, b3, b4);
    E2(add)(&o, b0, b3);
    T6(add)(&e, &a->c0, &a->c1);
    T6(mul_by_01)(&e, &e, &o, b4);
    T6(sub)(&e, &e, &aa);
    T6(sub)(&r->c1, &e, &bb);
    T6(mul_v)(&bb, &bb);
    T6(add)(&r->c0, &bb, &aa);
}
/* Granger-Scott squaring, valid for elements of the cyclotomic subgroup (after the easy part of the
 * final exponentiation), where it is about twice as fast as sqr. */
static inline void T12(cyc_sqr)(T12_T *r, const T12_T *a) {
    const E2_T *r0 = &a->c0.c0, *r4 = &a->c0.c1, *r3 = &a->c0.c2, *r2 = &a->c1.c0, *r1 = &a->c1.c1, *r5 = &a->c1.c2;
    E2_T t0, t1, t2, t3, t4, t5, tmp, s, u;
#define TW_SQ4(T0, T1, X, Y)                                                                                           \
    E2(mul)(&tmp, X, Y);                                                                                               \
    E2(add)(&s, X, Y);                                                                                                 \
    E2(mul_xi)(&u, Y);                                                                                                 \
    E2(add)(&u, &u, X);                                                                                                \
    E2(mul)(&T0, &s, &u);                                                                                              \
    E2(sub)(&T0, &T0, &tmp);                                                                                           \
    E2(mul_xi)(&u, &tmp);                                                                                              \
    E2(sub)(&T0, &T0, &u);                                                                                             \
    E2(dbl)(&T1, &tmp);
    TW_SQ4(t0, t1, r0, r1)
    TW_SQ4(t2, t3, r2, r3)
    TW_SQ4(t4, t5, r4, r5)
#undef TW_SQ4
    E2_T z0, z1, z2, z3, z4, z5;
    /* z0 = 3 t0 - 2 r0 */
    E2(sub)(&z0, &t0, r0);
    E2(dbl)(&z0, &z0);
    E2(add)(&z0, &z0, &t0);
    /* z1 = 3 t1 + 2 r1 */
    E2(add)(&z1, &t1, r1);
    E2(dbl)(&z1, &z1);
    E2(add)(&z1, &z1, &t1);
    /* z2 = 3 xi t5 + 2 r2 */
    E2(mul_xi)(&tmp, &t5);
    E2(add)(&z2, r2, &tmp);
    E2(dbl)(&z2, &z2);
    E2(add)(&z2, &z2, &tmp);
    /* z3 = 3 t4 - 2 r3 */
    E2(sub)(&z3, &t4, r3);
    E2(dbl)(&z3, &z3);
    E2(add)(&z3, &z3, &t4);
    /* z4 = 3 t2 - 2 r4 */
    E2(sub)(&z4, &t2, r4);
    E2(dbl)(&z4, &z4);
    E2(add)(&z4, &z4, &t2);
    /* z5 = 3 t3 + 2 r5 */
    E2(add)(&z5, r5, &t3);
    E2(dbl)(&z5, &z5);
    E2(add)(&z5, &z5, &t3);
    r->c0.c0 = z0;
    r->c0.c1 = z4;
    r->c0.c2 = z3;
    r->c1.c0 = z2;
    r->c1.c1 = z1;
    r->c1.c2 = z5;
}
/* r = a^e for a in the cyclotomic subgroup, e > 0 given in signed binary (digits in {-1,0,1}, most
 * significant first); the inverse there is the conjugate. */
static inline void T12(cyc_exp)(T12_T *r, const T12_T *a, const int8_t *digits, int n) {
    T12_T acc, ainv;
    T12(conj)(&ainv, a);
    T12(one)(&acc);
    bool started = false;
    for (int i = 0; i < n; i++) {
        if (started) T12(cyc_sqr)(&acc, &acc);
        if (digits[i] == 1) {
            if (started)
                T12(mul)(&acc, &acc, a);
            else
                acc = *a;
            started = true;
        } else if (digits[i] == -1) {
            if (started)
                T12(mul)(&acc, &acc, &ainv);
            else
                acc = ainv;
            started = true;
        }
    }
    *r = acc;
}

#undef TW_CAT2
#undef TW_CAT
#undef T6
#undef T12
#undef E2
#undef E1
#undef E2_T
#undef E1_T
#undef T6_T
#undef T12_T
