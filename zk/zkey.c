/* Reader of snarkjs Groth16 .zkey files: validates everything at open, then hands out pointers into
 * the mapping (or into aligned copies where the file leaves a section unaligned). */
#include "zkey.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/mem.h"
#include "binfile.h"

static const char *const section_names[11] = {
    NULL, "header", "groth16 header", "IC", "coefs", "PointsA", "PointsB1", "PointsB2", "PointsC", "PointsH",
    "contributions",
};

static const char *protocol_name(uint32_t p) {
    switch (p) {
    case 1: return "groth16";
    case 2: return "plonk";
    case 10: return "fflonk";
    default: return "unknown";
    }
}

/* Two-adicity of r: the largest supported domain is 2^s. */
static unsigned curve_two_adicity(const zk_curve_t *c) { return c->id == ZK_CURVE_BN128 ? 28 : 32; }

/* An aligned pointer to size bytes at p: p itself when 8-byte aligned, else a copy kept in *copy.
 * When p lies in our own read-only file mapping (mapped), the pages the copy was read from are
 * dropped again, so an unaligned section is resident once (the copy), not twice. */
/* Drops the whole pages inside [p, p + size) (a mapping's: read again from the file; anonymous
 * memory's: read as zero); its neighbours may still be in use. */
static void drop_pages(const void *p, uint64_t size) {
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1), e = ((uintptr_t)p + (uintptr_t)size) & ~(page - 1);
    if (e > a) (void)madvise((void *)a, e - a, MADV_DONTNEED);
}

/* With lazy (and p unaligned in our mapping) the copy is only reserved: zk_zkey_hold fills it. The
 * copy is an anonymous mapping of its own, page-aligned, whose pages exist only once written (a
 * malloc'd one may be filled at allocation, e.g. under MALLOC_PERTURB_: GiBs for nothing). */
static int aligned_view(const uint8_t *p, uint64_t size, void **copy, size_t *copy_size, const void **ret, bool mapped,
                        bool lazy) {
    if (((uintptr_t)p & 7) == 0) {
        *ret = p;
        return 0;
    }
    size_t len = size ? (size_t)size : 1;
    bool later = lazy && mapped; /* filled at each hold, dropped at each drop: in huge pages where there are */
    void *m = later ? mem_big_alloc(len)
                    : mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (!m || m == MAP_FAILED) return -ENOMEM;
    *copy = m;
    *copy_size = len;
    *ret = m;
    if (later) return 1;
    memcpy(m, p, (size_t)size);
    if (mapped) drop_pages(p, size);
    return 0;
}

/* The whole pages of [p, p + size), for madvise. */
static void advise_pages(const void *p, uint64_t size, int advice) {
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)p & ~(page - 1), e = (uintptr_t)p + (uintptr_t)size;
    if (size) (void)madvise((void *)a, e - a, advice);
}

void zk_zkey_hold(const zk_zkey_t *z, int id) {
    if (id < 0 || id >= 10) return;
    if (z->mapped_src[id]) advise_pages(z->mapped_src[id], z->mapped_size[id], MADV_WILLNEED);
    if (!z->lazy_src[id]) return;
    memcpy(z->copies[id], z->lazy_src[id], (size_t)z->lazy_size[id]);
    drop_pages(z->lazy_src[id], z->lazy_size[id]);
}

void zk_zkey_drop(const zk_zkey_t *z, int id) {
    if (id < 0 || id >= 10) return;
    /* a read-only private file mapping that was never written: the pages leave this process only */
    if (z->mapped_src[id]) drop_pages(z->mapped_src[id], z->mapped_size[id]);
    if (z->lazy_src[id]) drop_pages(z->copies[id], z->lazy_size[id]);
}

void zk_zkey_hold_all(const zk_zkey_t *z) {
    for (int id = 5; id <= 9; id++) zk_zkey_hold(z, id);
}

static void release(zk_zkey_t *z) {
    for (int i = 0; i < 10; i++)
        if (z->copies[i] && z->lazy_src[i]) /* a lazy copy is base/mem.h's mapping */
            mem_big_free(z->copies[i], z->copy_size[i]);
        else if (z->copies[i])
            munmap(z->copies[i], z->copy_size[i]);
    if (z->map) munmap(z->map, z->map_size);
    memset(z, 0, sizeof(*z));
}

void zk_zkey_close(zk_zkey_t *z) {
    if (z) release(z);
}

static int zkey_parse(zk_zkey_t *z, const char *name, const uint8_t *data, size_t size, bool mapped, bool lazy,
                      uint32_t skip, bool give_back, zk_err_t *err);

