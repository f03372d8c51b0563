/* The ground floor (base/): the one whole-file reader, the one atomic writer and the flat-folder
 * remover (file.h), and the test hooks (testpoint.h). Everything happens in one temporary folder
 * made by the setup and removed by the teardown; the test hooks, which read the environment once
 * per process, run in forked children. (The UTF-8 helpers are tests/test_text.c's.) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/align.h"
#include "base/file.h"
#include "base/lazylib.h"
#include "base/mem.h"
#include "base/testpoint.h"
#include "smaps.h"
#include "test.h"

#define TMPDIR_NAME "zkpipe-test-base"
#include "tmpdir.h"



/* ---- the reader ---- */

/* Only a regular file is opened; a FIFO is refused at once (never waited on), a link with
 * FILE_NOFOLLOW is refused by name, followed without it. */
TEST(file_open_regular_only) {
    const char *dir = tmp_path("open-file");
    CHECK(mkdir(dir, 0755) == 0);
    CHECK(write_text(tmp_path("open-file/w"), "data") == 0);
    CHECK(symlink(tmp_path("open-file/w"), tmp_path("open-file/link")) == 0);
    CHECK(mkfifo(tmp_path("open-file/fifo"), 0644) == 0);
    CHECK(mkdir(tmp_path("open-file/sub"), 0755) == 0);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    CHECK(dfd >= 0);
    char why[256];
    struct stat st;
    int fd = file_open_regular(dfd, "w", FILE_NOFOLLOW, &st, why, sizeof why);
    CHECK(fd >= 0 && st.st_size == 4);
    CHECK_EQ_INT(fcntl(fd, F_GETFL) & O_NONBLOCK, 0); /* blocking again once open */
    close(fd);
    CHECK_EQ_INT(file_open_regular(dfd, "link", FILE_NOFOLLOW, NULL, why, sizeof why), -ELOOP);
    CHECK_STR_CONTAINS(why, "link: is a symbolic link");
    fd = file_open_regular(dfd, "link", 0, NULL, why, sizeof why);
    CHECK(fd >= 0);
    close(fd);
    CHECK_EQ_INT(file_open_regular(dfd, "fifo", FILE_NOFOLLOW, NULL, why, sizeof why), -EINVAL);
    CHECK_STR_CONTAINS(why, "fifo: not a regular file (a FIFO)");
    CHECK_EQ_INT(file_open_regular(dfd, "sub", 0, NULL, why, sizeof why), -EINVAL);
    CHECK_STR_CONTAINS(why, "sub: not a regular file (a directory)");
    CHECK_EQ_INT(file_open_regular(AT_FDCWD, "/dev/zero", 0, NULL, why, sizeof why), -EINVAL);
    CHECK_STR_CONTAINS(why, "/dev/zero: not a regular file (a character device)");
    CHECK_EQ_INT(file_open_regular(dfd, "none", 0, NULL, why, sizeof why), -ENOENT);
    CHECK_STR_CONTAINS(why, "none: cannot open: ");
    close(dfd);
    return 0;
}

/* A whole read: pad bytes before, a NUL after, bounded by the cap; a file whose size is not what
 * fstat said (here a /proc file, size 0 but not empty) is refused, never read without end. */
TEST(file_read_whole_bounded) {
    const char *p = tmp_path("eleven");
    CHECK(write_text(p, "hello world") == 0);
    char *buf = NULL, why[256];
    size_t len = 0;
    CHECK_EQ_INT(file_read(AT_FDCWD, p, 0, 0, 8, &buf, &len, why, sizeof why), 0);
    CHECK(len == 11 && !memcmp(buf + 8, "hello world", 11) && buf[8 + 11] == 0);
    free(buf);
    CHECK_EQ_INT(file_read(AT_FDCWD, p, 0, 11, 0, &buf, &len, why, sizeof why), 0); /* the cap itself is fine */
    free(buf);
    CHECK_EQ_INT(file_read(AT_FDCWD, p, 0, 5, 0, &buf, &len, why, sizeof why), -EFBIG);
    CHECK_STR_CONTAINS(why, "eleven: 11 bytes, more than the 5 it can be");
    const char *e = tmp_path("empty");
    CHECK(write_text(e, "") == 0);
    CHECK_EQ_INT(file_read(AT_FDCWD, e, 0, 0, 0, &buf, &len, why, sizeof why), 0);
    CHECK(len == 0 && buf[0] == 0);
    free(buf);
    CHECK_EQ_INT(file_read(AT_FDCWD, "/proc/self/status", 0, 0, 0, &buf, &len, why, sizeof why), -EIO);
    CHECK_STR_CONTAINS(why, "/proc/self/status: its size is 0 bytes but more than 0 were read (the file changed");
    /* an fd of something else than a regular file is refused by file_read_fd too */
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    CHECK(fd >= 0);
    CHECK_EQ_INT(file_read_fd(fd, "null", 0, 0, &buf, &len, why, sizeof why), -EINVAL);
    CHECK_STR_CONTAINS(why, "null: not a regular file (a character device)");
    close(fd);
    return 0;
}

