/* Spool directory helpers (spool/spool.h). */
#include "spool.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <linux/fs.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "base/text.h"
#include "config/config.h"

const char *spool_file_name(char name[SPOOL_FILE_NAME_MAX], spool_file_t f, uint32_t k) {
    static const char *const fmt[] = {"witness-%u.wtns", "input-%u.json", "proof-%u.json", "public-%u.json"};
    snprintf(name, SPOOL_FILE_NAME_MAX, fmt[f], k);
    return name;
}

int spool_read_part(int dirfd, spool_file_t f, uint32_t k, char **ret_text, size_t *ret_len, char *why, size_t whylen) {
    char name[SPOOL_FILE_NAME_MAX];
    return file_read(dirfd, spool_file_name(name, f, k), FILE_NOFOLLOW, SPOOL_PART_JSON_MAX, 0, ret_text, ret_len, why,
                     whylen);
}

int spool_init(const char *spool, char *err, size_t errlen) {
    char p[1200];
    /* mkdir -p of the spool itself */
    snprintf(p, sizeof p, "%s", spool);
    for (char *q = p + 1; *q; q++) {
        if (*q != '/') continue;
        *q = 0;
        (void)mkdir(p, 0775);
        *q = '/';
    }
    for (int i = -1; i < SPOOL_NPLACES; i++) { /* the spool, then each place */
        if (i < 0)
            snprintf(p, sizeof p, "%s", spool);
        else
            spool_path(p, sizeof p, spool, (spool_place_t)i, NULL);
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

bool spool_valid_submitter(const char *name) {
    size_t n = strlen(name);
    if (!n || n >= sizeof ((spool_job_t *)0)->submitter) return false;
    for (const char *p = name; *p; p++)
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
    if (j->submitter[0]) n += snprintf(buf + n, sizeof buf - (size_t)n, "submitter = %s\n", j->submitter);
    return file_write_atomic(path, buf, (size_t)n);
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
    } else if (!strcmp(k, "submitter")) {
        if (!spool_valid_submitter(v)) return BAD("submitter = %s: not a token name", v);
        snprintf(st->j->submitter, sizeof st->j->submitter, "%s", v);
    } else {
        return BAD("unknown key '%s'", k);
    }
#undef BAD
    return 1;
}

int spool_read_job(const char *dir, spool_job_t *j, char *err, size_t errlen) {
    memset(j, 0, sizeof *j);
    j->prio = CFG_PRIO_NORMAL;
    _cleanup_close_ int dfd = spool_open_dir(dir);
    if (dfd < 0) {
        if (dfd == -ENOTDIR || dfd == -ELOOP)
            snprintf(err, errlen, "not a directory (a job is a directory, never a link)");
        else
            snprintf(err, errlen, "job.ini: cannot open: %s", strerror(-dfd));
        return dfd;
    }
    struct job_parse st = {.j = j, .err = err, .errlen = errlen};
    int fd = file_open_regular(dfd, "job.ini", FILE_NOFOLLOW, NULL, err, errlen);
    if (fd < 0) return fd;
    st.f = fdopen(fd, "r");
    if (!st.f) {
        close(fd);
        snprintf(err, errlen, "job.ini: cannot open: %s", strerror(ENOMEM));
        return -ENOMEM;
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
    for (uint32_t k = 0; k < j->n_parts; k++) {
        char name[SPOOL_FILE_NAME_MAX];
        struct stat fst;
        spool_file_name(name, j->inputs ? SPOOL_F_INPUT : SPOOL_F_WITNESS, k);
        if (fstatat(dfd, name, &fst, AT_SYMLINK_NOFOLLOW) < 0) {
            snprintf(err, errlen, "job.ini: partitions = %u but %s is missing", j->n_parts, name);
            return -EINVAL;
        }
        if (!S_ISREG(fst.st_mode)) {
            snprintf(err, errlen, "%s: not a regular file (%s)", name, file_kind(fst.st_mode));
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

void spool_remove_temporaries(int dirfd) { file_unlink_entries_at(dirfd, file_is_temporary); }

int spool_open_dir(const char *path) {
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) return fd;
    return -errno;
}

static const char *space_error(int e) {
    return e == ENOSPC ? "no space left on the spool's file system"
           : e == EDQUOT ? "the disk quota of the spool's file system is exhausted"
                         : strerror(e);
}

int spool_copy_in(const char *src, int dirfd, const char *name, uint64_t cap, char *why, size_t whylen) {
    struct stat st;
    _cleanup_close_ int in = file_open_regular(AT_FDCWD, src, 0, &st, why, whylen);
    if (in < 0) return in;
    if ((uint64_t)st.st_size > cap)
        return snprintf(why, whylen, "%s: %lld bytes, more than the %llu an input of this circuit can be", src,
                        (long long)st.st_size, (unsigned long long)cap),
               -EFBIG;
    _cleanup_close_ int out = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (out < 0) {
        int e = errno;
        return snprintf(why, whylen, "%s: cannot create its copy %s in the spool: %s", src, name, space_error(e)), -e;
    }
    int r = 0;
    if (ioctl(out, FICLONE, in) < 0) { /* no reflinks here: copy, at most st_size bytes */
        uint64_t left = (uint64_t)st.st_size;
        while (left && r == 0) {
            ssize_t n = copy_file_range(in, NULL, out, NULL, left > (1u << 30) ? (1u << 30) : left, 0);
            if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP)) {
                char buf[1 << 16];
                n = read(in, buf, left < sizeof buf ? left : sizeof buf);
                if (n > 0) r = fd_write_all(out, buf, (size_t)n);
            }
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) r = -errno;
            if (n == 0) break; /* shrank meanwhile: the copy is what was there */
            if (n > 0) left -= (uint64_t)n;
        }
    }
    if (r == 0 && fsync(out) < 0) r = -errno;
    if (r < 0) {
        (void)unlinkat(dirfd, name, 0);
        return snprintf(why, whylen, "%s: cannot copy into the spool: %s", src, space_error(-r)), r;
    }
    return 0;
}

int64_t spool_free_bytes(const char *spool) {
    struct statvfs v;
    if (statvfs(spool, &v) < 0) return -errno;
    return (int64_t)((uint64_t)v.f_bavail * v.f_frsize);
}

int spool_lock_tmp(int dirfd) { return flock(dirfd, LOCK_EX | LOCK_NB) < 0 ? -errno : 0; }

int spool_clean_tmp(const char *spool, unsigned min_age_s) {
    char path[1200];
    spool_path(path, sizeof path, spool, SPOOL_TMP, NULL);
    _cleanup_close_ int tfd = spool_open_dir(path);
    if (tfd < 0) return tfd;
    char **names;
    size_t n;
    if (spool_list(path, &names, &n) < 0) return 0;
    int removed = 0;
    time_t now = time(NULL);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (fstatat(tfd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0 || now - st.st_mtime < (time_t)min_age_s) continue;
        if (S_ISDIR(st.st_mode)) {
            _cleanup_close_ int fd = openat(tfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (fd < 0 || spool_lock_tmp(fd) < 0) continue; /* a live submitter holds it */
        }
        file_remove_flat_dir_at(tfd, names[i]);
        removed++;
    }
    spool_free_list(names, n);
    return removed;
}

static double mib(int64_t b) { return b / 1048576.0; }

int spool_submit(const char *spool, const spool_job_t *j, const spool_input_t *in, uint64_t cap, uint64_t min_free,
                 char *err, size_t errlen) {
    uint64_t total = 0;
    for (uint32_t k = 0; k < j->n_parts; k++) {
        struct stat st;
        if (!in[k].path)
            total += in[k].len;
        else if (stat(in[k].path, &st) == 0 && S_ISREG(st.st_mode))
            total += (uint64_t)st.st_size;
    }
    int64_t avail = spool_free_bytes(spool);
    if (avail >= 0 && (uint64_t)avail < min_free + total) {
        snprintf(err, errlen,
                 "the spool %s has %.1f MiB free, less than this job's inputs (%.1f MiB) plus [pipeline] min_free "
                 "(%.1f MiB): not accepting new jobs until space is freed",
                 spool, mib(avail), mib((int64_t)total), mib((int64_t)min_free));
        return -ENOSPC;
    }
    char tmp[1400], dst[1400];
    spool_path(tmp, sizeof tmp, spool, SPOOL_TMP, j->id);
    spool_path(dst, sizeof dst, spool, SPOOL_INCOMING, j->id);
    /* a folder of this id left by a submitter that died (an id submitted again after a crash:
     * zkpipe-api's idempotency keys) is removed first; one a live submitter holds is not */
    int mk = mkdir(tmp, 0775) < 0 ? errno : 0;
    if (mk == EEXIST) {
        _cleanup_close_ int old = spool_open_dir(tmp);
        if (old >= 0 && spool_lock_tmp(old) == 0) {
            file_remove_flat_dir(tmp);
            mk = mkdir(tmp, 0775) < 0 ? errno : 0;
        }
    }
    if (mk) {
        snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(mk));
        return -mk;
    }
    _cleanup_close_ int dfd = spool_open_dir(tmp);
    if (dfd < 0 || spool_lock_tmp(dfd) < 0) {
        int e = dfd < 0 ? -dfd : errno;
        snprintf(err, errlen, "cannot open %s: %s", tmp, strerror(e));
        (void)rmdir(tmp);
        return -e;
    }
    /* The stages (user zkpipe) must rename the job directory into active/ (moving a directory needs
     * write access to it) and write proofs into it, whoever submits: group-writable whatever the
     * submitter's umask, with the spool's group (setgid, docs/deploy.md). */
    (void)fchmod(dfd, 02770);
    for (uint32_t k = 0; k < j->n_parts; k++) {
        char name[SPOOL_FILE_NAME_MAX];
        spool_file_name(name, j->inputs ? SPOOL_F_INPUT : SPOOL_F_WITNESS, k);
        int r = 0;
        const void *data = in[k].data;
        size_t len = in[k].len;
        if (in[k].read && (r = in[k].read(in[k].ctx, k, &data, &len, err, errlen)) == 0 && len != in[k].len) {
            snprintf(err, errlen, "input %u: %zu bytes where %zu were announced", k, len, in[k].len);
            r = -EIO;
        }
        if (r < 0)
            ; /* err says why */
        else if (in[k].path)
            r = spool_copy_in(in[k].path, dfd, name, cap, err, errlen);
        else if (len > cap) {
            snprintf(err, errlen, "input %u: %zu bytes, more than the %llu an input of this circuit can be", k, len,
                     (unsigned long long)cap);
            r = -EFBIG;
        } else if ((r = file_write_atomic_at(dfd, name, data, len, NULL, -1)) < 0) {
            snprintf(err, errlen, "input %u: cannot write %s/%s: %s", k, tmp, name, space_error(-r));
        }
        if (r < 0) {
            file_remove_flat_dir(tmp);
            return r;
        }
    }
    int r = spool_write_job(tmp, j);
    if (r == 0 && fsync(dfd) < 0) r = -errno;
    if (r == 0 && rename(tmp, dst) < 0) r = -errno;
    if (r < 0) {
        snprintf(err, errlen, "cannot submit into %s: %s", dst,
                 r == -ENOSPC ? "no space left on the spool's file system" : strerror(-r));
        file_remove_flat_dir(tmp);
        return r;
    }
    char inc[1400];
    spool_path(inc, sizeof inc, spool, SPOOL_INCOMING, NULL);
    (void)file_fsync_dir(inc);
    return 0;
}

spool_place_t spool_job_place(const char *spool, const char *id) {
    for (spool_place_t i = SPOOL_INCOMING; i <= SPOOL_FAILED; i++) {
        char p[1400];
        struct stat st;
        spool_path(p, sizeof p, spool, i, id);
        if (lstat(p, &st) == 0) return i;
    }
    return SPOOL_NOWHERE;
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

/* milliseconds with three decimals, as written before */
static json_object *ms_json(double v) {
    char text[48];
    snprintf(text, sizeof text, "%.3f", v);
    return json_object_new_double_s(v, text);
}

int spool_write_result(int dirfd, const spool_result_t *r) {
    /* json-c passes bytes above 0x7f through: the texts are made valid UTF-8 first (\xHH), in full */
    const char *error = r->error ? r->error : "", *circuit = r->circuit ? r->circuit : "";
    _cleanup_free_ char *error_u8 = malloc(4 * strlen(error) + 1);
    _cleanup_free_ char *circuit_u8 = malloc(4 * strlen(circuit) + 1);
    json_object *o = json_object_new_object(), *parts = json_object_new_array();
    if (!o || !parts || !error_u8 || !circuit_u8) {
        json_object_put(o);
        json_object_put(parts);
        return -ENOMEM;
    }
    text_utf8_escape(error, error_u8, 4 * strlen(error) + 1);
    text_utf8_escape(circuit, circuit_u8, 4 * strlen(circuit) + 1);
    json_object_object_add(o, "job", json_object_new_string(r->job));
    json_object_object_add(o, "status", json_object_new_string(r->status));
    json_object_object_add(o, "circuit", json_object_new_string(circuit_u8));
    json_object_object_add(o, "priority", r->prio >= 0 ? json_object_new_string(cfg_priority_name(r->prio)) : NULL);
    json_object_object_add(o, "error", json_object_new_string(error_u8));
    json_object_object_add(o, "submitted_ns", json_object_new_uint64(r->submitted_ns));
    json_object_object_add(o, "total_ms", ms_json(r->total_ms));
    for (uint32_t k = 0; r->parts && k < r->n_parts; k++) {
        const spool_part_result_t *p = &r->parts[k];
        bool done = !strcmp(p->status, "done");
        char name[SPOOL_FILE_NAME_MAX];
        json_object *q = json_object_new_object();
        json_object_object_add(q, "index", json_object_new_int((int)k));
        json_object_object_add(q, "status", json_object_new_string(p->status));
        json_object_object_add(q, "proof", done ? json_object_new_string(spool_file_name(name, SPOOL_F_PROOF, k)) : NULL);
        json_object_object_add(q, "public", done ? json_object_new_string(spool_file_name(name, SPOOL_F_PUBLIC, k)) : NULL);
        json_object_object_add(q, "queue_ms", ms_json(p->queue_ms));
        json_object_object_add(q, "synth_ms", ms_json(p->synth_ms));
        json_object_object_add(q, "ready_wait_ms", ms_json(p->ready_wait_ms));
        json_object_object_add(q, "gpu_ms", ms_json(p->gpu_ms));
        json_object_object_add(q, "finalize_ms", ms_json(p->finalize_ms));
        json_object_object_add(q, "synth_count", json_object_new_int64(p->synth_count));
        json_object_object_add(q, "prove_count", json_object_new_int64(p->prove_count));
        json_object_object_add(q, "gpu_lost_count", json_object_new_int64(p->gpu_lost_count));
        json_object_object_add(q, "t_ready_ns", json_object_new_uint64(p->t_ready_ns));
        json_object_object_add(q, "t_prove_start_ns", json_object_new_uint64(p->t_prove_start_ns));
        json_object_object_add(q, "t_done_ns", json_object_new_uint64(p->t_done_ns));
        json_object_object_add(q, "reused", json_object_new_boolean(p->reused));
        json_object_array_add(parts, q);
    }
    json_object_object_add(o, "partitions", parts);
    const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
    int rc = text ? file_write_atomic_at(dirfd, "result.json", text, strlen(text), NULL, -1) : -ENOMEM;
    json_object_put(o);
    return rc;
}

int spool_fail(const char *spool, spool_place_t from, const char *name, const char *id, const char *status,
               const char *reason) {
    char to[1400], failed[1200], from_dir[1400];
    spool_path(from_dir, sizeof from_dir, spool, from, name);
    spool_path(failed, sizeof failed, spool, SPOOL_FAILED, NULL);
    spool_path(to, sizeof to, spool, SPOOL_FAILED, id);
    spool_result_t res = {.job = id, .status = status, .circuit = "", .error = reason, .prio = -1};
    _cleanup_close_ int dfd = spool_open_dir(from_dir);
    if (dfd >= 0) {
        spool_remove_temporaries(dfd);
        int r = spool_write_result(dfd, &res);
        if (r < 0) return r;
        if (rename(from_dir, to) < 0) return -errno;
    } else {
        /* not a directory (a file, a symlink): it goes into a folder of its own, never followed */
        if (mkdir(to, 0775) < 0) return -errno;
        _cleanup_close_ int tfd = spool_open_dir(to);
        if (tfd < 0) return tfd;
        int r = spool_write_result(tfd, &res);
        if (r < 0) return r;
        char entry[1500];
        snprintf(entry, sizeof entry, "%s/entry", to);
        if (rename(from_dir, entry) < 0) return -errno;
    }
    (void)file_fsync_dir(failed);
    return 0;
}

/* ---- The job directory's state machine: the places, the claim, the end, cancel, the result ---- */

static const char *const place_names[SPOOL_NPLACES] = {"tmp", "incoming", "active", "done", "failed"};

const char *spool_place_name(spool_place_t p) { return p >= 0 && p < SPOOL_NPLACES ? place_names[p] : "?"; }

void spool_path(char *buf, size_t len, const char *spool, spool_place_t p, const char *name) {
    if (name)
        snprintf(buf, len, "%s/%s/%s", spool, spool_place_name(p), name);
    else
        snprintf(buf, len, "%s/%s", spool, spool_place_name(p));
}

/* Outputs that may arrive in a fresh job directory and are never trusted: removed at the claim. */
static void untrust_outputs(const char *dir) {
    _cleanup_close_ int dfd = spool_open_dir(dir);
    if (dfd < 0) return;
    char **names;
    size_t n;
    if (spool_list(dir, &names, &n) == 0) {
        for (size_t i = 0; i < n; i++)
            if (!strncmp(names[i], "proof-", 6) || !strncmp(names[i], "public-", 7) || !strcmp(names[i], "result.json"))
                (void)unlinkat(dfd, names[i], 0);
        spool_free_list(names, n);
    }
    spool_remove_temporaries(dfd);
}

/* Moves incoming/NAME or active/NAME aside into failed/ under ret_id (NAME itself when it is a
 * valid id and fresh is false, else a new one); -ECANCELED with why = the reason, or the error of
 * the move appended. */
static int fail_aside(const char *spool, spool_place_t from, const char *name, bool fresh, char ret_id[SPOOL_ID_MAX],
                      char *why, size_t whylen) {
    if (fresh || !spool_valid_id(name))
        spool_new_id(ret_id);
    else
        snprintf(ret_id, SPOOL_ID_MAX, "%s", name);
    int r = spool_fail(spool, from, name, ret_id, "failed", why);
    if (r < 0) {
        size_t n = strlen(why);
        snprintf(why + n, whylen - n, "; and it cannot be moved to failed/: %s", strerror(-r));
    }
    return -ECANCELED;
}

int spool_load_active(const char *spool, const char *name, spool_job_t *ret_job, char ret_id[SPOOL_ID_MAX], char *why,
                      size_t whylen) {
    char dir[1400];
    spool_path(dir, sizeof dir, spool, SPOOL_ACTIVE, name);
    int r = spool_read_job(dir, ret_job, why, whylen);
    if (r == 0 && strcmp(ret_job->id, name)) {
        snprintf(why, whylen, "job.ini: id = %s does not match the directory name %s", ret_job->id, name);
        r = -EINVAL;
    }
    return r < 0 ? fail_aside(spool, SPOOL_ACTIVE, name, false, ret_id, why, whylen) : 0;
}

int spool_claim(const char *spool, const char *name, spool_job_t *ret_job, char ret_id[SPOOL_ID_MAX], char *why,
                size_t whylen) {
    char src[1400], dst[1400];
    spool_path(src, sizeof src, spool, SPOOL_INCOMING, name);
    spool_path(dst, sizeof dst, spool, SPOOL_ACTIVE, name);
    struct stat st;
    if (lstat(src, &st) < 0) return -ENOENT; /* another synthd took it */
    const char *dup = NULL;
    for (spool_place_t p = SPOOL_DONE; spool_valid_id(name) && !dup && p <= SPOOL_FAILED; p++) {
        char q[1400];
        struct stat qs;
        spool_path(q, sizeof q, spool, p, name);
        if (lstat(q, &qs) == 0) dup = spool_place_name(p);
    }
    if (dup) {
        snprintf(why, whylen, "job id %s already exists in %s/; refused", name, dup);
        return fail_aside(spool, SPOOL_INCOMING, name, true, ret_id, why, whylen);
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(why, whylen, "incoming/%s is %s, not a job directory", name,
                 S_ISLNK(st.st_mode) ? "a symbolic link" : "not a directory");
        return fail_aside(spool, SPOOL_INCOMING, name, true, ret_id, why, whylen);
    }
    if (renameat2(AT_FDCWD, src, AT_FDCWD, dst, RENAME_NOREPLACE) < 0) {
        /* ENOENT: another synthd took it. EEXIST: a job of that id is active. Anything else
         * (EACCES: a job directory the zkpipe user cannot move) leaves the job in incoming/. */
        int e = errno;
        if (e == ENOENT) return -ENOENT;
        if (e == EEXIST) {
            snprintf(why, whylen, "job id %s is already active; refused", name);
            return fail_aside(spool, SPOOL_INCOMING, name, true, ret_id, why, whylen);
        }
        snprintf(why, whylen, "(%s -> %s): %s; it stays in incoming/", src, dst, strerror(e));
        return -e;
    }
    untrust_outputs(dst);
    return spool_load_active(spool, name, ret_job, ret_id, why, whylen);
}

int spool_complete(const char *spool, const spool_result_t *r, char *why, size_t whylen) {
    spool_place_t to = !strcmp(r->status, "done") ? SPOOL_DONE : SPOOL_FAILED;
    char src[1400], dst[1400], parent[1400];
    spool_path(src, sizeof src, spool, SPOOL_ACTIVE, r->job);
    spool_path(dst, sizeof dst, spool, to, r->job);
    spool_path(parent, sizeof parent, spool, to, NULL);
    _cleanup_close_ int dfd = spool_open_dir(src);
    if (dfd == -ENOENT) return 0; /* a previous end moved it, and its finalizer died before recording it */
    if (dfd < 0) {
        snprintf(why, whylen, "%s: %s", src, strerror(-dfd));
        return dfd;
    }
    spool_remove_temporaries(dfd); /* of finalizers that died before their rename */
    int rc = spool_write_result(dfd, r);
    if (rc == 0 && rename(src, dst) < 0) rc = -errno;
    if (rc < 0) {
        snprintf(why, whylen, "%s -> %s: %s", src, dst, strerror(-rc));
        return rc;
    }
    (void)file_fsync_dir(parent);
    return 0;
}

int spool_cancel(const char *spool, const char *id, spool_place_t *ret_place, char *why, size_t whylen) {
    spool_place_t from = spool_job_place(spool, id);
    *ret_place = from;
    if (from == SPOOL_NOWHERE) return -ESRCH;
    if (spool_place_ended(from)) return -EALREADY;
    int r = spool_fail(spool, from, id, id, "cancelled", "cancelled before it started");
    if (r < 0) snprintf(why, whylen, "cannot move %s/%s/%s to failed/: %s", spool, spool_place_name(from), id, strerror(-r));
    return r;
}

/* result.json is a few KiB per partition: this is far more than any */
#define RESULT_MAX (16u << 20)

static json_object *jget(json_object *o, const char *k) {
    json_object *v;
    return json_object_object_get_ex(o, k, &v) ? v : NULL;
}

static const char *jstr(json_object *o, const char *k) {
    const char *s = json_object_get_string(jget(o, k));
    return s ? s : "";
}

int spool_read_result(int dirfd, spool_result_t *ret, char *why, size_t whylen) {
    _cleanup_free_ char *text = NULL;
    size_t len;
    int r = file_read(dirfd, "result.json", FILE_NOFOLLOW, RESULT_MAX, 0, &text, &len, why, whylen);
    if (r < 0) return r;
    json_object *o = json_tokener_parse(text), *parts = jget(o, "partitions");
    if (!o || !json_object_is_type(o, json_type_object) || !json_object_is_type(parts, json_type_array)) {
        snprintf(why, whylen, "result.json: not a result (no partitions array)");
        json_object_put(o);
        return -EINVAL;
    }
    size_t n = json_object_array_length(parts);
    spool_part_result_t *p = calloc(n ? n : 1, sizeof *p);
    if (!p) {
        json_object_put(o);
        return -ENOMEM;
    }
    for (size_t k = 0; k < n; k++) {
        json_object *q = json_object_array_get_idx(parts, k);
        p[k] = (spool_part_result_t){
            .status = jstr(q, "status"),
            .queue_ms = json_object_get_double(jget(q, "queue_ms")),
            .synth_ms = json_object_get_double(jget(q, "synth_ms")),
            .ready_wait_ms = json_object_get_double(jget(q, "ready_wait_ms")),
            .gpu_ms = json_object_get_double(jget(q, "gpu_ms")),
            .finalize_ms = json_object_get_double(jget(q, "finalize_ms")),
            .synth_count = (uint32_t)json_object_get_int64(jget(q, "synth_count")),
            .prove_count = (uint32_t)json_object_get_int64(jget(q, "prove_count")),
            .gpu_lost_count = (uint32_t)json_object_get_int64(jget(q, "gpu_lost_count")),
            .t_ready_ns = json_object_get_uint64(jget(q, "t_ready_ns")),
            .t_prove_start_ns = json_object_get_uint64(jget(q, "t_prove_start_ns")),
            .t_done_ns = json_object_get_uint64(jget(q, "t_done_ns")),
            .reused = json_object_get_boolean(jget(q, "reused")),
        };
    }
    int prio = -1;
    for (int i = 0; jget(o, "priority") && i < CFG_PRIO_COUNT; i++)
        if (!strcmp(jstr(o, "priority"), cfg_priority_name(i))) prio = i;
    *ret = (spool_result_t){
        .job = jstr(o, "job"),
        .status = json_object_get_string(jget(o, "status")) ? jstr(o, "status") : "?",
        .circuit = jstr(o, "circuit"),
        .error = jstr(o, "error"),
        .prio = prio,
        .submitted_ns = json_object_get_uint64(jget(o, "submitted_ns")),
        .total_ms = json_object_get_double(jget(o, "total_ms")),
        .n_parts = (uint32_t)n,
        .parts = p,
        .owner = o,
    };
    return 0;
}

void spool_result_free(spool_result_t *r) {
    free((void *)r->parts);
    json_object_put((json_object *)r->owner);
    *r = (spool_result_t){0};
}
