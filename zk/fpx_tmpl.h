/* Fast Fq and Fq2 operations on zk/field.h's types, instantiated by zk/pairing_fp.h. Before
 * including: FX (new prefix), FB (zk/field.h prefix, e.g. bn_fq), FX_N (limbs), FX_MUL_ADX (the
 * assembly multiplication), FX_ADD, FX_SUB, FX_REDUCE (unrolled limb arithmetic), FX_P_INV (p limbs then -p^-1 mod
 * 2^64), FX_MUL_XI(r, a) (r = a*xi in Fq2). Values stay fully reduced (< p), exactly as in zk/field.h, so both can be
 * mixed freely. */

#define FX_CAT2(a, b) a##_##b
#define FX_CAT(a, b) FX_CAT2(a, b)
#define FX_PASTE2(a, b) a##b
#define FX_PASTE(a, b) FX_PASTE2(a, b)
#define X1(name) FX_CAT(FX_CAT(FX, fq), name)
#define X2(name) FX_CAT(FX_CAT(FX, fq2), name)
#define B1(name) FX_CAT(FB, name)
#define B2(name) FX_CAT(FX_PASTE(FB, 2), name)
#define X1_T X1(t)
#define X2_T X2(t)

typedef B1(t) X1_T;
typedef B2(t) X2_T;

#if defined(ZK_ASM) && defined(__x86_64__)
/* zk/field.h has its own x86-64 kernels (zk/fp_x86_64.h) in this build, and they are faster: use them. */
static inline __attribute__((always_inline)) void X1(add)(X1_T *r, const X1_T *a, const X1_T *b) { B1(add)(r, a, b); }
static inline __attribute__((always_inline)) void X1(sub)(X1_T *r, const X1_T *a, const X1_T *b) { B1(sub)(r, a, b); }
static inline __attribute__((always_inline)) void X1(mul)(X1_T *r, const X1_T *a, const X1_T *b) { B1(mul)(r, a, b); }
static inline __attribute__((always_inline)) void X1(sqr)(X1_T *r, const X1_T *a) { B1(sqr)(r, a); }
#else
static inline __attribute__((always_inline)) void X1(add)(X1_T *r, const X1_T *a, const X1_T *b) {
    FX_ADD(r->l, a->l, b->l);
}

static inline __attribute__((always_inline)) void X1(sub)(X1_T *r, const X1_T *a, const X1_T *b) {
    FX_SUB(r->l, a->l, b->l);
}

static inline __attribute__((always_inline)) void X1(mul)(X1_T *r, const X1_T *a, const X1_T *b) {
    if (__builtin_expect(zkx_have_adx, 1)) {
        unsigned long long t[FX_N];
        FX_MUL_ADX(t, a->l, b->l, FX_P_INV);
        FX_REDUCE(r->l, t);
    } else {
        B1(mul)(r, a, b);
    }
}

static inline __attribute__((always_inline)) void X1(sqr)(X1_T *r, const X1_T *a) { X1(mul)(r, a, a); }
#endif

static inline __attribute__((always_inline)) void X1(dbl)(X1_T *r, const X1_T *a) { X1(add)(r, a, a); }

static inline __attribute__((always_inline)) void X1(neg)(X1_T *r, const X1_T *a) {
    X1_T z;
    memset(&z, 0, sizeof(z));
    X1(sub)(r, &z, a);
}

static inline void X1(inv)(X1_T *r, const X1_T *a) { B1(inv)(r, a); }
static inline bool X1(is_zero)(const X1_T *a) { return B1(is_zero)(a); }
static inline bool X1(eq)(const X1_T *a, const X1_T *b) { return B1(eq)(a, b); }
static inline void X1(one)(X1_T *r) { B1(one)(r); }
static inline void X1(zero)(X1_T *r) { B1(zero)(r); }

/* ---- Fq2 = Fq[u]/(u^2 + 1) ---- */

static inline void X2(zero)(X2_T *r) { memset(r, 0, sizeof(*r)); }
static inline void X2(one)(X2_T *r) { B2(one)(r); }
static inline bool X2(is_zero)(const X2_T *a) { return B2(is_zero)(a); }
static inline bool X2(eq)(const X2_T *a, const X2_T *b) { return B2(eq)(a, b); }
static inline __attribute__((always_inline)) void X2(add)(X2_T *r, const X2_T *a, const X2_T *b) {
    X1(add)(&r->c0, &a->c0, &b->c0);
    X1(add)(&r->c1, &a->c1, &b->c1);
}
static inline __attribute__((always_inline)) void X2(sub)(X2_T *r, const X2_T *a, const X2_T *b) {
    X1(sub)(&r->c0, &a->c0, &b->c0);
    X1(sub)(&r->c1, &a->c1, &b->c1);
}
static inline __attribute__((always_inline)) void X2(dbl)(X2_T *r, const X2_T *a) { X2(add)(r, a, a); }
static inline __attribute__((always_inline)) void X2(neg)(X2_T *r, const X2_T *a) {
    X1(neg)(&r->c0, &a->c0);
    X1(neg)(&r->c1, &a->c1);
}
static inline __attribute__((always_inline)) void X2(conj)(X2_T *r, const X2_T *a) {
    r->c0 = a->c0;
    X1(neg)(&r->c1, &a->c1);
}
static inline void X2(mul)(X2_T *r, const X2_T *a, const X2_T *b) {
    X1_T t0, t1, s0, s1;
    X1(mul)(&t0, &a->c0, &b->c0);
    X1(mul)(&t1, &a->c1, &b->c1);
    X1(add)(&s0, &a->c0, &a->c1);
    X1(add)(&s1, &b->c0, &b->c1);
    X1(mul)(&s0, &s0, &s1);
    X1(sub)(&r->c0, &t0, &t1);
    X1(sub)(&s0, &s0, &t0);
    X1(sub)(&r->c1, &s0, &t1);
}
static inline void X2(sqr)(X2_T *r, const X2_T *a) {
    X1_T s, d, p;
    X1(add)(&s, &a->c0, &a->c1);
    X1(sub)(&d, &a->c0, &a->c1);
    X1(mul)(&p, &a->c0, &a->c1);
    X1(mul)(&r->c0, &s, &d);
    X1(dbl)(&r->c1, &p);
}
static inline void X2(mul_base)(X2_T *r, const X2_T *a, const X1_T *b) {
    X1(mul)(&r->c0, &a->c0, b);
    X1(mul)(&r->c1, &a->c1, b);
}
static inline void X2(inv)(X2_T *r, const X2_T *a) { B2(inv)(r, a); }
static inline void X2(mul_xi)(X2_T *r, const X2_T *a) { FX_MUL_XI(r, a); }

#undef FX_CAT2
#undef FX_CAT
#undef FX_PASTE2
#undef FX_PASTE
#undef X1
#undef X2
#undef B1
#undef B2
#undef X1_T
#undef X2_T
