/* Multi-scalar multiplication Σ k_i·P_i by Pippenger's bucket method with signed digits,
 * instantiated per group by zk/msm.c with G (group prefix) and F (coordinate field prefix).
 * Scalars: 32-byte little-endian standard-form integers < 2^255. Bases: affine, all-zero = infinity.
 * Zero digits and infinity bases are skipped. Windows run in parallel (OpenMP), each with its own
 * buckets, and are combined by Horner's rule at the end.
 *
 * Buckets are accumulated in affine coordinates with batched inversions ("batch affine"): a
 * bucket addition costs one share of a batch inversion (3 mul) plus 2 mul + 1 sqr, against
 * 8 mul + 2 sqr for a mixed XYZZ addition. A point whose bucket is already waiting in the current
 * batch is deferred to just after it (see msm_ctx_t); one that would need a doubling, or collides
 * again, goes into that bucket's XYZZ side accumulator, so no queue ever builds up, even when most
 * scalars are 1. */

#define MSM_CAT2(a, b) a##_##b
#define MSM_CAT(a, b) MSM_CAT2(a, b)
#define GF(name) MSM_CAT(G, name)
#define FF(name) MSM_CAT(F, name)
#define F_T MSM_CAT(F, t)
#define AFF_T MSM_CAT(G, aff_t)
#define XYZZ_T MSM_CAT(G, xyzz_t)

#define MSM_BATCH 1024 /* the most; the batch used is limit = nb/8 within [64, 1024] */
_Static_assert(MSM_BATCH <= ZK_IFMA_BATCH_MAX, "a batch fits zk_ifma_*_flush");

/* The group's vector flush (zk/msm_ifma.h) when the ifma kernel set is selected, else none. */
static const zk_vec_flush_fn GF(msm_vec_flush) =
    _Generic((AFF_T *)0, bn_g1_aff_t *: zk_ifma_bn_g1_flush, bn_g2_aff_t *: zk_ifma_bn_g2_flush,
             default: (zk_vec_flush_fn)0);

/* A point whose bucket is already waiting in the batch is deferred (kept at pt/bidx[MSM_BATCH +
 * k]) and tried once more right after the batch is applied (msm_flush, also when the batch
 * fills), when its bucket is free again; only
 * what still collides then (or what finds the deferred area full) takes the XYZZ side path. So
 * the side path, ten scalar multiplications a point, stays rare (it took ~6 % of the additions of a
 * dense MSM, and every bucket's reduction step a scalar fix-up). */
#define MSM_DEFER_SHIFT 16 /* nbatch: additions in the batch (low 16 bits), deferred points (above) */

typedef struct {
    AFF_T *bucket;  /* nb affine buckets */
    XYZZ_T *side;   /* nb XYZZ side accumulators */
    uint8_t *state; /* per bucket: bit0 affine bucket occupied, bit1 in current batch, bit2 side used */
    /* [0, batch): the batch; [MSM_BATCH, MSM_BATCH + deferred): the deferred points */
    uint32_t bidx[2 * MSM_BATCH];
    AFF_T pt[2 * MSM_BATCH];
    F_T den[MSM_BATCH], tmp[MSM_BATCH];
    unsigned nbatch; /* 0 to start (empty batch, nothing deferred); see MSM_DEFER_SHIFT */
    unsigned limit;  /* additions per batch, at most MSM_BATCH */
} GF(msm_ctx_t);

/* The additions per batch for nb buckets: nb/8 within [64, MSM_BATCH]. A larger batch spreads the
 * inversion over more additions, but more points then find their bucket already waiting (about
 * limit/(2*nb) of them) and are deferred. Every user of msm_ctx_t with nb buckets takes its limit
 * from here or sets one below it (a limit above MSM_BATCH overruns den and tmp). */
static inline unsigned GF(msm_batch_limit)(size_t nb) {
    return (unsigned)(nb / 8 < 64 ? 64 : nb / 8 > MSM_BATCH ? MSM_BATCH : nb / 8);
}

