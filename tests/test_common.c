/* common/: the spool helpers (spool.c), the io_uring whole-file reader (uring.c) and the daemon
 * helpers (daemon.c: the watchdog wait, the option parser). The ground floor's files and test hooks
 * are tests/test_base.c's.
 * Everything happens in one temporary folder made by the setup and removed by the teardown; the
 * daemon helpers that read the environment once per process run in forked children. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/text.h"
#include "common/daemon.h"
#include "spool/spool.h"
#include "common/uring.h"
#include "config/config.h"
#include "test.h"

#define TMPDIR_NAME "zkpipe-test-common"
#include "tmpdir.h"

static void utc_day(char day[16]) {
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(day, 16, "%Y%m%d", &tm);
}

static bool path_exists(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0;
}

/* uring_read_fd on a path (what synthd does after opening a spool file) */
static int read_path(uring_reader_t *u, const char *path, void *buf, size_t cap, size_t *ret_len) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    int r = uring_read_fd(u, fd, buf, cap, ret_len);
    close(fd);
    return r;
}


/* ---- spool ---- */

TEST(spool_init_creates_tree) {
    const char *spool = tmp_path("a/b/spool");
    char err[512] = "";
    CHECK_MSG(spool_init(spool, err, sizeof err) == 0, "%s", err);
    static const char *subs[] = {"tmp", "incoming", "active", "done", "failed"};
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        char p[1100];
        snprintf(p, sizeof p, "%s/%s", spool, subs[i]);
        CHECK_MSG(is_dir(p), "%s", p);
    }
    CHECK_MSG(spool_init(spool, err, sizeof err) == 0, "again: %s", err); /* idempotent */
    return 0;
}

TEST(spool_init_error) {
    CHECK(write_text(tmp_path("plainfile"), "x") == 0);
    const char *spool = tmp_path("plainfile/spool");
    char err[512] = "";
    CHECK_EQ_INT(spool_init(spool, err, sizeof err), -ENOTDIR);
    CHECK_STR_CONTAINS(err, spool);
    CHECK_STR_CONTAINS(err, ": cannot create: Not a directory");
    return 0;
}

TEST(spool_new_id_unique_ordered) {
    enum { N = 2000 };
    static char ids[N][SPOOL_ID_MAX];
    char day0[16], day1[16];
    utc_day(day0);
    for (int i = 0; i < N; i++) {
        spool_new_id(ids[i]);
        CHECK_MSG(spool_valid_id(ids[i]), "%s", ids[i]);
        CHECK_EQ_INT(strlen(ids[i]), 29); /* 20261130T051203.123456-3fa9c1 */
        CHECK_MSG(ids[i][8] == 'T' && ids[i][15] == '.' && ids[i][22] == '-', "%s", ids[i]);
    }
    /* time-ordered: the time part never goes back, so sorting names sorts by submission time */
    for (int i = 1; i < N; i++) CHECK_MSG(strncmp(ids[i - 1], ids[i], 22) <= 0, "%s after %s", ids[i], ids[i - 1]);
    for (int i = 0; i < N; i++)
        for (int k = i + 1; k < N && !strncmp(ids[i], ids[k], 22); k++)
            CHECK_MSG(strcmp(ids[i], ids[k]), "%s twice", ids[i]);
    /* and it is of today (UTC) */
    utc_day(day1);
    CHECK_MSG(!strncmp(ids[0], day0, 8) || !strncmp(ids[0], day1, 8), "%s is not of %s", ids[0], day1);
    return 0;
}

TEST(spool_valid_id) {
    static const char *good[] = {"a", "job-1", "J_2.x", "20261130T051203.123456-3fa9c1",
                                 "0123456789012345678901234567890" /* 31: the longest */};
    static const char *bad[] = {"",    ".hidden", "..", "a/b",  "../x",
                                "a b", "a\nb",    "ä",  "x;rm", "01234567890123456789012345678901" /* 32 */};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) CHECK_MSG(spool_valid_id(good[i]), "'%s'", good[i]);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) CHECK_MSG(!spool_valid_id(bad[i]), "'%s'", bad[i]);
    return 0;
}

TEST(spool_job_round_trip) {
    for (int prio = CFG_PRIO_CRITICAL; prio <= CFG_PRIO_LOW; prio++) {
        const char *dir = tmp_path("rt%d", prio);
        CHECK(mkdir(dir, 0755) == 0);
        spool_job_t j = {.prio = prio, .n_parts = (uint32_t)prio + 1, .submit_ns = 1764480000123456789ull + prio};
        spool_new_id(j.id);
        snprintf(j.circuit, sizeof j.circuit, "poseidon%d", prio);
        CHECK_EQ_INT(spool_write_job(dir, &j), 0);
        CHECK_EQ_INT(count_tmp(dir), 0);
        CHECK_STR_CONTAINS(read_text(tmp_path("rt%d/job.ini", prio)), cfg_priority_name(prio));
        for (uint32_t k = 0; k < j.n_parts; k++) CHECK(write_text(tmp_path("rt%d/witness-%u.wtns", prio, k), "w") == 0);
        spool_job_t r;
        char err[512] = "";
        CHECK_MSG(spool_read_job(dir, &r, err, sizeof err) == 0, "%s", err);
        CHECK(!strcmp(r.id, j.id));
        CHECK(!strcmp(r.circuit, j.circuit));
        CHECK_EQ_INT(r.prio, prio);
        CHECK_EQ_INT(r.n_parts, j.n_parts);
        CHECK(r.submit_ns == j.submit_ns);
        CHECK(!r.submitter[0]); /* none written for a job of zkpipe submit */
    }
    return 0;
}

