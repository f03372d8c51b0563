/* zkpipe-synthd: takes jobs from spool/incoming, claims partitions in priority order, reads each
 * witness with io_uring straight into a FREE slab, checks it, evaluates a, b, c there, publishes the
 * slab READY and trims its own heap. The slab count is the memory budget: with no FREE slab it
 * waits on a futex. */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/testpoint.h"
#include "common/circuits.h"
#include "common/daemon.h"
#include "common/log.h"
#include "common/stage.h"
#include "spool/spool.h"
#include "common/uring.h"
#include "config/config.h"
#include "base/cleanup.h"
#include "base/file.h"
#include "shm/shm.h"
#include "shm/slab.h"
#include "zk/r1cs.h"
#include "zk/verify.h"
#include "zk/wtns.h"
#include "zk/zkey.h"
#ifdef ZKPIPE_WITGEN
#include "witgen/witgen.h"
#endif

/* A folder in spool/tmp whose submitter is gone (not holding its lock) is removed once it is this
 * old (seconds): time for a live submitter to create the folder and take the lock. */
#define TMP_MAX_AGE_S 60

static cfg_t cfg;
static shm_t S;
static stage_loop_t L;
static uring_reader_t *UR;
static uint64_t synth_busy_ns, synth_count;

/* A proof found in a job directory of active/ (a full restart, or a finalizer that died after its
 * rename) is reused only if it verifies against the partition's public signals: public-<k>.json,
 * which must equal the witness's public values where the witness is a file. Anything else is
 * removed and the partition proved again. */
static bool proof_reusable(int dfd, const spool_job_t *j, uint32_t k) {
    char pn[SPOOL_FILE_NAME_MAX], un[SPOOL_FILE_NAME_MAX], wn[SPOOL_FILE_NAME_MAX], why[900] = "";
    spool_file_name(pn, SPOOL_F_PROOF, k);
    spool_file_name(un, SPOOL_F_PUBLIC, k);
    spool_file_name(wn, SPOOL_F_WITNESS, k);
    struct stat st;
    if (fstatat(dfd, pn, &st, AT_SYMLINK_NOFOLLOW) < 0) return false;
    int r = -ENOENT;
    stage_circuit_t *c = circuits_get(j->circuit, true, why, sizeof why);
    if (c) {
        /* the witness is a file: the public signals must be its own (input jobs: the public file's) */
        _cleanup_free_ char *wtext = NULL;
        size_t wlen;
        zk_wtns_t w = {0};
        bool have_w = !j->inputs && file_read(dfd, wn, FILE_NOFOLLOW, shm_slab_layout(c->z.n_vars, c->z.domain_size).wtns_cap,
                                              0, &wtext, &wlen, why, sizeof why) == 0;
        zk_err_t e = {{0}};
        r = have_w ? zk_wtns_parse(&w, wn, (const uint8_t *)wtext, wlen, &e) : 0;
        if (r < 0) snprintf(why, sizeof why, "%s", e.msg);
        if (r == 0 && have_w && w.n < c->z.n_pub + 1) r = -EBADMSG, snprintf(why, sizeof why, "%s: too short", wn);
        if (r == 0) r = circuit_check_proof(c, dfd, k, have_w ? w.values + 32 : NULL, c->z.n_pub, why, sizeof why);
        if (have_w) zk_wtns_free(&w);
    }
    if (r < 0) {
        log_msg(LOG_WARNING, &(log_ctx_t){.job = j->id, .part = (int)k, .slab = -1}, NULL,
                "Job %s: %s does not verify (%s); partition %u is proved again", j->id, pn, why, k);
        (void)unlinkat(dfd, pn, 0);
        (void)unlinkat(dfd, un, 0);
    }
    return r == 0;
}

/* Registers the job in DIR (under spool/active) unless it is already; partitions with a proof that
 * verifies are marked done (full restart). */
static int register_active(const char *dir, const spool_job_t *j) {
    bool done[SHM_MAX_PARTS] = {0};
    _cleanup_close_ int dfd = spool_open_dir(dir);
    if (dfd < 0) return dfd;
    for (uint32_t k = 0; k < j->n_parts; k++) done[k] = proof_reusable(dfd, j, k);
    shm_lock(&S);
    int r;
    struct stat st;
    if (fstatat(dfd, "job.ini", &st, AT_SYMLINK_NOFOLLOW) < 0)
        r = -ENOENT; /* completed and moved away meanwhile */
    else
        r = shm_job_register(&S, j->id, j->circuit, (uint32_t)j->prio, j->n_parts, j->submit_ns, done);
    shm_unlock(&S);
    return r;
}

