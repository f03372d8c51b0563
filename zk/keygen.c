/* Insecure development Groth16 keys (zk/keygen.h): helpers shared by both curves, the fixed-base
 * tables of zk/fixed_base_tmpl.h for the four groups, zk/keygen_tmpl.h per curve, and the dispatch. */
#include "keygen.h"

#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "binfile.h"
#include "json_out.h"
#include "curve.h"
#include "groth16.h"
#include "msm.h"
#include "ntt.h"
#include "pairing.h"

static uint64_t zk_kg_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The order of sections 1..10 in the file. Any order is valid (formats.md §1); zkpipe's reader
 * uses a point section in place only when its payload is 8-byte aligned and copies it otherwise, and
 * every 12-byte section header shifts the alignment by 4. So 1 and 2 come first (both keep the
 * alignment), then the order of 3..10 that puts the most point-section bytes on 8-byte boundaries;
 * among equals, the first in lexicographic order. */
static void zk_kg_section_order(const uint64_t sizes[11], int order[10]) {
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

/* The zkey is written to PATH.tmp.<pid> and renamed into place once complete and synced. */
typedef struct {
    FILE *f;
    char tmp[4096];
    const char *path;
} zk_kg_file_t;

static int zk_kg_file_open(zk_kg_file_t *zf, const char *path, zk_err_t *err) {
    zf->path = path;
    int rc = zk_tmp_path(zf->tmp, sizeof(zf->tmp), path, err);
    if (rc < 0) return rc;
    zf->f = fopen(zf->tmp, "wbxe");
    if (!zf->f) return zk_fail(err, errno, "%s: cannot create: %s", zf->tmp, strerror(errno));
    setvbuf(zf->f, NULL, _IOFBF, 1 << 22);
    return 0;
}

static void zk_kg_file_abort(zk_kg_file_t *zf) {
    fclose(zf->f);
    unlink(zf->tmp);
}

static int zk_kg_file_commit(zk_kg_file_t *zf, zk_err_t *err) {
    int e = 0;
    if (fflush(zf->f) != 0 || fsync(fileno(zf->f)) < 0) e = errno;
    if (fclose(zf->f) != 0 && !e) e = errno;
    if (e) {
        unlink(zf->tmp);
        return zk_fail(err, e, "%s: write failed: %s", zf->tmp, strerror(e));
    }
    return zk_rename_synced(zf->tmp, zf->path, err);
}

uint64_t zk_keygen_domain_size(const zk_r1cs_t *r) {
    uint64_t need = (uint64_t)r->n_constraints + r->n_pub_out + r->n_pub_in + 1, n = 1;
    while (n < need) n <<= 1;
    return n;
}

#define ZK_GROUP_TMPL "fixed_base_tmpl.h"
#include "each_group.h"

#define ZK_CURVE_TMPL "keygen_tmpl.h"
#include "each_curve.h"

int zk_keygen_insecure(const zk_r1cs_t *r, const char *r1cs_name, const char *zkey_path, const char *vk_path,
                       int threads, zk_keygen_stats_t *stats, zk_err_t *err) {
    if (!r->curve || !r->constraints) return zk_fail(err, EINVAL, "%s: r1cs is not open", r1cs_name);
    if (threads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (int)n : 1;
    }
    if (r->curve->id == ZK_CURVE_BN128) return bn_keygen(r, r1cs_name, zkey_path, vk_path, threads, stats, err);
    return bls_keygen(r, r1cs_name, zkey_path, vk_path, threads, stats, err);
}

int zk_keygen_fixed_base_selftest(const zk_curve_t *curve, unsigned c, size_t n_random, zk_err_t *err) {
    if (c < 4 || c > 15) return zk_fail(err, EINVAL, "window %u is not in 4..15", c);
    if (curve->id == ZK_CURVE_BN128) return bn_fb_selftest(curve, c, n_random, err);
    return bls_fb_selftest(curve, c, n_random, err);
}
