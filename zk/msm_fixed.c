/* The window tables of a resident key and the proving core over them (zk/msm_fixed.h). */
#include "msm_fixed.h"
#include "threads.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const zk_msm_names[ZK_MSM_COUNT] = {"A", "B1", "B2", "C", "H"};

/* Points and their count of each MSM of z, in zk_msm_names order. */
static void msm_shape(const zk_zkey_t *z, const void *pts[ZK_MSM_COUNT], size_t n[ZK_MSM_COUNT],
                      size_t ps[ZK_MSM_COUNT]) {
    pts[ZK_MSM_A] = z->points_a, n[ZK_MSM_A] = z->n_vars;
    pts[ZK_MSM_B1] = z->points_b1, n[ZK_MSM_B1] = z->n_vars;
    pts[ZK_MSM_B2] = z->points_b2, n[ZK_MSM_B2] = z->n_vars;
    pts[ZK_MSM_C] = z->points_c, n[ZK_MSM_C] = z->n_vars - z->n_pub - 1;
    pts[ZK_MSM_H] = z->points_h, n[ZK_MSM_H] = z->domain_size;
    for (int m = 0; m < ZK_MSM_COUNT; m++) ps[m] = m == ZK_MSM_B2 ? z->curve->g2_size : z->curve->g1_size;
}