static void log_failed(const char *id, const char *reason) {
    log_msg(LOG_ERR, &(log_ctx_t){.job = id, .part = -1, .slab = -1}, NULL, "Job %s failed: %s", id, reason);
}

/* A job of active/ read by the spool (job.ini; spool_load_active or spool_claim) whose circuit this
 * box does not have fails here: the spool knows no configuration. */
static int check_circuit(const char *name, const spool_job_t *j) {
    if (cfg_circuit(&cfg, j->circuit)) return 0;
    char why[600];
    snprintf(why, sizeof why, "job.ini: circuit %s is not configured in %s", j->circuit, cfg.path);
    log_failed(j->id, why);
    int r = spool_fail(cfg.spool, SPOOL_ACTIVE, name, j->id, "failed", why);
    if (r < 0) log_err("Failed to move active/%s to failed/: %s", name, strerror(-r));
    return -ENOENT;
}

/* Claims incoming jobs (spool_claim: the rename into active/ is the commit point) and registers
 * them. What cannot be a job (a file, a symlink, a duplicate id) the spool moves to failed/ once,
 * with the reason. */
static void intake(void) {
    char in[1200], **names;
    size_t n;
    spool_path(in, sizeof in, cfg.spool, SPOOL_INCOMING, NULL);
    if (spool_list(in, &names, &n) < 0) return;
    for (size_t i = 0; i < n; i++) {
        char why[700], failed_id[SPOOL_ID_MAX];
        spool_job_t j;
        int r = spool_claim(cfg.spool, names[i], &j, failed_id, why, sizeof why);
        if (r == -ECANCELED) log_failed(failed_id, why);
        if (r < 0 && r != -ENOENT && r != -ECANCELED) {
            /* it stays in incoming/ (EACCES: a job directory the zkpipe user cannot move): say so once */
            static char warned[256];
            if (strcmp(warned, names[i])) log_err("Failed to claim job %s %s", names[i], why);
            snprintf(warned, sizeof warned, "%s", names[i]);
        }
        if (r < 0 || check_circuit(names[i], &j) < 0) continue;
        char dst[1400];
        spool_path(dst, sizeof dst, cfg.spool, SPOOL_ACTIVE, names[i]);
        r = register_active(dst, &j);
        if (r == -ENOSPC)
            log_warn("Job table full; job %s waits in active/", j.id);
        else if (r < 0)
            log_err("Failed to register job %s: %s", j.id, strerror(-r));
        else
            log_msg(LOG_INFO, &(log_ctx_t){.job = j.id, .part = -1, .slab = -1}, NULL,
                    "Job %s registered: circuit %s, %u partitions, priority %s", j.id, j.circuit, j.n_parts,
                    cfg_priority_name(j.prio));
    }
    spool_free_list(names, n);
}

/* Jobs in active/ that the segment does not know (full restart, or a synthd that died between
 * its rename and the registration) are registered again. */
static void rescan_active(void) {
    char dir[1200], **names;
    size_t n;
    spool_path(dir, sizeof dir, cfg.spool, SPOOL_ACTIVE, NULL);
    if (spool_list(dir, &names, &n) < 0) return;
    for (size_t i = 0; i < n; i++) {
        int slot = shm_job_find(&S, names[i]);
        if (slot >= 0) continue; /* any record, live or terminal: the finalizer moves terminal ones */
        char jd[1400], why[700], failed_id[SPOOL_ID_MAX];
        spool_path(jd, sizeof jd, cfg.spool, SPOOL_ACTIVE, names[i]);
        spool_job_t j;
        int r = spool_load_active(cfg.spool, names[i], &j, failed_id, why, sizeof why);
        if (r == -ECANCELED) log_failed(failed_id, why);
        if (r < 0 || check_circuit(names[i], &j) < 0) continue;
        r = register_active(jd, &j);
        if (r >= 0)
            log_msg(LOG_INFO, &(log_ctx_t){.job = j.id, .part = -1, .slab = -1}, NULL,
                    "Job %s registered again from active/", j.id);
    }
    spool_free_list(names, n);
}

/* Gives the slab back and the partition: on failure the job fails with the reason. */
static void give_up(uint32_t slab, uint32_t job, uint32_t part, const char *reason) {
    stage_give_up(&S, slab, SLAB_FILLING, job, part, reason);
}

/* Trims the heap after a partition (the step trim of its pass); returns how long malloc_trim took
 * (0: the policy did not trim). */
