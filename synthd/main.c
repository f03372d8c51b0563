/* zkpipe-synthd: takes jobs from spool/incoming, claims partitions in priority order, reads each
 * witness with io_uring straight into a FREE slab, checks it, evaluates a, b, c there, publishes the
 * slab READY and trims its own heap. The slab count is the memory budget: with no FREE slab it
 * waits on a futex. */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/daemon.h"
#include "common/stage.h"
#include "common/log.h"
#include "common/spool.h"
#include "common/uring.h"
#include "config/config.h"
#include "shm/shm.h"
#include "zk/r1cs.h"
#include "zk/wtns.h"
#include "zk/zkey.h"
#ifdef ZKPIPE_WITGEN
#include "witgen/witgen.h"
#endif

#define WTNS_PAD 52 /* a circom .wtns has its values at byte 76: 52 + 76 = 128 keeps them aligned */

struct circuit {
    bool opened;
    int err;
    char errmsg[600];
    zk_zkey_t z;
    bool has_r1cs;
    zk_r1cs_t r;
#ifdef ZKPIPE_WITGEN
    witgen_t *gen; /* the circuit's wasm generator, loaded once (docs/witgen.md) */
#endif
};

static cfg_t cfg;
static shm_t S;
static uring_reader_t *UR;
static struct circuit circuits[CFG_MAX_CIRCUITS];
static uint64_t synth_busy_ns, synth_count;

#ifdef ZKPIPE_WITGEN
/* The circuit's witness generator (wasm or witness_cmd) as witgen sees it. */
static witgen_source_t witgen_src(const cfg_circuit_t *ci) {
    return (witgen_source_t){ci->wasm, ci->witness_cmd, ci->witness_timeout, ci->witness_memory, cfg.cache};
}

static uint32_t witgen_slab = SHM_NONE, witgen_part;
static void witgen_tick(void *ctx) {
    (void)ctx;
    shm_heartbeat(&S, witgen_slab);
    daemon_notify_watchdog();
    daemon_test_point("synth.witgen_tick", (int)witgen_part); /* while a build or a witness_cmd runs */
}

static void witgen_log_line(void *ctx, const char *line) {
    (void)ctx;
    log_msg(LOG_DEBUG, NULL, NULL, "circuit log: %s", line);
    daemon_test_point("synth.witgen_log", (int)witgen_part); /* inside the generator's run */
}

static const witgen_opts_t witgen_opts = {.tick = witgen_tick, .log_line = witgen_log_line};

/* Loads a wasm generator once per circuit (building it into the cache on first use, and saying so);
 * a wasm whose prime is not the zkey's curve is refused here. */
static int witgen_load(const char *name, const cfg_circuit_t *ci, const zk_zkey_t *z, witgen_t **g, zk_err_t *e) {
    witgen_source_t src = witgen_src(ci);
    bool built = false;
    uint64_t t0 = daemon_now_ns();
    int r = witgen_source_open(g, &src, &witgen_opts, z, ci->zkey, &built, e);
    if (r == 0 && built)
        log_info("Built the witness generator of circuit %s from %s into %s in %.1f s", name, ci->wasm, cfg.cache,
                 (daemon_now_ns() - t0) / 1e9);
    return r;
}
#endif

static struct circuit *circuit_get(const char *name, const char **ret_err) {
    int i = cfg_circuit_index(&cfg, name);
    if (i < 0) {
        *ret_err = "circuit is not configured";
        return NULL;
    }
    struct circuit *c = &circuits[i];
    if (!c->opened) {
        zk_err_t e = {{0}};
        c->opened = true;
        c->err = zk_zkey_open(&c->z, cfg.circuits[i].zkey, &e);
        if (c->err == 0 && cfg.circuits[i].r1cs[0]) {
            c->err = zk_r1cs_open(&c->r, cfg.circuits[i].r1cs, &e);
            c->has_r1cs = c->err == 0;
            if (c->err) zk_zkey_close(&c->z);
        }
#ifdef ZKPIPE_WITGEN
        if (c->err == 0 && (c->err = witgen_load(name, &cfg.circuits[i], &c->z, &c->gen, &e)) < 0) {
            if (c->has_r1cs) zk_r1cs_close(&c->r);
            c->has_r1cs = false;
            zk_zkey_close(&c->z);
        }
#endif
        if (c->err) {
            snprintf(c->errmsg, sizeof c->errmsg, "%s", e.msg);
            log_err("Failed to open circuit %s: %s", name, e.msg);
        }
    }
    if (c->err) {
        *ret_err = c->errmsg;
        /* retry on the next job: the file may have been fixed */
        c->opened = false;
        return NULL;
    }
    return c;
}

