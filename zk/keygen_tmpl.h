/* Insecure development key generation for one curve (formats.md §4), instantiated by zk/keygen.c
 * with PFX (bn | bls) and TWO_ADICITY. Groups PFX_g1, PFX_g2 need their fixed-base tables
 * (zk/fixed_base_tmpl.h) instantiated first. */

#define KG_CAT2(a, b) a##_##b
#define KG_CAT(a, b) KG_CAT2(a, b)
#define P_(name) KG_CAT(PFX, name)
#define FR(name) KG_CAT(KG_CAT(PFX, fr), name)
#define FQ(name) KG_CAT(KG_CAT(PFX, fq), name)
#define G1(name) KG_CAT(KG_CAT(PFX, g1), name)
#define G2(name) KG_CAT(KG_CAT(PFX, g2), name)
#define FR_T KG_CAT(PFX, fr_t)
#define FQ_T KG_CAT(PFX, fq_t)
#define G1A KG_CAT(PFX, g1_aff_t)
#define G2A KG_CAT(PFX, g2_aff_t)
#define G1TAB KG_CAT(PFX, g1_fb_table_t)
#define G2TAB KG_CAT(PFX, g2_fb_table_t)
#define KG_T KG_CAT(PFX, kg_t)

typedef struct {
    const zk_curve_t *curve;
    const zk_r1cs_t *r;
    uint32_t m, npub, nvars, n, logn, ncoefs;
    FR_T alpha, beta, delta_inv; /* Montgomery */
    FR_T *u, *v, *w;             /* A_s(τ), B_s(τ), C_s(τ) for every wire s (Montgomery) */
    FR_T *h;                     /* L^{(2n)}_{2i+1}(τ)/δ, i < n */
    G1TAB t1;
    G2TAB t2;
    G1A alpha1, beta1, delta1;
    G2A beta2, gamma2, delta2;
    G1A *ic;           /* IC[0..npub], kept for vk.json */
    uint64_t (*sc)[4]; /* KG_SLICE standard-form scalars */
    void *pts;         /* KG_SLICE affine points (G2-sized) */
    int threads;
    uint64_t g1_ns, g2_ns;
} KG_T;

/* Uniform in [1, r), Montgomery form. */
static int P_(kg_random)(const zk_curve_t *curve, FR_T *out) {
    uint8_t a[32];
    for (;;) {
        int rc = zk_random_below(curve->r, a);
        if (rc < 0) return rc;
        FR_T x;
        memcpy(x.l, a, 32);
        explicit_bzero(a, sizeof(a));
        if (FR(is_zero)(&x)) continue;
        FR(to_mont)(out, &x);
        explicit_bzero(&x, sizeof(x));
        return 0;
    }
}

static void P_(kg_root)(const zk_curve_t *curve, FR_T *out, unsigned k) {
    uint8_t b[32];
    zk_fr_root_of_unity(curve, k, b);
    memcpy(out->l, b, 32);
}

/* The Lagrange basis of {ω^c} at τ, then A_s(τ), B_s(τ), C_s(τ) from the r1cs (every term of every
 * constraint, plus the public rows A[m+s][s] = 1), then the H scalars on the odd points of the 2n
 * domain. */
