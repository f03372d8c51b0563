/* A native witness generator (circom's --c output, witnesscalc) run as a child process:
 * `PROGRAM [ARGS...] input.json out.wtns`. The child gets its own process group (killed as a whole
 * on timeout), RLIMIT_AS as the memory limit, SIGKILL when its parent dies (so a killed synthd
 * leaves no generator behind), stdin from /dev/null and stdout/stderr into a temporary file whose
 * last line goes into the error message. */
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
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0) dup2(nul, 0);
        dup2(logfd, 1);
        dup2(logfd, 2);
        if (c->memory_limit) {
            struct rlimit rl = {c->memory_limit, c->memory_limit};
            setrlimit(RLIMIT_AS, &rl);
        }
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        for (int s = 1; s < NSIG; s++)
            if (s != SIGKILL && s != SIGSTOP) signal(s, SIG_DFL);
        execvp(argv[0], argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid);
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    uint64_t deadline = c->timeout_s ? now_ms() + (uint64_t)c->timeout_s * 1000 : UINT64_MAX;
    bool timed_out = false;
    int st = 0;
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) break;
        uint64_t t = now_ms();
        if (t >= deadline) {
            timed_out = true;
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
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
    kill(-pid, SIGKILL); /* anything the generator left running in its group */
    char line[220];
    last_line(logfd, line, sizeof line);
    close(logfd);
    const char *sep = line[0] ? ": " : "";
    if (timed_out) return zk_fail(err, ETIMEDOUT, "%s: ran past its timeout of %u s", argv[0], c->timeout_s);
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
