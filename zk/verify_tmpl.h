/* The curve-specific half of zk/verify.c, included once per curve. Before including: VT (bn | bls),
 * VT_FQN (64-bit limbs of Fq), VT_G1_IN_SUBGROUP(p) (an expression on a const VT_g1_aff_t *). */

#define VT_CAT2(a, b) a##_##b
#define VT_CAT(a, b) VT_CAT2(a, b)
#define VF(name) VT_CAT(VT, name)
#define G1A VT_CAT(VT, g1_aff_t)
#define G2A VT_CAT(VT, g2_aff_t)
#define G1X VT_CAT(VT, g1_xyzz_t)
#define FQ VT_CAT(VT, fq_t)
#define FQ2 VT_CAT(VT, fq2_t)
#define FQ12 VT_CAT(VT, fq12_t)
#define PREP VT_CAT(VT, g2_prep_t)
#define PRE VT_CAT(VT, vk_pre_t)

typedef struct {
    PREP gamma, delta;
    FQ12 ml_ab; /* Miller loop of (α1, β2), before the final exponentiation */
} PRE;

static int VF(check_g1)(const uint8_t *bytes, const char *what, zk_err_t *err) {
    G1A p;
    memcpy(&p, bytes, sizeof(p));
    if (!VF(g1_aff_on_curve)(&p)) return zk_fail(err, EINVAL, "%s is not on the curve", what);
    if (!(VT_G1_IN_SUBGROUP(&p))) return zk_fail(err, EINVAL, "%s is not in the prime-order subgroup of G1", what);
    return 0;
}

static int VF(check_g2)(const uint8_t *bytes, const char *what, zk_err_t *err) {
    G2A p;
    memcpy(&p, bytes, sizeof(p));
    if (!VF(g2_aff_on_curve)(&p)) return zk_fail(err, EINVAL, "%s is not on the twist curve", what);
    if (!VF(g2_in_subgroup)(&p)) return zk_fail(err, EINVAL, "%s is not in the prime-order subgroup of G2", what);
    return 0;
}

/* Checks every key point and prepares the fixed pairing inputs. */
static int VF(vk_prepare)(zk_vk_t *vk, zk_err_t *err) {
    int rc;
    if ((rc = VF(check_g1)(vk->alpha1, "verifying key point vk_alpha_1", err)) < 0) return rc;
    if ((rc = VF(check_g2)(vk->beta2, "verifying key point vk_beta_2", err)) < 0) return rc;
    if ((rc = VF(check_g2)(vk->gamma2, "verifying key point vk_gamma_2", err)) < 0) return rc;
    if ((rc = VF(check_g2)(vk->delta2, "verifying key point vk_delta_2", err)) < 0) return rc;
    for (uint32_t i = 0; i <= vk->n_pub; i++) {
        char what[64];
        snprintf(what, sizeof(what), "verifying key point IC[%u]", i);
        if ((rc = VF(check_g1)(vk->ic + (size_t)i * sizeof(G1A), what, err)) < 0) return rc;
    }
    PRE *pre = aligned_alloc(64, (sizeof(PRE) + 63) & ~(size_t)63);
    if (!pre) return zk_fail(err, ENOMEM, "out of memory preparing the verifying key");
    G2A q;
    G1A a;
    memcpy(&q, vk->gamma2, sizeof(q));
    VF(g2_prepare)(&pre->gamma, &q);
    memcpy(&q, vk->delta2, sizeof(q));
    VF(g2_prepare)(&pre->delta, &q);
    PREP *beta = malloc(sizeof(PREP));
    if (!beta) {
        free(pre);
        return zk_fail(err, ENOMEM, "out of memory preparing the verifying key");
    }
    memcpy(&q, vk->beta2, sizeof(q));
    VF(g2_prepare)(beta, &q);
    memcpy(&a, vk->alpha1, sizeof(a));
    const PREP *qs[1] = {beta};
    VF(miller_loop)(&pre->ml_ab, &a, qs, 1);
    free(beta);
    vk->pre = pre;
    return 0;
}

/* vk_x = IC0 + Σ pub_i IC_{i+1}: one shared chain of doublings over the 256 scalar bits (Straus). */
static void VF(vk_x)(G1A *out, const zk_vk_t *vk, const uint8_t *pub, uint32_t n) {
    const uint8_t *ic = vk->ic;
    G1X acc;
    VF(g1_xyzz_set_inf)(&acc);
    int top = -1;
    for (uint32_t i = 0; i < n; i++)
        for (int b = 255; b > top; b--)
            if ((pub[32 * i + b / 8] >> (b % 8)) & 1) {
                top = b;
                break;
            }
    for (int b = top; b >= 0; b--) {
        VF(g1_xyzz_dbl)(&acc, &acc);
        for (uint32_t i = 0; i < n; i++)
            if ((pub[32 * i + b / 8] >> (b % 8)) & 1) {
                G1A p;
                memcpy(&p, ic + (size_t)(i + 1) * sizeof(p), sizeof(p));
                VF(g1_xyzz_add_aff)(&acc, &acc, &p);
            }
    }
    G1A p0;
    memcpy(&p0, ic, sizeof(p0));
    VF(g1_xyzz_add_aff)(&acc, &acc, &p0);
    VF(g1_xyzz_to_aff)(out, &acc);
}

