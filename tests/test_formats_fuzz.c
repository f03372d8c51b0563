/* Deterministic mutation test of the file readers: truncations, flipped header and section-table
 * bytes, random 64-bit section sizes and random payload bytes of the mulchain zkey, wtns and r1cs.
 * Every mutant is parsed twice, from an exact-size heap copy (the sanitized build catches any read
 * outside it) and from a temp file through the open/load path. A reader must return 0 or a
 * negative errno with a one-line message naming the file, never crash; whatever it accepts is
 * walked end to end. Truncations must always be refused. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "zk/binfile.h"
#include "zk/r1cs.h"
#include "zk/wtns.h"
#include "zk/zkey.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd64(void) { /* splitmix64 */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static uint64_t rnd_below(uint64_t n) { return n ? rnd64() % n : 0; }

enum kind { K_ZKEY, K_WTNS, K_R1CS };
static const char *const kind_name[] = {"zkey", "wtns", "r1cs"};

static char tmp_path[512];
static int tmp_fd = -1;
static uint8_t *witness; /* the valid mulchain witness, for walking accepted r1cs mutants */
static uint32_t witness_n;

struct stats {
    unsigned accepted, refused;
};
static struct stats st[3];

static uint8_t *slurp(const char *path, size_t *ret_len) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return NULL;
    struct stat s;
    if (fstat(fd, &s) < 0) {
        close(fd);
        return NULL;
    }
    size_t len = (size_t)s.st_size, got = 0;
    uint8_t *b = malloc(len ? len : 1);
    while (b && got < len) {
        ssize_t k = read(fd, b + got, len - got);
        if (k <= 0) break;
        got += (size_t)k;
    }
    close(fd);
    if (!b || got != len) {
        free(b);
        return NULL;
    }
    *ret_len = len;
    return b;
}

/* Overwrites, then cuts to length (never truncates to zero first: ext4 flushes on that pattern). */
static int write_tmp(const uint8_t *d, size_t len) {
    size_t put = 0;
    while (put < len) {
        ssize_t k = pwrite(tmp_fd, d + put, len - put, (off_t)put);
        if (k <= 0) return -EIO;
        put += (size_t)k;
    }
    if (ftruncate(tmp_fd, (off_t)len) < 0) return -errno;
    return 0;
}

static volatile uint64_t sink;
static void touch(const void *p, size_t n) {
    if (!n) return;
    const uint8_t *b = p;
    sink += b[0] + b[n - 1] + b[n / 2];
}

/* Uses everything an accepted reader handed out. */
static void walk_zkey(const zk_zkey_t *z) {
    const size_t g1 = z->curve->g1_size, g2 = z->curve->g2_size;
    touch(z->alpha1, g1), touch(z->beta1, g1), touch(z->beta2, g2), touch(z->gamma2, g2);
    touch(z->delta1, g1), touch(z->delta2, g2);
    touch(z->ic, ((size_t)z->n_pub + 1) * g1);
    touch(z->coefs, (size_t)z->n_coefs * (12 + z->curve->n8r));
    touch(z->points_a, (size_t)z->n_vars * g1), touch(z->points_b1, (size_t)z->n_vars * g1);
    touch(z->points_b2, (size_t)z->n_vars * g2);
    touch(z->points_c, ((size_t)z->n_vars - z->n_pub - 1) * g1);
    touch(z->points_h, (size_t)z->domain_size * g1);
}

static void walk_r1cs(const zk_r1cs_t *r) {
    touch(r->constraints, r->constraints_size);
    if (r->n_wires > (1u << 20)) return;
    uint8_t *w = witness;
    if (r->n_wires != witness_n) {
        w = calloc(r->n_wires, 32);
        if (!w) return;
        w[0] = 1;
    }
    zk_err_t err;
    int64_t failed;
    int rc = zk_r1cs_check(r, "mutant.r1cs", w, r->n_wires, &failed, &err);
    sink += (uint64_t)rc + (uint64_t)failed;
    if (w != witness) free(w);
}

/* Message discipline: one line, names the file. */
static int msg_ok(const zk_err_t *err, const char *name) {
    return err->msg[0] && !strchr(err->msg, '\n') && strstr(err->msg, name);
}

