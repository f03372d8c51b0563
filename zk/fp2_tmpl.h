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
/* Karatsuba: (a0 + a1 u)(b0 + b1 u) = a0b0 - a1b1 + ((a0+a1)(b0+b1) - a0b0 - a1b1) u, in three
 * Montgomery products (every kernel set; the reference of the one-reduction form below). */
static inline void F2F(mul_karatsuba)(F2_T *r, const F2_T *a, const F2_T *b) {
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
/* Not in AddressSanitizer builds: there GCC -O3 all but stalled on zk/verify.c with this product in
 * the pairing's towers, inlined or out of line; those builds keep Karatsuba, and the plain builds'
 * tests (tests/test_field_asm.c) check this one. */
#if defined(ZK_X86_KERNELS) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
/* With the MULX/ADX kernel set the product reduces each half once (FB(mulw), FB(redc)): Karatsuba's
 * three products in 2N words, c1 = (a0+a1)(b0+b1) - a0b0 - a1b1 = a0b1 + a1b0 < 2p^2 and
 * c0 = a0b0 + p^2 - a1b1 in (0, 2p^2), each below p·2^(64N) (p < 2^(64N-2)) and so one REDC from
 * reduced: 3 wide products and 2 reductions against Karatsuba's 3 Montgomery products (BN254:
 * 88 multiplications instead of 108). F2_PSQ is p^2 (zk/constants.h). */
#define ZK_FQ2_WIDE 1 /* stays defined: the tests look for it too */
#include <x86intrin.h>
#define F2_WN (sizeof(FB_T) / sizeof(uint64_t))
static const uint64_t F2F(PSQ)[2 * F2_WN] = F2_PSQ;
/* r = a + b and r = a - b over n words (one carry chain); the carry out is dropped (the callers
 * stay in range). */
#define F2_WORDS_OP(name, op)                                                                                          \
    static inline __attribute__((always_inline)) void F2F(name)(uint64_t *r, const uint64_t *a, const uint64_t *b,     \
                                                                size_t n) {                                            \
        unsigned char c = 0;                                                                                           \
        for (size_t i = 0; i < n; i++) {                                                                               \
            unsigned long long o;                                                                                      \
            c = op(c, a[i], b[i], &o);                                                                                 \
            r[i] = o;                                                                                                  \
        }                                                                                                              \
    }
F2_WORDS_OP(wadd, _addcarry_u64)
F2_WORDS_OP(wsub, _subborrow_u64)
#undef F2_WORDS_OP

/* The one-reduction product. */
static inline void F2F(mul_wide)(F2_T *r, const F2_T *a, const F2_T *b) {
    enum { N = F2_WN };
    uint64_t s[N], t[N], p0[2 * N], p1[2 * N], p2[2 * N];
    F2F(wadd)(s, a->c0.l, a->c1.l, N);
    F2F(wadd)(t, b->c0.l, b->c1.l, N);
    FB(mulw)(p0, a->c0.l, b->c0.l);
    FB(mulw)(p1, a->c1.l, b->c1.l);
    FB(mulw)(p2, s, t);
    F2F(wsub)(p2, p2, p0, 2 * N);
    F2F(wsub)(p2, p2, p1, 2 * N);
    F2F(wadd)(p0, p0, F2F(PSQ), 2 * N);
    F2F(wsub)(p0, p0, p1, 2 * N);
    FB(redc)(&r->c0, p0);
    FB(redc)(&r->c1, p2);
}
#endif

/* (a0 + a1 u)(b0 + b1 u) */
static inline void F2F(mul)(F2_T *r, const F2_T *a, const F2_T *b) {
#ifdef ZK_FQ2_WIDE
    if (FB(wide_on)()) {
        F2F(mul_wide)(r, a, b);
        return;
    }
#endif
    F2F(mul_karatsuba)(r, a, b);
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

#undef F2_WN
#undef FB_T
#undef F2_T
#undef FB
#undef F2F
#undef F2_CAT
#undef F2_CAT2
