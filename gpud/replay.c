/* The replay backend's model, content hashes and results cache (gpud/replay.h, docs/replay.md),
 * used by gpud's replay backend and by `zkpipe replay prepare`. */
#include "replay.h"

#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

/* -- the model ------------------------------------------------------------------------------- */

struct model_parse {
    zk_replay_model_t *m;
    FILE *f;
    int line;
    int curve; /* of the key being read: -1 [device], 0 [bn128], 1 [bls12381] */
    zk_err_t *err;
    bool failed, seen_h2d;
};

static char *model_read_line(char *buf, int size, void *user) {
    struct model_parse *st = user;
    char *r = fgets(buf, size, st->f);
    if (!r) return NULL;
    st->line++;
    size_t n = strlen(r);
    if (n == (size_t)size - 1 && r[n - 1] != '\n' && !feof(st->f)) { /* never read as two lines */
        if (!st->failed)
            zk_fail(st->err, EINVAL, "%s:%d: line is longer than %d characters (give a key's points on more lines)",
                    st->m->path, st->line, size - 2);
        st->failed = true;
        return NULL;
    }
    return r;
}

static int model_fail(struct model_parse *st, const char *what, const char *v) {
    if (!st->failed) zk_fail(st->err, EINVAL, "%s:%d: %s = %s", st->m->path, st->line, what, v);
    st->failed = true;
    return 0;
}

/* "1.5ms", "200us", "0.8 s", "1500ns" -> seconds; -1 when it is not a time */
static double parse_time(const char *s) {
    char *end;
    double v = strtod(s, &end);
    if (end == s || !(v >= 0) || !isfinite(v)) return -1;
    while (*end == ' ') end++;
    static const struct {
        const char *unit;
        double scale;
    } units[] = {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (!strcmp(end, units[i].unit)) return v * units[i].scale;
    return -1;
}

/* "2^20" or "1048576" -> a count; -1 otherwise */
static double parse_count(const char *s) {
    char *end;
    if (s[0] == '2' && s[1] == '^') {
        long e = strtol(s + 2, &end, 10);
        return end != s + 2 && !*end && e >= 0 && e <= 40 ? ldexp(1, (int)e) : -1;
    }
    unsigned long long v = strtoull(s, &end, 10);
    return end != s && !*end && v > 0 ? (double)v : -1;
}

/* "SIZE TIME, SIZE TIME, ..." appended to f (a key given again, or continued on an indented line,
 * adds points); sizes must rise. */
static int parse_points(struct model_parse *st, zk_replay_fn_t *f, const char *key, const char *v) {
    char buf[1024];
    if (strlen(v) >= sizeof buf) return model_fail(st, key, "(too long)");
    strcpy(buf, v);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        while (*item == ' ' || *item == '\t') item++;
        char *sp = strpbrk(item, " \t");
        if (!sp) goto bad;
        *sp++ = 0;
        while (*sp == ' ' || *sp == '\t') sp++;
        char *e = sp + strlen(sp);
        while (e > sp && (e[-1] == ' ' || e[-1] == '\t')) *--e = 0;
        double n = parse_count(item), t = parse_time(sp);
        if (n < 0 || t < 0) goto bad;
        if (f->n == ZK_REPLAY_MAX_POINTS) {
            if (!st->failed)
                zk_fail(st->err, EINVAL, "%s:%d: %s: more than %d points", st->m->path, st->line, key,
                        ZK_REPLAY_MAX_POINTS);
            st->failed = true;
            return 0;
        }
        if (f->n && n <= f->size[f->n - 1]) {
            if (!st->failed)
                zk_fail(st->err, EINVAL, "%s:%d: %s: sizes must rise (%s after %.0f)", st->m->path, st->line, key, item,
                        f->size[f->n - 1]);
            st->failed = true;
            return 0;
        }
        f->size[f->n] = n;
        f->sec[f->n++] = t;
    }
    if (f->n) return 1;
bad:
    if (!st->failed)
        zk_fail(st->err, EINVAL, "%s:%d: %s = %s: expected SIZE TIME pairs separated by commas (2^20 4.1ms, ...)",
                st->m->path, st->line, key, v);
    st->failed = true;
    return 0;
}

