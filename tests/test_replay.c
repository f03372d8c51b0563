/* The replay backend's model, hashes and results cache (gpud/replay.h, docs/replay.md): the model
 * file's errors name the file and line; a partition's plan follows the interpolation rules; an
 * entry is found only for its key and input, and a torn or corrupted one is an error, not a result;
 * the backend's poll says a lane has finished only at its modelled end, and how long is left. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpud/backend.h"
#include "gpud/replay.h"
#include "test.h"
#include "zk/zkey.h"

static char dir[] = "/tmp/zkpipe-test-replay.XXXXXX";
static zk_zkey_t mulchain;

TEST_SETUP() {
    zk_err_t e = {{0}};
    if (!mkdtemp(dir)) return 1;
    return zk_zkey_open(&mulchain, test_data("bn128/mulchain/mulchain.zkey"), &e) < 0 ? 1 : 0;
}

TEST_TEARDOWN() {
    zk_zkey_close(&mulchain);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : 1;
}

static const char *write_model(const char *name, const char *text) {
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) return NULL;
    fputs(text, f);
    fclose(f);
    return path;
}

/* mulchain: 1003 wires, 2 public, domain 1024 */
TEST(plan_interpolates) {
    const char *p = write_model("m.ini", "[device]\nname = t\nh2d = 1G\nfixed = 100us\n"
                                         "[bn128]\nmsm_g1 = 512 1ms, 1536 3ms\n"
                                         "msm_g2 = 256 1ms, 2^9 2ms\n" /* extrapolated: the last slope */
                                         "ntt = 2^11 0.5ms\n");        /* below the first point: its time */
    zk_replay_model_t m;
    zk_err_t e = {{0}};
    CHECK_MSG(zk_replay_model_load(&m, p, &e) == 0, "%s", e.msg);
    zk_replay_plan_t pl;
    CHECK(zk_replay_plan(&m, &mulchain, &pl, &e) == 0);
    CHECK_EQ_INT(pl.h2d_bytes, (1003 + 3 * 1024) * 32);
    CHECK_EQ_INT(pl.t.h2d_ns, (1003 + 3 * 1024) * 32);           /* 1 ns a byte */
    CHECK_EQ_INT(pl.t.msm_a_ns, 1000000 + 2000000 * 491 / 1024); /* 1003 between 512 and 1536 */
    CHECK_EQ_INT(pl.t.msm_b1_ns, pl.t.msm_a_ns);
    CHECK_EQ_INT(pl.t.msm_c_ns, 1000000 + 2000000 * 488 / 1024); /* 1003 - 2 - 1 */
    CHECK_EQ_INT(pl.t.msm_h_ns, 1000000 + 2000000 * 512 / 1024);
    CHECK(pl.t.msm_b2_ns > 3917900 && pl.t.msm_b2_ns < 3918000); /* 2 ms + 491 x 1/256 ms */
    CHECK_EQ_INT(pl.t.ntt_ns, 6 * 500000);
    CHECK_EQ_INT(pl.fixed_ns, 100000);
    CHECK_EQ_INT(pl.compute_ns, pl.t.ntt_ns + pl.t.msm_a_ns + pl.t.msm_b1_ns + pl.t.msm_b2_ns + pl.t.msm_c_ns +
                                    pl.t.msm_h_ns + pl.fixed_ns);
    /* no section for the key's curve: the plan says so */
    p = write_model("bls.ini",
                    "[device]\nname = t\nh2d = 1G\n[bls12381]\nmsm_g1 = 1 1ms\nmsm_g2 = 1 1ms\nntt = 1 1ms\n");
    CHECK_MSG(zk_replay_model_load(&m, p, &e) == 0, "%s", e.msg);
    CHECK(zk_replay_plan(&m, &mulchain, &pl, &e) < 0);
    CHECK_STR_CONTAINS(e.msg, "has no [bn128] section");
    return 0;
}