int zk_zkey_parse(zk_zkey_t *z, const char *name, const uint8_t *data, size_t size, zk_err_t *err) {
    return zkey_parse(z, name, data, size, false, false, 0, false, err);
}

int zk_zkey_parse_parts(zk_zkey_t *z, const char *name, const uint8_t *data, size_t size, uint32_t skip,
                        zk_err_t *err) {
    return zkey_parse(z, name, data, size, false, false, skip & ZK_ZKEY_SKIPPABLE, true, err);
}

/* Whole G1/G2 point sections and the coefs compared where both keys hold them. */
bool zk_zkey_same(const zk_zkey_t *a, const zk_zkey_t *b) {
    if (a->curve != b->curve || a->n_vars != b->n_vars || a->n_pub != b->n_pub || a->domain_size != b->domain_size ||
        a->n_coefs != b->n_coefs)
        return false;
    const zk_curve_t *c = a->curve;
    const uint64_t g1 = c->g1_size, g2 = c->g2_size;
    const struct {
        const void *x, *y;
        uint64_t len;
    } secs[] = {
        {a->alpha1, b->alpha1, 18 * (uint64_t)c->n8q}, /* alpha1 … delta2 */
        {a->ic, b->ic, ((uint64_t)a->n_pub + 1) * g1},
        {a->coefs, b->coefs, (uint64_t)a->n_coefs * (12 + c->n8r)},
        {a->points_a, b->points_a, (uint64_t)a->n_vars * g1},
        {a->points_b1, b->points_b1, (uint64_t)a->n_vars * g1},
        {a->points_b2, b->points_b2, (uint64_t)a->n_vars * g2},
        {a->points_c, b->points_c, ((uint64_t)a->n_vars - a->n_pub - 1) * g1},
        {a->points_h, b->points_h, (uint64_t)a->domain_size * g1},
    };
    for (size_t i = 0; i < sizeof secs / sizeof secs[0]; i++) {
        if (!secs[i].x != !secs[i].y) return false;
        if (secs[i].x && memcmp(secs[i].x, secs[i].y, (size_t)secs[i].len)) return false;
    }
    return true;
}