/* Each bad job.ini gets one error with the line that is wrong (comments and blank lines count). */
TEST(spool_job_errors) {
    static const struct {
        const char *ini;
        uint32_t witnesses;
        const char *want;
    } cases[] = {
        {"; a comment\n[job]\nid = a1\ncircuit = mul\npartitions = 1\nbogus = 1\n", 1,
         "job.ini:6: unknown key 'bogus'"},
        {"[job]\nid = a1\n\n[other]\nx = 1\n", 1, "job.ini:5: unknown section [other]"},
        {"[job]\nid = a1\ncircuit = mul\npriority = URGENT\npartitions = 1\n", 1,
         "job.ini:4: priority = URGENT: expected CRITICAL, HIGH, NORMAL or LOW"},
        {"[job]\nid = a1\ncircuit = mul\npartitions = 0\n", 1, "job.ini:4: partitions = 0: expected 1 to 256"},
        {"[job]\nid = a1\ncircuit = mul\npartitions = 257\n", 1, "job.ini:4: partitions = 257: expected 1 to 256"},
        {"[job]\nid = a1\ncircuit = mul\npartitions = 2x\n", 1, "job.ini:4: partitions = 2x: expected 1 to 256"},
        {"[job]\n\nid = ../x\n", 1, "job.ini:3: id = ../x: not a valid job id"},
        {"[job]\nid = a1\nsubmitted_ns = soon\n", 1, "job.ini:3: submitted_ns = soon: expected a number"},
        {"[job]\nid = a1\nsubmitter = ../x\n", 1, "job.ini:3: submitter = ../x: not a token name"},
        {"[job]\nid = a1\nthis is not ini\n", 1, "job.ini:3: syntax error"},
        {"[job]\ncircuit = mul\npartitions = 1\n", 1, "job.ini: missing id"},
        {"[job]\nid = a1\npartitions = 1\n", 1, "job.ini: missing circuit"},
        {"[job]\nid = a1\ncircuit = mul\n", 1, "job.ini: missing partitions"},
        {"[job]\nid = a1\ncircuit = mul\npartitions = 3\n", 1, "job.ini: partitions = 3 but witness-1.wtns is missing"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *dir = tmp_path("bad%zu", i);
        CHECK(mkdir(dir, 0755) == 0);
        CHECK(write_text(tmp_path("bad%zu/job.ini", i), cases[i].ini) == 0);
        for (uint32_t k = 0; k < cases[i].witnesses; k++)
            CHECK(write_text(tmp_path("bad%zu/witness-%u.wtns", i, k), "w") == 0);
        spool_job_t j;
        char err[512] = "";
        CHECK_MSG(spool_read_job(dir, &j, err, sizeof err) == -EINVAL, "case %zu accepted", i);
        CHECK_MSG(!strcmp(err, cases[i].want), "case %zu: '%s', expected '%s'", i, err, cases[i].want);
    }
    /* no job.ini at all */
    spool_job_t j;
    char err[512] = "";
    CHECK_EQ_INT(spool_read_job(tmp_path("no-such-job"), &j, err, sizeof err), -ENOENT);
    CHECK(!strcmp(err, "job.ini: cannot open: No such file or directory"));
    return 0;
}

TEST(spool_list_sorted) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", tmp_path("list"));
    CHECK(mkdir(dir, 0755) == 0);
    static const char *names[] = {"b", "a", "c10", "c2", ".hidden", "..dots", ".tmp"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) CHECK(write_text(tmp_path("list/%s", names[i]), "") == 0);
    CHECK(mkdir(tmp_path("list/d"), 0755) == 0);
    char **v;
    size_t n;
    CHECK_EQ_INT(spool_list(dir, &v, &n), 0);
    static const char *want[] = {"a", "b", "c10", "c2", "d"};
    bool same = n == 5;
    for (size_t i = 0; same && i < n; i++) same = !strcmp(v[i], want[i]);
    if (!same)
        for (size_t i = 0; i < n; i++) fprintf(stderr, "  listed %s\n", v[i]);
    spool_free_list(v, n);
    CHECK(same);
    /* an empty folder, a missing one */
    CHECK(mkdir(tmp_path("list/d/e"), 0755) == 0);
    CHECK_EQ_INT(spool_list(tmp_path("list/d/e"), &v, &n), 0);
    CHECK_EQ_INT(n, 0);
    spool_free_list(v, n);
    CHECK_EQ_INT(spool_list(tmp_path("list/none"), &v, &n), -ENOENT);
    return 0;
}

TEST(spool_fail) {
    const char *spool = tmp_path("failspool");
    char err[512] = "";
    CHECK_MSG(spool_init(spool, err, sizeof err) == 0, "%s", err);
    const char *from = tmp_path("failspool/incoming/J1");
    CHECK(mkdir(from, 0755) == 0);
    CHECK(write_text(tmp_path("failspool/incoming/J1/job.ini"), "[job]\nbogus\n") == 0);
    static const char reason[] = "job.ini:2: unknown key 'x\"y\\z'\n\tnext";
    CHECK_EQ_INT(spool_fail(spool, SPOOL_INCOMING, "J1", "J1", "failed", reason), 0);
    CHECK(!path_exists(from));
    CHECK(path_exists(tmp_path("failspool/failed/J1/job.ini"))); /* the job's files moved with it */
    CHECK_EQ_INT(count_tmp(tmp_path("failspool/failed/J1")), 0);
    json_object *o = json_tokener_parse(read_text(tmp_path("failspool/failed/J1/result.json")));
    CHECK_MSG(o, "result.json is not JSON");
    json_object *v;
    bool ok = json_object_object_get_ex(o, "job", &v) && !strcmp(json_object_get_string(v), "J1") &&
              json_object_object_get_ex(o, "status", &v) && !strcmp(json_object_get_string(v), "failed") &&
              json_object_object_get_ex(o, "error", &v) && !strcmp(json_object_get_string(v), reason) &&
              json_object_object_get_ex(o, "partitions", &v) && json_object_is_type(v, json_type_array) &&
              json_object_array_length(v) == 0;
    json_object_put(o);
    CHECK_MSG(ok, "result.json: %s", read_text(tmp_path("failspool/failed/J1/result.json")));
    /* a job of that id already in failed/: an error, and the job stays where it was */
    const char *again = tmp_path("failspool/incoming/J1");
    CHECK(mkdir(again, 0755) == 0);
    CHECK(write_text(tmp_path("failspool/incoming/J1/job.ini"), "x") == 0);
    int r = spool_fail(spool, SPOOL_INCOMING, "J1", "J1", "failed", "again");
    CHECK_MSG(r == -ENOTEMPTY || r == -EEXIST, "%d", r);
    CHECK(path_exists(tmp_path("failspool/incoming/J1/job.ini")));
    return 0;
}

