/* Multi-scalar multiplication Σ k_i·P_i by Pippenger's bucket method with signed digits,
 * instantiated per group by zk/msm.c with G (group prefix) and F (coordinate field prefix).
 * Scalars: 32-byte little-endian standard-form integers < 2^255. Bases: affine, all-zero = infinity.
 * Zero digits and infinity bases are skipped; windows run in parallel (OpenMP), each with its own
 * buckets, and are combined by Horner's rule at the end. */

#define MSM_CAT2(a, b) a##_##b
#define MSM_CAT(a, b) MSM_CAT2(a, b)
#define GF(name) MSM_CAT(G, name)
#define AFF_T MSM_CAT(G, aff_t)
#define XYZZ_T MSM_CAT(G, xyzz_t)

/* Adds a bucket array's contribution Σ (i+1)·bucket[i] into *out with the running-sum trick. */
static void GF(msm_reduce_buckets)(XYZZ_T *out, const XYZZ_T *buckets, size_t nb) {
    XYZZ_T sum, acc;
    GF(xyzz_set_inf)(&sum);
    GF(xyzz_set_inf)(&acc);
    for (size_t i = nb; i-- > 0;) {
        GF(xyzz_add)(&sum, &sum, &buckets[i]);
        GF(xyzz_add)(&acc, &acc, &sum);
    }
    *out = acc;
}

void GF(msm)(XYZZ_T *out, const AFF_T *bases, const uint8_t *scalars, size_t n, int threads) {
    GF(xyzz_set_inf)(out);
    if (n == 0) return;
    unsigned c = zk_msm_window(n, sizeof(AFF_T));
    unsigned nwin = (255 + c) / c; /* nwin*c >= 256 > bit length, so the top digit never carries */
    int16_t *digits = malloc(n * nwin * sizeof(int16_t));
    XYZZ_T *wsum = malloc(nwin * sizeof(XYZZ_T));
    if (!digits || !wsum) abort(); /* small, bounded allocations: out of memory is fatal here */
    if (threads < 1) threads = 1;

#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; i++) {
        int16_t *d = digits + i * nwin;
        uint64_t k[4];
        memcpy(k, scalars + 32 * i, 32);
        if (GF(aff_is_inf)(&bases[i])) memset(k, 0, sizeof(k));
        zk_msm_signed_digits(d, k, c, nwin);
    }

    size_t nb = (size_t)1 << (c - 1);
#pragma omp parallel num_threads(threads)
    {
        XYZZ_T *buckets = malloc(nb * sizeof(XYZZ_T));
        if (!buckets) abort();
#pragma omp for schedule(dynamic, 1)
        for (unsigned w = 0; w < nwin; w++) {
            memset(buckets, 0, nb * sizeof(XYZZ_T));
            for (size_t i = 0; i < n; i++) {
                int d = digits[i * nwin + w];
                if (d == 0) continue;
                if (d > 0) {
                    GF(xyzz_add_aff)(&buckets[d - 1], &buckets[d - 1], &bases[i]);
                } else {
                    AFF_T neg;
                    GF(aff_neg)(&neg, &bases[i]);
                    GF(xyzz_add_aff)(&buckets[-d - 1], &buckets[-d - 1], &neg);
                }
            }
            GF(msm_reduce_buckets)(&wsum[w], buckets, nb);
        }
        free(buckets);
    }

    XYZZ_T acc = wsum[nwin - 1];
    for (unsigned w = nwin - 1; w-- > 0;) {
        for (unsigned j = 0; j < c; j++) GF(xyzz_dbl)(&acc, &acc);
        GF(xyzz_add)(&acc, &acc, &wsum[w]);
    }
    *out = acc;
    free(digits);
    free(wsum);
}

#undef XYZZ_T
#undef AFF_T
#undef GF
#undef MSM_CAT
#undef MSM_CAT2
