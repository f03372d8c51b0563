/* zkpipe-gpud: one per device. Registers the whole slab area with the backend once, loads each
 * circuit's key once, then repeatedly takes the READY slab with the smallest (priority, job order,
 * partition) key, proves it in place (the backend reads a, b, c and the witness where synthd wrote
 * them) and publishes the five raw points in the slab as PROVED. The GPU path takes no lock; only a
 * reclaim after a timed-out wait may force open a registration lock whose holder died. A key whose
 * file changed on disk is loaded again between partitions (common/circuits.h). */
#include <errno.h>
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
#include "config/config.h"
#include "gpud/backend.h"
#include "shm/shm.h"
#include "shm/slab.h"
#include "zk/zkey.h"

static cfg_t cfg;
static shm_t S;
static stage_loop_t L;
static const zk_backend_ops_t *B;
static void *bctx;
/* The circuit cache's generation each key was loaded into the backend at (0: not loaded). */
static uint64_t backend_gen[CFG_MAX_CIRCUITS];
static bool backend_loaded[CFG_MAX_CIRCUITS];
static uint64_t proved, busy_ns;

/* The circuit's key, resident in the backend. It is reloaded (file changed on disk) only when
 * may_reload: no partition is in flight that uses the key being replaced. */
static int key_get(const char *circuit, bool may_reload, zk_zkey_t **ret, char *why, size_t whylen) {
    int i = cfg_circuit_index(&cfg, circuit);
    stage_circuit_t *c = circuits_get(circuit, may_reload, why, whylen);
    if (!c || i < 0) {
        if (i >= 0) backend_loaded[i] = false;
        return -ENOENT;
    }
    if (!backend_loaded[i] || backend_gen[i] != c->generation) {
        zk_err_t e = {{0}};
        uint64_t t0 = daemon_now_ns();
        int r = B->load_key(bctx, &c->z, &e);
        if (r < 0) return snprintf(why, whylen, "%s", e.msg), r;
        backend_loaded[i] = true;
        backend_gen[i] = c->generation;
        shm_step(&S, NULL, STEP_GPU_LOAD_KEY, t0, daemon_now_ns() - t0, (uint64_t)i);
        uint32_t resident = 0;
        for (uint32_t k = 0; k < CFG_MAX_CIRCUITS; k++) resident += backend_loaded[k];
        shm_keys_resident(&S, resident);
        const char *info = B->key_info ? B->key_info(bctx, &c->z) : NULL;
        log_info("Loaded the key of circuit %s (%u wires, domain %u) in %.1f ms%s%s", circuit, c->z.n_vars,
                 c->z.domain_size, (daemon_now_ns() - t0) / 1e6, info ? "; " : "", info ? info : "");
    }
    *ret = &c->z;
    return 0;
}

/* Gives a PROVING slab up: its partition is dropped (cancel) or failed (reason). */
static void drop(uint32_t slab, uint32_t job, uint32_t part, const char *reason) {
    stage_give_up(&S, slab, SLAB_PROVING, job, part, reason);
}

/* A partition that was in flight this many times when gpud lost its device fails (it may be what
 * faults the device) instead of taking the stage down again. */
#define GPU_MAX_LOST 3

/* The partitions between submit and collect, one per busy lane of the backend (flights[lane]). */
typedef struct {
    bool busy;
    uint32_t slab, job, part;
    uint64_t order; /* submission order */
    uint64_t t_pick, t_submit;
    shm_pass_t pass; /* its steps, from the idle gap its start ended to the proof */
} flight_t;
static flight_t flights[ZK_BACKEND_MAX_LANES];
static int n_flights, depth;
static uint64_t submitted;

/* The lane submitted first of those in flight, or -1. */
static int oldest_lane(void) {
    int o = -1;
    for (int i = 0; i < depth; i++)
        if (flights[i].busy && (o < 0 || flights[i].order < flights[o].order)) o = i;
    return o;
}

static uint32_t oldest_slab(void) {
    int o = oldest_lane();
    return o < 0 ? SHM_NONE : flights[o].slab;
}

/* The backend lost its device (-ENODEV): the context cannot be used again. Exit without giving up
 * the partitions in flight (cur: the one being started, if any): they are PROVING under this dead
 * process, so the restarted gpud (or any other) reclaims them as READY and proves them again on a
 * fresh context. Each of them counts the loss. */
