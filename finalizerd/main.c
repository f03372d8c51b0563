/* zkpipe-finalizerd: takes PROVED slabs, randomizes the raw points into the final proof, verifies it
 * (verify = yes), writes public-<k>.json then proof-<k>.json atomically (the proof file is the
 * partition's commit point), marks the partition done and frees the slab; when a job has no
 * partition left it ends it through the spool (spool_complete: result.json, the move to done/ or
 * failed/), trying again with a back-off while that fails.
 *
 * A proof that cannot be written for want of space is not lost: its slab goes back to PROVED and is
 * finalized again (a fresh randomization) when the spool has room, with a back-off; the episode is
 * logged once and shown in `zkpipe status`. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/circuits.h"
#include "common/daemon.h"
#include "common/log.h"
#include "spool/spool.h"
#include "common/stage.h"
#include "config/config.h"
#include "base/cleanup.h"
#include "base/file.h"
#include "base/testpoint.h"
#include "shm/shm.h"
#include "shm/slab.h"
#include "zk/groth16.h"
#include "zk/verify.h"

static cfg_t cfg;
static shm_t S;
static stage_loop_t L;
static uint64_t finalized;

/* The disk-full episode: slabs this finalizer holds back (PROVED) until the spool has space. */
static struct {
    bool *waiting; /* by slab index */
    uint32_t n;
    uint64_t since_ns, retry_ns, backoff_ms, written_since;
} disk;
/* Jobs whose end could not be written (no space, a failed rename): not retried before this, and
 * the failure is logged once. By job slot. */
static uint64_t *end_retry_ns;
static bool *end_logged;

static bool is_space_error(int r) { return r == -ENOSPC || r == -EDQUOT; }

static void disk_backoff(void) {
    disk.backoff_ms = disk.backoff_ms ? (disk.backoff_ms * 2 > 5000 ? 5000 : disk.backoff_ms * 2) : 100;
    disk.retry_ns = daemon_now_ns() + disk.backoff_ms * 1000000ull;
}

/* The proof of the partition in slab could not be written for want of space: hold it. */
static void disk_hold(uint32_t slab, const char *job_id, uint32_t part, int r) {
    if (!disk.n && !disk.since_ns) {
        disk.since_ns = daemon_now_ns();
        disk.written_since = 0;
        shm_count(&S, CNT_DISK_FULL, 1);
        log_msg(LOG_WARNING, &(log_ctx_t){.job = job_id, .part = (int)part, .slab = (int)slab}, NULL,
                "The spool %s is full (%s): proofs are held in their slabs and written when space returns", cfg.spool,
                strerror(-r));
    }
    if (!disk.waiting[slab]) {
        disk.waiting[slab] = true;
        disk.n++;
        shm_disk_wait(&S, 1);
    }
    disk_backoff();
}

/* The write went through: the slab is no longer held; the episode ends with the last one. */
static void disk_release(uint32_t slab) {
    if (disk.waiting[slab]) {
        disk.waiting[slab] = false;
        disk.n--;
        shm_disk_wait(&S, -1);
    }
    if (disk.since_ns) disk.written_since++;
    if (disk.since_ns && !disk.n) {
        log_info("The spool %s has space again after %.1f s; the held proofs are written", cfg.spool,
                 (daemon_now_ns() - disk.since_ns) / 1e9);
        disk.since_ns = 0;
        disk.backoff_ms = 0;
        disk.retry_ns = 0;
    }
}

/* Another finalizer may have written a slab this one held: it is no longer ours to count. */
static void disk_recheck(void) {
    for (uint32_t i = 0; disk.n && i < S.hdr->n_slabs; i++)
        if (disk.waiting[i] && shm_slab_state(&S, i) != SLAB_PROVED) disk_release(i);
}

static double ms(uint64_t ns) { return ns / 1e6; }

static void close_dirfd(int *fd) {
    if (*fd >= 0) close(*fd);
}