/* Registers the job in DIR (under spool/active) unless it is already; partitions whose proof file
 * exists are marked done (full restart). */
static int register_active(const char *dir, const spool_job_t *j) {
    bool done[SHM_MAX_PARTS] = {0};
    char p[1400];
    for (uint32_t k = 0; k < j->n_parts; k++) {
        snprintf(p, sizeof p, "%s/proof-%u.json", dir, k);
        done[k] = spool_exists(p);
    }
    shm_lock(&S);
    int r;
    snprintf(p, sizeof p, "%s/job.ini", dir);
    if (!spool_exists(p))
        r = -ENOENT; /* completed and moved away meanwhile */
    else
        r = shm_job_register(&S, j->id, j->circuit, (uint32_t)j->prio, j->n_parts, j->submit_ns, done);
    shm_unlock(&S);
    return r;
}

static void fail_dir(const char *dir, const char *id, const char *reason) {
    log_msg(LOG_ERR, &(log_ctx_t){.job = id, .part = -1, .slab = -1}, NULL, "Job %s failed: %s", id, reason);
    int r = spool_fail_dir(cfg.spool, dir, id, "failed", reason);
    if (r < 0) log_err("Failed to move %s to failed/: %s", dir, strerror(-r));
}

/* Reads and checks the job.ini of a job directory; on error moves it to failed/ with the reason. */
static int load_job(const char *dir, const char *name, spool_job_t *j) {
    char err[600];
    int r = spool_read_job(dir, j, err, sizeof err);
    if (r == 0 && strcmp(j->id, name)) {
        snprintf(err, sizeof err, "job.ini: id = %s does not match the directory name %s", j->id, name);
        r = -EINVAL;
    }
    if (r == 0 && !cfg_circuit(&cfg, j->circuit)) {
        snprintf(err, sizeof err, "job.ini: circuit %s is not configured in %s", j->circuit, cfg.path);
        r = -ENOENT;
    }
    if (r < 0) {
        if (!spool_valid_id(name)) {
            /* cannot be a job id: move it aside under a valid name */
            char id[SPOOL_ID_MAX];
            spool_new_id(id);
            fail_dir(dir, id, err);
        } else {
            fail_dir(dir, name, err);
        }
    }
    return r;
}