TEST(spool_json_escape) {
    static const char in[] = "a\"b\\c\nd\x01\x1f\xc3\xa4/";
    char out[128];
    spool_json_escape(in, out, sizeof out);
    CHECK(!strcmp(out, "a\\\"b\\\\c\\u000ad\\u0001\\u001f\xc3\xa4/"));
    /* json-c reads it back as the same string */
    char doc[160];
    snprintf(doc, sizeof doc, "\"%s\"", out);
    json_object *o = json_tokener_parse(doc);
    CHECK(o);
    bool same = !strcmp(json_object_get_string(o), in);
    json_object_put(o);
    CHECK(same);
    /* a small buffer: always terminated, and always the escape of a whole prefix (no half escape) */
    for (size_t cap = 1; cap < 40; cap++) {
        char small[40];
        memset(small, 'X', sizeof small);
        spool_json_escape(in, small, cap);
        CHECK_MSG(memchr(small, 0, cap), "cap %zu: not terminated", cap);
        bool prefix = false;
        for (size_t p = 0; p <= strlen(in) && !prefix; p++) {
            char part[sizeof in], esc[128];
            memcpy(part, in, p);
            part[p] = 0;
            spool_json_escape(part, esc, sizeof esc);
            prefix = !strcmp(esc, small);
        }
        CHECK_MSG(prefix, "cap %zu: '%s' is not the escape of a prefix", cap, small);
        CHECK_MSG(small[cap] == 'X' || cap == sizeof small, "cap %zu: wrote past the buffer", cap);
    }
    return 0;
}

/* ---- uring ---- */

static uint8_t *pattern(size_t n, uint32_t seed) {
    uint8_t *p = malloc(n ? n : 1);
    for (size_t i = 0; p && i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (uint8_t)(seed >> 16);
    }
    return p;
}

/* A reader of that depth: 0, TEST_SKIP where io_uring is not available (seccomp, old kernel), 1. */
static int new_reader(uring_reader_t **u, unsigned depth) {
    int r = uring_reader_new(u, depth);
    if (r == -ENOSYS || r == -EPERM) {
        fprintf(stderr, "  io_uring is not available here (%s)\n", strerror(-r));
        return TEST_SKIP;
    }
    CHECK_EQ_INT(r, 0);
    return 0;
}

TEST(uring_reads_exactly) {
    /* several 1 MiB chunks in flight and a ragged tail; depth 1 reads them one by one */
    static const size_t sizes[] = {0, 1, 4095, (1u << 20), 3u * (1u << 20) + 12345};
    static const unsigned depths[] = {1, 4};
    for (size_t d = 0; d < 2; d++) {
        uring_reader_t *u;
        int r = new_reader(&u, depths[d]);
        if (r) return r;
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
            size_t n = sizes[i];
            uint8_t *want = pattern(n, (uint32_t)(n + d));
            CHECK(want);
            const char *path = tmp_path("uring-%zu-%zu", d, n);
            CHECK(write_file(path, want, n) == 0);
            size_t cap = n + 4096;
            uint8_t *buf = malloc(cap);
            CHECK(buf);
            memset(buf, 0xa5, cap);
            size_t len = 12345678;
            r = read_path(u, path, buf, cap, &len);
            bool same = r == 0 && len == n && !memcmp(buf, want, n);
            bool untouched = true;
            for (size_t k = n; k < cap; k++) untouched &= buf[k] == 0xa5;
            /* exactly as large as the buffer is fine */
            size_t len2 = 0;
            int r2 = n ? read_path(u, path, buf, n, &len2) : 0;
            bool same2 = r2 == 0 && (!n || (len2 == n && !memcmp(buf, want, n)));
            free(buf);
            free(want);
            CHECK_MSG(same, "%s: r %d, len %zu of %zu, contents %s", path, r, len, n, r == 0 ? "differ" : "-");
            CHECK_MSG(untouched, "%s: wrote past the file's length", path);
            CHECK_MSG(same2, "%s: buffer of exactly the size: r %d", path, r2);
        }
        uring_reader_free(u);
    }
    return 0;
}

TEST(uring_too_big) {
    uring_reader_t *u;
    int r = new_reader(&u, 4);
    if (r) return r;
    size_t n = 2u * (1u << 20) + 1;
    uint8_t *want = pattern(n, 7);
    CHECK(want);
    const char *path = tmp_path("uring-big");
    CHECK(write_file(path, want, n) == 0);
    free(want);
    uint8_t buf[4096];
    memset(buf, 0xa5, sizeof buf);
    size_t len = 0;
    CHECK_EQ_INT(read_path(u, path, buf, sizeof buf, &len), -EFBIG);
    CHECK_EQ_INT(len, n); /* says how large the file is */
    for (size_t k = 0; k < sizeof buf; k++) CHECK_MSG(buf[k] == 0xa5, "byte %zu written", k);
    uring_reader_free(u);
    return 0;
}

