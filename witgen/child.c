/* A native witness generator (circom's --c output, witnesscalc) run as a child process:
 * `PROGRAM [ARGS...] input.json out.wtns`, with RLIMIT_AS as the memory limit, stdin from /dev/null
 * and stdout/stderr into a temporary file whose last line goes into the error message.
 *
 * Nothing the generator starts outlives it: between the caller and the generator sits a reaper, a
 * fork of the caller that is a child subreaper (PR_SET_CHILD_SUBREAPER), so every descendant the
 * generator leaves behind, even one that left its process group and session with setsid, becomes
 * the reaper's child. When the generator ends, or the reaper gets SIGTERM (a timeout or a stop of
 * the caller, or its PDEATHSIG: the caller died, even by SIGKILL), it kills its children until it
 * has none and exits the way the generator did. This needs no privilege, no cgroup and no pid
 * namespace, so it works as root and as any user; only a SIGKILL of the reaper itself would let a
 * detached descendant go (under systemd the unit's cgroup still ends them). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "witgen.h"

#define MAX_ARGS 32

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The last non-empty line of the child's output (at most 200 bytes). */
static void last_line(int fd, char *out, size_t cap) {
    out[0] = 0;
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_size == 0) return;
    off_t off = st.st_size > 4096 ? st.st_size - 4096 : 0;
    char buf[4097];
    ssize_t n = pread(fd, buf, sizeof buf - 1, off);
    if (n <= 0) return;
    buf[n] = 0;
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) buf[--n] = 0;
    const char *s = strrchr(buf, '\n');
    s = s ? s + 1 : buf;
    size_t k = strlen(s) < cap - 1 ? strlen(s) : cap - 1;
    memcpy(out, s, k);
    out[k] = 0;
}

/* In the reaper: SIGKILL to every child, wait for one, again, until there are none (a killed child's
 * own children become ours as it dies). Without /proc: the generator's process group. Only
 * async-signal-safe calls. */
static void kill_children(pid_t gen) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
    for (;;) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            char buf[4096];
            ssize_t n = read(fd, buf, sizeof buf - 1);
            close(fd);
            long pid = 0;
            for (ssize_t i = 0; i < n; i++) {
                if (buf[i] >= '0' && buf[i] <= '9') {
                    pid = pid * 10 + (buf[i] - '0');
                } else {
                    if (pid > 0) kill((pid_t)pid, SIGKILL);
                    pid = 0;
                }
            }
            if (pid > 0) kill((pid_t)pid, SIGKILL);
        } else {
            kill(-gen, SIGKILL);
        }
        int st;
        if (waitpid(-1, &st, 0) < 0 && errno == ECHILD) return;
    }
}

/* The reaper (see the top): forks the generator, waits for it or for SIGTERM, kills what is left
 * and exits as the generator did. */