/* ---- the writer ---- */

TEST(file_write_atomic_replaces) {
    const char *dir = tmp_path("atomic");
    CHECK(mkdir(dir, 0755) == 0);
    const char *path = tmp_path("atomic/result.json");
    CHECK_EQ_INT(file_write_atomic(path, "old", 3), 0);
    CHECK(!strcmp(read_text(path), "old"));
    CHECK_EQ_INT(count_tmp(dir), 0);
    /* a reader that opened the old file keeps reading the old file whole: it was replaced by a
     * rename, not rewritten in place */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    CHECK(fd >= 0);
    struct stat before, after;
    CHECK(fstat(fd, &before) == 0);
    static const char neu[] = "{\"status\": \"done\"}\n";
    CHECK_EQ_INT(file_write_atomic(path, neu, sizeof neu - 1), 0);
    char buf[16] = "";
    CHECK_EQ_INT(pread(fd, buf, sizeof buf - 1, 0), 3);
    close(fd);
    CHECK(!strcmp(buf, "old"));
    CHECK(!strcmp(read_text(path), neu));
    CHECK(stat(path, &after) == 0);
    CHECK(before.st_ino != after.st_ino);
    CHECK_EQ_INT(after.st_size, sizeof neu - 1);
    CHECK_EQ_INT(count_tmp(dir), 0);
    /* an empty file is a file too */
    CHECK_EQ_INT(file_write_atomic(path, "", 0), 0);
    CHECK(stat(path, &after) == 0 && after.st_size == 0);
    /* a bare name is written in the current folder */
    char cwd[1024];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    CHECK(chdir(dir) == 0);
    CHECK_EQ_INT(file_write_atomic("bare", "b", 1), 0);
    CHECK(chdir(cwd) == 0);
    CHECK(!strcmp(read_text(tmp_path("atomic/bare")), "b"));
    return 0;
}

TEST(file_write_atomic_errors) {
    const char *dir = tmp_path("atomic-err");
    CHECK(mkdir(dir, 0755) == 0);
    CHECK_EQ_INT(file_write_atomic(tmp_path("atomic-err/none/x"), "x", 1), -ENOENT);
    /* a folder where the file belongs: refused, the folder kept, no temporary left */
    CHECK(mkdir(tmp_path("atomic-err/result.json"), 0755) == 0);
    CHECK(write_text(tmp_path("atomic-err/result.json/inside"), "keep") == 0);
    int r = file_write_atomic(tmp_path("atomic-err/result.json"), "x", 1);
    CHECK_MSG(r == -EISDIR || r == -ENOTEMPTY || r == -EEXIST, "%d", r);
    CHECK(is_dir(tmp_path("atomic-err/result.json")));
    CHECK(!strcmp(read_text(tmp_path("atomic-err/result.json/inside")), "keep"));
    CHECK_EQ_INT(count_tmp(dir), 0);
    return 0;
}

/* A link planted where the file goes is replaced, never written through. */
/* Several files at once: both in place, no temporary left; a name too long fails the whole call
 * with nothing renamed; more than FILE_ATOMIC_MAX is refused. */
TEST(file_write_atomic_files_together) {
    const char *dir = tmp_path("write-files");
    CHECK(mkdir(dir, 0755) == 0);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    CHECK(dfd >= 0);
    file_atomic_t f[2] = {{"public-0.json", "[]", 2}, {"proof-0.json", "{}", 2}};
    CHECK_EQ_INT(file_write_atomic_files_at(dfd, f, 2, NULL, -1), 0);
    CHECK(!strcmp(read_text(tmp_path("write-files/public-0.json")), "[]"));
    CHECK(!strcmp(read_text(tmp_path("write-files/proof-0.json")), "{}"));
    CHECK_EQ_INT(count_tmp(dir), 0);
    char longname[300];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    file_atomic_t g[2] = {{"public-1.json", "[]", 2}, {longname, "{}", 2}};
    CHECK_EQ_INT(file_write_atomic_files_at(dfd, g, 2, NULL, -1), -ENAMETOOLONG);
    CHECK(access(tmp_path("write-files/public-1.json"), F_OK) != 0);
    CHECK_EQ_INT(count_tmp(dir), 0);
    file_atomic_t many[FILE_ATOMIC_MAX + 1] = {{0}};
    CHECK_EQ_INT(file_write_atomic_files_at(dfd, many, FILE_ATOMIC_MAX + 1, NULL, -1), -E2BIG);
    close(dfd);
    return 0;
}

