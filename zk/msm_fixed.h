/* Window tables for the five MSMs of a key that stays loaded (gpud's CPU backend), within a byte
 * budget, and the proving core that uses them (zk/msm_fixed.c; the tables: zk/msm_fixed_tmpl.h). */
#pragma once
#include <stdbool.h>

#include "groth16.h"
#include "msm.h"

enum { ZK_MSM_A, ZK_MSM_B1, ZK_MSM_B2, ZK_MSM_C, ZK_MSM_H, ZK_MSM_COUNT };
extern const char *const zk_msm_names[ZK_MSM_COUNT]; /* "A", "B1", "B2", "C", "H" */

typedef struct zk_key_tables {
    const zk_zkey_t *z;   /* the key they were built from (its points are row 0) */
    uint64_t fingerprint; /* zk_key_fingerprint(z) at build */
    zk_fixed_t t[ZK_MSM_COUNT];
    size_t bytes;         /* all rows together */
} zk_key_tables_t;

/* A hash of the key's sizes, curve and a sample of the points of each of the five sections (first,
 * last and evenly spaced ones): tables built for another key do not match it. */
uint64_t zk_key_fingerprint(const zk_zkey_t *z);

/* A G2 bucket addition against a G1 one, where MSMs of both groups are weighed against each other
 * (table budgets, zk_prove_core_fixed's schedule): per (point, digit) pair over tables, B2 took
 * 2.31-2.44 times A's time (build/bench/resident core medians over the pairs of each plan: bn128
 * pchain16 ifma and mulx, bls12381 pchain16bls mulx; bench/RESULTS.md). The weight stays at 2, the
 * figure the schedule was built and measured with: at 2.4 pchain16's order (H, C, B2, A, B1) and
 * choice (side by side) are the same by the model, while tests/data's small keys would run one
 * after another, and test_backend's side-by-side check runs on them. */
#define ZK_G2_ADD_WEIGHT 2
/* Builds the tables of z within budget bytes: the MSMs by decreasing plain cost (B2 weighed by
 * ZK_G2_ADD_WEIGHT), each given the fastest plan that fits in what is left (all windows
 * stored, fewer windows stored, or none: the plain MSM). A table that cannot be allocated falls
 * back to the plain MSM. desc gets one line: the bytes used, the budget, each MSM's choice and size. Never fails. */
void zk_key_tables_build(zk_key_tables_t *kt, const zk_zkey_t *z, size_t budget, int threads, char *desc,
                         size_t desclen);
/* The tables were built from this key (same address and fingerprint). */
bool zk_key_tables_match(const zk_key_tables_t *kt, const zk_zkey_t *z);
void zk_key_tables_free(zk_key_tables_t *kt);

/* Whether zk_prove_core_fixed runs the five MSMs side by side on `threads` threads, one thread each,
 * rather than one after another over all threads: where zk_msm_side_by_side says it finishes
 * sooner by the plans' cost model (zk_fixed_cost, B2 weighed by ZK_G2_ADD_WEIGHT). order gets the
 * order they are handed out in (largest first). Never with no table at all. */
bool zk_key_tables_side_by_side(const zk_key_tables_t *kt, int threads, int order[ZK_MSM_COUNT]);

/* zk_prove_core with the MSMs over kt's tables (kt must match z). When kt has no table at all it
 * is zk_prove_core itself. Same scratch (zk_core_scratch_size) and outputs. On two threads or more
 * the five MSMs run side by side, one thread each, where the plans' cost model says that finishes
 * sooner (each MSM's buckets then reduced once, not once per thread); the times then give each MSM
 * its share of their wall time, in proportion to its own. */
int zk_prove_core_fixed(const zk_key_tables_t *kt, const zk_zkey_t *z, const uint8_t *witness, const void *a,
                        const void *b, const void *c, void *scratch, zk_raw_t *out, zk_core_times_t *times,
                        int threads);