static int P_(kg_eval)(KG_T *k, const FR_T *tau) {
    const uint32_t n = k->n;
    FR_T *L = aligned_alloc(64, (size_t)n * sizeof(FR_T)), *tmp = aligned_alloc(64, (size_t)n * sizeof(FR_T));
    if (!L || !tmp) {
        free(L);
        free(tmp);
        return -ENOMEM;
    }
    FR_T omega, x, zn, t, one = FR(ONE);
    P_(kg_root)(k->curve, &omega, k->logn);

    /* L_c(τ) = (τ^n − 1)·ω^c / (n·(τ − ω^c)) */
    x = one;
    for (uint32_t c = 0; c < n; c++) {
        FR(sub)(&L[c], tau, &x);
        FR(mul)(&x, &x, &omega);
    }
    FR(batch_inv)(L, tmp, n);
    uint64_t e = n;
    FR(pow)(&zn, tau, &e, 1);
    FR(sub)(&zn, &zn, &one);
    FR(set_u64)(&t, n);
    FR(inv)(&t, &t);
    FR(mul)(&zn, &zn, &t);
    x = zn;
    for (uint32_t c = 0; c < n; c++) {
        FR(mul)(&L[c], &L[c], &x);
        FR(mul)(&x, &x, &omega);
    }

    /* A, B, C columns: Σ_c coef·L_c(τ) per wire. circom's coefficients are mostly ±1. */
    memset(k->u, 0, (size_t)k->nvars * sizeof(FR_T));
    memset(k->v, 0, (size_t)k->nvars * sizeof(FR_T));
    memset(k->w, 0, (size_t)k->nvars * sizeof(FR_T));
    FR_T minus_one;
    FR(zero)(&minus_one);
    minus_one = FR(P);
    minus_one.l[0] -= 1; /* r − 1 as a standard integer (r is odd) */
    FR_T *cols[3] = {k->u, k->v, k->w};
    const uint8_t *p = k->r->constraints;
    uint64_t ncoefs = 0;
    for (uint32_t c = 0; c < k->m; c++) {
        for (int lc = 0; lc < 3; lc++) {
            uint32_t nt = zk_le32(p);
            p += 4;
            if (lc < 2) ncoefs += nt;
            for (uint32_t i = 0; i < nt; i++, p += 36) {
                uint32_t wire = zk_le32(p);
                FR_T coef, *dst = &cols[lc][wire];
                memcpy(coef.l, p + 4, 32);
                if (coef.l[0] == 1 && (coef.l[1] | coef.l[2] | coef.l[3]) == 0) {
                    FR(add)(dst, dst, &L[c]);
                } else if (FR(eq)(&coef, &minus_one)) {
                    FR(sub)(dst, dst, &L[c]);
                } else {
                    FR(to_mont)(&coef, &coef);
                    FR(mul)(&t, &coef, &L[c]);
                    FR(add)(dst, dst, &t);
                }
            }
        }
    }
    for (uint32_t s = 0; s <= k->npub; s++) FR(add)(&k->u[s], &k->u[s], &L[k->m + s]);
    ncoefs += k->npub + 1;
    if (ncoefs > UINT32_MAX) {
        free(L);
        free(tmp);
        return -E2BIG;
    }
    k->ncoefs = (uint32_t)ncoefs;

    /* H[i] = L^{(2n)}_{2i+1}(τ)/δ = (τ^{2n} − 1)·x_i / (2n·(τ − x_i)·δ), x_i = ω_2n·ω^i */
    FR_T omega2n, z2;
    P_(kg_root)(k->curve, &omega2n, k->logn + 1);
    x = omega2n;
    for (uint32_t i = 0; i < n; i++) {
        FR(sub)(&L[i], tau, &x);
        FR(mul)(&x, &x, &omega);
    }
    FR(batch_inv)(L, tmp, n);
    e = 2 * (uint64_t)n;
    FR(pow)(&z2, tau, &e, 1);
    FR(sub)(&z2, &z2, &one);
    FR(set_u64)(&t, 2 * (uint64_t)n);
    FR(inv)(&t, &t);
    FR(mul)(&z2, &z2, &t);
    FR(mul)(&z2, &z2, &k->delta_inv);
    x = z2;
    for (uint32_t i = 0; i < n; i++) {
        FR(mul)(&t, &x, &omega2n);
        FR(mul)(&k->h[i], &L[i], &t);
        FR(mul)(&x, &x, &omega);
    }
    explicit_bzero(L, (size_t)n * sizeof(FR_T));
    explicit_bzero(tmp, (size_t)n * sizeof(FR_T));
    free(L);
    free(tmp);
    return 0;
}