TEST(file_write_atomic_never_follows_a_link) {
    const char *dir = tmp_path("write-at");
    CHECK(mkdir(dir, 0755) == 0);
    CHECK(write_text(tmp_path("victim"), "precious") == 0);
    CHECK(symlink(tmp_path("victim"), tmp_path("write-at/proof-0.json")) == 0);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    CHECK(dfd >= 0);
    CHECK_EQ_INT(file_write_atomic_at(dfd, "proof-0.json", "{}", 2, NULL, -1), 0);
    CHECK(!strcmp(read_text(tmp_path("victim")), "precious"));
    struct stat st;
    CHECK(lstat(tmp_path("write-at/proof-0.json"), &st) == 0 && S_ISREG(st.st_mode));
    CHECK(!strcmp(read_text(tmp_path("write-at/proof-0.json")), "{}"));
    CHECK_EQ_INT(count_tmp(dir), 0);
    close(dfd);
    return 0;
}

/* ---- the remover ---- */

/* A flat folder goes with its files; a link inside is removed, not followed; a link given as the
 * folder is removed itself, its target kept. */
TEST(file_remove_flat_dir) {
    CHECK(mkdir(tmp_path("flat"), 0755) == 0);
    CHECK(write_text(tmp_path("flat/a"), "a") == 0);
    CHECK(write_text(tmp_path("flat/.b.tmp.1"), "b") == 0);
    CHECK(write_text(tmp_path("keep"), "keep") == 0);
    CHECK(symlink(tmp_path("keep"), tmp_path("flat/link")) == 0);
    file_remove_flat_dir(tmp_path("flat"));
    struct stat st;
    CHECK(lstat(tmp_path("flat"), &st) < 0 && errno == ENOENT);
    CHECK(!strcmp(read_text(tmp_path("keep")), "keep"));
    CHECK(mkdir(tmp_path("target"), 0755) == 0);
    CHECK(write_text(tmp_path("target/x"), "x") == 0);
    CHECK(symlink(tmp_path("target"), tmp_path("dirlink")) == 0);
    file_remove_flat_dir(tmp_path("dirlink"));
    CHECK(lstat(tmp_path("dirlink"), &st) < 0);
    CHECK(!strcmp(read_text(tmp_path("target/x")), "x"));
    return 0;
}

TEST(align_up) {
    CHECK(align_up(0, 4096) == 0);
    CHECK(align_up(1, 4096) == 4096);
    CHECK(align_up(4096, 4096) == 4096);
    CHECK(align_up((2u << 20) + 1, 2u << 20) == 4u << 20);
    CHECK(align_up(10, 3) == 12);
    return 0;
}

/* ---- the test hooks ---- */

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A child for the test points: a pipe to it in fd, killed with its parent, ZKPIPE_TEST_DELAY and
 * ZKPIPE_TEST_PAUSE set to delay and pause (NULL: unset). Returns as fork does; -1 when the pipe or
 * the fork failed. */
static pid_t point_child(int fd[2], const char *delay, const char *pause) {
    if (pipe(fd)) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (delay) setenv("ZKPIPE_TEST_DELAY", delay, 1);
        else unsetenv("ZKPIPE_TEST_DELAY");
        if (pause) setenv("ZKPIPE_TEST_PAUSE", pause, 1);
        else unsetenv("ZKPIPE_TEST_PAUSE");
    }
    return pid;
}

/* How long test_point(point, part) took in a fresh child with that environment, in ms; with
 * pause set, it must not stop. */
static long point_ms(const char *delay, const char *point, int part) {
    int fd[2];
    pid_t pid = point_child(fd, delay, NULL);
    if (pid < 0) return -1;
    if (pid == 0) {
        uint64_t t0 = now_ns();
        test_point(point, part);
        long ms = (long)((now_ns() - t0) / 1000000);
        _exit(write(fd[1], &ms, sizeof ms) == sizeof ms ? 0 : 1);
    }
    close(fd[1]);
    long ms = -1;
    if (read(fd[0], &ms, sizeof ms) != sizeof ms) ms = -1;
    close(fd[0]);
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? ms : -1;
}