/* Under the lock: result.json, the rename of the job directory, then the terminal state. */
static void complete_job(uint32_t slot) {
    shm_job_t *J = &S.jobs[slot];
    if (daemon_now_ns() < end_retry_ns[slot]) return;
    shm_lock(&S);
    uint32_t final = shm_job_outcome(&S, slot);
    if (!final) {
        shm_unlock(&S);
        return;
    }
    const char *status = final == JOB_DONE ? "done" : final == JOB_CANCELLED ? "cancelled" : "failed";
    _cleanup_free_ spool_part_result_t *parts = calloc(J->n_parts, sizeof *parts);
    if (!parts) {
        shm_unlock(&S);
        return;
    }
    for (uint32_t k = 0; k < J->n_parts; k++) {
        shm_part_t *P = &J->parts[k];
        uint32_t ps = shm_part_state(P);
        uint64_t claim = atomic_load_explicit(&P->t_claim_ns, memory_order_relaxed);
        uint64_t ready = atomic_load_explicit(&P->t_ready_ns, memory_order_relaxed);
        uint64_t pstart = atomic_load_explicit(&P->t_prove_start_ns, memory_order_relaxed);
        parts[k] = (spool_part_result_t){
            .status = shm_part_state_name(ps),
            .queue_ms = claim ? ms(claim - J->registered_ns) : 0.0,
            .synth_ms = ms(atomic_load_explicit(&P->synth_ns, memory_order_relaxed)),
            .ready_wait_ms = pstart && ready && pstart > ready ? ms(pstart - ready) : 0.0,
            .gpu_ms = ms(atomic_load_explicit(&P->gpu_ns, memory_order_relaxed)),
            .finalize_ms = ms(atomic_load_explicit(&P->fin_ns, memory_order_relaxed)),
            .synth_count = atomic_load_explicit(&P->synth_count, memory_order_relaxed),
            .prove_count = atomic_load_explicit(&P->prove_count, memory_order_relaxed),
            .gpu_lost_count = atomic_load_explicit(&P->lost_count, memory_order_relaxed),
            .t_ready_ns = ready,
            .t_prove_start_ns = pstart,
            .t_done_ns = atomic_load_explicit(&P->t_done_ns, memory_order_relaxed),
            .reused = ps == PART_DONE && !claim,
        };
    }
    uint64_t now_rt = shm_realtime_ns();
    spool_result_t res = {
        .job = J->id,
        .status = status,
        .circuit = J->circuit,
        .error = shm_job_error(J),
        .prio = (int)J->prio,
        .submitted_ns = J->submit_ns,
        .total_ms =
            J->submit_ns && now_rt > J->submit_ns ? ms(now_rt - J->submit_ns) : ms(daemon_now_ns() - J->registered_ns),
        .n_parts = J->n_parts,
        .parts = parts,
    };
    /* the spool's end (result.json, the rename); repeatable: a directory already moved is success */
    char why[1600];
    int r = spool_complete(cfg.spool, &res, why, sizeof why);
    if (r < 0) {
        end_retry_ns[slot] = daemon_now_ns() + (is_space_error(r) ? 500000000ull : 5000000000ull);
        if (!end_logged[slot])
            log_msg(LOG_ERR, &(log_ctx_t){.job = J->id, .part = -1, .slab = -1}, NULL,
                    "Failed to end job %s (%s); trying again until it works", J->id, why);
        end_logged[slot] = true;
        shm_unlock(&S);
        return;
    }
    shm_job_end(&S, slot, final);
    end_logged[slot] = false;
    end_retry_ns[slot] = 0;
    shm_unlock(&S);
    const char *err = shm_job_error(J);
    log_msg(final == JOB_DONE ? LOG_INFO : LOG_ERR, &(log_ctx_t){.job = J->id, .part = -1, .slab = -1}, NULL,
            "Job %s %s (%u partitions)%s%s", J->id, status, J->n_parts, final == JOB_DONE ? "" : ": ",
            final == JOB_DONE ? "" : err);
}

static void complete_ready_jobs(void) {
    for (uint32_t i = 0; i < S.hdr->n_jobs; i++)
        if (shm_job_outcome(&S, i)) complete_job(i);
}

/* Gives a FINALIZING slab up (a proof held for space is no longer held). */
static void give_up(uint32_t slab, uint32_t job, uint32_t part, const char *reason) {
    disk_release(slab);
    stage_give_up(&S, slab, SLAB_FINALIZING, job, part, reason);
}

/* Whether the key file has a point that is not valid (named in e), read from a mapping of the file:
 * the diagnosis of a proof that does not verify. */
static bool key_has_bad_point(const char *path, zk_err_t *e) {
    zk_zkey_t z;
    zk_err_t oe = {{0}};
    if (zk_zkey_open_flags(&z, path, ZK_ZKEY_LAZY, &oe) < 0) return false;
    zk_zkey_hold_all(&z);
    bool bad = zk_zkey_check_points(&z, path, false, e) < 0;
    zk_zkey_close(&z);
    return bad;
}