/* Standard-form scalar of entry i of point section id. */
static inline void P_(kg_scalar)(const KG_T *k, int id, size_t i, uint64_t out[4]) {
    FR_T t, a;
    switch (id) {
    case 3: /* IC: β·A_s + α·B_s + C_s (γ = 1) */
    case 8: /* C: (β·A_s + α·B_s + C_s)/δ for s > nPub */
    {
        size_t s = id == 3 ? i : k->npub + 1 + i;
        FR(mul)(&t, &k->beta, &k->u[s]);
        FR(mul)(&a, &k->alpha, &k->v[s]);
        FR(add)(&t, &t, &a);
        FR(add)(&t, &t, &k->w[s]);
        if (id == 8) FR(mul)(&t, &t, &k->delta_inv);
        break;
    }
    case 5:
        t = k->u[i];
        break;
    case 6:
    case 7:
        t = k->v[i];
        break;
    default:
        t = k->h[i];
        break; /* 9 */
    }
    FR(from_mont)(&t, &t);
    memcpy(out, t.l, 32);
}

#ifndef KG_SLICE
#define KG_SLICE 65536
#endif

/* Computes and writes count points of section id. */
static int P_(kg_points)(KG_T *k, FILE *f, int id, size_t count) {
    size_t psize = id == 7 ? sizeof(G2A) : sizeof(G1A);
    for (size_t i0 = 0; i0 < count; i0 += KG_SLICE) {
        size_t cnt = count - i0 < KG_SLICE ? count - i0 : KG_SLICE;
#pragma omp parallel for num_threads(k->threads) schedule(static)
        for (size_t i = 0; i < cnt; i++) P_(kg_scalar)(k, id, i0 + i, k->sc[i]);
        uint64_t t0 = zk_kg_now_ns();
        int rc = id == 7 ? G2(fb_mul_many)(&k->t2, (const uint64_t(*)[4])k->sc, cnt, k->pts, k->threads)
                         : G1(fb_mul_many)(&k->t1, (const uint64_t(*)[4])k->sc, cnt, k->pts, k->threads);
        if (rc < 0) return rc;
        if (id == 7)
            k->g2_ns += zk_kg_now_ns() - t0;
        else
            k->g1_ns += zk_kg_now_ns() - t0;
        if (id == 3) memcpy(k->ic + i0, k->pts, cnt * sizeof(G1A));
        if (fwrite(k->pts, psize, cnt, f) != cnt) return -EIO;
    }
    return 0;
}

/* Section 4 as snarkjs's setup writes it: per constraint its A terms, then its B terms, values
 * v·R² mod r (the Montgomery form of v·R); then the public rows (0, m+s, s, 1·R²). */
static int P_(kg_coefs)(const KG_T *k, FILE *f) {
    enum { REC = 44, BATCH = 4096 };
    uint8_t *buf = malloc((size_t)REC * BATCH);
    if (!buf) return -ENOMEM;
    size_t nb = 0;
    int rc = 0;
#define KG_FLUSH()                                                                                                     \
    do {                                                                                                               \
        if (nb == BATCH) {                                                                                             \
            if (fwrite(buf, REC, nb, f) != nb) rc = -EIO;                                                              \
            nb = 0;                                                                                                    \
        }                                                                                                              \
    } while (0)
    uint32_t cnt = k->ncoefs;
    if (fwrite(&cnt, 4, 1, f) != 1) rc = -EIO;
    const uint8_t *p = k->r->constraints;
    for (uint32_t c = 0; c < k->m && rc == 0; c++) {
        for (uint32_t lc = 0; lc < 3; lc++) {
            uint32_t nt = zk_le32(p);
            p += 4;
            if (lc == 2) {
                p += (size_t)nt * 36;
                continue;
            }
            for (uint32_t i = 0; i < nt; i++, p += 36) {
                uint8_t *e = buf + (size_t)nb * REC;
                FR_T v;
                memcpy(v.l, p + 4, 32);
                FR(mul)(&v, &v, &FR(R3)); /* v·R³/R */
                memcpy(e, &lc, 4);
                memcpy(e + 4, &c, 4);
                memcpy(e + 8, p, 4); /* wire */
                memcpy(e + 12, v.l, 32);
                nb++;
                KG_FLUSH();
            }
        }
    }
    for (uint32_t s = 0; s <= k->npub && rc == 0; s++) {
        uint8_t *e = buf + (size_t)nb * REC;
        uint32_t zero = 0, row = k->m + s;
        memcpy(e, &zero, 4);
        memcpy(e + 4, &row, 4);
        memcpy(e + 8, &s, 4);
        memcpy(e + 12, FR(R2).l, 32);
        nb++;
        KG_FLUSH();
    }
#undef KG_FLUSH
    if (rc == 0 && nb && fwrite(buf, REC, nb, f) != nb) rc = -EIO;
    free(buf);
    return rc;
}