/* An accumulator with nb buckets (state all clear, limit from msm_batch_limit); out of memory is
 * fatal here (bounded allocations). */
static GF(msm_ctx_t) *GF(msm_ctx_new)(size_t nb) {
    GF(msm_ctx_t) *x = malloc(sizeof(*x));
    if (!x) abort();
    x->bucket = malloc(nb * sizeof(AFF_T));
    x->side = malloc(nb * sizeof(XYZZ_T));
    x->state = calloc(nb, 1);
    if (!x->bucket || !x->side || !x->state) abort();
    x->limit = GF(msm_batch_limit)(nb);
    x->nbatch = 0;
    return x;
}

static void GF(msm_ctx_free)(GF(msm_ctx_t) *x) {
    free(x->bucket);
    free(x->side);
    free(x->state);
    free(x);
}

/* Applies the batch (the deferred points stay). */
static void GF(msm_apply)(GF(msm_ctx_t) *x) {
    unsigned m = x->nbatch & ((1u << MSM_DEFER_SHIFT) - 1);
    if (!m) return;
    x->nbatch -= m;
    if (GF(msm_vec_flush) && zk_kernels_ifma) {
        GF(msm_vec_flush)(x->bucket, x->bidx, x->pt, x->den, m);
        for (unsigned j = 0; j < m; j++) x->state[x->bidx[j]] &= (uint8_t)~2;
        return;
    }
    FF(batch_inv)(x->den, x->tmp, m);
    for (unsigned j = 0; j < m; j++) {
        AFF_T *b = &x->bucket[x->bidx[j]];
        const AFF_T *p = &x->pt[j];
        F_T lam, t, x3;
        FF(sub)(&t, &p->y, &b->y);
        FF(mul)(&lam, &t, &x->den[j]);
        FF(sqr)(&x3, &lam);
        FF(sub)(&x3, &x3, &b->x);
        FF(sub)(&x3, &x3, &p->x);
        FF(sub)(&t, &b->x, &x3);
        FF(mul)(&t, &t, &lam);
        FF(sub)(&b->y, &t, &b->y);
        b->x = x3;
        x->state[x->bidx[j]] &= (uint8_t)~2;
    }
}

static inline void GF(msm_side_add)(GF(msm_ctx_t) *x, uint32_t b, const AFF_T *p) {
    if (!(x->state[b] & 4)) {
        GF(xyzz_from_aff)(&x->side[b], p);
        x->state[b] |= 4;
    } else {
        GF(xyzz_add_aff)(&x->side[b], &x->side[b], p);
    }
}

static void GF(msm_cycle)(GF(msm_ctx_t) *x);

/* bucket b (occupied, not in the batch) += p: into the batch, or the side path for P == ±bucket. A
 * full batch is applied and the deferred points start the next one (msm_cycle); inside msm_cycle
 * it is only applied. */
static inline void GF(msm_batch_add)(GF(msm_ctx_t) *x, uint32_t b, const AFF_T *p, bool in_flush) {
    unsigned j = x->nbatch & ((1u << MSM_DEFER_SHIFT) - 1);
    FF(sub)(&x->den[j], &p->x, &x->bucket[b].x);
    if (FF(is_zero)(&x->den[j])) { /* P == ±bucket: doubling or cancellation, off the batch path */
        GF(msm_side_add)(x, b, p);
        return;
    }
    x->bidx[j] = b;
    x->pt[j] = *p;
    x->state[b] |= 2;
    x->nbatch++;
    if (j + 1 == x->limit) {
        if (in_flush)
            GF(msm_apply)(x);
        else
            GF(msm_cycle)(x);
    }
}

