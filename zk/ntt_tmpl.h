/* The NTT over Fr for one curve, instantiated by zk/ntt.c with PFX (bn | bls) and TWO_ADICITY
 * (each_curve.h). The field prefix is PFX_fr. */

#define GT_CAT2(a, b) a##_##b
#define GT_CAT(a, b) GT_CAT2(a, b)
#define P_(name) GT_CAT(PFX, name)
#define FR(name) GT_CAT(GT_CAT(PFX, fr), name)
#define FR_T GT_CAT(PFX, fr_t)

/* w[k] = 5^((r-1)/2^k), a primitive 2^k-th root of unity (formats.md §5.2), Montgomery form. */
static void P_(root_of_unity)(FR_T *out, unsigned k) {
    uint64_t t[4];
    memcpy(t, FR(P).l, sizeof(t));
    t[0] -= 1; /* r - 1; r is odd */
    for (unsigned i = 0; i < TWO_ADICITY; i++) { /* t = (r-1) >> s */
        t[0] = (t[0] >> 1) | (t[1] << 63);
        t[1] = (t[1] >> 1) | (t[2] << 63);
        t[2] = (t[2] >> 1) | (t[3] << 63);
        t[3] >>= 1;
    }
    FR_T five, w;
    FR(set_u64)(&five, 5);
    FR(pow)(&w, &five, t, 4);
    for (unsigned i = k; i < TWO_ADICITY; i++) FR(sqr)(&w, &w);
    *out = w;
}

/* tw[k] = root^k for k < m. */
static void P_(powers)(FR_T *tw, const FR_T *root, size_t m, int threads) {
    if (m == 0) return;
    /* blocks of 1024 start from root^(1024 j), each filled sequentially */
    size_t blocks = (m + 1023) / 1024;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t j = 0; j < blocks; j++) {
        FR_T x;
        uint64_t e[1] = {(uint64_t)(j * 1024)};
        FR(pow)(&x, root, e, 1);
        size_t end = (j + 1) * 1024 < m ? (j + 1) * 1024 : m;
        for (size_t k = j * 1024; k < end; k++) {
            tw[k] = x;
            FR(mul)(&x, &x, root);
        }
    }
}

/* One radix-2 stage on a[0..n): butterflies of half-length len (a power of two) over blocks of
 * 2*len, for indices i in [lo, hi) of the n/2 butterflies. tw[j*stride] is the twiddle of butterfly
 * j in a block; butterfly 0 of every block has tw[0] = 1 and no multiplication (at len 1 that is the
 * whole stage; over a transform it is n/2 of the (n/2)·log2(n) products). Block and offset come
 * from a shift and a mask (len is a power of two), not a division per butterfly. */
static inline __attribute__((always_inline)) void P_(stage)(FR_T *a, size_t len, size_t stride, const FR_T *tw,
                                                           size_t lo, size_t hi, bool dit) {
    if (len == 1) {
        for (size_t i = lo; i < hi; i++) {
            FR_T *x = a + 2 * i, *y = x + 1, u = *x;
            FR(add)(x, &u, y);
            FR(sub)(y, &u, y);
        }
        return;
    }
    unsigned sh = (unsigned)__builtin_ctzll(len);
    for (size_t i = lo; i < hi; i++) {
        size_t blk = i >> sh, j = i & (len - 1);
        FR_T *x = a + (blk << (sh + 1)) + j, *y = x + len;
        FR_T u = *x, v;
        if (dit) { /* (x, y) -> (x + y·w, x − y·w) */
            if (j)
                FR(mul)(&v, y, &tw[j * stride]);
            else /* w^0 = 1: the first butterfly of every block has no product */
                v = *y;
            FR(add)(x, &u, &v);
            FR(sub)(y, &u, &v);
        } else { /* (x, y) -> (x + y, (x − y)·w) */
            v = *y;
            FR(add)(x, &u, &v);
            if (j) {
                FR(sub)(&u, &u, &v);
                FR(mul)(y, &u, &tw[j * stride]);
            } else {
                FR(sub)(y, &u, &v);
            }
        }
    }
}
/* Two radix-2 stages in one pass (radix 2^2), half-lengths len and len/2 (len >= 2), for the quads
 * [lo, hi) of n/4, as zk_ifma_fr_stage2 (zk/ntt_ifma.h) eight at a time: quad i of
 * block i / (len/2) (2·len elements) at offset j = i % (len/2) holds elements j, j + len/2, j + len,
 * j + 3len/2; twiddles tw[j·s], tw[(j + len/2)·s] (the len stage, stride s) and tw[2j·s] (the len/2
 * stage), the first two and the last 1 at j = 0 (no product). DIF runs the len stage first, DIT the
 * len/2 one. Each element is read and written once for the two stages. */
