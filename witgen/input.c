/* circom's input JSON (the format `snarkjs wtns calculate` reads), parsed with json-c.
 *
 * Values are taken as snarkjs takes them: a decimal string (optionally negative), a 0x hex string,
 * or a JSON number; each is reduced mod the prime, negative values to prime - (|v| mod prime).
 * Arrays, nested to any depth, are flattened row-major; nested objects name signals "a.b".
 * The JSON is read as strictly as JSON.parse reads it (no comments, single quotes, trailing commas
 * or trailing data). One difference, on purpose: a JSON number beyond 2^53 (which a double may not
 * hold exactly) is refused instead of silently rounded as JavaScript would. */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "witgen.h"

#define MAXW 16 /* words of the largest prime (circom's fields fit in 512 bits) */

uint64_t witgen_fnv1a64(const char *s) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) {
        h ^= (uint8_t)*s;
        h *= 0x100000001b3ull;
    }
    return h;
}

/* v < p, n32 words LE. */
static bool ge(const uint32_t *a, const uint32_t *b, uint32_t n) {
    for (uint32_t i = n; i-- > 0;)
        if (a[i] != b[i]) return a[i] > b[i];
    return true;
}

static void sub(uint32_t *a, const uint32_t *b, uint32_t n) {
    uint64_t borrow = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t d = (uint64_t)a[i] - b[i] - borrow;
        a[i] = (uint32_t)d;
        borrow = (d >> 63) & 1;
    }
}

/* v = (v * m + d) mod p for v < p, m <= 16: the product has one more word, taken off by
 * subtracting p at most m times. */
static void mul_add(uint32_t *v, uint32_t m, uint32_t d, const uint32_t *p, uint32_t n) {
    uint32_t t[MAXW + 1], pp[MAXW + 1];
    uint64_t carry = d;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t x = (uint64_t)v[i] * m + carry;
        t[i] = (uint32_t)x;
        carry = x >> 32;
    }
    t[n] = (uint32_t)carry;
    memcpy(pp, p, n * 4);
    pp[n] = 0;
    while (ge(t, pp, n + 1)) sub(t, pp, n + 1);
    memcpy(v, t, n * 4);
}

static int digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return 99;
}

/* A string as BigInt() reads one: decimal with an optional sign, or 0x / 0o / 0b without one;
 * surrounding white space is allowed. */
static bool parse_string(const char *s, uint32_t *v, const uint32_t *p, uint32_t n) {
    memset(v, 0, n * 4);
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    bool neg = false;
    uint32_t base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) base = 16, s += 2;
    else if (s[0] == '0' && (s[1] == 'o' || s[1] == 'O')) base = 8, s += 2;
    else if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) base = 2, s += 2;
    else if (*s == '-' || *s == '+') neg = *s++ == '-';
    if (digit(*s) >= (int)base) return false;
    for (; digit(*s) < (int)base; s++) mul_add(v, base, (uint32_t)digit(*s), p, n);
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    if (*s) return false;
    bool zero = true;
    for (uint32_t i = 0; i < n; i++) zero &= v[i] == 0;
    if (neg && !zero) {
        uint32_t t[MAXW];
        memcpy(t, p, n * 4);
        sub(t, v, n);
        memcpy(v, t, n * 4);
    }
    return true;
}

static bool json_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; }

/* What json-c's strict mode accepts and JSON.parse does not, found in the raw bytes: a quote other
 * than " outside strings, a control character inside one. State carries across reads. */
typedef struct {
    bool in_str, esc;
} strict_scan_t;

static const char *strict_scan(strict_scan_t *sc, const char *b, size_t n) {
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)b[i];
        if (sc->in_str) {
            if (ch < 0x20) return "a control character in a string";
            if (sc->esc) sc->esc = false;
            else if (ch == '\\') sc->esc = true;
            else if (ch == '"') sc->in_str = false;
        } else if (ch == '"') {
            sc->in_str = true;
        } else if (ch == '\'') {
            return "a single-quoted string";
        }
    }
    return NULL;
}

typedef struct {
    const uint32_t *p;
    uint32_t n32;
    const char *file;
    zk_err_t *err;
} ctx_t;

