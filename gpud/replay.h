/* The replay backend's pieces shared with `zkpipe replay prepare` (docs/replay.md): the device model
 * (an ini of per-operation times as functions of size), the content hashes that key the results
 * cache, and the cache's files. Invariants:
 *   - a cache entry holds the core's results (zk_raw_t) for exactly one (key content, witness + a,
 *     b, c content) pair; the key hash covers every byte the core reads from the key (sizes, curve,
 *     the five point sections: the coefs only shape a, b, c, and gpud holds none), the input hash
 *     every byte it reads from the slab, so a changed key or a different witness misses, never
 *     hits a stale entry;
 *   - an entry is written whole (temporary file, rename) and checked whole when read (magic, sizes,
 *     hashes, checksum): a torn or foreign file is an error naming it, never a result;
 *   - the model's times depend only on the curve and the key's sizes. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zk/groth16.h"

#define ZK_REPLAY_MAX_POINTS 32

/* time(size): measured points, linear between them, the first point's time below the first (a
 * device is no faster on smaller work than the smallest measured), the last segment's slope above
 * the last (proportional when there is one point). */
typedef struct zk_replay_fn {
    int n;
    double size[ZK_REPLAY_MAX_POINTS]; /* ascending */
    double sec[ZK_REPLAY_MAX_POINTS];
} zk_replay_fn_t;

typedef struct zk_replay_model {
    char path[1024];
    char name[128];    /* [device] name */
    double h2d_bps;    /* [device] h2d: host-to-device bytes per second */
    double fixed_s;    /* [device] fixed: per partition (launches, synchronisation, the results back) */
    bool has_curve[2]; /* [bn128], [bls12381] */
    zk_replay_fn_t msm_g1[2], msm_g2[2], ntt[2];
} zk_replay_model_t;

/* One partition of a key on the model: the core's steps (h2d_ns is the copy of the witness and a,
 * b, c at the model's rate), the fixed cost, and compute_ns = the NTT and MSM steps + fixed. */
typedef struct zk_replay_plan {
    zk_core_times_t t;
    uint64_t fixed_ns, compute_ns, h2d_bytes;
} zk_replay_plan_t;

/* Reads and checks a model file; errors are "FILE:LINE: what is wrong". */
int zk_replay_model_load(zk_replay_model_t *m, const char *path, zk_err_t *err);
/* The modelled partition of z; fails when the model has no section for z's curve. */
int zk_replay_plan(const zk_replay_model_t *m, const zk_zkey_t *z, zk_replay_plan_t *p, zk_err_t *err);
/* "2.41 ms a partition (h2d 0.05 ms for 1.6 MB, NTT 0.3 ms, MSM 1.9 ms, fixed 0.15 ms)" */
void zk_replay_plan_str(const zk_replay_plan_t *p, char *buf, size_t len);

typedef struct zk_replay_hash {
    uint8_t b[16];
} zk_replay_hash_t;

/* 32 hex digits and a NUL */
void zk_replay_hash_hex(const zk_replay_hash_t *h, char out[33]);
/* The key's content hash (XXH3-128 of its sizes, curve and point sections). */
void zk_replay_key_hash(const zk_zkey_t *z, zk_replay_hash_t *out);

/* The input hash: the witness (n_vars x 32) then a, b, c (domain_size x 32 each), in order, fed in
 * pieces of any size (the backend paces its reads with them). */
typedef struct zk_replay_hasher zk_replay_hasher_t;
zk_replay_hasher_t *zk_replay_hasher_new(void);
void zk_replay_hasher_reset(zk_replay_hasher_t *s);
void zk_replay_hasher_update(zk_replay_hasher_t *s, const void *p, size_t len);
void zk_replay_hasher_digest(zk_replay_hasher_t *s, zk_replay_hash_t *out);
void zk_replay_hasher_free(zk_replay_hasher_t *s);
/* All at once (zkpipe replay prepare). */
void zk_replay_input_hash(const zk_zkey_t *z, const uint8_t *witness, const void *a, const void *b, const void *c,
                          zk_replay_hash_t *out);

/* The entry's file: DIR/KEYHEX/INPUTHEX.raw */
int zk_replay_entry_path(char *buf, size_t len, const char *dir, const zk_replay_hash_t *key,
                         const zk_replay_hash_t *input);
/* Reads the entry: -ENOENT when there is none (err says so and what to run), another error for a
 * file that is not a whole entry of this key and input. */
int zk_replay_entry_get(const char *dir, const zk_zkey_t *z, const zk_replay_hash_t *key, const zk_replay_hash_t *input,
                        zk_raw_t *out, zk_err_t *err);
/* Writes the entry (creating DIR and DIR/KEYHEX), atomically. */
int zk_replay_entry_put(const char *dir, const zk_zkey_t *z, const zk_replay_hash_t *key, const zk_replay_hash_t *input,
                        const zk_raw_t *raw, zk_err_t *err);
