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
#include "threads.h"
#include "zkey_write.h"

static uint64_t zk_kg_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
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
    if (threads <= 0) threads = zk_threads_default();
    if (r->curve->id == ZK_CURVE_BN128) return bn_keygen(r, r1cs_name, zkey_path, vk_path, threads, stats, err);
    return bls_keygen(r, r1cs_name, zkey_path, vk_path, threads, stats, err);
}

int zk_keygen_fixed_base_selftest(const zk_curve_t *curve, unsigned c, size_t n_random, zk_err_t *err) {
    if (c < 4 || c > 15) return zk_fail(err, EINVAL, "window %u is not in 4..15", c);
    if (curve->id == ZK_CURVE_BN128) return bn_fb_selftest(curve, c, n_random, err);
    return bls_fb_selftest(curve, c, n_random, err);
}
