/* zkpipe witness: `snarkjs wtns calculate` with the circuit's wasm compiled to native code
 * (witgen/), byte-identical output. zkpipe witgen build: compile the generators of an ini ahead. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "witgen/witgen.h"
#include "zk/groth16.h"
#include "zk/zkey.h"
#ifdef ZKPIPE_PIPELINE
#include "config/config.h"
#endif

/* --cache, else $ZKPIPE_CACHE, $XDG_CACHE_HOME/zkpipe, $HOME/.cache/zkpipe, the password file's home
 * directory's .cache/zkpipe, $XDG_RUNTIME_DIR/zkpipe-cache; NULL when there is none (never a shared
 * directory such as /tmp: another user could plant objects there). */
const char *cli_witgen_cache(const char *opt) {
    static char buf[1100];
    if (opt && opt[0]) return opt;
    return witgen_default_cache(buf, sizeof buf);
}

static void print_log_line(void *ctx, const char *line) {
    (void)ctx;
    printf("%s\n", line); /* snarkjs prints the circuit's log() lines on stdout */
}

int cli_parse_timeout(const char *cmd, const char *arg, unsigned *ret) {
    char *end;
    unsigned long v = strtoul(arg, &end, 10);
    if (!*arg || *end || arg[0] == '-' || v > 86400u * 365) {
        fprintf(stderr, "zkpipe %s: --timeout wants whole seconds (0 = no limit), not '%s'\n", cmd, arg);
        return -EINVAL;
    }
    *ret = (unsigned)v;
    return 0;
}

int cli_witness_compute(const char *wasm, const char *input, const char *cache, unsigned timeout_s, uint8_t **ret_img,
                        size_t *ret_len, const zk_zkey_t *z, const char *zkey_path, zk_err_t *err) {
    if (!cache)
        return zk_fail(err, ENOENT,
                       "no cache directory for compiled generators: HOME is unset and this user has no home; give "
                       "--cache DIR or set ZKPIPE_CACHE");
    witgen_opts_t o = {.cache_dir = cache, .timeout_s = timeout_s, .log_line = print_log_line};
    witgen_t *g;
    int r = witgen_open(&g, wasm, &o, NULL, err);
    if (r < 0) return r;
    if (z && (r = witgen_check_zkey(g, z, zkey_path, err)) < 0) {
        witgen_close(g);
        return r;
    }
    size_t cap = witgen_wtns_size(g);
    uint8_t *img = aligned_alloc(64, (cap + 63) & ~(size_t)63);
    if (!img) {
        witgen_close(g);
        return zk_fail(err, ENOMEM, "%s: out of memory for a witness of %zu bytes", input, cap);
    }
    r = witgen_calc(g, input, img, cap, ret_len, err);
    witgen_close(g);
    if (r < 0) {
        free(img);
        return r;
    }
    *ret_img = img;
    return 0;
}

static void witness_usage(FILE *f) {
    fprintf(f,
            "Usage: zkpipe witness [--cache DIR] [--timeout SECONDS] <circuit.wasm> <input.json> <out.wtns>\n"
            "\n"
            "Computes the witness of a circom circuit from its inputs, as `snarkjs wtns calculate` does, with the\n"
            "same .wtns bytes. The wasm is compiled once to native code (wasm2c and the C compiler) and kept in\n"
            "the cache, named by the wasm's hash.\n"
            "\n"
            "Options:\n"
            "  --cache DIR   compiled generators (default $ZKPIPE_CACHE, else $XDG_CACHE_HOME/zkpipe, else\n"
            "                ~/.cache/zkpipe, else $XDG_RUNTIME_DIR/zkpipe-cache); it must be owned by you (or\n"
            "                root) and not writable by group or others, and so must its objects\n"
            "  --timeout S   the generator's run may take S seconds (default %u, as synthd's witness_timeout;\n"
            "                0 = no limit), then it is stopped: \"generator ran past S s\", exit 1\n"
            "  -h, --help    this text\n"
            "\n"
            "Exit status: 0 witness written, 1 bad input or failure (one line on stderr), 2 bad usage.\n",
            WITGEN_TIMEOUT_DEFAULT_S);
}