TEST(model_errors_name_file_and_line) {
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"[device]\nname = t\nh2d = 1G\nbogus = 1\n", "m.ini:4: unknown key 'bogus' in [device]"},
        {"[device]\nname = t\nh2d = fast\n", "m.ini:3: h2d (bytes per second: 25G, 800M) = fast"},
        {"[device]\nname = t\nh2d = 1G\n[bn128]\nmsm_g1 = 2^20 1ms, 2^10 2ms\n", "m.ini:5: msm_g1: sizes must rise"},
        {"[device]\nname = t\nh2d = 1G\n[bn128]\nntt = 2^20 fast\n", "m.ini:5: ntt = 2^20 fast: expected SIZE TIME"},
        {"[device]\nname = t\nh2d = 1G\n[gpu]\nntt = 1 1ms\n", "m.ini:5: key 'ntt' in [gpu]"},
        {"[device]\nname = t\n[bn128]\nmsm_g1 = 1 1ms\nmsm_g2 = 1 1ms\nntt = 1 1ms\n", "[device] has no h2d"},
        {"[device]\nname = t\nh2d = 1G\n[bn128]\nmsm_g1 = 1 1ms\nmsm_g2 = 1 1ms\n", "[bn128] has no ntt"},
        {"[device]\nname = t\nh2d = 1G\n", "no [bn128] or [bls12381] section"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        zk_replay_model_t m;
        zk_err_t e = {{0}};
        CHECK(zk_replay_model_load(&m, write_model("m.ini", cases[i].text), &e) < 0);
        CHECK_STR_CONTAINS(e.msg, cases[i].want);
    }
    /* a line longer than the ini reader takes is an error, never read as two lines */
    char long_text[1200] = "[device]\nname = t\nh2d = 1G\n[bn128]\nmsm_g1 = 1 1ms";
    while (strlen(long_text) < 1000) strcat(long_text, ", 1 1ms");
    zk_replay_model_t m;
    zk_err_t e = {{0}};
    CHECK(zk_replay_model_load(&m, write_model("m.ini", long_text), &e) < 0);
    CHECK_STR_CONTAINS(e.msg, "m.ini:5: line is longer than");
    CHECK(zk_replay_model_load(&m, "/nonexistent/model.ini", &e) < 0);
    CHECK_STR_CONTAINS(e.msg, "/nonexistent/model.ini: cannot open");
    return 0;
}

TEST(entries_only_for_their_key_and_input) {
    zk_replay_hash_t key, other_key, input, other_input;
    zk_replay_key_hash(&mulchain, &key);
    zk_replay_key_hash(&mulchain, &other_key);
    CHECK(!memcmp(&key, &other_key, sizeof key)); /* the same content, the same hash */
    other_key.b[0] ^= 1;
    size_t each = (size_t)mulchain.domain_size * 32;
    uint8_t *w = calloc(mulchain.n_vars, 32), *abc = calloc(3, each);
    CHECK(w && abc);
    zk_replay_input_hash(&mulchain, w, abc, abc + each, abc + 2 * each, &input);
    abc[2 * each + 7] = 1; /* one byte of c */
    zk_replay_input_hash(&mulchain, w, abc, abc + each, abc + 2 * each, &other_input);
    CHECK(memcmp(&input, &other_input, sizeof input));
    /* the streaming hasher, in pieces, is the same hash */
    zk_replay_hasher_t *h = zk_replay_hasher_new();
    CHECK(h);
    zk_replay_hasher_update(h, w, 100);
    zk_replay_hasher_update(h, w + 100, (size_t)mulchain.n_vars * 32 - 100);
    zk_replay_hasher_update(h, abc, 3 * each);
    zk_replay_hash_t streamed;
    zk_replay_hasher_digest(h, &streamed);
    zk_replay_hasher_free(h);
    CHECK(!memcmp(&streamed, &other_input, sizeof streamed));
    free(w);
    free(abc);

    zk_raw_t raw, got;
    memset(&raw, 0x5a, sizeof raw);
    zk_err_t e = {{0}};
    char cache[300];
    snprintf(cache, sizeof cache, "%s/cache/replay", dir);
    CHECK(zk_replay_entry_get(cache, &mulchain, &key, &input, &got, &e) == -ENOENT);
    CHECK_STR_CONTAINS(e.msg, "replay: no cached result for this witness");
    CHECK_MSG(zk_replay_entry_put(cache, &mulchain, &key, &input, &raw, &e) == 0, "%s", e.msg);
    CHECK_MSG(zk_replay_entry_get(cache, &mulchain, &key, &input, &got, &e) == 0, "%s", e.msg);
    CHECK(!memcmp(&raw, &got, sizeof raw));
    CHECK(zk_replay_entry_get(cache, &mulchain, &other_key, &input, &got, &e) == -ENOENT);
    CHECK(zk_replay_entry_get(cache, &mulchain, &key, &other_input, &got, &e) == -ENOENT);

    /* a flipped byte, a torn file: errors naming the entry, never a result */
    char path[600];
    CHECK(zk_replay_entry_path(path, sizeof path, cache, &key, &input) == 0);
    int fd = open(path, O_RDWR);
    CHECK(fd >= 0);
    uint8_t b;
    CHECK(pread(fd, &b, 1, 200) == 1);
    b ^= 0x80;
    CHECK(pwrite(fd, &b, 1, 200) == 1);
    CHECK(zk_replay_entry_get(cache, &mulchain, &key, &input, &got, &e) == -EINVAL);
    CHECK_STR_CONTAINS(e.msg, "corrupt or not for this key and input");
    CHECK_STR_CONTAINS(e.msg, path);
    CHECK(ftruncate(fd, 100) == 0);
    close(fd);
    CHECK(zk_replay_entry_get(cache, &mulchain, &key, &input, &got, &e) == -EINVAL);
    CHECK_STR_CONTAINS(e.msg, "not a whole entry");
    /* a symlink where the entry belongs is not followed */
    CHECK(unlink(path) == 0);
    CHECK(symlink("/etc/passwd", path) == 0);
    CHECK(zk_replay_entry_get(cache, &mulchain, &key, &input, &got, &e) < 0);
    CHECK_STR_CONTAINS(e.msg, "cannot open");
    return 0;
}

static uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Two partitions in flight: each lane's poll says 0 and the time left until its modelled end
 * (lane 1 ends a partition after lane 0: one compute after the other), then 1 once that end has
 * passed; the lanes may be collected in either order. */
TEST(backend_polls_lanes) {
    /* mulchain on this model: 4 x 10 + 20 + 6 x 1 + 934 = 1000 ms of compute a partition (long, so
     * that a loaded machine's delays between the calls below stay far inside it) */
    const char *model = write_model("poll.ini", "[device]\nname = poll\nh2d = 1G\nfixed = 934ms\n"
                                                "[bn128]\nmsm_g1 = 2^10 10ms\nmsm_g2 = 2^10 20ms\nntt = 2^10 1ms\n");
    CHECK(model);
    char cache[300];
    snprintf(cache, sizeof cache, "%s/cache/poll", dir);
    size_t each = (size_t)mulchain.domain_size * 32;
    uint8_t *w = calloc(mulchain.n_vars, 32), *abc = calloc(3, each);
    CHECK(w && abc);
    zk_replay_hash_t key, input;
    zk_replay_key_hash(&mulchain, &key);
    zk_replay_input_hash(&mulchain, w, abc, abc + each, abc + 2 * each, &input);
    zk_raw_t raw, got;
    memset(&raw, 0x3c, sizeof raw);
    zk_err_t e = {{0}};
    CHECK_MSG(zk_replay_entry_put(cache, &mulchain, &key, &input, &raw, &e) == 0, "%s", e.msg);
    const zk_backend_ops_t *B = &zk_backend_replay;
    zk_backend_replay_setup(model, cache);
    void *ctx;
    CHECK_MSG(B->init(&ctx, 0, 1, 0, &e) == 0, "%s", e.msg);
    CHECK_MSG(B->load_key(ctx, &mulchain, &e) == 0, "%s", e.msg);
    uint64_t t0 = mono_ns(), left[2];
    for (int lane = 0; lane < 2; lane++)
        CHECK_MSG(B->submit(ctx, lane, &mulchain, w, abc, abc + each, abc + 2 * each, &e) == 0, "%s", e.msg);
    for (int lane = 0; lane < 2; lane++) {
        CHECK_EQ_INT(B->poll(ctx, lane, &left[lane], &e), 0);
        CHECK(left[lane] > 0);
    }
    uint64_t spent = mono_ns() - t0;
    CHECK_MSG(left[0] <= 1000000000ull && left[0] + spent >= 999000000ull, "lane 0: %llu ns left",
              (unsigned long long)left[0]);
    CHECK_MSG(left[1] >= left[0] + 900000000ull && left[1] <= left[0] + 1000000000ull,
              "lane 1: %llu ns left, lane 0 %llu", (unsigned long long)left[1], (unsigned long long)left[0]);
    struct timespec ts = {.tv_sec = (time_t)(left[0] / 1000000000ull), .tv_nsec = (long)(left[0] % 1000000000ull)};
    nanosleep(&ts, NULL);
    CHECK_EQ_INT(B->poll(ctx, 0, &left[0], &e), 1);
    CHECK_EQ_INT(B->poll(ctx, 1, &left[1], &e), 0);
    CHECK_MSG(B->collect(ctx, 1, &got, NULL, &e) == 0, "%s", e.msg); /* waits for lane 1's end */
    CHECK(mono_ns() - t0 >= 2000000000ull);
    CHECK(!memcmp(&got, &raw, sizeof got));
    CHECK_EQ_INT(B->poll(ctx, 0, &left[0], &e), 1);
    CHECK_MSG(B->collect(ctx, 0, &got, NULL, &e) == 0, "%s", e.msg);
    CHECK(!memcmp(&got, &raw, sizeof got));
    CHECK(B->poll(ctx, ZK_BACKEND_MAX_LANES, &left[0], &e) == -EINVAL);
    B->destroy(ctx);
    free(w);
    free(abc);
    return 0;
}
