/* The zkpipe ini: inih callbacks into cfg_t, with file:line errors for unknown sections, unknown keys
 * and bad values, then whole-file validation. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "base/file.h"

struct parse_state {
    cfg_t *c;
    const char *name;
    int line; /* current line, counted by our reader (inih passes none by default) */
    int err_line;
    char *err;
    size_t errlen;
    bool failed;
    const char *text; /* what is left of the ini to read */
    /* the line each key (outside [circuit NAME]) was set on, 0 when not set: for defaults that
     * depend on other keys and for errors about the whole file (keys[] below) */
    int key_line[64];
    int cur_circuit; /* index into c->circuits, -1 outside a circuit section */
};

static void perr(struct parse_state *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void perr(struct parse_state *st, const char *fmt, ...) {
    if (st->failed) return; /* the first error is the one that counts */
    st->failed = true;
    int n = snprintf(st->err, st->errlen, "%s:%d: ", st->name, st->line);
    if (n < 0 || (size_t)n >= st->errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->err + n, st->errlen - n, fmt, ap);
    va_end(ap);
}

static void ferr(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void ferr(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

int cfg_parse_size(const char *s, uint64_t *ret) {
    if (!s || !*s || !isdigit((unsigned char)*s)) return -EINVAL;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno) return -EINVAL;
    uint64_t mul = 1;
    if (*end) {
        switch (toupper((unsigned char)*end)) {
        case 'K':
            mul = 1ull << 10;
            break;
        case 'M':
            mul = 1ull << 20;
            break;
        case 'G':
            mul = 1ull << 30;
            break;
        case 'T':
            mul = 1ull << 40;
            break;
        default:
            return -EINVAL;
        }
        end++;
        if (toupper((unsigned char)*end) == 'I') end++; /* KiB, MiB */
        if (toupper((unsigned char)*end) == 'B') end++;
        if (*end) return -EINVAL;
    }
    if (v > UINT64_MAX / mul) return -ERANGE;
    *ret = v * mul;
    return 0;
}

static int parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *ret) {
    if (!s || !*s) return -EINVAL;
    for (const char *p = s; *p; p++)
        if (!isdigit((unsigned char)*p)) return -EINVAL;
    errno = 0;
    unsigned long long v = strtoull(s, NULL, 10);
    if (errno || v < lo || v > hi) return -ERANGE;
    *ret = (uint32_t)v;
    return 0;
}

int cfg_parse_priority(const char *s) {
    static const char *names[] = {"critical", "high", "normal", "low"};
    for (int i = 0; i < 4; i++)
        if (!strcasecmp(s, names[i])) return i;
    return -EINVAL;
}

const char *cfg_priority_name(int p) {
    static const char *names[] = {"CRITICAL", "HIGH", "NORMAL", "LOW"};
    return p >= 0 && p < 4 ? names[p] : "?";
}

bool cfg_valid_name(const char *s) {
    if (!*s || strlen(s) >= CFG_NAME_MAX) return false;
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-' && *p != '.') return false;
    return s[0] != '.';
}

/* ---- the keys: one table, one row a key ---- */

typedef enum {
    KEY_STR,     /* text, at most the field's size */
    KEY_ABSPATH, /* text starting with '/' */
    KEY_NAME,    /* cfg_valid_name */
    KEY_U32,     /* lo..hi */
    KEY_SIZE,    /* cfg_parse_size, lo..hi (hi 0: no upper bound) */
    KEY_BOOL,    /* yes/no/true/false/on/off/1/0 */
    KEY_ENUM,    /* one of names (case-insensitive), stored as its value */
    KEY_PARSE,   /* the row's own parser */
} key_type_t;

#define STR_(x) #x
#define STR(x) STR_(x)

typedef struct key_name {
    const char *name;
    int value;
} key_name_t;

typedef struct cfg_key cfg_key_t;
struct cfg_key {
    const char *section; /* "circuit": a [circuit NAME] section (the field is in cfg_circuit_t) */
    const char *key;
    key_type_t type;
    uint64_t lo, hi;
    const char *dflt;   /* parsed like a value of the ini before it is read; NULL: zero, or set by finish() */
    size_t off, size;   /* the field: offset in cfg_t (cfg_circuit_t for circuit keys) and size */
    const char *expect; /* what a refused value gets: "KEY = VALUE: EXPECT" */
    const key_name_t *names;
    /* KEY_PARSE: 0, or -EINVAL for a refused value: EXPECT is said, or *ret_why when the parser
     * sets it */
    int (*parse)(const cfg_key_t *k, const char *v, void *base, const char **ret_why);
};

static const key_name_t bool_names[] = {{"yes", 1}, {"true", 1}, {"on", 1},  {"1", 1},
                                        {"no", 0},  {"false", 0}, {"off", 0}, {"0", 0}, {NULL, 0}};
static const key_name_t backend_names[] = {{"auto", CFG_BACKEND_AUTO},
                                           {"cpu", CFG_BACKEND_CPU},
                                           {"cuda", CFG_BACKEND_CUDA},
                                           {"replay", CFG_BACKEND_REPLAY},
                                           {NULL, 0}};
static const key_name_t compat_names[] = {
    {"token", CFG_COMPAT_TOKEN}, {"yes", CFG_COMPAT_OPEN}, {"true", CFG_COMPAT_OPEN}, {"on", CFG_COMPAT_OPEN},
    {"1", CFG_COMPAT_OPEN},      {"no", CFG_COMPAT_OFF},   {"false", CFG_COMPAT_OFF}, {"off", CFG_COMPAT_OFF},
    {"0", CFG_COMPAT_OFF},       {NULL, 0}};

/* slab_size = auto | SIZE (a multiple of 2M) */
static int parse_slab_size(const cfg_key_t *k, const char *v, void *base, const char **ret_why) {
    (void)k;
    cfg_t *c = base;
    uint64_t sz;
    if (!strcasecmp(v, "auto")) return c->slab_size_auto = true, c->slab_size = 0, 0;
    if (cfg_parse_size(v, &sz) || sz == 0) return -EINVAL;
    if (sz % CFG_SLAB_ALIGN) return *ret_why = "must be a multiple of 2M (slabs are 2 MiB aligned)", -EINVAL;
    c->slab_size_auto = false;
    c->slab_size = sz;
    return 0;
}

/* trim = always | never | SIZE (trim when that much heap is free) */
static int parse_trim(const cfg_key_t *k, const char *v, void *base, const char **ret_why) {
    (void)k, (void)ret_why;
    cfg_t *c = base;
    if (!strcasecmp(v, "always")) return c->trim = CFG_TRIM_ALWAYS, 0;
    if (!strcasecmp(v, "never")) return c->trim = CFG_TRIM_NEVER, 0;
    if (cfg_parse_size(v, &c->trim_above)) return -EINVAL;
    c->trim = CFG_TRIM_ABOVE;
    return 0;
}

/* witness_memory = none | SIZE of at least 1M */
static int parse_witness_memory(const cfg_key_t *k, const char *v, void *base, const char **ret_why) {
    (void)ret_why;
    uint64_t *m = (uint64_t *)((char *)base + k->off);
    if (!strcasecmp(v, "none")) return *m = 0, 0;
    return cfg_parse_size(v, m) || *m < (1u << 20) ? -EINVAL : 0;
}

/* The priority of a circuit's jobs (cfg_parse_priority's names) */
static int parse_priority(const cfg_key_t *k, const char *v, void *base, const char **ret_why) {
    (void)ret_why;
    int p = cfg_parse_priority(v);
    if (p < 0) return p;
    *(cfg_priority_t *)((char *)base + k->off) = (cfg_priority_t)p;
    return 0;
}

/* hosts = NAME, ...: DNS names, separated by commas or spaces, kept as one lowercase list joined by
 * ',' (the fields hold CFG_HOSTS_LEN characters and a NUL) */
#define CFG_HOSTS_LEN 255
_Static_assert(sizeof(((cfg_t *)0)->exporter_hosts) == CFG_HOSTS_LEN + 1 &&
                   sizeof(((cfg_t *)0)->api_hosts) == CFG_HOSTS_LEN + 1,
               "hosts fields");
static int parse_hosts(const cfg_key_t *k, const char *v, void *base, const char **ret_why) {
    static const char *too_long = "the list is longer than " STR(CFG_HOSTS_LEN) " characters";
    char *dst = (char *)base + k->off, out[CFG_HOSTS_LEN + 1];
    size_t n = 0, word = 0;
    for (const char *q = v;; q++) {
        bool sep = !*q || *q == ',' || *q == ' ' || *q == '\t';
        if (sep) {
            if (word) {
                if (n + 1 >= sizeof out) return *ret_why = too_long, -EINVAL;
                out[n++] = ',';
            }
            word = 0;
            if (!*q) break;
            continue;
        }
        char ch = (char)tolower((unsigned char)*q);
        if (!isalnum((unsigned char)ch) && ch != '-' && ch != '.') return -EINVAL;
        if (n + 1 >= sizeof out) return *ret_why = too_long, -EINVAL;
        out[n++] = ch;
        word++;
    }
    if (n && out[n - 1] == ',') n--;
    out[n] = 0;
    memcpy(dst, out, n + 1);
    return 0;
}

/* listen = ADDRESS:PORT: an IPv4 address or [IPv6]; the port is the uint16_t field after the host's */
static int parse_listen(const cfg_key_t *k, const char *v, void *base, const char **ret_why) {
    (void)ret_why;
    char *dst = (char *)base + k->off;
    uint16_t *ret_port = (uint16_t *)(dst + k->size);
    const char *colon = strrchr(v, ':');
    char host[64];
    unsigned char addr[16];
    uint32_t port;
    size_t hl = colon ? (size_t)(colon - v) : 0;
    bool v6 = hl > 1 && v[0] == '[' && v[hl - 1] == ']'; /* [IPv6]:PORT */
    if (v6)
        snprintf(host, sizeof host, "%.*s", (int)(hl - 2 < sizeof host - 1 ? hl - 2 : sizeof host - 1), v + 1);
    else
        snprintf(host, sizeof host, "%.*s", (int)(hl < sizeof host - 1 ? hl : sizeof host - 1), v);
    if (!colon || hl >= sizeof host || hl >= k->size || parse_u32(colon + 1, 1, 65535, &port) ||
        inet_pton(v6 ? AF_INET6 : AF_INET, host, addr) != 1)
        return -EINVAL;
    snprintf(dst, k->size, "%s", host);
    *ret_port = (uint16_t)port;
    return 0;
}

#define F(field) offsetof(cfg_t, field), sizeof(((cfg_t *)0)->field)
#define CF(field) offsetof(cfg_circuit_t, field), sizeof(((cfg_circuit_t *)0)->field)
/* listen's host field, followed by its port: the size the host may take */
#define LISTEN(host, port) offsetof(cfg_t, host), offsetof(cfg_t, port) - offsetof(cfg_t, host)
_Static_assert(offsetof(cfg_t, exporter_port) == offsetof(cfg_t, exporter_host) + sizeof(((cfg_t *)0)->exporter_host),
               "listen's port follows its host");
_Static_assert(offsetof(cfg_t, api_port) == offsetof(cfg_t, api_host) + sizeof(((cfg_t *)0)->api_host),
               "listen's port follows its host");

/* Every key of the ini (docs/config.md "Keys" documents each row; tests/cli/config_keys.sh holds
 * the two against each other). Defaults that depend on other keys (spool, segment, cache,
 * replay_cache) are finish()'s. */
static const cfg_key_t keys[] = {
    {"pipeline", "name", KEY_NAME, 0, 0, "main", F(name), "use letters, digits, '_', '-', '.'", NULL, NULL},
    {"pipeline", "spool", KEY_ABSPATH, 0, 0, NULL, F(spool), "must be an absolute path", NULL, NULL},
    {"pipeline", "cache", KEY_ABSPATH, 0, 0, NULL, F(cache), "must be an absolute path", NULL, NULL},
    {"pipeline", "segment", KEY_ABSPATH, 0, 0, NULL, F(segment),
     "must be an absolute path (e.g. /dev/shm/zkpipe-main)", NULL, NULL},
    {"pipeline", "slabs", KEY_U32, 1, 4096, "8", F(slabs), "expected a count from 1 to 4096", NULL, NULL},
    {"pipeline", "slab_size", KEY_PARSE, 0, 0, "auto", F(slab_size), "expected auto or a size such as 64M or 2G",
     NULL, parse_slab_size},
    {"pipeline", "hugepages", KEY_BOOL, 0, 0, "no", F(hugepages), "expected yes or no", bool_names, NULL},
    {"pipeline", "reserve_critical", KEY_U32, 0, 4096, "0", F(reserve_critical), "expected a slab count", NULL, NULL},
    {"pipeline", "jobs", KEY_U32, 1, 65536, "64", F(jobs), "expected a count from 1 to 65536", NULL, NULL},
    {"pipeline", "events", KEY_U32, 16, 1u << 24, "65536", F(events), "expected a count from 16 to 16777216", NULL,
     NULL},
    {"pipeline", "min_free", KEY_SIZE, 0, 0, "64M", F(min_free), "expected a size (e.g. 64M, 1G, or 0)", NULL, NULL},
    {"synth", "instances", KEY_U32, 1, 1024, "2", F(synth_instances), "expected 1 to 1024", NULL, NULL},
    {"synth", "threads", KEY_U32, 0, 4096, "1", F(synth_threads), "expected 0 (all) to 4096", NULL, NULL},
    {"synth", "trim", KEY_PARSE, 0, 0, "always", F(trim),
     "expected always, never or a size (trim when that much heap is free)", NULL, parse_trim},
    {"gpu", "devices", KEY_U32, 1, 64, "1", F(gpu_devices), "expected 1 to 64", NULL, NULL},
    {"gpu", "backend", KEY_ENUM, 0, 0, "auto", F(backend), "expected auto, cuda, cpu or replay", backend_names, NULL},
    {"gpu", "inflight", KEY_U32, 0, 4, "0", F(gpu_inflight), "expected 0 (the backend's choice) to 4", NULL, NULL},
    {"gpu", "threads", KEY_U32, 0, 4096, "0", F(gpu_threads), "expected 0 (all) to 4096", NULL, NULL},
    {"gpu", "precompute", KEY_SIZE, 0, 0, "0", F(gpu_precompute), "expected a size (0 = none, 512M, 2G)", NULL, NULL},
    {"gpu", "device_memory", KEY_SIZE, 0, 0, "0", F(gpu_device_memory),
     "expected a size (0 = the device's free memory, 1G, 20G)", NULL, NULL},
    {"gpu", "replay_model", KEY_STR, 0, 0, NULL, F(replay_model), NULL, NULL, NULL},
    {"gpu", "replay_cache", KEY_ABSPATH, 0, 0, NULL, F(replay_cache), "expected an absolute path", NULL, NULL},
    {"finalizer", "verify", KEY_BOOL, 0, 0, "yes", F(verify), "expected yes or no", bool_names, NULL},
    {"finalizer", "instances", KEY_U32, 1, 64, "1", F(finalizer_instances), "expected 1 to 64", NULL, NULL},
    {"exporter", "listen", KEY_PARSE, 0, 0, "127.0.0.1:9821", LISTEN(exporter_host, exporter_port),
     "expected ADDRESS:PORT (an IPv4 address or [IPv6], port 1 to 65535)", NULL, parse_listen},
    {"exporter", "hosts", KEY_PARSE, 0, 0, NULL, F(exporter_hosts),
     "expected host names (letters, digits, '-' and '.') separated by commas", NULL, parse_hosts},
    {"api", "listen", KEY_PARSE, 0, 0, "127.0.0.1:9080", LISTEN(api_host, api_port),
     "expected ADDRESS:PORT (an IPv4 address or [IPv6], port 1 to 65535)", NULL, parse_listen},
    {"api", "hosts", KEY_PARSE, 0, 0, NULL, F(api_hosts),
     "expected host names (letters, digits, '-' and '.') separated by commas", NULL, parse_hosts},
    {"api", "tokens", KEY_STR, 0, 0, "/etc/zkpipe/api-tokens", F(api_tokens), NULL, NULL, NULL},
    {"api", "max_body", KEY_SIZE, 1024, 4ull << 30, "64M", F(api_max_body),
     "expected a size from 1K to 4G, such as 64M", NULL, NULL},
    {"api", "max_partitions", KEY_U32, 1, CFG_MAX_PARTITIONS, "16", F(api_max_partitions),
     "expected 1 to " STR(CFG_MAX_PARTITIONS), NULL, NULL},
    {"api", "max_wait", KEY_U32, 0, 3600, "60", F(api_max_wait), "expected seconds from 0 to 3600", NULL, NULL},
    {"api", "max_connections", KEY_U32, 16, 65536, "1024", F(api_max_connections), "expected 16 to 65536", NULL,
     NULL},
    {"api", "rapidsnark_compat", KEY_ENUM, 0, 0, "no", F(api_compat), "expected no, yes (loopback only) or token",
     compat_names, NULL},
    {"source postgres", "dsn", KEY_STR, 0, 0, NULL, F(source_dsn), NULL, NULL, NULL},
    {"source postgres", "box", KEY_NAME, 0, 0, NULL, F(box), "a box name uses letters, digits, '_', '-', '.'", NULL,
     NULL},
    {"source postgres", "lease", KEY_U32, 2, 86400, "30", F(lease_s), "expected seconds from 2 to 86400", NULL, NULL},
    {"source postgres", "batch", KEY_U32, 1, 1024, "4", F(batch), "expected 1 to 1024 jobs", NULL, NULL},
    {"source postgres", "max_attempts", KEY_U32, 0, 1000, "3", F(max_attempts),
     "expected 0 (no cap) to 1000 claims", NULL, NULL},
    {"source postgres", "poll_ms", KEY_U32, 10, 600000, "2000", F(poll_ms), "expected 10 to 600000", NULL, NULL},
    {"circuit", "zkey", KEY_STR, 0, 0, NULL, CF(zkey), NULL, NULL, NULL},
    {"circuit", "r1cs", KEY_STR, 0, 0, NULL, CF(r1cs), NULL, NULL, NULL},
    {"circuit", "preload", KEY_BOOL, 0, 0, "yes", CF(preload), "expected yes or no", bool_names, NULL},
    {"circuit", "wasm", KEY_STR, 0, 0, NULL, CF(wasm), NULL, NULL, NULL},
    {"circuit", "witness_cmd", KEY_STR, 0, 0, NULL, CF(witness_cmd), NULL, NULL, NULL},
    /* 600: WITGEN_TIMEOUT_DEFAULT_S (witgen/witgen.h) */
    {"circuit", "witness_timeout", KEY_U32, 0, 86400, "600", CF(witness_timeout),
     "expected seconds from 0 (none) to 86400", NULL, NULL},
    {"circuit", "witness_memory", KEY_PARSE, 0, 0, "none", CF(witness_memory),
     "expected none or a size of at least 1M, such as 512M or 4G", NULL, parse_witness_memory},
    {"circuit", "priority", KEY_PARSE, 0, 0, "normal", CF(priority), "expected CRITICAL, HIGH, NORMAL or LOW", NULL,
     parse_priority},
};
#define N_KEYS (sizeof keys / sizeof keys[0])
_Static_assert(N_KEYS <= sizeof(((struct parse_state *)0)->key_line) / sizeof(int), "parse_state.key_line holds every key");

/* Keys that were settings once and are refused by name, with what to do instead. */
static const struct {
    const char *section, *key, *why;
} removed_keys[] = {
    {"finalizer", "threads", "threads in [finalizer] is not a setting (finalizerd verifies each proof on one thread): remove it"},
};

static const cfg_key_t *find_key(const char *section, const char *key) {
    for (size_t i = 0; i < N_KEYS; i++)
        if (!strcmp(keys[i].section, section) && !strcmp(keys[i].key, key)) return &keys[i];
    return NULL;
}

/* Stores v into the field of k in base (cfg_t or cfg_circuit_t): 0, -EINVAL (v is refused: EXPECT,
 * or *ret_why when a parser sets it, says why), -ENAMETOOLONG (longer than the field). */
static int key_set(const cfg_key_t *k, const char *v, void *base, const char **ret_why) {
    void *f = (char *)base + k->off;
    switch (k->type) {
    case KEY_ABSPATH:
        if (v[0] != '/') return -EINVAL;
        /* fall through */
    case KEY_STR:
        if (strlen(v) >= k->size) return -ENAMETOOLONG;
        strcpy(f, v);
        return 0;
    case KEY_NAME:
        if (!cfg_valid_name(v)) return -EINVAL;
        strcpy(f, v); /* shorter than CFG_NAME_MAX */
        return 0;
    case KEY_U32:
        return parse_u32(v, (uint32_t)k->lo, (uint32_t)k->hi, f) ? -EINVAL : 0;
    case KEY_SIZE: {
        uint64_t sz;
        if (cfg_parse_size(v, &sz) || sz < k->lo || (k->hi && sz > k->hi)) return -EINVAL;
        *(uint64_t *)f = sz;
        return 0;
    }
    case KEY_BOOL:
    case KEY_ENUM:
        for (const key_name_t *n = k->names; n->name; n++) {
            if (strcasecmp(v, n->name)) continue;
            if (k->type == KEY_BOOL)
                *(bool *)f = n->value;
            else
                *(int *)f = n->value;
            return 0;
        }
        return -EINVAL;
    case KEY_PARSE:
        return k->parse(k, v, base, ret_why);
    }
    return -EINVAL;
}

/* The defaults of the keys of one section kind (circuit or not) into base. */
static void key_defaults(void *base, bool circuit) {
    for (size_t i = 0; i < N_KEYS; i++) {
        if (!keys[i].dflt || circuit != !strcmp(keys[i].section, "circuit")) continue;
        const char *why = NULL;
        if (key_set(&keys[i], keys[i].dflt, base, &why) < 0) abort(); /* the table refuses its own default */
    }
}

static int on_key(struct parse_state *st, const char *section, const char *k, const char *v) {
    bool circuit = st->cur_circuit >= 0;
    cfg_circuit_t *ci = circuit ? &st->c->circuits[st->cur_circuit] : NULL;
    const cfg_key_t *key = find_key(circuit ? "circuit" : section, k);
    if (!key) {
        for (size_t i = 0; i < sizeof removed_keys / sizeof removed_keys[0]; i++)
            if (!strcmp(removed_keys[i].section, section) && !strcmp(removed_keys[i].key, k))
                return perr(st, "%s", removed_keys[i].why), 0;
        if (circuit) return perr(st, "unknown key '%s' in [circuit %s]", k, ci->name), 0;
        return perr(st, "unknown key '%s' in [%s]", k, section), 0;
    }
    const char *why = NULL;
    int r = key_set(key, v, circuit ? (void *)ci : (void *)st->c, &why);
    if (r == -ENAMETOOLONG) return perr(st, "%s is too long (at most %zu bytes)", k, key->size - 1), 0;
    if (r < 0) return perr(st, "%s = %s: %s", k, v, why ? why : key->expect), 0;
    if (!circuit) st->key_line[key - keys] = st->line;
    return 1;
}

static int begin_section(struct parse_state *st, const char *section) {
    st->cur_circuit = -1;
    for (size_t i = 0; i < N_KEYS; i++)
        if (strcmp(keys[i].section, "circuit") && !strcmp(keys[i].section, section)) return 1;
    if (!strncmp(section, "circuit", 7) && isspace((unsigned char)section[7])) {
        const char *n = section + 8;
        while (isspace((unsigned char)*n)) n++;
        char name[CFG_NAME_MAX * 2];
        snprintf(name, sizeof name, "%s", n);
        size_t l = strlen(name);
        if (l >= 2 && name[0] == '"' && name[l - 1] == '"') {
            memmove(name, name + 1, l - 2);
            name[l - 2] = 0;
        }
        if (!cfg_valid_name(name))
            return perr(st, "[circuit %s]: a circuit name uses letters, digits, '_', '-', '.'", name), 0;
        if (cfg_circuit(st->c, name)) return perr(st, "[circuit %s] is defined twice", name), 0;
        if (st->c->n_circuits >= CFG_MAX_CIRCUITS)
            return perr(st, "too many circuits (at most %d)", CFG_MAX_CIRCUITS), 0;
        cfg_circuit_t *ci = &st->c->circuits[st->c->n_circuits];
        memset(ci, 0, sizeof *ci);
        strcpy(ci->name, name);
        key_defaults(ci, true);
        ci->line = st->line;
        st->cur_circuit = st->c->n_circuits++;
        return 1;
    }
    /* the sections the key table has, in its order, then [circuit NAME] */
    char known[256] = "";
    size_t len = 0;
    for (size_t i = 0; i < N_KEYS; i++) {
        if (!strcmp(keys[i].section, "circuit")) continue;
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++) seen = !strcmp(keys[k].section, keys[i].section);
        if (!seen) len += (size_t)snprintf(known + len, sizeof known - len, "%s, ", keys[i].section);
        if (len >= sizeof known) len = sizeof known - 1;
    }
    return perr(st, "unknown section [%s] (expected %scircuit NAME)", section, known), 0;
}

