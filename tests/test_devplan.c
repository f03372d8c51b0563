/* The CUDA backend's device-memory plan (gpud/cuda/devplan.c, docs/cuda.md "Device memory") on its
 * own, with CUB's sizes estimated as zkpipe plan does: which plan each budget gets, from the key
 * resident and nothing split down to the NTT in blocks; that large domains fit the cards the issue
 * names (2^26 on a 24 GB card, 2^20 on 1 GB); the sizes of each part. The backend's use of the
 * plan, and its results, are tested in test_cuda_emu (prove_chunked). */
#include <errno.h>

#include "tests/test.h"
#include "gpud/cuda/devplan.h"

static zc_plan_circuit_t bn(unsigned log_vars, unsigned log_domain) {
    return (zc_plan_circuit_t){&zk_curve_bn128, 1u << log_vars, 1, log_domain};
}

#define MIB(x) ((size_t)(x) << 20)
#define GB(x) ((size_t)(x)*1000 * 1000 * 1000)

/* the budget of a card of `total` bytes with nothing else on it */
static size_t card(size_t total) { return zc_plan_budget(0, 0, total, total); }

TEST(budget) {
    CHECK(zc_plan_budget(0, 0, GB(24), GB(24)) == GB(24) - MIB(256)); /* the reserve: 256 MiB */
    CHECK(zc_plan_budget(0, 0, MIB(64), MIB(64)) == MIB(62));         /* or 1/32 of a small device */
    CHECK(zc_plan_budget(MIB(100), 0, GB(24), GB(24)) == MIB(100));   /* [gpu] device_memory caps it */
    CHECK(zc_plan_budget(0, MIB(500), MIB(100), GB(24)) == MIB(500)); /* what the context holds is the plan's */
    return 0;
}

/* The ladder: each smaller budget gets the next kind of plan, and each plan fits its budget. */
/* The MSM window by size (msm_plan.h: lg − 4 to 2^16, 12 to 2^19, then lg − 7, at most 16; the
 * sweep on an H200 behind it is in bench/RESULTS.md "GPU"), and the plan of a 2^20 MSM uses it. */
