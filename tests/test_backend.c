/* gpud's backend interface (gpud/backend.h) on the CPU backend: partitions in flight on two lanes
 * collected in order, each equal to the proving core's result, also with set_lanes (a thread per
 * lane, side by side); a lane out of range, or submitted while in flight, is an error; and zk_backend_register_slabs hands the backend whole slabs in groups of
 * at most ZK_BACKEND_REGISTER_MAX bytes (one slab per call when a slab is larger). */
#include <errno.h>
#include <stdlib.h>

#include "test.h"
#include "backend_fixture.h"
#include "zk/msm_fixed.h"

TEST(cpu_lanes_in_flight) {
    const zk_backend_ops_t *B = &zk_backend_cpu;
    CHECK(B->depth == 1);
    fixture_t p[3];
    CHECK(fixture_load(&p[0], "bn128/mulchain/mulchain.zkey", "bn128/mulchain/witness-1.wtns") == 0);
    CHECK(fixture_load(&p[1], "bls12381/mulchain/mulchain.zkey", "bls12381/mulchain/witness-2.wtns") == 0);
    CHECK(fixture_load(&p[2], "bn128/mulchain/mulchain.zkey", "bn128/mulchain/witness-2.wtns") == 0);
    CHECK(memcmp(&p[0].want, &p[2].want, sizeof p[0].want) != 0);
    void *ctx;
    zk_err_t err;
    CHECK(B->init(&ctx, 0, 1, 0, &err) == 0);
    for (int i = 0; i < 3; i++) CHECK_MSG(B->load_key(ctx, &p[i].z, &err) == 0, "%s", err.msg);
    CHECK(fixture_prove_in_flight(B, ctx, p, 3, 6) == 0); /* two in flight */
    /* the one-call helper is submit + collect on lane 0 */
    zk_raw_t got;
    size_t n = p[1].z.domain_size;
    CHECK(zk_backend_prove(B, ctx, &p[1].z, p[1].w.values, p[1].abc, p[1].abc + 32 * n, p[1].abc + 64 * n, &got, NULL,
                           &err) == 0);
    CHECK(memcmp(&got, &p[1].want, sizeof got) == 0);
    CHECK(B->submit(ctx, ZK_BACKEND_MAX_LANES, &p[1].z, p[1].w.values, p[1].abc, p[1].abc, p[1].abc, &err) == -EINVAL);
    CHECK(B->collect(ctx, -1, &got, NULL, &err) == -EINVAL);
    B->destroy(ctx);

    /* set_lanes ([gpu] inflight): each lane proved on a thread of its own, side by side, with and
     * without window tables; the same results, in order */
    for (int tables = 0; tables < 2; tables++) {
        CHECK(B->init(&ctx, 0, 2, tables ? 64 << 20 : 0, &err) == 0);
        CHECK(B->set_lanes(ctx, 0, &err) == -EINVAL && B->set_lanes(ctx, ZK_BACKEND_MAX_LANES + 1, &err) == -EINVAL);
        CHECK_MSG(B->set_lanes(ctx, 2, &err) == 0, "%s", err.msg);
        for (int i = 0; i < 3; i++) CHECK_MSG(B->load_key(ctx, &p[i].z, &err) == 0, "%s", err.msg);
        CHECK(fixture_prove_in_flight(B, ctx, p, 3, 8) == 0);
        CHECK(B->submit(ctx, 2, &p[0].z, p[0].w.values, p[0].abc, p[0].abc, p[0].abc, &err) == -EINVAL); /* 2 lanes */
        size_t n0 = p[0].z.domain_size;
        const uint8_t *a0 = p[0].abc;
        CHECK(B->submit(ctx, 1, &p[0].z, p[0].w.values, a0, a0 + 32 * n0, a0 + 64 * n0, &err) == 0);
        CHECK(B->submit(ctx, 1, &p[0].z, p[0].w.values, a0, a0 + 32 * n0, a0 + 64 * n0, &err) == -EBUSY);
        CHECK(fixture_poll_done(B, ctx, 1) == 0);
        CHECK(B->collect(ctx, 1, &got, NULL, &err) == 0 && memcmp(&got, &p[0].want, sizeof got) == 0);
        /* load_key while a lane is in flight waits for it, and its result stays for collect */
        CHECK(B->submit(ctx, 0, &p[1].z, p[1].w.values, p[1].abc, p[1].abc + 32 * p[1].z.domain_size,
                        p[1].abc + 64 * p[1].z.domain_size, &err) == 0);
        CHECK_MSG(B->load_key(ctx, &p[1].z, &err) == 0, "%s", err.msg);
        CHECK(B->collect(ctx, 0, &got, NULL, &err) == 0 && memcmp(&got, &p[1].want, sizeof got) == 0);
        /* one left in flight: destroy waits for it */
        CHECK(B->submit(ctx, 0, &p[2].z, p[2].w.values, p[2].abc, p[2].abc + 32 * p[2].z.domain_size,
                        p[2].abc + 64 * p[2].z.domain_size, &err) == 0);
        B->destroy(ctx);
    }
    for (int i = 0; i < 3; i++) fixture_free(&p[i]);
    return 0;
}