static inline __attribute__((always_inline)) void P_(stage2)(FR_T *a, size_t len, size_t stride, const FR_T *tw,
                                                            size_t lo, size_t hi, bool dit) {
    size_t h = len / 2;
    unsigned sh = (unsigned)__builtin_ctzll(h);
    for (size_t i = lo; i < hi; i++) {
        size_t j = i & (h - 1);
        FR_T *p = a + ((i >> sh) << (sh + 2)) + j;
        FR_T x0 = p[0], x1 = p[h], x2 = p[len], x3 = p[len + h], s, d;
        const FR_T *t1 = &tw[j * stride], *t2 = &tw[(j + h) * stride], *t3 = &tw[2 * j * stride];
        if (!dit) {
            FR(add)(&s, &x0, &x2), FR(sub)(&d, &x0, &x2), x0 = s;
            if (j) FR(mul)(&x2, &d, t1);
            else x2 = d;
            FR(add)(&s, &x1, &x3), FR(sub)(&d, &x1, &x3), x1 = s;
            FR(mul)(&x3, &d, t2);
            FR(add)(&s, &x0, &x1), FR(sub)(&d, &x0, &x1), x0 = s;
            if (j) FR(mul)(&x1, &d, t3);
            else x1 = d;
            FR(add)(&s, &x2, &x3), FR(sub)(&d, &x2, &x3), x2 = s;
            if (j) FR(mul)(&x3, &d, t3);
            else x3 = d;
        } else {
            if (j) FR(mul)(&x1, &x1, t3), FR(mul)(&x3, &x3, t3);
            FR(add)(&s, &x0, &x1), FR(sub)(&x1, &x0, &x1), x0 = s;
            FR(add)(&s, &x2, &x3), FR(sub)(&x3, &x2, &x3), x2 = s;
            if (j) FR(mul)(&x2, &x2, t1);
            FR(mul)(&x3, &x3, t2);
            FR(add)(&s, &x0, &x2), FR(sub)(&x2, &x0, &x2), x0 = s;
            FR(add)(&s, &x1, &x3), FR(sub)(&x3, &x1, &x3), x1 = s;
        }
        p[0] = x0, p[h] = x1, p[len] = x2, p[len + h] = x3;
    }
}

static inline void P_(dif_stage)(FR_T *a, size_t len, size_t stride, const FR_T *tw, size_t lo, size_t hi) {
    P_(stage)(a, len, stride, tw, lo, hi, false);
}
static inline void P_(dit_stage)(FR_T *a, size_t len, size_t stride, const FR_T *tw, size_t lo, size_t hi) {
    P_(stage)(a, len, stride, tw, lo, hi, true);
}

/* Blocks of the lower stages that one thread finishes alone: enough of them to balance the
 * threads, so that only the top few stages need a barrier each. */
static inline size_t P_(ntt_split)(size_t n, int threads) {
    size_t blocks = 1;
    while (blocks < (size_t)threads * 4 && blocks < n / 2) blocks *= 2;
    return threads > 1 ? blocks : 1;
}

/* With the ifma kernel set the stages run eight butterflies to a vector (zk/ntt_ifma.h) on the
 * array in lanes order, converted in place before and after; the three stages of half-length 4, 2,
 * 1 run inside each block of 8 in registers. */
static const zk_ifma_fr_mod_t *const P_(ntt_ifma_fr) =
    _Generic((FR_T *)0, bn_fr_t *: &zk_ifma_bn_fr, bls_fr_t *: &zk_ifma_bls_fr);
