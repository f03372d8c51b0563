/* Fixed-base MSM Σ k_i·P_i for bases known in advance (a resident proving key), instantiated per
 * group by zk/msm.c after msm_tmpl.h, with G (group prefix) and F (coordinate field prefix). It
 * reuses msm_tmpl.h's batch-affine bucket accumulator (msm_ctx_t, msm_add, msm_flush, msm_reduce)
 * through that API, so it gets whatever speeds that up.
 *
 * Table (zk_fixed_t, plan from zk_fixed_plan in zk/msm.c): scalars are cut into nwin signed c-bit
 * digits (zk_msm_signed_digits); of every `stride` consecutive windows one is stored: row j holds
 * 2^(c·stride·j)·P_i for all i (row 0 is the key's points themselves, not copied). Then
 *     Σ_i k_i·P_i = Σ_s 2^(c·s) · Σ_j Σ_i d_(j·stride+s, i) · row_j[i],   s = 0 .. stride-1,
 * one bucket pass per s over n·stored (point, digit) pairs, one bucket reduction per pass and
 * thread, and c doublings between passes (Horner). stride 1: one pass, one reduction, no doublings;
 * stored 1: no table, the plain MSM (msm_tmpl.h) is used. Threads split each pass's pairs, each
 * with its own buckets; their sums are added at the end. */

#define MF_CAT2(a, b) a##_##b
#define MF_CAT(a, b) MF_CAT2(a, b)
#define GF(name) MF_CAT(G, name)
#define FF(name) MF_CAT(F, name)
#define F_T MF_CAT(F, t)
#define AFF_T MF_CAT(G, aff_t)
#define XYZZ_T MF_CAT(G, xyzz_t)

/* Bases doubled together (one batch inversion per doubling step). */
#define MF_CHUNK 512
/* Pairs ahead whose bucket is prefetched. */
#define MF_PREFETCH 8

/* p[i] <- 2·p[i] for m affine points (a = 0: lambda = 3x^2 / 2y), one inversion for all. Infinity
 * (0, 0) stays (0, 0): its denominator is zero, which batch_inv leaves zero, so lambda = 0. */
static void GF(fixed_dbl_batch)(AFF_T *p, F_T *den, F_T *tmp, size_t m) {
    for (size_t i = 0; i < m; i++) FF(dbl)(&den[i], &p[i].y);
    FF(batch_inv)(den, tmp, m);
    for (size_t i = 0; i < m; i++) {
        F_T xx, t, lam, x3;
        FF(sqr)(&xx, &p[i].x);
        FF(add)(&t, &xx, &xx);
        FF(add)(&t, &t, &xx);
        FF(mul)(&lam, &t, &den[i]);
        FF(sqr)(&x3, &lam);
        FF(sub)(&x3, &x3, &p[i].x);
        FF(sub)(&x3, &x3, &p[i].x);
        FF(sub)(&t, &p[i].x, &x3);
        FF(mul)(&t, &t, &lam);
        FF(sub)(&p[i].y, &t, &p[i].y);
        p[i].x = x3;
    }
}

void GF(fixed_free)(zk_fixed_t *t) {
    free(t->pts);
    free(t->idx);
    memset(t, 0, sizeof(*t));
}

int GF(fixed_build)(zk_fixed_t *t, const AFF_T *bases, size_t n, const zk_fixed_plan_t *plan, int threads) {
    memset(t, 0, sizeof(*t));
    t->plan = *plan;
    t->n = n;
    t->m = n;
    t->bases = bases;
    if (plan->stored <= 1 || n == 0) return 0;
    size_t m = zk_fixed_finite(bases, n, sizeof(AFF_T));
    uint32_t *idx = NULL;
    if (m < n) { /* the rows hold the finite bases only */
        if (n > UINT32_MAX || !(idx = malloc((m ? m : 1) * sizeof(uint32_t)))) return -ENOMEM;
        for (size_t i = 0, k = 0; i < n; i++)
            if (!GF(aff_is_inf)(&bases[i])) idx[k++] = (uint32_t)i;
    }
    size_t rows = plan->stored - 1;
    if (m && m > SIZE_MAX / sizeof(AFF_T) / rows) {
        free(idx);
        return -ENOMEM;
    }
    AFF_T *pts = malloc((m ? rows * m : 1) * sizeof(AFF_T));
    if (!pts) {
        free(idx);
        return -ENOMEM;
    }
    if (threads < 1) threads = 1;
    unsigned steps = plan->c * plan->stride; /* doublings from one stored row to the next */
    size_t chunks = (m + MF_CHUNK - 1) / MF_CHUNK;
    int failed = 0;
#pragma omp parallel num_threads(threads)
    {
        AFF_T *cur = malloc(MF_CHUNK * sizeof(AFF_T));
        F_T *den = malloc(2 * MF_CHUNK * sizeof(F_T));
        if (!cur || !den) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 1)
        for (size_t ch = 0; ch < chunks; ch++) {
            if (!cur || !den) continue;
            size_t i0 = ch * MF_CHUNK, cnt = m - i0 < MF_CHUNK ? m - i0 : MF_CHUNK;
            for (size_t k = 0; k < cnt; k++) cur[k] = bases[idx ? idx[i0 + k] : i0 + k];
            for (size_t j = 0; j < rows; j++) {
                for (unsigned k = 0; k < steps; k++) GF(fixed_dbl_batch)(cur, den, den + MF_CHUNK, cnt);
                memcpy(pts + j * m + i0, cur, cnt * sizeof(AFF_T));
            }
        }
        free(cur);
        free(den);
    }
    if (failed) {
        free(pts);
        free(idx);
        return -ENOMEM;
    }
    t->pts = pts;
    t->m = m;
    t->idx = idx;
    return 0;
}

