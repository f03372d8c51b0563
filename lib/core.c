/* The key and the verified proof shared by librapidsnark and libzkpipe (core.h). */
#include "core.h"

#include <errno.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zk/binfile.h"
#include "zk/threads.h"

int lib_threads(int *ret, zk_err_t *err) {
    const char *e = getenv("ZKPIPE_THREADS");
    if (e && *e) {
        char *end;
        long v = strtol(e, &end, 10);
        if (*end || v < 1 || v > 1024)
            return zk_fail(err, EINVAL, "ZKPIPE_THREADS=%.40s: not a number of threads from 1 to 1024", e);
        *ret = (int)v;
        return 0;
    }
    *ret = zk_threads_default();
    return 0;
}

/* The verifying key, prepared once; its points are checked here, so a key whose α, β, γ, δ or IC is
 * off its curve is refused before any proof. */
static int key_finish(lib_key_t *k, zk_err_t *err) {
    int rc = lib_threads(&k->threads, err);
    if (rc < 0) return rc;
    if ((rc = zk_vk_from_zkey(&k->vk, &k->z, err)) < 0) return rc;
    return 0;
}

int lib_key_open_file(lib_key_t **ret, const char *path, zk_err_t *err) {
    *ret = NULL;
    if (!path) return zk_fail(err, EINVAL, "the zkey path is NULL");
    lib_key_t *k = calloc(1, sizeof *k);
    if (!k) return zk_fail(err, ENOMEM, "%s: out of memory", path);
    snprintf(k->name, sizeof k->name, "%s", path);
    int rc = zk_zkey_open(&k->z, path, err);
    if (rc < 0) {
        free(k);
        return rc;
    }
    if ((rc = key_finish(k, err)) < 0) {
        lib_key_free(k);
        return rc;
    }
    *ret = k;
    return 0;
}

/* zk_zkey_parse copied the point sections that lie off an 8-byte boundary into aligned memory: their
 * whole pages in our copy of the image are given back (they read as zero from now on, and nothing
 * reads them), so the key is resident once. */
static void drop_copied_sections(lib_key_t *k) {
    zk_bin_t b;
    zk_err_t ignore;
    if (zk_bin_parse(&b, k->name, k->image, k->image_size, "zkey", 1, 2, "section", &ignore) < 0) return;
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    for (uint32_t id = 3; id <= 9; id++) {
        const uint8_t *p = zk_bin_payload(&b, id);
        if (id == 4 || !p || ((uintptr_t)p & 7) == 0) continue;
        uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1), e = ((uintptr_t)p + b.sec[id].size) & ~(page - 1);
        if (e > a) (void)madvise((void *)a, e - a, MADV_DONTNEED);
    }
}

int lib_key_open_buffer(lib_key_t **ret, const void *data, size_t size, zk_err_t *err) {
    *ret = NULL;
    if (!data) return zk_fail(err, EINVAL, "the zkey buffer is NULL");
    if (size == 0) return zk_fail(err, EINVAL, "the zkey buffer: size 0, not a zkey");
    lib_key_t *k = calloc(1, sizeof *k);
    if (!k) return zk_fail(err, ENOMEM, "the zkey buffer: out of memory");
    snprintf(k->name, sizeof k->name, "the zkey buffer");
    void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        free(k);
        return zk_fail(err, ENOMEM, "the zkey buffer: out of memory for a copy of %zu bytes", size);
    }
    memcpy(m, data, size);
    k->image = m;
    k->image_size = size;
    int rc = zk_zkey_parse(&k->z, k->name, m, size, err);
    if (rc < 0) {
        munmap(m, size);
        free(k);
        return rc;
    }
    drop_copied_sections(k);
    (void)mprotect(m, size, PROT_READ);
    if ((rc = key_finish(k, err)) < 0) {
        lib_key_free(k);
        return rc;
    }
    *ret = k;
    return 0;
}

void lib_key_free(lib_key_t *k) {
    if (!k) return;
    zk_vk_free(&k->vk);
    zk_zkey_close(&k->z);
    if (k->image) munmap(k->image, k->image_size);
    free(k);
}

