/* zk/threads.h: the default thread count follows the affinity mask, and zk_threads_place binds
 * each worker of a team that takes every CPU to a CPU of its own. */
#include <omp.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "zk/threads.h"

static int mask_count(void) {
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
}

/* A child held to one CPU (as under taskset -c) gets a default of 1 thread and binds nothing. */
TEST(default_follows_the_mask) {
    CHECK_EQ_INT(zk_threads_default(), mask_count());
    cpu_set_t set;
    CHECK(sched_getaffinity(0, sizeof set, &set) == 0);
    int first = -1;
    for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
        if (CPU_ISSET(c, &set)) first = c;
    CHECK(first >= 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(first, &one);
        if (sched_setaffinity(0, sizeof one, &one) < 0) _exit(100);
        _exit(zk_threads_default() * 10 + zk_threads_place(2));
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st));
    CHECK_EQ_INT(WEXITSTATUS(st), 10);
    return 0;
}

TEST(nothing_bound_when_told_or_shared) {
    int n = zk_threads_default();
    CHECK_EQ_INT(zk_threads_place(1), 0);
    if (n > 2) CHECK_EQ_INT(zk_threads_place(n - 1), 0); /* fewer threads than CPUs: the box is shared */
    CHECK_EQ_INT(zk_threads_place(n + 1), 0);
    const char *vars[] = {"OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY"};
    for (int i = 0; i < 3; i++) {
        CHECK(setenv(vars[i], "false", 1) == 0);
        int r = zk_threads_place(n);
        unsetenv(vars[i]);
        CHECK_EQ_INT(r, 0);
    }
    return 0;
}

TEST(workers_bound_one_cpu_each) {
    int n = zk_threads_default();
    if (n < 2) {
        fprintf(stderr, "one CPU: nothing to bind\n");
        return TEST_SKIP;
    }
    if (getenv("OMP_PROC_BIND") || getenv("OMP_PLACES") || getenv("GOMP_CPU_AFFINITY")) return TEST_SKIP;
    CHECK_EQ_INT(zk_threads_place(n), n - 1);
    int cpu_of[CPU_SETSIZE], count_of[CPU_SETSIZE];
#pragma omp parallel num_threads(n)
    {
        cpu_set_t set;
        int me = omp_get_thread_num();
        count_of[me] = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
        cpu_of[me] = -1;
        for (int c = 0; c < CPU_SETSIZE && count_of[me] == 1; c++)
            if (CPU_ISSET(c, &set)) cpu_of[me] = c;
    }
    CHECK_EQ_INT(count_of[0], n); /* the caller keeps its whole mask, for what it starts later */
    CHECK_EQ_INT(mask_count(), n);
    for (int t = 1; t < n; t++) {
        CHECK_EQ_INT(count_of[t], 1);
        for (int u = 1; u < t; u++) CHECK(cpu_of[u] != cpu_of[t]);
    }
    return 0;
}
