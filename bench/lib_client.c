/* bench/lib-compare's client: rapidsnark's C API only (prover.h), so the one binary runs with
 * rapidsnark's librapidsnark.so or zkpipe's (LD_LIBRARY_PATH picks). Usage:
 *   lib_client ZKEY WTNS THREADS PROOFS shared|per-thread
 * creates the prover object(s) from the zkey read into memory (untimed; the buffer stays alive, as
 * rapidsnark's objects point into it, and its groth16_prover_create_zkey_file's objects crash on the
 * first proof: it unmaps the file it made them from), then THREADS threads prove PROOFS
 * proofs each, on one shared object or on one object per thread; prints
 *   proofs N threads T wall_s W per_proof_ms M failed F
 * (M = W / N: the time a proof costs at this concurrency). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "prover.h"

static char *slurp(const char *path, unsigned long long *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return perror(path), NULL;
    fseek(f, 0, SEEK_END);
    *len = (unsigned long long)ftell(f);
    rewind(f);
    char *b = (char *)malloc(*len ? *len : 1);
    if (fread(b, 1, *len, f) != *len) b = NULL;
    fclose(f);
    return b;
}

static char *wtns;
static unsigned long long wtns_len, public_size;
static int proofs;

struct job {
    void *prover;
    int failed;
};

static void *work(void *arg) {
    struct job *j = (struct job *)arg;
    unsigned long long cap = 4096;
    char *proof = (char *)malloc(cap), *pub = (char *)malloc(public_size), msg[256];
    for (int i = 0; i < proofs; i++) {
        unsigned long long ps = cap, us = public_size;
        if (groth16_prover_prove(j->prover, wtns, wtns_len, proof, &ps, pub, &us, msg, sizeof msg) != PROVER_OK) {
            fprintf(stderr, "prove: %s\n", msg);
            j->failed++;
        }
    }
    free(proof);
    free(pub);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: lib_client ZKEY WTNS THREADS PROOFS shared|per-thread\n");
        return 2;
    }
    int threads = atoi(argv[3]), shared = !strcmp(argv[5], "shared");
    proofs = atoi(argv[4]);
    unsigned long long zkey_len;
    char *zkey = slurp(argv[1], &zkey_len), msg[256];
    if (!zkey || !(wtns = slurp(argv[2], &wtns_len))) return 2;
    if (groth16_public_size_for_zkey_file(argv[1], &public_size, msg, sizeof msg) != PROVER_OK)
        return fprintf(stderr, "%s\n", msg), 1;
    struct job *jobs = (struct job *)calloc((size_t)threads, sizeof *jobs);
    for (int i = 0; i < threads; i++) {
        if (i > 0 && shared) {
            jobs[i].prover = jobs[0].prover;
            continue;
        }
        if (groth16_prover_create(&jobs[i].prover, zkey, zkey_len, msg, sizeof msg) != PROVER_OK)
            return fprintf(stderr, "create: %s\n", msg), 1;
    }
    pthread_t *th = (pthread_t *)malloc(sizeof(pthread_t) * (size_t)threads);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < threads; i++) pthread_create(&th[i], NULL, work, &jobs[i]);
    int failed = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(th[i], NULL);
        failed += jobs[i].failed;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    int n = threads * proofs;
    printf("proofs %d threads %d wall_s %.3f per_proof_ms %.1f failed %d\n", n, threads, wall, wall * 1e3 / n, failed);
    for (int i = 0; i < threads; i++)
        if (i == 0 || !shared) groth16_prover_destroy(jobs[i].prover);
    return failed ? 1 : 0;
}