/* A library opened on first use: all symbols or none, the first outcome kept, errors named. */
static size_t (*p_strlen)(const char *);
static int (*p_abs)(int);
static void *p_nothing;

/* base/mem.h: big buffers zeroed, writable to their size, 2 MiB-aligned and advised for huge pages
 * from 1 MiB; small ones plain. */
TEST(mem_big_alloc_layout) {
    const size_t sizes[] = {1, 4096, (1u << 20) - 1, 1u << 20, (3u << 20) + 128, 5u << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i];
        uint8_t *p = mem_big_alloc(n);
        CHECK(p != NULL);
        CHECK(p[0] == 0 && p[n / 2] == 0 && p[n - 1] == 0);
        memset(p, 0xa5, n);
        CHECK(p[n - 1] == 0xa5);
        if (n >= (1u << 20)) {
            CHECK_EQ_INT((uintptr_t)p & ((2u << 20) - 1), 0);
            FILE *thp = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
            if (thp) { /* a kernel with THP: the advice is visible in the mapping's flags */
                fclose(thp);
                CHECK_MSG(smaps_advised_bytes((uintptr_t)p, (uintptr_t)p + 1) > 0, "%zu bytes at %p: not advised", n,
                          (void *)p);
            }
        }
        mem_big_free(p, n);
    }
    mem_big_free(NULL, 10);
    return 0;
}

TEST(lazylib_all_or_none) {
    const lazylib_sym_t good[] = {{"strlen", (void **)&p_strlen}, {"abs", (void **)&p_abs}};
    lazylib_t libc = LAZYLIB_INIT("libc.so.6", "libc6", good);
    char err[600] = "";
    CHECK_EQ_INT(lazylib_load(&libc, err, sizeof err), 0);
    CHECK(p_strlen && p_abs);
    CHECK_EQ_INT((int)p_strlen("four"), 4);
    CHECK_EQ_INT(p_abs(-3), 3);
    p_strlen = NULL;
    CHECK_EQ_INT(lazylib_load(&libc, err, sizeof err), 0); /* once: not resolved again */
    CHECK(!p_strlen);

    /* a symbol the library lacks: every slot NULL again, the symbol named */
    p_strlen = NULL, p_abs = NULL;
    const lazylib_sym_t partial[] = {{"strlen", (void **)&p_strlen}, {"zkpipe_no_such_function", &p_nothing},
                                     {"abs", (void **)&p_abs}};
    lazylib_t half = LAZYLIB_INIT("libc.so.6", "libc6", partial);
    CHECK_EQ_INT(lazylib_load(&half, err, sizeof err), -ELIBACC);
    CHECK_STR_CONTAINS(err, "libc.so.6 has no zkpipe_no_such_function");
    CHECK(!p_strlen && !p_nothing && !p_abs);
    err[0] = 0;
    half.syms = good, half.n_syms = 2; /* a table that would resolve now: the failure is kept */
    CHECK_EQ_INT(lazylib_load(&half, err, sizeof err), -ELIBACC);
    CHECK(!p_strlen && !p_abs);
    CHECK_STR_CONTAINS(err, "has no zkpipe_no_such_function");

    /* a library that is not installed: the package to install is named */
    const lazylib_sym_t one[] = {{"strlen", (void **)&p_strlen}};
    lazylib_t missing = LAZYLIB_INIT("libzkpipe-absent.so.9", "libzkpipe-absent9", one);
    CHECK_EQ_INT(lazylib_load(&missing, err, sizeof err), -ELIBACC);
    CHECK_STR_CONTAINS(err, "cannot load libzkpipe-absent.so.9 (Debian package libzkpipe-absent9)");
    CHECK(!p_strlen);
    return 0;
}