/* a backend that records what it is asked to register */
static struct {
    int calls;
    uint8_t *base[64];
    size_t len[64];
    int fail_at;
} rec;

static int rec_register(void *ctx, void *base, size_t len, zk_err_t *err) {
    (void)ctx;
    if (rec.calls == rec.fail_at) return zk_fail(err, ENOMEM, "refused");
    if (rec.calls < 64) rec.base[rec.calls] = base, rec.len[rec.calls] = len;
    rec.calls++;
    return 0;
}

static int groups(uint32_t n_slabs, size_t slab_size, int want_calls, size_t want_first_len) {
    zk_backend_ops_t b = {.name = "rec", .register_memory = rec_register};
    memset(&rec, 0, sizeof rec);
    rec.fail_at = -1;
    uint8_t *base = (uint8_t *)(uintptr_t)0x10000000; /* never dereferenced */
    uint32_t first;
    zk_err_t err;
    CHECK(zk_backend_register_slabs(&b, NULL, base, n_slabs, slab_size, &first, &err) == 0);
    CHECK_MSG(rec.calls == want_calls, "%u slabs of %zu: %d calls, want %d", n_slabs, slab_size, rec.calls, want_calls);
    CHECK(rec.len[0] == want_first_len);
    uint8_t *at = base;
    for (int i = 0; i < rec.calls; i++) { /* contiguous, whole slabs, within the limit unless one slab */
        CHECK(rec.base[i] == at);
        CHECK(rec.len[i] % slab_size == 0);
        CHECK(rec.len[i] <= ZK_BACKEND_REGISTER_MAX || rec.len[i] == slab_size);
        at += rec.len[i];
    }
    CHECK(at == base + (size_t)n_slabs * slab_size);
    return 0;
}

TEST(register_slabs_in_groups) {
    const size_t G = (size_t)1 << 30;
    CHECK(groups(8, 2 * G, 1, 16 * G) == 0);    /* 16 GiB: one call */
    CHECK(groups(40, 2 * G, 2, 64 * G) == 0);   /* 80 GiB: 32 + 8 slabs */
    CHECK(groups(5, 24 * G, 3, 48 * G) == 0);   /* 2 + 2 + 1 slabs: no slab split at 64 GiB */
    CHECK(groups(3, 100 * G, 3, 100 * G) == 0); /* a slab over the limit: one per call */
    CHECK(groups(1, 2 << 20, 1, 2 << 20) == 0);
    /* a refusal names the group's first slab */
    zk_backend_ops_t b = {.name = "rec", .register_memory = rec_register};
    memset(&rec, 0, sizeof rec);
    rec.fail_at = 2;
    uint32_t first = 99;
    zk_err_t err;
    CHECK(zk_backend_register_slabs(&b, NULL, (uint8_t *)(uintptr_t)0x10000000, 5, 24 * G, &first, &err) == -ENOMEM);
    CHECK(first == 4);
    return 0;
}

/* The core over a key's tables, one after another and side by side (zk_key_tables_side_by_side):
 * the same raw points as the one-shot core on 1 to 3 threads, and at 2 threads the MSMs of both
 * fixture keys do run side by side (the tables' reductions outweigh their few points), with each
 * MSM's time given and the five within the core's wall time. */