static int model_handler(void *user, const char *section, const char *name, const char *value) {
    struct model_parse *st = user;
    zk_replay_model_t *m = st->m;
    if (st->failed) return 0;
    /* the section comes with each key (this inih calls no handler for a header alone) */
    st->curve = !strcmp(section, "device") ? -1 : !strcmp(section, "bn128") ? 0 : !strcmp(section, "bls12381") ? 1 : -2;
    if (st->curve == -2) {
        zk_fail(st->err, EINVAL, "%s:%d: key '%s' in %s%s%s (expected [device], [bn128] or [bls12381])", m->path,
                st->line, name ? name : "", *section ? "[" : "no section", section, *section ? "]" : "");
        st->failed = true;
        return 0;
    }
    if (!name) return 1;
    if (st->curve >= 0) m->has_curve[st->curve] = true;
    if (st->curve == -1) {
        if (!strcmp(name, "name")) {
            if (!*value || strlen(value) >= sizeof m->name) return model_fail(st, "name", "(empty or too long)");
            snprintf(m->name, sizeof m->name, "%s", value);
        } else if (!strcmp(name, "h2d")) {
            char *end;
            double v = strtod(value, &end);
            double scale = !strcmp(end, "G") ? 1e9 : !strcmp(end, "M") ? 1e6 : !*end ? 1 : -1;
            if (end == value || !(v > 0) || scale < 0)
                return model_fail(st, "h2d (bytes per second: 25G, 800M)", value);
            m->h2d_bps = v * scale;
            st->seen_h2d = true;
        } else if (!strcmp(name, "fixed")) {
            if ((m->fixed_s = parse_time(value)) < 0) return model_fail(st, "fixed (a time: 150us)", value);
        } else {
            zk_fail(st->err, EINVAL, "%s:%d: unknown key '%s' in [device] (name, h2d, fixed)", m->path, st->line, name);
            st->failed = true;
            return 0;
        }
        return 1;
    }
    if (!strcmp(name, "msm_g1")) return parse_points(st, &m->msm_g1[st->curve], name, value);
    if (!strcmp(name, "msm_g2")) return parse_points(st, &m->msm_g2[st->curve], name, value);
    if (!strcmp(name, "ntt")) return parse_points(st, &m->ntt[st->curve], name, value);
    zk_fail(st->err, EINVAL, "%s:%d: unknown key '%s' in [%s] (msm_g1, msm_g2, ntt)", m->path, st->line, name, section);
    st->failed = true;
    return 0;
}

int zk_replay_model_load(zk_replay_model_t *m, const char *path, zk_err_t *err) {
    memset(m, 0, sizeof *m);
    snprintf(m->path, sizeof m->path, "%s", path);
    struct model_parse st = {.m = m, .err = err};
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat sb;
    if (fd < 0) return zk_fail(err, errno, "replay model %s: cannot open: %s", path, strerror(errno));
    if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return zk_fail(err, EINVAL, "replay model %s: not a regular file", path);
    }
    st.f = fdopen(fd, "r");
    if (!st.f) {
        close(fd);
        return zk_fail(err, ENOMEM, "replay model %s: out of memory", path);
    }
    int r = ini_parse_stream(model_read_line, &st, model_handler, &st);
    fclose(st.f);
    if (st.failed) return -EINVAL;
    if (r != 0) return zk_fail(err, EINVAL, "%s:%d: syntax error (expected [section] or key = value)", path, r);
    if (!m->name[0]) return zk_fail(err, EINVAL, "%s: [device] has no name", path);
    if (!st.seen_h2d) return zk_fail(err, EINVAL, "%s: [device] has no h2d (host-to-device bytes per second)", path);
    static const char *curves[2] = {"bn128", "bls12381"};
    for (int c = 0; c < 2; c++) {
        if (!m->has_curve[c]) continue;
        const char *missing = !m->msm_g1[c].n ? "msm_g1" : !m->msm_g2[c].n ? "msm_g2" : !m->ntt[c].n ? "ntt" : NULL;
        if (missing) return zk_fail(err, EINVAL, "%s: [%s] has no %s", path, curves[c], missing);
    }
    if (!m->has_curve[0] && !m->has_curve[1]) return zk_fail(err, EINVAL, "%s: no [bn128] or [bls12381] section", path);
    return 0;
}

