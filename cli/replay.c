/* zkpipe replay prepare: fills the replay backend's results cache (docs/replay.md). For each witness
 * (or circuit input, through the circuit's wasm generator) it computes a, b, c as synthd does and
 * the core's results on the CPU, checks them by finalizing and verifying one proof, and stores them
 * under the key's and the input's content hashes, where gpud's replay backend looks them up. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client.h"
#include "commands.h"
#include "gpud/replay.h"
#include "zk/groth16.h"
#include "zk/threads.h"
#include "zk/verify.h"
#include "zk/wtns.h"
#include "zk/zkey.h"

#define REPLAY_USAGE                                                                                                   \
    "zkpipe replay prepare [--config FILE] --circuit NAME [--threads N] W1.wtns [W2.wtns ...]\n"                       \
    "       zkpipe replay prepare [--config FILE] --circuit NAME [--threads N] --input IN1.json [IN2.json ...]"

static const char *REPLAY_HELP =
    "Computes, on the CPU, the proving core's results (the NTT'd H and the five MSMs) of each witness\n"
    "with the circuit's key, and stores them in the replay cache ([gpu] replay_cache, default\n"
    "[pipeline] cache/replay) under the key's and the input's content hashes: gpud's replay backend\n"
    "([gpu] backend = replay) proves exactly these inputs, at its device model's speed, and fails any\n"
    "other with that reason. Each result is checked by verifying a proof made from it. --input: the\n"
    "files are circuit inputs, turned into witnesses by the circuit's wasm. One line per file: stored,\n"
    "or already cached. Exit status: 0 all stored, 1 a file failed (one line naming it), 2 bad usage.";

static double secs_since(const struct timespec *t0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* One witness: its a, b, c, the core's results, a proof verified from them, the entry. */
static int prepare_one(const cfg_t *c, const zk_zkey_t *z, const zk_vk_t *vk, const zk_replay_hash_t *key,
                       const zk_wtns_t *w, const char *name, int threads, zk_err_t *err) {
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    size_t each = (size_t)z->domain_size * 32, scratch_size = zk_core_scratch_size(z);
    uint8_t *abc = aligned_alloc(64, 3 * each), *scratch = aligned_alloc(64, (scratch_size + 63) & ~(size_t)63);
    int r = 0;
    if (!abc || !scratch) {
        r = zk_fail(err, ENOMEM, "%s: out of memory for a, b, c and the core's scratch", name);
        goto out;
    }
    if ((r = zk_synth(z, w->values, abc, abc + each, abc + 2 * each, threads)) < 0) {
        zk_fail(err, -r, "%s: synthesis failed: %s", name, strerror(-r));
        goto out;
    }
    zk_replay_hash_t input;
    zk_replay_input_hash(z, w->values, abc, abc + each, abc + 2 * each, &input);
    char hex[33];
    zk_replay_hash_hex(&input, hex);
    zk_raw_t raw;
    zk_err_t miss = {{0}};
    if (zk_replay_entry_get(c->replay_cache, z, key, &input, &raw, &miss) == 0) {
        printf("%s: already cached (input %s)\n", name, hex);
        goto out;
    }
    if ((r = zk_prove_core(z, w->values, abc, abc + each, abc + 2 * each, scratch, &raw, NULL, threads)) < 0) {
        zk_fail(err, -r, "%s: the proving core failed: %s", name, strerror(-r));
        goto out;
    }
    uint8_t rr[32], ss[32];
    zk_proof_t proof;
    if ((r = zk_random_rs(z->curve, rr, ss)) < 0) {
        zk_fail(err, -r, "getrandom failed: %s", strerror(-r));
        goto out;
    }
    zk_finalize(z, &raw, rr, ss, &proof);
    if (zk_verify_proof(vk, &proof, w->values + 32, z->n_pub, err) < 0) {
        zk_err_t why = *err;
        r = zk_fail(err, EBADMSG,
                    "%s: its proof does not verify (%.300s): the witness does not satisfy the circuit; "
                    "not cached",
                    name, why.msg);
        goto out;
    }
    if ((r = zk_replay_entry_put(c->replay_cache, z, key, &input, &raw, err)) < 0) goto out;
    printf("%s: stored (input %s, %.2f s)\n", name, hex, secs_since(&t0));
out:
    free(abc);
    free(scratch);
    return r;
}