static inline void GF(msm_add)(GF(msm_ctx_t) *x, uint32_t b, const AFF_T *p) {
    uint8_t s = x->state[b];
    if (!(s & 1)) {
        x->bucket[b] = *p;
        x->state[b] = s | 1;
        return;
    }
    if (s & 2) {
        unsigned nd = x->nbatch >> MSM_DEFER_SHIFT;
        if (nd < MSM_BATCH) {
            x->bidx[MSM_BATCH + nd] = b;
            x->pt[MSM_BATCH + nd] = *p;
            x->nbatch += 1u << MSM_DEFER_SHIFT;
        } else {
            GF(msm_side_add)(x, b, p);
        }
        return;
    }
    GF(msm_batch_add)(x, b, p, false);
}

/* Applies the batch, then puts the deferred points (each tried once more) into the next one. */
static void GF(msm_cycle)(GF(msm_ctx_t) *x) {
    GF(msm_apply)(x);
    unsigned nd = x->nbatch >> MSM_DEFER_SHIFT;
    x->nbatch = 0;
    for (unsigned k = 0; k < nd; k++) {
        uint32_t b = x->bidx[MSM_BATCH + k];
        const AFF_T *p = &x->pt[MSM_BATCH + k];
        uint8_t s = x->state[b];
        if (s & 2)
            GF(msm_side_add)(x, b, p); /* collides again: the side path */
        else
            GF(msm_batch_add)(x, b, p, true); /* the bucket is occupied: it was when p was deferred */
    }
}

/* Everything added so far lands in the buckets (the end of a window). */
static void GF(msm_flush)(GF(msm_ctx_t) *x) {
    GF(msm_cycle)(x);
    GF(msm_apply)(x);
}

static const zk_vec_reduce_fn GF(msm_vec_reduce) =
    _Generic((AFF_T *)0, bn_g1_aff_t *: zk_ifma_bn_g1_reduce, bn_g2_aff_t *: zk_ifma_bn_g2_reduce,
             default: (zk_vec_reduce_fn)0);

/* Σ (i+1)·bucket[i] by the running-sum trick (eight runs at once in vectors with the ifma set). */
static void GF(msm_reduce)(XYZZ_T *out, GF(msm_ctx_t) *x, size_t nb) {
    if (GF(msm_vec_reduce) && zk_kernels_ifma && nb >= ZK_IFMA_REDUCE_MIN && !(nb & (nb - 1))) {
        GF(msm_vec_reduce)(out, x->bucket, x->side, x->state, nb);
        return;
    }
    XYZZ_T sum, acc;
    GF(xyzz_set_inf)(&sum);
    GF(xyzz_set_inf)(&acc);
    for (size_t i = nb; i-- > 0;) {
        if (x->state[i] & 1) GF(xyzz_add_aff)(&sum, &sum, &x->bucket[i]);
        if (x->state[i] & 4) GF(xyzz_add)(&sum, &sum, &x->side[i]);
        GF(xyzz_add)(&acc, &acc, &sum);
    }
    *out = acc;
}

/* Where the group has the GLV endomorphism (zk/msm.c: GF(glv) not NULL) and n <= MSM_GLV_MAX, the n
 * scalars become 2n half-length ones: k_i·P_i = k1·P_i + k2·phi(P_i), phi(P) = (beta·x, y) formed
 * once per point, the signs of k1, k2 folded into the digits. Half as many windows, twice as many
 * points: the bucket reductions (2^(c-1) per window) halve. Measured (bench/msm_ntt, CPU time, 1
 * thread, bn128 G1): 2^13 57 -> 41 ms, 2^14 111 -> 73 ms, 2^15 147 -> 135 ms, but 2^16 and 2^17
 * unchanged, where it would only add n points of memory: above MSM_GLV_MAX it is not used. With the
 * ifma kernels the bucket additions and reductions cost less, and GLV measured no faster above 2^14
 * (bn128 G1, 1 thread, CPU ms, plain vs GLV: 2^14 44.2 vs 42.9, 2^15 74.5 vs 80, 2^16 140 vs 155). */
