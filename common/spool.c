/* Spool directory helpers (common/spool.h). */
#include "spool.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config/config.h"

int spool_init(const char *spool, char *err, size_t errlen) {
    static const char *subs[] = {"", "tmp", "incoming", "active", "done", "failed"};
    char p[1200];
    /* mkdir -p of the spool itself */
    snprintf(p, sizeof p, "%s", spool);
    for (char *q = p + 1; *q; q++) {
        if (*q != '/') continue;
        *q = 0;
        (void)mkdir(p, 0775);
        *q = '/';
    }
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", spool, subs[i]);
        if (mkdir(p, 0775) < 0 && errno != EEXIST) {
            int e = errno;
            snprintf(err, errlen, "%s: cannot create: %s", p, strerror(e));
            return -e;
        }
    }
    return 0;
}

void spool_new_id(char id[SPOOL_ID_MAX]) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    uint32_t rnd = 0;
    if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd) rnd = (uint32_t)getpid() ^ (uint32_t)ts.tv_nsec;
    char t[32];
    strftime(t, sizeof t, "%Y%m%dT%H%M%S", &tm);
    snprintf(id, SPOOL_ID_MAX, "%.15s.%06d-%06x", t, (int)(ts.tv_nsec / 1000 % 1000000), rnd & 0xffffff);
}

bool spool_valid_id(const char *id) {
    size_t n = strlen(id);
    if (!n || n >= SPOOL_ID_MAX - 16 || id[0] == '.') return false; /* fits the event record's job field */
    for (const char *p = id; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '.' && *p != '-' && *p != '_') return false;
    return true;
}

int spool_write_job(const char *dir, const spool_job_t *j) {
    char path[1200], buf[512];
    snprintf(path, sizeof path, "%s/job.ini", dir);
    int n =
        snprintf(buf, sizeof buf, "[job]\nid = %s\ncircuit = %s\npriority = %s\npartitions = %u\nsubmitted_ns = %llu\n",
                 j->id, j->circuit, cfg_priority_name(j->prio), j->n_parts, (unsigned long long)j->submit_ns);
    if (j->inputs) n += snprintf(buf + n, sizeof buf - (size_t)n, "inputs = yes\n");
    return spool_write_atomic(path, buf, (size_t)n);
}

struct job_parse {
    spool_job_t *j;
    char *err;
    size_t errlen;
    int line;
    bool failed;
    unsigned seen;
    FILE *f;
};

static char *job_reader(char *buf, int size, void *user) {
    struct job_parse *st = user;
    char *r = fgets(buf, size, st->f);
    if (r) st->line++;
    return r;
}

static int job_handler(void *user, const char *section, const char *k, const char *v) {
    struct job_parse *st = user;
    if (st->failed || !k) return 1;
#define BAD(fmt, ...) (snprintf(st->err, st->errlen, "job.ini:%d: " fmt, st->line, __VA_ARGS__), st->failed = true, 0)
    if (strcmp(section, "job")) return BAD("unknown section [%s]", section);
    if (!strcmp(k, "id")) {
        if (!spool_valid_id(v)) return BAD("id = %s: not a valid job id", v);
        snprintf(st->j->id, sizeof st->j->id, "%s", v);
        st->seen |= 1;
    } else if (!strcmp(k, "circuit")) {
        if (!*v || strlen(v) >= sizeof st->j->circuit) return BAD("circuit = %s: bad circuit name", v);
        snprintf(st->j->circuit, sizeof st->j->circuit, "%s", v);
        st->seen |= 2;
    } else if (!strcmp(k, "priority")) {
        int p = cfg_parse_priority(v);
        if (p < 0) return BAD("priority = %s: expected CRITICAL, HIGH, NORMAL or LOW", v);
        st->j->prio = p;
        st->seen |= 4;
    } else if (!strcmp(k, "partitions")) {
        char *end;
        unsigned long n = strtoul(v, &end, 10);
        if (*end || !*v || n == 0 || n > 256) return BAD("partitions = %s: expected 1 to 256", v);
        st->j->n_parts = (uint32_t)n;
        st->seen |= 8;
    } else if (!strcmp(k, "submitted_ns")) {
        char *end;
        st->j->submit_ns = strtoull(v, &end, 10);
        if (*end || !*v) return BAD("submitted_ns = %s: expected a number", v);
        st->seen |= 16;
    } else if (!strcmp(k, "inputs")) {
        if (strcmp(v, "yes") && strcmp(v, "no")) return BAD("inputs = %s: expected yes or no", v);
        st->j->inputs = !strcmp(v, "yes");
    } else {
        return BAD("unknown key '%s'", k);
    }
#undef BAD
    return 1;
}