static int replay_prepare(int argc, char **argv) {
    const char *config, *circuit = NULL, *threads_s = NULL, *input_flag = NULL;
    const cli_option_t opts[] = {
        {"circuit", 'C', "NAME", &circuit}, {"threads", 't', "N", &threads_s}, {"input", 'I', NULL, &input_flag}, {0}};
    int parsed = cli_options(argc, argv, REPLAY_USAGE, REPLAY_HELP, opts, &config);
    if (parsed >= 0) return parsed;
    if (!circuit || optind >= argc) return cli_usage_error(REPLAY_USAGE);
    int threads = zk_threads_default();
    if (threads_s && cli_parse_threads("replay prepare", threads_s, &threads) < 0) return 2;
    cfg_t c;
    if (cli_load_config(config, &c) < 0) return 2;
    const cfg_circuit_t *ci = cfg_circuit(&c, circuit);
    if (!ci) {
        fprintf(stderr, "zkpipe replay prepare: circuit %s is not configured in %s\n", circuit, c.path);
        return 2;
    }
    if (input_flag && !ci->wasm[0]) {
        fprintf(stderr,
                "zkpipe replay prepare: --input: circuit %s has no wasm in %s (for a witness_cmd, make the "
                "witnesses with it and give the .wtns files)\n",
                circuit, c.path);
        return 2;
    }
    zk_zkey_t z;
    zk_vk_t vk;
    zk_err_t e = {{0}};
    if (zk_zkey_open(&z, ci->zkey, &e) < 0) {
        fprintf(stderr, "zkpipe replay prepare: circuit %s: %s\n", circuit, e.msg);
        return 1;
    }
    if (zk_vk_from_zkey(&vk, &z, &e) < 0) {
        fprintf(stderr, "zkpipe replay prepare: circuit %s: %s\n", circuit, e.msg);
        zk_zkey_close(&z);
        return 1;
    }
    zk_replay_hash_t key;
    zk_replay_key_hash(&z, &key);
    char khex[33];
    zk_replay_hash_hex(&key, khex);
    printf("circuit %s: key %s, content %s, results in %s/%s\n", circuit, ci->zkey, khex, c.replay_cache, khex);
    int failed = 0;
    for (int i = optind; i < argc; i++) {
        zk_wtns_t w = {0};
        uint8_t *img = NULL;
        size_t len = 0;
#ifdef ZKPIPE_WITGEN
        int r = input_flag
                    ? cli_witness_compute(ci->wasm, argv[i], c.cache, ci->witness_timeout, &img, &len, &z, ci->zkey, &e)
                    : 0;
#else
        int r = input_flag
                    ? zk_fail(&e, ENOTSUP, "%s: --input: this zkpipe is built without witness generation", argv[i])
                    : 0;
#endif
        if (r == 0) r = input_flag ? zk_wtns_parse(&w, argv[i], img, len, &e) : zk_wtns_load(&w, argv[i], &e);
        if (r == 0 && (r = zk_wtns_check_zkey(&w, argv[i], &z, ci->zkey, &e)) < 0) zk_wtns_free(&w);
        if (r == 0) {
            r = prepare_one(&c, &z, &vk, &key, &w, argv[i], threads, &e);
            zk_wtns_free(&w);
        }
        free(img);
        if (r < 0) {
            fprintf(stderr, "zkpipe replay prepare: %s\n", e.msg);
            failed++;
        }
        fflush(stdout);
    }
    zk_vk_free(&vk);
    zk_zkey_close(&z);
    return failed ? 1 : fflush(stdout) == 0 ? 0 : 1;
}

int zkpipe_cmd_replay(int argc, char **argv) {
    if (argc >= 2 && !strcmp(argv[1], "prepare")) return replay_prepare(argc - 1, argv + 1);
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("Usage: %s\n\n%s\n", REPLAY_USAGE, REPLAY_HELP);
        return 0;
    }
    return cli_usage_error(REPLAY_USAGE);
}