#define MSM_GLV_MAX ((size_t)1 << 15)
#define MSM_GLV_MAX_IFMA ((size_t)1 << 14)
/* The MSM over the pairs sel[i] (i < n; all of 0..n-1 when sel is NULL). */
static void GF(msm_pippenger)(XYZZ_T *out, const AFF_T *bases, const uint8_t *scalars, const uint32_t *sel, size_t n,
                              int threads) {
    GF(xyzz_set_inf)(out);
    if (n == 0) return;
    size_t glv_max = GF(msm_vec_flush) && zk_kernels_ifma ? MSM_GLV_MAX_IFMA : MSM_GLV_MAX;
    const zk_glv_t *glv = n <= glv_max ? GF(glv) : NULL;
    size_t m = glv ? 2 * n : n; /* (point, scalar) pairs: P_i for i < n, phi(P_(i-n)) after */
    unsigned bits = glv ? 128 : 255;
    unsigned c = zk_msm_window(m, sizeof(AFF_T), bits);
    unsigned nwin = (bits + c) / c; /* nwin*c > bits: the top digit never carries */
    int16_t *digits = malloc(m * nwin * sizeof(int16_t));
    XYZZ_T *wsum = malloc(nwin * sizeof(XYZZ_T));
    AFF_T *phi = glv ? malloc(n * sizeof(AFF_T)) : NULL;
    if (!digits || !wsum || (glv && !phi)) abort(); /* bounded allocations: out of memory is fatal here */
    if (threads < 1) threads = 1;

    /* digits[w * m + i]: digit w of pair i, so that each window's pass reads its digits in order */
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; i++) {
        uint64_t k[4];
        int16_t d[2][256 / 2 + 1];
        size_t s = sel ? sel[i] : i;
        memcpy(k, scalars + 32 * s, 32);
        if (GF(aff_is_inf)(&bases[s])) memset(k, 0, sizeof(k));
        if (!glv) {
            zk_msm_signed_digits(d[0], k, c, nwin);
            for (unsigned w = 0; w < nwin; w++) digits[w * m + i] = d[0][w];
            continue;
        }
        uint64_t k1[4], k2[4];
        bool neg1, neg2;
        zk_glv_split(glv, k, k1, &neg1, k2, &neg2);
        zk_msm_signed_digits(d[0], k1, c, nwin);
        zk_msm_signed_digits(d[1], k2, c, nwin);
        for (unsigned w = 0; w < nwin; w++) {
            digits[w * m + i] = neg1 ? (int16_t)-d[0][w] : d[0][w];
            digits[w * m + n + i] = neg2 ? (int16_t)-d[1][w] : d[1][w];
        }
        FF(mul)(&phi[i].x, &bases[s].x, &GF(glv_beta)); /* infinity (0, 0) stays (0, 0) */
        phi[i].y = bases[s].y;
    }

    size_t nb = (size_t)1 << (c - 1);
#pragma omp parallel num_threads(threads)
    {
        GF(msm_ctx_t) *x = GF(msm_ctx_new)(nb);
#pragma omp for schedule(dynamic, 1)
        for (unsigned w = 0; w < nwin; w++) {
            memset(x->state, 0, nb);
            x->nbatch = 0;
            const int16_t *dw = digits + (size_t)w * m;
            for (size_t i = 0; i < m; i++) {
                int d = dw[i];
                if (d == 0) continue;
                const AFF_T *p = i >= n ? &phi[i - n] : sel ? &bases[sel[i]] : &bases[i];
                if (d > 0) {
                    GF(msm_add)(x, (uint32_t)(d - 1), p);
                } else {
                    AFF_T neg;
                    GF(aff_neg)(&neg, p);
                    GF(msm_add)(x, (uint32_t)(-d - 1), &neg);
                }
            }
            GF(msm_flush)(x);
            GF(msm_reduce)(&wsum[w], x, nb);
        }
        GF(msm_ctx_free)(x);
    }

    XYZZ_T acc = wsum[nwin - 1];
    for (unsigned w = nwin - 1; w-- > 0;) {
        for (unsigned j = 0; j < c; j++) GF(xyzz_dbl)(&acc, &acc);
        GF(xyzz_add)(&acc, &acc, &wsum[w]);
    }
    *out = acc;
    free(digits);
    free(wsum);
    free(phi);
}


