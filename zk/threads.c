/* Default thread count and worker placement (zk/threads.h). */
#include "threads.h"

#include <omp.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

int zk_threads_default(void) {
    /* libgomp's count: the calling thread's mask, or, when libgomp binds threads itself
     * (OMP_PLACES, OMP_PROC_BIND), the process's mask as it was before it bound this thread to
     * one place; sched_getaffinity would then say 1. */
    int n = omp_get_num_procs();
    return n > 0 ? n : 1;
}

int zk_threads_place(int threads) {
    if (threads < 2 || getenv("OMP_PROC_BIND") || getenv("OMP_PLACES") || getenv("GOMP_CPU_AFFINITY")) return 0;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) < 0 || CPU_COUNT(&set) != threads) return 0;
    int here = sched_getcpu();
    if (here < 0 || here >= CPU_SETSIZE || !CPU_ISSET(here, &set)) return 0;
    int cpus[CPU_SETSIZE], k = 0;
    for (int c = 0; c < CPU_SETSIZE && k < threads - 1; c++)
        if (c != here && CPU_ISSET(c, &set)) cpus[k++] = c;
    atomic_int arrived = 0, bound = 0;
    /* One thread more than there are CPUs: libgomp then spins only briefly while it starts the team
     * (its throttled spin count, for more threads than CPUs), instead of spinning on the CPU where
     * the kernel has queued the new worker, until a time slice ends. The extra thread is left
     * unbound; the next team, of `threads`, lets it exit. */
#pragma omp parallel num_threads(threads + 1)
    {
        int me = omp_get_thread_num(), team = omp_get_num_threads();
        if (me > 0 && me < threads && team >= threads) {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(cpus[me - 1], &one);
            if (sched_setaffinity(0, sizeof one, &one) == 0) atomic_fetch_add(&bound, 1);
        }
        /* Sleep, not spin, until every worker is placed: one that the kernel queued behind another
         * thread of the team on the same CPU runs at once, and leaves. */
        atomic_fetch_add(&arrived, 1);
        while (atomic_load(&arrived) < team) nanosleep(&(struct timespec){.tv_nsec = 20000}, NULL);
    }
    return atomic_load(&bound);
}
