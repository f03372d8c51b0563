/* Multi-scalar multiplication Σ k_i·P_i by Pippenger's bucket method with signed digits,
 * instantiated per group by zk/msm.c with G (group prefix) and F (coordinate field prefix).
 * Scalars: 32-byte little-endian standard-form integers < 2^255. Bases: affine, all-zero = infinity.
 * Zero digits and infinity bases are skipped. Windows run in parallel (OpenMP), each with its own
 * buckets (where they do not divide among the threads, the last are cut into runs of points), and
 * are combined by Horner's rule at the end.
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

#define MSM_BATCH ZK_MSM_BATCH /* the most; the batch used is zk_msm_batch_limit(nb) (zk/msm.h) */
_Static_assert(MSM_BATCH <= ZK_IFMA_BATCH_MAX, "a batch fits zk_ifma_*_flush");
_Static_assert(MSM_BATCH <= ZK_AVX2_BATCH_MAX, "a batch fits zk_avx2_*_flush");

/* The group's vector flush (zk/msm_ifma.h) when the ifma kernel set is selected, else none. */
static const zk_vec_flush_fn GF(msm_vec_flush) =
    _Generic((AFF_T *)0, bn_g1_aff_t *: zk_ifma_bn_g1_flush, bn_g2_aff_t *: zk_ifma_bn_g2_flush,
             bls_g1_aff_t *: zk_ifma_bls_g1_flush, bls_g2_aff_t *: zk_ifma_bls_g2_flush, default: (zk_vec_flush_fn)0);

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

/* The additions per batch for nb buckets (zk_msm_batch_limit). Every user of msm_ctx_t with nb
 * buckets takes its limit from here or sets one below it (a limit above MSM_BATCH overruns den and
 * tmp). */
static inline unsigned GF(msm_batch_limit)(size_t nb) { return zk_msm_batch_limit(nb); }

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

/* base[idx[j]] += pt[j] for j < m, in affine coordinates, den[j] = pt[j].x − base[idx[j]].x (non-zero;
 * inverted here, tmp as scratch): lambda = (pt.y − b.y)/den, x3 = lambda^2 − b.x − pt.x, y3 =
 * lambda·(b.x − x3) − b.y. Doubling b fits too, with pt.x = b.x, pt.y = 3·b.x^2 + b.y, den = 2·b.y.
 * Four additions at a time, step by step, so that independent products sit side by side (one
 * addition alone is a chain of products, each waiting on the one before). The idx[j] are distinct. */
#define MSM_APPLY_WAYS 4
static void GF(aff_add_batch)(AFF_T *base, const uint32_t *idx, const AFF_T *pt, F_T *den, F_T *tmp, unsigned m) {
    FF(batch_inv)(den, tmp, m);
    for (unsigned j0 = 0; j0 < m; j0 += MSM_APPLY_WAYS) {
        unsigned w = m - j0 < MSM_APPLY_WAYS ? m - j0 : MSM_APPLY_WAYS;
        F_T lam[MSM_APPLY_WAYS], t[MSM_APPLY_WAYS], x3[MSM_APPLY_WAYS];
        AFF_T *b[MSM_APPLY_WAYS];
        for (unsigned k = 0; k < w; k++) {
            b[k] = &base[idx[j0 + k]];
            FF(sub)(&t[k], &pt[j0 + k].y, &b[k]->y);
        }
        for (unsigned k = 0; k < w; k++) FF(mul)(&lam[k], &t[k], &den[j0 + k]);
        for (unsigned k = 0; k < w; k++) FF(sqr)(&x3[k], &lam[k]);
        for (unsigned k = 0; k < w; k++) {
            FF(sub)(&x3[k], &x3[k], &b[k]->x);
            FF(sub)(&x3[k], &x3[k], &pt[j0 + k].x);
            FF(sub)(&t[k], &b[k]->x, &x3[k]);
        }
        for (unsigned k = 0; k < w; k++) FF(mul)(&t[k], &t[k], &lam[k]);
        for (unsigned k = 0; k < w; k++) {
            FF(sub)(&b[k]->y, &t[k], &b[k]->y);
            b[k]->x = x3[k];
        }
    }
}
#undef MSM_APPLY_WAYS

