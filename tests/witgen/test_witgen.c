/* witgen/: the compiled-generator cache (a changed wasm gets its own build, a truncated, foreign or
 * corrupt cached object is rebuilt and never loaded), traps that leave the generator usable, the
 * memory cap, the prime check against a zkey, the input parser's number forms, the native field
 * runtime (witgen/fr_native.c) against the wasm's own functions on random and edge values, and
 * split.c's folding of constant copies (the same calls and registers as the text it replaces). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../smaps.h"
#include "../test.h"
#include "witgen/module.h"
#include "witgen/split.h"
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

/* two processes that need one object at once (two synthds on a new circuit): one builds it, the
 * other waits for that build and loads it; neither fails nor builds it again */
TEST(concurrent_builds_of_one_object) {
    char dir[300];
    snprintf(dir, sizeof dir, "%s/concurrent", cache);
    witgen_opts_t o = {.cache_dir = dir};
    const char *wasm = test_data("witgen/guard.wasm");
    int go[2];
    CHECK(pipe(go) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    char c;
    if (pid == 0) {
        close(go[1]);
        if (read(go[0], &c, 1) != 1) _exit(3);
        witgen_t *g;
        bool built;
        zk_err_t e = {{0}};
        int r = witgen_open(&g, wasm, &o, &built, &e);
        if (r < 0) fprintf(stderr, "child: %s\n", e.msg);
        _exit(r < 0 ? 2 : built);
    }
    close(go[0]);
    CHECK(write(go[1], "x", 1) == 1); /* both start now */
    close(go[1]);
    witgen_t *g;
    bool built;
    zk_err_t e = {{0}};
    CHECK_MSG(witgen_open(&g, wasm, &o, &built, &e) == 0, "%s", e.msg);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) < 2, "the other process failed (status %d)", st);
    CHECK_EQ_INT((int)built + WEXITSTATUS(st), 1);
    witgen_close(g);
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

TEST(hugepages_advice_follows_the_option) {
    witgen_t *g;
    zk_err_t e = {{0}};
    uint8_t out[1024];
    size_t len;
    /* [pipeline] hugepages = yes in synthd: the linear memory is advised */
    witgen_opts_t yes = {.cache_dir = cache, .hugepages = true};
    CHECK_MSG(witgen_open(&g, test_data("witgen/trap.wasm"), &yes, NULL, &e) == 0, "%s", e.msg);
    CHECK(calc(g, "{\"mode\": 5}", out, sizeof out, &len, &e) == 0);
    CHECK(smaps_advised_bytes(0, UINTPTR_MAX) >= 0x200000000ull); /* runtime.c's RESERVATION */
    witgen_close(g);
    /* otherwise (zkpipe witness, the default) the system's policy decides: no advice */
    witgen_opts_t no = {.cache_dir = cache};
    CHECK_MSG(witgen_open(&g, test_data("witgen/trap.wasm"), &no, NULL, &e) == 0, "%s", e.msg);
    CHECK(calc(g, "{\"mode\": 5}", out, sizeof out, &len, &e) == 0);
    CHECK(smaps_advised_bytes(0, UINTPTR_MAX) == 0);
    witgen_close(g);
    return 0;
}

/* Each instance reserves 8 GiB of address space; one dropped (a trap, a closed generator) must give
 * all of it back, or a synthd fed bad inputs runs out of address space and mappings. */