void GF(fixed_msm)(XYZZ_T *out, const zk_fixed_t *t, const uint8_t *scalars, int threads) {
    const AFF_T *bases = t->bases;
    size_t n = t->n;
    const zk_fixed_plan_t *pl = &t->plan;
    if (pl->stored <= 1 || !t->pts) {
        GF(msm)(out, bases, scalars, n, threads);
        return;
    }
    GF(xyzz_set_inf)(out);
    if (n == 0) return;
    if (threads < 1) threads = 1;
    unsigned c = pl->c, nwin = pl->nwin, stride = pl->stride;
    /* the finite bases only, in the rows' order: i < m stands for base idx[i] (i without idx) */
    const uint32_t *idx = t->idx;
    n = t->m;
    if (n == 0) return;
    int16_t *digits = malloc((size_t)nwin * n * sizeof(int16_t)); /* digits[w*n + i] */
    XYZZ_T *part = malloc((size_t)stride * (size_t)threads * sizeof(XYZZ_T));
    if (!digits || !part) abort(); /* bounded allocations, as in msm_tmpl.h: out of memory is fatal */

#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; i++) {
        uint64_t k[4];
        int16_t d[256 / 2 + 1];
        memcpy(k, scalars + 32 * (idx ? idx[i] : i), 32);
        zk_msm_signed_digits(d, k, c, nwin);
        for (unsigned w = 0; w < nwin; w++) digits[(size_t)w * n + i] = d[w];
    }

    size_t nb = (size_t)1 << (c - 1);
#pragma omp parallel num_threads(threads)
    {
        int T = omp_get_num_threads(), me = omp_get_thread_num();
        GF(msm_ctx_t) *x = GF(msm_ctx_new)(nb);
        for (unsigned s = 0; s < stride; s++) {
            size_t rows = (nwin - s + stride - 1) / stride; /* rows j with j·stride + s < nwin */
            size_t q_all = rows * n, q0 = q_all * (size_t)me / (size_t)T, q1 = q_all * (size_t)(me + 1) / (size_t)T;
            memset(x->state, 0, nb);
            x->nbatch = 0;
            for (size_t q = q0; q < q1;) {
                size_t j = q / n, i = q % n, end = q1 - q < n - i ? q1 - q : n - i;
                const AFF_T *row = j == 0 ? bases : (const AFF_T *)t->pts + (j - 1) * n;
                const uint32_t *rix = j == 0 ? idx : NULL; /* row 0 is the key's points, read through idx */
                const int16_t *dw = digits + (j * stride + s) * n;
                for (size_t e = i + end; i < e; i++) {
                    if (i + MF_PREFETCH < e && dw[i + MF_PREFETCH]) { /* the bucket a few pairs ahead */
                        int f = zk_msm_digit(dw[i + MF_PREFETCH]);
                        __builtin_prefetch(&x->bucket[(f > 0 ? f : -f) - 1]);
                    }
                    int d = zk_msm_digit(dw[i]);
                    if (d == 0) continue;
                    const AFF_T *p = rix ? &row[rix[i]] : &row[i];
                    if (d > 0) {
                        GF(msm_add)(x, (uint32_t)(d - 1), p);
                    } else {
                        AFF_T neg;
                        GF(aff_neg)(&neg, p);
                        GF(msm_add)(x, (uint32_t)(-d - 1), &neg);
                    }
                }
                q += end;
            }
            GF(msm_flush)(x);
            GF(msm_reduce)(&part[(size_t)s * threads + me], x, nb);
        }
        for (int k = T; k < threads && me == 0; k++) /* fewer threads than asked: their parts are empty */
            for (unsigned s = 0; s < stride; s++) GF(xyzz_set_inf)(&part[(size_t)s * threads + k]);
        GF(msm_ctx_free)(x);
    }

    XYZZ_T acc;
    GF(xyzz_set_inf)(&acc);
    for (unsigned s = stride; s-- > 0;) {
        if (s + 1 < stride)
            for (unsigned k = 0; k < c; k++) GF(xyzz_dbl)(&acc, &acc);
        for (int k = 0; k < threads; k++) GF(xyzz_add)(&acc, &acc, &part[(size_t)s * threads + k]);
    }
    *out = acc;
    free(digits);
    free(part);
}

#undef MF_CHUNK
#undef MF_PREFETCH
#undef XYZZ_T
#undef AFF_T
#undef F_T
#undef FF
#undef GF
#undef MF_CAT
#undef MF_CAT2
