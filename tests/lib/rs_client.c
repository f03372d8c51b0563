/* A client of rapidsnark's C API that includes only rapidsnark's two headers; built as C and as C++
 * against the installed librapidsnark (tests/lib/rapidsnark_clients.sh) and under ASan
 * (tests/lib/meson.build). Usage:
 *   rs_client ZKEY WTNS OTHER_WTNS VK_JSON OUTDIR THREADS PROOFS
 * proves WTNS (writing OUTDIR/proof.json and public.json for snarkjs), checks the size protocol,
 * PROVER_INVALID_WITNESS_LENGTH with OTHER_WTNS, PROVER_ERROR with a message for every bad input,
 * groth16_verify on good and tampered texts, and THREADS threads x PROOFS proofs on one prover
 * object. Prints one line per failed check and "N checks, N failed"; exits 1 on a failure. */
#ifndef _GNU_SOURCE
#define _POSIX_C_SOURCE 200809L /* setenv */
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prover.h"
#include "verifier.h"

static int checks, failed;

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        checks++;                                                                                                      \
        if (!(cond)) {                                                                                                 \
            failed++;                                                                                                  \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                                \
            printf(__VA_ARGS__);                                                                                       \
            printf("\n");                                                                                              \
        }                                                                                                              \
    } while (0)

static char *slurp(const char *path, unsigned long long *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        printf("cannot open %s\n", path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *b = (char *)malloc((size_t)n + 1);
    if (fread(b, 1, (size_t)n, f) != (size_t)n) exit(2);
    b[n] = 0;
    fclose(f);
    *len = (unsigned long long)n;
    return b;
}

static void spit(const char *dir, const char *name, const char *text) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(text, 1, strlen(text), f) != strlen(text) || fclose(f) != 0) exit(2);
}

/* The text with every run of digits as N: rapidsnark's layout, whatever the numbers. */
static void shape(const char *s, char *out, size_t cap) {
    size_t n = 0;
    while (*s && n + 2 < cap) {
        if (*s >= '0' && *s <= '9') {
            out[n++] = 'N';
            while (*s >= '0' && *s <= '9') s++;
        } else {
            out[n++] = *s++;
        }
    }
    out[n] = 0;
}

static const char *proof_shape =
    "{\"pi_a\":[\"N\",\"N\",\"N\"],\"pi_b\":[[\"N\",\"N\"],[\"N\",\"N\"],[\"N\",\"N\"]],\"pi_c\":[\"N\",\"N\",\"N\"],"
    "\"protocol\":\"grothN\"}"; /* groth16 */

/* One proof with rapidsnark's protocol: minimum sizes first, the short-buffer answer's sizes if a
 * retry is asked for. Returns the code; proof and public are malloc'd on PROVER_OK. */
static int prove(void *prover, const char *wtns, unsigned long long wtns_len, unsigned long long public_min,
                 char **ret_proof, char **ret_public, char *msg, unsigned long long msg_size) {
    unsigned long long proof_cap, public_cap = public_min;
    groth16_proof_size(&proof_cap);
    for (int attempt = 0; attempt < 2; attempt++) {
        char *proof = (char *)malloc(proof_cap), *pub = (char *)malloc(public_cap);
        unsigned long long ps = proof_cap, us = public_cap;
        int rc = groth16_prover_prove(prover, wtns, wtns_len, proof, &ps, pub, &us, msg, msg_size);
        if (rc == PROVER_OK) {
            CHECK(ps == strlen(proof) && us == strlen(pub), "sizes %llu %llu, texts %zu %zu", ps, us, strlen(proof),
                  strlen(pub));
            *ret_proof = proof;
            *ret_public = pub;
            return rc;
        }
        free(proof);
        free(pub);
        if (rc != PROVER_ERROR_SHORT_BUFFER) return rc;
        CHECK(ps > proof_cap || us > public_cap, "short buffer without larger sizes: %llu %llu", ps, us);
        proof_cap = ps;
        public_cap = us;
    }
    return PROVER_ERROR_SHORT_BUFFER;
}

struct worker {
    void *prover;
    const char *wtns, *vk, *expect_public;
    unsigned long long wtns_len, public_min;
    int proofs, ok;
};