static uint64_t trim_heap(shm_pass_t *ps) {
    if (cfg.trim == CFG_TRIM_NEVER) return 0;
    if (cfg.trim == CFG_TRIM_ABOVE) {
        struct mallinfo2 mi = mallinfo2();
        if (mi.fordblks < cfg.trim_above) return 0;
    }
    uint64_t t0 = daemon_now_ns();
    malloc_trim(0);
    uint64_t dt = daemon_now_ns() - t0;
    shm_count(&S, CNT_TRIMS, 1);
    shm_step(&S, ps, STEP_SYNTH_TRIM, t0, dt, 0);
    return dt;
}

#ifdef ZKPIPE_WITGEN
/* A partition of inputs is claimed at most this often: each claim beyond the first followed a
 * synthd that died while it had it (docs/witgen.md). */
#define WITGEN_MAX_CLAIMS 2u

/* Witness generation from circuit inputs (docs/witgen.md): one generator instance per circuit,
 * loaded when first needed and again when the circuit's key changed (its prime and size are checked
 * against the key). A generator the cache lacks is compiled on a thread of its own (one compile at
 * a time per synthd: a compile takes every CPU and most of its memory), while this synthd goes on
 * with other circuits' partitions and .wtns jobs; the circuit's input partitions are not claimed
 * meanwhile (gen_skip). */
enum {
    GEN_NONE,     /* not loaded: the next partition opens it from the cache */
    GEN_LOADED,   /* g (NULL for a witness_cmd circuit) for the key of key_gen */
    GEN_WAIT,     /* the cache lacks it and the build thread is busy with another circuit */
    GEN_BUILDING, /* the build thread compiles it */
    GEN_NO_SPACE, /* the build found no space in the cache: tried again from since_ns */
    GEN_FAILED,   /* the build failed at since_ns: partitions of jobs registered before fail with why */
};
static struct gen {
    int state;
    witgen_t *g;
    uint64_t key_gen;
    uint64_t since_ns; /* CLOCK_MONOTONIC */
    char why[sizeof(zk_err_t) + 100];
} gens[CFG_MAX_CIRCUITS];

/* The build thread: one circuit at a time. The main thread starts it (build_start) and joins it once
 * done is set (build_reap); it touches nothing of the main thread's but its own slot's compiling
 * field in the segment. */
static struct {
    bool running; /* started, not joined (main thread only) */
    _Atomic bool done;
    pthread_t th;
    int circuit;
    uint32_t job, part; /* the partition that asked for it (for the log) */
    char name[CFG_NAME_MAX], wasm[CFG_PATH_MAX];
    uint64_t t0;
    int r;
    bool built;
    zk_err_t e;
} B;

static uint32_t witgen_slab = SHM_NONE, witgen_part;
static _Atomic uint32_t witgen_job = UINT32_MAX; /* the job slot whose partition is being generated */

static witgen_source_t witgen_src(const cfg_circuit_t *ci) {
    return (witgen_source_t){ci->wasm, ci->witness_cmd, ci->witness_timeout, ci->witness_memory, cfg.cache};
}

/* While a witness_cmd runs: the heartbeat and the watchdog go on. */
static void witgen_tick(void *ctx) {
    (void)ctx;
    stage_tick(&L, witgen_slab);
    test_point("synth.witgen_tick", (int)witgen_part);
}

static void witgen_log_line(void *ctx, const char *line) {
    (void)ctx;
    log_msg(LOG_DEBUG, NULL, NULL, "circuit log: %s", line);
    test_point("synth.witgen_log", (int)witgen_part); /* inside the generator's run */
}

/* Asked while a generator runs (from witgen's watcher thread): the job was cancelled or failed
 * meanwhile, so the partition is not wanted any more. */
static bool witgen_stop(void *ctx) {
    (void)ctx;
    uint32_t job = atomic_load(&witgen_job);
    return job < S.hdr->n_jobs && shm_job_state(&S.jobs[job]) != JOB_ACTIVE;
}

/* the main thread opens generators only from the cache: compiles happen on the build thread;
 * .hugepages is [pipeline] hugepages, set once the configuration is read */
static witgen_opts_t witgen_opts = {
    .tick = witgen_tick, .log_line = witgen_log_line, .stop = witgen_stop, .cached_only = true};

static bool build_stop(void *ctx) {
    (void)ctx;
    return daemon_stop;
}

static void build_started(void *ctx) {
    (void)ctx;
    shm_proc_compiling(&S, B.name);
}