static int handler(void *user, const char *section, const char *name, const char *value) {
    struct parse_state *st = user;
    if (st->failed) return 1;
    if (!name) return 1; /* section headers are seen by our line reader (see note_section) */
    if (!*section) return perr(st, "key '%s' outside of any section", name), 0;
    if (!value) return perr(st, "key '%s' has no value", name), 0;
    return on_key(st, section, name, value);
}

/* Section headers are handled here, as the line is read: inih (as packaged) reports sections only
 * with their keys, which would hide empty and repeated sections. */
static void note_section(struct parse_state *st, const char *line) {
    while (isspace((unsigned char)*line)) line++;
    if (*line != '[' || st->failed) return;
    const char *end = strchr(line, ']');
    if (!end) return; /* inih reports the syntax error */
    char name[CFG_NAME_MAX * 2];
    snprintf(name, sizeof name, "%.*s", (int)(end - line - 1), line + 1);
    /* inih strips whitespace around the name */
    char *p = name;
    while (isspace((unsigned char)*p)) p++;
    size_t l = strlen(p);
    while (l && isspace((unsigned char)p[l - 1])) p[--l] = 0;
    (void)begin_section(st, p);
}

/* The longest line inih reads is its ini_max_line less 3 ('\r', '\n', NUL): INI_MAX_LINE (200) as
 * compiled, raised at run time where the library lets us (Debian's libinih exports ini_max_line), so
 * that a long path fits. A longer line is an error naming the file, the line and the limit, never
 * a line cut in two. */
