/* The replay backend ([gpu] backend = replay, docs/replay.md): the pipeline at a device model's
 * speed without the device. Each partition's witness and a, b, c are read once from the slab, paced
 * at the model's host-to-device rate, into the hash that keys the results cache; the partition then
 * takes the model's time for its key's sizes, slept (clock_nanosleep to an absolute deadline, not a
 * spin), and its results are the core's results that `zkpipe replay prepare` computed on the CPU for
 * exactly this key and input. No entry: the partition fails with that reason. Two timelines, as on
 * a device with a copy engine: a partition's copy starts when the previous copy ended, its compute
 * when its copy and the previous compute ended; deadlines chain on the model's times, so a late
 * wake-up never shifts the partitions after it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "backend.h"
#include "replay.h"

static char replay_model_path[1024], replay_cache_dir[1024];

void zk_backend_replay_setup(const char *model, const char *cache) {
    snprintf(replay_model_path, sizeof replay_model_path, "%s", model ? model : "");
    snprintf(replay_cache_dir, sizeof replay_cache_dir, "%s", cache ? cache : "");
}

typedef struct replay_key {
    const zk_zkey_t *z;
    zk_replay_hash_t hash;
    zk_replay_plan_t plan;
} replay_key_t;

typedef struct replay_ctx {
    zk_replay_model_t model;
    char cache[1024];
    replay_key_t *keys;
    int n_keys;
    zk_replay_hasher_t *hasher;
    uint64_t copy_free, compute_free; /* when the modelled copy engine and compute end */
    char info[1400];
    struct {
        int rc;
        zk_err_t err;
        zk_raw_t raw;
        zk_core_times_t times;
        uint64_t done; /* the modelled end of the partition */
    } lane[ZK_BACKEND_MAX_LANES];
} replay_ctx_t;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t) {
    struct timespec ts = {.tv_sec = (time_t)(t / 1000000000ull), .tv_nsec = (long)(t % 1000000000ull)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

static int replay_init(void **ret_ctx, int device, int threads, uint64_t precompute, zk_err_t *err) {
    (void)device, (void)threads, (void)precompute;
    if (!replay_model_path[0])
        return zk_fail(err, EINVAL, "the replay backend needs a device model ([gpu] replay_model = FILE)");
    replay_ctx_t *c = calloc(1, sizeof *c);
    if (!c) return zk_fail(err, ENOMEM, "replay backend: out of memory");
    int r = zk_replay_model_load(&c->model, replay_model_path, err);
    if (r == 0 && !(c->hasher = zk_replay_hasher_new())) r = zk_fail(err, ENOMEM, "replay backend: out of memory");
    if (r < 0) {
        free(c);
        return r;
    }
    snprintf(c->cache, sizeof c->cache, "%s", replay_cache_dir);
    /* deadlines to the microsecond, not the default 50 us of timer slack */
    (void)prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    snprintf(c->info, sizeof c->info, "device model %s (%s), results cache %s", c->model.name, c->model.path, c->cache);
    *ret_ctx = c;
    return 0;
}

static int replay_register_memory(void *ctx, void *base, size_t len, zk_err_t *err) {
    (void)ctx, (void)base, (void)len, (void)err;
    return 0;
}

static replay_key_t *key_of(replay_ctx_t *c, const zk_zkey_t *z) {
    for (int i = 0; i < c->n_keys; i++)
        if (c->keys[i].z == z) return &c->keys[i];
    return NULL;
}

static int replay_load_key(void *ctx, const zk_zkey_t *z, zk_err_t *err) {
    replay_ctx_t *c = ctx;
    replay_key_t k = {.z = z};
    int r = zk_replay_plan(&c->model, z, &k.plan, err);
    if (r < 0) return r;
    zk_replay_key_hash(z, &k.hash); /* a key loaded again (its file changed) is hashed again */
    replay_key_t *old = key_of(c, z);
    if (!old) {
        replay_key_t *n = realloc(c->keys, (size_t)(c->n_keys + 1) * sizeof *n);
        if (!n) return zk_fail(err, ENOMEM, "replay backend: out of memory");
        c->keys = n;
        old = &c->keys[c->n_keys++];
    }
    *old = k;
    char plan[400], hex[33];
    zk_replay_plan_str(&k.plan, plan, sizeof plan);
    zk_replay_hash_hex(&k.hash, hex);
    snprintf(c->info, sizeof c->info, "replay on model %s: %s; key content %s, results in %s/%s", c->model.name, plan,
             hex, c->cache, hex);
    return 0;
}

static const char *replay_key_info(void *ctx, const zk_zkey_t *z) {
    (void)z;
    return ((replay_ctx_t *)ctx)->info;
}

static const char *replay_device_info(void *ctx) {
    replay_ctx_t *c = ctx;
    snprintf(c->info, sizeof c->info, "no device: a replay of device model %s (%s), results cache %s", c->model.name,
             c->model.path, c->cache);
    return c->info;
}

#define READ_CHUNK ((size_t)1 << 20)

/* Reads the partition's inputs once, as the copy to a device would, at no more than the model's
 * rate: each chunk is hashed, then the read waits for the modelled copy to catch up. Returns when
 * the read ended. */
static uint64_t read_paced(replay_ctx_t *c, uint64_t start, const void *const *parts, const size_t *lens, int n) {
    zk_replay_hasher_reset(c->hasher);
    double ns_per_byte = 1e9 / c->model.h2d_bps;
    size_t done = 0;
    for (int i = 0; i < n; i++)
        for (size_t off = 0; off < lens[i]; off += READ_CHUNK) {
            size_t k = lens[i] - off < READ_CHUNK ? lens[i] - off : READ_CHUNK;
            zk_replay_hasher_update(c->hasher, (const uint8_t *)parts[i] + off, k);
            done += k;
            uint64_t due = start + (uint64_t)(done * ns_per_byte);
            if (now_ns() < due) sleep_until(due);
        }
    return now_ns();
}

static int replay_submit(void *ctx, int lane, const zk_zkey_t *z, const uint8_t *witness, const void *a, const void *b,
                         const void *cc, zk_err_t *err) {
    replay_ctx_t *c = ctx;
    if (lane < 0 || lane >= ZK_BACKEND_MAX_LANES) return zk_fail(err, EINVAL, "replay backend: no lane %d", lane);
    const replay_key_t *k = key_of(c, z);
    if (!k) return zk_fail(err, EINVAL, "replay backend: the key was not loaded");
    /* the copy engine: after the previous partition's copy */
    uint64_t start = now_ns();
    if (start < c->copy_free) sleep_until(start = c->copy_free);
    size_t each = (size_t)z->domain_size * 32;
    const void *parts[4] = {witness, a, b, cc};
    const size_t lens[4] = {(size_t)z->n_vars * 32, each, each, each};
    uint64_t read_end = read_paced(c, start, parts, lens, 4);
    uint64_t copied = start + k->plan.t.h2d_ns > read_end ? start + k->plan.t.h2d_ns : read_end;
    c->copy_free = copied;
    zk_replay_hash_t input;
    zk_replay_hasher_digest(c->hasher, &input);
    int r = zk_replay_entry_get(c->cache, z, &k->hash, &input, &c->lane[lane].raw, err);
    c->lane[lane].rc = r;
    if (r < 0) {
        c->lane[lane].err = *err;
        return r;
    }
    /* the compute: after the copy and the previous partition's compute */
    uint64_t begin = copied > c->compute_free ? copied : c->compute_free;
    /* the step h2d: the part of the copy the previous partition's compute did not hide */
    uint64_t exposed_from = start > c->compute_free ? start : c->compute_free;
    c->lane[lane].times = k->plan.t;
    c->lane[lane].times.h2d_ns = copied > exposed_from ? copied - exposed_from : 0;
    c->compute_free = c->lane[lane].done = begin + k->plan.compute_ns;
    return 0;
}

static int replay_collect(void *ctx, int lane, zk_raw_t *out, zk_core_times_t *times, zk_err_t *err) {
    replay_ctx_t *c = ctx;
    if (lane < 0 || lane >= ZK_BACKEND_MAX_LANES) return zk_fail(err, EINVAL, "replay backend: no lane %d", lane);
    if (c->lane[lane].rc < 0) {
        *err = c->lane[lane].err;
        return c->lane[lane].rc;
    }
    sleep_until(c->lane[lane].done);
    *out = c->lane[lane].raw;
    if (times) *times = c->lane[lane].times;
    return 0;
}

/* Finished when the modelled end has passed (a partition whose entry was missing at once: collect
 * reports it); otherwise the time left to that end. */
static int replay_poll(void *ctx, int lane, uint64_t *ret_left_ns, zk_err_t *err) {
    replay_ctx_t *c = ctx;
    *ret_left_ns = 0;
    if (lane < 0 || lane >= ZK_BACKEND_MAX_LANES) return zk_fail(err, EINVAL, "replay backend: no lane %d", lane);
    uint64_t now = now_ns();
    if (c->lane[lane].rc < 0 || now >= c->lane[lane].done) return 1;
    *ret_left_ns = c->lane[lane].done - now;
    return 0;
}

static void replay_destroy(void *ctx) {
    replay_ctx_t *c = ctx;
    if (!c) return;
    zk_replay_hasher_free(c->hasher);
    free(c->keys);
    free(c);
}

const zk_backend_ops_t zk_backend_replay = {
    .name = "replay",
    .init = replay_init,
    .register_memory = replay_register_memory,
    .load_key = replay_load_key,
    .depth = 2, /* the next partition's copy overlaps this one's compute, as on CUDA */
    .submit = replay_submit,
    .collect = replay_collect,
    .poll = replay_poll,
    .destroy = replay_destroy,
    .key_info = replay_key_info,
    .device_info = replay_device_info,
};