static void *build_main(void *arg) {
    (void)arg;
    witgen_opts_t o = {.cache_dir = cfg.cache, .stop = build_stop, .building = build_started};
    char so[1200];
    B.r = witgen_build(B.wasm, &o, so, sizeof so, &B.built, &B.e);
    shm_proc_compiling(&S, NULL);
    test_point("synth.witgen_built", (int)B.part);
    atomic_store_explicit(&B.done, true, memory_order_release);
    return NULL;
}

/* Starts compiling circuit i's generator on the build thread (idle: the caller checked). */
static int build_start(int i, uint32_t job, uint32_t part, zk_err_t *e) {
    const cfg_circuit_t *ci = &cfg.circuits[i];
    B.circuit = i, B.job = job, B.part = part;
    snprintf(B.name, sizeof B.name, "%s", ci->name);
    snprintf(B.wasm, sizeof B.wasm, "%s", ci->wasm);
    B.t0 = daemon_now_ns();
    B.r = 0, B.built = false;
    atomic_store(&B.done, false);
    int r = pthread_create(&B.th, NULL, build_main, NULL);
    if (r) return zk_fail(e, r, "cannot start the generator build of circuit %s: %s", ci->name, strerror(r));
    B.running = true;
    gens[i].state = GEN_BUILDING;
    gens[i].since_ns = B.t0;
    log_msg(LOG_INFO, &(log_ctx_t){.job = S.jobs[job].id, .part = (int)part, .slab = -1}, NULL,
            "Building the witness generator of circuit %s from %s in the background; its input partitions wait",
            ci->name, ci->wasm);
    return 0;
}

/* No space in the cache to build the circuit's generator: its input partitions wait 2 s before the
 * next try, as proofs wait for spool space. */
static void gen_wait_space(struct gen *G, uint32_t job, uint32_t part, const char *why) {
    G->state = GEN_NO_SPACE;
    G->since_ns = daemon_now_ns() + 2000000000ull;
    log_msg(LOG_WARNING, &(log_ctx_t){.job = S.jobs[job].id, .part = (int)part, .slab = -1}, NULL,
            "Partition %u of job %s waits: %s", part, S.jobs[job].id, why);
}

/* A finished build (main thread, every loop pass): joined, and its outcome is the circuit's state.
 * Circuits that waited for the build thread may start theirs on their next partition. */
static void build_reap(void) {
    if (!B.running || !atomic_load_explicit(&B.done, memory_order_acquire)) return;
    pthread_join(B.th, NULL);
    B.running = false;
    struct gen *G = &gens[B.circuit];
    uint64_t now = daemon_now_ns();
    for (uint32_t i = 0; i < cfg.n_circuits; i++)
        if (gens[i].state == GEN_WAIT) gens[i].state = GEN_NONE;
    log_ctx_t lc = {.job = S.jobs[B.job].id, .part = (int)B.part, .slab = -1};
    if (B.r == 0) {
        G->state = GEN_NONE; /* the next partition loads it */
        if (B.built)
            log_info("Built the witness generator of circuit %s from %s into %s in %.1f s", B.name, B.wasm, cfg.cache,
                     (now - B.t0) / 1e9);
    } else if (B.r == -ENOSPC || B.r == -EDQUOT) {
        gen_wait_space(G, B.job, B.part, B.e.msg);
    } else {
        G->state = GEN_FAILED;
        G->since_ns = now;
        snprintf(G->why, sizeof G->why, "%s", B.e.msg);
        log_msg(LOG_ERR, &lc, NULL, "The witness generator of circuit %s failed to build after %.1f s: %s", B.name,
                (now - B.t0) / 1e9, G->why);
    }
}

/* At exit: the build is stopped (build_stop kills its tools) and joined. */
static void build_end(void) {
    if (!B.running) return;
    log_info("Stopping the build of circuit %s's witness generator", B.name);
    pthread_join(B.th, NULL);
    B.running = false;
}

/* The circuit's input partitions wait: its generator is being built, or waits for cache space. */
static bool gen_blocked(const struct gen *G) {
    return G->state == GEN_BUILDING || G->state == GEN_WAIT ||
           (G->state == GEN_NO_SPACE && daemon_now_ns() < G->since_ns);
}

/* Whether a job's partitions are not to be claimed now: an input job of a circuit whose generator is
 * being built (here: the build thread; elsewhere: another synthd's build, which ours waits for) or
 * waits for cache space. shm_part_claim_skip's filter and shm_part_pending's. */
static bool job_has_inputs(uint32_t slot, const char *dir);
static bool gen_skip(uint32_t slot, void *ctx) {
    (void)ctx;
    int i = cfg_circuit_index(&cfg, S.jobs[slot].circuit);
    if (i < 0) return false;
    if (!gen_blocked(&gens[i])) return false;
    char dir[1400];
    spool_path(dir, sizeof dir, cfg.spool, SPOOL_ACTIVE, S.jobs[slot].id);
    return job_has_inputs(slot, dir);
}