/* Σ P_list[j] (all scalars 1) by batch-affine additions into up to 256 accumulators, taken round
 * robin so that consecutive points never wait for the same one, then summed. */
static void GF(msm_sum)(XYZZ_T *out, const AFF_T *bases, const uint32_t *list, size_t cnt) {
    size_t k = 256;
    while (k > 8 && k > cnt / 4) k /= 2;
    GF(msm_ctx_t) *x = GF(msm_ctx_new)(k);
    x->limit = (unsigned)k; /* k <= 256 buckets in turn: each batch fills every bucket once */
    for (size_t j = 0; j < cnt; j++) GF(msm_add)(x, (uint32_t)(j % k), &bases[list[j]]);
    GF(msm_flush)(x);
    XYZZ_T acc;
    GF(xyzz_set_inf)(&acc);
    for (size_t b = 0; b < k; b++) {
        if (x->state[b] & 1) GF(xyzz_add_aff)(&acc, &acc, &x->bucket[b]);
        if (x->state[b] & 4) GF(xyzz_add)(&acc, &acc, &x->side[b]);
    }
    *out = acc;
    GF(msm_ctx_free)(x);
}

/* Scalars 0 (and infinity bases) cost nothing and scalars 1 are summed apart (GF(msm_sum)): a
 * witness of bits (SHA-256: 60 % zeros, 40 % ones) leaves Pippenger little or nothing. The rest go
 * to Pippenger through an index list (none when every scalar is neither 0 nor 1). */
void GF(msm)(XYZZ_T *out, const AFF_T *bases, const uint8_t *scalars, size_t n, int threads) {
    GF(xyzz_set_inf)(out);
    if (n == 0) return;
    size_t nones = 0, nrest = 0;
    static const uint8_t one[32] = {1}, zero[32];
    for (size_t i = 0; i < n; i++) {
        const uint8_t *k = scalars + 32 * i;
        uint64_t hi = 0, lo;
        for (int j = 1; j < 4; j++) {
            uint64_t v;
            memcpy(&v, k + 8 * j, 8);
            hi |= v;
        }
        memcpy(&lo, k, 8);
        if (hi == 0 && lo <= 1)
            nones += lo;
        else
            nrest++;
    }
    if (nrest == n) {
        GF(msm_pippenger)(out, bases, scalars, NULL, n, threads);
        return;
    }
    uint32_t *rest = malloc((nrest + 1) * sizeof(uint32_t)), *ones = malloc((nones + 1) * sizeof(uint32_t));
    if (!rest || !ones) abort();
    size_t a = 0, b = 0;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *k = scalars + 32 * i;
        if (memcmp(k, one, 32) == 0) {
            if (!GF(aff_is_inf)(&bases[i])) ones[b++] = (uint32_t)i;
        } else if (memcmp(k, zero, 32) != 0) {
            rest[a++] = (uint32_t)i;
        }
    }
    XYZZ_T s1;
    GF(msm_pippenger)(out, bases, scalars, rest, a, threads);
    GF(msm_sum)(&s1, bases, ones, b);
    GF(xyzz_add)(out, out, &s1);
    free(rest);
    free(ones);
}
#undef MSM_BATCH
#undef MSM_DEFER_SHIFT
#undef MSM_GLV_MAX
#undef MSM_GLV_MAX_IFMA
#undef XYZZ_T
#undef AFF_T
#undef F_T
#undef FF
#undef GF
#undef MSM_CAT
#undef MSM_CAT2