#define CFG_INI_LINE_MAX 4096
#ifdef CFG_INIH_RUNTIME_MAX_LINE
static void raise_line_limit(void) {
    if (ini_max_line < CFG_INI_LINE_MAX) ini_max_line = CFG_INI_LINE_MAX;
}
#else
static void raise_line_limit(void) {}
#endif

static void line_too_long(struct parse_state *st, int size) {
    perr(st, "line is longer than %d characters (the longest line the ini parser takes)", size - 3);
}

/* inih's stream reader over the ini's text, counting lines for error messages. */
static char *read_string_line(char *buf, int size, void *user) {
    struct parse_state *st = user;
    if (!*st->text || size < 2) return NULL;
    const char *nl = strchr(st->text, '\n');
    size_t n = nl ? (size_t)(nl - st->text + 1) : strlen(st->text);
    if (n > (size_t)size - 1) {
        st->line++;
        line_too_long(st, size);
        return NULL;
    }
    memcpy(buf, st->text, n);
    buf[n] = 0;
    st->text += n;
    st->line++;
    note_section(st, buf);
    return buf;
}

static void set_defaults(cfg_t *c) {
    memset(c, 0, sizeof *c);
    key_defaults(c, false);
}

/* The line key was set on, 0 when it was not. */
static int key_line(const struct parse_state *st, const char *section, const char *key) {
    const cfg_key_t *k = find_key(section, key);
    return k ? st->key_line[k - keys] : 0;
}