static uint64_t fnv(uint64_t h, const void *p, size_t len) {
    const uint8_t *b = p;
    for (size_t i = 0; i < len; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

uint64_t zk_key_fingerprint(const zk_zkey_t *z) {
    const void *pts[ZK_MSM_COUNT];
    size_t n[ZK_MSM_COUNT], ps[ZK_MSM_COUNT];
    msm_shape(z, pts, n, ps);
    uint32_t head[4] = {z->n_vars, z->n_pub, z->domain_size, (uint32_t)z->curve->id};
    uint64_t h = fnv(0xcbf29ce484222325ull, head, sizeof head);
    for (int m = 0; m < ZK_MSM_COUNT; m++)
        for (size_t k = 0; k < 17 && n[m]; k++) /* 17 points from the first to the last */
            h = fnv(h, (const uint8_t *)pts[m] + (n[m] - 1) * k / 16 * ps[m], ps[m]);
    return h;
}

static int build_one(zk_fixed_t *t, const zk_curve_t *cv, int m, const void *pts, size_t n,
                     const zk_fixed_plan_t *pl, int threads) {
    if (cv->id == ZK_CURVE_BN128)
        return m == ZK_MSM_B2 ? bn_g2_fixed_build(t, pts, n, pl, threads) : bn_g1_fixed_build(t, pts, n, pl, threads);
    return m == ZK_MSM_B2 ? bls_g2_fixed_build(t, pts, n, pl, threads) : bls_g1_fixed_build(t, pts, n, pl, threads);
}

void zk_key_tables_build(zk_key_tables_t *kt, const zk_zkey_t *z, size_t budget, int threads, char *desc,
                         size_t desclen) {
    memset(kt, 0, sizeof(*kt));
    kt->z = z;
    kt->fingerprint = zk_key_fingerprint(z);
    if (threads < 1) threads = zk_threads_default();
    const void *pts[ZK_MSM_COUNT];
    size_t n[ZK_MSM_COUNT], ps[ZK_MSM_COUNT], fin[ZK_MSM_COUNT];
    msm_shape(z, pts, n, ps);
    for (int m = 0; m < ZK_MSM_COUNT; m++) fin[m] = zk_fixed_finite(pts[m], n[m], ps[m]); /* a row's points */
    int order[ZK_MSM_COUNT];
    double plain[ZK_MSM_COUNT]; /* by plain cost, largest first (ties: A before B1 before C) */
    for (int m = 0; m < ZK_MSM_COUNT; m++) plain[m] = (double)fin[m] * (m == ZK_MSM_B2 ? ZK_G2_ADD_WEIGHT : 1);
    zk_order_largest_first(plain, ZK_MSM_COUNT, order);
    size_t left = budget;
    for (int i = 0; i < ZK_MSM_COUNT; i++) {
        int m = order[i];
        zk_fixed_plan_t pl = zk_fixed_plan(fin[m], ps[m], left, threads);
        if (build_one(&kt->t[m], z->curve, m, pts[m], n[m], &pl, threads) < 0) {
            pl.stored = 1; /* no memory for it: the plain MSM */
            (void)build_one(&kt->t[m], z->curve, m, pts[m], n[m], &pl, threads);
        }
        size_t b = zk_fixed_bytes(&kt->t[m].plan, kt->t[m].m, ps[m]);
        kt->bytes += b;
        left -= b;
    }
    int off = snprintf(desc, desclen, "window tables %.1f MiB (%.1f MiB available):", kt->bytes / 1048576.0,
                       budget / 1048576.0);
    for (int m = 0; m < ZK_MSM_COUNT && off >= 0 && (size_t)off < desclen; m++) {
        const zk_fixed_plan_t *p = &kt->t[m].plan;
        if (p->stored > 1)
            off += snprintf(desc + off, desclen - (size_t)off, " %s %u-bit windows, %u of %u stored, %.1f MiB;",
                            zk_msm_names[m], p->c, p->stored, p->nwin, zk_fixed_bytes(p, kt->t[m].m, ps[m]) / 1048576.0);
        else
            off += snprintf(desc + off, desclen - (size_t)off, " %s plain;", zk_msm_names[m]);
    }
    if (off > 0 && (size_t)off < desclen && desc[off - 1] == ';') desc[off - 1] = 0;
}

/* Split over the threads, every thread reduces its own buckets of every MSM (at 16-bit windows 2^15
 * of them, 3.8-4.8 ms a reduction: bench/msm_ntt --only reduce, bn128 G1, ifma); side by side each
 * MSM's buckets are reduced once. pchain16, ifma, 2 threads, the core with tables: 176.6-179.9 ms
 * with the 16-bit windows alone, 161.6-163.6 with both (build/bench/resident, bench/RESULTS.md). */
bool zk_key_tables_side_by_side(const zk_key_tables_t *kt, int threads, int order[ZK_MSM_COUNT]) {
    double one[ZK_MSM_COUNT], all[ZK_MSM_COUNT];
    for (int m = 0; m < ZK_MSM_COUNT; m++) order[m] = m;
    if (!kt->bytes) return false; /* the plain core (its plans may be unset) */
    for (int m = 0; m < ZK_MSM_COUNT; m++) {
        size_t ps = m == ZK_MSM_B2 ? kt->z->curve->g2_size : kt->z->curve->g1_size;
        double w = m == ZK_MSM_B2 ? ZK_G2_ADD_WEIGHT : 1;
        one[m] = w * zk_fixed_cost(&kt->t[m].plan, kt->t[m].m, ps, 1);
        all[m] = w * zk_fixed_cost(&kt->t[m].plan, kt->t[m].m, ps, threads);
    }
    return zk_msm_side_by_side(one, all, ZK_MSM_COUNT, threads, order);
}

bool zk_key_tables_match(const zk_key_tables_t *kt, const zk_zkey_t *z) {
    return kt->z == z && kt->t[ZK_MSM_A].bases == z->points_a && kt->t[ZK_MSM_B1].bases == z->points_b1 &&
           kt->t[ZK_MSM_B2].bases == z->points_b2 && kt->t[ZK_MSM_C].bases == z->points_c &&
           kt->t[ZK_MSM_H].bases == z->points_h && kt->fingerprint == zk_key_fingerprint(z);
}

void zk_key_tables_free(zk_key_tables_t *kt) {
    for (int m = 0; m < ZK_MSM_COUNT; m++) free(kt->t[m].pts), free(kt->t[m].idx);
    memset(kt, 0, sizeof(*kt));
}
