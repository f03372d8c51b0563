/* The Groth16 stages for one curve, instantiated by zk/groth16.c with PFX (bn | bls) and TWO_ADICITY.
 * Field and group prefixes are PFX_fr, PFX_g1, PFX_g2. */

#define GT_CAT2(a, b) a##_##b
#define GT_CAT(a, b) GT_CAT2(a, b)
#define P_(name) GT_CAT(PFX, name)
#define FR(name) GT_CAT(GT_CAT(PFX, fr), name)
#define G1(name) GT_CAT(GT_CAT(PFX, g1), name)
#define G2(name) GT_CAT(GT_CAT(PFX, g2), name)
#define FR_T GT_CAT(PFX, fr_t)
#define G1A GT_CAT(PFX, g1_aff_t)
#define G1X GT_CAT(PFX, g1_xyzz_t)
#define G2A GT_CAT(PFX, g2_aff_t)
#define G2X GT_CAT(PFX, g2_xyzz_t)

/* With 2 threads or more, one thread forms a (the records of matrix 0) while another forms b;
 * records of a zero witness value add nothing and are skipped. */
static int P_(synth)(const zk_zkey_t *z, const uint8_t *witness, FR_T *a, FR_T *b, FR_T *c, int threads) {
    if (threads < 1) threads = zk_threads_default();
    size_t n = z->domain_size;
    int nt = threads >= 2 ? 2 : 1;
#pragma omp parallel for num_threads(nt) schedule(static, 1)
    for (int t = 0; t < nt; t++) {
        if (nt == 1 || t == 0) memset(a, 0, n * sizeof(FR_T));
        if (nt == 1 || t == 1) memset(b, 0, n * sizeof(FR_T));
        const uint8_t *rec = z->coefs;
        for (uint32_t i = 0; i < z->n_coefs; i++, rec += 44) {
            uint32_t m, row, sig;
            memcpy(&m, rec, 4);
            if (nt == 2 && m != (uint32_t)t) continue;
            memcpy(&row, rec + 4, 4);
            memcpy(&sig, rec + 8, 4);
            FR_T coef, w, v;
            memcpy(w.l, witness + 32 * (size_t)sig, 32);
            if (FR(is_zero)(&w)) continue;
            memcpy(coef.l, rec + 12, 32);
            /* coef is v*R^2 (double Montgomery) and w standard: their Montgomery product is v*w*R. */
            FR(mul)(&v, &coef, &w);
            FR_T *dst = m == 0 ? &a[row] : &b[row];
            FR(add)(dst, dst, &v);
        }
    }
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; i++) FR(mul)(&c[i], &a[i], &b[i]);
    return 0;
}

/* The field of the ifma kernels' elementwise steps (zk/ntt_ifma.h). */
static const zk_ifma_fr_mod_t *const P_(ifma_fr) =
    _Generic((FR_T *)0, bn_fr_t *: &zk_ifma_bn_fr, bls_fr_t *: &zk_ifma_bls_fr);

/* x and y in one order for an elementwise step: true when both are in lanes order, else whichever
 * is in lanes order is taken back to natural order (*lx, *ly say what they are in afterwards). */
static bool P_(same_order)(FR_T *x, bool *lx, FR_T *y, bool *ly, size_t n) {
    if (*lx == *ly) return *lx;
    if (*lx) zk_ifma_fr_from_lanes(x, n);
    if (*ly) zk_ifma_fr_from_lanes(y, n);
    *lx = *ly = false;
    return false;
}

