/* bench/verify: time of one Groth16 verification per curve (zk_verify_proof, one core) and of one
 * pairing, side by side with `snarkjs groth16 verify` on the same files; the ratio last.
 * Usage: verify [iterations (default 200)] [snarkjs runs (default 3)]
 * Paths: $ZKPIPE_SOURCE_ROOT (default: the source tree this was built from) for the fixtures and
 * node_modules/.bin/snarkjs; the zkpipe binary next to this one (../cli/zkpipe). */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "zk/pairing.h"
#include "zk/verify.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* CPU time of this thread: what one core spends, whatever else the machine runs. */
static double cpu_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Wall time of one run of a command (stdout/stderr discarded); -1 if it failed to run or exit 0. */
static double time_cmd(char *const argv[]) {
    fflush(stdout);
    double t0 = now();
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) _exit(127);
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    if (waitpid(pid, &st, 0) < 0) return -1;
    double t = now() - t0;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? t : -1;
}

/* ms per verification inside one node process (bench/verify_snarkjs.cjs), or -1. */
static double snarkjs_inproc(const char *src, const char *vk, const char *pub, const char *proof, int n) {
    char cmd[4 * PATH_MAX + 128];
    snprintf(cmd, sizeof(cmd), "node '%s/bench/verify_snarkjs.cjs' '%s' '%s' '%s' '%s' %d 2>/dev/null", src, src, vk,
             pub, proof, n);
    fflush(stdout);
    FILE *f = popen(cmd, "r");
    if (!f) return -1;
    double ms = -1;
    if (fscanf(f, "%lf", &ms) != 1) ms = -1;
    if (pclose(f) != 0) ms = -1;
    return ms;
}

static double best_of(char *const argv[], int runs) {
    double best = -1;
    for (int i = 0; i < runs; i++) {
        double t = time_cmd(argv);
        if (t < 0) return -1;
        if (best < 0 || t < best) best = t;
    }
    return best;
}