TEST(window) {
    const struct {
        uint32_t n;
        int c;
    } want[] = {{1, 4}, {1u << 8, 4}, {1u << 10, 6}, {1u << 14, 10}, {1u << 16, 12}, {(1u << 16) + 1, 12},
                {1u << 19, 12}, {1u << 20, 13}, {1u << 21, 14}, {1u << 22, 15}, {1u << 23, 16}, {1u << 26, 16}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        CHECK_MSG(zc_msm_window(want[i].n) == want[i].c, "%u points: window %d, want %d", want[i].n,
                  zc_msm_window(want[i].n), want[i].c);
    zc_msm_plan p;
    zc_msm_geometry(&p, 1u << 20, 0);
    CHECK(p.c == 13 && p.nw == 20 && p.nb == 1u << 12);
    return 0;
}

TEST(ladder) {
    zc_plan_circuit_t k = bn(16, 16);
    zc_dev_plan_t p, q;
    CHECK(zc_plan_choose(&k, SIZE_MAX, &zc_plan_cub_estimate, &p) == 0);
    CHECK(p.resident && p.chunk >= 1u << 16 && !p.ntt_block);
    CHECK(p.need == p.key + 2 * (p.wit + p.abc + p.win) + p.ws + p.ntt + p.tables);
    CHECK(p.key == ((size_t)1 << 16) * (64 + 64 + 128) + (((size_t)1 << 16) - 2) * 64 + ((size_t)1 << 16) * 64);
    CHECK(p.wit == ((size_t)32 << 16) && p.abc == ((size_t)96 << 16) && p.ntt == ((size_t)32 << 16));
    /* a budget a byte short of it: MSMs in chunks, key still resident */
    CHECK(zc_plan_choose(&k, p.need - 1, &zc_plan_cub_estimate, &q) == 0);
    CHECK(q.resident && q.chunk < 1u << 16 && !q.ntt_block && q.need < p.need && q.budget == p.need - 1);
    /* no room for the key beside the smallest chunks: streamed */
    CHECK(zc_plan_needs(&k, ZC_MIN_CHUNK, true, 0, &zc_plan_cub_estimate, &q) == 0);
    CHECK(zc_plan_choose(&k, q.need - 1, &zc_plan_cub_estimate, &p) == 0);
    CHECK(!p.resident && !p.ntt_block && p.stage > 0 && p.need < q.need);
    /* no room for a whole NTT: in blocks, every scalar streamed, nothing per lane but window sums */
    CHECK(zc_plan_needs(&k, ZC_MIN_CHUNK, false, 0, &zc_plan_cub_estimate, &q) == 0);
    CHECK(zc_plan_choose(&k, q.need - 1, &zc_plan_cub_estimate, &p) == 0);
    CHECK(p.ntt_block && !p.wit && !p.abc && p.sstage > 0 && p.need < q.need);
    CHECK(p.ntt == 4 * (size_t)p.ntt_block * 32);
    CHECK(p.pinned == 2 * p.win + 3 * ((size_t)32 << 16)); /* the NTT's three host vectors */
    CHECK(p.log_rows == 8);
    /* the smallest plan, and below it a refusal that says what is needed */
    CHECK(zc_plan_needs(&k, ZC_MIN_CHUNK, false, 1u << 8, &zc_plan_cub_estimate, &q) == 0);
    CHECK(zc_plan_choose(&k, q.need, &zc_plan_cub_estimate, &p) == 0);
    CHECK(p.need == q.need && p.ntt_block == 1u << 8 && p.chunk == ZC_MIN_CHUNK);
    CHECK(zc_plan_choose(&k, q.need - 1, &zc_plan_cub_estimate, &p) == -ENOMEM);
    CHECK(p.need == q.need && p.budget == q.need - 1);
    char d[300];
    zc_plan_describe(&k, &p, d, sizeof d);
    CHECK_STR_CONTAINS(d, "key points streamed (24.0 MiB), MSMs in chunks of 1024 points, NTT in blocks of 256 "
                          "elements (2^8 rows x 2^8 columns), scalars streamed; ");
    return 0;
}

/* The cards of the issue: a 2^26 domain on a 24 GB card, a 2^20 one on a 1 GB budget. */
TEST(cards) {
    zc_dev_plan_t p;
    zc_plan_circuit_t k26 = bn(26, 26), k20 = bn(20, 20), k26bls = {&zk_curve_bls12381, 1u << 26, 1, 26};
    CHECK(zc_plan_choose(&k26, card(GB(24)), &zc_plan_cub_estimate, &p) == 0);
    fprintf(stderr, "2^26 on 24 GB: %s%u chunks, NTT %s, %.0f MiB of %.0f\n", p.resident ? "key resident, " : "",
            p.chunk, p.ntt_block ? "in blocks" : "whole", p.need / 1048576.0, card(GB(24)) / 1048576.0);
    CHECK(zc_plan_choose(&k26bls, card(GB(24)), &zc_plan_cub_estimate, &p) == 0);
    CHECK(zc_plan_choose(&k20, GB(1), &zc_plan_cub_estimate, &p) == 0);
    fprintf(stderr, "2^20 on 1 GB: %s%u chunks, NTT %s, %.0f MiB\n", p.resident ? "key resident, " : "", p.chunk,
            p.ntt_block ? "in blocks" : "whole", p.need / 1048576.0);
    /* 2^20 even in 64 MiB, and 2^26 in 256 MiB: the NTT in blocks needs no domain-sized buffer */
    CHECK(zc_plan_choose(&k20, MIB(64), &zc_plan_cub_estimate, &p) == 0 && p.ntt_block);
    CHECK(zc_plan_choose(&k26, MIB(256), &zc_plan_cub_estimate, &p) == 0 && p.ntt_block);
    fprintf(stderr, "2^26 in 256 MiB: block %u, chunk %u, %.1f MiB\n", p.ntt_block, p.chunk, p.need / 1048576.0);
    return 0;
}

/* The tables' bytes are those the backend allocates (ntt.cuh): whole n/2 twiddles both ways and the
 * coset halves; blocked the rows' and columns' twiddles and three pairs of halves. */
TEST(tables) {
    CHECK(zc_plan_tables_bytes(16, false, 0) == (2 * 32768 + 256 + 256) * 32);
    CHECK(zc_plan_tables_bytes(16, true, 8) == (2 * 128 + 2 * 128 + 3 * (256 + 256)) * 32);
    CHECK(zc_plan_tables_bytes(15, true, 7) == (2 * 64 + 2 * 128 + 3 * (256 + 128)) * 32);
    CHECK(zc_plan_tables_bytes(1, true, 0) == (2 + 2 + 3 * (2 + 1)) * 32);
    return 0;
}

/* An MSM too large for the kernels' 32-bit key offsets is never planned whole: it runs in chunks. */
TEST(too_large) {
    zc_plan_circuit_t k = bn(28, 28);
    zc_dev_plan_t p;
    CHECK(zc_plan_needs(&k, 1u << 28, true, 0, &zc_plan_cub_estimate, &p) == -E2BIG);
    CHECK(zc_plan_choose(&k, SIZE_MAX, &zc_plan_cub_estimate, &p) == 0);
    CHECK(p.chunk < 1u << 28 && p.resident);
    return 0;
}