/* Payload of section id for zk_zkey_write (zk/zkey_write.h). */
static int P_(kg_write_section)(void *ctx, int id, FILE *f) {
    KG_T *k = ctx;
    switch (id) {
    case 3: return P_(kg_points)(k, f, 3, (size_t)k->npub + 1);
    case 4: return P_(kg_coefs)(k, f);
    case 5:
    case 6:
    case 7: return P_(kg_points)(k, f, id, k->nvars);
    case 8: return P_(kg_points)(k, f, 8, (size_t)k->nvars - k->npub - 1);
    case 9: return P_(kg_points)(k, f, 9, k->n);
    default: return -EINVAL;
    }
}

/* vk.json as `snarkjs zkey export verificationkey` writes it (indent 1, no trailing newline).
 * vk_alphabeta_12 = e(α1, β2), Fq12 as [c0, c1] of Fq6 [c0, c1, c2] of Fq2 [c0, c1]: the flat order of
 * the fq12 struct (checked equal to snarkjs's value on the fixture keys of both curves). */
static char *P_(kg_vk_json)(const KG_T *k) {
    KG_CAT(PFX, fq12_t) ab;
    _Static_assert(sizeof(ab) == 12 * sizeof(FQ_T), "fq12 is 12 packed Fq");
    KG_CAT(PFX, pairing)(&ab, &k->alpha1, &k->beta2);
    const FQ_T *abf = (const FQ_T *)&ab;
    zk_sbuf_t b = {0};
    zk_sb_printf(&b, "{\n \"protocol\": \"groth16\",\n \"curve\": \"%s\",\n \"nPublic\": %u,\n \"vk_alpha_1\": ",
                 k->curve->name, k->npub);
    zk_json_g1(&b, k->curve, &k->alpha1, " ");
    zk_sb_printf(&b, ",\n \"vk_beta_2\": ");
    zk_json_g2(&b, k->curve, &k->beta2);
    zk_sb_printf(&b, ",\n \"vk_gamma_2\": ");
    zk_json_g2(&b, k->curve, &k->gamma2);
    zk_sb_printf(&b, ",\n \"vk_delta_2\": ");
    zk_json_g2(&b, k->curve, &k->delta2);
    zk_sb_printf(&b, ",\n \"vk_alphabeta_12\": [\n");
    for (int i = 0; i < 2; i++) {
        zk_sb_printf(&b, "  [\n");
        for (int j = 0; j < 3; j++) {
            char d0[130], d1[130];
            zk_json_dec(k->curve, &abf[i * 6 + j * 2], d0);
            zk_json_dec(k->curve, &abf[i * 6 + j * 2 + 1], d1);
            zk_sb_printf(&b, "   [\n    \"%s\",\n    \"%s\"\n   ]%s\n", d0, d1, j < 2 ? "," : "");
        }
        zk_sb_printf(&b, "  ]%s\n", i < 1 ? "," : "");
    }
    zk_sb_printf(&b, " ],\n \"IC\": [\n");
    for (uint32_t s = 0; s <= k->npub; s++) {
        zk_sb_printf(&b, "  ");
        zk_json_g1(&b, k->curve, &k->ic[s], "  ");
        zk_sb_printf(&b, s < k->npub ? ",\n" : "\n");
    }
    zk_sb_printf(&b, " ]\n}");
    return b.p;
}