TEST(dropped_instances_return_their_address_space) {
    witgen_t *g;
    zk_err_t e = {{0}};
    uint8_t out[1024];
    size_t len;
    witgen_opts_t o = {.cache_dir = cache};
    long before = status_kb("VmSize:");
    for (int k = 0; k < 4; k++) {
        CHECK_MSG(witgen_open(&g, test_data("witgen/trap.wasm"), &o, NULL, &e) == 0, "%s", e.msg);
        CHECK(calc(g, "{\"mode\": 1}", out, sizeof out, &len, &e) < 0); /* a trap: a fresh instance next */
        CHECK(calc(g, "{\"mode\": 5}", out, sizeof out, &len, &e) == 0);
        witgen_close(g);
    }
    long after = status_kb("VmSize:");
    /* 8 instances made and dropped: 64 GiB of reservations if they leaked */
    CHECK_MSG(before > 0 && after < before + (1l << 20), "VmSize %ld kB -> %ld kB", before, after);
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
        {"{\"a\": \"1x\"}", "signal a: a string that is not a number"},
        {"{\"a\": \"-0x5\"}", "signal a: a string that is not a number"},
        {"{\"a\": true}", "signal a: a JSON boolean is not a number"},
        {"{\"a\": 2.5}", "signal a: a JSON number that is not an integer"},
        {"{\"a\": 1e300}", "a JSON number too large to be exact"},
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
    /* an error never carries the value (issue 25, 10: /status showed 60 characters of it) */
    static const char *const secret[] = {"{\"a\": \"SECRET7x\"}", "{\"a\": 7.5e-7}", "{\"a\": 98765432109876543210}",
                                         "{\"a\": [\"SECRET7\", \"SECRET7y\"]}"};
    for (size_t i = 0; i < sizeof secret / sizeof secret[0]; i++) {
        write_str(path, secret[i]);
        CHECK_MSG(witgen_input_load(&in, path, p, 1, &e) < 0, "%s", secret[i]);
        CHECK_MSG(!strstr(e.msg, "SECRET") && !strstr(e.msg, "765") && !strstr(e.msg, "7.5"), "the value is in: %s", e.msg);
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

/* ---- the native field runtime against the wasm's own functions ---- */

static uint64_t rng_state;
static uint64_t rnd64(void) { /* splitmix64 */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* a 256-bit value (4 LE words): random, below q, or an edge of the field or of 2^256 */
static void rnd_long(uint64_t v[4], const uint64_t q[4]) {
    uint64_t one[4] = {1, 0, 0, 0};
    switch (rnd64() % 12) {
    case 0: /* 0 */
        memset(v, 0, 32);
        return;
    case 1: /* 1 */
        memcpy(v, one, 32);
        return;
    case 2: /* q - 1 */
        memcpy(v, q, 32), v[0] -= 1;
        return;
    case 3: /* q itself: the runtime allows it */
        memcpy(v, q, 32);
        return;
    case 4: /* q + 1 */
        memcpy(v, q, 32), v[0] += 1;
        return;
    case 5: /* 2^256 - 1 */
        memset(v, 0xff, 32);
        return;
    case 6: /* (q - 1) / 2 and (q + 1) / 2 */
    case 7:
        for (int i = 0; i < 4; i++) v[i] = q[i] >> 1 | (i < 3 ? q[i + 1] << 63 : 0);
        v[0] += rnd64() % 2;
        return;
    case 8: /* one word */
        memset(v, 0, 32), v[0] = rnd64();
        return;
    case 9: /* anything below 2^256 */
        for (int i = 0; i < 4; i++) v[i] = rnd64();
        return;
    default: /* below q */
        for (int i = 0; i < 4; i++) v[i] = rnd64();
        v[3] %= q[3];
    }
}

/* a circom value at mem + a: short (i32), long normal or long Montgomery, with junk where unused */
static void rnd_value(uint8_t *mem, uint32_t a, const uint64_t q[4]) {
    static const uint32_t types[] = {0, 0x40000000u, 0x80000000u, 0xc0000000u};
    static const int32_t shorts[] = {0, 1, -1, 2, -2, INT32_MAX, INT32_MIN, INT32_MIN + 1};
    int32_t s = rnd64() % 2 ? (int32_t)rnd64() : shorts[rnd64() % 8];
    uint32_t ty = types[rnd64() % 4];
    uint64_t v[4];
    rnd_long(v, q);
    memcpy(mem + a, &s, 4);
    memcpy(mem + a + 4, &ty, 4);
    memcpy(mem + a + 8, v, 32);
}

#define FR_NAME(name, kind) #name,
#define FR_KIND(name, kind) #kind,
static const char *const fr_names[] = {WITGEN_FR_NATIVES(FR_NAME)};
static const char *const fr_kinds[] = {WITGEN_FR_NATIVES(FR_KIND)};

/* bytes of the runtime's scratch that the wasm's Fr_F1m_fromMontgomery writes and fr_native.c
 * need not (fr_native.c's invariant) */
static bool scratch(uint32_t off) { return (off >= 992 && off < 1024) || (off >= 1504 && off < 1568); }

#define FR_REGION 8192u
#define SLOT_A 4096u
#define SLOT_B 4136u
#define SLOT_R 4176u

static int native_fr_matches(const char *wasm, uint32_t curve, unsigned iters) {
    witgen_opts_t o = {.cache_dir = cache};
    witgen_t *g;
    zk_err_t e = {{0}};
    CHECK_MSG(witgen_open(&g, test_data(wasm), &o, NULL, &e) == 0, "%s", e.msg);
    void *inst;
    const struct witgen_module *m = witgen_module_of(g, &inst);
    CHECK_MSG(m->native_fr == curve, "%s: compiled with native field runtime %u, want %u", wasm, m->native_fr, curve);
    CHECK(m->check_native(inst) == 0);
    CHECK(m->fr_call(inst, WITGEN_FR_COUNT, 1, 0, 0, 0) == 0xdeadbeefu);
    struct witgen_memory_view *mv = m->memory(inst);
    uint8_t *mem = mv->data;
    CHECK(mv->size >= FR_REGION);
    uint64_t q[4];
    memcpy(q, mem + 608, 32);
    static uint8_t start[FR_REGION], after_wasm[FR_REGION];
    memcpy(start, mem, FR_REGION); /* the runtime's constants as instantiated */
    static const int64_t v64[] = {0, 1, -1, 2, INT64_MAX, INT64_MIN, INT64_MIN + 1, (int64_t)INT32_MIN - 1, INT32_MAX};
    for (uint32_t fn = 0; fn < WITGEN_FR_COUNT; fn++) {
        bool raw = !strncmp(fr_names[fn], "int_", 4) || !strncmp(fr_names[fn], "F1m_", 4); /* 32-byte integers */
        for (unsigned it = 0; it < iters; it++) {
            memcpy(mem, start, FR_REGION);
            rnd_value(mem, SLOT_A, q), rnd_value(mem, SLOT_B, q), rnd_value(mem, SLOT_R, q);
            uint32_t a = SLOT_A, b = SLOT_B, r = SLOT_R;
            unsigned alias = rnd64() % 4; /* the result in place of an argument, as circom's code does */
            if (alias == 1) r = a;
            if (alias == 2) r = b;
            if (raw) a += 8, b += 8, r += 8;
            const char *k = fr_kinds[fn];
            uint32_t x0 = a, x2 = 0;
            uint64_t x1 = b;
            if (!strcmp(k, "xyr_ret") || !strcmp(k, "xyr"))
                x2 = r;
            else if (!strcmp(k, "xr"))
                x1 = r;
            else if (!strcmp(k, "rx"))
                x0 = r, x1 = a;
            else if (!strcmp(k, "r"))
                x0 = alias ? r : a;
            else if (!strcmp(k, "rv"))
                x0 = r, x1 = rnd64() % 2 ? rnd64() : (uint64_t)v64[rnd64() % 9];
            uint8_t before[FR_REGION];
            memcpy(before, mem, FR_REGION);
            uint32_t want = m->fr_call(inst, fn, 0, x0, x1, x2);
            memcpy(after_wasm, mem, FR_REGION);
            memcpy(mem, before, FR_REGION);
            uint32_t nat = 1 + it % 2; /* the best product for this CPU, and the portable one */
            uint32_t got = m->fr_call(inst, fn, nat, x0, x1, x2);
            CHECK_MSG(got == want, "%s Fr_%s(%u, %llu, %u) #%u: native (%u) returns %u, the wasm %u", wasm,
                      fr_names[fn], x0, (unsigned long long)x1, x2, it, nat, got, want);
            for (uint32_t off = 0; off < FR_REGION; off++)
                CHECK_MSG(mem[off] == after_wasm[off] || scratch(off),
                          "%s Fr_%s(%u, %llu, %u) #%u: byte %u is %u native (%u), %u wasm", wasm, fr_names[fn], x0,
                          (unsigned long long)x1, x2, it, off, mem[off], nat, after_wasm[off]);
        }
    }
    witgen_close(g);
    return 0;
}

/* every native function leaves the memory (outside its scratch) and returns what the wasm's own
 * does, on random and edge values of every kind of circom value, both curves */
TEST(native_field_runtime_matches_the_wasm) {
    const char *seed = getenv("WITGEN_SEED");
    rng_state = seed ? strtoull(seed, NULL, 10) : (uint64_t)time(NULL);
    printf("native field runtime: WITGEN_SEED=%llu\n", (unsigned long long)rng_state);
    if (native_fr_matches("bn128/mulchain/mulchain.wasm", 1, 3000)) return 1;
    if (native_fr_matches("bls12381/mulchain/mulchain.wasm", 2, 3000)) return 1;
    /* a runtime that is not the fingerprinted one keeps the wasm's code: trap.wasm has none */
    witgen_opts_t o = {.cache_dir = cache};
    witgen_t *g;
    zk_err_t e = {{0}};
    CHECK_MSG(witgen_open(&g, test_data("witgen/trap.wasm"), &o, NULL, &e) == 0, "%s", e.msg);
    void *inst;
    CHECK(witgen_module_of(g, &inst)->native_fr == 0);
    witgen_close(g);
    /* the fingerprinted runtime with another q in its data: refused when loaded, never run with the
     * natives' prime (every copy of bn128's r in the wasm has one byte changed) */
    static const uint8_t r_le[32] = {0x01, 0x00, 0x00, 0xf0, 0x93, 0xf5, 0xe1, 0x43, 0x91, 0x70, 0xb9,
                                     0x79, 0x48, 0xe8, 0x33, 0x28, 0x5d, 0x58, 0x81, 0x81, 0xb6, 0x45,
                                     0x50, 0xb8, 0x29, 0xa0, 0x31, 0xe1, 0x72, 0x4e, 0x64, 0x30};
    char bad[300];
    snprintf(bad, sizeof bad, "%s/otherq.wasm", cache);
    copy(test_data("bn128/mulchain/mulchain.wasm"), bad);
    FILE *f = fopen(bad, "r+b");
    static uint8_t w[1 << 20];
    size_t n = fread(w, 1, sizeof w, f), changed = 0;
    for (size_t i = 0; i + 32 <= n; i++)
        if (!memcmp(w + i, r_le, 32)) w[i + 31] ^= 0x01, changed++;
    CHECK(changed > 0);
    rewind(f);
    CHECK(fwrite(w, 1, n, f) == n);
    fclose(f);
    CHECK(witgen_open(&g, bad, &o, NULL, &e) < 0);
    CHECK_STR_CONTAINS(e.msg, "otherq.wasm: the wasm's prime is not the one of its field code (bn128's)");
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
    /* 5 s: python3's start alone can take more than a second on a loaded machine */
    witgen_cmd_t c = {.program = prog, .timeout_s = 5, .memory_limit = 256ull << 20};
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
    CHECK_STR_CONTAINS(e.msg, "ran past its timeout of 5 s");
    snprintf(prog, sizeof prog, "%s none", script);
    CHECK(witgen_run_cmd(&c, "in.json", out, &e) < 0);
    CHECK_STR_CONTAINS(e.msg, "exited 0 but wrote no witness file");
    snprintf(prog, sizeof prog, "%s/no-such-generator", cache);
    CHECK(witgen_run_cmd(&c, "in.json", out, &e) < 0);
    CHECK_STR_CONTAINS(e.msg, "exited with status 127: cannot run");
    return 0;
}

/* One wasm2c-style copy of a constant: A = K; B = M; A *= B; B = BASE; A += B; B = C; copy(A, B). */
static void put_copy(char **p, const char *ind, const char *a, const char *b, const char *base, unsigned k, unsigned m,
                     unsigned c) {
    *p += sprintf(*p,
                  "%s%s = %uu;\n%s%s = %uu;\n%s%s *= %s;\n%s%s = %s;\n%s%s += %s;\n%s%s = %uu;\n"
                  "%sw2c_Fr_copy(instance, %s, %s);\n",
                  ind, a, k, ind, b, m, ind, a, b, ind, b, base, ind, a, b, ind, b, c, ind, a, b);
}

/* Runs the program main.c + fn (one function w2c_f) in dir: its output (every copy's arguments and
 * the registers at the end) into out. */
static int run_fn(const char *dir, const char *name, const char *fn, char *out, size_t cap) {
    char path[300], cmd[900];
    snprintf(path, sizeof path, "%s/%s.c", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "#include <stdint.h>\n#include <stdio.h>\ntypedef uint32_t u32;\n"
               "typedef struct { int n; } Z_circuit_instance_t;\n"
               "static void w2c_Fr_copy(Z_circuit_instance_t *in, u32 r, u32 x) { printf(\"%%d %%u %%u\\n\", in->n++, r, x); }\n"
               "%s\n"
               "int main(void) { Z_circuit_instance_t in = {0}; w2c_f(&in, 1000u, 7u); w2c_f(&in, 4294967000u, 3u); return 0; }\n",
            fn);
    fclose(f);
    snprintf(cmd, sizeof cmd, "cd '%s' && cc -O1 -w -o %s %s.c && ./%s > %s.out", dir, name, name, name, name);
    if (system(cmd) != 0) return -1;
    snprintf(path, sizeof path, "%s/%s.out", dir, name);
    f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(out, 1, cap - 1, f);
    fclose(f);
    out[n] = 0;
    return 0;
}

TEST(constant_copy_runs_fold_to_the_same_calls) {
    static char fn[1 << 16], *p;
    p = fn;
    p += sprintf(p, "static u32 w2c_f(Z_circuit_instance_t* instance, u32 w2c_lvar, u32 w2c_other) {\n"
                    "  u32 w2c_i0 = 0, w2c_i1 = 0, w2c_i2 = 0;\n");
    /* a run of 6 (folded) */
    for (unsigned k = 0; k < 6; k++) put_copy(&p, "  ", "w2c_i0", "w2c_i1", "w2c_lvar", k, 40, 70518088u + 40 * k);
    /* 5 in a block, other registers, K * M past 2^32 (folded: u32 arithmetic wraps alike) */
    p += sprintf(p, "  if (w2c_other) {\n");
    for (unsigned k = 0; k < 5; k++)
        put_copy(&p, "    ", "w2c_i1", "w2c_i2", "w2c_other", 0xf0000000u + k, 40, 100u + (k % 2) * 40);
    p += sprintf(p, "  }\n");
    /* 3, a label, 4: only the 4 are folded (no jump may enter a folded run) */
    for (unsigned k = 0; k < 3; k++) put_copy(&p, "  ", "w2c_i0", "w2c_i1", "w2c_lvar", k, 40, 500u + k);
    p += sprintf(p, "  w2c_L1:;\n");
    for (unsigned k = 3; k < 7; k++) put_copy(&p, "  ", "w2c_i0", "w2c_i1", "w2c_lvar", k, 40, 500u + k);
    /* the base is one of the registers: never folded */
    for (unsigned k = 0; k < 5; k++) put_copy(&p, "  ", "w2c_i0", "w2c_i1", "w2c_i1", k, 40, 900u + k);
    /* the base changes after 4, the multiplier after 4 more: three runs */
    for (unsigned k = 0; k < 4; k++) put_copy(&p, "  ", "w2c_i0", "w2c_i1", "w2c_lvar", k, 40, 1000u + k);
    for (unsigned k = 0; k < 4; k++) put_copy(&p, "  ", "w2c_i0", "w2c_i1", "w2c_other", k, 40, 2000u + k);
    for (unsigned k = 0; k < 4; k++) put_copy(&p, "  ", "w2c_i0", "w2c_i1", "w2c_other", k, 48, 3000u + k);
    p += sprintf(p, "  printf(\"%%u %%u %%u\\n\", w2c_i0, w2c_i1, w2c_i2);\n  return 0;\n}\n");
    size_t n;
    char *folded = witgen_fold_copies(fn, &n);
    CHECK(folded);
    int tables = 0;
    for (const char *q = folded; (q = strstr(q, "static const u32 witgen_cp[")); q++) tables++;
    CHECK_EQ_INT(tables, 6);
    CHECK(n < strlen(fn));
    static char want[1 << 16], got[1 << 16];
    CHECK(run_fn(cache, "fold_orig", fn, want, sizeof want) == 0);
    int r = run_fn(cache, "fold_new", folded, got, sizeof got);
    free(folded);
    CHECK(r == 0);
    CHECK(strlen(want) > 1000);
    CHECK_MSG(!strcmp(want, got), "the folded text calls or leaves other values:\n%s\nagainst\n%s", got, want);
    return 0;
}