/* Claims incoming jobs (rename into active/, the commit point) and registers them. */
static void intake(void) {
    char in[1200], **names;
    size_t n;
    snprintf(in, sizeof in, "%s/incoming", cfg.spool);
    if (spool_list(in, &names, &n) < 0) return;
    for (size_t i = 0; i < n; i++) {
        char src[1400], dst[1400];
        snprintf(src, sizeof src, "%s/incoming/%s", cfg.spool, names[i]);
        snprintf(dst, sizeof dst, "%s/active/%s", cfg.spool, names[i]);
        if (rename(src, dst) < 0) {
            /* ENOENT: another synthd took it. Anything else (EACCES: a job directory the zkpipe user
             * cannot move) would leave the job in incoming/ forever: say so, once per job. */
            static char warned[256];
            if (errno != ENOENT && strcmp(warned, names[i])) {
                log_err("Failed to claim job %s (%s -> %s): %m; it stays in incoming/", names[i], src, dst);
                snprintf(warned, sizeof warned, "%s", names[i]);
            }
            continue;
        }
        spool_job_t j;
        if (load_job(dst, names[i], &j) < 0) continue;
        int r = register_active(dst, &j);
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
    snprintf(dir, sizeof dir, "%s/active", cfg.spool);
    if (spool_list(dir, &names, &n) < 0) return;
    for (size_t i = 0; i < n; i++) {
        int slot = shm_job_find(&S, names[i]);
        if (slot >= 0) continue; /* any record, live or terminal: the finalizer moves terminal ones */
        char jd[1400];
        snprintf(jd, sizeof jd, "%s/active/%s", cfg.spool, names[i]);
        spool_job_t j;
        if (load_job(jd, names[i], &j) < 0) continue;
        int r = register_active(jd, &j);
        if (r >= 0)
            log_msg(LOG_INFO, &(log_ctx_t){.job = j.id, .part = -1, .slab = -1}, NULL,
                    "Job %s registered again from active/", j.id);
    }
    spool_free_list(names, n);
}

static bool work_pending(void) {
    for (uint32_t i = 0; i < S.hdr->n_jobs; i++) {
        shm_job_t *j = &S.jobs[i];
        if (atomic_load_explicit(&j->state, memory_order_acquire) != JOB_ACTIVE) continue;
        for (uint32_t k = 0; k < j->n_parts; k++)
            if ((atomic_load_explicit(&j->parts[k].word, memory_order_acquire) & 0xff) == PART_PENDING) return true;
    }
    return false;
}

/* Gives the slab back and the partition: on failure the job fails with the reason. */
static void give_up(uint32_t slab, uint32_t job, uint32_t part, const char *reason) {
    if (reason)
        log_msg(LOG_ERR, &(log_ctx_t){.job = S.jobs[job].id, .part = (int)part, .slab = (int)slab}, NULL,
                "Partition %u of job %s failed: %s", part, S.jobs[job].id, reason);
    shm_part_give_up(&S, slab, SLAB_FILLING, job, part, reason);
}

/* Returns how long malloc_trim took (0: the policy did not trim). */
static uint64_t trim_heap(uint32_t job, uint32_t part, uint32_t slab) {
    if (cfg.trim == CFG_TRIM_NEVER) return 0;
    if (cfg.trim == CFG_TRIM_ABOVE) {
        struct mallinfo2 mi = mallinfo2();
        if (mi.fordblks < cfg.trim_above) return 0;
    }
    uint64_t t0 = daemon_now_ns();
    malloc_trim(0);
    uint64_t dt = daemon_now_ns() - t0;
    shm_count(&S, CNT_TRIMS, 1);
    shm_event(&S, EV_SYNTH_TRIM, job, part, slab, t0, dt, 0);
    return dt;
}

#ifdef ZKPIPE_WITGEN
static bool job_has_inputs(const char *id) {
    char dir[1300], err[300];
    snprintf(dir, sizeof dir, "%s/active/%s", cfg.spool, id);
    spool_job_t sj;
    return spool_read_job(dir, &sj, err, sizeof err) == 0 && sj.inputs;
}

/* Computes partition part's witness into the slab with the circuit's generator; on failure the
 * partition is given up with the reason. name becomes what later messages call the image. */
static int fill_from_inputs(struct circuit *c, const char *circuit, uint32_t slab, uint32_t job, uint32_t part,
                            const char *id, uint8_t *out, size_t cap, size_t *len, char *name, size_t name_cap) {
    const cfg_circuit_t *ci = cfg_circuit(&cfg, circuit);
    witgen_source_t src = witgen_src(ci);
    char dir[1300];
    snprintf(dir, sizeof dir, "%s/active/%s", cfg.spool, id);
    snprintf(name, name_cap, c->gen ? "the witness of input-%u.json" : "witness_cmd's output for input-%u.json", part);
    zk_err_t e = {{0}};
    witgen_slab = slab;
    witgen_part = part;
    int r = witgen_partition(c->gen, &src, &witgen_opts, dir, part, out, cap, len, &e);
    witgen_slab = SHM_NONE;
    if (r < 0) give_up(slab, job, part, e.msg);
    return r;
}
#endif

static void fill(uint32_t slab, uint32_t job, uint32_t part) {
    shm_job_t *J = &S.jobs[job];
    uint64_t t_start = daemon_now_ns();
    char id[SHM_ID_MAX], wpath[1400], name[64];
    snprintf(id, sizeof id, "%s", J->id);
    log_ctx_t lc = {.job = id, .part = (int)part, .slab = (int)slab};
    shm_heartbeat(&S, slab);
    const char *cerr = NULL;
    struct circuit *c = circuit_get(J->circuit, &cerr);
    if (!c) {
        char why[800];
        snprintf(why, sizeof why, "circuit %s: %s", J->circuit, cerr);
        give_up(slab, job, part, why);
        return;
    }
    uint8_t *base = shm_slab_data(&S, slab);
    shm_slab_hdr_t *h = (shm_slab_hdr_t *)base;
    uint64_t need = cfg_slab_bytes_needed(c->z.n_vars, c->z.domain_size);
    if (need > S.hdr->slab_size) {
        char why[300];
        snprintf(why, sizeof why, "circuit %s needs %llu bytes per slab, the segment's slabs have %llu", J->circuit,
                 (unsigned long long)need, (unsigned long long)S.hdr->slab_size);
        give_up(slab, job, part, why);
        return;
    }
    uint64_t abc_each = ((uint64_t)c->z.domain_size * 32 + 4095) / 4096 * 4096;
    uint64_t a_off = need - 3 * abc_each;
    uint64_t w_off = CFG_SLAB_HEADER + WTNS_PAD, w_cap = a_off - w_off;

    /* 1. read the witness file straight into the slab, or compute it there from the inputs */
    snprintf(name, sizeof name, "witness-%u.wtns", part);
    snprintf(wpath, sizeof wpath, "%s/active/%s/%s", cfg.spool, id, name);
    size_t len = 0;
    int r;
#ifdef ZKPIPE_WITGEN
    if (job_has_inputs(id)) {
        r = fill_from_inputs(c, J->circuit, slab, job, part, id, base + w_off, w_cap, &len, name, sizeof name);
        if (r < 0) {
            trim_heap(job, part, slab);
            return;
        }
    } else
#endif
        r = uring_read_file(UR, wpath, base + w_off, w_cap, &len);
    uint64_t t_read = daemon_now_ns();
    shm_event(&S, EV_SYNTH_READ, job, part, slab, t_start, t_read - t_start, len);
    if (r == -EFBIG) {
        char why[400];
        snprintf(
            why, sizeof why,
            "%s: %zu bytes, more than a witness of circuit %s (nVars %u) can be: the witness is for another circuit",
            name, len, J->circuit, c->z.n_vars);
        give_up(slab, job, part, why);
        return;
    }
    if (r < 0) {
        char why[400];
        snprintf(why, sizeof why, "%s: cannot read: %s", name, strerror(-r));
        give_up(slab, job, part, why);
        return;
    }
    /* 2. check it: format, curve and size against the key, constraints against the .r1cs */
    zk_wtns_t w;
    zk_err_t e = {{0}};
    r = zk_wtns_parse(&w, name, base + w_off, len, &e);
    if (r == 0) r = zk_wtns_check_zkey(&w, name, &c->z, cfg.circuits[cfg_circuit_index(&cfg, J->circuit)].zkey, &e);
    if (r < 0) {
        zk_wtns_free(&w);
        give_up(slab, job, part, e.msg);
        return;
    }
    const uint8_t *values = w.values;
    uint64_t values_off;
    if (values >= base + w_off && values + (size_t)w.n * 32 <= base + a_off) {
        values_off = (uint64_t)(values - base);
    } else { /* the parser had to copy (unusual layout): put the values in the slab */
        values_off = CFG_SLAB_HEADER;
        memmove(base + values_off, values, (size_t)w.n * 32);
    }
    zk_wtns_free(&w);
    values = base + values_off;
    if (c->has_r1cs) {
        int64_t bad = -1;
        const char *rname = cfg.circuits[cfg_circuit_index(&cfg, J->circuit)].r1cs;
        r = zk_r1cs_check(&c->r, rname, values, c->z.n_vars, &bad, &e);
        if (r < 0) {
            char why[800];
            snprintf(why, sizeof why, "%s: %s", name, e.msg);
            give_up(slab, job, part, why);
            return;
        }
    }
    uint64_t t_check = daemon_now_ns();
    shm_event(&S, EV_SYNTH_CHECK, job, part, slab, t_read, t_check - t_read, 0);
    daemon_test_point("synth.mid_fill", (int)part);
    if (atomic_load(&J->state) != JOB_ACTIVE) { /* cancelled or failed meanwhile */
        give_up(slab, job, part, NULL);
        return;
    }
    /* 3. evaluate a, b, c into the slab */
    uint8_t *a = base + a_off, *b = a + abc_each, *cc = b + abc_each;
    r = zk_synth(&c->z, values, a, b, cc, cfg.synth_threads ? (int)cfg.synth_threads : 0);
    uint64_t t_eval = daemon_now_ns();
    if (r < 0) {
        char why[200];
        snprintf(why, sizeof why, "synthesis failed: %s", strerror(-r));
        give_up(slab, job, part, why);
        return;
    }
    shm_event(&S, EV_SYNTH_EVAL, job, part, slab, t_check, t_eval - t_check, 0);
    daemon_test_point("synth.before_publish", (int)part);
    memset(h, 0, sizeof *h);
    h->job = job;
    h->job_gen = atomic_load(&J->gen);
    h->part = part;
    h->curve_id = c->z.curve->id;
    snprintf(h->job_id, sizeof h->job_id, "%s", id);
    snprintf(h->circuit, sizeof h->circuit, "%s", J->circuit);
    h->n_vars = c->z.n_vars;
    h->n_pub = c->z.n_pub;
    h->domain_size = c->z.domain_size;
    h->wtns_off = w_off;
    h->wtns_len = len;
    h->values_off = values_off;
    h->a_off = a_off;
    h->b_off = a_off + abc_each;
    h->c_off = a_off + 2 * abc_each;
    h->t_read_ns = t_read - t_start;
    h->t_check_ns = t_check - t_read;
    h->t_eval_ns = t_eval - t_check;
    uint64_t now = daemon_now_ns();
    shm_part_t *P = &J->parts[part];
    atomic_store(&P->synth_ns, now - t_start);
    atomic_store(&P->t_ready_ns, now);
    atomic_store(&S.slabs[slab].t_ready_ns, now);
    if (shm_slab_move(&S, slab, SLAB_FILLING, SLAB_READY) < 0) {
        log_msg(LOG_ERR, &lc, NULL, "Slab %u was taken from us while filling (reclaimed as dead?)", slab);
        return;
    }
    shm_count(&S, CNT_SYNTHESIZED, 1);
    shm_count(&S, CNT_SYNTH_BUSY_NS, now - t_start);
    atomic_fetch_add(&S.procs[S.self].busy_ns, now - t_start);
    synth_busy_ns += now - t_start;
    synth_count++;
    uint64_t trim_ns = trim_heap(job, part, slab);
    char f1[64], f2[64], f3[64], f4[64];
    snprintf(f1, sizeof f1, "ZKPIPE_READ_NS=%llu", (unsigned long long)(t_read - t_start));
    snprintf(f2, sizeof f2, "ZKPIPE_CHECK_NS=%llu", (unsigned long long)(t_check - t_read));
    snprintf(f3, sizeof f3, "ZKPIPE_EVAL_NS=%llu", (unsigned long long)(t_eval - t_check));
    snprintf(f4, sizeof f4, "ZKPIPE_TRIM_NS=%llu", (unsigned long long)trim_ns);
    const char *fields[] = {f1, f2, f3, f4, NULL};
    log_msg(LOG_DEBUG, &lc, fields, "Synthesized partition %u of job %s in %.1f ms (trim %.2f ms)", part, id,
            (now - t_start) / 1e6, trim_ns / 1e6);
    shm_heartbeat(&S, SHM_NONE);
}

int main(int argc, char **argv) {
    daemon_args_t args;
    int ex;
    if (!stage_init(argc, argv, "zkpipe-synthd",
                    "The synthesis stage: takes jobs from the spool, reads each witness into a FREE slab of the\n"
                    "shared segment, checks it, evaluates a, b, c there and marks the slab READY for gpud.",
                    false, true, &args, &cfg, &ex))
        return ex;
    if (!stage_attach(&cfg, &S, ROLE_SYNTHD, (uint32_t)args.instance)) return 1;
    int r = uring_reader_new(&UR, 8);
    if (r < 0) {
        log_err("Failed to set up io_uring: %s", strerror(-r));
        return 1;
    }
    int reclaimed = shm_reclaim(&S);
    rescan_active();
    intake();
    int wait_ms = daemon_wait_ms(1000);
    daemon_notify_ready("attached; waiting for work");
    log_info("Attached to %s (%u slabs of %llu MiB, %s), spool %s; reclaimed %d slabs", cfg.segment, S.hdr->n_slabs,
             (unsigned long long)(S.hdr->slab_size >> 20), S.created ? "created" : "existing", cfg.spool, reclaimed);
    uint32_t last_intake_seq = atomic_load(&S.hdr->job_seq);
    uint64_t last_scan = daemon_now_ns(), last_status = 0;
    while (!daemon_stop) {
        shm_heartbeat(&S, SHM_NONE);
        daemon_notify_watchdog();
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
        if (now - last_status > 2000000000ull) {
            last_status = now;
            daemon_notify_status("%llu partitions synthesized, %.1f ms average", (unsigned long long)synth_count,
                                 synth_count ? synth_busy_ns / 1e6 / synth_count : 0.0);
        }
        if (!work_pending()) {
            if (shm_wait(&S.hdr->job_seq, jseq, wait_ms) == -ETIMEDOUT) shm_reclaim(&S);
            continue;
        }
        uint32_t slab, job, part;
        bool reserved = false;
        r = shm_slab_take_free(&S, cfg.reserve_critical, shm_critical_pending(&S), &slab, &reserved);
        if (r == -EAGAIN) {
            /* backpressure: every slab is in use */
            uint64_t t0 = daemon_now_ns();
            if (shm_wait(&S.hdr->slab_seq, sseq, wait_ms) == -ETIMEDOUT) shm_reclaim(&S);
            shm_event(&S, EV_SYNTH_WAIT_SLAB, UINT32_MAX, 0, SHM_NONE, t0, daemon_now_ns() - t0, 0);
            continue;
        }
        if (shm_part_claim(&S, slab, reserved, &job, &part) < 0) {
            (void)shm_slab_move(&S, slab, SLAB_FILLING, SLAB_FREE);
            continue;
        }
        fill(slab, job, part);
    }
    daemon_notify_stopping();
    log_info("Stopping after %llu partitions", (unsigned long long)synth_count);
    uring_reader_free(UR);
    shm_close(&S);
    return 0;
}