static double fn_at(const zk_replay_fn_t *f, double n) {
    if (n <= f->size[0]) return f->sec[0];
    for (int i = 1; i < f->n; i++)
        if (n <= f->size[i])
            return f->sec[i - 1] + (f->sec[i] - f->sec[i - 1]) * (n - f->size[i - 1]) / (f->size[i] - f->size[i - 1]);
    int k = f->n - 1;
    if (k == 0) return f->sec[0] * n / f->size[0];
    return f->sec[k] + (f->sec[k] - f->sec[k - 1]) * (n - f->size[k]) / (f->size[k] - f->size[k - 1]);
}

static uint64_t ns(double s) { return (uint64_t)llround(s * 1e9); }

int zk_replay_plan(const zk_replay_model_t *m, const zk_zkey_t *z, zk_replay_plan_t *p, zk_err_t *err) {
    int c = !strcmp(z->curve->name, "bn128") ? 0 : 1;
    if (!m->has_curve[c]) return zk_fail(err, ENOTSUP, "replay model %s has no [%s] section", m->path, z->curve->name);
    memset(p, 0, sizeof *p);
    p->h2d_bytes = (uint64_t)z->n_vars * 32 + 3ull * z->domain_size * 32;
    p->t.h2d_ns = ns((double)p->h2d_bytes / m->h2d_bps);
    /* the core's H: a, b, c each by an inverse NTT and a forward NTT on the odd coset */
    p->t.ntt_ns = 6 * ns(fn_at(&m->ntt[c], z->domain_size));
    p->t.msm_a_ns = ns(fn_at(&m->msm_g1[c], z->n_vars));
    p->t.msm_b1_ns = p->t.msm_a_ns;
    p->t.msm_b2_ns = ns(fn_at(&m->msm_g2[c], z->n_vars));
    p->t.msm_c_ns = ns(fn_at(&m->msm_g1[c], z->n_vars - z->n_pub - 1));
    p->t.msm_h_ns = ns(fn_at(&m->msm_g1[c], z->domain_size));
    p->fixed_ns = ns(m->fixed_s);
    p->compute_ns =
        p->t.ntt_ns + p->t.msm_a_ns + p->t.msm_b1_ns + p->t.msm_b2_ns + p->t.msm_c_ns + p->t.msm_h_ns + p->fixed_ns;
    return 0;
}

void zk_replay_plan_str(const zk_replay_plan_t *p, char *buf, size_t len) {
    const zk_core_times_t *t = &p->t;
    snprintf(buf, len,
             "%.3f ms a partition (h2d %.3f ms for %.2f MB, overlapped with the previous partition's work; NTT %.3f "
             "ms, MSM G1 %.3f ms, MSM G2 %.3f ms, fixed %.3f ms)",
             p->compute_ns / 1e6, t->h2d_ns / 1e6, p->h2d_bytes / 1e6, t->ntt_ns / 1e6,
             (t->msm_a_ns + t->msm_b1_ns + t->msm_c_ns + t->msm_h_ns) / 1e6, t->msm_b2_ns / 1e6, p->fixed_ns / 1e6);
}

/* -- hashes ---------------------------------------------------------------------------------- */

