/* How many threads a proof takes by default, and on which CPUs its OpenMP workers run.
 *
 * zk_threads_default: the CPUs this process may run on (its affinity mask: taskset, systemd's
 * CPUAffinity=, a cgroup cpuset), not every online CPU, so that a proof held to 4 CPUs of 64 runs
 * 4 threads. It is libgomp's omp_get_num_procs(): where libgomp binds threads (OMP_PLACES,
 * OMP_PROC_BIND), it has bound the main thread to one place before main(), and only libgomp
 * still knows the mask the process started with.
 *
 * zk_threads_place: when a team of n threads takes every CPU of the mask (n equals
 * zk_threads_default()), each OpenMP worker of the calling thread's team is bound to one CPU of
 * its own, none to the CPU the calling thread is on; the calling thread itself is left unbound,
 * so that threads and processes it starts later inherit its whole mask. Unbound, libgomp's
 * workers spin at each region's barrier, and the kernel may start or wake a worker on the CPU
 * where its partner spins, until a scheduler time slice ends: on the 2-CPU machines of
 * bench/RESULTS.md a sha256 proof's synthesis had a median of 10 ms for a minimum of 3. Nothing is
 * bound when n is smaller (the process shares the machine by choice), when there is one CPU, or
 * when OMP_PROC_BIND, OMP_PLACES or GOMP_CPU_AFFINITY is set (libgomp binds, or not, as told:
 * OMP_PROC_BIND=false turns binding off). Call it once, before the first parallel region of the
 * calling thread. */
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

int zk_threads_default(void);
/* Returns the number of workers bound (0: none). */
int zk_threads_place(int threads);

#ifdef __cplusplus
}
#endif