/* The operands of aff_add_batch that double p (finite, y != 0): pt = (p.x, 3·p.x^2 + p.y), den = 2·p.y. */
static inline void GF(aff_dbl_prep)(AFF_T *pt, F_T *den, const AFF_T *p) {
    F_T xx;
    FF(sqr)(&xx, &p->x);
    pt->x = p->x;
    FF(add)(&pt->y, &p->y, &xx);
    FF(add)(&pt->y, &pt->y, &xx);
    FF(add)(&pt->y, &pt->y, &xx);
    FF(dbl)(den, &p->y);
}

/* Whether the group's vector flush (and reduction) run: the ifma set selected, and the group has them. */
static inline bool GF(msm_vec)(void) { return GF(msm_vec_flush) && zk_kernels_ifma; }

/* The group's AVX2 flush (zk/msm_avx2.h) when the avx2 kernel set is selected, else none. Only the
 * flush changes with it: every other choice (windows, GLV, reductions) stays the mulx set's. */
static const zk_vec_flush_fn GF(msm_avx2_flush) =
    _Generic((AFF_T *)0, bn_g1_aff_t *: zk_avx2_bn_g1_flush, bn_g2_aff_t *: zk_avx2_bn_g2_flush,
             default: (zk_vec_flush_fn)0);

/* aff_add_batch, eight additions per vector with the ifma kernels, four with the avx2 kernels
 * (m <= MSM_BATCH; pt and den hold MSM_BATCH elements, as the ifma flush reads whole vectors). */
static inline void GF(aff_apply)(AFF_T *base, const uint32_t *idx, const AFF_T *pt, F_T *den, F_T *tmp, unsigned m) {
    if (GF(msm_vec)())
        GF(msm_vec_flush)(base, idx, pt, den, m);
    else if (GF(msm_avx2_flush) && zk_kernels_avx2)
        GF(msm_avx2_flush)(base, idx, pt, den, m);
    else
        GF(aff_add_batch)(base, idx, pt, den, tmp, m);
}

/* Applies the batch (the deferred points stay). */
static void GF(msm_apply)(GF(msm_ctx_t) *x) {
    unsigned m = x->nbatch & ((1u << MSM_DEFER_SHIFT) - 1);
    if (!m) return;
    x->nbatch -= m;
    GF(aff_apply)(x->bucket, x->bidx, x->pt, x->den, x->tmp, m);
    for (unsigned j = 0; j < m; j++) x->state[x->bidx[j]] &= (uint8_t)~2;
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
             bls_g1_aff_t *: zk_ifma_bls_g1_reduce, bls_g2_aff_t *: zk_ifma_bls_g2_reduce,
             default: (zk_vec_reduce_fn)0);

/* Folds every side accumulator into its bucket (for msm_reduce_affine): up to MSM_BATCH/2 at a time
 * to affine by one batch inversion of their ZZ and ZZZ, then bucket += side by aff_add_batch (a
 * bucket equal to its side doubles, one opposite to it empties). */
static void GF(msm_fold_sides)(GF(msm_ctx_t) *x, size_t nb) {
    for (size_t i = 0; i < nb;) {
        unsigned k = 0, m = 0;
        for (; i < nb && k < MSM_BATCH / 2; i++) {
            if (!(x->state[i] & 4)) continue;
            x->state[i] &= (uint8_t)~4;
            if (GF(xyzz_is_inf)(&x->side[i])) continue;
            x->bidx[k] = (uint32_t)i;
            x->den[2 * k] = x->side[i].zz;
            x->den[2 * k + 1] = x->side[i].zzz;
            k++;
        }
        FF(batch_inv)(x->den, x->tmp, 2 * k);
        for (unsigned j = 0; j < k; j++) { /* writes index m <= j: nothing still to be read */
            uint32_t b = x->bidx[j];
            AFF_T sa, *q = &x->bucket[b];
            FF(mul)(&sa.x, &x->side[b].x, &x->den[2 * j]);
            FF(mul)(&sa.y, &x->side[b].y, &x->den[2 * j + 1]);
            if (!(x->state[b] & 1)) {
                *q = sa;
                x->state[b] |= 1;
                continue;
            }
            FF(sub)(&x->den[m], &sa.x, &q->x);
            if (FF(is_zero)(&x->den[m])) {
                if (!FF(eq)(&sa.y, &q->y) || FF(is_zero)(&q->y)) { /* bucket + (-bucket) */
                    x->state[b] &= (uint8_t)~1;
                    continue;
                }
                GF(aff_dbl_prep)(&sa, &x->den[m], q);
            }
            x->pt[m] = sa;
            x->bidx[m++] = b;
        }
        GF(aff_apply)(x->bucket, x->bidx, x->pt, x->den, x->tmp, m);
    }
}

