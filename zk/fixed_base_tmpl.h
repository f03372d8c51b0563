/* Fixed-base scalar multiplication k_i·G for many scalars and one base (the generator), as key
 * generation needs it: a table of signed-window multiples j·2^(c·w)·G (affine, j = 1..2^(c-1)) so
 * each product is one mixed addition per window and no doublings, then a batch conversion to affine
 * (one inversion per chunk). Instantiated by zk/keygen.c with G (group prefix, e.g. bn_g1) and F
 * (coordinate field prefix, e.g. bn_fq). Needs <omp.h>, <stdlib.h> and zk/msm.h (signed digits). */

#define FB_CAT2(a, b) a##_##b
#define FB_CAT(a, b) FB_CAT2(a, b)
#define GF(name) FB_CAT(G, name)
#define FF(name) FB_CAT(F, name)
#define F_T FB_CAT(F, t)
#define AFF_T FB_CAT(G, aff_t)
#define XYZZ_T FB_CAT(G, xyzz_t)
#define TAB_T FB_CAT(G, fb_table_t)

typedef struct {
    unsigned c, nwin;
    size_t half; /* 2^(c-1) entries per window */
    AFF_T *pts;  /* nwin * half: pts[w*half + j-1] = j·2^(c·w)·G */
} TAB_T;

#ifndef FB_CHUNK
/* Points of chunks converted together (one field inversion each). */
#define FB_CHUNK 1024
#endif

/* out[i] = affine in[i] (all-zero bytes for infinity); inv and tmp hold n field elements. */
static void GF(fb_batch_to_aff)(AFF_T *out, const XYZZ_T *in, F_T *inv, F_T *tmp, size_t n) {
    for (size_t i = 0; i < n; i++) inv[i] = in[i].zzz; /* zero for infinity: batch_inv leaves it zero */
    FF(batch_inv)(inv, tmp, n);
    for (size_t i = 0; i < n; i++) {
        if (GF(xyzz_is_inf)(&in[i])) {
            memset(&out[i], 0, sizeof(out[i]));
            continue;
        }
        F_T iz, izz;
        FF(mul)(&iz, &inv[i], &in[i].zz); /* 1/Z, as ZZZ = Z·ZZ */
        FF(sqr)(&izz, &iz);
        FF(mul)(&out[i].x, &in[i].x, &izz);
        FF(mul)(&out[i].y, &in[i].y, &inv[i]);
    }
}

/* Window width for n products with a table of at most max_bytes: fewest additions in all, counting
 * the table's own construction. */
static unsigned GF(fb_window)(size_t n, size_t max_bytes) {
    unsigned best = 4;
    double best_cost = -1;
    for (unsigned c = 4; c <= 15; c++) { /* digits are int16_t: |d| <= 2^(c-1) must fit */
        unsigned nwin = (256 + c - 1) / c;
        size_t entries = (size_t)nwin << (c - 1);
        if (c > 4 && entries * sizeof(AFF_T) > max_bytes) break;
        double cost = (double)n * nwin + 1.5 * (double)entries;
        if (best_cost < 0 || cost < best_cost) {
            best_cost = cost;
            best = c;
        }
    }
    return best;
}

static void GF(fb_free)(TAB_T *t) {
    free(t->pts);
    t->pts = NULL;
}

