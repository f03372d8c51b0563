/* witgen/: the compiled-generator cache (a changed wasm gets its own build, a truncated, foreign or
 * corrupt cached object is rebuilt and never loaded), traps that leave the generator usable, the
 * memory cap, the prime check against a zkey, and the input parser's number forms. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../test.h"
#include "witgen/witgen.h"
#include "zk/wtns.h"

static char cache[256];

static void write_str(const char *path, const char *s) {
    FILE *f = fopen(path, "w");
    fputs(s, f);
    fclose(f);
}

static void copy(const char *from, const char *to) {
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, a)) > 0) fwrite(buf, 1, n, b);
    fclose(a);
    fclose(b);
}

static long file_size(const char *p) {
    struct stat st;
    return stat(p, &st) < 0 ? -1 : (long)st.st_size;
}

static int calc(witgen_t *g, const char *json, uint8_t *out, size_t cap, size_t *len, zk_err_t *e) {
    char in[300];
    snprintf(in, sizeof in, "%s/in.json", cache);
    write_str(in, json);
    return witgen_calc(g, in, out, cap, len, e);
}

TEST(cache_rebuilds_truncated_foreign_and_changed) {
    witgen_opts_t o = {.cache_dir = cache};
    char so[1200], so2[1200];
    bool built;
    zk_err_t e = {{0}};
    const char *wasm = test_data("witgen/trap.wasm");
    CHECK_MSG(witgen_build(wasm, &o, so, sizeof so, &built, &e) == 0, "%s", e.msg);
    CHECK(built);
    CHECK_MSG(witgen_build(wasm, &o, so2, sizeof so2, &built, &e) == 0, "%s", e.msg);
    CHECK(!built); /* cached */
    CHECK(!strcmp(so, so2));
    long full = file_size(so);
    /* truncated: rejected by the check, rebuilt */
    CHECK(truncate(so, full / 2) == 0);
    uint8_t sha[32];
    CHECK(witgen_sha256_file(wasm, sha, &e) == 0);
    CHECK(witgen_cache_check(so, sha, &e) < 0);
    CHECK_STR_CONTAINS(e.msg, "truncated");
    CHECK_MSG(witgen_build(wasm, &o, so2, sizeof so2, &built, &e) == 0, "%s", e.msg);
    CHECK(built);
    CHECK_EQ_INT(file_size(so), full);
    /* a foreign file under the name (another generator's object): rebuilt */
    char other[1200];
    CHECK(witgen_build(test_data("witgen/guard.wasm"), &o, other, sizeof other, &built, &e) == 0);
    copy(other, so);
    CHECK(witgen_cache_check(so, sha, &e) < 0);
    CHECK_STR_CONTAINS(e.msg, "another wasm");
    /* one flipped byte in the object: corrupt, rebuilt */
    CHECK_MSG(witgen_build(wasm, &o, so2, sizeof so2, &built, &e) == 0, "%s", e.msg);
    CHECK(built);
    int fd = open(so, O_RDWR);
    uint8_t b;
    CHECK(pread(fd, &b, 1, 200) == 1);
    b ^= 1;
    CHECK(pwrite(fd, &b, 1, 200) == 1);
    close(fd);
    CHECK(witgen_cache_check(so, sha, &e) < 0);
    CHECK_STR_CONTAINS(e.msg, "corrupt");
    /* the loader rebuilds rather than run it */
    witgen_t *g;
    CHECK_MSG(witgen_open(&g, wasm, &o, &built, &e) == 0, "%s", e.msg);
    CHECK(built);
    witgen_close(g);
    /* a changed wasm is another build, under another name */
    char changed[300];
    snprintf(changed, sizeof changed, "%s/changed.wasm", cache);
    copy(wasm, changed);
    FILE *f = fopen(changed, "ab");
    static const char custom[] = {0, 9, 8, 't', 'r', 'a', 'i', 'l', 'i', 'n', 'g'};
    fwrite(custom, 1, sizeof custom, f); /* a custom section appended: same code, other bytes */
    fclose(f);
    CHECK_MSG(witgen_build(changed, &o, so2, sizeof so2, &built, &e) == 0, "%s", e.msg);
    CHECK(built);
    CHECK(strcmp(so, so2) != 0);
    return 0;
}