/* Batch-affine bucket reduction: the nb buckets are cut into K runs of L = nb/K, run l holding
 * buckets [l·L, (l+1)·L); every run keeps its running sum S_l and weighted sum A_l as affine points,
 * and one step of all K runs (A_l += S_l, then S_l += bucket) is 2K affine additions sharing one
 * batch inversion (about 6 products each, against 10 + 14 for the XYZZ madd and add of the
 * running sum). Then Σ (i+1)·bucket[i] = Σ_l A_l + L·Σ_l l·S_l (a running sum over the runs, log2 L
 * doublings), the side accumulators folded into their buckets first. A step's additions
 * go through pt/den/tmp of the context (free after msm_flush) to aff_add_batch, bidx[j] naming the
 * run's point (2l: A_l, 2l + 1: S_l); P == Q becomes a doubling in the same batch, P == −Q
 * infinity. Returns false (nothing done) where the XYZZ running sum is cheaper: few buckets, or a
 * sparse window (most buckets empty). */
#define MSM_RED_MIN 512
static bool GF(msm_reduce_affine)(XYZZ_T *out, GF(msm_ctx_t) *x, size_t nb) {
    if (nb < MSM_RED_MIN || (nb & (nb - 1))) return false;
    size_t occ = 0;
    for (size_t i = 0; i < nb; i++) occ += x->state[i] & 1;
    if (occ < nb / 2) return false;
    GF(msm_fold_sides)(x, nb);
    /* K about sqrt(8·nb): the inversion's share against the combination's 3K XYZZ additions; the
     * vector flush's inversion costs less against those scalar additions: sqrt(4·nb) */
    size_t K = 16, kf = GF(msm_vec)() ? 4 : 8;
    while (K < MSM_BATCH / 2 && K * K < kf * nb) K *= 2;
    size_t L = nb / K;
    AFF_T *run = malloc(2 * K * sizeof(AFF_T)); /* run[2l] = A_l, run[2l + 1] = S_l */
    uint8_t *inf = malloc(2 * K);
    if (!run || !inf) abort();
    memset(inf, 1, 2 * K);
    for (size_t step = 0; step <= L; step++) {
        unsigned m = 0;
        for (size_t l = 0; l < K; l++) {
            for (int half = 0; half < 2; half++) {
                /* half 0: A_l += S_l (the S of the step before); half 1: S_l += bucket[l·L + L-1-step] */
                size_t d = 2 * l + (size_t)half;
                const AFF_T *q;
                if (half == 0) {
                    if (inf[2 * l + 1]) continue;
                    q = &run[2 * l + 1];
                } else {
                    if (step == L) continue;
                    size_t i = l * L + L - 1 - step;
                    if (!(x->state[i] & 1)) continue;
                    q = &x->bucket[i];
                }
                if (inf[d]) {
                    run[d] = *q;
                    inf[d] = 0;
                    continue;
                }
                AFF_T *p = &run[d];
                FF(sub)(&x->den[m], &q->x, &p->x);
                x->pt[m] = *q;
                if (FF(is_zero)(&x->den[m])) {
                    if (!FF(eq)(&q->y, &p->y) || FF(is_zero)(&p->y)) { /* P + (-P) */
                        inf[d] = 1;
                        continue;
                    }
                    GF(aff_dbl_prep)(&x->pt[m], &x->den[m], p);
                }
                x->bidx[m++] = (uint32_t)d;
            }
        }
        GF(aff_apply)(run, x->bidx, x->pt, x->den, x->tmp, m);
    }
    XYZZ_T acc, tsum, usum;
    GF(xyzz_set_inf)(&acc);
    GF(xyzz_set_inf)(&tsum);
    GF(xyzz_set_inf)(&usum);
    for (size_t l = K; l-- > 0;) {
        if (!inf[2 * l]) GF(xyzz_add_aff)(&acc, &acc, &run[2 * l]);
        if (l == 0) break;
        if (!inf[2 * l + 1]) GF(xyzz_add_aff)(&tsum, &tsum, &run[2 * l + 1]);
        GF(xyzz_add)(&usum, &usum, &tsum); /* Σ_(l' >= l) S_l' over l >= 1: Σ l·S_l */
    }
    for (size_t k = 1; k < L; k *= 2) GF(xyzz_dbl)(&usum, &usum);
    GF(xyzz_add)(&acc, &acc, &usum);
    free(run);
    free(inf);
    *out = acc;
    return true;
}
#undef MSM_RED_MIN

