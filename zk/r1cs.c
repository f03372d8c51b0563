/* Reader of circom .r1cs files and the witness check <A,w>·<B,w> = <C,w> on every constraint. */
#include "r1cs.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "binfile.h"
#include "field.h"

static const char *const lc_names[3] = {"A", "B", "C"};

/* Walks every constraint record of section 2: each LC's nTerms and terms inside the section, wire
 * ids < nWires, coefficients < r, and nothing left after the last record. */
static int walk_constraints(const char *name, const uint8_t *p, uint64_t size, uint32_t m, uint32_t n_wires,
                            const zk_curve_t *c, zk_err_t *err) {
    const uint64_t term = 4 + (uint64_t)c->n8r;
    uint64_t pos = 0;
    for (uint32_t i = 0; i < m; i++) {
        for (int l = 0; l < 3; l++) {
            if (size - pos < 4)
                return zk_fail(err, EINVAL, "%s: section 2: constraint %u %s runs past the end of the section", name,
                               i, lc_names[l]);
            uint32_t nt = zk_le32(p + pos);
            pos += 4;
            if ((uint64_t)nt * term > size - pos)
                return zk_fail(err, EINVAL,
                               "%s: section 2: constraint %u %s has %u terms, more than the section holds", name, i,
                               lc_names[l], nt);
            for (uint32_t k = 0; k < nt; k++, pos += term) {
                uint32_t wire = zk_le32(p + pos);
                if (wire >= n_wires)
                    return zk_fail(err, EINVAL, "%s: section 2: constraint %u %s term %u: wire %u is not < nWires %u",
                                   name, i, lc_names[l], k, wire, n_wires);
                if (!zk_le_lt(p + pos + 4, c->r, c->n8r))
                    return zk_fail(err, EINVAL, "%s: section 2: constraint %u %s term %u: coefficient is not < r",
                                   name, i, lc_names[l], k);
            }
        }
    }
    if (pos != size)
        return zk_fail(err, EINVAL, "%s: section 2: %" PRIu64 " bytes after the last of %u constraints", name,
                       size - pos, m);
    return 0;
}