TEST(traps_are_reported_and_survived) {
    witgen_opts_t o = {.cache_dir = cache};
    witgen_t *g;
    zk_err_t e = {{0}};
    CHECK_MSG(witgen_open(&g, test_data("witgen/trap.wasm"), &o, NULL, &e) == 0, "%s", e.msg);
    CHECK(witgen_curve(g) == &zk_curve_bn128);
    CHECK_EQ_INT(witgen_n_witness(g), 2);
    size_t cap = witgen_wtns_size(g), len;
    uint8_t *out = aligned_alloc(64, 4096);
    static const struct {
        const char *json, *want;
    } cases[] = {
        {"{\"mode\": 1}", "out-of-bounds memory access"},
        {"{\"mode\": 2}", "call stack exhausted"},
        {"{\"mode\": 3}", "unreachable executed"},
        {"{\"mode\": 4}", "Not enough memory"},
    };
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            CHECK(calc(g, cases[i].json, out, cap, &len, &e) < 0);
            CHECK_STR_CONTAINS(e.msg, cases[i].want);
            /* and the same generator computes the next witness */
            CHECK_MSG(calc(g, "{\"mode\": \"9\"}", out, cap, &len, &e) == 0, "%s", e.msg);
            CHECK_EQ_INT(len, cap);
            zk_wtns_t w;
            CHECK_MSG(zk_wtns_parse(&w, "trap", out, len, &e) == 0, "%s", e.msg);
            CHECK_EQ_INT(w.n, 2);
            CHECK_EQ_INT(w.values[32], 9);
            zk_wtns_free(&w);
        }
    }
    /* a fault outside generator code is not turned into a trap */
    pid_t pid = fork();
    if (pid == 0) {
        volatile uintptr_t addr = 16;
        *(volatile int *)addr = 1;
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
    free(out);
    witgen_close(g);
    return 0;
}

TEST(memory_limit) {
    witgen_t *g;
    zk_err_t e = {{0}};
    /* a limit below the wasm's initial memory: refused when loaded */
    witgen_opts_t lo = {.cache_dir = cache, .memory_limit = 1 << 16};
    CHECK(witgen_open(&g, test_data("witgen/guard.wasm"), &lo, NULL, &e) < 0);
    CHECK_STR_CONTAINS(e.msg, "over the limit");
    /* growth past the limit is the generator's "Not enough memory", quickly */
    witgen_opts_t o = {.cache_dir = cache, .memory_limit = 8 << 20};
    CHECK_MSG(witgen_open(&g, test_data("witgen/trap.wasm"), &o, NULL, &e) == 0, "%s", e.msg);
    uint8_t out[1024];
    size_t len;
    CHECK(calc(g, "{\"mode\": 4}", out, sizeof out, &len, &e) < 0);
    CHECK_STR_CONTAINS(e.msg, "generator out of memory");
    CHECK(calc(g, "{\"mode\": 5}", out, sizeof out, &len, &e) == 0);
    witgen_close(g);
    return 0;
}

TEST(prime_against_zkey) {
    witgen_opts_t o = {.cache_dir = cache};
    witgen_t *g;
    zk_err_t e = {{0}};
    CHECK_MSG(witgen_open(&g, test_data("bls12381/mulchain/mulchain.wasm"), &o, NULL, &e) == 0, "%s", e.msg);
    CHECK(witgen_curve(g) == &zk_curve_bls12381);
    zk_zkey_t z;
    CHECK(zk_zkey_open(&z, test_data("bn128/mulchain/mulchain.zkey"), &e) == 0);
    CHECK(witgen_check_zkey(g, &z, "mulchain.zkey", &e) < 0);
    CHECK_STR_CONTAINS(e.msg, "prime is bls12381's, the zkey mulchain.zkey is for bn128");
    zk_zkey_close(&z);
    CHECK(zk_zkey_open(&z, test_data("bls12381/mulchain/mulchain.zkey"), &e) == 0);
    CHECK_MSG(witgen_check_zkey(g, &z, "mulchain.zkey", &e) == 0, "%s", e.msg);
    zk_zkey_close(&z);
    witgen_close(g);
    return 0;
}