TEST(test_point_delay) {
    static const struct {
        const char *spec, *point;
        int part;
        bool sleeps;
    } cases[] = {
        {"synth.eval:300", "synth.eval", 0, true},    /* every partition */
        {"synth.eval:300:2", "synth.eval", 2, true},  /* that partition */
        {"synth.eval:300:2", "synth.eval", 1, false}, /* not another */
        {"synth.eval:300", "synth.evalx", 0, false},  /* the whole name */
        {"synth.evalx:300", "synth.eval", 0, false},  /* the whole name of the spec too */
        {"synth:300", "synth.eval", 0, false},        /* no prefix match */
        {"synth.eval", "synth.eval", 0, false},       /* no time: nothing */
        {"synth.eval:soon", "synth.eval", 0, false},  /* not a number: nothing */
        {"synth.eval:-300", "synth.eval", 0, false},  /* negative: nothing */
        {"gpu.prove:300,synth.eval:300:1", "synth.eval", 1, true},  /* the second of a list */
        {"gpu.prove:300,synth.eval:300:1", "synth.eval", 0, false}, /* with its part */
        {"gpu.prove:300,synth.eval:300:1", "gpu.prove", 0, true},   /* the first of it */
        {"gpu.prove:300,", "gpu.prove", 0, true},                   /* a trailing comma */
        {"synth.eval:300,gpu", "gpu.prove", 0, false},              /* no prefix match in a list */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        long ms = point_ms(cases[i].spec, cases[i].point, cases[i].part);
        CHECK_MSG(ms >= 0, "case %zu: the child failed", i);
        if (cases[i].sleeps)
            CHECK_MSG(ms >= 300, "case %zu (%s at %s:%d): slept %ld ms", i, cases[i].spec, cases[i].point,
                      cases[i].part, ms);
        else
            CHECK_MSG(ms < 150, "case %zu (%s at %s:%d): slept %ld ms", i, cases[i].spec, cases[i].point, cases[i].part,
                      ms);
    }
    return 0;
}

/* ZKPIPE_TEST_PAUSE=POINT:PART stops the process (SIGSTOP) the first time it reaches that point for
 * that partition, and only then. */
TEST(test_point_pause) {
    int fd[2];
    pid_t pid = point_child(fd, NULL, "gpu.prove:1");
    CHECK(pid >= 0);
    if (pid == 0) {
        test_point("gpu.prove", 0); /* another partition */
        test_point("gpu.load_key", 1);
        (void)!write(fd[1], "a", 1);
        test_point("gpu.prove", 1); /* stops here */
        (void)!write(fd[1], "b", 1);
        test_point("gpu.prove", 1); /* not twice */
        (void)!write(fd[1], "c", 1);
        _exit(0);
    }
    close(fd[1]);
    char c = 0;
    CHECK(read(fd[0], &c, 1) == 1 && c == 'a');
    int st;
    CHECK(waitpid(pid, &st, WUNTRACED) == pid);
    CHECK_MSG(WIFSTOPPED(st), "the child did not stop at gpu.prove:1");
    CHECK(fcntl(fd[0], F_SETFL, O_NONBLOCK) == 0);
    CHECK(read(fd[0], &c, 1) < 0 && errno == EAGAIN); /* stopped before it wrote 'b' */
    CHECK(fcntl(fd[0], F_SETFL, 0) == 0);
    kill(pid, SIGCONT);
    CHECK(waitpid(pid, &st, WUNTRACED) == pid);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child stopped again or failed (status %#x)", st);
    char rest[3] = "";
    CHECK(read(fd[0], rest, 2) == 2 && !memcmp(rest, "bc", 2));
    close(fd[0]);
    return 0;
}

static volatile sig_atomic_t stop;
static void on_term(int sig) {
    (void)sig;
    stop = 1;
}

/* A delay ends early once the stop flag given to test_point_stop_flag is set (a daemon's SIGTERM). */
TEST(test_point_delay_ends_at_stop) {
    int fd[2];
    pid_t pid = point_child(fd, "slow.step:3000", NULL);
    CHECK(pid >= 0);
    if (pid == 0) {
        struct sigaction sa = {0};
        sa.sa_handler = on_term;
        sigaction(SIGTERM, &sa, NULL);
        test_point_stop_flag(&stop);
        (void)!write(fd[1], "s", 1);
        uint64_t t0 = now_ns();
        test_point("slow.step", 0);
        long ms = (long)((now_ns() - t0) / 1000000);
        _exit(write(fd[1], &ms, sizeof ms) == sizeof ms ? 0 : 1);
    }
    close(fd[1]);
    char c;
    CHECK(read(fd[0], &c, 1) == 1);
    usleep(200000);
    kill(pid, SIGTERM);
    long ms = -1;
    CHECK(read(fd[0], &ms, sizeof ms) == sizeof ms);
    close(fd[0]);
    int st;
    waitpid(pid, &st, 0);
    CHECK_MSG(ms >= 150 && ms < 2000, "the delay took %ld ms", ms);
    return 0;
}