static int VF(verify)(const zk_vk_t *vk, const zk_proof_t *pf, const uint8_t *pub, uint32_t n, zk_err_t *err) {
    int rc;
    if ((rc = VF(check_g1)(pf->a, "proof point pi_a", err)) < 0) return rc;
    if ((rc = VF(check_g2)(pf->b, "proof point pi_b", err)) < 0) return rc;
    if ((rc = VF(check_g1)(pf->c, "proof point pi_c", err)) < 0) return rc;
    const PRE *pre = vk->pre;
    G1A P[3];
    G2A B;
    memcpy(&P[0], pf->a, sizeof(G1A));
    VF(g1_aff_neg)(&P[0], &P[0]);
    memcpy(&B, pf->b, sizeof(B));
    VF(vk_x)(&P[1], vk, pub, n);
    memcpy(&P[2], pf->c, sizeof(G1A));
    PREP *bp = malloc(sizeof(PREP));
    if (!bp) return zk_fail(err, ENOMEM, "out of memory");
    VF(g2_prepare)(bp, &B);
    const PREP *qs[3] = {bp, &pre->gamma, &pre->delta};
    FQ12 f;
    VF(miller_loop)(&f, P, qs, 3);
    free(bp);
    VF(fq12_mul)(&f, &f, &pre->ml_ab);
    VF(final_exp)(&f, &f);
    if (!VF(fq12_is_one)(&f))
        return zk_fail(err, EBADMSG, "pairing check failed: e(A,B) != e(alpha,beta) e(vk_x,gamma) e(C,delta)");
    return 0;
}

/* The first of count affine points at pts (G2 when g2) with a coordinate >= q (*why = 1), off its
 * curve (2) or, with subgroup, outside the prime-order subgroup (3); -1 when every one is good. */
static int64_t VF(first_bad_point)(const zk_curve_t *c, const uint8_t *pts, uint64_t count, bool g2, bool subgroup,
                                   int *why) {
    const size_t sz = g2 ? sizeof(G2A) : sizeof(G1A);
    const unsigned nfe = g2 ? 4 : 2;
    for (uint64_t i = 0; i < count; i++) {
        const uint8_t *b = pts + i * sz;
        for (unsigned j = 0; j < nfe; j++) {
            uint64_t l[VT_FQN];
            memcpy(l, b + j * sizeof(l), sizeof(l));
            if (!zk_bigint_lt(l, (const uint64_t *)(const void *)c->q, VT_FQN)) return *why = 1, (int64_t)i;
        }
        bool on, in = true;
        if (g2) {
            G2A p;
            memcpy(&p, b, sizeof(p));
            on = VF(g2_aff_on_curve)(&p);
            if (on && subgroup) in = VF(g2_in_subgroup)(&p);
        } else {
            G1A p;
            memcpy(&p, b, sizeof(p));
            on = VF(g1_aff_on_curve)(&p);
            if (on && subgroup) in = VT_G1_IN_SUBGROUP(&p);
        }
        if (!on) return *why = 2, (int64_t)i;
        if (!in) return *why = 3, (int64_t)i;
    }
    return -1;
}

/* Jacobian (X, Y, Z) in standard form, each < q, to affine Montgomery bytes (z = 0: infinity). */
static void VF(g1_from_jac)(uint8_t *out, const uint64_t *x, const uint64_t *y, const uint64_t *z) {
    G1A p;
    FQ X, Y, Z;
    memcpy(X.l, x, sizeof(X.l));
    memcpy(Y.l, y, sizeof(Y.l));
    memcpy(Z.l, z, sizeof(Z.l));
    if (VF(fq_is_zero)(&Z)) {
        memset(&p, 0, sizeof(p));
    } else {
        VF(fq_to_mont)(&X, &X);
        VF(fq_to_mont)(&Y, &Y);
        VF(fq_to_mont)(&Z, &Z);
        FQ zi, zi2, zi3;
        VF(fq_inv)(&zi, &Z);
        VF(fq_sqr)(&zi2, &zi);
        VF(fq_mul)(&zi3, &zi2, &zi);
        VF(fq_mul)(&p.x, &X, &zi2);
        VF(fq_mul)(&p.y, &Y, &zi3);
    }
    memcpy(out, &p, sizeof(p));
}

/* c[0..5] = x.c0, x.c1, y.c0, y.c1, z.c0, z.c1 in standard form. */
static void VF(g2_from_jac)(uint8_t *out, const uint64_t *c) {
    G2A p;
    FQ2 v[3];
    for (int i = 0; i < 3; i++) {
        memcpy(v[i].c0.l, c + (2 * i) * VT_FQN, sizeof(v[i].c0.l));
        memcpy(v[i].c1.l, c + (2 * i + 1) * VT_FQN, sizeof(v[i].c1.l));
        VF(fq_to_mont)(&v[i].c0, &v[i].c0);
        VF(fq_to_mont)(&v[i].c1, &v[i].c1);
    }
    if (VF(fq2_is_zero)(&v[2])) {
        memset(&p, 0, sizeof(p));
    } else {
        FQ2 zi, zi2, zi3;
        VF(fq2_inv)(&zi, &v[2]);
        VF(fq2_sqr)(&zi2, &zi);
        VF(fq2_mul)(&zi3, &zi2, &zi);
        VF(fq2_mul)(&p.x, &v[0], &zi2);
        VF(fq2_mul)(&p.y, &v[1], &zi3);
    }
    memcpy(out, &p, sizeof(p));
}

#undef VT_CAT2
#undef VT_CAT
#undef VF
#undef G1A
#undef G2A
#undef G1X
#undef FQ
#undef FQ2
#undef FQ12
#undef PREP
#undef PRE
