/* zkpipe keygen --insecure-dev: a Groth16 key for tests and benchmarks, made from an .r1cs with
 * random toxic waste that this process alone saw (zk/keygen.h). Refuses to run without the flag. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "zk/keygen.h"
#include "zk/r1cs.h"

static void keygen_usage(FILE *f) {
    fprintf(f, "Usage: zkpipe keygen --insecure-dev [options] <circuit.r1cs> <out.zkey> [<vk.json>]\n"
               "\n"
               "Makes a Groth16 proving key (snarkjs zkey format, readable by snarkjs 0.7.6 and zkpipe) and,\n"
               "optionally, its verification key in snarkjs's vk.json format, for a circom .r1cs (bn128 or\n"
               "bls12381, taken from the r1cs). The secrets tau, alpha, beta, delta come from getrandom(2) and\n"
               "gamma is 1. This is NOT a trusted setup: the key is for tests and benchmarks only.\n"
               "\n"
               "Options:\n"
               "  --insecure-dev   required: acknowledges that the key is insecure\n"
               "  --threads N      worker threads (default: every CPU this process may run on)\n"
               "  -q, --quiet      no summary line (the warning is always printed)\n"
               "  -h, --help       this text\n"
               "\n"
               "Exit status: 0 key written, 1 bad input or failure (one line on stderr), 2 bad usage.\n");
}

static void warn_insecure(void) {
    fprintf(stderr, "zkpipe keygen: WARNING: ***************************************************************\n"
                    "zkpipe keygen: WARNING: INSECURE DEVELOPMENT KEY. Its toxic waste was drawn on this machine\n"
                    "zkpipe keygen: WARNING: by this process, outside any ceremony: whoever ran or could inspect\n"
                    "zkpipe keygen: WARNING: it can forge proofs. Use it for tests and benchmarks ONLY.\n"
                    "zkpipe keygen: WARNING: ***************************************************************\n");
}

int zkpipe_cmd_keygen(int argc, char **argv) {
    static const struct option opts[] = {
        {"insecure-dev", no_argument, NULL, 'I'},
        {"threads", required_argument, NULL, 't'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0},
    };
    int insecure = 0, threads = 0, quiet = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hq", opts, NULL)) != -1) {
        switch (c) {
        case 'I':
            insecure = 1;
            break;
        case 't': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > 1024) {
                fprintf(stderr, "zkpipe keygen: --threads wants a number from 1 to 1024, not '%s'\n", optarg);
                return 2;
            }
            threads = (int)v;
            break;
        }
        case 'q':
            quiet = 1;
            break;
        case 'h':
            keygen_usage(stdout);
            return 0;
        default:
            keygen_usage(stderr);
            return 2;
        }
    }
    if (!insecure) {
        fprintf(stderr,
                "zkpipe keygen: refusing to run without --insecure-dev: the key it makes is not from a trusted\n"
                "setup and must only be used for tests and benchmarks\n");
        return 2;
    }
    int nargs = argc - optind;
    if (nargs != 2 && nargs != 3) {
        fprintf(stderr, "zkpipe keygen: expected 2 or 3 arguments, got %d\n", nargs);
        keygen_usage(stderr);
        return 2;
    }
    const char *r1cs_path = argv[optind], *zkey_path = argv[optind + 1];
    const char *vk_path = nargs == 3 ? argv[optind + 2] : NULL;
    warn_insecure();

    zk_err_t err = {{0}};
    zk_r1cs_t r;
    if (zk_r1cs_open(&r, r1cs_path, &err) < 0) {
        fprintf(stderr, "zkpipe keygen: %s\n", err.msg);
        return 1;
    }
    zk_keygen_stats_t st;
    const char *curve_name = r.curve->name;
    int rc = zk_keygen_insecure(&r, r1cs_path, zkey_path, vk_path, threads, &st, &err);
    zk_r1cs_close(&r);
    if (rc < 0) {
        fprintf(stderr, "zkpipe keygen: %s\n", err.msg);
        return 1;
    }
    if (!quiet)
        fprintf(
            stderr,
            "zkpipe keygen: wrote %s (%s, %u constraints, %u wires, %u public, domain 2^%d, %u coefs, %.1f MB)%s%s\n"
            "zkpipe keygen: times: evaluation %.2f s, tables %.2f s, G1 points %.2f s, G2 points %.2f s, "
            "coefs and writing %.2f s\n",
            zkey_path, curve_name, st.n_constraints, st.n_vars, st.n_pub, __builtin_ctz(st.domain_size), st.n_coefs,
            (double)st.file_size / 1e6, vk_path ? " and " : "", vk_path ? vk_path : "", (double)st.eval_ns / 1e9,
            (double)st.table_ns / 1e9, (double)st.g1_ns / 1e9, (double)st.g2_ns / 1e9, (double)st.write_ns / 1e9);
    return 0;
}