TEST(uring_missing_file) {
    uring_reader_t *u;
    int r = new_reader(&u, 2);
    if (r) return r;
    uint8_t buf[16];
    size_t len = 0;
    CHECK_EQ_INT(read_path(u, tmp_path("uring-none"), buf, sizeof buf, &len), -ENOENT);
    /* the reader is still good for the next file */
    CHECK(write_text(tmp_path("uring-small"), "hello") == 0);
    CHECK_EQ_INT(read_path(u, tmp_path("uring-small"), buf, sizeof buf, &len), 0);
    CHECK(len == 5 && !memcmp(buf, "hello", 5));
    uring_reader_free(u);
    return 0;
}

/* ---- daemon helpers ---- */

TEST(daemon_wait_ms_watchdog) {
    char pid[16], other[16];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    snprintf(other, sizeof other, "%d", (int)getpid() + 1);
    unsetenv("WATCHDOG_USEC");
    unsetenv("WATCHDOG_PID");
    CHECK_EQ_INT(daemon_wait_ms(1000), 1000); /* no watchdog */
    setenv("WATCHDOG_USEC", "1000000", 1);    /* 1 s: below half of it, with 50 ms to spare */
    CHECK_EQ_INT(daemon_wait_ms(1000), 450);
    CHECK_EQ_INT(daemon_wait_ms(200), 200); /* the default when it is already shorter */
    setenv("WATCHDOG_PID", pid, 1);
    CHECK_EQ_INT(daemon_wait_ms(1000), 450);
    setenv("WATCHDOG_PID", other, 1); /* another process's watchdog */
    CHECK_EQ_INT(daemon_wait_ms(1000), 1000);
    unsetenv("WATCHDOG_PID");
    setenv("WATCHDOG_USEC", "10000", 1); /* 10 ms: never below 10 ms */
    CHECK_EQ_INT(daemon_wait_ms(1000), 10);
    setenv("WATCHDOG_USEC", "soon", 1);
    CHECK_EQ_INT(daemon_wait_ms(1000), 1000);
    unsetenv("WATCHDOG_USEC");
    return 0;
}

/* daemon_parse_args in a child (getopt keeps state; --help prints): what it returned and printed. */
struct parsed {
    int ok, exit, instance, device;
    char config[256], backend[32];
    char out[4096]; /* stdout and stderr */
};

static int parse(struct parsed *p, bool gpu, const char *const *args) {
    memset(p, 0, sizeof *p);
    int res[2], out[2];
    if (pipe(res) || pipe(out)) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out[1], 1);
        dup2(out[1], 2);
        char *argv[16] = {(char *)"zkpipe-test"};
        int argc = 1;
        while (args[argc - 1] && argc < 15) argv[argc] = (char *)args[argc - 1], argc++;
        daemon_args_t a;
        struct parsed r = {0};
        r.exit = -1;
        r.ok = daemon_parse_args(argc, argv, "zkpipe-test", "Tests the option parser.", gpu, &a, &r.exit);
        if (r.ok) {
            r.instance = a.instance, r.device = a.device;
            snprintf(r.config, sizeof r.config, "%s", a.config ? a.config : "(null)");
            snprintf(r.backend, sizeof r.backend, "%s", a.backend ? a.backend : "(null)");
        }
        fflush(stdout);
        fflush(stderr);
        _exit(write(res[1], &r, sizeof r) == (ssize_t)sizeof r ? 0 : 1);
    }
    close(res[1]);
    close(out[1]);
    int st = -1;
    bool got = read(res[0], p, sizeof *p) == (ssize_t)sizeof *p;
    ssize_t n = read(out[0], p->out, sizeof p->out - 1);
    p->out[n > 0 ? n : 0] = 0;
    waitpid(pid, &st, 0);
    close(res[0]);
    close(out[0]);
    return got && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