static void P_(kg_free)(KG_T *k) {
    size_t fr = (size_t)k->nvars * sizeof(FR_T);
    if (k->u) explicit_bzero(k->u, fr);
    if (k->v) explicit_bzero(k->v, fr);
    if (k->w) explicit_bzero(k->w, fr);
    if (k->h) explicit_bzero(k->h, (size_t)k->n * sizeof(FR_T));
    free(k->u);
    free(k->v);
    free(k->w);
    free(k->h);
    free(k->ic);
    free(k->sc);
    free(k->pts);
    G1(fb_free)(&k->t1);
    G2(fb_free)(&k->t2);
    explicit_bzero(&k->alpha, sizeof(k->alpha));
    explicit_bzero(&k->beta, sizeof(k->beta));
    explicit_bzero(&k->delta_inv, sizeof(k->delta_inv));
}

static int P_(keygen)(const zk_r1cs_t *r, const char *r1cs_name, const char *zkey_path, const char *vk_path,
                      int threads, zk_keygen_stats_t *st, zk_err_t *err) {
    KG_T k;
    memset(&k, 0, sizeof(k));
    k.curve = r->curve;
    k.r = r;
    k.m = r->n_constraints;
    k.npub = r->n_pub_out + r->n_pub_in;
    k.nvars = r->n_wires;
    k.threads = threads;
    uint64_t n = zk_keygen_domain_size(r);
    unsigned logn = 0;
    while (((uint64_t)1 << logn) < n) logn++;
    if (logn + 1 > TWO_ADICITY)
        return zk_fail(err, EINVAL,
                       "%s: %u constraints and %u public signals need a domain of 2^%u; %s keys go up to 2^%u",
                       r1cs_name, k.m, k.npub, logn, r->curve->name, TWO_ADICITY - 1);
    k.n = (uint32_t)n;
    k.logn = logn;

    uint64_t t_start = zk_kg_now_ns();
    int rc;
    FR_T tau, delta, one = FR(ONE);
    /* τ outside both the n and the 2n domain (τ^{2n} ≠ 1), so every Lagrange denominator is non-zero */
    for (;;) {
        if ((rc = P_(kg_random)(k.curve, &tau)) < 0) goto fail_rand;
        FR_T t;
        uint64_t e = 2 * n;
        FR(pow)(&t, &tau, &e, 1);
        if (!FR(eq)(&t, &one)) break;
    }
    if ((rc = P_(kg_random)(k.curve, &k.alpha)) < 0 || (rc = P_(kg_random)(k.curve, &k.beta)) < 0 ||
        (rc = P_(kg_random)(k.curve, &delta)) < 0)
        goto fail_rand;
    FR(inv)(&k.delta_inv, &delta);

    size_t fr = (size_t)k.nvars * sizeof(FR_T);
    k.u = aligned_alloc(64, (fr + 63) & ~(size_t)63);
    k.v = aligned_alloc(64, (fr + 63) & ~(size_t)63);
    k.w = aligned_alloc(64, (fr + 63) & ~(size_t)63);
    k.h = aligned_alloc(64, (size_t)n * sizeof(FR_T));
    k.ic = malloc(((size_t)k.npub + 1) * sizeof(G1A));
    k.sc = malloc((size_t)KG_SLICE * 32);
    k.pts = aligned_alloc(64, (size_t)KG_SLICE * sizeof(G2A));
    if (!k.u || !k.v || !k.w || !k.h || !k.ic || !k.sc || !k.pts) {
        rc = -ENOMEM;
        goto fail;
    }
    if ((rc = P_(kg_eval)(&k, &tau)) < 0) {
        if (rc == -E2BIG) {
            P_(kg_free)(&k);
            return zk_fail(err, E2BIG, "%s: more than 2^32 A and B terms", r1cs_name);
        }
        goto fail;
    }
    explicit_bzero(&tau, sizeof(tau));
    uint64_t t_eval = zk_kg_now_ns();

    /* Tables sized for the products each group gets: 3 nVars + n in G1, nVars in G2. */
    size_t n1 = 3 * (size_t)k.nvars + n;
    if ((rc = G1(fb_build)(&k.t1, &KG_CAT(PFX, g1_gen), G1(fb_window)(n1, (size_t)48 << 20), threads)) < 0) goto fail;
    if ((rc = G2(fb_build)(&k.t2, &KG_CAT(PFX, g2_gen), G2(fb_window)(k.nvars, (size_t)48 << 20), threads)) < 0)
        goto fail;
    uint64_t t_tab = zk_kg_now_ns();

    /* Header points. */
    {
        uint64_t s3[3][4];
        FR_T t;
        FR(from_mont)(&t, &k.alpha);
        memcpy(s3[0], t.l, 32);
        FR(from_mont)(&t, &k.beta);
        memcpy(s3[1], t.l, 32);
        FR(from_mont)(&t, &delta);
        memcpy(s3[2], t.l, 32);
        G1A g1[3];
        G2A g2[3];
        if ((rc = G1(fb_mul_many)(&k.t1, (const uint64_t(*)[4])s3, 3, g1, 1)) < 0 ||
            (rc = G2(fb_mul_many)(&k.t2, (const uint64_t(*)[4])(s3 + 1), 2, g2, 1)) < 0)
            goto fail;
        explicit_bzero(s3, sizeof(s3));
        explicit_bzero(&t, sizeof(t));
        k.alpha1 = g1[0];
        k.beta1 = g1[1];
        k.delta1 = g1[2];
        k.beta2 = g2[0];
        k.delta2 = g2[1];
        k.gamma2 = KG_CAT(PFX, g2_gen);
    }
    explicit_bzero(&delta, sizeof(delta));

    /* The file. */
    zk_zkey_spec_t spec = {
        .curve = k.curve, .n_vars = k.nvars, .n_pub = k.npub, .domain_size = k.n, .n_coefs = k.ncoefs,
        .alpha1 = &k.alpha1, .beta1 = &k.beta1, .beta2 = &k.beta2, .gamma2 = &k.gamma2,
        .delta1 = &k.delta1, .delta2 = &k.delta2, .write_section = P_(kg_write_section), .ctx = &k,
    };
    uint64_t file_size;
    if ((rc = zk_zkey_write(zkey_path, &spec, &file_size, err)) < 0) {
        P_(kg_free)(&k);
        return rc;
    }
    uint64_t t_end = zk_kg_now_ns();

    if (vk_path) {
        char *vk = P_(kg_vk_json)(&k);
        rc = zk_write_file_atomic(vk_path, vk, strlen(vk), err);
        free(vk);
        if (rc < 0) {
            P_(kg_free)(&k);
            return rc;
        }
    }
    if (st) {
        st->n_vars = k.nvars;
        st->n_pub = k.npub;
        st->n_constraints = k.m;
        st->domain_size = k.n;
        st->n_coefs = k.ncoefs;
        st->eval_ns = t_eval - t_start;
        st->table_ns = t_tab - t_eval;
        st->g1_ns = k.g1_ns;
        st->g2_ns = k.g2_ns;
        st->write_ns = (t_end - t_tab) - k.g1_ns - k.g2_ns;
        st->file_size = file_size;
    }
    P_(kg_free)(&k);
    return 0;

fail_rand:
    P_(kg_free)(&k);
    return zk_fail(err, -rc, "getrandom failed: %s", strerror(-rc));
fail:
    P_(kg_free)(&k);
    if (rc == -ENOMEM) return zk_fail(err, ENOMEM, "%s: out of memory making the key", zkey_path);
    return zk_fail(err, -rc, "%s: %s", zkey_path, strerror(-rc));
}