/* Parses one mutant both ways. Returns 1 if accepted, 0 if refused, -1 on a contract violation. */
static int try_one(enum kind k, const uint8_t *d, size_t len) {
    uint8_t *heap = malloc(len ? len : 1);
    if (!heap) return -1;
    memcpy(heap, d, len);
    zk_err_t err = {{0}}, err2 = {{0}};
    int rc, rc2;
    switch (k) {
    case K_ZKEY: {
        zk_zkey_t z;
        rc = zk_zkey_parse(&z, "mutant.zkey", heap, len, &err);
        if (rc == 0) walk_zkey(&z), zk_zkey_close(&z);
        break;
    }
    case K_WTNS: {
        zk_wtns_t w;
        rc = zk_wtns_parse(&w, "mutant.wtns", heap, len, &err);
        if (rc == 0) touch(w.values, (size_t)w.n * 32), zk_wtns_free(&w);
        break;
    }
    default: {
        zk_r1cs_t r;
        rc = zk_r1cs_parse(&r, "mutant.r1cs", heap, len, &err);
        if (rc == 0) walk_r1cs(&r), zk_r1cs_close(&r);
        break;
    }
    }
    free(heap);
    if (rc > 0 || (rc < 0 && !msg_ok(&err, "mutant"))) {
        fprintf(stderr, "bad result %d '%s' for a %s mutant of %zu bytes\n", rc, err.msg, kind_name[k], len);
        return -1;
    }

    if (write_tmp(d, len) < 0) return -1;
    switch (k) {
    case K_ZKEY: {
        zk_zkey_t z;
        rc2 = zk_zkey_open(&z, tmp_path, &err2);
        if (rc2 == 0) walk_zkey(&z), zk_zkey_prefault(&z), zk_zkey_close(&z);
        break;
    }
    case K_WTNS: {
        zk_wtns_t w;
        rc2 = zk_wtns_load(&w, tmp_path, &err2);
        if (rc2 == 0) touch(w.values, (size_t)w.n * 32), zk_wtns_free(&w);
        break;
    }
    default: {
        zk_r1cs_t r;
        rc2 = zk_r1cs_open(&r, tmp_path, &err2);
        if (rc2 == 0) walk_r1cs(&r), zk_r1cs_close(&r);
        break;
    }
    }
    /* Both paths run the same validation: they must agree. */
    if ((rc == 0) != (rc2 == 0) || (rc2 < 0 && !msg_ok(&err2, tmp_path))) {
        fprintf(stderr, "memory/file disagree on a %s mutant: %d '%s' vs %d '%s'\n", kind_name[k], rc, err.msg, rc2,
                err2.msg);
        return -1;
    }
    if (rc == 0)
        st[k].accepted++;
    else
        st[k].refused++;
    return rc == 0;
}

/* Offsets of the section-table entries (12-byte headers) of a valid image. */
static size_t table(const uint8_t *d, size_t len, size_t *hdrs, size_t max) {
    size_t n = 0, pos = 12;
    uint32_t ns = zk_le32(d + 8);
    for (uint32_t i = 0; i < ns && n < max && pos + 12 <= len; i++) {
        hdrs[n++] = pos;
        pos += 12 + zk_le64(d + pos + 4);
    }
    return n;
}