static _Noreturn void reaper(pid_t parent, char **argv, const witgen_cmd_t *c, int logfd) {
    sigset_t all, waitset;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    setpgid(0, 0);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);
    signal(SIGCHLD, SIG_DFL);
    pid_t self = getpid();
    pid_t gen = fork();
    if (gen < 0) _exit(127);
    if (gen == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != self) _exit(127);
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0) dup2(nul, 0);
        dup2(logfd, 1);
        dup2(logfd, 2);
        if (c->memory_limit) {
            struct rlimit rl = {c->memory_limit, c->memory_limit};
            setrlimit(RLIMIT_AS, &rl);
        }
        for (int s = 1; s < NSIG; s++)
            if (s != SIGKILL && s != SIGSTOP) signal(s, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execvp(argv[0], argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    sigemptyset(&waitset);
    sigaddset(&waitset, SIGCHLD);
    sigaddset(&waitset, SIGTERM);
    int st = 0;
    bool ended = false;
    while (!ended) {
        siginfo_t si;
        int sig = sigwaitinfo(&waitset, &si);
        if (sig == SIGTERM) break;
        pid_t w;
        int ws;
        while ((w = waitpid(-1, &ws, WNOHANG)) > 0)
            if (w == gen) st = ws, ended = true;
    }
    if (!ended) kill(gen, SIGKILL);
    kill_children(gen);
    if (!ended) _exit(125);
    if (WIFEXITED(st)) _exit(WEXITSTATUS(st));
    /* died of a signal: the same signal for our parent (no core file of the reaper) */
    int sig = WTERMSIG(st);
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    signal(sig, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    kill(self, sig);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    _exit(128 + sig);
}

/* SIGTERM to the reaper (it kills the generator and all it started) and its end; SIGKILL to its
 * group if it has not ended within 5 s. */
static void end_reaper(pid_t pid, int pfd, int *st) {
    kill(pid, SIGTERM);
    uint64_t until = now_ms() + 5000;
    for (;;) {
        pid_t w = waitpid(pid, st, WNOHANG);
        if (w == pid || (w < 0 && errno != EINTR)) return;
        if (now_ms() >= until) break;
        if (pfd >= 0) {
            struct pollfd p = {.fd = pfd, .events = POLLIN};
            poll(&p, 1, 100);
        } else {
            poll(NULL, 0, 20);
        }
    }
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    while (waitpid(pid, st, 0) < 0 && errno == EINTR) {}
}

int witgen_run_cmd(const witgen_cmd_t *c, const char *input_path, const char *out_path, zk_err_t *err) {
    char prog[1024];
    snprintf(prog, sizeof prog, "%s", c->program);
    char *argv[MAX_ARGS + 3];
    int argc = 0;
    for (char *save = NULL, *t = strtok_r(prog, " \t", &save); t && argc < MAX_ARGS; t = strtok_r(NULL, " \t", &save))
        argv[argc++] = t;
    if (argc == 0) return zk_fail(err, EINVAL, "witness_cmd is empty");
    argv[argc++] = (char *)input_path;
    argv[argc++] = (char *)out_path;
    argv[argc] = NULL;
    char logname[] = "/tmp/zkpipe-witgen-XXXXXX";
    int logfd = mkstemp(logname);
    if (logfd < 0) return zk_fail(err, errno, "cannot create a temporary file: %s", strerror(errno));
    unlink(logname);
    unlink(out_path); /* a file left from an earlier, interrupted run is not this run's output */
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(logfd);
        return zk_fail(err, errno, "%s: cannot fork: %s", argv[0], strerror(errno));
    }
    if (pid == 0) reaper(parent, argv, c, logfd);
    setpgid(pid, pid);
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    uint64_t deadline = c->timeout_s ? now_ms() + (uint64_t)c->timeout_s * 1000 : UINT64_MAX;
    bool timed_out = false, stopped = false;
    int st = 0;
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) break;
        uint64_t t = now_ms();
        if (t >= deadline || (c->stop && c->stop(c->stop_ctx))) {
            timed_out = t >= deadline;
            stopped = !timed_out;
            end_reaper(pid, pfd, &st);
            break;
        }
        if (c->tick) c->tick(c->tick_ctx);
        uint64_t left = deadline - t;
        int ms = left < 100 ? (int)left : 100;
        if (pfd >= 0) {
            struct pollfd p = {.fd = pfd, .events = POLLIN};
            poll(&p, 1, ms);
        } else {
            poll(NULL, 0, ms);
        }
    }
    if (pfd >= 0) close(pfd);
    char line[220];
    last_line(logfd, line, sizeof line);
    close(logfd);
    const char *sep = line[0] ? ": " : "";
    if (timed_out) return zk_fail(err, ETIMEDOUT, "%s: ran past its timeout of %u s", argv[0], c->timeout_s);
    if (stopped) return zk_fail(err, ECANCELED, "%s: stopped: cancelled", argv[0]);
    if (WIFSIGNALED(st))
        return zk_fail(err, EIO, "%s: killed by signal %d (%s)%s%s", argv[0], WTERMSIG(st), strsignal(WTERMSIG(st)),
                       sep, line);
    if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
        return zk_fail(err, EIO, "%s: exited with status %d%s%s", argv[0], WEXITSTATUS(st), sep, line);
    struct stat os;
    if (lstat(out_path, &os) < 0 || !S_ISREG(os.st_mode))
        return zk_fail(err, EIO, "%s: exited 0 but wrote no witness file %s", argv[0], out_path);
    return 0;
}