int spool_read_job(const char *dir, spool_job_t *j, char *err, size_t errlen) {
    char path[1200];
    snprintf(path, sizeof path, "%s/job.ini", dir);
    memset(j, 0, sizeof *j);
    j->prio = CFG_PRIO_NORMAL;
    struct job_parse st = {.j = j, .err = err, .errlen = errlen};
    st.f = fopen(path, "re");
    if (!st.f) {
        int e = errno;
        snprintf(err, errlen, "job.ini: cannot open: %s", strerror(e));
        return -e;
    }
    int r = ini_parse_stream(job_reader, &st, job_handler, &st);
    fclose(st.f);
    if (st.failed) return -EINVAL;
    if (r) {
        snprintf(err, errlen, "job.ini:%d: syntax error", r > 0 ? r : st.line);
        return -EINVAL;
    }
    if ((st.seen & 11) != 11) {
        snprintf(err, errlen, "job.ini: missing %s", !(st.seen & 1) ? "id" : !(st.seen & 2) ? "circuit" : "partitions");
        return -EINVAL;
    }
    const char *part_fmt = j->inputs ? "input-%u.json" : "witness-%u.wtns";
    for (uint32_t k = 0; k < j->n_parts; k++) {
        char part[40];
        snprintf(part, sizeof part, part_fmt, k);
        snprintf(path, sizeof path, "%s/%s", dir, part);
        if (!spool_exists(path)) {
            snprintf(err, errlen, "job.ini: partitions = %u but %s is missing", j->n_parts, part);
            return -EINVAL;
        }
    }
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int spool_list(const char *dir, char ***ret_names, size_t *ret_n) {
    DIR *d = opendir(dir);
    if (!d) return -errno;
    char **v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            char **nv = realloc(v, cap * sizeof *v);
            if (!nv) break;
            v = nv;
        }
        v[n] = strdup(e->d_name);
        if (v[n]) n++;
    }
    closedir(d);
    if (n) qsort(v, n, sizeof *v, cmp_str);
    *ret_names = v;
    *ret_n = n;
    return 0;
}

void spool_free_list(char **names, size_t n) {
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
}

int spool_fsync_dir(const char *dir) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -errno;
    int r = fsync(fd) < 0 ? -errno : 0;
    close(fd);
    return r;
}

int spool_write_atomic(const char *path, const char *data, size_t len) {
    char tmp[1300];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return -errno;
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0) {
            if (errno == EINTR) continue;
            int e = -errno;
            close(fd);
            unlink(tmp);
            return e;
        }
        off += (size_t)w;
    }
    if (fsync(fd) < 0) {
        int e = -errno;
        close(fd);
        unlink(tmp);
        return e;
    }
    close(fd);
    if (rename(tmp, path) < 0) {
        int e = -errno;
        unlink(tmp);
        return e;
    }
    char dir[1300];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) {
        *slash = 0;
        (void)spool_fsync_dir(dir);
    }
    return 0;
}

bool spool_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

void spool_json_escape(const char *in, char *out, size_t cap) {
    size_t o = 0;
    for (; *in && o + 7 < cap; in++) {
        unsigned char c = (unsigned char)*in;
        if (c == '"' || c == '\\')
            out[o++] = '\\', out[o++] = (char)c;
        else if (c < 0x20)
            o += snprintf(out + o, cap - o, "\\u%04x", c);
        else
            out[o++] = (char)c;
    }
    out[o] = 0;
}

int spool_fail_dir(const char *spool, const char *from_dir, const char *id, const char *status, const char *reason) {
    char esc[1024], eid[128], buf[1400], path[1200], to[1200];
    spool_json_escape(reason, esc, sizeof esc);
    spool_json_escape(id, eid, sizeof eid);
    int n = snprintf(buf, sizeof buf,
                     "{\n \"job\": \"%s\",\n \"status\": \"%s\",\n \"error\": \"%s\",\n \"partitions\": []\n}\n", eid,
                     status, esc);
    snprintf(path, sizeof path, "%s/result.json", from_dir);
    int r = spool_write_atomic(path, buf, (size_t)n);
    if (r < 0) return r;
    snprintf(to, sizeof to, "%s/failed/%s", spool, id);
    if (rename(from_dir, to) < 0) return -errno;
    snprintf(path, sizeof path, "%s/failed", spool);
    (void)spool_fsync_dir(path);
    return 0;
}
