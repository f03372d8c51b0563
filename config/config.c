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

struct parse_state {
    cfg_t *c;
    const char *name;
    int line; /* current line, counted by our reader (inih passes none by default) */
    int err_line;
    char *err;
    size_t errlen;
    bool failed;
    /* stream input */
    FILE *f;
    const char *text;
    /* which keys were seen, for defaults that depend on others */
    bool seen_spool, seen_segment, seen_cache;
    int replay_line; /* the line of backend = replay (0: not set) */
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

static int parse_bool(const char *s, bool *ret) {
    static const char *yes[] = {"yes", "true", "on", "1"}, *no[] = {"no", "false", "off", "0"};
    for (int i = 0; i < 4; i++) {
        if (!strcasecmp(s, yes[i])) return *ret = true, 0;
        if (!strcasecmp(s, no[i])) return *ret = false, 0;
    }
    return -EINVAL;
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

static int copy_str(struct parse_state *st, char *dst, size_t cap, const char *key, const char *v) {
    if (strlen(v) >= cap) {
        perr(st, "%s is too long (at most %zu bytes)", key, cap - 1);
        return 0;
    }
    strcpy(dst, v);
    return 1;
}

static int on_pipeline(struct parse_state *st, const char *k, const char *v) {
    cfg_t *c = st->c;
    if (!strcmp(k, "name")) {
        if (!cfg_valid_name(v)) return perr(st, "name = %s: use letters, digits, '_', '-', '.'", v), 0;
        strcpy(c->name, v);
    } else if (!strcmp(k, "spool")) {
        if (v[0] != '/') return perr(st, "spool = %s: must be an absolute path", v), 0;
        st->seen_spool = true;
        return copy_str(st, c->spool, sizeof c->spool, k, v);
    } else if (!strcmp(k, "cache")) {
        if (v[0] != '/') return perr(st, "cache = %s: must be an absolute path", v), 0;
        st->seen_cache = true;
        return copy_str(st, c->cache, sizeof c->cache, k, v);
    } else if (!strcmp(k, "segment")) {
        if (v[0] != '/') return perr(st, "segment = %s: must be an absolute path (e.g. /dev/shm/zkpipe-main)", v), 0;
        st->seen_segment = true;
        return copy_str(st, c->segment, sizeof c->segment, k, v);
    } else if (!strcmp(k, "slabs")) {
        if (parse_u32(v, 1, 4096, &c->slabs)) return perr(st, "slabs = %s: expected a count from 1 to 4096", v), 0;
    } else if (!strcmp(k, "slab_size")) {
        if (!strcasecmp(v, "auto")) {
            c->slab_size_auto = true;
            c->slab_size = 0;
        } else {
            uint64_t sz;
            if (cfg_parse_size(v, &sz) || sz == 0)
                return perr(st, "slab_size = %s: expected auto or a size such as 64M or 2G", v), 0;
            if (sz % CFG_SLAB_ALIGN)
                return perr(st, "slab_size = %s: must be a multiple of 2M (slabs are 2 MiB aligned)", v), 0;
            c->slab_size_auto = false;
            c->slab_size = sz;
        }
    } else if (!strcmp(k, "hugepages")) {
        if (parse_bool(v, &c->hugepages)) return perr(st, "hugepages = %s: expected yes or no", v), 0;
    } else if (!strcmp(k, "reserve_critical")) {
        if (parse_u32(v, 0, 4096, &c->reserve_critical))
            return perr(st, "reserve_critical = %s: expected a slab count", v), 0;
    } else if (!strcmp(k, "jobs")) {
        if (parse_u32(v, 1, 65536, &c->jobs)) return perr(st, "jobs = %s: expected a count from 1 to 65536", v), 0;
    } else if (!strcmp(k, "events")) {
        if (parse_u32(v, 16, 1u << 24, &c->events))
            return perr(st, "events = %s: expected a count from 16 to 16777216", v), 0;
    } else if (!strcmp(k, "min_free")) {
        if (cfg_parse_size(v, &c->min_free) < 0)
            return perr(st, "min_free = %s: expected a size (e.g. 64M, 1G, or 0)", v), 0;
    } else {
        return perr(st, "unknown key '%s' in [pipeline]", k), 0;
    }
    return 1;
}

static int on_synth(struct parse_state *st, const char *k, const char *v) {
    cfg_t *c = st->c;
    if (!strcmp(k, "instances")) {
        if (parse_u32(v, 1, 1024, &c->synth_instances)) return perr(st, "instances = %s: expected 1 to 1024", v), 0;
    } else if (!strcmp(k, "threads")) {
        if (parse_u32(v, 0, 4096, &c->synth_threads)) return perr(st, "threads = %s: expected 0 (all) to 4096", v), 0;
    } else if (!strcmp(k, "trim")) {
        if (!strcasecmp(v, "always"))
            c->trim = CFG_TRIM_ALWAYS;
        else if (!strcasecmp(v, "never"))
            c->trim = CFG_TRIM_NEVER;
        else if (!cfg_parse_size(v, &c->trim_above))
            c->trim = CFG_TRIM_ABOVE;
        else
            return perr(st, "trim = %s: expected always, never or a size (trim when that much heap is free)", v), 0;
    } else {
        return perr(st, "unknown key '%s' in [synth]", k), 0;
    }
    return 1;
}

static int on_gpu(struct parse_state *st, const char *k, const char *v) {
    cfg_t *c = st->c;
    if (!strcmp(k, "devices")) {
        if (parse_u32(v, 1, 64, &c->gpu_devices)) return perr(st, "devices = %s: expected 1 to 64", v), 0;
    } else if (!strcmp(k, "backend")) {
        if (!strcasecmp(v, "auto"))
            c->backend = CFG_BACKEND_AUTO;
        else if (!strcasecmp(v, "cpu"))
            c->backend = CFG_BACKEND_CPU;
        else if (!strcasecmp(v, "cuda"))
            c->backend = CFG_BACKEND_CUDA;
        else if (!strcasecmp(v, "replay"))
            c->backend = CFG_BACKEND_REPLAY, st->replay_line = st->line;
        else
            return perr(st, "backend = %s: expected auto, cuda, cpu or replay", v), 0;
    } else if (!strcmp(k, "inflight")) {
        if (parse_u32(v, 0, 4, &c->gpu_inflight))
            return perr(st, "inflight = %s: expected 0 (the backend's choice) to 4", v), 0;
    } else if (!strcmp(k, "threads")) {
        if (parse_u32(v, 0, 4096, &c->gpu_threads)) return perr(st, "threads = %s: expected 0 (all) to 4096", v), 0;
    } else if (!strcmp(k, "precompute")) {
        if (cfg_parse_size(v, &c->gpu_precompute) < 0)
            return perr(st, "precompute = %s: expected a size (0 = none, 512M, 2G)", v), 0;
    } else if (!strcmp(k, "device_memory")) {
        if (cfg_parse_size(v, &c->gpu_device_memory) < 0)
            return perr(st, "device_memory = %s: expected a size (0 = the device's free memory, 1G, 20G)", v), 0;
    } else if (!strcmp(k, "replay_model")) {
        if (!copy_str(st, c->replay_model, sizeof c->replay_model, "replay_model", v)) return 0;
    } else if (!strcmp(k, "replay_cache")) {
        if (!copy_str(st, c->replay_cache, sizeof c->replay_cache, "replay_cache", v)) return 0;
        if (v[0] != '/') return perr(st, "replay_cache = %s: expected an absolute path", v), 0;
    } else {
        return perr(st, "unknown key '%s' in [gpu]", k), 0;
    }
    return 1;
}

static int on_finalizer(struct parse_state *st, const char *k, const char *v) {
    cfg_t *c = st->c;
    if (!strcmp(k, "verify")) {
        if (parse_bool(v, &c->verify)) return perr(st, "verify = %s: expected yes or no", v), 0;
    } else if (!strcmp(k, "instances")) {
        if (parse_u32(v, 1, 64, &c->finalizer_instances)) return perr(st, "instances = %s: expected 1 to 64", v), 0;
    } else if (!strcmp(k, "threads")) { /* was documented as reserved and never read */
        return perr(st, "threads in [finalizer] is not a setting (finalizerd verifies each proof on one thread): remove it"), 0;
    } else {
        return perr(st, "unknown key '%s' in [finalizer]", k), 0;
    }
    return 1;
}

/* hosts = NAME, ...: DNS names, separated by commas or spaces, kept as one lowercase list joined by ',' */
static int parse_hosts(struct parse_state *st, const char *v, char *dst, size_t cap) {
    char out[256];
    if (cap > sizeof out) cap = sizeof out;
    size_t n = 0, word = 0;
    for (const char *q = v;; q++) {
        bool sep = !*q || *q == ',' || *q == ' ' || *q == '\t';
        if (sep) {
            if (word) {
                if (n + 1 >= cap) return perr(st, "hosts = %s: the list is longer than %zu characters", v, cap - 1), 0;
                out[n++] = ',';
            }
            word = 0;
            if (!*q) break;
            continue;
        }
        char ch = (char)tolower((unsigned char)*q);
        if (!isalnum((unsigned char)ch) && ch != '-' && ch != '.')
            return perr(st, "hosts = %s: expected host names (letters, digits, '-' and '.') separated by commas", v), 0;
        if (n + 1 >= cap) return perr(st, "hosts = %s: the list is longer than %zu characters", v, cap - 1), 0;
        out[n++] = ch;
        word++;
    }
    if (n && out[n - 1] == ',') n--;
    out[n] = 0;
    memcpy(dst, out, n + 1);
    return 1;
}

/* listen = ADDRESS:PORT: an IPv4 address or [IPv6] (host is cap bytes) */
static int parse_listen(struct parse_state *st, const char *v, char *dst, size_t cap, uint16_t *ret_port) {
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
    if (!colon || hl >= sizeof host || hl >= cap || parse_u32(colon + 1, 1, 65535, &port) ||
        inet_pton(v6 ? AF_INET6 : AF_INET, host, addr) != 1)
        return perr(st, "listen = %s: expected ADDRESS:PORT (an IPv4 address or [IPv6], port 1 to 65535)", v), 0;
    snprintf(dst, cap, "%s", host);
    *ret_port = (uint16_t)port;
    return 1;
}

static int on_exporter(struct parse_state *st, const char *k, const char *v) {
    cfg_t *c = st->c;
    if (!strcmp(k, "hosts")) return parse_hosts(st, v, c->exporter_hosts, sizeof c->exporter_hosts);
    if (!strcmp(k, "listen")) return parse_listen(st, v, c->exporter_host, sizeof c->exporter_host, &c->exporter_port);
    return perr(st, "unknown key '%s' in [exporter]", k), 0;
}

static int on_api(struct parse_state *st, const char *k, const char *v) {
    cfg_t *c = st->c;
    if (!strcmp(k, "listen")) return parse_listen(st, v, c->api_host, sizeof c->api_host, &c->api_port);
    if (!strcmp(k, "hosts")) return parse_hosts(st, v, c->api_hosts, sizeof c->api_hosts);
    if (!strcmp(k, "tokens")) return copy_str(st, c->api_tokens, sizeof c->api_tokens, k, v);
    if (!strcmp(k, "max_body")) {
        if (cfg_parse_size(v, &c->api_max_body) || c->api_max_body < 1024 || c->api_max_body > (4ull << 30))
            return perr(st, "max_body = %s: expected a size from 1K to 4G, such as 64M", v), 0;
    } else if (!strcmp(k, "max_partitions")) {
        if (parse_u32(v, 1, CFG_MAX_PARTITIONS, &c->api_max_partitions))
            return perr(st, "max_partitions = %s: expected 1 to %u", v, CFG_MAX_PARTITIONS), 0;
    } else if (!strcmp(k, "max_wait")) {
        if (parse_u32(v, 0, 3600, &c->api_max_wait)) return perr(st, "max_wait = %s: expected seconds from 0 to 3600", v), 0;
    } else if (!strcmp(k, "max_connections")) {
        if (parse_u32(v, 16, 65536, &c->api_max_connections))
            return perr(st, "max_connections = %s: expected 16 to 65536", v), 0;
    } else if (!strcmp(k, "rapidsnark_compat")) {
        bool b;
        if (!strcasecmp(v, "token"))
            c->api_compat = CFG_COMPAT_TOKEN;
        else if (!parse_bool(v, &b))
            c->api_compat = b ? CFG_COMPAT_OPEN : CFG_COMPAT_OFF;
        else
            return perr(st, "rapidsnark_compat = %s: expected no, yes (loopback only) or token", v), 0;
    } else {
        return perr(st, "unknown key '%s' in [api]", k), 0;
    }
    return 1;
}

static int on_source_postgres(struct parse_state *st, const char *k, const char *v) {
    cfg_t *c = st->c;
    if (!strcmp(k, "dsn")) return copy_str(st, c->source_dsn, sizeof c->source_dsn, k, v);
    if (!strcmp(k, "box")) {
        if (!cfg_valid_name(v)) return perr(st, "box = %s: a box name uses letters, digits, '_', '-', '.'", v), 0;
        return copy_str(st, c->box, sizeof c->box, k, v);
    }
    if (!strcmp(k, "lease")) {
        if (parse_u32(v, 2, 86400, &c->lease_s)) return perr(st, "lease = %s: expected seconds from 2 to 86400", v), 0;
    } else if (!strcmp(k, "batch")) {
        if (parse_u32(v, 1, 1024, &c->batch)) return perr(st, "batch = %s: expected 1 to 1024 jobs", v), 0;
    } else if (!strcmp(k, "max_attempts")) {
        if (parse_u32(v, 0, 1000, &c->max_attempts))
            return perr(st, "max_attempts = %s: expected 0 (no cap) to 1000 claims", v), 0;
    } else if (!strcmp(k, "poll_ms")) {
        if (parse_u32(v, 10, 600000, &c->poll_ms)) return perr(st, "poll_ms = %s: expected 10 to 600000", v), 0;
    } else {
        return perr(st, "unknown key '%s' in [source postgres]", k), 0;
    }
    return 1;
}

static int on_circuit(struct parse_state *st, const char *k, const char *v) {
    cfg_circuit_t *ci = &st->c->circuits[st->cur_circuit];
    if (!strcmp(k, "zkey")) return copy_str(st, ci->zkey, sizeof ci->zkey, k, v);
    if (!strcmp(k, "r1cs")) return copy_str(st, ci->r1cs, sizeof ci->r1cs, k, v);
    if (!strcmp(k, "preload")) {
        if (parse_bool(v, &ci->preload)) return perr(st, "preload = %s: expected yes or no", v), 0;
        return 1;
    }
    if (!strcmp(k, "wasm")) return copy_str(st, ci->wasm, sizeof ci->wasm, k, v);
    if (!strcmp(k, "witness_cmd")) return copy_str(st, ci->witness_cmd, sizeof ci->witness_cmd, k, v);
    if (!strcmp(k, "witness_timeout")) {
        if (parse_u32(v, 0, 86400, &ci->witness_timeout))
            return perr(st, "witness_timeout = %s: expected seconds from 0 (none) to 86400", v), 0;
        return 1;
    }
    if (!strcmp(k, "witness_memory")) {
        if (!strcasecmp(v, "none")) return ci->witness_memory = 0, 1;
        if (cfg_parse_size(v, &ci->witness_memory) || ci->witness_memory < (1u << 20))
            return perr(st, "witness_memory = %s: expected none or a size of at least 1M, such as 512M or 4G", v), 0;
        return 1;
    }
    if (!strcmp(k, "priority")) {
        int p = cfg_parse_priority(v);
        if (p < 0) return perr(st, "priority = %s: expected CRITICAL, HIGH, NORMAL or LOW", v), 0;
        ci->priority = p;
        return 1;
    }
    return perr(st, "unknown key '%s' in [circuit %s]", k, ci->name), 0;
}

static int begin_section(struct parse_state *st, const char *section) {
    st->cur_circuit = -1;
    if (!strcmp(section, "pipeline") || !strcmp(section, "synth") || !strcmp(section, "gpu") ||
        !strcmp(section, "finalizer") || !strcmp(section, "exporter") || !strcmp(section, "api") ||
        !strcmp(section, "source postgres"))
        return 1;
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
        ci->preload = true;
        ci->priority = CFG_PRIO_NORMAL;
        ci->witness_timeout = 600; /* WITGEN_TIMEOUT_DEFAULT_S (witgen/witgen.h) */
        ci->line = st->line;
        st->cur_circuit = st->c->n_circuits++;
        return 1;
    }
    return perr(st,
                "unknown section [%s] (expected pipeline, synth, gpu, finalizer, exporter, api, source postgres or "
                "circuit NAME)",
                section),
           0;
}

static int handler(void *user, const char *section, const char *name, const char *value) {
    struct parse_state *st = user;
    if (st->failed) return 1;
    if (!name) return 1; /* section headers are seen by our line reader (see note_section) */
    if (!*section) return perr(st, "key '%s' outside of any section", name), 0;
    if (!value) return perr(st, "key '%s' has no value", name), 0;
    if (!strcmp(section, "pipeline")) return on_pipeline(st, name, value);
    if (!strcmp(section, "synth")) return on_synth(st, name, value);
    if (!strcmp(section, "gpu")) return on_gpu(st, name, value);
    if (!strcmp(section, "finalizer")) return on_finalizer(st, name, value);
    if (!strcmp(section, "exporter")) return on_exporter(st, name, value);
    if (!strcmp(section, "api")) return on_api(st, name, value);
    if (!strcmp(section, "source postgres")) return on_source_postgres(st, name, value);
    if (st->cur_circuit >= 0) return on_circuit(st, name, value);
    return 0;
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

/* inih stream readers that count lines for error messages. */
static char *read_file_line(char *buf, int size, void *user) {
    struct parse_state *st = user;
    char *r = fgets(buf, size, st->f);
    if (r) {
        st->line++;
        size_t n = strlen(r);
        if (n == (size_t)size - 1 && r[n - 1] != '\n') {
            int ch = getc(st->f);
            if (ch != EOF) {
                line_too_long(st, size);
                return NULL;
            }
        }
        note_section(st, r);
    }
    return r;
}

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
    strcpy(c->name, "main");
    c->slabs = 8;
    c->min_free = 64ull << 20;
    c->slab_size_auto = true;
    c->jobs = 64;
    c->events = 65536;
    c->synth_instances = 2;
    c->synth_threads = 1;
    c->trim = CFG_TRIM_ALWAYS;
    c->gpu_devices = 1;
    c->backend = CFG_BACKEND_AUTO;
    c->gpu_inflight = 0;
    c->gpu_threads = 0;
    c->gpu_precompute = 0;
    c->gpu_device_memory = 0;
    c->verify = true;
    c->finalizer_instances = 1;
    strcpy(c->exporter_host, "127.0.0.1");
    c->exporter_port = 9821;
    strcpy(c->api_host, "127.0.0.1");
    c->api_port = 9080;
    strcpy(c->api_tokens, "/etc/zkpipe/api-tokens");
    c->api_max_body = 64ull << 20;
    c->api_max_partitions = 16;
    c->api_max_wait = 60;
    c->api_max_connections = 1024;
    c->api_compat = CFG_COMPAT_OFF;
    c->lease_s = 30;
    c->batch = 4;
    c->max_attempts = 3;
    c->poll_ms = 2000;
}

/* Checks that need the whole file. Relative circuit paths are taken relative to the ini's folder. */
static int finish(struct parse_state *st) {
    cfg_t *c = st->c;
    if (!st->seen_spool) snprintf(c->spool, sizeof c->spool, "/var/spool/zkpipe/%s", c->name);
    if (!st->seen_segment) snprintf(c->segment, sizeof c->segment, "/dev/shm/zkpipe-%s", c->name);
    if (!st->seen_cache) snprintf(c->cache, sizeof c->cache, "/var/cache/zkpipe/%s", c->name);
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
             st->name, st->replay_line);
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

int cfg_load(cfg_t *c, const char *path, char *err, size_t errlen) {
    set_defaults(c);
    snprintf(c->path, sizeof c->path, "%s", path);
    struct parse_state st = {.c = c, .name = path, .err = err, .errlen = errlen, .cur_circuit = -1};
    raise_line_limit();
    st.f = fopen(path, "re");
    if (!st.f) {
        int e = errno;
        ferr(err, errlen, "%s: cannot open: %s", path, strerror(e));
        return -e;
    }
    int r = ini_parse_stream(read_file_line, &st, handler, &st);
    fclose(st.f);
    if (st.failed) return -EINVAL;
    if (r != 0) {
        ferr(err, errlen, "%s:%d: syntax error (expected [section] or key = value)", path, r > 0 ? r : st.line);
        return -EINVAL;
    }
    return finish(&st);
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