/* One value into v; errors name the signal and what is wrong, never the value: inputs are the
 * prover's secrets, and the error text reaches result.json, the journal and the exporter's /status. */
static int value(ctx_t *c, const char *name, json_object *o, uint32_t *v) {
    switch (json_object_get_type(o)) {
    case json_type_string:
        if (!parse_string(json_object_get_string(o), v, c->p, c->n32))
            return zk_fail(c->err, EINVAL,
                           "%s: signal %s: a string that is not a number (decimal digits or 0x and hex digits)",
                           c->file, name);
        return 0;
    case json_type_int: {
        /* exact in json-c (int64; larger ones clamp): beyond 2^53 JavaScript would have rounded it */
        int64_t i = json_object_get_int64(o);
        if (i > ((int64_t)1 << 53) || i < -((int64_t)1 << 53))
            return zk_fail(c->err, EINVAL,
                           "%s: signal %s: a JSON number too large to be exact (beyond 2^53 it would be rounded); "
                           "write it as a string",
                           c->file, name);
        char buf[40];
        snprintf(buf, sizeof buf, "%lld", (long long)i);
        parse_string(buf, v, c->p, c->n32);
        return 0;
    }
    case json_type_double: {
        double d = json_object_get_double(o);
        if (d != floor(d) || !isfinite(d))
            return zk_fail(c->err, EINVAL, "%s: signal %s: a JSON number that is not an integer", c->file, name);
        /* a fraction or an exponent: from 2^53 on the text may have been another integer */
        if (fabs(d) >= 9007199254740992.0)
            return zk_fail(c->err, EINVAL,
                           "%s: signal %s: a JSON number too large to be exact (beyond 2^53 it would be rounded); "
                           "write it as a string",
                           c->file, name);
        char buf[40];
        snprintf(buf, sizeof buf, "%.0f", d);
        parse_string(buf, v, c->p, c->n32);
        return 0;
    }
    default:
        return zk_fail(c->err, EINVAL, "%s: signal %s: a JSON %s is not a number", c->file, name,
                       json_type_to_name(json_object_get_type(o)));
    }
}

static int count_flat(ctx_t *c, const char *name, json_object *o, uint32_t *n) {
    if (json_object_get_type(o) != json_type_array) {
        if (json_object_get_type(o) == json_type_object)
            return zk_fail(c->err, EINVAL, "%s: signal %s: arrays of objects (buses) are not supported", c->file, name);
        if (++*n == 0) return zk_fail(c->err, E2BIG, "%s: signal %s: too many values", c->file, name);
        return 0;
    }
    size_t len = json_object_array_length(o);
    for (size_t i = 0; i < len; i++) {
        int r = count_flat(c, name, json_object_array_get_idx(o, i), n);
        if (r < 0) return r;
    }
    return 0;
}

static int fill_flat(ctx_t *c, const char *name, json_object *o, uint32_t *vals, uint32_t *k) {
    if (json_object_get_type(o) != json_type_array) return value(c, name, o, vals + (size_t)(*k)++ * c->n32);
    size_t len = json_object_array_length(o);
    for (size_t i = 0; i < len; i++) {
        int r = fill_flat(c, name, json_object_array_get_idx(o, i), vals, k);
        if (r < 0) return r;
    }
    return 0;
}

static int add_signal(ctx_t *c, witgen_input_t *in, const char *name, json_object *o) {
    if (json_object_get_type(o) == json_type_object) {
        json_object_object_foreach(o, k, v) {
            char *sub = NULL;
            if (asprintf(&sub, "%s.%s", name, k) < 0) return zk_fail(c->err, ENOMEM, "%s: out of memory", c->file);
            int r = add_signal(c, in, sub, v);
            free(sub);
            if (r < 0) return r;
        }
        return 0;
    }
    uint32_t n = 0;
    int r = count_flat(c, name, o, &n);
    if (r < 0) return r;
    witgen_signal_t *s = realloc(in->signals, (in->n_signals + 1) * sizeof *s);
    if (!s) return zk_fail(c->err, ENOMEM, "%s: out of memory", c->file);
    in->signals = s;
    s = &in->signals[in->n_signals];
    memset(s, 0, sizeof *s);
    s->name = strdup(name);
    s->hash = witgen_fnv1a64(name);
    s->n = n;
    s->vals = calloc(n ? n : 1, (size_t)c->n32 * 4);
    in->n_signals++;
    if (!s->name || !s->vals) return zk_fail(c->err, ENOMEM, "%s: out of memory", c->file);
    uint32_t k = 0;
    return fill_flat(c, name, o, s->vals, &k);
}