int zk_r1cs_parse(zk_r1cs_t *r, const char *name, const uint8_t *data, size_t size, zk_err_t *err) {
    memset(r, 0, sizeof(*r));
    zk_bin_t b;
    int rc = zk_bin_parse(&b, name, data, size, "r1cs", 1, 1, "section", err);
    if (rc < 0) return rc;
    if (!b.sec[1].present) return zk_fail(err, EINVAL, "%s: section 1 (header) is missing", name);
    if (!b.sec[2].present) return zk_fail(err, EINVAL, "%s: section 2 (constraints) is missing", name);
    const uint8_t *h = zk_bin_payload(&b, 1);
    uint64_t hs = b.sec[1].size;
    if (hs < 4) return zk_fail(err, EINVAL, "%s: section 1 (header) size %" PRIu64 " is too small", name, hs);
    uint32_t n8 = zk_le32(h);
    if (n8 != 32) return zk_fail(err, EINVAL, "%s: section 1: n8 is %u, expected 32", name, n8);
    if (hs != 32 + (uint64_t)n8)
        return zk_fail(err, EINVAL, "%s: section 1 (header) size %" PRIu64 ", expected %u", name, hs, 32 + n8);
    const zk_curve_t *c = zk_curve_by_r(h + 4, n8);
    if (!c) return zk_fail(err, EINVAL, "%s: section 1: prime is not the scalar field r of bn128 or bls12381", name);
    const uint8_t *p = h + 4 + n8;
    uint32_t n_wires = zk_le32(p), n_pub_out = zk_le32(p + 4), n_pub_in = zk_le32(p + 8), n_prv_in = zk_le32(p + 12);
    uint64_t n_labels = zk_le64(p + 16);
    uint32_t m = zk_le32(p + 24);
    if (n_wires == 0) return zk_fail(err, EINVAL, "%s: section 1: nWires is 0", name);
    uint64_t inputs = (uint64_t)n_pub_out + n_pub_in + n_prv_in;
    if (inputs >= n_wires)
        return zk_fail(err, EINVAL, "%s: section 1: nPubOut+nPubIn+nPrvIn = %" PRIu64 " is not < nWires %u", name,
                       inputs, n_wires);
    if (n_labels < n_wires)
        return zk_fail(err, EINVAL, "%s: section 1: nLabels %" PRIu64 " is less than nWires %u", name, n_labels,
                       n_wires);
    /* Each constraint takes at least 12 bytes (three empty LCs). */
    if ((uint64_t)m * 12 > b.sec[2].size)
        return zk_fail(err, EINVAL, "%s: section 2 size %" PRIu64 " cannot hold %u constraints", name, b.sec[2].size,
                       m);
    if (b.sec[3].present && b.sec[3].size != (uint64_t)n_wires * 8)
        return zk_fail(err, EINVAL, "%s: section 3 (wire map) size %" PRIu64 ", expected %" PRIu64 " for nWires %u",
                       name, b.sec[3].size, (uint64_t)n_wires * 8, n_wires);
    rc = walk_constraints(name, zk_bin_payload(&b, 2), b.sec[2].size, m, n_wires, c, err);
    if (rc < 0) return rc;
    r->curve = c;
    r->n_wires = n_wires;
    r->n_pub_out = n_pub_out;
    r->n_pub_in = n_pub_in;
    r->n_prv_in = n_prv_in;
    r->n_labels = n_labels;
    r->n_constraints = m;
    r->constraints = zk_bin_payload(&b, 2);
    r->constraints_size = (size_t)b.sec[2].size;
    return 0;
}

int zk_r1cs_open(zk_r1cs_t *r, const char *path, zk_err_t *err) {
    memset(r, 0, sizeof(*r));
    void *map;
    size_t size;
    int rc = zk_map_file(path, &map, &size, err);
    if (rc < 0) return rc;
    rc = zk_r1cs_parse(r, path, map, size, err);
    if (rc < 0) {
        if (map) munmap(map, size);
        return rc;
    }
    r->map = map;
    r->map_size = size;
    return 0;
}

void zk_r1cs_close(zk_r1cs_t *r) {
    if (!r) return;
    if (r->map) munmap(r->map, r->map_size);
    memset(r, 0, sizeof(*r));
}

/* The check works on standard-form sums: with wm = w·R (Montgomery copy of the witness),
 * mont(coef, wm) = coef·w. Coefficients 1 and r-1 (most of what circom writes) need no product at
 * all: w is added or subtracted as it stands. Per constraint, mont(mont(a, b), R^2) = a·b. */