/* Checks that need the whole file. Relative circuit paths are taken relative to the ini's folder. */
static int finish(struct parse_state *st) {
    cfg_t *c = st->c;
    if (!key_line(st, "pipeline", "spool")) snprintf(c->spool, sizeof c->spool, "/var/spool/zkpipe/%s", c->name);
    if (!key_line(st, "pipeline", "segment")) snprintf(c->segment, sizeof c->segment, "/dev/shm/zkpipe-%s", c->name);
    if (!key_line(st, "pipeline", "cache")) snprintf(c->cache, sizeof c->cache, "/var/cache/zkpipe/%s", c->name);
    if (c->api_compat == CFG_COMPAT_OPEN && !cfg_loopback(c->api_host)) {
        ferr(st->err, st->errlen,
             "%s: [api] rapidsnark_compat = yes serves proofs without a token: it needs a loopback listen (not %s); "
             "use rapidsnark_compat = token",
             st->name, c->api_host);
        return -EINVAL;
    }
    if (!c->replay_cache[0] &&
        (size_t)snprintf(c->replay_cache, sizeof c->replay_cache, "%s/replay", c->cache) >= sizeof c->replay_cache) {
        ferr(st->err, st->errlen, "%s: cache is too long for the replay cache below it", st->name);
        return -ENAMETOOLONG;
    }
    if (c->backend == CFG_BACKEND_REPLAY && !c->replay_model[0]) {
        ferr(st->err, st->errlen, "%s:%d: backend = replay needs [gpu] replay_model = FILE (the device model)",
             st->name, key_line(st, "gpu", "backend"));
        return -EINVAL;
    }
    if (c->reserve_critical >= c->slabs) {
        ferr(st->err, st->errlen, "%s: reserve_critical = %u leaves no slab for other work (slabs = %u)", st->name,
             c->reserve_critical, c->slabs);
        return -EINVAL;
    }
    char dir[CFG_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", st->name);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    else
        strcpy(dir, ".");
    if (c->replay_model[0] && c->replay_model[0] != '/') {
        char tmp[CFG_PATH_MAX];
        if ((size_t)snprintf(tmp, sizeof tmp, "%s/%s", dir, c->replay_model) >= sizeof tmp) {
            ferr(st->err, st->errlen, "%s: replay_model: path too long", st->name);
            return -ENAMETOOLONG;
        }
        strcpy(c->replay_model, tmp);
    }
    for (uint32_t i = 0; i < c->n_circuits; i++) {
        cfg_circuit_t *ci = &c->circuits[i];
        if (!ci->zkey[0]) {
            ferr(st->err, st->errlen, "%s:%d: [circuit %s] has no zkey", st->name, ci->line, ci->name);
            return -EINVAL;
        }
        if (ci->wasm[0] && ci->witness_cmd[0]) {
            ferr(st->err, st->errlen, "%s:%d: [circuit %s] has both wasm and witness_cmd: choose one generator",
                 st->name, ci->line, ci->name);
            return -EINVAL;
        }
        char *paths[3] = {ci->zkey, ci->r1cs, ci->wasm};
        for (int k = 0; k < 3; k++) {
            if (!paths[k][0] || paths[k][0] == '/') continue;
            char tmp[CFG_PATH_MAX];
            if ((size_t)snprintf(tmp, sizeof tmp, "%s/%s", dir, paths[k]) >= sizeof tmp) {
                ferr(st->err, st->errlen, "%s:%d: [circuit %s]: path too long", st->name, ci->line, ci->name);
                return -ENAMETOOLONG;
            }
            strcpy(paths[k], tmp);
        }
        /* a witness_cmd program named by a relative path with a '/' is relative to the ini too */
        size_t prog_len = strcspn(ci->witness_cmd, " \t");
        if (ci->witness_cmd[0] && ci->witness_cmd[0] != '/' && memchr(ci->witness_cmd, '/', prog_len)) {
            char tmp[CFG_PATH_MAX];
            if ((size_t)snprintf(tmp, sizeof tmp, "%s/%s", dir, ci->witness_cmd) >= sizeof tmp) {
                ferr(st->err, st->errlen, "%s:%d: [circuit %s]: witness_cmd too long", st->name, ci->line, ci->name);
                return -ENAMETOOLONG;
            }
            strcpy(ci->witness_cmd, tmp);
        }
    }
    return 0;
}

/* An ini larger than this is not a configuration. */
#define CFG_FILE_MAX ((size_t)16 << 20)

/* The file through the ground floor's reader (a regular file only: a FIFO or a device named as the
 * configuration is refused, not waited on), then parsed as text. */
int cfg_load(cfg_t *c, const char *path, char *err, size_t errlen) {
    char *text = NULL, why[CFG_PATH_MAX + 160];
    size_t len = 0;
    int r = file_read(AT_FDCWD, path, 0, CFG_FILE_MAX, 0, &text, &len, why, sizeof why);
    if (r >= 0 && memchr(text, 0, len)) snprintf(why, sizeof why, "%s: has a NUL byte: not an ini file", path), r = -EINVAL;
    if (r < 0) {
        set_defaults(c);
        snprintf(c->path, sizeof c->path, "%s", path);
        ferr(err, errlen, "%s", why);
        free(text);
        return r;
    }
    r = cfg_load_string(c, path, text, err, errlen);
    free(text);
    return r;
}

int cfg_load_string(cfg_t *c, const char *name, const char *text, char *err, size_t errlen) {
    set_defaults(c);
    snprintf(c->path, sizeof c->path, "%s", name);
    struct parse_state st = {.c = c, .name = name, .err = err, .errlen = errlen, .cur_circuit = -1, .text = text};
    raise_line_limit();
    int r = ini_parse_stream(read_string_line, &st, handler, &st);
    if (st.failed) return -EINVAL;
    if (r != 0) {
        ferr(err, errlen, "%s:%d: syntax error (expected [section] or key = value)", name, r > 0 ? r : st.line);
        return -EINVAL;
    }
    return finish(&st);
}

bool cfg_loopback(const char *addr) {
    unsigned char a[16];
    if (inet_pton(AF_INET, addr, a) == 1) return a[0] == 127;
    static const unsigned char one[16] = {[15] = 1};
    return inet_pton(AF_INET6, addr, a) == 1 && !memcmp(a, one, 16);
}

const cfg_circuit_t *cfg_circuit(const cfg_t *c, const char *name) {
    int i = cfg_circuit_index(c, name);
    return i < 0 ? NULL : &c->circuits[i];
}

int cfg_circuit_index(const cfg_t *c, const char *name) {
    for (uint32_t i = 0; i < c->n_circuits; i++)
        if (!strcmp(c->circuits[i].name, name)) return (int)i;
    return -ENOENT;
}