TEST(daemon_parse_args_usage) {
    struct parsed p;
    CHECK(parse(&p, false, (const char *[]){"--help", NULL}) == 0);
    CHECK(!p.ok && p.exit == 0);
    CHECK_STR_CONTAINS(p.out, "Usage: zkpipe-test [--config FILE] [--instance N]\n");
    CHECK_STR_CONTAINS(p.out, "Tests the option parser.");
    CHECK_STR_CONTAINS(p.out, "--config FILE");
    CHECK(!strstr(p.out, "--backend"));
    CHECK(parse(&p, true, (const char *[]){"-h", NULL}) == 0);
    CHECK(!p.ok && p.exit == 0);
    CHECK_STR_CONTAINS(p.out, "--backend B");
    CHECK_STR_CONTAINS(p.out, "--device N");
    /* bad usage: exit 2 with the usage line */
    const char *const *bad[] = {
        (const char *[]){"--bogus", NULL},       (const char *[]){"extra", NULL},
        (const char *[]){"--config", NULL},      (const char *[]){"--backend", "cpu", NULL}, /* not a GPU daemon */
        (const char *[]){"--device", "1", NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK(parse(&p, false, bad[i]) == 0);
        CHECK_MSG(!p.ok && p.exit == 2, "case %zu: ok %d exit %d", i, p.ok, p.exit);
        CHECK_STR_CONTAINS(p.out, "Usage: zkpipe-test");
    }
    return 0;
}

TEST(daemon_parse_args_values) {
    struct parsed p;
    CHECK(parse(&p, false, (const char *[]){NULL}) == 0);
    CHECK(p.ok && !strcmp(p.config, CFG_DEFAULT_PATH) && p.instance == 0 && !strcmp(p.backend, "(null)"));
    CHECK(parse(&p, false, (const char *[]){"--config", "/x/zk.ini", "-i", "3", NULL}) == 0);
    CHECK(p.ok && !strcmp(p.config, "/x/zk.ini") && p.instance == 3);
    CHECK(!strcmp(p.out, "")); /* nothing printed */
    CHECK(parse(&p, true, (const char *[]){"--backend", "cuda", "--device", "2", NULL}) == 0);
    CHECK(p.ok && !strcmp(p.backend, "cuda") && p.device == 2 && p.instance == 2); /* the device is the instance */
    CHECK(parse(&p, true, (const char *[]){"-i", "5", "-d", "1", NULL}) == 0);
    CHECK(p.ok && p.device == 1 && p.instance == 5); /* unless -i says otherwise */
    return 0;
}

/* ---- the spool's defences (issue "Nothing accepted is ever lost or proven wrong") ---- */

/* A job directory that is a symbolic link, or not a directory, is not opened. */
TEST(spool_open_dir_no_link) {
    const char *dir = tmp_path("open-dir");
    CHECK(mkdir(dir, 0755) == 0);
    CHECK(write_text(tmp_path("open-dir/w"), "data") == 0);
    CHECK(symlink(dir, tmp_path("open-dir-link")) == 0);
    CHECK_EQ_INT(spool_open_dir(tmp_path("open-dir-link")), -ENOTDIR); /* O_DIRECTORY|O_NOFOLLOW */
    CHECK_EQ_INT(spool_open_dir(tmp_path("open-dir/w")), -ENOTDIR);
    return 0;
}

TEST(spool_copy_in_owns_the_input) {
    const char *dir = tmp_path("copy-in");
    CHECK(mkdir(dir, 0755) == 0);
    int dfd = spool_open_dir(dir);
    CHECK(dfd >= 0);
    char why[512];
    CHECK(write_text(tmp_path("copy-src"), "witness v1") == 0);
    CHECK(symlink(tmp_path("copy-src"), tmp_path("copy-link")) == 0);
    CHECK_EQ_INT(spool_copy_in(tmp_path("copy-link"), dfd, "w0", 100, why, sizeof why), 0);
    CHECK(write_text(tmp_path("copy-src"), "witness v2!") == 0); /* the user's file changes */
    CHECK(!strcmp(read_text(tmp_path("copy-in/w0")), "witness v1"));
    struct stat a, b;
    CHECK(lstat(tmp_path("copy-in/w0"), &a) == 0 && stat(tmp_path("copy-src"), &b) == 0);
    CHECK(S_ISREG(a.st_mode) && a.st_ino != b.st_ino);
    /* bounded by cap; a FIFO, /dev/zero, a dangling link and an existing name are refused */
    CHECK_EQ_INT(spool_copy_in(tmp_path("copy-src"), dfd, "w1", 5, why, sizeof why), -EFBIG);
    CHECK_STR_CONTAINS(why, "11 bytes, more than the 5");
    CHECK(mkfifo(tmp_path("copy-fifo"), 0644) == 0);
    CHECK_EQ_INT(spool_copy_in(tmp_path("copy-fifo"), dfd, "w1", 100, why, sizeof why), -EINVAL);
    CHECK_STR_CONTAINS(why, "not a regular file (a FIFO");
    CHECK_EQ_INT(spool_copy_in("/dev/zero", dfd, "w1", 100, why, sizeof why), -EINVAL);
    CHECK(symlink(tmp_path("nowhere"), tmp_path("copy-dangling")) == 0);
    CHECK_EQ_INT(spool_copy_in(tmp_path("copy-dangling"), dfd, "w1", 100, why, sizeof why), -ENOENT);
    CHECK_EQ_INT(spool_copy_in(tmp_path("copy-src"), dfd, "w0", 100, why, sizeof why), -EEXIST);
    struct stat st;
    CHECK(fstatat(dfd, "w1", &st, AT_SYMLINK_NOFOLLOW) < 0); /* nothing half-made is left */
    close(dfd);
    return 0;
}

/* Temporaries of atomic writers that died, old and new style, are removed; other files stay, and a
 * link among them is removed, never followed. */
TEST(spool_remove_temporaries) {
    const char *dir = tmp_path("write-at");
    CHECK(mkdir(dir, 0755) == 0);
    CHECK(write_text(tmp_path("victim"), "precious") == 0);
    CHECK(write_text(tmp_path("write-at/proof-0.json"), "{}") == 0);
    int dfd = spool_open_dir(dir);
    CHECK(dfd >= 0);
    CHECK(write_text(tmp_path("write-at/.proof-1.json.tmp.123.0badf00d"), "x") == 0);
    CHECK(write_text(tmp_path("write-at/result.json.tmp.77"), "x") == 0);
    CHECK(symlink(tmp_path("victim"), tmp_path("write-at/.public-1.json.tmp.9")) == 0);
    spool_remove_temporaries(dfd);
    CHECK_EQ_INT(count_tmp(dir), 0);
    CHECK(!strcmp(read_text(tmp_path("victim")), "precious"));
    struct stat st;
    CHECK(lstat(tmp_path("write-at/proof-0.json"), &st) == 0);
    close(dfd);
    return 0;
}

/* Several files at once: all written and renamed, none left half-made; a name that cannot be a
 * file fails the whole write before anything is renamed, and leaves no temporary. */
TEST(spool_clean_tmp_spares_live_submitters) {
    const char *spool = tmp_path("clean-spool");
    char err[512];
    CHECK(spool_init(spool, err, sizeof err) == 0);
    CHECK(mkdir(tmp_path("clean-spool/tmp/dead"), 0755) == 0);
    CHECK(write_text(tmp_path("clean-spool/tmp/dead/witness-0.wtns"), "w") == 0);
    CHECK(mkdir(tmp_path("clean-spool/tmp/live"), 0755) == 0);
    CHECK(mkdir(tmp_path("clean-spool/tmp/young"), 0755) == 0);
    struct timespec old[2] = {{.tv_sec = time(NULL) - 3600}, {.tv_sec = time(NULL) - 3600}};
    CHECK(utimensat(AT_FDCWD, tmp_path("clean-spool/tmp/dead"), old, 0) == 0);
    CHECK(utimensat(AT_FDCWD, tmp_path("clean-spool/tmp/live"), old, 0) == 0);
    int lfd = spool_open_dir(tmp_path("clean-spool/tmp/live"));
    CHECK(lfd >= 0 && spool_lock_tmp(lfd) == 0); /* a submitter at work */
    CHECK_EQ_INT(spool_clean_tmp(spool, 60), 1);
    CHECK(!is_dir(tmp_path("clean-spool/tmp/dead")));
    CHECK(is_dir(tmp_path("clean-spool/tmp/live")));
    CHECK(is_dir(tmp_path("clean-spool/tmp/young")));
    close(lfd);
    CHECK_EQ_INT(spool_clean_tmp(spool, 60), 1); /* its submitter is gone now */
    CHECK(!is_dir(tmp_path("clean-spool/tmp/live")));
    return 0;
}

/* An id submitted again after its submitter died mid-way (zkpipe-api's idempotency keys): the
 * abandoned tmp/ID is replaced; one a live submitter holds is left alone and the submission refused. */
TEST(spool_submit_replaces_abandoned_tmp) {
    const char *spool = tmp_path("resub-spool");
    char err[512] = "";
    CHECK(spool_init(spool, err, sizeof err) == 0);
    spool_job_t j = {.prio = CFG_PRIO_NORMAL, .n_parts = 1, .submit_ns = 1};
    snprintf(j.id, sizeof j.id, "20261202T000000.000000-abcdef");
    snprintf(j.circuit, sizeof j.circuit, "mul");
    snprintf(j.submitter, sizeof j.submitter, "app-1");
    CHECK(mkdir(tmp_path("resub-spool/tmp/%s", j.id), 0755) == 0);
    CHECK(write_text(tmp_path("resub-spool/tmp/%s/witness-0.wtns", j.id), "half") == 0);
    int lfd = spool_open_dir(tmp_path("resub-spool/tmp/%s", j.id));
    CHECK(lfd >= 0 && spool_lock_tmp(lfd) == 0); /* its submitter is still at work */
    spool_input_t in = {.data = "wtns", .len = 4};
    CHECK_EQ_INT(spool_submit(spool, &j, &in, 100, 0, err, sizeof err), -EEXIST);
    CHECK(is_dir(tmp_path("resub-spool/tmp/%s", j.id)));
    close(lfd); /* it died */
    CHECK_MSG(spool_submit(spool, &j, &in, 100, 0, err, sizeof err) == 0, "%s", err);
    CHECK(!is_dir(tmp_path("resub-spool/tmp/%s", j.id)));
    CHECK(!strcmp(read_text(tmp_path("resub-spool/incoming/%s/witness-0.wtns", j.id)), "wtns"));
    spool_job_t r;
    CHECK_MSG(spool_read_job(tmp_path("resub-spool/incoming/%s", j.id), &r, err, sizeof err) == 0, "%s", err);
    CHECK(!strcmp(r.submitter, "app-1"));
    return 0;
}

TEST(spool_fail_moves_what_is_not_a_directory) {
    const char *spool = tmp_path("faild-spool");
    char err[512];
    CHECK(spool_init(spool, err, sizeof err) == 0);
    CHECK(mkdir(tmp_path("faild-outside"), 0755) == 0);
    CHECK(symlink(tmp_path("faild-outside"), tmp_path("faild-spool/incoming/l")) == 0);
    CHECK(write_text(tmp_path("faild-spool/incoming/f"), "junk") == 0);
    CHECK_EQ_INT(spool_fail(spool, SPOOL_INCOMING, "l", "20200101T000000.000000-aaaaaa", "failed", "a symlink"), 0);
    CHECK_EQ_INT(spool_fail(spool, SPOOL_INCOMING, "f", "20200101T000000.000000-bbbbbb", "failed", "a file"), 0);
    struct stat st;
    CHECK(lstat(tmp_path("faild-spool/failed/20200101T000000.000000-aaaaaa/entry"), &st) == 0 && S_ISLNK(st.st_mode));
    CHECK(lstat(tmp_path("faild-spool/failed/20200101T000000.000000-bbbbbb/entry"), &st) == 0 && S_ISREG(st.st_mode));
    CHECK_STR_CONTAINS(read_text(tmp_path("faild-spool/failed/20200101T000000.000000-aaaaaa/result.json")), "a symlink");
    DIR *d = opendir(tmp_path("faild-outside"));
    CHECK(d);
    int n = 0;
    for (struct dirent *de; (de = readdir(d));) n += de->d_name[0] != '.';
    closedir(d);
    CHECK_EQ_INT(n, 0); /* nothing was written through the link */
    return 0;
}

TEST(spool_result_one_schema) {
    const char *dir = tmp_path("result");
    CHECK(mkdir(dir, 0755) == 0);
    int dfd = spool_open_dir(dir);
    CHECK(dfd >= 0);
    spool_part_result_t parts[2] = {{.status = "done", .gpu_ms = 1.5, .prove_count = 1}, {.status = "failed"}};
    spool_result_t r = {.job = "j", .status = "failed", .circuit = "c", .error = "bad \"x\"", .prio = 1,
                        .submitted_ns = 5, .total_ms = 2.25, .n_parts = 2, .parts = parts};
    CHECK_EQ_INT(spool_write_result(dfd, &r), 0);
    close(dfd);
    json_object *o = json_object_from_file(tmp_path("result/result.json")), *v, *p;
    CHECK(o);
    CHECK(json_object_object_get_ex(o, "error", &v) && !strcmp(json_object_get_string(v), "bad \"x\""));
    CHECK(json_object_object_get_ex(o, "priority", &v) && !strcmp(json_object_get_string(v), "HIGH"));
    CHECK(json_object_object_get_ex(o, "partitions", &p) && json_object_array_length(p) == 2);
    CHECK(json_object_object_get_ex(json_object_array_get_idx(p, 0), "proof", &v) &&
          !strcmp(json_object_get_string(v), "proof-0.json"));
    CHECK(json_object_object_get_ex(json_object_array_get_idx(p, 1), "proof", &v) && v == NULL);
    CHECK(json_object_object_get_ex(json_object_array_get_idx(p, 1), "public", &v) && v == NULL);
    json_object_put(o);
    return 0;
}

/* An error text with bytes that are not UTF-8 (a hostile signal name) still gives a result.json of
 * valid UTF-8 JSON: the bytes written as \xHH (issue 25, 3). */
TEST(spool_result_utf8) {
    const char *dir = tmp_path("result-utf8");
    CHECK(mkdir(dir, 0755) == 0);
    int dfd = spool_open_dir(dir);
    CHECK(dfd >= 0);
    spool_result_t r = {.job = "j", .status = "failed", .circuit = "c\xc3", .error = "signal q\xff\xfe caf\xc3\xa9",
                        .prio = -1};
    CHECK_EQ_INT(spool_write_result(dfd, &r), 0);
    close(dfd);
    const char *text = read_text(tmp_path("result-utf8/result.json"));
    CHECK_MSG(text_utf8_valid(text), "result.json is not UTF-8: %s", text);
    json_object *o = json_tokener_parse(text), *v;
    CHECK(o);
    CHECK(json_object_object_get_ex(o, "error", &v) &&
          !strcmp(json_object_get_string(v), "signal q\\xFF\\xFE caf\xc3\xa9"));
    CHECK(json_object_object_get_ex(o, "circuit", &v) && !strcmp(json_object_get_string(v), "c\\xC3"));
    json_object_put(o);
    return 0;
}

/* The spool's state machine (issue 20, 1): a claim moves incoming/J to active/J, removes what no
 * submitter may bring and reads job.ini; what cannot be a job is failed aside; the end writes
 * result.json and moves the directory, and is repeatable; a finished job reads back as written. */
TEST(spool_claim_complete_read) {
    const char *spool = tmp_path("sm-spool");
    char err[512] = "", why[700] = "", fid[SPOOL_ID_MAX];
    CHECK_MSG(spool_init(spool, err, sizeof err) == 0, "%s", err);
    spool_job_t j = {.id = "20200101T000000.000000-c1a1a1", .circuit = "mul", .prio = 1, .n_parts = 2};
    char dir[1400];
    spool_path(dir, sizeof dir, spool, SPOOL_INCOMING, j.id);
    CHECK(mkdir(dir, 0755) == 0);
    CHECK_EQ_INT(spool_write_job(dir, &j), 0);
    CHECK(write_text(tmp_path("sm-spool/incoming/20200101T000000.000000-c1a1a1/witness-0.wtns"), "w") == 0);
    CHECK(write_text(tmp_path("sm-spool/incoming/20200101T000000.000000-c1a1a1/witness-1.wtns"), "w") == 0);
    CHECK(write_text(tmp_path("sm-spool/incoming/20200101T000000.000000-c1a1a1/proof-0.json"), "planted") == 0);
    spool_job_t got;
    CHECK_MSG(spool_claim(spool, j.id, &got, fid, why, sizeof why) == 0, "%s", why);
    CHECK(!strcmp(got.id, j.id) && !strcmp(got.circuit, "mul") && got.n_parts == 2);
    CHECK(path_exists(tmp_path("sm-spool/active/20200101T000000.000000-c1a1a1/job.ini")));
    CHECK(!path_exists(tmp_path("sm-spool/active/20200101T000000.000000-c1a1a1/proof-0.json")));
    CHECK_EQ_INT(spool_claim(spool, j.id, &got, fid, why, sizeof why), -ENOENT); /* taken */
    /* a second job of that id: refused while the first is active, failed aside under a new id */
    CHECK(mkdir(dir, 0755) == 0);
    CHECK_EQ_INT(spool_claim(spool, j.id, &got, fid, why, sizeof why), -ECANCELED);
    CHECK_STR_CONTAINS(why, "is already active");
    char aside[1400];
    spool_path(aside, sizeof aside, spool, SPOOL_FAILED, fid);
    CHECK(path_exists(aside) && strcmp(fid, j.id));
    /* a file in incoming/ is not a job */
    CHECK(write_text(tmp_path("sm-spool/incoming/junk"), "x") == 0);
    CHECK_EQ_INT(spool_claim(spool, "junk", &got, fid, why, sizeof why), -ECANCELED);
    CHECK_STR_CONTAINS(why, "not a job directory");
    /* the end, twice: the second finds it moved */
    spool_part_result_t parts[2] = {{.status = "done", .gpu_ms = 1.5, .prove_count = 1}, {.status = "failed"}};
    spool_result_t r = {.job = j.id, .status = "done", .circuit = "mul", .error = "", .prio = 1,
                        .submitted_ns = 5, .total_ms = 2.25, .n_parts = 2, .parts = parts};
    CHECK_MSG(spool_complete(spool, &r, why, sizeof why) == 0, "%s", why);
    CHECK_MSG(spool_complete(spool, &r, why, sizeof why) == 0, "%s", why);
    CHECK_EQ_INT(spool_job_place(spool, j.id), SPOOL_DONE);
    spool_path(dir, sizeof dir, spool, SPOOL_DONE, j.id);
    int dfd = spool_open_dir(dir);
    CHECK(dfd >= 0);
    spool_result_t back;
    CHECK_MSG(spool_read_result(dfd, &back, why, sizeof why) == 0, "%s", why);
    close(dfd);
    CHECK(!strcmp(back.job, j.id) && !strcmp(back.status, "done") && back.prio == 1 && back.submitted_ns == 5);
    CHECK(back.n_parts == 2 && !strcmp(back.parts[0].status, "done") && back.parts[0].gpu_ms == 1.5 &&
          back.parts[0].prove_count == 1 && !strcmp(back.parts[1].status, "failed"));
    spool_result_free(&back);
    /* cancel: a finished job stays, an unknown one is none, an incoming one is failed as cancelled */
    spool_place_t place;
    CHECK_EQ_INT(spool_cancel(spool, j.id, &place, why, sizeof why), -EALREADY);
    CHECK_EQ_INT(place, SPOOL_DONE);
    CHECK_EQ_INT(spool_cancel(spool, "20200101T000000.000000-eeeeee", &place, why, sizeof why), -ESRCH);
    CHECK(mkdir(tmp_path("sm-spool/incoming/20200101T000000.000000-cccccc"), 0755) == 0);
    CHECK_EQ_INT(spool_cancel(spool, "20200101T000000.000000-cccccc", &place, why, sizeof why), 0);
    CHECK_STR_CONTAINS(read_text(tmp_path("sm-spool/failed/20200101T000000.000000-cccccc/result.json")), "cancelled");
    return 0;
}

/* A result.json that is a FIFO or a symbolic link is refused, never blocked on or followed. */
TEST(spool_read_result_refuses_fifo_and_link) {
    const char *dir = tmp_path("rr-dir");
    CHECK(mkdir(dir, 0755) == 0);
    CHECK(mkfifo(tmp_path("rr-dir/result.json"), 0644) == 0);
    int dfd = spool_open_dir(dir);
    char why[600];
    spool_result_t r;
    CHECK(spool_read_result(dfd, &r, why, sizeof why) < 0);
    CHECK(unlink(tmp_path("rr-dir/result.json")) == 0);
    CHECK(write_text(tmp_path("rr-elsewhere.json"), "{\"status\": \"done\", \"partitions\": []}") == 0);
    CHECK(symlink(tmp_path("rr-elsewhere.json"), tmp_path("rr-dir/result.json")) == 0);
    CHECK(spool_read_result(dfd, &r, why, sizeof why) < 0);
    close(dfd);
    return 0;
}

/* The spool names a partition's files, and reads proofs and public signals back with one bound for
 * every reader (before, the API and a restart's check read at most 1 MiB, the fleet 16 MiB: a
 * public-<k>.json of 13,000-odd signals was null in the API and failed the check). */
TEST(spool_part_files) {
    char name[SPOOL_FILE_NAME_MAX];
    CHECK(!strcmp(spool_file_name(name, SPOOL_F_WITNESS, 7), "witness-7.wtns"));
    CHECK(!strcmp(spool_file_name(name, SPOOL_F_INPUT, 7), "input-7.json"));
    CHECK(!strcmp(spool_file_name(name, SPOOL_F_PROOF, 4294967295u), "proof-4294967295.json"));
    CHECK(!strcmp(spool_file_name(name, SPOOL_F_PUBLIC, 0), "public-0.json"));
    const char *dir = tmp_path("part-dir");
    CHECK(mkdir(dir, 0755) == 0);
    int dfd = spool_open_dir(dir);
    CHECK(dfd >= 0);
    /* 2 MiB of public signals, read whole */
    size_t n = 2u << 20;
    char *big = malloc(n + 1);
    CHECK(big != NULL);
    memset(big, '1', n);
    big[0] = '[', big[n - 1] = ']';
    CHECK(write_file(tmp_path("part-dir/public-3.json"), big, n) == 0);
    char *text = NULL, why[600];
    size_t len = 0;
    CHECK_EQ_INT(spool_read_part(dfd, SPOOL_F_PUBLIC, 3, &text, &len, why, sizeof why), 0);
    CHECK(len == n && text[n] == 0 && !memcmp(text, big, n));
    free(text);
    free(big);
    /* over the bound: refused, naming the file */
    int fd = open(tmp_path("part-dir/proof-3.json"), O_CREAT | O_WRONLY, 0644);
    CHECK(fd >= 0 && ftruncate(fd, (off_t)SPOOL_PART_JSON_MAX + 1) == 0);
    close(fd);
    CHECK(spool_read_part(dfd, SPOOL_F_PROOF, 3, &text, &len, why, sizeof why) < 0);
    CHECK_STR_CONTAINS(why, "proof-3.json");
    /* a FIFO and a link where a proof belongs: refused, never blocked on or followed */
    CHECK(mkfifo(tmp_path("part-dir/proof-4.json"), 0644) == 0);
    CHECK(spool_read_part(dfd, SPOOL_F_PROOF, 4, &text, &len, why, sizeof why) < 0);
    CHECK(symlink(tmp_path("part-dir/public-3.json"), tmp_path("part-dir/public-5.json")) == 0);
    CHECK(spool_read_part(dfd, SPOOL_F_PUBLIC, 5, &text, &len, why, sizeof why) < 0);
    CHECK(spool_read_part(dfd, SPOOL_F_PUBLIC, 6, &text, &len, why, sizeof why) == -ENOENT);
    close(dfd);
    return 0;
}

/* ENOSPC while copying an input is said as such and leaves nothing (needs root for a small tmpfs). */
TEST(spool_copy_in_full_disk) {
    const char *mnt = tmp_path("copy-full");
    CHECK(mkdir(mnt, 0755) == 0);
    if (mount("zkpipe-test", mnt, "tmpfs", 0, "size=64k") < 0) return TEST_SKIP;
    static char big[256 << 10];
    memset(big, 7, sizeof big);
    int r = write_file(tmp_path("copy-big"), big, sizeof big);
    int dfd = spool_open_dir(mnt);
    char why[512] = "";
    int rc = r == 0 && dfd >= 0 ? spool_copy_in(tmp_path("copy-big"), dfd, "w0", sizeof big, why, sizeof why) : -EIO;
    struct stat st;
    bool left = dfd >= 0 && fstatat(dfd, "w0", &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (dfd >= 0) close(dfd);
    umount(mnt);
    CHECK_EQ_INT(rc, -ENOSPC);
    CHECK_STR_CONTAINS(why, "cannot copy into the spool: no space left on the spool's file system");
    CHECK(!left);
    return 0;
}