static int zkey_parse(zk_zkey_t *z, const char *name, const uint8_t *data, size_t size, bool mapped, bool lazy,
                      uint32_t skip, bool give_back, zk_err_t *err) {
    memset(z, 0, sizeof(*z));
    zk_bin_t b;
    int rc = zk_bin_parse(&b, name, data, size, "zkey", 1, 2, "section", err);
    if (rc < 0) return rc;

    /* Section 1 first: a PLONK or FFLONK key is named as such, whatever else it holds. */
    if (!b.sec[1].present) return zk_fail(err, EINVAL, "%s: section 1 (header) is missing", name);
    if (b.sec[1].size != 4)
        return zk_fail(err, EINVAL, "%s: section 1 (header) size %" PRIu64 ", expected 4", name, b.sec[1].size);
    uint32_t protocol = zk_le32(zk_bin_payload(&b, 1));
    if (protocol != 1)
        return zk_fail(err, EINVAL, "%s: zkey protocol is %s (%u), only groth16 (1) is supported", name,
                       protocol_name(protocol), protocol);
    for (uint32_t id = 2; id <= 9; id++)
        if (!b.sec[id].present)
            return zk_fail(err, EINVAL, "%s: section %u (%s) is missing", name, id, section_names[id]);

    /* Section 2: groth16 header. Fields are read only once the size has been checked for them. */
    const uint8_t *h = zk_bin_payload(&b, 2);
    uint64_t hs = b.sec[2].size;
    if (hs < 4) return zk_fail(err, EINVAL, "%s: section 2 (groth16 header) size %" PRIu64 " is too small", name, hs);
    uint32_t n8q = zk_le32(h);
    if (n8q != 32 && n8q != 48) return zk_fail(err, EINVAL, "%s: section 2: n8q %u is not 32 or 48", name, n8q);
    if (hs < 8 + (uint64_t)n8q)
        return zk_fail(err, EINVAL, "%s: section 2 (groth16 header) size %" PRIu64 " is too small", name, hs);
    const zk_curve_t *cq = zk_curve_by_q(h + 4, n8q);
    if (!cq) return zk_fail(err, EINVAL, "%s: section 2: q is not the base field of bn128 or bls12381", name);
    uint32_t n8r = zk_le32(h + 4 + n8q);
    if (n8r != cq->n8r)
        return zk_fail(err, EINVAL, "%s: section 2: n8r %u, expected %u for %s", name, n8r, cq->n8r, cq->name);
    uint64_t hdr_expected = 20 + (uint64_t)n8q + n8r + 18 * (uint64_t)n8q;
    if (hs != hdr_expected)
        return zk_fail(err, EINVAL, "%s: section 2 (groth16 header) size %" PRIu64 ", expected %" PRIu64 " for %s", name,
                       hs, hdr_expected, cq->name);
    const zk_curve_t *cr = zk_curve_by_r(h + 8 + n8q, n8r);
    if (!cr) return zk_fail(err, EINVAL, "%s: section 2: r is not the scalar field of bn128 or bls12381", name);
    if (cr != cq)
        return zk_fail(err, EINVAL, "%s: section 2: q is %s's base field but r is %s's scalar field", name, cq->name,
                       cr->name);
    const zk_curve_t *c = cq;
    const uint8_t *p = h + 8 + n8q + n8r;
    uint32_t n_vars = zk_le32(p), n_pub = zk_le32(p + 4), domain = zk_le32(p + 8);
    if (n_vars <= n_pub)
        return zk_fail(err, EINVAL, "%s: section 2: nVars %u must exceed nPublic %u", name, n_vars, n_pub);
    if (domain == 0 || (domain & (domain - 1)) != 0)
        return zk_fail(err, EINVAL, "%s: section 2: domainSize %u is not a power of two", name, domain);
    if ((uint64_t)domain < (uint64_t)n_pub + 1)
        return zk_fail(err, EINVAL, "%s: section 2: domainSize %u is smaller than nPublic+1 = %" PRIu64, name, domain,
                       (uint64_t)n_pub + 1);
    unsigned log_domain = (unsigned)__builtin_ctz(domain);
    if (log_domain > curve_two_adicity(c))
        return zk_fail(err, EINVAL, "%s: section 2: domainSize 2^%u exceeds %s's largest domain 2^%u", name, log_domain,
                       c->name, curve_two_adicity(c));

    /* Every point section's size against the header. */
    const uint64_t g1 = c->g1_size, g2 = c->g2_size;
    const uint64_t expected[10] = {
        [3] = ((uint64_t)n_pub + 1) * g1,
        [5] = (uint64_t)n_vars * g1,
        [6] = (uint64_t)n_vars * g1,
        [7] = (uint64_t)n_vars * g2,
        [8] = ((uint64_t)n_vars - n_pub - 1) * g1,
        [9] = (uint64_t)domain * g1,
    };
    static const char *const basis[10] = {
        [3] = "nPublic", [5] = "nVars", [6] = "nVars", [7] = "nVars", [8] = "nVars-nPublic-1", [9] = "domainSize",
    };
    const uint64_t basis_val[10] = {
        [3] = n_pub, [5] = n_vars, [6] = n_vars, [7] = n_vars, [8] = (uint64_t)n_vars - n_pub - 1, [9] = domain,
    };
    for (int id = 3; id <= 9; id++) {
        if (id == 4) continue;
        if (b.sec[id].size != expected[id])
            return zk_fail(err, EINVAL, "%s: section %d (%s) size %" PRIu64 ", expected %" PRIu64 " for %s %" PRIu64,
                           name, id, section_names[id], b.sec[id].size, expected[id], basis[id], basis_val[id]);
    }

    /* Section 4: coefs (skipped: only its size, as a whole number of records, is checked). */
    const uint8_t *cs = zk_bin_payload(&b, 4);
    uint64_t css = b.sec[4].size;
    if (css < 4) return zk_fail(err, EINVAL, "%s: section 4 (coefs) size %" PRIu64 " is too small", name, css);
    const uint64_t rec = 12 + (uint64_t)n8r;
    const bool no_coefs = (skip >> 4) & 1;
    uint32_t n_coefs = no_coefs ? (uint32_t)((css - 4) / rec) : zk_le32(cs);
    if (css != 4 + n_coefs * rec)
        return zk_fail(err, EINVAL, "%s: section 4 (coefs) size %" PRIu64 ", expected %" PRIu64 " for nCoefs %u", name,
                       css, 4 + n_coefs * rec, n_coefs);
    const uint8_t *cr0 = cs + 4;
    for (uint32_t i = 0; !no_coefs && i < n_coefs; i++) {
        const uint8_t *e = cr0 + (uint64_t)i * rec;
        uint32_t m = zk_le32(e), row = zk_le32(e + 4), sig = zk_le32(e + 8);
        if (m > 1)
            return zk_fail(err, EINVAL, "%s: section 4 coef %u: matrix %u is not 0 (A) or 1 (B)", name, i, m);
        if (row >= domain)
            return zk_fail(err, EINVAL, "%s: section 4 coef %u: constraint %u is not < domainSize %u", name, i, row,
                           domain);
        if (sig >= n_vars)
            return zk_fail(err, EINVAL, "%s: section 4 coef %u: signal %u is not < nVars %u", name, i, sig, n_vars);
        if (!zk_le_lt(e + 12, c->r, n8r))
            return zk_fail(err, EINVAL, "%s: section 4 coef %u: value is not < r", name, i);
    }

    /* Everything is valid: fill in, copying what is unaligned. */
    z->curve = c;
    z->n_vars = n_vars;
    z->n_pub = n_pub;
    z->domain_size = domain;
    z->log_domain = log_domain;
    z->coefs = no_coefs ? NULL : cr0;
    z->n_coefs = no_coefs ? 0 : n_coefs;

    const void *hp;
    const uint8_t *pts = p + 12;
    if (aligned_view(pts, 18 * (uint64_t)n8q, &z->copies[2], &z->copy_size[2], &hp, false, false) < 0) goto nomem;
    const uint8_t *hb = hp;
    z->alpha1 = hb;
    z->beta1 = hb + g1;
    z->beta2 = hb + 2 * g1;
    z->gamma2 = hb + 2 * g1 + g2;
    z->delta1 = hb + 2 * g1 + 2 * g2;
    z->delta2 = hb + 3 * g1 + 2 * g2;

    const void **dst[10] = {
        [3] = &z->ic, [5] = &z->points_a, [6] = &z->points_b1, [7] = &z->points_b2, [8] = &z->points_c,
        [9] = &z->points_h,
    };
    for (int id = 3; id <= 9; id++) {
        if (id == 4 || ((skip >> id) & 1)) continue;
        const uint8_t *src = zk_bin_payload(&b, (uint32_t)id);
        int rc = aligned_view(src, b.sec[id].size, &z->copies[id], &z->copy_size[id], dst[id], mapped, lazy && id >= 5);
        if (rc < 0) goto nomem;
        if (give_back && *dst[id] != src) drop_pages(src, b.sec[id].size); /* the copy holds it now */
        if (rc == 1) z->lazy_src[id] = src, z->lazy_size[id] = b.sec[id].size;
        else if (mapped && lazy && id >= 5 && *dst[id] == src) z->mapped_src[id] = src, z->mapped_size[id] = b.sec[id].size;
    }
    if (mapped && lazy) z->mapped_src[4] = cs, z->mapped_size[4] = css;
    return 0;

nomem:
    release(z);
    return zk_fail(err, ENOMEM, "%s: out of memory copying unaligned sections", name);
}