/* Builds the table of gen for window width c (4..15). -ENOMEM on failure. */
static int GF(fb_build)(TAB_T *t, const AFF_T *gen, unsigned c, int threads) {
    t->c = c;
    t->nwin = (256 + c - 1) / c; /* scalars < 2^255: the top window never carries out */
    t->half = (size_t)1 << (c - 1);
    size_t total = t->nwin * t->half;
    t->pts = aligned_alloc(64, (total * sizeof(AFF_T) + 63) & ~(size_t)63);
    XYZZ_T *base = malloc(t->nwin * sizeof(XYZZ_T));
    XYZZ_T *acc = malloc((size_t)threads * FB_CHUNK * sizeof(XYZZ_T));
    F_T *scratch = malloc((size_t)threads * 2 * FB_CHUNK * sizeof(F_T));
    if (!t->pts || !base || !acc || !scratch) {
        free(base);
        free(acc);
        free(scratch);
        GF(fb_free)(t);
        return -ENOMEM;
    }
    GF(xyzz_from_aff)(&base[0], gen);
    for (unsigned w = 1; w < t->nwin; w++) {
        base[w] = base[w - 1];
        for (unsigned k = 0; k < c; k++) GF(xyzz_dbl)(&base[w], &base[w]);
    }
    /* (window, chunk of FB_CHUNK multiples) pairs, each filled by repeated addition from its start */
    size_t chunks_per_win = (t->half + FB_CHUNK - 1) / FB_CHUNK;
    size_t jobs = t->nwin * chunks_per_win;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (size_t job = 0; job < jobs; job++) {
        int tid = omp_get_thread_num();
        XYZZ_T *a = acc + (size_t)tid * FB_CHUNK;
        F_T *inv = scratch + (size_t)tid * 2 * FB_CHUNK, *tmp = inv + FB_CHUNK;
        size_t w = job / chunks_per_win, j0 = (job % chunks_per_win) * FB_CHUNK; /* multiples j0+1.. */
        size_t cnt = t->half - j0 < FB_CHUNK ? t->half - j0 : FB_CHUNK;
        uint64_t k[4] = {(uint64_t)j0 + 1, 0, 0, 0};
        XYZZ_T x;
        GF(xyzz_mul)(&x, &base[w], k, 1);
        for (size_t i = 0; i < cnt; i++) {
            a[i] = x;
            GF(xyzz_add)(&x, &x, &base[w]);
        }
        GF(fb_batch_to_aff)(t->pts + w * t->half + j0, a, inv, tmp, cnt);
    }
    free(base);
    free(acc);
    free(scratch);
    return 0;
}

/* out[i] = k_i·G (affine, infinity as zero bytes) for n standard-form scalars k (4 limbs each, < r).
 * -ENOMEM on failure. */
static int GF(fb_mul_many)(const TAB_T *t, const uint64_t (*k)[4], size_t n, AFF_T *out, int threads) {
    XYZZ_T *acc = malloc((size_t)threads * FB_CHUNK * sizeof(XYZZ_T));
    F_T *scratch = malloc((size_t)threads * 2 * FB_CHUNK * sizeof(F_T));
    if (!acc || !scratch) {
        free(acc);
        free(scratch);
        return -ENOMEM;
    }
    size_t chunks = (n + FB_CHUNK - 1) / FB_CHUNK;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (size_t ch = 0; ch < chunks; ch++) {
        int tid = omp_get_thread_num();
        XYZZ_T *a = acc + (size_t)tid * FB_CHUNK;
        F_T *inv = scratch + (size_t)tid * 2 * FB_CHUNK, *tmp = inv + FB_CHUNK;
        size_t i0 = ch * FB_CHUNK, cnt = n - i0 < FB_CHUNK ? n - i0 : FB_CHUNK;
        int16_t d[64];
        for (size_t i = 0; i < cnt; i++) {
            zk_msm_signed_digits(d, k[i0 + i], t->c, t->nwin);
            GF(xyzz_set_inf)(&a[i]);
            for (unsigned w = 0; w < t->nwin; w++) {
                if (d[w] == 0) continue;
                const AFF_T *p = &t->pts[w * t->half + (size_t)(d[w] < 0 ? -d[w] : d[w]) - 1];
                if (d[w] > 0) {
                    GF(xyzz_add_aff)(&a[i], &a[i], p);
                } else {
                    AFF_T np;
                    GF(aff_neg)(&np, p);
                    GF(xyzz_add_aff)(&a[i], &a[i], &np);
                }
            }
        }
        GF(fb_batch_to_aff)(out + i0, a, inv, tmp, cnt);
    }
    free(acc);
    free(scratch);
    return 0;
}

#undef TAB_T
#undef XYZZ_T
#undef AFF_T
#undef F_T
#undef FF
#undef GF
#undef FB_CAT
#undef FB_CAT2
