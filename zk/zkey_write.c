/* The zkey writer (zkey_write.h). */
#include "zkey_write.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "groth16.h"

/* The order of sections 1..10 in the file. Any order is valid (formats.md §1); zkpipe's reader
 * uses a point section in place only when its payload is 8-byte aligned and copies it otherwise, and
 * every 12-byte section header shifts the alignment by 4. So 1 and 2 come first (both keep the
 * alignment), then the order of 3..10 that puts the most point-section bytes on 8-byte boundaries;
 * among equals, the first in lexicographic order. */
static void zkw_section_order(const uint64_t sizes[11], int order[10]) {
    int perm[8] = {3, 4, 5, 6, 7, 8, 9, 10}, best[8];
    uint64_t best_score = 0;
    int have = 0;
    for (;;) {
        uint64_t off = 12 + (12 + sizes[1]) + (12 + sizes[2]), score = 0;
        for (int i = 0; i < 8; i++) {
            int id = perm[i];
            if (id != 4 && id != 10 && (off + 12) % 8 == 0) score += sizes[id];
            off += 12 + sizes[id];
        }
        if (!have || score > best_score) {
            memcpy(best, perm, sizeof(best));
            best_score = score;
            have = 1;
        }
        /* next permutation */
        int i = 6;
        while (i >= 0 && perm[i] > perm[i + 1]) i--;
        if (i < 0) break;
        int j = 7;
        while (perm[j] < perm[i]) j--;
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
        for (int a = i + 1, b = 7; a < b; a++, b--) {
            t = perm[a];
            perm[a] = perm[b];
            perm[b] = t;
        }
    }
    order[0] = 1;
    order[1] = 2;
    memcpy(order + 2, best, sizeof(best));
}

/* Section 2: n8q, q, n8r, r, nVars, nPublic, domainSize, then the six header points. */
static int zkw_header(const zk_zkey_spec_t *s, FILE *f) {
    const zk_curve_t *c = s->curve;
    uint32_t u;
    int ok = 1;
    u = c->n8q;
    ok &= fwrite(&u, 4, 1, f) == 1;
    ok &= fwrite(c->q, c->n8q, 1, f) == 1;
    u = c->n8r;
    ok &= fwrite(&u, 4, 1, f) == 1;
    ok &= fwrite(c->r, c->n8r, 1, f) == 1;
    ok &= fwrite(&s->n_vars, 4, 1, f) == 1;
    ok &= fwrite(&s->n_pub, 4, 1, f) == 1;
    ok &= fwrite(&s->domain_size, 4, 1, f) == 1;
    ok &= fwrite(s->alpha1, c->g1_size, 1, f) == 1;
    ok &= fwrite(s->beta1, c->g1_size, 1, f) == 1;
    ok &= fwrite(s->beta2, c->g2_size, 1, f) == 1;
    ok &= fwrite(s->gamma2, c->g2_size, 1, f) == 1;
    ok &= fwrite(s->delta1, c->g1_size, 1, f) == 1;
    ok &= fwrite(s->delta2, c->g2_size, 1, f) == 1;
    return ok ? 0 : -EIO;
}

static int zkw_sections(const zk_zkey_spec_t *s, const uint64_t sizes[11], FILE *f) {
    int order[10];
    zkw_section_order(sizes, order);
    uint32_t hdr[3] = {0, 1, 10};
    memcpy(hdr, "zkey", 4);
    int rc = fwrite(hdr, 4, 3, f) == 3 ? 0 : -EIO;
    for (int i = 0; i < 10 && rc == 0; i++) {
        uint32_t id = (uint32_t)order[i];
        uint64_t size = sizes[id];
        if (fwrite(&id, 4, 1, f) != 1 || fwrite(&size, 8, 1, f) != 1) return -EIO;
        long before = ftell(f);
        if (id == 1) {
            uint32_t proto = 1; /* groth16 */
            rc = fwrite(&proto, 4, 1, f) == 1 ? 0 : -EIO;
        } else if (id == 2) {
            rc = zkw_header(s, f);
        } else if (id == 10) {
            /* csHash (not computed: only `snarkjs zkey verify` reads it) and no contributions */
            uint8_t z[68] = {0};
            rc = fwrite(z, sizeof(z), 1, f) == 1 ? 0 : -EIO;
        } else {
            rc = s->write_section(s->ctx, (int)id, f);
        }
        if (rc == 0 && ftell(f) - before != (long)size) rc = -EIO; /* a payload of the wrong size */
    }
    return rc;
}

int zk_zkey_write(const char *path, const zk_zkey_spec_t *s, uint64_t *file_size, zk_err_t *err) {
    const zk_curve_t *c = s->curve;
    const uint64_t sizes[11] = {
        [1] = 4,
        [2] = 20 + (uint64_t)c->n8q + c->n8r + 18 * (uint64_t)c->n8q,
        [3] = ((uint64_t)s->n_pub + 1) * c->g1_size,
        [4] = 4 + (uint64_t)s->n_coefs * (12 + c->n8r),
        [5] = (uint64_t)s->n_vars * c->g1_size,
        [6] = (uint64_t)s->n_vars * c->g1_size,
        [7] = (uint64_t)s->n_vars * c->g2_size,
        [8] = ((uint64_t)s->n_vars - s->n_pub - 1) * c->g1_size,
        [9] = (uint64_t)s->domain_size * c->g1_size,
        [10] = 64 + 4,
    };
    char tmp[4096];
    int rc = zk_tmp_path(tmp, sizeof(tmp), path, err);
    if (rc < 0) return rc;
    FILE *f = fopen(tmp, "wbxe");
    if (!f) return zk_fail(err, errno, "%s: cannot create: %s", tmp, strerror(errno));
    setvbuf(f, NULL, _IOFBF, 1 << 22);
    rc = zkw_sections(s, sizes, f);
    if (rc < 0) {
        fclose(f);
        unlink(tmp);
        if (rc == -ENOMEM) return zk_fail(err, ENOMEM, "%s: out of memory", path);
        return zk_fail(err, -rc, "%s: write failed: %s", path, strerror(-rc));
    }
    int e = 0;
    if (fflush(f) != 0 || fsync(fileno(f)) < 0) e = errno;
    if (fclose(f) != 0 && !e) e = errno;
    if (e) {
        unlink(tmp);
        return zk_fail(err, e, "%s: write failed: %s", tmp, strerror(e));
    }
    if ((rc = zk_rename_synced(tmp, path, err)) < 0) return rc;
    if (file_size) {
        *file_size = 12;
        for (int id = 1; id <= 10; id++) *file_size += 12 + sizes[id];
    }
    return 0;
}
