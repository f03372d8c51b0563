/* bench/spawn_rss OUT PROGRAM [ARGS...]: runs PROGRAM (stdin, stdout, stderr inherited) and writes
 * "WALL_NS MAXRSS_KIB EXIT" to OUT: the wall time from fork to the end of wait4 and the child's
 * ru_maxrss. A process started straight from a large parent (bench/prove-compare's Python, ~33
 * MB) reports at least the parent's resident size as its ru_maxrss, because the kernel counts the
 * memory the child had before its exec; forked from this small program instead, the figure is the
 * prover's own (at least this launcher's ~1 MB). EXIT: the exit status, or 128 + the signal. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: spawn_rss OUT PROGRAM [ARGS...]\n");
        return 2;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid < 0) {
        perror("spawn_rss: fork");
        return 1;
    }
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        fprintf(stderr, "spawn_rss: %s: %s\n", argv[2], strerror(errno));
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) {
        perror("spawn_rss: wait4");
        return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    FILE *f = fopen(argv[1], "w");
    if (!f || fprintf(f, "%lld %ld %d\n", (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec),
                      ru.ru_maxrss, code) < 0 || fclose(f) != 0) {
        fprintf(stderr, "spawn_rss: %s: cannot write\n", argv[1]);
        return 1;
    }
    return 0;
}