TEST(cpu_tables_side_by_side) {
    fixture_t p[2];
    CHECK(fixture_load(&p[0], "bn128/mulchain/mulchain.zkey", "bn128/mulchain/witness-1.wtns") == 0);
    CHECK(fixture_load(&p[1], "bls12381/mulchain/mulchain.zkey", "bls12381/mulchain/witness-2.wtns") == 0);
    for (int i = 0; i < 2; i++) {
        zk_key_tables_t kt;
        char desc[512];
        zk_key_tables_build(&kt, &p[i].z, 64 << 20, 2, desc, sizeof desc);
        CHECK_MSG(kt.bytes > 0, "no tables: %s", desc);
        int order[ZK_MSM_COUNT], seen = 0;
        CHECK(!zk_key_tables_side_by_side(&kt, 1, order));
        CHECK_MSG(zk_key_tables_side_by_side(&kt, 2, order), "%s: one after another at 2 threads", desc);
        for (int k = 0; k < ZK_MSM_COUNT; k++) seen |= 1 << order[k];
        CHECK(seen == (1 << ZK_MSM_COUNT) - 1);
        size_t n = p[i].z.domain_size;
        void *scratch = aligned_alloc(64, zk_core_scratch_size(&p[i].z));
        CHECK(scratch);
        for (int threads = 1; threads <= 3; threads++) {
            zk_raw_t got;
            zk_core_times_t t;
            struct timespec a, b;
            clock_gettime(CLOCK_MONOTONIC, &a);
            CHECK(zk_prove_core_fixed(&kt, &p[i].z, p[i].w.values, p[i].abc, p[i].abc + 32 * n, p[i].abc + 64 * n,
                                      scratch, &got, &t, threads) == 0);
            clock_gettime(CLOCK_MONOTONIC, &b);
            CHECK_MSG(memcmp(&got, &p[i].want, sizeof got) == 0, "key %d, %d threads: not the core's points", i,
                      threads);
            uint64_t wall = (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000u + (uint64_t)b.tv_nsec - (uint64_t)a.tv_nsec;
            CHECK(t.msm_a_ns && t.msm_b1_ns && t.msm_b2_ns && t.msm_c_ns && t.msm_h_ns);
            CHECK(t.ntt_ns + t.msm_a_ns + t.msm_b1_ns + t.msm_b2_ns + t.msm_c_ns + t.msm_h_ns <= wall);
        }
        zk_key_tables_free(&kt);
        zk_key_tables_build(&kt, &p[i].z, 1, 2, desc, sizeof desc); /* no table fits: the plain core */
        CHECK_MSG(kt.bytes == 0 && !zk_key_tables_side_by_side(&kt, 2, order), "%s", desc);
        zk_raw_t got;
        CHECK(zk_prove_core_fixed(&kt, &p[i].z, p[i].w.values, p[i].abc, p[i].abc + 32 * n, p[i].abc + 64 * n, scratch,
                                  &got, NULL, 2) == 0 &&
              memcmp(&got, &p[i].want, sizeof got) == 0);
        free(scratch);
        zk_key_tables_free(&kt);
    }
    fixture_free(&p[0]);
    fixture_free(&p[1]);
    return 0;
}

/* With a precompute budget the CPU backend proves over window tables, with the same raw points as
 * the one-shot core; a budget too small for any table proves without them (all plain); a key that
 * changed under the same zk_zkey_t is never proved with the old key's tables (fingerprint), and
 * loading it again builds new ones. */
TEST(cpu_precompute_tables) {
    const zk_backend_ops_t *B = &zk_backend_cpu;
    fixture_t p[2];
    CHECK(fixture_load(&p[0], "bn128/mulchain/mulchain.zkey", "bn128/mulchain/witness-1.wtns") == 0);
    CHECK(fixture_load(&p[1], "bls12381/mulchain/mulchain.zkey", "bls12381/mulchain/witness-2.wtns") == 0);
    zk_err_t err;
    static const uint64_t budgets[] = {64 << 20, 1, 3000}; /* all, nothing fits, some rows of some MSMs */
    for (int bi = 0; bi < 3; bi++) {
        void *ctx;
        CHECK(B->init(&ctx, 0, 2, budgets[bi], &err) == 0);
        for (int i = 0; i < 2; i++) {
            CHECK_MSG(B->load_key(ctx, &p[i].z, &err) == 0, "%s", err.msg);
            const char *info = B->key_info(ctx, &p[i].z);
            CHECK(info != NULL);
            CHECK_STR_CONTAINS(info, "window tables");
            if (bi == 0) CHECK_MSG(!strstr(info, "plain") && strstr(info, "H "), "not all tables: %s", info);
            if (bi == 1) CHECK_STR_CONTAINS(info, "A plain; B1 plain; B2 plain; C plain; H plain");
        }
        CHECK(fixture_prove_in_flight(B, ctx, p, 2, 4) == 0);
        B->destroy(ctx);
    }
    /* the key behind p[0].z changes (as the circuit cache reloads a rewritten file into the same
     * struct): here it becomes the bls12381 key, proved before load_key is called again and after */
    void *ctx;
    CHECK(B->init(&ctx, 0, 1, 64 << 20, &err) == 0);
    CHECK_MSG(B->load_key(ctx, &p[0].z, &err) == 0, "%s", err.msg);
    zk_zkey_t saved = p[0].z;
    p[0].z = p[1].z;
    size_t n = p[1].z.domain_size;
    for (int round = 0; round < 2; round++) {
        zk_raw_t got;
        CHECK(zk_backend_prove(B, ctx, &p[0].z, p[1].w.values, p[1].abc, p[1].abc + 32 * n, p[1].abc + 64 * n, &got,
                               NULL, &err) == 0);
        CHECK_MSG(memcmp(&got, &p[1].want, sizeof got) == 0, "round %d: proved with the old key's tables", round);
        CHECK(B->load_key(ctx, &p[0].z, &err) == 0);
    }
    B->destroy(ctx);
    p[0].z = saved;
    fixture_free(&p[0]);
    fixture_free(&p[1]);
    return 0;
}
