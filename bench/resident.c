/* bench/resident: the daemon's resident-key path against one-shot provers, in one run. Loads a key
 * once as gpud does (gpud/backend_cpu.c: init with a precompute budget, load_key builds the window
 * tables), then proves the same witness N times, alternating in every round:
 *   resident, no tables     CPU backend, precompute 0 (zk_prove_core)
 *   resident, tables        CPU backend, precompute SIZE (zk_prove_core_fixed)
 *   resident, tables, lanes 2 proofs at once, the CPU backend with 2 lanes (set_lanes, as gpud with
 *                           [gpu] inflight = 2): each lane's core on a thread of its own with
 *                           threads / 2 OpenMP threads, the same tables (--lanes 2)
 *   zkpipe prove            the one-shot CLI, a process per proof
 *   rapidsnark              its prover, a process per proof (RAPIDSNARK=path or --rapidsnark)
 * A resident proof is synthesis + proving core + finalisation (the three daemons' work; no key
 * load); its first proof of each kind is checked with the native verifier. Printed: median wall
 * time per proof, CPU time (user+sys) per proof, proofs per minute per core (60 s / CPU time per
 * proof), the core's per-MSM times with and without tables, and the ratios, last.
 *
 * Usage: resident ZKEY WTNS [--rounds 5] [--threads 2] [--precompute 1G] [--lanes 2]
 *                 [--zkpipe build/cli/zkpipe] [--rapidsnark PATH]
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config/config.h"
#include "gpud/backend.h"
#include "zk/kernels.h"
#include "zk/msm_fixed.h"
#include "zk/verify.h"
#include "zk/wtns.h"
#include "zk/zkey.h"

extern char **environ;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_s(int who) {
    struct rusage ru;
    getrusage(who, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    double t[256];
    memcpy(t, v, (size_t)n * sizeof(double));
    qsort(t, (size_t)n, sizeof(double), cmp_d);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

static zk_zkey_t Z;
static zk_wtns_t W;
static zk_vk_t VK;
static int threads = 2;

/* One resident proof's stages after the core: r, s, finalize; verified when check. */
static int finish_proof(const zk_raw_t *raw, bool check) {
    uint8_t r[32], s[32];
    zk_proof_t pf;
    zk_err_t err;
    if (zk_random_rs(Z.curve, r, s) < 0 || zk_finalize(&Z, raw, r, s, &pf) < 0) return -1;
    if (check && zk_verify_proof(&VK, &pf, W.values + 32, Z.n_pub, &err) != 0) {
        fprintf(stderr, "resident: a proof does not verify: %s\n", err.msg);
        return -1;
    }
    return 0;
}

/* Synthesis, then the CPU backend's core on lane 0 (*core_cpu: its CPU time, gpud's part), then
 * finalisation. */
static int backend_proof(const zk_backend_ops_t *B, void *ctx, uint8_t *abc, zk_core_times_t *tm, double *core_cpu,
                         bool check) {
    size_t n = Z.domain_size;
    zk_err_t err;
    zk_raw_t raw;
    if (zk_synth(&Z, W.values, abc, abc + 32 * n, abc + 64 * n, threads) < 0) return -1;
    double c0 = cpu_s(RUSAGE_SELF);
    if (zk_backend_prove(B, ctx, &Z, W.values, abc, abc + 32 * n, abc + 64 * n, &raw, tm, &err) < 0) {
        fprintf(stderr, "resident: %s\n", err.msg);
        return -1;
    }
    *core_cpu = cpu_s(RUSAGE_SELF) - c0;
    return finish_proof(&raw, check);
}

typedef struct {
    const zk_backend_ops_t *B;
    void *ctx; /* the CPU backend with 2 lanes */
    int lane;
    uint8_t *abc;
    bool check;
    int rc;
    double core_wall; /* submit to collect */
} lane_t;

/* One lane's proof: synthesis on this thread, the core on the backend's lane (its own thread),
 * finalisation. */