static inline bool P_(ntt_vec)(size_t n, size_t blocks) { return zk_kernels_ifma && n >= 64 && n / blocks >= 16; }
/* The share [lo, hi) of thread t of n/2 butterflies (multiples of 8 for the vector stages). */
static inline size_t P_(ntt_share)(size_t n, int t, int threads, bool vec) {
    size_t v = n / 2 * (size_t)t / (size_t)threads;
    return vec && t < threads ? v & ~(size_t)7 : v;
}
static inline void P_(dif_any)(bool vec, FR_T *a, size_t len, size_t stride, const FR_T *tw, size_t lo, size_t hi) {
    if (vec)
        zk_ifma_fr_dif_stage(P_(ntt_ifma_fr), a, len, stride, tw, lo, hi);
    else
        P_(dif_stage)(a, len, stride, tw, lo, hi);
}
static inline void P_(dit_any)(bool vec, FR_T *a, size_t len, size_t stride, const FR_T *tw, size_t lo, size_t hi) {
    if (vec)
        zk_ifma_fr_dit_stage(P_(ntt_ifma_fr), a, len, stride, tw, lo, hi);
    else
        P_(dit_stage)(a, len, stride, tw, lo, hi);
}

/* Whether a transform of n elements on `threads` threads runs the vector stages (in lanes order). */
static inline bool P_(ntt_lanes)(size_t n, int threads) {
    return n >= 2 && P_(ntt_vec)(n, n >= 4096 ? P_(ntt_split)(n, threads) : 1);
}
#define NTT_IN_LANES 1u  /* the input is in lanes order already (only where ntt_lanes) */
#define NTT_OUT_LANES 2u /* leave the output in lanes order (only where ntt_lanes) */

/* Decimation in frequency: natural order in, bit-reversed out. tw[k] = w^k, k < n/2, for the
 * n-th root w. The top stages run with all threads; then each block of n/blocks elements is
 * finished by one thread (no barriers, and the block stays in cache). */
static void P_(ntt_dif_x)(FR_T *a, size_t n, const FR_T *tw, int threads, unsigned lanes) {
    if (n < 2) return;
    size_t blocks = n >= 4096 ? P_(ntt_split)(n, threads) : 1;
    bool vec = P_(ntt_vec)(n, blocks);
    if (vec && !(lanes & NTT_IN_LANES)) zk_ifma_fr_to_lanes(a, n);
    size_t len = n / 2, stride = 1;
    for (; 2 * len > n / blocks; len /= 2, stride *= 2) {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int t = 0; t < threads; t++)
            P_(dif_any)(vec, a, len, stride, tw, P_(ntt_share)(n, t, threads, vec),
                        P_(ntt_share)(n, t + 1, threads, vec));
    }
    size_t bs = n / blocks;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (blocks > 1)
    for (size_t b = 0; b < blocks; b++) {
        size_t l = len, st = stride;
        /* two stages a pass (while both are vector stages, with the ifma set) */
        if (vec)
            for (; l >= 16; l /= 4, st *= 4)
                zk_ifma_fr_stage2(P_(ntt_ifma_fr), a + b * bs, l, st, tw, 0, bs / 4, false);
        else
            for (; l >= 2; l /= 4, st *= 4) P_(stage2)(a + b * bs, l, st, tw, 0, bs / 4, false);
        for (; l >= (vec ? 8 : 1); l /= 2, st *= 2) P_(dif_any)(vec, a + b * bs, l, st, tw, 0, bs / 2);
        if (vec) zk_ifma_fr_dif_small(P_(ntt_ifma_fr), a + b * bs, bs, st, tw);
    }
    if (vec && !(lanes & NTT_OUT_LANES)) zk_ifma_fr_from_lanes(a, n);
}
void P_(ntt_dif)(FR_T *a, size_t n, const FR_T *tw, int threads) { P_(ntt_dif_x)(a, n, tw, threads, 0); }