TEST(input_number_forms) {
    /* p = 97 in one word: every form reduces the same way */
    const uint32_t p[1] = {97};
    char path[300];
    snprintf(path, sizeof path, "%s/forms.json", cache);
    write_str(path, "{\"a\": [[\"5\", \"0x61\", \"-1\", 200], [\" 98 \", -97, \"0b11\", \"0o17\"]],"
                    " \"b\": {\"c\": \"1000000000000000000000000000000000000000000000000000000000000000001\"}}");
    witgen_input_t in;
    zk_err_t e = {{0}};
    CHECK_MSG(witgen_input_load(&in, path, p, 1, &e) == 0, "%s", e.msg);
    CHECK_EQ_INT(in.n_signals, 2);
    CHECK(!strcmp(in.signals[0].name, "a"));
    CHECK_EQ_INT(in.signals[0].n, 8);
    static const uint32_t want[8] = {5, 0, 96, 200 % 97, 1, 0, 3, 15};
    for (int i = 0; i < 8; i++) CHECK_EQ_INT(in.signals[0].vals[i], want[i]);
    CHECK(!strcmp(in.signals[1].name, "b.c"));
    /* 10^66 + 1 mod 97 */
    uint64_t r = 1;
    for (int i = 0; i < 66; i++) r = r * 10 % 97;
    CHECK_EQ_INT(in.signals[1].vals[0], (r + 1) % 97);
    CHECK(in.signals[0].hash == witgen_fnv1a64("a"));
    witgen_input_free(&in);
    /* FNV-1a-64 of "in" as circom computes it */
    CHECK(witgen_fnv1a64("") == 0xcbf29ce484222325ull);
    CHECK(witgen_fnv1a64("a") == 0xaf63dc4c8601ec8cull);
    static const char *const bad[][2] = {
        {"{\"a\": \"1x\"}", "signal a: \"1x\" is not a number"},
        {"{\"a\": \"-0x5\"}", "is not a number"},
        {"{\"a\": true}", "signal a: true is not a number"},
        {"{\"a\": 2.5}", "signal a: 2.5 is not an integer"},
        {"{\"a\": 1e300}", "too large for a JSON number"},
        {"{\"a\": [{\"b\": 1}]}", "arrays of objects"},
        {"{\"a\": 1", "not valid JSON"},
        {"[1, 2]", "must be a JSON object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_str(path, bad[i][0]);
        CHECK_MSG(witgen_input_load(&in, path, p, 1, &e) < 0, "%s", bad[i][0]);
        CHECK_STR_CONTAINS(e.msg, bad[i][1]);
        CHECK_STR_CONTAINS(e.msg, "forms.json");
    }
    /* a FIFO where the input or the wasm belongs: an error, not a hang */
    char fifo[300];
    snprintf(fifo, sizeof fifo, "%s/fifo.json", cache);
    CHECK(mkfifo(fifo, 0600) == 0);
    CHECK(witgen_input_load(&in, fifo, p, 1, &e) < 0);
    CHECK_STR_CONTAINS(e.msg, "fifo.json: not a regular file");
    witgen_opts_t o = {.cache_dir = cache};
    witgen_t *g;
    CHECK(witgen_open(&g, fifo, &o, NULL, &e) < 0);
    CHECK_STR_CONTAINS(e.msg, "not a regular file");
    return 0;
}

static void cleanup(void) {
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", cache);
}

__attribute__((constructor)) static void setup(void) {
    snprintf(cache, sizeof cache, "/tmp/test_witgen.XXXXXX");
    if (!mkdtemp(cache)) abort();
    atexit(cleanup);
}

TEST(child_generator) {
    char script[300], out[300];
    snprintf(script, sizeof script, "%s/gen.sh", cache);
    snprintf(out, sizeof out, "%s/child.wtns", cache);
    /* ARGS... input.json out.wtns, and what the child does with them */
    write_str(script, "#!/bin/sh\n"
                      "case $1 in\n"
                      "ok) printf wtns >\"$3\" ;;\n"
                      "fail) echo 'bad input: no' >&2; exit 3 ;;\n"
                      "hog) exec python3 -c 'x = bytearray(1 << 30); print(len(x))' ;;\n"
                      "sleep) exec sleep 30 ;;\n"
                      "none) exit 0 ;;\n"
                      "esac\n");
    CHECK(chmod(script, 0755) == 0);
    char prog[400];
    zk_err_t e = {{0}};
    witgen_cmd_t c = {prog, 1, 256ull << 20, NULL, NULL};
    snprintf(prog, sizeof prog, "%s ok", script);
    CHECK_MSG(witgen_run_cmd(&c, "in.json", out, &e) == 0, "%s", e.msg);
    CHECK_EQ_INT(file_size(out), 4);
    snprintf(prog, sizeof prog, "%s fail", script);
    CHECK(witgen_run_cmd(&c, "in.json", out, &e) < 0);
    CHECK_STR_CONTAINS(e.msg, "gen.sh: exited with status 3: bad input: no");
    CHECK_EQ_INT(file_size(out), -1); /* an earlier run's output is not taken for this one's */
    snprintf(prog, sizeof prog, "%s hog", script); /* 1 GiB under a 256 MiB RLIMIT_AS */
    CHECK(witgen_run_cmd(&c, "in.json", out, &e) < 0);
    CHECK_STR_CONTAINS(e.msg, "MemoryError");
    snprintf(prog, sizeof prog, "%s sleep", script);
    CHECK(witgen_run_cmd(&c, "in.json", out, &e) < 0);
    CHECK_STR_CONTAINS(e.msg, "ran past its timeout of 1 s");
    snprintf(prog, sizeof prog, "%s none", script);
    CHECK(witgen_run_cmd(&c, "in.json", out, &e) < 0);
    CHECK_STR_CONTAINS(e.msg, "exited 0 but wrote no witness file");
    snprintf(prog, sizeof prog, "%s/no-such-generator", cache);
    CHECK(witgen_run_cmd(&c, "in.json", out, &e) < 0);
    CHECK_STR_CONTAINS(e.msg, "exited with status 127: cannot run");
    return 0;
}