static uint64_t P_(now_ns)(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* own: a, b, c are the core's to overwrite (zk_prove_core_inplace): the transforms run in them, P
 * ends in a, and b, c go back to the kernel before the MSMs; scratch then holds only the twiddles.
 * Otherwise a, b, c are left alone and copied into scratch (s0, s1). */
/* One MSM of the core: over its window table when the key has tables (tab, zk/msm_fixed.h: a table
 * without stored rows is the plain MSM), else the plain MSM; a lazy key's section k is resident
 * only meanwhile. */
static void P_(core_g1)(G1A *res, const zk_zkey_t *z, int k, const zk_fixed_t *tab, int which, const G1A *bases,
                        const uint8_t *scalars, size_t n, int threads) {
    G1X r;
    zk_zkey_hold(z, k);
    if (tab)
        G1(fixed_msm)(&r, &tab[which], scalars, threads);
    else
        G1(msm)(&r, bases, scalars, n, threads);
    zk_zkey_drop(z, k);
    G1(xyzz_to_aff)(res, &r);
}
static void P_(core_g2)(G2A *res, const zk_zkey_t *z, int k, const zk_fixed_t *tab, int which, const G2A *bases,
                        const uint8_t *scalars, size_t n, int threads) {
    G2X r;
    zk_zkey_hold(z, k);
    if (tab)
        G2(fixed_msm)(&r, &tab[which], scalars, threads);
    else
        G2(msm)(&r, bases, scalars, n, threads);
    zk_zkey_drop(z, k);
    G2(xyzz_to_aff)(res, &r);
}

/* MSM `which` (ZK_MSM_A .. ZK_MSM_H) of the core into its place in out; h: the H scalars. */
static void P_(core_msm)(zk_raw_t *out, int which, const zk_zkey_t *z, const zk_fixed_t *tab, const uint8_t *witness,
                         const uint8_t *h, int threads) {
    size_t nv = z->n_vars, np = z->n_pub;
    G1A aff1;
    G2A aff2;
    switch (which) {
    case ZK_MSM_A:
        P_(core_g1)(&aff1, z, 5, tab, ZK_MSM_A, z->points_a, witness, nv, threads);
        memcpy(out->a, &aff1, sizeof(aff1));
        break;
    case ZK_MSM_B1:
        P_(core_g1)(&aff1, z, 6, tab, ZK_MSM_B1, z->points_b1, witness, nv, threads);
        memcpy(out->b1, &aff1, sizeof(aff1));
        break;
    case ZK_MSM_B2:
        P_(core_g2)(&aff2, z, 7, tab, ZK_MSM_B2, z->points_b2, witness, nv, threads);
        memcpy(out->b2, &aff2, sizeof(aff2));
        break;
    case ZK_MSM_C:
        P_(core_g1)(&aff1, z, 8, tab, ZK_MSM_C, z->points_c, witness + 32 * (np + 1), nv - np - 1, threads);
        memcpy(out->c, &aff1, sizeof(aff1));
        break;
    default:
        P_(core_g1)(&aff1, z, 9, tab, ZK_MSM_H, z->points_h, h, z->domain_size, threads);
        memcpy(out->h, &aff1, sizeof(aff1));
        break;
    }
}

/* The proving core: P = A·B − C on the odd coset (the H scalars), then the five MSMs, over the
 * key's window tables when tab is given (ZK_MSM_COUNT of them, built from z): one after another
 * over all threads, or with side (an order of the five, zk_key_tables_side_by_side) side by side,
 * one thread each, handed out in that order to whichever thread is free. own: a, b, c are the
 * caller's to overwrite (zk_prove_core_inplace). */
static int P_(core)(const zk_zkey_t *z, const uint8_t *witness, const FR_T *a, const FR_T *b, const FR_T *c,
                    void *scratch, zk_raw_t *out, zk_core_times_t *times, int threads, bool own,
                    const zk_fixed_t *tab, const int *side) {
    if (threads < 1) threads = zk_threads_default();
    size_t n = z->domain_size;
    unsigned logn = z->log_domain;
    FR_T *s0, *s1, *sc, *tw, *itw, *scale;
    if (own) {
        s0 = (FR_T *)a, s1 = (FR_T *)b, sc = (FR_T *)c;
        tw = scratch;
    } else {
        s0 = scratch, s1 = s0 + n, sc = s1;
        tw = s1 + n;
    }
    itw = tw + n / 2 + 1, scale = itw + n / 2 + 1; /* scale: 2 */
    uint64_t t0 = P_(now_ns)();

    P_(odd_coset_tables)(tw, itw, scale, logn, threads);

    if (!own) {
        memcpy(s0, a, n * sizeof(FR_T));
        memcpy(s1, b, n * sizeof(FR_T));
    }
    /* With the ifma set the transforms leave their results in lanes order (zk/ntt_ifma.h), where
     * the products and differences below run eight to a vector; P goes back to natural order at the
     * end. Where one result is not in lanes order, all are taken back before the step that uses it. */
    bool l0, l1, lc;
    if (threads == 2 || threads == 3) {
        /* A and B side by side, one thread each: no barrier between the NTT stages of either (on a
         * shared or loaded machine each barrier can cost a scheduling slice) */
#pragma omp parallel sections num_threads(2)
        {
#pragma omp section
            l0 = P_(to_odd_coset_lanes)(s0, n, logn, tw, itw, scale, 1);
#pragma omp section
            l1 = P_(to_odd_coset_lanes)(s1, n, logn, tw, itw, scale, 1);
        }
    } else {
        l0 = P_(to_odd_coset_lanes)(s0, n, logn, tw, itw, scale, threads);
        l1 = P_(to_odd_coset_lanes)(s1, n, logn, tw, itw, scale, threads);
    }
    if (P_(same_order)(s0, &l0, s1, &l1, n)) {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (size_t q = 0; q < n / 8; q += 64)
            zk_ifma_fr_mul_lanes(P_(ifma_fr), s0, s1, q, q + 64 < n / 8 ? q + 64 : n / 8);
    } else {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (size_t i = 0; i < n; i++) FR(mul)(&s0[i], &s0[i], &s1[i]);
    }
    if (!own) memcpy(sc, c, n * sizeof(FR_T));
    lc = P_(to_odd_coset_lanes)(sc, n, logn, tw, itw, scale, threads);
    if (P_(same_order)(s0, &l0, sc, &lc, n)) {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (size_t q = 0; q < n / 8; q += 64)
            zk_ifma_fr_sub_std_lanes(P_(ifma_fr), s0, sc, q, q + 64 < n / 8 ? q + 64 : n / 8);
        zk_ifma_fr_from_lanes(s0, n);
    } else {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (size_t i = 0; i < n; i++) {
            FR(sub)(&s0[i], &s0[i], &sc[i]);
            FR(from_mont)(&s0[i], &s0[i]); /* the H MSM takes standard-form scalars */
        }
    }
    /* Only P (s0) is needed from here on: hand the rest of the scratch back to the kernel, so the
     * MSMs, which touch the key's points, do not add to a peak that the NTTs already set. */
    if (own) {
        zk_release_pages(s1, n * sizeof(FR_T));
        zk_release_pages(sc, n * sizeof(FR_T));
        zk_release_pages(tw, (size_t)((uint8_t *)(scale + 2) - (uint8_t *)tw));
    } else {
        zk_release_pages(s1, (size_t)((uint8_t *)(scale + 2) - (uint8_t *)s1));
    }
    uint64_t t1 = P_(now_ns)();

    memset(out, 0, sizeof(*out));
    uint64_t took[ZK_MSM_COUNT];
    if (side) { /* never below two threads (zk_msm_side_by_side) */
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
        for (int i = 0; i < ZK_MSM_COUNT; i++) {
            uint64_t s = P_(now_ns)();
            P_(core_msm)(out, side[i], z, tab, witness, (const uint8_t *)s0, 1);
            took[side[i]] = P_(now_ns)() - s;
        }
    } else {
        for (int k = 0; k < ZK_MSM_COUNT; k++) {
            uint64_t s = P_(now_ns)();
            P_(core_msm)(out, k, z, tab, witness, (const uint8_t *)s0, threads);
            took[k] = P_(now_ns)() - s;
        }
    }
    uint64_t t2 = P_(now_ns)();

    if (times) {
        /* side by side, each MSM's share of their wall time, in proportion to its own time */
        double sum = 0, wall = (double)(t2 - t1);
        for (int k = 0; k < ZK_MSM_COUNT; k++) sum += (double)took[k];
        uint64_t *dst[ZK_MSM_COUNT] = {&times->msm_a_ns, &times->msm_b1_ns, &times->msm_b2_ns, &times->msm_c_ns,
                                       &times->msm_h_ns};
        times->h2d_ns = 0;
        times->ntt_ns = t1 - t0;
        for (int k = 0; k < ZK_MSM_COUNT; k++)
            *dst[k] = sum > wall ? (uint64_t)((double)took[k] * wall / sum) : took[k];
    }
    return 0;
}

static void P_(load_g1)(G1X *r, const void *bytes) {
    G1A a;
    memcpy(&a, bytes, sizeof(a));
    G1(xyzz_from_aff)(r, &a);
}
static void P_(load_g2)(G2X *r, const void *bytes) {
    G2A a;
    memcpy(&a, bytes, sizeof(a));
    G2(xyzz_from_aff)(r, &a);
}

static int P_(finalize)(const zk_zkey_t *z, const zk_raw_t *raw, const uint8_t r_bytes[32], const uint8_t s_bytes[32],
                        zk_proof_t *out) {
    uint64_t r[4], s[4], rs[4];
    memcpy(r, r_bytes, 32);
    memcpy(s, s_bytes, 32);
    FR_T rm, sm, rsm;
    memcpy(rm.l, r, 32);
    memcpy(sm.l, s, 32);
    FR(to_mont)(&rm, &rm);
    FR(to_mont)(&sm, &sm);
    FR(mul)(&rsm, &rm, &sm);
    FR(from_mont)(&rsm, &rsm);
    memcpy(rs, rsm.l, 32);

    G1X alpha1, beta1, delta1, A, B1, C, H, t;
    G2X beta2, delta2, B2, t2;
    P_(load_g1)(&alpha1, z->alpha1);
    P_(load_g1)(&beta1, z->beta1);
    P_(load_g1)(&delta1, z->delta1);
    P_(load_g2)(&beta2, z->beta2);
    P_(load_g2)(&delta2, z->delta2);
    P_(load_g1)(&A, raw->a);
    P_(load_g1)(&B1, raw->b1);
    P_(load_g2)(&B2, raw->b2);
    P_(load_g1)(&C, raw->c);
    P_(load_g1)(&H, raw->h);

    G1X pa, rho, pc;
    G2X pb;
    G1(xyzz_add)(&pa, &alpha1, &A); /* πA = α1 + A + r·δ1 */
    G1(xyzz_mul)(&t, &delta1, r, 4);
    G1(xyzz_add)(&pa, &pa, &t);
    G2(xyzz_add)(&pb, &beta2, &B2); /* πB = β2 + B2 + s·δ2 */
    G2(xyzz_mul)(&t2, &delta2, s, 4);
    G2(xyzz_add)(&pb, &pb, &t2);
    G1(xyzz_add)(&rho, &beta1, &B1); /* ρ = β1 + B1 + s·δ1 */
    G1(xyzz_mul)(&t, &delta1, s, 4);
    G1(xyzz_add)(&rho, &rho, &t);
    G1(xyzz_add)(&pc, &C, &H); /* πC = C + H + s·πA + r·ρ − rs·δ1 */
    G1(xyzz_mul)(&t, &pa, s, 4);
    G1(xyzz_add)(&pc, &pc, &t);
    G1(xyzz_mul)(&t, &rho, r, 4);
    G1(xyzz_add)(&pc, &pc, &t);
    G1(xyzz_mul)(&t, &delta1, rs, 4);
    G1(xyzz_neg)(&t, &t);
    G1(xyzz_add)(&pc, &pc, &t);

    G1A a1;
    G2A a2;
    memset(out, 0, sizeof(*out));
    G1(xyzz_to_aff)(&a1, &pa);
    memcpy(out->a, &a1, sizeof(a1));
    G2(xyzz_to_aff)(&a2, &pb);
    memcpy(out->b, &a2, sizeof(a2));
    G1(xyzz_to_aff)(&a1, &pc);
    memcpy(out->c, &a1, sizeof(a1));
    return 0;
}

#undef G2X
#undef G2A
#undef G1X
#undef G1A
#undef FR_T
#undef G2
#undef G1
#undef FR
#undef P_
#undef GT_CAT
#undef GT_CAT2