/* Decimation in time: bit-reversed in, natural order out; same twiddles as ntt_dif. */
static void P_(ntt_dit_x)(FR_T *a, size_t n, const FR_T *tw, int threads, unsigned lanes) {
    if (n < 2) return;
    size_t blocks = n >= 4096 ? P_(ntt_split)(n, threads) : 1;
    bool vec = P_(ntt_vec)(n, blocks);
    if (vec && !(lanes & NTT_IN_LANES)) zk_ifma_fr_to_lanes(a, n);
    size_t bs = n / blocks;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (blocks > 1)
    for (size_t b = 0; b < blocks; b++) {
        size_t l = 1, st = n / 2;
        /* two stages a pass (half-lengths l, 2l; stride st/2 is the 2l stage's) */
        if (vec) {
            zk_ifma_fr_dit_small(P_(ntt_ifma_fr), a + b * bs, bs, st, tw), l = 8, st /= 8;
            for (; 4 * l <= bs; l *= 4, st /= 4)
                zk_ifma_fr_stage2(P_(ntt_ifma_fr), a + b * bs, 2 * l, st / 2, tw, 0, bs / 4, true);
        } else {
            for (; 4 * l <= bs; l *= 4, st /= 4) P_(stage2)(a + b * bs, 2 * l, st / 2, tw, 0, bs / 4, true);
        }
        for (; l < bs; l *= 2, st /= 2) P_(dit_any)(vec, a + b * bs, l, st, tw, 0, bs / 2);
    }
    for (size_t len = bs, stride = n / (2 * bs); len < n; len *= 2, stride /= 2) {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int t = 0; t < threads; t++)
            P_(dit_any)(vec, a, len, stride, tw, P_(ntt_share)(n, t, threads, vec),
                        P_(ntt_share)(n, t + 1, threads, vec));
    }
    if (vec && !(lanes & NTT_OUT_LANES)) zk_ifma_fr_from_lanes(a, n);
}
void P_(ntt_dit)(FR_T *a, size_t n, const FR_T *tw, int threads) { P_(ntt_dit_x)(a, n, tw, threads, 0); }

static inline size_t P_(bitrev)(size_t i, unsigned logn) {
    return logn ? (size_t)(zk_bitrev64(i) >> (64 - logn)) : 0;
}

/* Natural-order evaluations X on {w^i} -> evaluations on the odd coset {w_2n^(2i+1)}, in place:
 * iNTT (bit-reversed coefficients), scale coefficient k by n^-1 * inc^k, NTT back to natural order.
 * The scale factors are formed on the fly (coef[2] = {inc, n^-1}), one more multiplication per
 * element instead of an n-element table, walking the array in order: the factor of position p is
 * f(p) = n^-1 * inc^bitrev(p), and from p to p + 1, with t the trailing ones of p, bitrev grows by
 * 3·2^(logn-1-t) - n, so f(p + 1) = f(p) * step[t], step[t] = -inc^(3·2^(logn-1-t)) (inc^n = -1).
 * Each block runs SCALE_CHAINS independent chains (one product each per element, which would
 * otherwise wait on the one before). */
#define SCALE_CHAINS 4
/* The same scaling on x in lanes order (the vector transforms leave it there and take it back):
 * lanes-block q (elements 8q .. 8q+7) holds the factors f(8q + l) = f(8q)·C_l, C_l =
 * inc^(bitrev3(l)·n/8) (the low three bits of a position are the top three of its bit reversal), and
 * from q to q + 1 every lane's factor is multiplied by the same stepq[t] = inc^(3·2^(m-1-t) - 2^m),
 * m = logn - 3, t the trailing ones of q (f(8q) = n^-1·inc^(bitrev_m(q))). Eight lanes at a time,
 * ZK_IFMA_SCALE_CHAINS chains per block; n >= 2048. */
static void P_(odd_coset_scale_lanes)(FR_T *x, size_t n, unsigned logn, const FR_T *coef, int threads) {
    unsigned mb = logn - 3;
    FR_T c1, c1i, cl8[8], stepq[64];
    FR(set_u64)(&c1, 1);
    for (unsigned i = 0; i < mb; i++) FR(sqr)(&c1, i ? &c1 : &coef[0]); /* inc^(2^m) */
    if (mb == 0) c1 = coef[0];
    FR(inv)(&c1i, &c1);
    for (unsigned l = 0; l < 8; l++) { /* C_l = c1^bitrev3(l) */
        unsigned e = ((l & 1) << 2) | (l & 2) | ((l >> 2) & 1);
        uint64_t ex[1] = {e};
        FR(pow)(&cl8[l], &c1, ex, 1);
    }
    for (unsigned t = 0; t < mb; t++) { /* inc^(3·2^(m-1-t)) / inc^(2^m) */
        FR_T a;
        FR(sqr)(&a, &coef[0]);
        FR(mul)(&a, &a, &coef[0]);
        for (unsigned i = t + 1; i < mb; i++) FR(sqr)(&a, &a);
        FR(mul)(&stepq[t], &a, &c1i);
    }
    size_t nq = n / 8, blocks = 64, bq = nq / blocks, cl = bq / ZK_IFMA_SCALE_CHAINS;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t b = 0; b < blocks; b++) {
        FR_T f0[8 * ZK_IFMA_SCALE_CHAINS];
        for (unsigned c = 0; c < ZK_IFMA_SCALE_CHAINS; c++) {
            uint64_t e[1] = {(uint64_t)(mb ? zk_bitrev64(b * bq + c * cl) >> (64 - mb) : 0)};
            FR_T f;
            FR(pow)(&f, &coef[0], e, 1);
            FR(mul)(&f, &f, &coef[1]);
            for (unsigned l = 0; l < 8; l++) FR(mul)(&f0[8 * c + l], &f, &cl8[l]);
        }
        zk_ifma_fr_coset_scale(P_(ntt_ifma_fr), x, b * bq, cl, ZK_IFMA_SCALE_CHAINS, f0, stepq);
    }
}