static void finalize(uint32_t slab) {
    uint64_t t0 = daemon_now_ns();
    shm_slab_t *d = &S.slabs[slab];
    shm_slab_hdr_t *h = shm_slab_header(&S, slab);
    uint32_t job = atomic_load_explicit(&d->job, memory_order_relaxed);
    uint32_t part = atomic_load_explicit(&d->part, memory_order_relaxed);
    shm_job_t *J = &S.jobs[job];
    if (shm_slab_stale(&S, slab)) {
        give_up(slab, job, part, NULL);
        return;
    }
    stage_tick(&L, slab);
    log_ctx_t lc = {.job = h->job_id, .part = (int)part, .slab = (int)slab};
    shm_pass_t ps = shm_pass(job, part, slab);
    shm_part_t *P = &J->parts[part];
    atomic_store_explicit(&P->t_fin_start_ns, t0, memory_order_relaxed);
    char dir[1400], why[900];
    spool_path(dir, sizeof dir, cfg.spool, SPOOL_ACTIVE, J->id);
    __attribute__((cleanup(close_dirfd))) int dfd = spool_open_dir(dir);
    if (dfd < 0) {
        snprintf(why, sizeof why, "cannot open the job directory %s: %s", dir, strerror(-dfd));
        give_up(slab, job, part, why);
        return;
    }
    stage_circuit_t *c = circuits_get(J->circuit, true, why, sizeof why);
    if (!c) {
        give_up(slab, job, part, why);
        return;
    }
    const uint8_t *values = shm_slab_data(&S, slab) + h->values_off;
    char un[SPOOL_FILE_NAME_MAX], pn[SPOOL_FILE_NAME_MAX];
    spool_file_name(un, SPOOL_F_PUBLIC, part);
    spool_file_name(pn, SPOOL_F_PROOF, part);
    /* A proof already on disk (a finalizer died between its rename and recording it) is kept only if
     * it verifies against this partition's public signals and its public file is theirs; otherwise
     * the raw result, still here, is finalized and written again. */
    uint64_t t_check = daemon_now_ns();
    if (c->has_vk && fstatat(dfd, pn, &(struct stat){0}, AT_SYMLINK_NOFOLLOW) == 0 &&
        circuit_check_proof(c, dfd, part, values + 32, h->n_pub, why, sizeof why) == 0) {
        uint64_t now = daemon_now_ns();
        shm_step(&S, &ps, STEP_FIN_VERIFY, t_check, now - t_check, 1); /* the kept proof's check */
        atomic_store_explicit(&P->t_done_ns, now, memory_order_relaxed);
        disk_release(slab);
        (void)shm_part_finish(&S, slab, job, part);
        log_msg(LOG_INFO, &lc, NULL, "Partition %u of job %s: the proof committed before a restart verifies; kept", part,
                J->id);
        if (shm_job_outstanding(&S, job) == 0) complete_job(job);
        return;
    }
    uint8_t r[32], s[32];
    zk_proof_t proof;
    int rc = zk_random_rs(c->z.curve, r, s);
    if (rc == 0) rc = zk_finalize(&c->z, &h->raw, r, s, &proof);
    uint64_t t_rand = daemon_now_ns();
    shm_step(&S, &ps, STEP_FIN_RANDOMIZE, t0, t_rand - t0, 0);
    if (rc < 0) {
        snprintf(why, sizeof why, "finalization failed: %s", strerror(-rc));
        give_up(slab, job, part, why);
        return;
    }
    uint64_t t_ver = t_rand;
    if (c->has_vk) {
        zk_err_t e = {{0}};
        rc = zk_verify_proof(&c->vk, &proof, values + 32, h->n_pub, &e);
        t_ver = daemon_now_ns();
        shm_step(&S, &ps, STEP_FIN_VERIFY, t_rand, t_ver - t_rand, rc == 0);
        if (rc < 0) {
            shm_count(&S, CNT_VERIFY_FAILED, 1);
            /* a corrupt key is the likely cause: name its point when it is (this stage holds no
             * points: the file is mapped for the check) */
            zk_err_t ke = {{0}};
            if (key_has_bad_point(c->cfg->zkey, &ke))
                snprintf(why, sizeof why, "the proof of partition %u does not verify: %s", part, ke.msg);
            else
                snprintf(why, sizeof why, "the proof of partition %u does not verify against %s: %s", part,
                         c->cfg->zkey, e.msg);
            give_up(slab, job, part, why);
            return;
        }
    }
    _cleanup_free_ char *pj = NULL;
    _cleanup_free_ char *uj = NULL;
    rc = zk_proof_json(c->z.curve, &proof, &pj);
    if (rc == 0) rc = zk_public_json(values, h->n_pub, &uj);
    /* public before proof, each durable before it is renamed; one fsync of the folder for both */
    if (rc == 0)
        rc = file_write_atomic_files_at(dfd, (file_atomic_t[]){{un, uj, strlen(uj)}, {pn, pj, strlen(pj)}}, 2,
                                        "finalize", (int)part);
    shm_step(&S, &ps, STEP_FIN_WRITE, t_ver, daemon_now_ns() - t_ver, 0);
    if (is_space_error(rc)) {
        disk_hold(slab, J->id, part, rc);
        /* back to PROVED: nobody else owns it meanwhile, and a restart finds it there */
        (void)shm_slab_move(&S, slab, SLAB_FINALIZING, SLAB_PROVED);
        return;
    }
    if (rc < 0) {
        snprintf(why, sizeof why, "cannot write %s in %s: %s", pn, dir, strerror(-rc));
        give_up(slab, job, part, why);
        return;
    }
    uint64_t now = daemon_now_ns();
    atomic_store_explicit(&P->t_done_ns, now, memory_order_relaxed);
    disk_release(slab);
    /* counted before the partition is finished: another finalizer may end the job right after */
    finalized++;
    shm_count(&S, CNT_FINALIZED, 1);
    shm_count(&S, CNT_FIN_BUSY_NS, now - t0);
    atomic_fetch_add_explicit(&S.procs[S.self].busy_ns, now - t0, memory_order_relaxed);
    if (shm_part_finish(&S, slab, job, part) < 0)
        log_msg(LOG_WARNING, &lc, NULL, "Partition %u of job %s was taken from us while it was finalized", part,
                J->id);
    test_point("finalize.handed_on", (int)part);
    stage_log_pass(LOG_DEBUG, &lc, &ps, "Finalized partition %u of job %s in %.1f ms", part, J->id, ms(now - t0));
    if (shm_job_outstanding(&S, job) == 0) complete_job(job);
    stage_tick(&L, SHM_NONE);
}