int zkpipe_cmd_witness(int argc, char **argv) {
    static const struct option opts[] = {
        {"cache", required_argument, NULL, 'c'},
        {"timeout", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0},
    };
    const char *cache = NULL;
    unsigned timeout_s = WITGEN_TIMEOUT_DEFAULT_S;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            cache = optarg;
            break;
        case 't':
            if (cli_parse_timeout("witness", optarg, &timeout_s) < 0) return 2;
            break;
        case 'h':
            witness_usage(stdout);
            return 0;
        default:
            witness_usage(stderr);
            return 2;
        }
    }
    if (argc - optind != 3) {
        fprintf(stderr, "zkpipe witness: expected 3 arguments, got %d\n", argc - optind);
        witness_usage(stderr);
        return 2;
    }
    zk_err_t err = {{0}};
    uint8_t *img;
    size_t len;
    if (cli_witness_compute(argv[optind], argv[optind + 1], cli_witgen_cache(cache), timeout_s, &img, &len, NULL, NULL,
                            &err) < 0 ||
        zk_write_file_atomic(argv[optind + 2], (const char *)img, len, &err) < 0) {
        fprintf(stderr, "zkpipe witness: %s\n", err.msg);
        return 1;
    }
    free(img);
    return 0;
}

#ifdef ZKPIPE_PIPELINE
static void witgen_usage(FILE *f) {
    fprintf(f, "Usage: zkpipe witgen build [--config FILE] [CIRCUIT...]\n"
               "\n"
               "Compiles the wasm witness generator of every named circuit (default: every circuit with `wasm =`)\n"
               "into the ini's cache directory ([pipeline] cache), so that synthd finds it built. Prints one line\n"
               "per circuit: built or already cached, and the object's path.\n"
               "\n"
               "Exit status: 0 all built, 1 a build failed or a circuit has no wasm, 2 bad usage or bad ini.\n");
}

int zkpipe_cmd_witgen(int argc, char **argv) {
    static const struct option opts[] = {
        {"config", required_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0},
    };
    const char *config = CFG_DEFAULT_PATH;
    int c;
    optind = 1;
    if (argc >= 2 && !strcmp(argv[1], "--help")) {
        witgen_usage(stdout);
        return 0;
    }
    if (argc < 2 || strcmp(argv[1], "build")) {
        witgen_usage(stderr);
        return 2;
    }
    argc--;
    argv++;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            config = optarg;
            break;
        case 'h':
            witgen_usage(stdout);
            return 0;
        default:
            witgen_usage(stderr);
            return 2;
        }
    }
    static cfg_t cfg;
    char cerr[1200];
    if (cfg_load(&cfg, config, cerr, sizeof cerr) < 0) {
        fprintf(stderr, "zkpipe witgen: %s\n", cerr);
        return 2;
    }
    int rc = 0, n = 0;
    for (uint32_t i = 0; i < cfg.n_circuits; i++) {
        const cfg_circuit_t *ci = &cfg.circuits[i];
        bool named = optind >= argc;
        for (int k = optind; k < argc; k++) named |= !strcmp(argv[k], ci->name);
        if (!named || (optind >= argc && !ci->wasm[0])) continue;
        n++;
        if (!ci->wasm[0]) {
            fprintf(stderr, "zkpipe witgen: circuit %s has no wasm in %s\n", ci->name, cfg.path);
            rc = 1;
            continue;
        }
        witgen_opts_t o = {.cache_dir = cfg.cache};
        char so[1200];
        bool built;
        zk_err_t err = {{0}};
        if (witgen_build(ci->wasm, &o, so, sizeof so, &built, &err) < 0) {
            fprintf(stderr, "zkpipe witgen: circuit %s: %s\n", ci->name, err.msg);
            rc = 1;
            continue;
        }
        printf("%s: %s %s\n", ci->name, built ? "built" : "cached", so);
    }
    for (int k = optind; k < argc; k++)
        if (!cfg_circuit(&cfg, argv[k])) {
            fprintf(stderr, "zkpipe witgen: circuit %s is not configured in %s\n", argv[k], cfg.path);
            rc = 1;
        }
    if (n == 0 && rc == 0) printf("no circuit has a wasm in %s\n", cfg.path);
    return rc;
}
#endif