struct zk_replay_hasher {
    XXH3_state_t *x;
};

zk_replay_hasher_t *zk_replay_hasher_new(void) {
    zk_replay_hasher_t *s = malloc(sizeof *s);
    if (!s) return NULL;
    if (!(s->x = XXH3_createState())) {
        free(s);
        return NULL;
    }
    zk_replay_hasher_reset(s);
    return s;
}

void zk_replay_hasher_reset(zk_replay_hasher_t *s) { (void)XXH3_128bits_reset(s->x); }

void zk_replay_hasher_update(zk_replay_hasher_t *s, const void *p, size_t len) {
    (void)XXH3_128bits_update(s->x, p, len);
}

static void digest_of(XXH128_hash_t h, zk_replay_hash_t *out) {
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, h);
    memcpy(out->b, c.digest, sizeof out->b);
}

void zk_replay_hasher_digest(zk_replay_hasher_t *s, zk_replay_hash_t *out) {
    digest_of(XXH3_128bits_digest(s->x), out);
}

void zk_replay_hasher_free(zk_replay_hasher_t *s) {
    if (!s) return;
    XXH3_freeState(s->x);
    free(s);
}

void zk_replay_hash_hex(const zk_replay_hash_t *h, char out[33]) {
    for (int i = 0; i < 16; i++) snprintf(out + 2 * i, 3, "%02x", h->b[i]);
}

void zk_replay_key_hash(const zk_zkey_t *z, zk_replay_hash_t *out) {
    XXH3_state_t *x = XXH3_createState();
    if (!x) abort();
    (void)XXH3_128bits_reset(x);
    /* what the core's results depend on besides the input: the dimensions and the points (the
     * coefs shape a, b, c, which the input hash covers; gpud does not hold them) */
    uint32_t sizes[3] = {z->n_vars, z->n_pub, z->domain_size};
    (void)XXH3_128bits_update(x, z->curve->name, strlen(z->curve->name) + 1);
    (void)XXH3_128bits_update(x, sizes, sizeof sizes);
    size_t g1 = z->curve->g1_size, g2 = z->curve->g2_size;
    (void)XXH3_128bits_update(x, z->points_a, (size_t)z->n_vars * g1);
    (void)XXH3_128bits_update(x, z->points_b1, (size_t)z->n_vars * g1);
    (void)XXH3_128bits_update(x, z->points_b2, (size_t)z->n_vars * g2);
    (void)XXH3_128bits_update(x, z->points_c, (size_t)(z->n_vars - z->n_pub - 1) * g1);
    (void)XXH3_128bits_update(x, z->points_h, (size_t)z->domain_size * g1);
    digest_of(XXH3_128bits_digest(x), out);
    XXH3_freeState(x);
}

void zk_replay_input_hash(const zk_zkey_t *z, const uint8_t *witness, const void *a, const void *b, const void *c,
                          zk_replay_hash_t *out) {
    XXH3_state_t *x = XXH3_createState();
    if (!x) abort();
    (void)XXH3_128bits_reset(x);
    size_t each = (size_t)z->domain_size * 32;
    (void)XXH3_128bits_update(x, witness, (size_t)z->n_vars * 32);
    (void)XXH3_128bits_update(x, a, each);
    (void)XXH3_128bits_update(x, b, each);
    (void)XXH3_128bits_update(x, c, each);
    digest_of(XXH3_128bits_digest(x), out);
    XXH3_freeState(x);
}

/* -- the cache ------------------------------------------------------------------------------- */

#define ENTRY_MAGIC "zkreplay"
#define ENTRY_VERSION 1u

/* One file: this header, the raw results, then XXH3-64 of everything before it. */
typedef struct entry {
    char magic[8];
    uint32_t version, raw_size;
    uint32_t n_vars, domain_size;
    char curve[16];
    zk_replay_hash_t key, input;
    zk_raw_t raw;
    uint64_t check;
} entry_t;