#define DEFINE_CHECK(F)                                                                                              \
    static inline const uint8_t *F##_lc(const uint8_t *p, const uint8_t *w, const F##_t *wm, F##_t *acc,          \
                                        bool *nonempty) {                                                            \
        const F##_t minus_one = {{F##_P.l[0] - 1, F##_P.l[1], F##_P.l[2], F##_P.l[3]}}; /* clang: not static */     \
        uint32_t nt = zk_le32(p);                                                                                    \
        p += 4;                                                                                                      \
        F##_zero(acc);                                                                                               \
        *nonempty = nt != 0;                                                                                         \
        for (uint32_t k = 0; k < nt; k++, p += 36) {                                                                 \
            F##_t coef, t;                                                                                           \
            const uint32_t id = zk_le32(p);                                                                          \
            memcpy(coef.l, p + 4, 32);                                                                               \
            if ((coef.l[0] == 1) & ((coef.l[1] | coef.l[2] | coef.l[3]) == 0)) {                                     \
                memcpy(t.l, w + (size_t)id * 32, 32);                                                                \
                F##_add(acc, acc, &t);                                                                               \
            } else if (F##_eq(&coef, &minus_one)) {                                                                  \
                memcpy(t.l, w + (size_t)id * 32, 32);                                                                \
                F##_sub(acc, acc, &t);                                                                               \
            } else {                                                                                                 \
                F##_mul(&t, &coef, &wm[id]);                                                                         \
                F##_add(acc, acc, &t);                                                                               \
            }                                                                                                        \
        }                                                                                                            \
        return p;                                                                                                    \
    }                                                                                                                \
    /* Index of the first failing constraint, or -1. */                                                              \
    static int64_t F##_check(const uint8_t *p, uint32_t m, const uint8_t *w, const F##_t *wm) {                     \
        for (uint32_t i = 0; i < m; i++) {                                                                           \
            F##_t a, b, c, ab;                                                                                       \
            bool ha, hb, hc;                                                                                         \
            p = F##_lc(p, w, wm, &a, &ha);                                                                           \
            p = F##_lc(p, w, wm, &b, &hb);                                                                           \
            p = F##_lc(p, w, wm, &c, &hc);                                                                           \
            (void)hc;                                                                                                \
            if (ha && hb) {                                                                                          \
                F##_mul(&ab, &a, &b);                                                                                \
                F##_mul(&ab, &ab, &F##_R2);                                                                          \
            } else {                                                                                                 \
                F##_zero(&ab);                                                                                       \
            }                                                                                                        \
            if (!F##_eq(&ab, &c)) return i;                                                                          \
        }                                                                                                            \
        return -1;                                                                                                   \
    }                                                                                                                \
    static void F##_to_mont_all(F##_t *wm, const uint8_t *w, uint32_t n) {                                          \
        for (uint32_t i = 0; i < n; i++) {                                                                           \
            F##_t t;                                                                                                 \
            memcpy(t.l, w + (size_t)i * 32, 32);                                                                     \
            F##_to_mont(&wm[i], &t);                                                                                 \
        }                                                                                                            \
    }

DEFINE_CHECK(bn_fr)
DEFINE_CHECK(bls_fr)

int zk_r1cs_check(const zk_r1cs_t *r, const char *r1cs_name, const uint8_t *w, uint32_t n, int64_t *ret_failed,
                  zk_err_t *err) {
    if (ret_failed) *ret_failed = -1;
    if (!r->curve || !r->constraints) return zk_fail(err, EINVAL, "%s: r1cs is not open", r1cs_name);
    if (n != r->n_wires)
        return zk_fail(err, EINVAL, "%s: witness has %u values, the r1cs has %u wires", r1cs_name, n, r->n_wires);
    /* Values >= r would make the ±1 shortcuts and the products disagree; the readers refuse them. */
    for (uint32_t i = 0; i < n; i++)
        if (!zk_le_lt(w + (size_t)i * 32, r->curve->r, 32))
            return zk_fail(err, EINVAL, "witness value %u is not < r (checking against %s)", i, r1cs_name);
    _Static_assert(sizeof(bn_fr_t) == 32 && sizeof(bls_fr_t) == 32, "4-limb scalar fields");
    void *wm = malloc((size_t)n * 32);
    if (!wm) return zk_fail(err, ENOMEM, "%s: out of memory for %u witness values", r1cs_name, n);
    int64_t bad;
    if (r->curve->id == ZK_CURVE_BN128) {
        bn_fr_to_mont_all(wm, w, n);
        bad = bn_fr_check(r->constraints, r->n_constraints, w, wm);
    } else {
        bls_fr_to_mont_all(wm, w, n);
        bad = bls_fr_check(r->constraints, r->n_constraints, w, wm);
    }
    free(wm);
    if (bad < 0) return 0;
    if (ret_failed) *ret_failed = bad;
    return zk_fail(err, EINVAL, "witness does not satisfy constraint %" PRId64 " of %s", bad, r1cs_name);
}
