/* Groth16 prover stages (formats.md §5) with runtime dispatch on the key's curve, JSON writers and
 * the atomic file writer. */
#include "groth16.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "base/file.h"
#include "json_out.h"
#include "msm.h"
#include "msm_fixed.h"
#include "ntt.h"
#include "ntt_ifma.h"
#include "threads.h"

/* Gives back the whole pages inside [p, p+len) of private anonymous memory: they read as zero if
 * touched again, so only for memory whose contents are dead. */
static void zk_release_pages(void *p, size_t len) {
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1), e = ((uintptr_t)p + len) & ~(page - 1);
    if (e > a) (void)madvise((void *)a, e - a, MADV_DONTNEED);
}

#define ZK_CURVE_TMPL "groth16_tmpl.h"
#include "each_curve.h"

size_t zk_abc_size(const zk_zkey_t *z) { return 3 * (size_t)z->domain_size * 32; }

/* s0, s1 (n each), twiddles and inverse twiddles (n/2+1 each), the coset factors (2). */
size_t zk_core_scratch_size(const zk_zkey_t *z) { return ((size_t)z->domain_size * 3 + 4) * 32; }

int zk_synth(const zk_zkey_t *z, const uint8_t *witness, void *a, void *b, void *c, int threads) {
    if (z->curve->id == ZK_CURVE_BN128) return bn_synth(z, witness, a, b, c, threads);
    return bls_synth(z, witness, a, b, c, threads);
}

int zk_prove_core(const zk_zkey_t *z, const uint8_t *witness, const void *a, const void *b, const void *c,
                  void *scratch, zk_raw_t *out, zk_core_times_t *times, int threads) {
    if (z->curve->id == ZK_CURVE_BN128)
        return bn_core(z, witness, a, b, c, scratch, out, times, threads, false, NULL, NULL);
    return bls_core(z, witness, a, b, c, scratch, out, times, threads, false, NULL, NULL);
}

int zk_prove_core_fixed(const zk_key_tables_t *kt, const zk_zkey_t *z, const uint8_t *witness, const void *a,
                        const void *b, const void *c, void *scratch, zk_raw_t *out, zk_core_times_t *times,
                        int threads) {
    const zk_fixed_t *tab = kt->bytes ? kt->t : NULL; /* no table at all: the plain core */
    if (threads < 1) threads = zk_threads_default();
    int order[ZK_MSM_COUNT];
    const int *side = zk_key_tables_side_by_side(kt, threads, order) ? order : NULL;
    if (z->curve->id == ZK_CURVE_BN128)
        return bn_core(z, witness, a, b, c, scratch, out, times, threads, false, tab, side);
    return bls_core(z, witness, a, b, c, scratch, out, times, threads, false, tab, side);
}

/* twiddles and inverse twiddles (n/2+1 each), the coset factors (2) */
size_t zk_core_inplace_scratch_size(const zk_zkey_t *z) { return ((size_t)z->domain_size + 4) * 32; }

int zk_prove_core_inplace(const zk_zkey_t *z, const uint8_t *witness, void *abc, void *scratch, zk_raw_t *out,
                          zk_core_times_t *times, int threads) {
    size_t n = z->domain_size;
    uint8_t *a = abc, *b = a + 32 * n, *c = b + 32 * n;
    if (z->curve->id == ZK_CURVE_BN128)
        return bn_core(z, witness, (void *)a, (void *)b, (void *)c, scratch, out, times, threads, true, NULL, NULL);
    return bls_core(z, witness, (void *)a, (void *)b, (void *)c, scratch, out, times, threads, true, NULL, NULL);
}

int zk_finalize(const zk_zkey_t *z, const zk_raw_t *raw, const uint8_t r[32], const uint8_t s[32], zk_proof_t *out) {
    if (z->curve->id == ZK_CURVE_BN128) return bn_finalize(z, raw, r, s, out);
    return bls_finalize(z, raw, r, s, out);
}

/* Uniform in [0, r) by rejection sampling on the bit length of r (255 or 254 bits). */
int zk_random_below(const uint8_t *mod, uint8_t out[32]) {
    uint64_t m[4], x[4];
    memcpy(m, mod, 32);
    int top = 63 - __builtin_clzll(m[3]);
    uint64_t mask = top == 63 ? ~0ull : ((1ull << (top + 1)) - 1);
    for (;;) {
        size_t got = 0;
        while (got < 32) {
            ssize_t k = getrandom((uint8_t *)x + got, 32 - got, 0);
            if (k < 0) {
                if (errno == EINTR) continue;
                return -errno;
            }
            got += (size_t)k;
        }
        x[3] &= mask;
        if (zk_bigint_lt(x, m, 4)) break;
    }
    memcpy(out, x, 32);
    return 0;
}

int zk_random_rs(const zk_curve_t *curve, uint8_t r[32], uint8_t s[32]) {
    int ret = zk_random_below(curve->r, r);
    if (ret < 0) return ret;
    return zk_random_below(curve->r, s);
}

int zk_proof_json(const zk_curve_t *curve, const zk_proof_t *p, char **ret_json) {
    zk_sbuf_t b = {0};
    zk_sb_printf(&b, "{\n \"pi_a\": ");
    zk_json_g1(&b, curve, p->a, " ");
    zk_sb_printf(&b, ",\n \"pi_b\": ");
    zk_json_g2(&b, curve, p->b);
    zk_sb_printf(&b, ",\n \"pi_c\": ");
    zk_json_g1(&b, curve, p->c, " ");
    zk_sb_printf(&b, ",\n \"protocol\": \"groth16\",\n \"curve\": \"%s\"\n}", curve->name);
    *ret_json = b.p;
    return 0;
}

int zk_public_json(const uint8_t *witness, uint32_t n_pub, char **ret_json) {
    zk_sbuf_t b = {0};
    char d[100];
    if (n_pub == 0) {
        zk_sb_printf(&b, "[]");
        *ret_json = b.p;
        return 0;
    }
    for (uint32_t i = 1; i <= n_pub; i++) {
        uint64_t v[4];
        memcpy(v, witness + 32 * (size_t)i, 32);
        zk_bigint_to_dec(v, 4, d);
        zk_sb_printf(&b, "%s\n \"%s\"", i == 1 ? "[" : ",", d);
    }
    zk_sb_printf(&b, "\n]");
    *ret_json = b.p;
    return 0;
}

int zk_tmp_path(char *tmp, size_t size, const char *path, zk_err_t *err) {
    if ((size_t)snprintf(tmp, size, "%s.tmp.%d", path, (int)getpid()) >= size)
        return zk_fail(err, ENAMETOOLONG, "%s: path too long", path);
    return 0;
}

int zk_rename_synced(const char *tmp, const char *path, zk_err_t *err) {
    if (rename(tmp, path) < 0) {
        int e = errno;
        unlink(tmp);
        return zk_fail(err, e, "%s: rename failed: %s", path, strerror(e));
    }
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", path);
    int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    return 0;
}

int zk_write_file_atomic(const char *path, const char *data, size_t len, zk_err_t *err) {
    int r = file_write_atomic(path, data, len); /* the ground floor's writer (base/file.h) */
    return r < 0 ? zk_fail(err, -r, "%s: cannot write: %s", path, strerror(-r)) : 0;
}