int zk_replay_entry_path(char *buf, size_t len, const char *dir, const zk_replay_hash_t *key,
                         const zk_replay_hash_t *input) {
    char k[33], i[33];
    zk_replay_hash_hex(key, k);
    zk_replay_hash_hex(input, i);
    return (size_t)snprintf(buf, len, "%s/%s/%s.raw", dir, k, i) < len ? 0 : -ENAMETOOLONG;
}

static void entry_fill(entry_t *e, const zk_zkey_t *z, const zk_replay_hash_t *key, const zk_replay_hash_t *input) {
    memset(e, 0, sizeof *e);
    memcpy(e->magic, ENTRY_MAGIC, 8);
    e->version = ENTRY_VERSION;
    e->raw_size = sizeof e->raw;
    e->n_vars = z->n_vars;
    e->domain_size = z->domain_size;
    snprintf(e->curve, sizeof e->curve, "%s", z->curve->name);
    e->key = *key;
    e->input = *input;
}

int zk_replay_entry_get(const char *dir, const zk_zkey_t *z, const zk_replay_hash_t *key, const zk_replay_hash_t *input,
                        zk_raw_t *out, zk_err_t *err) {
    char path[1200];
    if (zk_replay_entry_path(path, sizeof path, dir, key, input) < 0)
        return zk_fail(err, ENAMETOOLONG, "replay cache %s: path too long", dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0 && errno == ENOENT) {
        char i[33], k[33];
        zk_replay_hash_hex(input, i);
        zk_replay_hash_hex(key, k);
        return zk_fail(err, ENOENT,
                       "replay: no cached result for this witness (input %s) with this key (content %s) in %s: the "
                       "replay backend proves only what `zkpipe replay prepare` computed",
                       i, k, dir);
    }
    if (fd < 0) return zk_fail(err, errno, "replay cache entry %s: cannot open: %s", path, strerror(errno));
    entry_t e, want;
    struct stat st;
    ssize_t n = -1;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == (off_t)sizeof e) n = pread(fd, &e, sizeof e, 0);
    close(fd);
    if (n != (ssize_t)sizeof e) return zk_fail(err, EINVAL, "replay cache entry %s: not a whole entry", path);
    entry_fill(&want, z, key, input);
    if (memcmp(&e, &want, offsetof(entry_t, raw)) || XXH3_64bits(&e, offsetof(entry_t, check)) != e.check)
        return zk_fail(err, EINVAL, "replay cache entry %s: corrupt or not for this key and input", path);
    *out = e.raw;
    return 0;
}

static int mkdir_p(const char *path, zk_err_t *err) {
    char tmp[1200];
    if (strlen(path) >= sizeof tmp) return zk_fail(err, ENAMETOOLONG, "%s: path too long", path);
    strcpy(tmp, path);
    for (char *p = tmp + 1;; p++) {
        if (*p && *p != '/') continue;
        char was = *p;
        *p = 0;
        if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
            return zk_fail(err, errno, "replay cache: cannot create %s: %s", tmp, strerror(errno));
        if (!was) return 0;
        *p = was;
    }
}

int zk_replay_entry_put(const char *dir, const zk_zkey_t *z, const zk_replay_hash_t *key, const zk_replay_hash_t *input,
                        const zk_raw_t *raw, zk_err_t *err) {
    char path[1200];
    if (zk_replay_entry_path(path, sizeof path, dir, key, input) < 0)
        return zk_fail(err, ENAMETOOLONG, "replay cache %s: path too long", dir);
    *strrchr(path, '/') = 0;
    int r = mkdir_p(path, err);
    if (r < 0) return r;
    path[strlen(path)] = '/';
    entry_t e;
    entry_fill(&e, z, key, input);
    e.raw = *raw;
    e.check = XXH3_64bits(&e, offsetof(entry_t, check));
    return zk_write_file_atomic(path, (const char *)&e, sizeof e, err);
}