static _Noreturn void device_lost(const char *why, const shm_part_t *cur) {
    if (cur) atomic_fetch_add_explicit(&((shm_part_t *)cur)->lost_count, 1, memory_order_relaxed);
    for (int i = 0; i < depth; i++)
        if (flights[i].busy)
            atomic_fetch_add_explicit(&S.jobs[flights[i].job].parts[flights[i].part].lost_count, 1,
                                      memory_order_relaxed);
    log_err("The device is lost (%s); exiting so that gpud restarts on a fresh context; the partitions in flight "
            "go back to READY",
            why);
    _exit(3);
}

/* Hands a PROVING slab to the backend. last_done: when the GPU stage last finished a partition
 * (the idle gap ends here unless a partition is still in flight). */
static void start(uint32_t slab, uint64_t t_pick, uint64_t last_done) {
    shm_slab_t *d = &S.slabs[slab];
    shm_slab_hdr_t *h = shm_slab_header(&S, slab);
    uint32_t job = atomic_load_explicit(&d->job, memory_order_relaxed), part = atomic_load_explicit(&d->part, memory_order_relaxed);
    shm_job_t *J = &S.jobs[job];
    /* the partition's READY time, which synthd wrote before publishing READY */
    uint64_t t_ready = atomic_load_explicit(&J->parts[part].t_ready_ns, memory_order_relaxed);
    shm_pass_t ps = shm_pass(job, part, slab);
    /* idle gap since the previous partition (none while one is in flight): did a READY slab wait? */
    if (last_done && !n_flights)
        shm_step(&S, &ps, t_ready <= last_done ? STEP_GPU_IDLE_READY : STEP_GPU_WAIT_READY, last_done,
                 t_pick - last_done, 0);
    /* value 1: the GPU stage was busy when the slab became READY */
    shm_step(&S, &ps, STEP_GPU_HANDOFF, t_ready, t_pick > t_ready ? t_pick - t_ready : 0, last_done <= t_ready);
    if (shm_slab_stale(&S, slab)) {
        drop(slab, job, part, NULL);
        return;
    }
    stage_tick(&L, slab);
    char why[700];
    zk_zkey_t *z;
    shm_part_t *P = &J->parts[part];
    int r = key_get(J->circuit, n_flights == 0, &z, why, sizeof why);
    if (r == -ENODEV) device_lost(why, P);
    if (r < 0) {
        drop(slab, job, part, why);
        return;
    }
    if (z->n_vars != h->n_vars || z->domain_size != h->domain_size) {
        snprintf(why, sizeof why, "slab %u was filled for %u wires / domain %u, the key has %u / %u", slab, h->n_vars,
                 h->domain_size, z->n_vars, z->domain_size);
        drop(slab, job, part, why);
        return;
    }
    if (atomic_load_explicit(&P->lost_count, memory_order_relaxed) >= GPU_MAX_LOST) {
        snprintf(why, sizeof why,
                 "the GPU was lost %d times while proving it (it may be what faults the device; see gpud's log)",
                 GPU_MAX_LOST);
        drop(slab, job, part, why);
        return;
    }
    atomic_fetch_add_explicit(&P->prove_count, 1, memory_order_relaxed);
    atomic_store_explicit(&P->t_prove_start_ns, t_pick, memory_order_relaxed);
    test_point("gpu.mid_prove", (int)part);
    uint8_t *base = shm_slab_data(&S, slab);
    zk_err_t e = {{0}};
    int lane = 0;
    while (flights[lane].busy) lane++; /* the caller saw a free lane */
    flight_t f = {.busy = true, .slab = slab, .job = job, .part = part, .order = submitted, .t_pick = t_pick, .pass = ps};
    f.t_submit = daemon_now_ns();
    r = B->submit(bctx, lane, z, base + h->values_off, base + h->a_off, base + h->b_off, base + h->c_off, &e);
    if (r == -ENODEV) device_lost(e.msg, P);
    if (r < 0) {
        drop(slab, job, part, e.msg);
        return;
    }
    submitted++;
    flights[lane] = f;
    n_flights++;
    test_point("gpu.submitted", (int)part);
}

/* Collects the lane's flight and publishes its slab as PROVED. prev_done: when the previous
 * partition was collected (the GPU was busy with this one from max(submit, prev_done)). Returns
 * when the GPU stage finished with the slab. */
