/* witness_cmd children that try to outlive their run (issue 25, point 13): a descendant that left
 * the generator's process group and session with setsid dies when the run ends (the generator
 * exited, or ran past its timeout) and when the caller is killed -9 meanwhile (witgen/child.c: the
 * subreaper between the caller and the generator). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../test.h"
#include "witgen/witgen.h"

static char dir[] = "/tmp/zkpipe-test-witrun-XXXXXX";
static char script[300], pidfile[300];

TEST_SETUP() {
    if (!mkdtemp(dir)) return 1;
    snprintf(script, sizeof script, "%s/gen.sh", dir);
    snprintf(pidfile, sizeof pidfile, "%s/detached.pid", dir);
    FILE *f = fopen(script, "w");
    if (!f) return 1;
    /* a descendant in its own session, then: exit 3, or hang */
    fprintf(f,
            "#!/bin/sh\n"
            "setsid sh -c 'echo $$ >%s.tmp; mv %s.tmp %s; exec sleep 300' </dev/null >/dev/null 2>&1 &\n"
            "while [ ! -e %s ]; do sleep 0.02; done\n"
            "case $1 in\n"
            "exit) exit 3 ;;\n"
            "hang) exec sleep 300 ;;\n"
            "esac\n",
            pidfile, pidfile, pidfile, pidfile);
    fclose(f);
    return chmod(script, 0755) == 0 ? 0 : 1;
}

TEST_TEARDOWN() {
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : 1;
}

/* The detached descendant's pid (once the script wrote it), or -1. */
static pid_t detached_pid(double wait_s) {
    for (double t = 0; t <= wait_s; t += 0.02) {
        FILE *f = fopen(pidfile, "r");
        if (f) {
            int pid = -1;
            int n = fscanf(f, "%d", &pid);
            fclose(f);
            if (n == 1 && pid > 0) return pid;
        }
        nanosleep(&(struct timespec){0, 20000000}, NULL);
    }
    return -1;
}

/* Whether pid is gone (or a zombie nobody has reaped yet) within wait_s. */
static bool gone(pid_t pid, double wait_s) {
    char stat_path[64];
    snprintf(stat_path, sizeof stat_path, "/proc/%d/stat", (int)pid);
    for (double t = 0; t <= wait_s; t += 0.02) {
        FILE *f = fopen(stat_path, "r");
        if (!f) return true;
        char state = '?';
        int n = fscanf(f, "%*d %*s %c", &state);
        fclose(f);
        if (n == 1 && state == 'Z') return true;
        nanosleep(&(struct timespec){0, 20000000}, NULL);
    }
    kill(pid, SIGKILL); /* not ours to leave behind */
    return false;
}

static int run(const char *mode, unsigned timeout_s, zk_err_t *e) {
    char prog[400], out[400];
    snprintf(prog, sizeof prog, "%s %s", script, mode);
    snprintf(out, sizeof out, "%s/out.wtns", dir);
    unlink(pidfile);
    witgen_cmd_t c = {.program = prog, .timeout_s = timeout_s};
    return witgen_run_cmd(&c, "in.json", out, e);
}

TEST(detached_descendant_dies_when_the_generator_exits) {
    zk_err_t e = {{0}};
    CHECK(run("exit", 30, &e) < 0);
    CHECK_STR_CONTAINS(e.msg, "gen.sh: exited with status 3");
    pid_t pid = detached_pid(0);
    CHECK(pid > 0);
    if (pid > 0) CHECK_MSG(gone(pid, 2), "the detached descendant %d outlived the run", (int)pid);
    return 0;
}

TEST(detached_descendant_dies_at_the_timeout) {
    zk_err_t e = {{0}};
    CHECK(run("hang", 1, &e) < 0);
    CHECK_STR_CONTAINS(e.msg, "ran past its timeout of 1 s");
    pid_t pid = detached_pid(0);
    CHECK(pid > 0);
    if (pid > 0) CHECK_MSG(gone(pid, 2), "the detached descendant %d outlived the timeout", (int)pid);
    return 0;
}

TEST(detached_descendant_dies_with_the_caller) {
    unlink(pidfile);
    pid_t caller = fork();
    CHECK(caller >= 0);
    if (caller == 0) {
        zk_err_t e = {{0}};
        char prog[400], out[400];
        snprintf(prog, sizeof prog, "%s hang", script);
        snprintf(out, sizeof out, "%s/out.wtns", dir);
        witgen_cmd_t c = {.program = prog};
        witgen_run_cmd(&c, "in.json", out, &e);
        _exit(0);
    }
    pid_t pid = detached_pid(20);
    CHECK(pid > 0);
    kill(caller, SIGKILL); /* a synthd killed -9 while its witness_cmd runs */
    waitpid(caller, NULL, 0);
    if (pid > 0) CHECK_MSG(gone(pid, 5), "the detached descendant %d outlived its caller", (int)pid);
    return 0;
}