int main(int argc, char **argv) {
    int iters = argc > 1 ? atoi(argv[1]) : 200;
    int runs = argc > 2 ? atoi(argv[2]) : 3;
    if (iters < 1) iters = 1;
    if (runs < 1) runs = 1;
    const char *src = getenv("ZKPIPE_SOURCE_ROOT");
    if (!src) src = ZKPIPE_SOURCE_ROOT;
    char self[PATH_MAX], zkpipe[PATH_MAX + 32], snarkjs[PATH_MAX];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (sl < 0) {
        perror("readlink /proc/self/exe");
        return 1;
    }
    self[sl] = 0;
    snprintf(zkpipe, sizeof(zkpipe), "%s/../cli/zkpipe", dirname(self));
    snprintf(snarkjs, sizeof(snarkjs), "%s/node_modules/.bin/snarkjs", src);
    bool have_snarkjs = access(snarkjs, X_OK) == 0;

    static const char *curves[2] = {"bn128", "bls12381"};
    printf("Groth16 verification of one proof: zkpipe (zk_verify_proof, one core) and snarkjs 0.7 on the same files\n");
    printf(
        "files: tests/data/<curve>/mulchain/{vk.json,public-1.json,proof-1.json} (2 public signals); %d iterations\n",
        iters);
    printf("in-process, CLI times the best of %d runs\n\n", runs);
    printf("%-9s %9s %10s %10s %13s %7s %11s %12s %7s %7s\n", "curve", "pairing", "verify", "verify", "snarkjs verify",
           "ratio", "zkpipe CLI", "snarkjs CLI", "ratio", "target");
    printf("%-9s %9s %10s %10s %13s %7s %11s %12s %7s %7s\n", "", "(cpu)", "(cpu)", "(wall)", "(wall)", "", "(wall)",
           "(wall)", "", "");
    for (int c = 0; c < 2; c++) {
        char vkp[PATH_MAX], pubp[PATH_MAX], prp[PATH_MAX];
        snprintf(vkp, sizeof(vkp), "%s/tests/data/%s/mulchain/vk.json", src, curves[c]);
        snprintf(pubp, sizeof(pubp), "%s/tests/data/%s/mulchain/public-1.json", src, curves[c]);
        snprintf(prp, sizeof(prp), "%s/tests/data/%s/mulchain/proof-1.json", src, curves[c]);
        zk_err_t err = {{0}};
        zk_vk_t vk;
        zk_proof_t proof;
        uint8_t *pub = NULL;
        uint32_t n_pub = 0;
        if (zk_vk_from_json(&vk, vkp, &err) < 0 || zk_public_from_json(&pub, &n_pub, vk.curve, pubp, &err) < 0 ||
            zk_proof_from_json(&proof, vk.curve, prp, &err) < 0) {
            fprintf(stderr, "bench/verify: %s\n", err.msg);
            return 1;
        }
        if (zk_verify_proof(&vk, &proof, pub, n_pub, &err) != 0) {
            fprintf(stderr, "bench/verify: fixture does not verify: %s\n", err.msg);
            return 1;
        }
        /* one pairing e(G1, G2), final exponentiation included */
        double t0 = cpu_now();
        for (int i = 0; i < iters; i++) {
            if (c == 0) {
                bn_fq12_t e;
                bn_pairing(&e, &bn_g1_gen, &bn_g2_gen);
            } else {
                bls_fq12_t e;
                bls_pairing(&e, &bls_g1_gen, &bls_g2_gen);
            }
        }
        double t_pair = (cpu_now() - t0) / iters;
        t0 = cpu_now();
        double w0 = now();
        int bad = 0;
        for (int i = 0; i < iters; i++) bad |= zk_verify_proof(&vk, &proof, pub, n_pub, &err);
        double t_ver = (cpu_now() - t0) / iters, t_ver_wall = (now() - w0) / iters;
        if (bad) {
            fprintf(stderr, "bench/verify: verification failed during the timing loop\n");
            return 1;
        }
        char *zargv[] = {zkpipe, "verify", vkp, pubp, prp, NULL};
        double t_zcli = best_of(zargv, runs);
        double t_scli = -1, t_sin = -1;
        if (have_snarkjs) {
            char *sargv[] = {snarkjs, "groth16", "verify", vkp, pubp, prp, NULL};
            t_scli = best_of(sargv, runs);
            t_sin = snarkjs_inproc(src, vkp, pubp, prp, iters / 10 + 5) / 1e3;
        }
        char sin[32] = "n/a", r1[32] = "n/a", scli[32] = "n/a", r2[32] = "n/a", zcli[32] = "n/a";
        if (t_zcli >= 0) snprintf(zcli, sizeof(zcli), "%.1f ms", t_zcli * 1e3);
        if (t_sin > 0) {
            snprintf(sin, sizeof(sin), "%.2f ms", t_sin * 1e3);
            snprintf(r1, sizeof(r1), "%.0fx", t_sin / t_ver_wall);
        }
        if (t_scli >= 0) {
            snprintf(scli, sizeof(scli), "%.0f ms", t_scli * 1e3);
            if (t_zcli > 0) snprintf(r2, sizeof(r2), "%.0fx", t_scli / t_zcli);
        }
        printf("%-9s %6.3f ms %7.3f ms %7.3f ms %13s %7s %11s %12s %7s %4s ms\n", curves[c], t_pair * 1e3, t_ver * 1e3,
               t_ver_wall * 1e3, sin, r1, zcli, scli, r2, c == 0 ? "< 2" : "< 4");
        free(pub);
        zk_vk_free(&vk);
    }
    if (!have_snarkjs) printf("\nsnarkjs not found at %s: no comparison\n", snarkjs);
    printf("\npairing: e(G1, G2) with the final exponentiation. verify: zk_verify_proof (subgroup checks, vk_x, three\n"
           "Miller loops, one final exponentiation; the key prepared once), CPU time of this thread and wall time.\n"
           "snarkjs verify: groth16.verify in one node process after a warm-up call (bench/verify_snarkjs.cjs).\n"
           "CLI: whole processes, file parsing included (and node's start-up for snarkjs).\n"
           "ratio: snarkjs time / zkpipe time, in-process (wall/wall) and CLI/CLI.\n");
    return 0;
}