static uint64_t finish(int lane, uint64_t prev_done) {
    flight_t f = flights[lane];
    flights[lane].busy = false;
    n_flights--;
    uint32_t slab = f.slab, job = f.job, part = f.part;
    shm_slab_hdr_t *h = shm_slab_header(&S, slab);
    shm_part_t *P = &S.jobs[job].parts[part];
    log_ctx_t lc = {.job = h->job_id, .part = (int)part, .slab = (int)slab};
    zk_core_times_t tm = {0};
    zk_err_t e = {{0}};
    int r = B->collect(bctx, lane, &h->raw, &tm, &e);
    if (r == -ENODEV) device_lost(e.msg, P);
    test_point("gpu.after_prove", (int)part);
    uint64_t t1 = daemon_now_ns();
    stage_tick(&L, oldest_slab());
    if (r < 0) {
        drop(slab, job, part, e.msg);
        return daemon_now_ns();
    }
    uint64_t t0 = f.t_submit > prev_done ? f.t_submit : prev_done, tb = f.t_pick > prev_done ? f.t_pick : prev_done;
    /* the steps before PROVED: the finalizer may end the job, and read gpu_ns, right after it */
    shm_step(&S, &f.pass, STEP_GPU_PROVE, t0, t1 - t0, 0);
    /* the backend's steps, laid end to end inside the prove slice */
    const uint64_t core[] = {tm.h2d_ns, tm.ntt_ns, tm.msm_a_ns, tm.msm_b1_ns, tm.msm_b2_ns, tm.msm_c_ns, tm.msm_h_ns};
    uint64_t at = t0;
    for (uint32_t i = 0; i < 7; i++) {
        if (!core[i]) continue;
        shm_step(&S, &f.pass, STEP_GPU_H2D + i, at, core[i], 0);
        at += core[i];
    }
    atomic_store_explicit(&P->t_proved_ns, t1, memory_order_relaxed);
    /* counted before PROVED too: once the job is done, advise and the metrics read the same figures */
    proved++;
    busy_ns += t1 - tb;
    shm_count(&S, CNT_PROVED, 1);
    atomic_fetch_add_explicit(&S.procs[S.self].steps, 1, memory_order_relaxed);
    shm_count(&S, CNT_GPU_BUSY_NS, t1 - tb);
    atomic_fetch_add_explicit(&S.procs[S.self].busy_ns, t1 - tb, memory_order_relaxed);
    if (shm_slab_move(&S, slab, SLAB_PROVING, SLAB_PROVED) < 0) {
        log_msg(LOG_ERR, &lc, NULL, "Slab %u was taken from us while proving", slab);
        return t1;
    }
    test_point("gpu.handed_on", (int)part);
    stage_log_pass(LOG_DEBUG, &lc, &f.pass, "Proved partition %u of job %s in %.1f ms", part, h->job_id,
                   (t1 - t0) / 1e6);
    return t1;
}

/* With a lane free and partitions in flight, gpud waits for a READY slab at most this long before it
 * asks its lanes again, where the backend cannot say how long they still take (CUDA). */
#define GPU_POLL_NS 250000ull

/* The lane in flight that has finished (the first submitted of those), or -1; *left: the least time
 * another lane said it still needs (0: none said). A lane whose poll fails counts as finished:
 * collect reports the error; a lost device ends gpud here. */
static int finished_lane(uint64_t *left) {
    int done = -1;
    *left = 0;
    for (int i = 0; i < depth; i++) {
        if (!flights[i].busy) continue;
        uint64_t l = 0;
        zk_err_t e = {{0}};
        int r = B->poll(bctx, i, &l, &e);
        if (r == -ENODEV) device_lost(e.msg, NULL);
        if (r != 0 && (done < 0 || flights[i].order < flights[done].order)) done = i;
        if (r == 0 && l && (!*left || l < *left)) *left = l;
    }
    return done;
}

static void status_line(char *buf, size_t len) {
    snprintf(buf, len, "%llu partitions proved on %s", (unsigned long long)proved, B->name);
}