static void *lane_main(void *arg) {
    lane_t *l = arg;
    size_t n = Z.domain_size;
    zk_raw_t raw;
    zk_err_t err;
    int half = threads / 2 > 0 ? threads / 2 : 1;
    l->rc = zk_synth(&Z, W.values, l->abc, l->abc + 32 * n, l->abc + 64 * n, half);
    double t0 = now_s();
    if (!l->rc &&
        (l->B->submit(l->ctx, l->lane, &Z, W.values, l->abc, l->abc + 32 * n, l->abc + 64 * n, &err) < 0 ||
         l->B->collect(l->ctx, l->lane, &raw, NULL, &err) < 0)) {
        fprintf(stderr, "resident: lane %d: %s\n", l->lane, err.msg);
        l->rc = -1;
    }
    l->core_wall = now_s() - t0;
    if (!l->rc) l->rc = finish_proof(&raw, l->check);
    return NULL;
}

/* Runs argv to completion; wall seconds and the child's CPU seconds, or -1. */
static int spawn_timed(char *const argv[], double *wall, double *cpu) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    double t0 = now_s();
    pid_t pid;
    int e = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (e) {
        fprintf(stderr, "resident: cannot run %s: %s\n", argv[0], strerror(e));
        return -1;
    }
    int st;
    struct rusage ru;
    if (wait4(pid, &st, 0, &ru) < 0) return -1;
    *wall = now_s() - t0;
    *cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    if (!WIFEXITED(st) || WEXITSTATUS(st)) {
        fprintf(stderr, "resident: %s failed (status %d)\n", argv[0], st);
        return -1;
    }
    return 0;
}

enum { K_PLAIN, K_TABLES, K_LANES, K_ZKPIPE, K_RAPID, K_COUNT };
static const char *const kind_name[K_COUNT] = {"resident, no tables", "resident, tables", "resident, tables, lanes",
                                               "zkpipe prove (one-shot)", "rapidsnark (one-shot)"};

