/* Fixtures proved through gpud's backend interface, shared by test_backend (CPU backend) and
 * tests/gpu/test_cuda_device.c (CUDA, and its emulated build): a zkey and a witness, a, b, c
 * synthesized, and the CPU proving core's raw points as the expected result. After test.h. */
#pragma once
#include <time.h>
#include <stdlib.h>

#include "gpud/backend.h"
#include "zk/wtns.h"
#include "zk/zkey.h"

typedef struct {
    zk_zkey_t z;
    zk_wtns_t w;
    uint8_t *abc;  /* a, b, c: domain_size each */
    zk_raw_t want; /* zk_prove_core's result */
} fixture_t;

/* zkey and wtns are paths below tests/data */
static int fixture_load(fixture_t *f, const char *zkey, const char *wtns) {
    zk_err_t err;
    CHECK_MSG(zk_zkey_open(&f->z, test_data(zkey), &err) == 0, "%s", err.msg);
    CHECK_MSG(zk_wtns_load(&f->w, test_data(wtns), &err) == 0, "%s", err.msg);
    CHECK_MSG(zk_wtns_check_zkey(&f->w, wtns, &f->z, zkey, &err) == 0, "%s", err.msg);
    size_t n = f->z.domain_size;
    f->abc = aligned_alloc(64, zk_abc_size(&f->z));
    void *scratch = aligned_alloc(64, zk_core_scratch_size(&f->z));
    CHECK(f->abc && scratch);
    CHECK(zk_synth(&f->z, f->w.values, f->abc, f->abc + 32 * n, f->abc + 64 * n, 16) == 0);
    CHECK(zk_prove_core(&f->z, f->w.values, f->abc, f->abc + 32 * n, f->abc + 64 * n, scratch, &f->want, NULL, 16) ==
          0);
    free(scratch);
    return 0;
}

static void fixture_free(fixture_t *f) {
    free(f->abc);
    zk_wtns_free(&f->w);
    zk_zkey_close(&f->z);
}

/* Polls the lane until its partition has finished, as gpud does while it waits for READY slabs
 * (on the emulation each poll runs one queued operation). */
static int fixture_poll_done(const zk_backend_ops_t *B, void *ctx, int lane) {
    zk_err_t err;
    for (long i = 0;; i++) { /* every 0.1 ms, for up to 120 s (the CPU backend's lanes prove on threads) */
        uint64_t left = 0;
        int r = B->poll(ctx, lane, &left, &err);
        CHECK_MSG(r == 0 || r == 1, "poll of lane %d: %d: %s", lane, r, err.msg);
        if (r == 1) return 0;
        CHECK_MSG(i < 1200000, "lane %d did not finish in 120 s", lane);
        nanosleep(&(struct timespec){.tv_nsec = 100000}, NULL);
    }
}

/* `rounds` partitions, partition i = f[i % nf], submitted on lane i % 2 before partition i − 1 is
 * collected (as gpud runs two in flight); each odd one is polled until it has finished before it is
 * collected, each even one collected at once; each result equals the CPU core's, with step times. */
static int fixture_prove_in_flight(const zk_backend_ops_t *B, void *ctx, fixture_t *f, int nf, int rounds) {
    zk_err_t err;
    for (int i = 0; i <= rounds; i++) {
        if (i < rounds) {
            fixture_t *x = &f[i % nf];
            size_t n = x->z.domain_size;
            CHECK_MSG(B->submit(ctx, i % 2, &x->z, x->w.values, x->abc, x->abc + 32 * n, x->abc + 64 * n, &err) == 0,
                      "submit %d: %s", i, err.msg);
        }
        if (i > 0) {
            zk_raw_t got;
            zk_core_times_t t;
            if ((i - 1) % 2) CHECK(fixture_poll_done(B, ctx, (i - 1) % 2) == 0);
            CHECK_MSG(B->collect(ctx, (i - 1) % 2, &got, &t, &err) == 0, "collect %d: %s", i - 1, err.msg);
            CHECK_MSG(memcmp(&got, &f[(i - 1) % nf].want, sizeof got) == 0, "partition %d differs from the CPU core",
                      i - 1);
            CHECK(t.msm_a_ns > 0);
        }
    }
    return 0;
}