/* Σ (i+1)·bucket[i] by the running-sum trick: K runs in batch-affine additions (msm_reduce_affine; with
 * the ifma set through the vector flush, from MSM_RED_VEC_AFFINE buckets on), eight runs at once in
 * vector XYZZ additions with the ifma set below that or where the affine runs decline (a sparse
 * window), the XYZZ running sum where that is cheaper. The affine runs through the vector flush
 * against the vector XYZZ runs (bench/msm_ntt --only reduce, one window, 1 thread, medians):
 * bls12381 G1 2^14 buckets 8.35 → 6.51 ms, G2 23.3 → 19.4 ms; bn128 G1 minimums 2^13 1.39 → 1.08,
 * 2^14 2.77 → 2.37 ms, bn128 G2 unchanged (docs/prover.md). */
#define MSM_RED_VEC_AFFINE 4096
static void GF(msm_reduce)(XYZZ_T *out, GF(msm_ctx_t) *x, size_t nb) {
    if ((!GF(msm_vec)() || nb >= MSM_RED_VEC_AFFINE) && GF(msm_reduce_affine)(out, x, nb)) return;
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

/* Σ_(v < nv) (v+1)·Σ_(r < R) bucket[v·R + r] (and the side accumulators) by the XYZZ running sum: the
 * reduction of a window spread over R copies of each bucket (msm_pippenger). */
static void GF(msm_reduce_spread)(XYZZ_T *out, GF(msm_ctx_t) *x, size_t nv, size_t R) {
    XYZZ_T sum, acc;
    GF(xyzz_set_inf)(&sum);
    GF(xyzz_set_inf)(&acc);
    for (size_t i = nv * R; i-- > 0;) {
        if (x->state[i] & 1) GF(xyzz_add_aff)(&sum, &sum, &x->bucket[i]);
        if (x->state[i] & 4) GF(xyzz_add)(&sum, &sum, &x->side[i]);
        if (i % R == 0) GF(xyzz_add)(&acc, &acc, &sum);
    }
    *out = acc;
}

void GF(msm_bucket_sum)(XYZZ_T *out, const AFF_T *bucket, const XYZZ_T *side, const uint8_t *state, size_t nb) {
    GF(msm_ctx_t) *x = GF(msm_ctx_new)(nb);
    memcpy(x->bucket, bucket, nb * sizeof(AFF_T));
    memcpy(x->side, side, nb * sizeof(XYZZ_T));
    for (size_t i = 0; i < nb; i++) x->state[i] = state[i] & 5;
    GF(msm_reduce)(out, x, nb);
    GF(msm_ctx_free)(x);
}

/* Where the group has the GLV endomorphism (zk/msm.c: every group) and n <= MSM_GLV_MAX, the n
 * scalars become 2n half-length ones: k_i·P_i = k1·P_i + k2·phi(P_i), phi(P) = (beta·x, y) formed
 * once per point, the signs of k1, k2 folded into the digits. Half as many windows, twice as many
 * points: the bucket reductions (2^(c-1) per window) halve. Measured (bench/msm_ntt, CPU time, 1
 * thread, bn128 G1): 2^13 57 -> 41 ms, 2^14 111 -> 73 ms, 2^15 147 -> 135 ms, but 2^16 and 2^17
 * unchanged, where it would only add n points of memory: above MSM_GLV_MAX it is not used. With the
 * ifma kernels the bucket additions and reductions cost less, and GLV measured no faster above 2^14
 * (bn128 G1, 1 thread, CPU ms, plain vs GLV: 2^14 44.2 vs 42.9, 2^15 74.5 vs 80, 2^16 140 vs 155).
 * G2 takes the same limits (mulx, plain vs GLV, CPU ms: bn128 2^13 94 vs 83, 2^15 321 vs 297,
 * bls12381 2^15 670 vs 591; ifma bn128 2^13 65 vs 59, 2^14 110 vs 110; instructions (callgrind,
 * portable) bn128 2^16 -2 %). */
#define MSM_GLV_MAX ((size_t)1 << 15)
#define MSM_PREFETCH 8 /* points ahead whose bucket is prefetched */
#define MSM_PREFETCH_PT 16 /* points ahead that are prefetched, where an index list picks them */
#define MSM_GLV_MAX_IFMA ((size_t)1 << 14)
#define MSM_SPLIT_MIN 4096 /* points a thread's run of a split window holds at least */
/* The MSM over the pairs sel[i] (i < n; all of 0..n-1 when sel is NULL). Its one caller, GF(msm),
 * gives it only terms (GF(msm_kind) 2): no scalar 0 or 1, no infinity base. */
static void GF(msm_pippenger)(XYZZ_T *out, const AFF_T *bases, const uint8_t *scalars, const uint32_t *sel, size_t n,
                              int threads) {
    GF(xyzz_set_inf)(out);
    if (n == 0) return;
    size_t glv_max = GF(msm_vec)() ? MSM_GLV_MAX_IFMA : MSM_GLV_MAX;
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
        FF(mul)(&phi[i].x, &bases[s].x, &GF(glv_beta));
        phi[i].y = bases[s].y;
    }

    size_t nb = (size_t)1 << (c - 1);
    /* The work items: windows, the top one left out when all its digits are 0 (bn128's scalars are
     * below 2^254: with c = 15 the 18th window only ever holds a carry, and none comes), and where
     * the windows left do not divide among the threads, the last `split` of them cut into `threads`
     * runs of points, each run with its own buckets and reduction: 17 windows on 2 threads took 9
     * windows' time on one, 8 on the other. */
    unsigned nw = nwin, split = 0;
    bool top_empty = true;
    for (size_t i = 0; i < m && top_empty; i++) top_empty = digits[(size_t)(nwin - 1) * m + i] == 0;
    if (top_empty) nw--;
    if (threads > 1 && m >= (size_t)threads * MSM_SPLIT_MIN) split = nw % (unsigned)threads;
    unsigned nitems = nw - split + split * (unsigned)threads;
    struct {
        unsigned w;    /* the window */
        size_t lo, hi; /* its points [lo, hi) */
        XYZZ_T sum;
    } *item = malloc(nitems * sizeof(*item));
    if (!item) abort();
    for (unsigned it = 0; it < nitems; it++) { /* whole windows, then `threads` runs of each split one */
        unsigned k = it < nw - split ? 0 : (it - (nw - split)) % (unsigned)threads;
        item[it].w = it < nw - split ? it : nw - split + (it - (nw - split)) / (unsigned)threads;
        item[it].lo = it < nw - split ? 0 : m * k / (size_t)threads;
        item[it].hi = it < nw - split ? m : m * (k + 1) / (size_t)threads;
    }
#pragma omp parallel num_threads(threads)
    {
        GF(msm_ctx_t) *x = GF(msm_ctx_new)(nb);
#pragma omp for schedule(dynamic, 1)
        for (unsigned it = 0; it < nitems; it++) {
            unsigned w = item[it].w;
            size_t lo = item[it].lo, hi = item[it].hi;
            memset(x->state, 0, nb);
            x->nbatch = 0;
            const int16_t *dw = digits + (size_t)w * m;
            /* A window whose digits stay within maxd <= nb/2 (the top one: a few bits and the carry)
             * spreads each digit over R = 2^k copies of its bucket, point i to copy i % R (digit-
             * major: bucket (|d|-1)·R + i % R), as msm_sum does for the ones; otherwise nearly every
             * point would wait for one of a few buckets and most would take the side path. */
            unsigned maxd = 0;
            for (size_t i = lo; i < hi; i++) {
                unsigned a = (unsigned)(dw[i] < 0 ? -dw[i] : dw[i]);
                if (a > maxd) maxd = a;
            }
            size_t R = 1;
            while (maxd && R * 2 * maxd <= nb) R *= 2;
            for (size_t i = lo; i < hi; i++) {
                if (sel && i + MSM_PREFETCH_PT < hi && i + MSM_PREFETCH_PT < n) { /* the point further ahead */
                    const char *q = (const char *)&bases[sel[i + MSM_PREFETCH_PT]];
                    __builtin_prefetch(q);
                    __builtin_prefetch(q + sizeof(AFF_T) - 1);
                }
                if (i + MSM_PREFETCH < hi && dw[i + MSM_PREFETCH]) { /* the bucket a few points ahead */
                    int e = dw[i + MSM_PREFETCH];
                    size_t be = ((size_t)(e > 0 ? e : -e) - 1) * R + ((i + MSM_PREFETCH) & (R - 1));
                    __builtin_prefetch(&x->bucket[be]);
                }
                int d = dw[i];
                if (d == 0) continue;
                const AFF_T *p = i >= n ? &phi[i - n] : sel ? &bases[sel[i]] : &bases[i];
                uint32_t b = (uint32_t)(((size_t)(d > 0 ? d : -d) - 1) * R + (i & (R - 1)));
                if (d > 0) {
                    GF(msm_add)(x, b, p);
                } else {
                    AFF_T neg;
                    GF(aff_neg)(&neg, p);
                    GF(msm_add)(x, b, &neg);
                }
            }
            GF(msm_flush)(x);
            if (R == 1)
                GF(msm_reduce)(&item[it].sum, x, nb);
            else
                GF(msm_reduce_spread)(&item[it].sum, x, maxd, R);
        }
        GF(msm_ctx_free)(x);
    }
    for (unsigned w = 0; w < nw; w++) GF(xyzz_set_inf)(&wsum[w]);
    for (unsigned it = 0; it < nitems; it++) GF(xyzz_add)(&wsum[item[it].w], &wsum[item[it].w], &item[it].sum);
    free(item);

    XYZZ_T acc = wsum[nw - 1]; /* the top window left out adds nothing: Horner from the one below */
    for (unsigned w = nw - 1; w-- > 0;) {
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
static void GF(msm_sum1)(XYZZ_T *out, const AFF_T *bases, const uint32_t *list, size_t cnt) {
    size_t k = 256;
    while (k > 8 && k > cnt / 4) k /= 2;
    GF(msm_ctx_t) *x = GF(msm_ctx_new)(k);
    x->limit = (unsigned)k; /* k <= 256 buckets in turn: each batch fills every bucket once */
    for (size_t j = 0; j < cnt; j++) {
        if (j + MSM_PREFETCH_PT < cnt) { /* the point further ahead, as in msm_pippenger */
            const char *q = (const char *)&bases[list[j + MSM_PREFETCH_PT]];
            __builtin_prefetch(q);
            __builtin_prefetch(q + sizeof(AFF_T) - 1);
        }
        GF(msm_add)(x, (uint32_t)(j % k), &bases[list[j]]);
    }
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

/* The same, the list cut into one run per thread (each of at least MSM_SUM_MIN points, so that a
 * short list stays on one thread), the runs' sums added at the end. A witness of bits puts a third
 * of the A, B and C points here (SHA-256: 12k of 31k), which ran on one thread alone before. */
#define MSM_SUM_MIN 1024
static void GF(msm_sum)(XYZZ_T *out, const AFF_T *bases, const uint32_t *list, size_t cnt, int threads) {
    size_t runs = threads < 1 ? 1 : (size_t)threads;
    if (runs > cnt / MSM_SUM_MIN) runs = cnt / MSM_SUM_MIN;
    if (runs <= 1) {
        GF(msm_sum1)(out, bases, list, cnt);
        return;
    }
    XYZZ_T *part = malloc(runs * sizeof(XYZZ_T));
    if (!part) abort();
#pragma omp parallel for num_threads((int)runs) schedule(static, 1)
    for (size_t t = 0; t < runs; t++) {
        size_t lo = cnt * t / runs, hi = cnt * (t + 1) / runs;
        GF(msm_sum1)(&part[t], bases, list + lo, hi - lo);
    }
    *out = part[0];
    for (size_t t = 1; t < runs; t++) GF(xyzz_add)(out, out, &part[t]);
    free(part);
}
#undef MSM_SUM_MIN

/* What pair i adds: 0 nothing (scalar 0 or an infinity base), 1 its base (scalar 1), 2 a Pippenger
 * term. The scalar is read first: the base only where it counts. */
static inline unsigned GF(msm_kind)(const AFF_T *bases, const uint8_t *scalars, size_t i) {
    const uint8_t *k = scalars + 32 * i;
    uint64_t hi = 0, lo;
    for (int j = 1; j < 4; j++) {
        uint64_t v;
        memcpy(&v, k + 8 * j, 8);
        hi |= v;
    }
    memcpy(&lo, k, 8);
    if (hi == 0 && lo == 0) return 0;
    if (GF(aff_is_inf)(&bases[i])) return 0;
    return hi == 0 && lo == 1 ? 1 : 2;
}

/* Scalars 0 and infinity bases cost nothing and scalars 1 are summed apart (GF(msm_sum)): a witness
 * of bits (SHA-256: 60 % zeros, 40 % ones) leaves Pippenger little or nothing. The rest go to
 * Pippenger through an index list (none when every pair is a term), so that its window and the GLV
 * limit follow the terms it really has: a key's A, B1 and B2 points are infinity for every wire
 * outside A (or B), pchain16's B2 for 44,733 of 65,145. */
void GF(msm)(XYZZ_T *out, const AFF_T *bases, const uint8_t *scalars, size_t n, int threads) {
    GF(xyzz_set_inf)(out);
    if (n == 0) return;
    /* each pair's kind once (its base read once: on every thread, as the MSM's other passes; a
     * proof's small MSMs, mostly zeros and ones, spent half their time here on one), then the two
     * lists from the kinds */
    uint8_t *kind = malloc(n);
    if (!kind) abort();
    size_t cnt[3] = {0, 0, 0};
#pragma omp parallel for num_threads(threads < 1 ? 1 : threads) schedule(static) if (n >= 4096)
    for (size_t i = 0; i < n; i++) kind[i] = (uint8_t)GF(msm_kind)(bases, scalars, i);
    for (size_t i = 0; i < n; i++) cnt[kind[i]]++;
    if (cnt[2] == n) {
        free(kind);
        GF(msm_pippenger)(out, bases, scalars, NULL, n, threads);
        return;
    }
    uint32_t *rest = malloc((cnt[2] + 1) * sizeof(uint32_t)), *ones = malloc((cnt[1] + 1) * sizeof(uint32_t));
    if (!rest || !ones) abort();
    size_t a = 0, b = 0;
    for (size_t i = 0; i < n; i++) {
        if (kind[i] == 1) ones[b++] = (uint32_t)i;
        else if (kind[i] == 2) rest[a++] = (uint32_t)i;
    }
    free(kind);
    XYZZ_T s1;
    GF(msm_pippenger)(out, bases, scalars, rest, a, threads);
    GF(msm_sum)(&s1, bases, ones, b, threads);
    GF(xyzz_add)(out, out, &s1);
    free(rest);
    free(ones);
}
#undef MSM_BATCH
#undef MSM_RED_VEC_AFFINE
#undef MSM_DEFER_SHIFT
#undef MSM_GLV_MAX
#undef MSM_PREFETCH
#undef MSM_PREFETCH_PT
#undef MSM_GLV_MAX_IFMA
#undef MSM_SPLIT_MIN
#undef XYZZ_T
#undef AFF_T
#undef F_T
#undef FF
#undef GF
#undef MSM_CAT
#undef MSM_CAT2