static void status_line(char *buf, size_t len) {
    if (disk.n)
        snprintf(buf, len, "%llu partitions finalized; %u held until the spool has space", (unsigned long long)finalized,
                 disk.n);
    else
        snprintf(buf, len, "%llu partitions finalized", (unsigned long long)finalized);
}

int main(int argc, char **argv) {
    daemon_args_t args;
    int ex;
    if (!stage_init(argc, argv, "zkpipe-finalizerd",
                    "The last stage: turns PROVED slabs into proofs (randomized, verified when [finalizer] verify\n"
                    "= yes), writes public-<k>.json and proof-<k>.json atomically and ends jobs in done/ or failed/.\n"
                    "When the spool is full, proofs wait in their slabs until there is space again.",
                    false, true, &args, &cfg, &ex))
        return ex;
    if (!stage_attach(&cfg, &S, ROLE_FINALIZERD, (uint32_t)args.instance)) return 1;
    disk.waiting = calloc(S.hdr->n_slabs, sizeof *disk.waiting);
    end_retry_ns = calloc(S.hdr->n_jobs, sizeof *end_retry_ns);
    end_logged = calloc(S.hdr->n_jobs, sizeof *end_logged);
    if (!disk.waiting || !end_retry_ns || !end_logged) {
        log_err("Out of memory");
        return 1;
    }
    circuits_init(&cfg, cfg.verify ? CIRCUIT_VK : 0);
    circuits_preload();
    int reclaimed = shm_reclaim(&S);
    stage_loop_init(&L, &S, status_line);
    daemon_notify_ready("attached; waiting for PROVED slabs");
    log_info("Attached to %s, spool %s, verify = %s; reclaimed %d slabs", cfg.segment, cfg.spool,
             cfg.verify ? "yes" : "no", reclaimed);
    stage_log_memory("after loading the keys", NULL);
    while (!daemon_stop) {
        stage_tick(&L, SHM_NONE);
        uint32_t seq = atomic_load_explicit(&S.hdr->slab_seq, memory_order_acquire);
        uint32_t slab;
        bool backing_off = disk.retry_ns && daemon_now_ns() < disk.retry_ns;
        if (disk.n && !backing_off) disk_recheck();
        if (!backing_off && shm_slab_pick(&S, SLAB_PROVED, SLAB_FINALIZING, &slab) == 0) {
            finalize(slab);
            continue;
        }
        complete_ready_jobs();
        /* job failures and cancellations bump slab_seq too; PROVED slabs bump it */
        int cap = 200;
        if (backing_off) {
            uint64_t left = (disk.retry_ns - daemon_now_ns()) / 1000000ull + 1;
            cap = left < 200 ? (int)left : 200;
            (void)stage_wait(&L, &S.hdr->job_seq, atomic_load_explicit(&S.hdr->job_seq, memory_order_acquire), cap);
            continue;
        }
        (void)stage_wait(&L, &S.hdr->slab_seq, seq, cap);
    }
    daemon_notify_stopping();
    log_info("Stopping after %llu partitions", (unsigned long long)finalized);
    stage_log_memory("at stop", NULL);
    shm_close(&S);
    return 0;
}