int zk_zkey_open(zk_zkey_t *z, const char *path, zk_err_t *err) { return zk_zkey_open_flags(z, path, 0, err); }

int zk_zkey_open_flags(zk_zkey_t *z, const char *path, unsigned flags, zk_err_t *err) {
    memset(z, 0, sizeof(*z));
    void *map;
    size_t size;
    int rc = zk_map_file(path, &map, &size, err);
    if (rc < 0) return rc;
    rc = zkey_parse(z, path, map, size, true, (flags & ZK_ZKEY_LAZY) != 0, 0, false, err);
    if (rc < 0) {
        if (map) munmap(map, size);
        return rc;
    }
    z->map = map;
    z->map_size = size;
    return 0;
}

void zk_zkey_prefault(const zk_zkey_t *z) {
    if (!z->map) return;
    const uint8_t *base = z->map;
    const void *secs[5] = {z->points_a, z->points_b1, z->points_b2, z->points_c, z->points_h};
    const size_t g1 = z->curve->g1_size, g2 = z->curve->g2_size;
    const size_t sizes[5] = {(size_t)z->n_vars * g1, (size_t)z->n_vars * g1, (size_t)z->n_vars * g2,
                             ((size_t)z->n_vars - z->n_pub - 1) * g1, (size_t)z->domain_size * g1};
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    for (int i = 0; i < 5; i++) {
        const uint8_t *s = secs[i];
        /* Copies are already resident; only ranges inside the mapping are advised. */
        if (!s || s < base || s >= base + z->map_size || sizes[i] == 0) continue;
        uintptr_t a = (uintptr_t)s & ~(page - 1), e = (uintptr_t)s + sizes[i];
        (void)madvise((void *)a, e - a, MADV_WILLNEED);
    }
}