static int fuzz_file(enum kind k, const char *rel) {
    size_t len;
    uint8_t *orig = slurp(test_data(rel), &len);
    CHECK(orig);
    uint8_t *m = malloc(len + 64);
    CHECK(m);
    CHECK_MSG(try_one(k, orig, len) == 1, "the unmutated %s is refused", rel);

    /* 1. truncation at every offset in the first 200 bytes, and at 300 random offsets */
    for (size_t cut = 0; cut < 200 && cut < len; cut++) CHECK_MSG(try_one(k, orig, cut) == 0, "%s cut at %zu", rel, cut);
    for (int i = 0; i < 300; i++) {
        size_t cut = (size_t)rnd_below(len);
        CHECK_MSG(try_one(k, orig, cut) == 0, "%s cut at %zu accepted", rel, cut);
    }
    /* and one byte too many */
    memcpy(m, orig, len);
    m[len] = 0;
    CHECK(try_one(k, m, len + 1) == 0);

    /* 2. random bytes flipped in the container header, the section table entries and the first
     *    64 bytes of every payload (where the format headers and counts live) */
    size_t hdrs[64];
    size_t nh = table(orig, len, hdrs, 64);
    CHECK(nh >= 2);
    for (int i = 0; i < 600; i++) {
        memcpy(m, orig, len);
        int flips = 1 + (int)rnd_below(3);
        for (int f = 0; f < flips; f++) {
            size_t at;
            uint64_t where = rnd_below(3);
            if (where == 0)
                at = (size_t)rnd_below(12);
            else if (where == 1)
                at = hdrs[rnd_below(nh)] + (size_t)rnd_below(12);
            else
                at = hdrs[rnd_below(nh)] + 12 + (size_t)rnd_below(64);
            if (at >= len) continue;
            if (rnd_below(2))
                m[at] ^= (uint8_t)(1u << rnd_below(8));
            else
                m[at] = (uint8_t)rnd64();
        }
        CHECK(try_one(k, m, len) >= 0);
    }

    /* 3. random u64 section sizes: anything, near 2^64, near the true size, small */
    for (int i = 0; i < 300; i++) {
        memcpy(m, orig, len);
        size_t h = hdrs[rnd_below(nh)];
        uint64_t old = zk_le64(orig + h + 4), v;
        switch (rnd_below(5)) {
        case 0: v = rnd64(); break;
        case 1: v = UINT64_MAX - rnd_below(64); break;
        case 2: v = old + rnd_below(128) - 64; break;
        case 3: v = rnd_below(256); break;
        default: v = (uint64_t)rnd_below(len) - h; break;
        }
        memcpy(m + h + 4, &v, 8);
        int rc = try_one(k, m, len);
        CHECK(rc >= 0);
        if (v != old) CHECK_MSG(rc == 0, "%s: section size %" PRIu64 " (was %" PRIu64 ") accepted", rel, v, old);
    }

    /* 4. random bytes anywhere (counts, records, points) */
    for (int i = 0; i < 200; i++) {
        memcpy(m, orig, len);
        for (int f = 0; f < 4; f++) m[rnd_below(len)] = (uint8_t)rnd64();
        CHECK(try_one(k, m, len) >= 0);
    }
    free(m);
    free(orig);
    return 0;
}

/* Once for the program: the temporary file every mutant is written to, and the valid witness. */
TEST_SETUP() {
    const char *dir = getenv("TMPDIR");
    snprintf(tmp_path, sizeof tmp_path, "%s/zkpipe-fuzz-XXXXXX", dir && *dir ? dir : "/tmp");
    tmp_fd = mkstemp(tmp_path);
    CHECK_MSG(tmp_fd >= 0, "%s: %s", tmp_path, strerror(errno));
    zk_wtns_t w;
    zk_err_t err;
    CHECK_MSG(zk_wtns_load(&w, test_data("bn128/mulchain/witness-1.wtns"), &err) == 0, "%s", err.msg);
    witness = malloc((size_t)w.n * 32);
    CHECK(witness);
    memcpy(witness, w.values, (size_t)w.n * 32);
    witness_n = w.n;
    zk_wtns_free(&w);
    return 0;
}

TEST(fuzz_zkey) {
    if (fuzz_file(K_ZKEY, "bn128/mulchain/mulchain.zkey")) return 1;
    fprintf(stderr, "  zkey: %u mutants accepted, %u refused\n", st[K_ZKEY].accepted, st[K_ZKEY].refused);
    return 0;
}

TEST(fuzz_wtns) {
    if (fuzz_file(K_WTNS, "bn128/mulchain/witness-1.wtns")) return 1;
    fprintf(stderr, "  wtns: %u mutants accepted, %u refused\n", st[K_WTNS].accepted, st[K_WTNS].refused);
    return 0;
}

TEST(fuzz_r1cs) {
    if (fuzz_file(K_R1CS, "bn128/mulchain/mulchain.r1cs")) return 1;
    fprintf(stderr, "  r1cs: %u mutants accepted, %u refused\n", st[K_R1CS].accepted, st[K_R1CS].refused);
    return 0;
}

/* Once after the last case, whichever ran: removes the temporary file. */
TEST_TEARDOWN() {
    if (tmp_fd >= 0) {
        close(tmp_fd);
        unlink(tmp_path);
        tmp_fd = -1;
    }
    free(witness);
    witness = NULL;
    return 0;
}