int main(int argc, char **argv) {
    const char *zkey = NULL, *wtns = NULL, *zkpipe = "build/cli/zkpipe", *rapid = getenv("RAPIDSNARK");
    int rounds = 5, lanes = 0;
    uint64_t precompute = 1ull << 30;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--rounds") && v) rounds = atoi(v), i++;
        else if (!strcmp(a, "--threads") && v) threads = atoi(v), i++;
        else if (!strcmp(a, "--lanes") && v) lanes = atoi(v), i++;
        else if (!strcmp(a, "--zkpipe") && v) zkpipe = v, i++;
        else if (!strcmp(a, "--rapidsnark") && v) rapid = v, i++;
        else if (!strcmp(a, "--precompute") && v) {
            if (cfg_parse_size(v, &precompute) < 0) return fprintf(stderr, "resident: bad size %s\n", v), 2;
            i++;
        } else if (a[0] != '-' && !zkey) zkey = a;
        else if (a[0] != '-' && !wtns) wtns = a;
        else {
            fprintf(stderr, "usage: resident ZKEY WTNS [--rounds 5] [--threads 2] [--precompute 1G] [--lanes 2] "
                            "[--zkpipe PATH] [--rapidsnark PATH]\n");
            return 2;
        }
    }
    if (!zkey || !wtns || rounds < 1 || rounds > 256 || threads < 1 || (lanes && lanes != 2)) {
        fprintf(stderr, "usage: resident ZKEY WTNS [--rounds 1..256] [--threads N] [--precompute SIZE] [--lanes 2]\n");
        return 2;
    }
    zk_err_t err;
    if (zk_zkey_open(&Z, zkey, &err) < 0 || zk_wtns_load(&W, wtns, &err) < 0 ||
        zk_wtns_check_zkey(&W, wtns, &Z, zkey, &err) < 0 || zk_vk_from_zkey(&VK, &Z, &err) < 0) {
        fprintf(stderr, "resident: %s\n", err.msg);
        return 1;
    }
    double la[3] = {0};
    FILE *lf = fopen("/proc/loadavg", "r");
    if (lf) {
        if (fscanf(lf, "%lf %lf %lf", &la[0], &la[1], &la[2]) != 3) la[0] = -1;
        fclose(lf);
    }
    printf("key %s: %u wires, domain %u, %s; %d threads; precompute %.0f MiB; kernels: %s; load average %.2f\n", zkey,
           Z.n_vars, Z.domain_size, Z.curve->name, threads, precompute / 1048576.0, zk_kernels_describe(), la[0]);

    const zk_backend_ops_t *B = &zk_backend_cpu;
    void *plain, *tab;
    if (B->init(&plain, 0, threads, 0, &err) < 0 || B->load_key(plain, &Z, &err) < 0 ||
        B->init(&tab, 0, threads, precompute, &err) < 0) {
        fprintf(stderr, "resident: %s\n", err.msg);
        return 1;
    }
    double t0 = now_s(), c0 = cpu_s(RUSAGE_SELF);
    if (B->load_key(tab, &Z, &err) < 0) return fprintf(stderr, "resident: %s\n", err.msg), 1;
    printf("load_key with tables: %.2f s wall, %.2f s CPU; %s\n", now_s() - t0, cpu_s(RUSAGE_SELF) - c0,
           B->key_info(tab, &Z) ? B->key_info(tab, &Z) : "(no tables)");
    void *lctx = NULL;
    if (lanes) {
        t0 = now_s();
        if (B->init(&lctx, 0, threads, precompute, &err) < 0 || B->set_lanes(lctx, 2, &err) < 0 ||
            B->load_key(lctx, &Z, &err) < 0)
            return fprintf(stderr, "resident: %s\n", err.msg), 1;
        printf("the backend with 2 lanes, its tables built again: %.2f s\n", now_s() - t0);
    }

    uint8_t *abc = aligned_alloc(64, zk_abc_size(&Z));
    lane_t ln[2] = {{0}};
    for (int l = 0; l < 2 && lanes; l++) {
        ln[l].B = B, ln[l].ctx = lctx, ln[l].lane = l;
        ln[l].abc = aligned_alloc(64, zk_abc_size(&Z));
        if (!ln[l].abc) return fprintf(stderr, "resident: out of memory\n"), 1;
    }
    if (!abc) return fprintf(stderr, "resident: out of memory\n"), 1;
    char proof[] = "/tmp/zkpipe-resident-XXXXXX";
    if (!mkdtemp(proof)) return fprintf(stderr, "resident: mkdtemp: %s\n", strerror(errno)), 1;
    char pf[64], pb[64], th[16];
    snprintf(pf, sizeof pf, "%s/proof.json", proof);
    snprintf(pb, sizeof pb, "%s/public.json", proof);
    snprintf(th, sizeof th, "%d", threads);
    char *zk_argv[] = {(char *)zkpipe, "prove", "--threads", th, (char *)zkey, (char *)wtns, pf, pb, NULL};
    char *rs_argv[] = {(char *)rapid, (char *)zkey, (char *)wtns, pf, pb, NULL};
    bool have_zkpipe = access(zkpipe, X_OK) == 0, have_rapid = rapid && access(rapid, X_OK) == 0;
    if (!have_zkpipe) printf("(no %s: the zkpipe prove column is left out)\n", zkpipe);
    if (!have_rapid) printf("(no RAPIDSNARK: the rapidsnark column is left out)\n");

    double wall[K_COUNT][256], cpu[K_COUNT][256], core[K_COUNT][256], msm[2][7][256];
    bool have[K_COUNT] = {true, true, lanes != 0, have_zkpipe, have_rapid};
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < K_COUNT; k++) {
            if (!have[k]) continue;
            double w0 = now_s(), u0 = cpu_s(RUSAGE_SELF), w = 0, u = 0;
            zk_core_times_t tm = {0};
            int rc = 0;
            core[k][r] = 0;
            if (k == K_PLAIN || k == K_TABLES) {
                rc = backend_proof(B, k == K_PLAIN ? plain : tab, abc, &tm, &core[k][r], r == 0);
            } else if (k == K_LANES) {
                pthread_t t[2];
                for (int l = 0; l < 2; l++) {
                    ln[l].check = r == 0;
                    pthread_create(&t[l], NULL, lane_main, &ln[l]);
                }
                for (int l = 0; l < 2; l++) pthread_join(t[l], NULL), rc |= ln[l].rc;
                core[k][r] = 0; /* the lanes' cores run on the backend's threads: in the process's CPU only */
            } else {
                rc = spawn_timed(k == K_ZKPIPE ? zk_argv : rs_argv, &w, &u);
            }
            if (rc) return fprintf(stderr, "resident: %s failed in round %d\n", kind_name[k], r), 1;
            if (k <= K_LANES) w = now_s() - w0, u = cpu_s(RUSAGE_SELF) - u0;
            if (k == K_LANES) w /= 2, u /= 2; /* two proofs */
            wall[k][r] = w, cpu[k][r] = u;
            if (k <= K_TABLES) {
                const uint64_t v[7] = {tm.ntt_ns, tm.msm_a_ns, tm.msm_b1_ns, tm.msm_b2_ns, tm.msm_c_ns, tm.msm_h_ns,
                                       tm.ntt_ns + tm.msm_a_ns + tm.msm_b1_ns + tm.msm_b2_ns + tm.msm_c_ns + tm.msm_h_ns};
                for (int s = 0; s < 7; s++) msm[k][s][r] = v[s] / 1e6;
            }
        }
    }

    printf("\n%-26s %12s %12s %16s %14s\n", "prover", "wall/proof", "CPU/proof", "proofs/min/core",
           "core CPU/proof");
    double mw[K_COUNT], mc[K_COUNT], mk[K_COUNT];
    for (int k = 0; k < K_COUNT; k++) {
        if (!have[k]) continue;
        mw[k] = median(wall[k], rounds), mc[k] = median(cpu[k], rounds), mk[k] = median(core[k], rounds);
        printf("%-26s %10.1f ms %10.1f ms %16.1f", kind_name[k], mw[k] * 1e3, mc[k] * 1e3, 60.0 / mc[k]);
        if (k < K_LANES) printf(" %11.1f ms", mk[k] * 1e3);
        printf("\n");
    }
    printf("(a resident proof: synthesis + core + finalisation, no key load; core CPU: the proving core\n"
           " alone, gpud's part; proofs/min/core = 60 s / CPU per proof)\n");
    printf("\nproving core, median ms (%d threads):   ntt+H      A     B1     B2      C      H   total\n", threads);
    for (int k = 0; k < 2; k++) {
        printf("  %-36s", k ? "with tables" : "without tables");
        for (int s = 0; s < 7; s++) printf(" %6.1f", median(msm[k][s], rounds));
        printf("\n");
    }
    printf("\nratios (medians; CPU time = per core):\n");
    printf("  tables / no tables:        wall %.3f, CPU %.3f\n", mw[K_TABLES] / mw[K_PLAIN], mc[K_TABLES] / mc[K_PLAIN]);
    if (lanes)
        printf("  lanes / one proof at once: wall %.3f, CPU %.3f (wall per proof of 2 at once)\n",
               mw[K_LANES] / mw[K_TABLES], mc[K_LANES] / mc[K_TABLES]);
    if (have_zkpipe)
        printf("  tables / zkpipe prove:     wall %.3f, CPU %.3f\n", mw[K_TABLES] / mw[K_ZKPIPE],
               mc[K_TABLES] / mc[K_ZKPIPE]);
    if (have_rapid) {
        int best = lanes && mw[K_LANES] < mw[K_TABLES] ? K_LANES : K_TABLES;
        printf("  zkpipe prove / rapidsnark: wall %.3f, CPU %.3f\n", have_zkpipe ? mw[K_ZKPIPE] / mw[K_RAPID] : 0,
               have_zkpipe ? mc[K_ZKPIPE] / mc[K_RAPID] : 0);
        printf("  %s / rapidsnark: wall %.3f, CPU %.3f (issue 22 target: <= 0.20 of rapidsnark's time per proof)\n",
               kind_name[best], mw[best] / mw[K_RAPID], mc[best] / mc[K_RAPID]);
    }
    unlink(pf), unlink(pb), rmdir(proof);
    B->destroy(plain);
    B->destroy(tab);
    if (lctx) B->destroy(lctx);
    for (int l = 0; l < 2; l++) free(ln[l].abc);
    free(abc);
    zk_vk_free(&VK);
    zk_wtns_free(&W);
    zk_zkey_close(&Z);
    return 0;
}