/* Some circuit's partitions wait for a build (the main loop then waits at most 100 ms). */
static bool gen_waiting(void) {
    for (uint32_t i = 0; i < cfg.n_circuits; i++)
        if (gens[i].state == GEN_BUILDING || gens[i].state == GEN_WAIT || gens[i].state == GEN_NO_SPACE) return true;
    return false;
}

/* The circuit's generator for partition part of job: 0 (loaded), -EINPROGRESS (it is being built:
 * the partition waits), or the reason the partition fails. */
static int witgen_get(stage_circuit_t *c, uint32_t job, uint32_t part, witgen_t **ret, zk_err_t *e) {
    int i = cfg_circuit_index(&cfg, c->cfg->name);
    if (i < 0) return zk_fail(e, ENOENT, "circuit %s is not configured", c->cfg->name);
    struct gen *G = &gens[i];
    if (G->state == GEN_LOADED && G->key_gen == c->generation) {
        *ret = G->g;
        return 0;
    }
    if (G->state == GEN_LOADED) {
        if (G->g) witgen_close(G->g);
        G->g = NULL;
        G->state = GEN_NONE;
    }
    if (gen_blocked(G)) return -EINPROGRESS;
    if (G->state == GEN_FAILED) {
        /* the build failed while this job waited for it: the job fails; a later job tries again */
        if (S.jobs[job].registered_ns <= G->since_ns) return zk_fail(e, EIO, "%s", G->why);
        G->state = GEN_NONE;
    }
    witgen_source_t src = witgen_src(c->cfg);
    int r = witgen_source_open(&G->g, &src, &witgen_opts, &c->z, c->cfg->zkey, NULL, e);
    if (r == 0) {
        G->state = GEN_LOADED;
        G->key_gen = c->generation;
        *ret = G->g;
        return 0;
    }
    if (r == -EAGAIN) return -EINPROGRESS; /* replaced while it was checked (another build): again */
    if (r == -ENOSPC || r == -EDQUOT) {    /* no room for the cache directory itself */
        gen_wait_space(G, job, part, e->msg);
        return -EINPROGRESS;
    }
    if (r != -EINPROGRESS) return r;
    if (B.running) {
        G->state = GEN_WAIT;
        return -EINPROGRESS;
    }
    r = build_start(i, job, part, e);
    return r < 0 ? r : -EINPROGRESS;
}

/* Computes partition part's witness image into out with the circuit's generator (from
 * DIR/input-<part>.json). name becomes what later messages call the image. */
static int witness_from_inputs(stage_circuit_t *c, const char *dir, uint32_t slab, uint32_t job, uint32_t part,
                               uint8_t *out, size_t cap, size_t *len, char *name, size_t name_cap, zk_err_t *e) {
    witgen_t *g = NULL;
    int r = witgen_get(c, job, part, &g, e);
    if (r < 0) return r;
    witgen_source_t src = witgen_src(c->cfg);
    snprintf(name, name_cap, g ? "the witness of input-%u.json" : "witness_cmd's output for input-%u.json", part);
    witgen_slab = slab;
    witgen_part = part;
    atomic_store(&witgen_job, job);
    r = witgen_partition(g, &src, &witgen_opts, dir, part, out, cap, len, e);
    atomic_store(&witgen_job, UINT32_MAX);
    witgen_slab = SHM_NONE;
    return r;
}
#endif

/* Whether the job's partitions are circuit inputs (job.ini inputs = yes): read from job.ini once
 * per job record (slot and generation), not once per partition. One entry per record of the
 * segment's job table (its size, [pipeline] jobs, is the segment's: allocated at attach). */
static struct job_kind {
    uint32_t gen;
    bool known, inputs;
} *job_kind;

static bool job_has_inputs(uint32_t slot, const char *dir) {
    uint32_t gen = shm_job_gen(&S.jobs[slot]);
    struct job_kind *k = &job_kind[slot];
    if (k->known && k->gen == gen) return k->inputs;
    char err[300];
    spool_job_t sj;
    bool inputs = spool_read_job(dir, &sj, err, sizeof err) == 0 && sj.inputs;
    *k = (struct job_kind){.gen = gen, .known = true, .inputs = inputs};
    return inputs;
}