static void *work(void *arg) {
    struct worker *w = (struct worker *)arg;
    for (int i = 0; i < w->proofs; i++) {
        char *proof, *pub, msg[256] = "";
        if (prove(w->prover, w->wtns, w->wtns_len, w->public_min, &proof, &pub, msg, sizeof msg) != PROVER_OK) {
            printf("thread proof failed: %s\n", msg);
            continue;
        }
        if (strcmp(pub, w->expect_public) == 0 && groth16_verify(proof, pub, w->vk, msg, sizeof msg) == VERIFIER_VALID_PROOF)
            w->ok++;
        else
            printf("thread proof wrong: public %s, verify: %s\n", pub, msg);
        free(proof);
        free(pub);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 8) {
        printf("usage: rs_client ZKEY WTNS OTHER_WTNS VK_JSON OUTDIR THREADS PROOFS\n");
        return 2;
    }
    const char *zkey_path = argv[1], *outdir = argv[5];
    int n_threads = atoi(argv[6]), n_proofs = atoi(argv[7]);
    unsigned long long zkey_len, wtns_len, other_len, vk_len;
    char *zkey = slurp(zkey_path, &zkey_len), *wtns = slurp(argv[2], &wtns_len), *other = slurp(argv[3], &other_len);
    char *vk = slurp(argv[4], &vk_len);
    char msg[512];

    /* sizes */
    unsigned long long proof_min = 0, public_min = 0, public_min2 = 0;
    groth16_proof_size(&proof_min);
    CHECK(proof_min == 810, "groth16_proof_size %llu", proof_min);
    CHECK(groth16_public_size_for_zkey_file(zkey_path, &public_min, msg, sizeof msg) == PROVER_OK, "%s", msg);
    CHECK(groth16_public_size_for_zkey_buf(zkey, zkey_len, &public_min2, msg, sizeof msg) == PROVER_OK, "%s", msg);
    CHECK(public_min == public_min2 && public_min >= 4 && (public_min - 4) % 82 == 0, "public sizes %llu %llu",
          public_min, public_min2);

    /* a prover from a buffer that is overwritten and freed right after: the key was copied */
    void *prover = NULL, *file_prover = NULL;
    char *zkey_copy = (char *)malloc((size_t)zkey_len);
    memcpy(zkey_copy, zkey, (size_t)zkey_len);
    CHECK(groth16_prover_create(&prover, zkey_copy, zkey_len, msg, sizeof msg) == PROVER_OK, "create: %s", msg);
    memset(zkey_copy, 0xa5, (size_t)zkey_len);
    free(zkey_copy);
    CHECK(groth16_prover_create_zkey_file(&file_prover, zkey_path, msg, sizeof msg) == PROVER_OK, "create file: %s",
          msg);
    if (!prover || !file_prover) return 1;

    char *proof, *pub;
    int rc = prove(prover, wtns, wtns_len, public_min, &proof, &pub, msg, sizeof msg);
    CHECK(rc == PROVER_OK, "prove: %d %s", rc, msg);
    if (rc != PROVER_OK) return 1;
    spit(outdir, "proof.json", proof);
    spit(outdir, "public.json", pub);
    char sh[2048], sh_pub[1024];
    shape(proof, sh, sizeof sh);
    CHECK(strcmp(sh, proof_shape) == 0, "proof layout %s", sh);
    shape(pub, sh_pub, sizeof sh_pub);
    CHECK(sh_pub[0] == '[' && sh_pub[strlen(sh_pub) - 1] == ']' && !strchr(pub, ' '), "public layout %s", sh_pub);
    CHECK(groth16_verify(proof, pub, vk, msg, sizeof msg) == VERIFIER_VALID_PROOF, "verify: %s", msg);

    /* the file prover gives a valid proof of the same public signals */
    char *proof2, *pub2;
    CHECK(prove(file_prover, wtns, wtns_len, public_min, &proof2, &pub2, msg, sizeof msg) == PROVER_OK, "%s", msg);
    CHECK(strcmp(pub, pub2) == 0 && groth16_verify(proof2, pub2, vk, msg, sizeof msg) == VERIFIER_VALID_PROOF,
          "file prover: %s", msg);
    free(proof2);
    free(pub2);

    /* short buffers: answered with sizes that suffice; those sizes then work */
    {
        char small_proof[10], small_pub[10];
        unsigned long long ps = sizeof small_proof, us = sizeof small_pub;
        msg[0] = 0;
        rc = groth16_prover_prove(prover, wtns, wtns_len, small_proof, &ps, small_pub, &us, msg, sizeof msg);
        CHECK(rc == PROVER_ERROR_SHORT_BUFFER && msg[0], "short: %d %s", rc, msg);
        CHECK(ps > strlen(proof) && us == strlen(pub) + 1, "short sizes %llu %llu for %zu %zu", ps, us, strlen(proof),
              strlen(pub));
        char *p3 = (char *)malloc(ps), *u3 = (char *)malloc(us);
        unsigned long long ps3 = ps, us3 = us;
        rc = groth16_prover_prove(prover, wtns, wtns_len, p3, &ps3, u3, &us3, msg, sizeof msg);
        CHECK(rc == PROVER_OK && ps3 == strlen(p3) && us3 == strlen(u3), "retry: %d %s", rc, msg);
        /* the public buffer alone too short by one byte */
        unsigned long long ps4 = ps, us4 = us - 1;
        rc = groth16_prover_prove(prover, wtns, wtns_len, p3, &ps4, u3, &us4, msg, sizeof msg);
        CHECK(rc == PROVER_ERROR_SHORT_BUFFER && us4 == us && ps4 == ps, "public short by one: %d %llu", rc, us4);
        free(p3);
        free(u3);
    }

    /* a witness of another circuit */
    {
        char p[2048], u[4096];
        unsigned long long ps = sizeof p, us = sizeof u;
        msg[0] = 0;
        rc = groth16_prover_prove(prover, other, other_len, p, &ps, u, &us, msg, sizeof msg);
        CHECK(rc == PROVER_INVALID_WITNESS_LENGTH && msg[0], "other witness: %d %s", rc, msg);
    }

    /* bad input: PROVER_ERROR with a message, never a crash */
    {
        void *bad = NULL;
        char p[2048], u[4096];
        unsigned long long ps = sizeof p, us = sizeof u, sz = 0;
#define BAD(call)                                                                                                      \
    do {                                                                                                               \
        msg[0] = 0;                                                                                                    \
        ps = sizeof p, us = sizeof u;                                                                                  \
        int r_ = (call);                                                                                               \
        CHECK(r_ == PROVER_ERROR && msg[0], "%s: %d '%s'", #call, r_, msg);                                             \
    } while (0)
        BAD(groth16_prover_create(&bad, zkey, zkey_len / 2, msg, sizeof msg));
        BAD(groth16_prover_create(&bad, zkey, 0, msg, sizeof msg));
        BAD(groth16_prover_create(&bad, NULL, zkey_len, msg, sizeof msg));
        BAD(groth16_prover_create(NULL, zkey, zkey_len, msg, sizeof msg));
        BAD(groth16_prover_create(&bad, wtns, wtns_len, msg, sizeof msg));
        BAD(groth16_prover_create_zkey_file(&bad, NULL, msg, sizeof msg));
        BAD(groth16_prover_create_zkey_file(&bad, "/nonexistent/circuit.zkey", msg, sizeof msg));
        BAD(groth16_prover_create_zkey_file(&bad, outdir, msg, sizeof msg));
        BAD(groth16_prover_create_zkey_file(NULL, zkey_path, msg, sizeof msg));
        const char *env = getenv("ZKPIPE_THREADS");
        char *saved = env ? strdup(env) : NULL;
        setenv("ZKPIPE_THREADS", "many", 1);
        BAD(groth16_prover_create(&bad, zkey, zkey_len, msg, sizeof msg));
        CHECK(strstr(msg, "ZKPIPE_THREADS") != NULL, "the message names ZKPIPE_THREADS: %s", msg);
        if (saved) setenv("ZKPIPE_THREADS", saved, 1);
        else unsetenv("ZKPIPE_THREADS");
        free(saved);
        CHECK(bad == NULL, "a failed create left a prover object");
        BAD(groth16_public_size_for_zkey_buf(zkey, zkey_len - 1, &sz, msg, sizeof msg));
        BAD(groth16_public_size_for_zkey_buf(NULL, zkey_len, &sz, msg, sizeof msg));
        BAD(groth16_public_size_for_zkey_buf(zkey, zkey_len, NULL, msg, sizeof msg));
        BAD(groth16_public_size_for_zkey_file("/nonexistent/circuit.zkey", &sz, msg, sizeof msg));
        BAD(groth16_public_size_for_zkey_file(NULL, &sz, msg, sizeof msg));
        BAD(groth16_prover_prove(NULL, wtns, wtns_len, p, &ps, u, &us, msg, sizeof msg));
        BAD(groth16_prover_prove(prover, NULL, wtns_len, p, &ps, u, &us, msg, sizeof msg));
        BAD(groth16_prover_prove(prover, wtns, 0, p, &ps, u, &us, msg, sizeof msg));
        BAD(groth16_prover_prove(prover, wtns, wtns_len / 2, p, &ps, u, &us, msg, sizeof msg));
        BAD(groth16_prover_prove(prover, zkey, zkey_len, p, &ps, u, &us, msg, sizeof msg));
        BAD(groth16_prover_prove(prover, wtns, wtns_len, NULL, &ps, u, &us, msg, sizeof msg));
        BAD(groth16_prover_prove(prover, wtns, wtns_len, p, NULL, u, &us, msg, sizeof msg));
        BAD(groth16_prover_prove(prover, wtns, wtns_len, p, &ps, NULL, &us, msg, sizeof msg));
        BAD(groth16_prover_prove(prover, wtns, wtns_len, p, &ps, u, NULL, msg, sizeof msg));
        BAD(groth16_prover(zkey, zkey_len / 3, wtns, wtns_len, p, &ps, u, &us, msg, sizeof msg));
        BAD(groth16_prover_zkey_file("/nonexistent/circuit.zkey", wtns, wtns_len, p, &ps, u, &us, msg, sizeof msg));
        /* the last value (a private wire) changed: a witness that does not satisfy the circuit gets no proof */
        char *forged = (char *)malloc((size_t)wtns_len);
        memcpy(forged, wtns, (size_t)wtns_len);
        forged[wtns_len - 32] ^= 1;
        BAD(groth16_prover_prove(prover, forged, wtns_len, p, &ps, u, &us, msg, sizeof msg));
        free(forged);
        /* no message buffer, and a message buffer of one byte: still just the code */
        ps = sizeof p, us = sizeof u;
        CHECK(groth16_prover_prove(prover, wtns, 3, p, &ps, u, &us, NULL, 0) == PROVER_ERROR, "NULL error_msg");
        char one[1] = {'x'};
        CHECK(groth16_prover_prove(prover, wtns, 3, p, &ps, u, &us, one, 1) == PROVER_ERROR && one[0] == 0,
              "1-byte error_msg");
        groth16_prover_destroy(NULL);
    }

    /* the one-shot calls */
    {
        char p[2048], u[4096];
        unsigned long long ps = sizeof p, us = sizeof u;
        rc = groth16_prover(zkey, zkey_len, wtns, wtns_len, p, &ps, u, &us, msg, sizeof msg);
        CHECK(rc == PROVER_OK && strcmp(u, pub) == 0 && groth16_verify(p, u, vk, msg, sizeof msg) == 0,
              "groth16_prover: %d %s", rc, msg);
        ps = sizeof p, us = sizeof u;
        rc = groth16_prover_zkey_file(zkey_path, wtns, wtns_len, p, &ps, u, &us, msg, sizeof msg);
        CHECK(rc == PROVER_OK && strcmp(u, pub) == 0 && groth16_verify(p, u, vk, msg, sizeof msg) == 0,
              "groth16_prover_zkey_file: %d %s", rc, msg);
    }

    /* groth16_verify: tampered and malformed */
    {
        char *t = (char *)malloc(strlen(pub) + 1);
        strcpy(t, pub);
        char *d = strchr(t, '"') + 1; /* first digit of the first signal */
        *d = *d == '1' ? '2' : '1';
        CHECK(groth16_verify(proof, t, vk, msg, sizeof msg) == VERIFIER_INVALID_PROOF, "tampered public: %s", msg);
        free(t);
        msg[0] = 0;
        CHECK(groth16_verify("{\"pi_a\":", pub, vk, msg, sizeof msg) == VERIFIER_ERROR && msg[0], "bad json");
        msg[0] = 0;
        CHECK(groth16_verify(proof, "[]", vk, msg, sizeof msg) == VERIFIER_ERROR && msg[0], "no signals");
        msg[0] = 0;
        CHECK(groth16_verify(proof, pub, "{}", msg, sizeof msg) == VERIFIER_ERROR && msg[0], "empty vk");
        CHECK(groth16_verify(NULL, pub, vk, msg, sizeof msg) == VERIFIER_ERROR, "NULL proof");
        CHECK(groth16_verify(proof, NULL, vk, NULL, 0) == VERIFIER_ERROR, "NULL inputs");
        CHECK(groth16_verify(proof, pub, NULL, msg, sizeof msg) == VERIFIER_ERROR, "NULL vk");
    }

    /* many threads on one prover object */
    if (n_threads > 0) {
        pthread_t *th = (pthread_t *)malloc(sizeof(pthread_t) * (size_t)n_threads);
        struct worker *w = (struct worker *)calloc((size_t)n_threads, sizeof *w);
        for (int i = 0; i < n_threads; i++) {
            w[i].prover = prover;
            w[i].wtns = wtns;
            w[i].wtns_len = wtns_len;
            w[i].public_min = public_min;
            w[i].vk = vk;
            w[i].expect_public = pub;
            w[i].proofs = n_proofs;
            pthread_create(&th[i], NULL, work, &w[i]);
        }
        int ok = 0;
        for (int i = 0; i < n_threads; i++) {
            pthread_join(th[i], NULL);
            ok += w[i].ok;
        }
        CHECK(ok == n_threads * n_proofs, "%d threads x %d proofs: %d valid", n_threads, n_proofs, ok);
        free(th);
        free(w);
    }

    groth16_prover_destroy(prover);
    groth16_prover_destroy(file_prover);
    free(proof);
    free(pub);
    free(zkey);
    free(wtns);
    free(other);
    free(vk);
    printf("%d checks, %d failed\n", checks, failed);
    return failed ? 1 : 0;
}