int main(int argc, char **argv) {
    daemon_args_t args;
    int ex;
    char about[512];
    snprintf(about, sizeof about,
             "The proving stage, one per device: takes READY slabs, runs the proving core (NTT and MSMs) on\n"
             "them in place and marks them PROVED. Backends built into this binary: cpu%s. Partitions in\n"
             "flight: [gpu] inflight (0 = the backend's choice: cuda 2, cpu 1, replay 2). Backend replay: a\n"
             "device model's timing without the device, results from `zkpipe replay prepare` (docs/replay.md).",
             zk_backend_by_name("cuda") ? ", cuda" : "");
    if (!stage_init(argc, argv, "zkpipe-gpud", about, true, false, &args, &cfg, &ex)) return ex;
    char err[1200];
    const char *bname = args.backend                        ? args.backend
                        : cfg.backend == CFG_BACKEND_CPU    ? "cpu"
                        : cfg.backend == CFG_BACKEND_CUDA   ? "cuda"
                        : cfg.backend == CFG_BACKEND_REPLAY ? "replay"
                                                            : "auto";
    B = !strcmp(bname, "replay") ? &zk_backend_replay : zk_backend_by_name(bname);
    if (!B) {
        log_err("Failed to select backend %s: not built into this gpud (cpu%s)", bname,
                zk_backend_by_name("cuda") ? ", cuda" : "");
        return 1;
    }
    char tag[80] = ""; /* "replay h200": a replay names itself in every log line and in the metrics */
    if (B == &zk_backend_replay) {
        if (!cfg.replay_model[0]) {
            log_err("Failed to select backend replay: it needs [gpu] replay_model = FILE (the device model) in %s",
                    cfg.path);
            return 1;
        }
        zk_backend_replay_setup(cfg.replay_model, cfg.replay_cache);
        const char *base = strrchr(cfg.replay_model, '/');
        base = base ? base + 1 : cfg.replay_model;
        snprintf(tag, sizeof tag, "replay %.*s", (int)strcspn(base, "."), base);
        char pre[100];
        snprintf(pre, sizeof pre, "[%s] ", tag);
        log_prefix(pre);
    }
    zk_err_t e = {{0}};
    int threads = cfg.gpu_threads ? (int)cfg.gpu_threads : 0;
    int r = B->init(&bctx, args.device, threads, cfg.gpu_precompute, &e);
    if (r < 0 && !strcmp(bname, "auto") && B != &zk_backend_cpu) {
        log_warn("Backend %s unavailable (%s); using the CPU backend", B->name, e.msg);
        B = &zk_backend_cpu;
        r = B->init(&bctx, args.device, threads, cfg.gpu_precompute, &e);
    }
    if (r < 0) {
        log_err("Failed to initialise backend %s: %s", B->name, e.msg);
        /* the device cannot run this build: a restart would fail the same way */
        return r == -ENOEXEC ? ZK_BACKEND_EXIT_UNSUPPORTED : 1;
    }
    const char *dev = B->device_info ? B->device_info(bctx) : NULL;
    if (dev) log_info("Backend %s on %s", B->name, dev);
    if (cfg.gpu_device_memory && !B->set_device_memory)
        log_warn("[gpu] device_memory is ignored by backend %s", B->name);
    else if (cfg.gpu_device_memory && B->set_device_memory(bctx, cfg.gpu_device_memory, &e) < 0) {
        log_err("Failed to cap the device memory of backend %s: %s", B->name, e.msg);
        return 1;
    }
    depth = cfg.gpu_inflight ? (int)cfg.gpu_inflight : B->depth;
    if (depth < 1) depth = 1;
    if (depth > ZK_BACKEND_MAX_LANES) depth = ZK_BACKEND_MAX_LANES;
    if (B->set_lanes && B->set_lanes(bctx, depth, &e) < 0) { /* the CPU backend: a thread per lane */
        log_err("Failed to set %d lanes on backend %s: %s", depth, B->name, e.msg);
        return 1;
    }
    if (!stage_attach(&cfg, &S, ROLE_GPUD, (uint32_t)args.instance)) return 1;
    if (cfg.hugepages) zk_backend_cpu_hugepages(shm_hugepages_advise);
    char devname[64];
    snprintf(devname, sizeof devname, "%s %d", tag[0] ? tag : B->name, args.device); /* a replay: "replay h200 0" */
    shm_proc_device(&S, devname);
    circuits_init(&cfg, CIRCUIT_POINTS);
    daemon_notify_extend(120 * 1000000ull, "registering the slab memory");
    uint32_t first = 0;
    r = zk_backend_register_slabs(B, bctx, S.data, S.hdr->n_slabs, S.hdr->slab_size, &first, &e);
    if (r < 0) {
        log_err("Failed to register the slab memory (slabs from %u of %u, %llu bytes each) with backend %s: %s", first,
                S.hdr->n_slabs, (unsigned long long)S.hdr->slab_size, B->name, e.msg);
        return 1;
    }
    for (uint32_t i = 0; i < cfg.n_circuits; i++) {
        if (!cfg.circuits[i].preload) continue;
        zk_zkey_t *z;
        /* Each key gets its own start-timeout budget: 60 s plus 10 s per GiB of .zkey, plus 1 s per
         * 16 MiB of window tables it may build (measured ~28 MiB/s per core, docs/prover.md). */
        struct stat st;
        uint64_t gib = stat(cfg.circuits[i].zkey, &st) == 0 ? (uint64_t)st.st_size >> 30 : 0;
        char what[CFG_NAME_MAX + 32];
        snprintf(what, sizeof what, "loading the key of %s", cfg.circuits[i].name);
        daemon_notify_extend((60 + 10 * gib + (cfg.gpu_precompute >> 24)) * 1000000ull, what);
        test_point("gpu.load_key", (int)i);
        int kr = key_get(cfg.circuits[i].name, false, &z, err, sizeof err);
        if (kr == -ENODEV) device_lost(err, NULL);
        if (kr < 0) log_err("Failed to preload circuit %s: %s", cfg.circuits[i].name, err); /* jobs for it will fail */
    }
    char held[200];
    if (B == &zk_backend_replay)
        snprintf(held, sizeof held, "pinned none (a replay: no device, no registered memory)");
    else if (B == &zk_backend_cpu)
        snprintf(held, sizeof held, "window tables within [gpu] precompute = %llu MiB (the key lines above); "
                 "pinned none (the CPU backend registers no memory)", (unsigned long long)(cfg.gpu_precompute >> 20));
    else
        snprintf(held, sizeof held, "pinned: the slab memory registered with the device, %llu MiB",
                 (unsigned long long)((uint64_t)S.hdr->n_slabs * S.hdr->slab_size >> 20));
    stage_log_memory("after loading the keys", held);
    int reclaimed = shm_reclaim(&S);
    stage_loop_init(&L, &S, status_line);
    daemon_notify_ready("attached; keys loaded; waiting for READY slabs");
    log_info("Attached to %s with backend %s (device %d, %d partition%s in flight); reclaimed %d slabs", cfg.segment,
             B->name, args.device, depth, depth > 1 ? "s" : "", reclaimed);
    uint64_t last_done = 0;
    while (!daemon_stop) {
        stage_tick(&L, oldest_slab());
        uint32_t seq = atomic_load_explicit(&S.hdr->slab_seq, memory_order_acquire);
        uint32_t slab;
        /* keep the backend fed: a READY slab goes to a free lane first, also while other lanes are in
         * flight (the device gets work before gpud publishes what has ended) */
        if (n_flights < depth && shm_slab_pick(&S, SLAB_READY, SLAB_PROVING, &slab) == 0) {
            start(slab, daemon_now_ns(), last_done);
            continue;
        }
        if (!n_flights) {
            (void)stage_wait(&L, &S.hdr->slab_seq, seq, 0);
            continue;
        }
        uint64_t left;
        int lane = finished_lane(&left);
        if (lane >= 0) {
            last_done = finish(lane, last_done);
            continue;
        }
        /* every lane busy: nothing can be submitted before one ends, and the oldest ends first */
        if (n_flights == depth) {
            last_done = finish(oldest_lane(), last_done);
            continue;
        }
        /* a lane is free: wake for a READY slab, or when a lane should have ended */
        uint64_t cap = (uint64_t)L.wait_ms * 1000000ull;
        (void)shm_wait_ns(&S.hdr->slab_seq, seq, !left ? GPU_POLL_NS : left < cap ? left : cap);
    }
    daemon_notify_stopping();
    while (n_flights) last_done = finish(oldest_lane(), last_done); /* what is submitted is finished, not redone */
    log_info("Stopping after %llu partitions (%.1f s busy)", (unsigned long long)proved, busy_ns / 1e9);
    stage_log_memory("at stop", NULL);
    B->destroy(bctx);
    shm_close(&S);
    return 0;
}