/* Fixed-base products with window c against double-and-add, in G1 and G2: scalars 0, 1, 2, 2^(c-1)
 * (the largest positive digit), 2^(c-1)·Σ 2^(c·i), r−1, (r−1)/2 and n_random random ones. */
static int P_(fb_selftest)(const zk_curve_t *curve, unsigned c, size_t n_random, zk_err_t *err) {
    size_t n = 7 + n_random;
    uint64_t(*k)[4] = calloc(n, 32);
    G1A *o1 = malloc(n * sizeof(G1A));
    G2A *o2 = malloc(n * sizeof(G2A));
    G1TAB t1 = {0};
    G2TAB t2 = {0};
    int rc = -ENOMEM;
    if (!k || !o1 || !o2) goto out;
    k[1][0] = 1;
    k[2][0] = 2;
    k[3][(c - 1) / 64] = (uint64_t)1 << ((c - 1) % 64);
    for (unsigned b = c - 1; b < 250; b += c) k[4][b / 64] |= (uint64_t)1 << (b % 64);
    memcpy(k[5], FR(P).l, 32);
    k[5][0] -= 1;
    memcpy(k[6], k[5], 32);
    for (int i = 0; i < 4; i++) k[6][i] = (k[6][i] >> 1) | (i < 3 ? k[6][i + 1] << 63 : 0);
    for (size_t i = 7; i < n; i++) {
        uint8_t a[32], b[32];
        if ((rc = zk_random_rs(curve, a, b)) < 0) goto out;
        memcpy(k[i], a, 32);
    }
    if ((rc = G1(fb_build)(&t1, &KG_CAT(PFX, g1_gen), c, 2)) < 0 ||
        (rc = G2(fb_build)(&t2, &KG_CAT(PFX, g2_gen), c, 2)) < 0 ||
        (rc = G1(fb_mul_many)(&t1, (const uint64_t(*)[4])k, n, o1, 2)) < 0 ||
        (rc = G2(fb_mul_many)(&t2, (const uint64_t(*)[4])k, n, o2, 2)) < 0)
        goto out;
    KG_CAT(PFX, g1_xyzz_t) g1, x1;
    KG_CAT(PFX, g2_xyzz_t) g2, x2;
    G1(xyzz_from_aff)(&g1, &KG_CAT(PFX, g1_gen));
    G2(xyzz_from_aff)(&g2, &KG_CAT(PFX, g2_gen));
    for (size_t i = 0; i < n; i++) {
        G1A a1;
        G2A a2;
        G1(xyzz_mul)(&x1, &g1, k[i], 4);
        G2(xyzz_mul)(&x2, &g2, k[i], 4);
        G1(xyzz_to_aff)(&a1, &x1);
        G2(xyzz_to_aff)(&a2, &x2);
        if (memcmp(&a1, &o1[i], sizeof(a1)) || memcmp(&a2, &o2[i], sizeof(a2))) {
            rc = zk_fail(err, EPROTO, "%s fixed-base window %u: scalar %zu: %s differs from double-and-add",
                         curve->name, c, i, memcmp(&a1, &o1[i], sizeof(a1)) ? "G1" : "G2");
            goto out;
        }
    }
    rc = 0;
out:
    if (rc == -ENOMEM) zk_fail(err, ENOMEM, "out of memory");
    G1(fb_free)(&t1);
    G2(fb_free)(&t2);
    free(k);
    free(o1);
    free(o2);
    return rc;
}

#undef KG_T
#undef G2TAB
#undef G1TAB
#undef G2A
#undef G1A
#undef FQ_T
#undef FR_T
#undef G2
#undef G1
#undef FQ
#undef FR
#undef P_
#undef KG_CAT
#undef KG_CAT2