static void fill(uint32_t slab, uint32_t job, uint32_t part) {
    shm_job_t *J = &S.jobs[job];
    uint64_t t_start = daemon_now_ns();
    char id[SHM_ID_MAX], dir[1400], name[64], why[900];
    snprintf(id, sizeof id, "%s", J->id);
    log_ctx_t lc = {.job = id, .part = (int)part, .slab = (int)slab};
    shm_pass_t ps = shm_pass(job, part, slab);
    stage_tick(&L, slab);
    stage_circuit_t *c = circuits_get(J->circuit, true, why, sizeof why);
    if (!c) {
        give_up(slab, job, part, why);
        return;
    }
    uint8_t *base = shm_slab_data(&S, slab);
    shm_slab_hdr_t *h = (shm_slab_hdr_t *)base;
    shm_slab_layout_t lay = shm_slab_layout(c->z.n_vars, c->z.domain_size);
    if (lay.bytes > S.hdr->slab_size) {
        snprintf(why, sizeof why, "circuit %s needs %llu bytes per slab, the segment's slabs have %llu", J->circuit,
                 (unsigned long long)lay.bytes, (unsigned long long)S.hdr->slab_size);
        give_up(slab, job, part, why);
        return;
    }

    /* 1. read the witness file straight into the slab (opened relative to the job directory, never
     * through a symlink, never blocking on a FIFO), or compute it there from the circuit's inputs */
    spool_file_name(name, SPOOL_F_WITNESS, part);
    spool_path(dir, sizeof dir, cfg.spool, SPOOL_ACTIVE, id);
    size_t len = 0;
    int r;
    bool generated = job_has_inputs(job, dir);
    if (generated) {
#ifdef ZKPIPE_WITGEN
        /* every claim counts (shm_part_claim): a third one means two synthds died generating this
         * partition (a generator that crashed or hung them): not a third */
        uint32_t claims = atomic_load_explicit(&J->parts[part].synth_count, memory_order_relaxed);
        if (claims > WITGEN_MAX_CLAIMS) {
            snprintf(why, sizeof why,
                     "input-%u.json: a synthd died %u times while generating this witness (killed, or hung and "
                     "killed by the watchdog); not tried again",
                     part, claims - 1);
            give_up(slab, job, part, why);
            return;
        }
        zk_err_t we = {{0}};
        r = witness_from_inputs(c, dir, slab, job, part, base + lay.wtns_off, lay.wtns_cap, &len, name, sizeof name,
                                &we);
        shm_step(&S, &ps, STEP_SYNTH_WITNESS, t_start, daemon_now_ns() - t_start, len);
        if (r == -ECANCELED) { /* the job was cancelled or failed meanwhile */
            give_up(slab, job, part, NULL);
            (void)trim_heap(&ps);
            return;
        }
        if (r == -EINPROGRESS) { /* its generator is being built: the partition waits, unclaimed */
            (void)shm_part_retry(&S, slab, job, part);
            return;
        }
        if (r < 0) {
            give_up(slab, job, part, we.msg);
            (void)trim_heap(&ps);
            return;
        }
#else
        give_up(slab, job, part, "the job brings circuit inputs, and this synthd was built without witness generation");
        return;
#endif
    } else {
        _cleanup_close_ int dfd = spool_open_dir(dir);
        if (dfd < 0) {
            snprintf(why, sizeof why, "cannot open the job directory %s: %s", dir, strerror(-dfd));
            give_up(slab, job, part, why);
            return;
        }
        _cleanup_close_ int fd = file_open_regular(dfd, name, FILE_NOFOLLOW, NULL, why, sizeof why);
        if (fd < 0) {
            give_up(slab, job, part, why);
            return;
        }
        r = uring_read_fd(UR, fd, base + lay.wtns_off, lay.wtns_cap, &len);
    }
    uint64_t t_read = daemon_now_ns();
    if (!generated) shm_step(&S, &ps, STEP_SYNTH_READ, t_start, t_read - t_start, len);
    if (r == -EFBIG) {
        snprintf(
            why, sizeof why,
            "%s: %zu bytes, more than a witness of circuit %s (nVars %u) can be: the witness is for another circuit",
            name, len, J->circuit, c->z.n_vars);
        give_up(slab, job, part, why);
        return;
    }
    if (r < 0) {
        snprintf(why, sizeof why, "%s: cannot read: %s", name, strerror(-r));
        give_up(slab, job, part, why);
        return;
    }
    /* 2. check it: format, curve and size against the key, constraints against the .r1cs */
    zk_wtns_t w;
    zk_err_t e = {{0}};
    r = zk_wtns_parse(&w, name, base + lay.wtns_off, len, &e);
    if (r == 0) r = zk_wtns_check_zkey(&w, name, &c->z, c->cfg->zkey, &e);
    if (r < 0) {
        zk_wtns_free(&w);
        give_up(slab, job, part, e.msg);
        return;
    }
    const uint8_t *values = w.values;
    uint64_t values_off;
    if (values >= base + lay.wtns_off && values + (size_t)w.n * 32 <= base + lay.a_off) {
        values_off = (uint64_t)(values - base);
    } else { /* the parser had to copy (unusual layout): put the values in the slab, and count it */
        values_off = SHM_SLAB_HEADER;
        memmove(base + values_off, values, (size_t)w.n * 32);
        shm_count(&S, CNT_BYTES_COPIED, (uint64_t)w.n * 32);
    }
    zk_wtns_free(&w);
    values = base + values_off;
    if (c->has_r1cs) {
        int64_t bad = -1;
        r = zk_r1cs_check(&c->r, c->cfg->r1cs, values, c->z.n_vars, &bad, &e);
        if (r < 0) {
            snprintf(why, sizeof why, "%s: %s", name, e.msg);
            give_up(slab, job, part, why);
            return;
        }
    }
    uint64_t t_check = daemon_now_ns();
    shm_step(&S, &ps, STEP_SYNTH_CHECK, t_read, t_check - t_read, 0);
    test_point("synth.mid_fill", (int)part);
    if (shm_job_state(J) != JOB_ACTIVE) { /* cancelled or failed meanwhile */
        give_up(slab, job, part, NULL);
        return;
    }
    /* 3. evaluate a, b, c into the slab */
    r = zk_synth(&c->z, values, base + lay.a_off, base + lay.b_off, base + lay.c_off,
                 cfg.synth_threads ? (int)cfg.synth_threads : 0);
    uint64_t t_eval = daemon_now_ns();
    if (r < 0) {
        snprintf(why, sizeof why, "synthesis failed: %s", strerror(-r));
        give_up(slab, job, part, why);
        return;
    }
    shm_step(&S, &ps, STEP_SYNTH_EVAL, t_check, t_eval - t_check, 0);
    test_point("synth.before_publish", (int)part);
    memset(h, 0, sizeof *h);
    h->job = job;
    h->job_gen = shm_job_gen(J);
    h->part = part;
    h->curve_id = c->z.curve->id;
    snprintf(h->job_id, sizeof h->job_id, "%s", id);
    snprintf(h->circuit, sizeof h->circuit, "%s", J->circuit);
    h->n_vars = c->z.n_vars;
    h->n_pub = c->z.n_pub;
    h->domain_size = c->z.domain_size;
    h->wtns_off = lay.wtns_off;
    h->wtns_len = len;
    h->values_off = values_off;
    h->a_off = lay.a_off;
    h->b_off = lay.b_off;
    h->c_off = lay.c_off;
    uint64_t now = daemon_now_ns();
    shm_part_t *P = &J->parts[part];
    atomic_store_explicit(&P->t_ready_ns, now, memory_order_relaxed);
    /* counted before READY: once the job is done, every reader sees its partitions' figures */
    shm_count(&S, CNT_SYNTHESIZED, 1);
    shm_count(&S, CNT_SYNTH_BUSY_NS, now - t_start);
    atomic_fetch_add_explicit(&S.procs[S.self].busy_ns, now - t_start, memory_order_relaxed);
    synth_busy_ns += now - t_start;
    synth_count++;
    /* the release-CAS to READY publishes the header page and the data */
    if (shm_slab_move(&S, slab, SLAB_FILLING, SLAB_READY) < 0) {
        log_msg(LOG_ERR, &lc, NULL, "Slab %u was taken from us while filling (reclaimed as dead?)", slab);
        return;
    }
    test_point("synth.handed_on", (int)part);
    uint64_t trim_ns = trim_heap(&ps);
    stage_log_pass(LOG_DEBUG, &lc, &ps, "Synthesized partition %u of job %s in %.1f ms (trim %.2f ms)", part, id,
                   (now - t_start) / 1e6, trim_ns / 1e6);
    stage_tick(&L, SHM_NONE);
}