bool P_(to_odd_coset_lanes)(FR_T *x, size_t n, unsigned logn, const FR_T *tw, const FR_T *itw, const FR_T *coef,
                           int threads) {
    if (n >= 2048 && P_(ntt_lanes)(n, threads)) {
        P_(ntt_dif_x)(x, n, itw, threads, NTT_OUT_LANES);
        P_(odd_coset_scale_lanes)(x, n, logn, coef, threads);
        P_(ntt_dit_x)(x, n, tw, threads, NTT_IN_LANES | NTT_OUT_LANES);
        return true;
    }
    P_(ntt_dif)(x, n, itw, threads);
    FR_T step[64];
    for (unsigned t = 0; t < logn; t++) { /* step[t] = -inc^(3·2^(logn-1-t)) */
        FR_T c2;
        FR(sqr)(&c2, &coef[0]);
        FR(mul)(&step[t], &c2, &coef[0]); /* inc^3 */
        for (unsigned i = t + 1; i < logn; i++) FR(sqr)(&step[t], &step[t]);
        FR(neg)(&step[t], &step[t]);
    }
    size_t blocks = n >= 1024 ? 64 : 1, bs = n / blocks, cl = bs >= SCALE_CHAINS ? bs / SCALE_CHAINS : bs;
    unsigned chains = (unsigned)(bs / cl);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t b = 0; b < blocks; b++) {
        FR_T f[SCALE_CHAINS];
        for (unsigned c = 0; c < chains; c++) {
            uint64_t e[1] = {(uint64_t)P_(bitrev)(b * bs + c * cl, logn)};
            FR(pow)(&f[c], &coef[0], e, 1);
            FR(mul)(&f[c], &f[c], &coef[1]);
        }
        for (size_t k = 0; k < cl; k++)
            for (unsigned c = 0; c < chains; c++) {
                size_t p = b * bs + c * cl + k;
                FR(mul)(&x[p], &x[p], &f[c]);
                if (k + 1 < cl) FR(mul)(&f[c], &f[c], &step[__builtin_ctzll(~(uint64_t)p)]);
            }
    }
    P_(ntt_dit)(x, n, tw, threads);
    return false;
}

void P_(to_odd_coset)(FR_T *x, size_t n, unsigned logn, const FR_T *tw, const FR_T *itw, const FR_T *coef,
                      int threads) {
    if (P_(to_odd_coset_lanes)(x, n, logn, tw, itw, coef, threads)) zk_ifma_fr_from_lanes(x, n);
}
#undef SCALE_CHAINS
#undef NTT_IN_LANES
#undef NTT_OUT_LANES

/* tw = w^k, itw = w^-k (k <= n/2), coef = {inc, n^-1} with inc = w_2n. */
void P_(odd_coset_tables)(FR_T *tw, FR_T *itw, FR_T *coef, unsigned logn, int threads) {
    size_t n = (size_t)1 << logn;
    FR_T w, iw;
    P_(root_of_unity)(&w, logn);
    FR(inv)(&iw, &w);
    P_(root_of_unity)(&coef[0], logn + 1);
    FR(set_u64)(&coef[1], n);
    FR(inv)(&coef[1], &coef[1]);
    P_(powers)(tw, &w, n / 2 + 1, threads);
    P_(powers)(itw, &iw, n / 2 + 1, threads);
}

#undef FR_T
#undef FR
#undef P_
#undef GT_CAT
#undef GT_CAT2