int lib_witness(const lib_key_t *k, zk_wtns_t *w, const void *data, size_t size, int *ret_length, zk_err_t *err) {
    if (ret_length) *ret_length = 0;
    if (!data) return zk_fail(err, EINVAL, "the witness buffer is NULL");
    int rc = zk_wtns_parse(w, "witness", data, size, err);
    if (rc < 0) return rc;
    if (w->n != k->z.n_vars) {
        if (ret_length) *ret_length = 1;
        rc = zk_fail(err, EINVAL, "witness: it has %u values, the circuit of %s has %u: a witness of another circuit",
                     w->n, k->name, k->z.n_vars);
    } else if (w->curve != k->z.curve) {
        rc = zk_fail(err, EINVAL, "witness: it is for %s, %s for %s", w->curve->name, k->name, k->z.curve->name);
    }
    if (rc < 0) zk_wtns_free(w);
    return rc;
}

static void *alloc_aligned(size_t n) { return aligned_alloc(64, ((n + 63) & ~(size_t)63) ?: 64); }

/* Proofs running now in this process: each takes its share of the threads. */
static atomic_int lib_running;

int lib_prove(const lib_key_t *k, const zk_wtns_t *w, zk_proof_t *out, zk_err_t *err) {
    const zk_zkey_t *z = &k->z;
    int running = atomic_fetch_add(&lib_running, 1) + 1, rc = -ENOMEM;
    int threads = k->threads / running > 0 ? k->threads / running : 1;
    void *abc = alloc_aligned(zk_abc_size(z)), *scratch = alloc_aligned(zk_core_inplace_scratch_size(z));
    if (!abc || !scratch) {
        zk_fail(err, ENOMEM, "%s: out of memory for a domain of %u", k->name, z->domain_size);
        goto out;
    }
    size_t n = z->domain_size;
    uint8_t *a = abc;
    if ((rc = zk_synth(z, w->values, a, a + 32 * n, a + 64 * n, threads)) < 0) {
        zk_fail(err, -rc, "witness: synthesis failed");
        goto out;
    }
    zk_raw_t raw;
    if ((rc = zk_prove_core_inplace(z, w->values, abc, scratch, &raw, NULL, threads)) < 0) {
        zk_fail(err, -rc, "%s: proving failed", k->name);
        goto out;
    }
    uint8_t r[32], s[32];
    if ((rc = zk_random_rs(z->curve, r, s)) < 0) {
        zk_fail(err, -rc, "getrandom failed: %s", strerror(-rc));
        goto out;
    }
    zk_finalize(z, &raw, r, s, out);
    rc = zk_verify_proof(&k->vk, out, w->values + 32, z->n_pub, err);
    if (rc == -EBADMSG || rc == -EINVAL) {
        /* the key's points were not looked at when it was read: a corrupt one is named, else the witness */
        zk_err_t why = *err;
        if (zk_zkey_check_points(z, k->name, true, err) == 0) {
            if (rc == -EBADMSG)
                zk_fail(err, EBADMSG, "witness: the proof does not verify: the witness does not satisfy the circuit");
            else
                zk_fail(err, EINVAL, "%s: the proof made with this key fails its check (%.200s)", k->name, why.msg);
        }
    }
out:
    if (rc < 0) memset(out, 0, sizeof *out);
    free(abc);
    free(scratch);
    atomic_fetch_sub(&lib_running, 1);
    return rc;
}

int lib_verify_with(const zk_vk_t *vk, const char *proof, const char *public_json, zk_err_t *err) {
    if (!proof || !public_json) return zk_fail(err, EINVAL, "the %s text is NULL", !proof ? "proof" : "public");
    zk_proof_t p;
    uint8_t *pub = NULL;
    uint32_t n_pub = 0;
    int rc = zk_public_parse_json(&pub, &n_pub, vk->curve, "public signals", public_json, strlen(public_json), err);
    if (rc < 0) return rc;
    if ((rc = zk_proof_parse_json(&p, vk->curve, "proof", proof, strlen(proof), err)) < 0) goto out;
    if (n_pub != vk->n_pub) {
        rc = zk_fail(err, EINVAL, "public signals: wrong number: %u given, the key expects %u", n_pub, vk->n_pub);
        goto out;
    }
    rc = zk_verify_proof(vk, &p, pub, n_pub, err);
out:
    free(pub);
    return rc;
}

int lib_verify_json(const char *proof, const char *public_json, const char *vk_json, zk_err_t *err) {
    if (!vk_json) return zk_fail(err, EINVAL, "the verification key text is NULL");
    zk_vk_t vk = {0};
    int rc = zk_vk_parse_json(&vk, "verification key", vk_json, strlen(vk_json), err);
    if (rc < 0) return rc;
    rc = lib_verify_with(&vk, proof, public_json, err);
    zk_vk_free(&vk);
    return rc;
}
