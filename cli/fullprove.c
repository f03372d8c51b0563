/* zkpipe fullprove: `snarkjs groth16 fullprove` (same argument order): the witness from the inputs
 * with the circuit's compiled wasm (cli/witness.c), then the proof as zkpipe prove makes it. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "witgen/witgen.h"
#include "zk/wtns.h"
#include "zk/threads.h"
#include "zk/zkey.h"

static void fullprove_usage(FILE *f) {
    fprintf(f,
            "Usage: zkpipe fullprove [options] <input.json> <circuit.wasm> <circuit.zkey> <proof.json> <public.json>\n"
            "\n"
            "Computes the witness of the inputs with the circuit's wasm (compiled to native code, as zkpipe\n"
            "witness does) and proves it, as `snarkjs groth16 fullprove` does with the same arguments. The wasm's\n"
            "prime must be the zkey's curve. The proof is checked with the native verifier before it is written.\n"
            "\n"
            "Options:\n"
            "  --threads N   worker threads (default: every CPU this process may run on)\n"
            "  --cache DIR   compiled generators (default as for zkpipe witness)\n"
            "  --timeout S   the witness generator may run S seconds (default %u; 0 = no limit)\n"
            "  --timings     print per-stage times on stderr\n"
            "  -h, --help    this text\n"
            "\n"
            "Exit status: 0 proof written, 1 bad input or failure (one line on stderr), 2 bad usage.\n",
            WITGEN_TIMEOUT_DEFAULT_S);
}

int zkpipe_cmd_fullprove(int argc, char **argv) {
    static const struct option opts[] = {
        {"threads", required_argument, NULL, 't'},
        {"cache", required_argument, NULL, 'c'},
        {"timeout", required_argument, NULL, 'o'},
        {"timings", no_argument, NULL, 'T'},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0},
    };
    cli_prove_opts_t po = {.verify = true};
    const char *cache = NULL;
    unsigned timeout_s = WITGEN_TIMEOUT_DEFAULT_S;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 't':
            if (cli_parse_threads("fullprove", optarg, &po.threads) < 0) return 2;
            break;
        case 'c': cache = optarg; break;
        case 'o':
            if (cli_parse_timeout("fullprove", optarg, &timeout_s) < 0) return 2;
            break;
        case 'T': po.timings = true; break;
        case 'h': fullprove_usage(stdout); return 0;
        default: fullprove_usage(stderr); return 2;
        }
    }
    if (argc - optind != 5) {
        fprintf(stderr, "zkpipe fullprove: expected 5 arguments, got %d\n", argc - optind);
        fullprove_usage(stderr);
        return 2;
    }
    const char *input = argv[optind], *wasm = argv[optind + 1], *zkey_path = argv[optind + 2];
    if (po.threads == 0) po.threads = zk_threads_default();
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    zk_err_t err = {{0}};
    const char *proof_path = argv[optind + 3], *public_path = argv[optind + 4];
    const char *inputs[4] = {input, wasm, zkey_path, po.r1cs_path};
    if (cli_prepare_outputs(proof_path, public_path, inputs, 4, &err) < 0) {
        fprintf(stderr, "zkpipe fullprove: %s\n", err.msg);
        return 1;
    }
    zk_zkey_t z;
    if (zk_zkey_open_flags(&z, zkey_path, ZK_ZKEY_LAZY, &err) < 0) { /* one pass over each section */
        fprintf(stderr, "zkpipe fullprove: %s\n", err.msg);
        cli_discard_outputs(proof_path, public_path);
        return 1;
    }
    int rc = 1;
    uint8_t *img = NULL;
    size_t len;
    zk_wtns_t w;
    if (cli_witness_compute(wasm, input, cli_witgen_cache(cache), timeout_s, &img, &len, &z, zkey_path, &err) == 0 &&
        zk_wtns_parse(&w, input, img, len, &err) == 0) {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double t_load = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
        if (po.timings) fprintf(stderr, "witness     %8.2f ms (with the key's load)\n", t_load);
        if (cli_prove_witness(&z, zkey_path, &w, input, &po, proof_path, public_path, &t0, t_load, &err) == 0) rc = 0;
        zk_wtns_free(&w);
    }
    if (rc) {
        fprintf(stderr, "zkpipe fullprove: %s\n", err.msg);
        cli_discard_outputs(proof_path, public_path);
    }
    free(img);
    zk_zkey_close(&z);
    return rc;
}