void witgen_input_free(witgen_input_t *in) {
    for (uint32_t i = 0; i < in->n_signals; i++) {
        free(in->signals[i].name);
        free(in->signals[i].vals);
    }
    free(in->signals);
    memset(in, 0, sizeof *in);
}

size_t witgen_input_max_bytes(uint32_t n_values, uint32_t n32) {
    return ((size_t)1 << 20) + (size_t)n_values * (256 + 12 * (size_t)n32);
}

int witgen_input_load(witgen_input_t *in, const char *input_path, const uint32_t *prime, uint32_t n32, zk_err_t *err) {
    return witgen_input_load_max(in, input_path, prime, n32, 0, err);
}

int witgen_input_load_max(witgen_input_t *in, const char *input_path, const uint32_t *prime, uint32_t n32,
                          size_t max_bytes, zk_err_t *err) {
    memset(in, 0, sizeof *in);
    if (n32 == 0 || n32 > MAXW) return zk_fail(err, EINVAL, "%s: unsupported field size of %u words", input_path, n32);
    /* O_NONBLOCK: a FIFO where the file belongs is refused, not waited on */
    int fd = open(input_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return zk_fail(err, errno, "%s: cannot open: %s", input_path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return zk_fail(err, EINVAL, "%s: not a regular file", input_path);
    }
    if (max_bytes && (uint64_t)st.st_size > max_bytes) {
        close(fd);
        return zk_fail(err, EFBIG, "%s: %lld bytes, more than an input of this circuit can be (at most %zu)",
                       input_path, (long long)st.st_size, max_bytes);
    }
    FILE *f = fdopen(fd, "r");
    if (!f) {
        close(fd);
        return zk_fail(err, errno, "%s: cannot open: %s", input_path, strerror(errno));
    }
    /* as strict as JSON.parse: json-c's strict mode (no comments, trailing commas or data), and
     * what it still lets through: single quotes, control characters in strings, data after the
     * object in a later read */
    struct json_tokener *tok = json_tokener_new();
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    json_object *root = NULL;
    enum json_tokener_error je = json_tokener_continue;
    const char *strict = NULL;
    strict_scan_t sc = {0};
    char buf[65536];
    size_t k;
    while (!strict && je == json_tokener_continue && (k = fread(buf, 1, sizeof buf, f)) > 0) {
        if ((strict = strict_scan(&sc, buf, k))) break;
        root = json_tokener_parse_ex(tok, buf, (int)k);
        je = json_tokener_get_error(tok);
    }
    while (!strict && je == json_tokener_success && (k = fread(buf, 1, sizeof buf, f)) > 0)
        for (size_t i = 0; i < k && !strict; i++)
            if (!json_space(buf[i])) strict = "data after the top-level value";
    bool rd_err = ferror(f);
    fclose(f);
    int r = 0;
    if (rd_err)
        r = zk_fail(err, EIO, "%s: read error", input_path);
    else if (strict)
        r = zk_fail(err, EINVAL, "%s: not valid JSON: %s", input_path, strict);
    else if (je != json_tokener_success || !root)
        r = zk_fail(err, EINVAL, "%s: not valid JSON: %s", input_path,
                    je == json_tokener_continue ? "unexpected end of file" : json_tokener_error_desc(je));
    else if (json_object_get_type(root) != json_type_object)
        r = zk_fail(err, EINVAL, "%s: the input must be a JSON object of signal names", input_path);
    json_tokener_free(tok);
    if (r == 0) {
        ctx_t c = {prime, n32, input_path, err};
        json_object_object_foreach(root, key, v) {
            if ((r = add_signal(&c, in, key, v)) < 0) break;
        }
    }
    json_object_put(root);
    if (r < 0) witgen_input_free(in);
    return r;
}
