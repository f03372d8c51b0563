/* The stages' circuit cache (common/circuits.h). */
#include "common/circuits.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "common/daemon.h"
#include "common/log.h"
#include "spool/spool.h"
#include "zk/binfile.h"

static const cfg_t *C;
static unsigned want_parts;
static stage_circuit_t circuits[CFG_MAX_CIRCUITS];

void circuits_init(const cfg_t *cfg, unsigned want) {
    C = cfg;
    want_parts = want;
    for (uint32_t i = 0; i < cfg->n_circuits; i++) circuits[i] = (stage_circuit_t){.cfg = &cfg->circuits[i]};
}

static void circuit_file_free(circuit_file_t *f) {
    if (f->image) munmap(f->image, f->size);
    f->image = NULL;
}

static bool same_identity(const circuit_file_t *f, const struct stat *st) {
    return f->dev == st->st_dev && f->ino == st->st_ino && (off_t)f->size == st->st_size &&
           f->mtime.tv_sec == st->st_mtim.tv_sec && f->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/* Reads the regular file (of a .zkey with skip: only the parts circuit_key_ranges gives) into anonymous
 * memory (no file mapping is ever left behind). */
static int circuit_file_read(circuit_file_t *f, const char *path, uint32_t skip, zk_err_t *e) {
    struct stat st;
    _cleanup_close_ int fd = file_open_regular(AT_FDCWD, path, 0, &st, e->msg, sizeof e->msg);
    if (fd < 0) return fd;
    if (st.st_size == 0) return zk_fail(e, EINVAL, "%s: empty file", path);
    size_t size = (size_t)st.st_size;
    void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return zk_fail(e, errno, "%s: cannot allocate %zu bytes: %s", path, size, strerror(errno));
    if (C && C->hugepages) (void)madvise(m, size, MADV_HUGEPAGE); /* faulted in huge pages by the reads below */
    uint64_t ranges[CIRCUIT_MAX_RANGES][2] = {{0, size}}, held = size;
    unsigned n_ranges = 1;
    int r = skip ? circuit_key_ranges(fd, m, size, skip, path, ranges, &n_ranges, &held, e) : 0;
    /* more than the memory left would be read until the OOM killer stops this or another process:
     * refused at once, and only this circuit's jobs fail */
    uint64_t avail = zk_mem_available();
    if (r == 0 && held > avail)
        r = zk_fail(e, ENOMEM, "%s: %s %llu MiB, more than the %llu MiB of memory available (MemAvailable)", path,
                    held == size ? "the file is" : "the parts of the file this stage holds are",
                    (unsigned long long)(held >> 20), (unsigned long long)(avail >> 20));
    for (unsigned i = 0; r == 0 && i < n_ranges; i++) r = circuit_read_range(fd, m, ranges[i][0], ranges[i][1], path, size, e);
    if (r < 0) {
        munmap(m, size);
        return r;
    }
    (void)mprotect(m, size, PROT_READ);
    *f = (circuit_file_t){
        .image = m, .size = size, .held = held, .dev = st.st_dev, .ino = st.st_ino, .mtime = st.st_mtim};
    return 0;
}

uint64_t circuits_bytes(void) {
    uint64_t n = 0;
    for (uint32_t i = 0; C && i < C->n_circuits; i++)
        if (circuits[i].loaded) n += circuits[i].zkey_file.held + (circuits[i].has_r1cs ? circuits[i].r1cs_file.held : 0);
    return n;
}

static void entry_release(stage_circuit_t *c) {
    if (!c->loaded) return;
    zk_zkey_close(&c->z);
    if (c->has_r1cs) zk_r1cs_close(&c->r);
    circuit_file_free(&c->zkey_file);
    circuit_file_free(&c->r1cs_file);
    c->loaded = c->has_vk = c->has_r1cs = false;
}

/* Loads the circuit's files into n (not yet visible). */
static int entry_load(stage_circuit_t *n, zk_err_t *e) {
    const cfg_circuit_t *ci = n->cfg;
    uint32_t skip = circuit_skip_of(want_parts);
    int r = circuit_file_read(&n->zkey_file, ci->zkey, skip, e);
    if (r < 0) return r;
    r = zk_zkey_parse_parts(&n->z, ci->zkey, n->zkey_file.image, n->zkey_file.size, skip, e);
    if (r < 0) {
        circuit_file_free(&n->zkey_file);
        return r;
    }
    if (want_parts & CIRCUIT_VK) {
        r = zk_vk_from_zkey(&n->vk, &n->z, e);
        if (r < 0) goto fail;
        n->has_vk = true;
    }
    if ((want_parts & CIRCUIT_R1CS) && ci->r1cs[0]) {
        r = circuit_file_read(&n->r1cs_file, ci->r1cs, 0, e);
        if (r == 0) r = zk_r1cs_parse(&n->r, ci->r1cs, n->r1cs_file.image, n->r1cs_file.size, e);
        if (r < 0) {
            circuit_file_free(&n->r1cs_file);
            goto fail;
        }
        n->has_r1cs = true;
    }
    n->loaded = true;
    return 0;
fail:
    zk_zkey_close(&n->z);
    circuit_file_free(&n->zkey_file);
    return r;
}

static bool files_changed(const stage_circuit_t *c) {
    struct stat st;
    if (stat(c->cfg->zkey, &st) < 0 || !same_identity(&c->zkey_file, &st)) return true;
    if (c->has_r1cs && (stat(c->cfg->r1cs, &st) < 0 || !same_identity(&c->r1cs_file, &st))) return true;
    return false;
}

static bool same_content(const circuit_file_t *a, const circuit_file_t *b) {
    return a->size == b->size && (!a->size || !memcmp(a->image, b->image, a->size));
}

/* A file that changed under us may still be being written (cp): a load that fails on a file
 * modified in the last two seconds is tried again for up to three seconds. */
static int load_settled(stage_circuit_t *n, zk_err_t *e) {
    for (int tries = 0;; tries++) {
        int r = entry_load(n, e);
        if (r == 0 || tries >= 30) return r;
        struct stat st;
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        if (stat(n->cfg->zkey, &st) < 0 || now.tv_sec - st.st_mtim.tv_sec > 2) return r;
        usleep(100000);
    }
}

stage_circuit_t *circuits_get(const char *name, bool may_reload, char *why, size_t whylen) {
    int i = C ? cfg_circuit_index(C, name) : -ENOENT;
    if (i < 0) {
        snprintf(why, whylen, "circuit %s is not configured in %s", name, C ? C->path : "the ini");
        return NULL;
    }
    stage_circuit_t *c = &circuits[i];
    uint64_t now = daemon_now_ns();
    if (c->loaded && (!may_reload || now - c->checked_ns < CIRCUIT_STAT_NS)) return c;
    if (c->loaded) {
        c->checked_ns = now;
        if (!files_changed(c)) return c;
    }
    if (!c->loaded && c->error[0] && now < c->retry_after_ns) {
        snprintf(why, whylen, "circuit %s: %s", name, c->error);
        return NULL;
    }
    stage_circuit_t n = {.cfg = c->cfg};
    zk_err_t e = {{0}};
    uint64_t t0 = daemon_now_ns();
    int r = load_settled(&n, &e);
    if (r < 0) {
        bool was = c->loaded;
        entry_release(c); /* the file on disk is what counts: never prove with a key it no longer holds */
        snprintf(c->error, sizeof c->error, "%s", e.msg);
        c->retry_after_ns = daemon_now_ns() + 1000000000ull;
        log_err("Failed to %s circuit %s: %s", was ? "reload" : "load", name, e.msg);
        snprintf(why, whylen, "circuit %s: %s", name, c->error);
        return NULL;
    }
    bool reload = c->loaded;
    bool same = reload && zk_zkey_same(&c->z, &n.z) &&
                (!c->has_r1cs || same_content(&c->r1cs_file, &n.r1cs_file));
    n.generation = same ? c->generation : c->generation + 1;
    n.checked_ns = daemon_now_ns();
    entry_release(c);
    *c = n;
    if (reload)
        log_warn("The files of circuit %s changed on disk; reloaded (%s) in %.1f ms", name,
                 same ? "same content" : "a new key", (daemon_now_ns() - t0) / 1e6);
    return c;
}

int circuit_check_proof(const stage_circuit_t *c, int dirfd, uint32_t k, const uint8_t *pub, uint32_t n_pub, char *why,
                        size_t whylen) {
    char pn[SPOOL_FILE_NAME_MAX], un[SPOOL_FILE_NAME_MAX];
    spool_file_name(pn, SPOOL_F_PROOF, k);
    spool_file_name(un, SPOOL_F_PUBLIC, k);
    if (!c->has_vk) return snprintf(why, whylen, "no verifying key loaded"), -EINVAL;
    _cleanup_free_ char *ptext = NULL;
    _cleanup_free_ char *utext = NULL;
    _cleanup_free_ uint8_t *got = NULL;
    size_t plen, ulen;
    uint32_t n = 0;
    zk_err_t e = {{0}};
    zk_proof_t proof;
    int r = spool_read_part(dirfd, SPOOL_F_PROOF, k, &ptext, &plen, why, whylen);
    if (r == 0) r = spool_read_part(dirfd, SPOOL_F_PUBLIC, k, &utext, &ulen, why, whylen);
    if (r < 0) return r;
    r = zk_proof_parse_json(&proof, c->z.curve, pn, ptext, plen, &e);
    if (r == 0) r = zk_public_parse_json(&got, &n, c->z.curve, un, utext, ulen, &e);
    if (r == 0 && pub && (n != n_pub || (n && memcmp(got, pub, (size_t)n * 32))))
        r = zk_fail(&e, EBADMSG, "%s: its public signals are not the partition's", un);
    if (r == 0) r = zk_verify_proof(&c->vk, &proof, got, n, &e);
    if (r < 0) snprintf(why, whylen, "%s", e.msg);
    return r;
}

void circuits_preload(void) {
    char why[800];
    for (uint32_t i = 0; C && i < C->n_circuits; i++)
        if (C->circuits[i].preload) (void)circuits_get(C->circuits[i].name, false, why, sizeof why);
}