static void status_line(char *buf, size_t len) {
    int n = snprintf(buf, len, "%llu partitions synthesized, %.1f ms average", (unsigned long long)synth_count,
                     synth_count ? synth_busy_ns / 1e6 / synth_count : 0.0);
#ifdef ZKPIPE_WITGEN
    if (B.running && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, "; compiling circuit %s (since %.0f s)", B.name,
                 (daemon_now_ns() - B.t0) / 1e9);
#else
    (void)n;
#endif
}

int main(int argc, char **argv) {
    daemon_args_t args;
    int ex;
    if (!stage_init(argc, argv, "zkpipe-synthd",
                    "The synthesis stage: takes jobs from the spool, reads each witness into a FREE slab of the\n"
                    "shared segment, checks it, evaluates a, b, c there and marks the slab READY for gpud.",
                    false, true, &args, &cfg, &ex))
        return ex;
    witgen_opts.hugepages = cfg.hugepages;
    if (!stage_attach(&cfg, &S, ROLE_SYNTHD, (uint32_t)args.instance)) return 1;
    job_kind = calloc(S.hdr->n_jobs, sizeof *job_kind);
    if (!job_kind) {
        log_err("Out of memory");
        return 1;
    }
    int r = uring_reader_new(&UR, 8);
    if (r < 0) {
        log_err("Failed to set up io_uring: %s", strerror(-r));
        return 1;
    }
    circuits_init(&cfg, CIRCUIT_R1CS | CIRCUIT_VK | CIRCUIT_COEFS);
    int reclaimed = shm_reclaim(&S);
    int cleaned = spool_clean_tmp(cfg.spool, TMP_MAX_AGE_S);
    rescan_active();
    intake();
    stage_loop_init(&L, &S, status_line);
    daemon_notify_ready("attached; waiting for work");
    log_info("Attached to %s (%u slabs of %llu MiB, %s), spool %s; reclaimed %d slabs, removed %d abandoned "
             "submissions",
             cfg.segment, S.hdr->n_slabs, (unsigned long long)(S.hdr->slab_size >> 20),
             S.created ? "created" : "existing", cfg.spool, reclaimed, cleaned > 0 ? cleaned : 0);
    stage_log_memory("at start", NULL);
    uint32_t last_intake_seq = atomic_load_explicit(&S.hdr->job_seq, memory_order_acquire);
    uint64_t last_scan = daemon_now_ns(), last_clean = last_scan;
    while (!daemon_stop) {
        stage_tick(&L, SHM_NONE);
        uint64_t now = daemon_now_ns();
        uint32_t jseq = atomic_load_explicit(&S.hdr->job_seq, memory_order_acquire);
        uint32_t sseq = atomic_load_explicit(&S.hdr->slab_seq, memory_order_acquire);
        if (jseq != last_intake_seq || now - last_scan > 1000000000ull) {
            last_intake_seq = jseq;
            intake();
            if (now - last_scan > 1000000000ull) {
                rescan_active();
                last_scan = now;
            }
            jseq = atomic_load_explicit(&S.hdr->job_seq, memory_order_acquire);
        }
        if (now - last_clean > 60000000000ull) {
            last_clean = now;
            int n = spool_clean_tmp(cfg.spool, TMP_MAX_AGE_S);
            if (n > 0) log_info("Removed %d abandoned submissions from %s/tmp", n, cfg.spool);
        }
#ifdef ZKPIPE_WITGEN
        build_reap();
        bool (*skip)(uint32_t, void *) = gen_skip;
        int cap_ms = gen_waiting() ? 100 : 0; /* a build's end or the retry time is no job change */
#else
        bool (*skip)(uint32_t, void *) = NULL;
        int cap_ms = 0;
#endif
        if (!shm_part_pending(&S, false, skip, NULL)) {
            (void)stage_wait(&L, &S.hdr->job_seq, jseq, cap_ms);
            continue;
        }
        uint32_t slab, job, part;
        bool reserved = false;
        r = shm_slab_take_free(&S, cfg.reserve_critical, shm_critical_pending(&S), &slab, &reserved);
        if (r == -EAGAIN) {
            /* backpressure: every slab is in use */
            uint64_t t0 = daemon_now_ns();
            (void)stage_wait(&L, &S.hdr->slab_seq, sseq, 0);
            shm_step(&S, NULL, STEP_SYNTH_WAIT_SLAB, t0, daemon_now_ns() - t0, 0);
            continue;
        }
        if (shm_part_claim_skip(&S, slab, reserved, skip, NULL, &job, &part) < 0) {
            (void)shm_slab_move(&S, slab, SLAB_FILLING, SLAB_FREE);
            continue;
        }
        fill(slab, job, part);
    }
    daemon_notify_stopping();
#ifdef ZKPIPE_WITGEN
    build_end();
#endif
    log_info("Stopping after %llu partitions", (unsigned long long)synth_count);
    stage_log_memory("at stop", NULL);
    uring_reader_free(UR);
    shm_close(&S);
    return 0;
}
