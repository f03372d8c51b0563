/* zkpipe-finalizerd: takes PROVED slabs, randomizes the raw points into the final proof, verifies it
 * (verify = yes), writes public-<k>.json then proof-<k>.json atomically (the proof file is the
 * partition's commit point), marks the partition done and frees the slab; when a job has no
 * partition left it writes result.json and moves the job directory to done/ or failed/. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/daemon.h"
#include "common/stage.h"
#include "common/log.h"
#include "common/spool.h"
#include "config/config.h"
#include "shm/shm.h"
#include "zk/groth16.h"
#include "zk/verify.h"
#include "zk/zkey.h"

struct circuit {
    bool opened;
    zk_zkey_t z;
    zk_vk_t vk;
    bool has_vk;
};

static cfg_t cfg;
static shm_t S;
static struct circuit circuits[CFG_MAX_CIRCUITS];
static uint64_t finalized;

static int circuit_get(const char *name, struct circuit **ret, char *why, size_t whylen) {
    int i = cfg_circuit_index(&cfg, name);
    if (i < 0) return snprintf(why, whylen, "circuit %s is not configured in %s", name, cfg.path), -ENOENT;
    struct circuit *c = &circuits[i];
    if (!c->opened) {
        zk_err_t e = {{0}};
        int r = zk_zkey_open(&c->z, cfg.circuits[i].zkey, &e);
        if (r < 0) return snprintf(why, whylen, "%s", e.msg), r;
        if (cfg.verify) {
            r = zk_vk_from_zkey(&c->vk, &c->z, &e);
            if (r < 0) {
                zk_zkey_close(&c->z);
                return snprintf(why, whylen, "%s", e.msg), r;
            }
            c->has_vk = true;
        }
        c->opened = true;
    }
    *ret = c;
    return 0;
}

/* Writes data to DIR/NAME through a temporary name with fsync; the test points sit around the
 * rename, the commit point. */
static int write_commit(const char *dir, const char *name, const char *data, size_t len, int part, bool points) {
    char tmp[1400], path[1400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(tmp, sizeof tmp, "%s/.%s.tmp.%d", dir, name, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return -errno;
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) {
            int e = -errno;
            close(fd);
            unlink(tmp);
            return e;
        }
        off += (size_t)w;
    }
    if (fsync(fd) < 0) {
        int e = -errno;
        close(fd);
        unlink(tmp);
        return e;
    }
    close(fd);
    if (points) daemon_test_point("finalize.before_rename", part);
    if (rename(tmp, path) < 0) {
        int e = -errno;
        unlink(tmp);
        return e;
    }
    (void)spool_fsync_dir(dir);
    if (points) daemon_test_point("finalize.after_rename", part);
    return 0;
}

static double ms(uint64_t ns) { return ns / 1e6; }

/* Under the lock: result.json, then the rename of the job directory, then the terminal state. */
static void complete_job(uint32_t slot) {
    shm_job_t *J = &S.jobs[slot];
    shm_lock(&S);
    uint32_t st = atomic_load(&J->state);
    if (!shm_job_live(st) || shm_job_outstanding(&S, slot)) {
        shm_unlock(&S);
        return;
    }
    bool all_done = true;
    for (uint32_t k = 0; k < J->n_parts; k++)
        if ((atomic_load(&J->parts[k].word) & 0xff) != PART_DONE) all_done = false;
    const char *status = st == JOB_CANCELLING ? "cancelled" : (st == JOB_ACTIVE && all_done) ? "done" : "failed";
    uint32_t final = !strcmp(status, "done") ? JOB_DONE : !strcmp(status, "cancelled") ? JOB_CANCELLED : JOB_FAILED;
    if (st == JOB_ACTIVE && !all_done) { /* cannot happen without a FAILED/DROPPED partition; keep a reason */
        uint32_t z = 0;
        if (atomic_compare_exchange_strong(&J->err_set, &z, 1)) {
            snprintf(J->error, sizeof J->error, "some partitions were dropped");
            atomic_store(&J->err_set, 2);
        }
    }
    char src[1400], dst[1400], path[1500];
    snprintf(src, sizeof src, "%s/active/%s", cfg.spool, J->id);
    snprintf(dst, sizeof dst, "%s/%s/%s", cfg.spool, final == JOB_DONE ? "done" : "failed", J->id);
    if (spool_exists(src)) {
        /* temporary files of finalizers that died before their rename */
        DIR *dd = opendir(src);
        if (dd) {
            struct dirent *de;
            while ((de = readdir(dd)))
                if (de->d_name[0] == '.' && strstr(de->d_name, ".tmp.")) (void)unlinkat(dirfd(dd), de->d_name, 0);
            closedir(dd);
        }
        size_t cap = 4096 + (size_t)J->n_parts * 512, n = 0;
        char *buf = malloc(cap);
        if (!buf) {
            shm_unlock(&S);
            return;
        }
        char esc[SHM_ERROR_MAX * 2];
        spool_json_escape(atomic_load(&J->err_set) ? J->error : "", esc, sizeof esc);
        uint64_t now = daemon_now_ns();
        n += snprintf(buf + n, cap - n,
                      "{\n \"job\": \"%s\",\n \"status\": \"%s\",\n \"circuit\": \"%s\",\n \"priority\": \"%s\",\n"
                      " \"error\": \"%s\",\n \"submitted_ns\": %llu,\n \"total_ms\": %.3f,\n \"partitions\": [\n",
                      J->id, status, J->circuit, cfg_priority_name((int)J->prio), esc, (unsigned long long)J->submit_ns,
                      ms(now - J->registered_ns));
        for (uint32_t k = 0; k < J->n_parts; k++) {
            shm_part_t *P = &J->parts[k];
            uint32_t ps = atomic_load(&P->word) & 0xff;
            uint64_t claim = atomic_load(&P->t_claim_ns), ready = atomic_load(&P->t_ready_ns);
            uint64_t pstart = atomic_load(&P->t_prove_start_ns), done = atomic_load(&P->t_done_ns);
            n += snprintf(
                buf + n, cap - n,
                "  {\"index\": %u, \"status\": \"%s\", \"proof\": \"proof-%u.json\", \"public\": \"public-%u.json\", "
                "\"queue_ms\": %.3f, \"synth_ms\": %.3f, \"ready_wait_ms\": %.3f, \"gpu_ms\": %.3f, "
                "\"finalize_ms\": %.3f, \"synth_count\": %u, \"prove_count\": %u, \"gpu_lost_count\": %u, "
                "\"t_ready_ns\": %llu, \"t_prove_start_ns\": %llu, \"t_done_ns\": %llu, \"reused\": %s}%s\n",
                k, shm_part_state_name(ps), k, k, claim ? ms(claim - J->registered_ns) : 0.0,
                ms(atomic_load(&P->synth_ns)), pstart && ready && pstart > ready ? ms(pstart - ready) : 0.0,
                ms(atomic_load(&P->gpu_ns)), ms(atomic_load(&P->fin_ns)), atomic_load(&P->synth_count),
                atomic_load(&P->prove_count), atomic_load(&P->lost_count), (unsigned long long)ready,
                (unsigned long long)pstart, (unsigned long long)done, ps == PART_DONE && !claim ? "true" : "false",
                k + 1 < J->n_parts ? "," : "");
        }
        n += snprintf(buf + n, cap - n, " ]\n}\n");
        snprintf(path, sizeof path, "%s/result.json", src);
        int r = spool_write_atomic(path, buf, n);
        free(buf);
        if (r < 0 || rename(src, dst) < 0) {
            log_msg(LOG_ERR, &(log_ctx_t){.job = J->id, .part = -1, .slab = -1}, NULL,
                    "Failed to complete job %s (%s -> %s): %s", J->id, src, dst, strerror(r < 0 ? -r : errno));
            shm_unlock(&S);
            return;
        }
        char parent[1400];
        snprintf(parent, sizeof parent, "%s/%s", cfg.spool, final == JOB_DONE ? "done" : "failed");
        (void)spool_fsync_dir(parent);
    }
    /* else: a previous finalizer moved it and died before recording it */
    atomic_store(&J->done_ns, daemon_now_ns());
    atomic_store(&J->state, final);
    shm_unlock(&S);
    shm_count(&S, final == JOB_DONE ? CNT_JOBS_DONE : CNT_JOBS_FAILED, 1);
    shm_event(&S, EV_JOB_DONE, slot, J->n_parts, SHM_NONE, J->registered_ns, daemon_now_ns() - J->registered_ns, final);
    shm_bump(&S.hdr->job_seq);
    log_msg(final == JOB_DONE ? LOG_INFO : LOG_ERR, &(log_ctx_t){.job = J->id, .part = -1, .slab = -1}, NULL,
            "Job %s %s (%u partitions)%s%s", J->id, status, J->n_parts, final == JOB_DONE ? "" : ": ",
            final == JOB_DONE ? "" : J->error);
}

static void complete_ready_jobs(void) {
    for (uint32_t i = 0; i < S.hdr->n_jobs; i++) {
        uint32_t st = atomic_load(&S.jobs[i].state);
        if (shm_job_live(st) && shm_job_outstanding(&S, i) == 0) complete_job(i);
    }
}

static void release(uint32_t slab, uint32_t job, uint32_t part, uint32_t to, const char *reason) {
    shm_job_t *J = &S.jobs[job];
    uint64_t w = (uint64_t)PART_INFLIGHT | (uint64_t)slab << 8;
    atomic_compare_exchange_strong(&J->parts[part].word, &w, to);
    if (reason) {
        shm_count(&S, CNT_PART_FAILED, 1);
        shm_job_fail(&S, job, reason);
        log_msg(LOG_ERR, &(log_ctx_t){.job = J->id, .part = (int)part, .slab = (int)slab}, NULL,
                "Partition %u of job %s failed: %s", part, J->id, reason);
    }
    (void)shm_slab_move(&S, slab, SLAB_FINALIZING, SLAB_FREE);
    shm_bump(&S.hdr->job_seq);
}

static void finalize(uint32_t slab) {
    uint64_t t0 = daemon_now_ns();
    shm_slab_t *d = &S.slabs[slab];
    shm_slab_hdr_t *h = shm_slab_header(&S, slab);
    uint32_t job = atomic_load(&d->job), part = atomic_load(&d->part);
    shm_job_t *J = &S.jobs[job];
    if (atomic_load(&J->gen) != atomic_load(&d->job_gen) || atomic_load(&J->state) != JOB_ACTIVE) {
        release(slab, job, part, PART_DROPPED, NULL);
        return;
    }
    shm_heartbeat(&S, slab);
    log_ctx_t lc = {.job = h->job_id, .part = (int)part, .slab = (int)slab};
    shm_part_t *P = &J->parts[part];
    atomic_store(&P->t_fin_start_ns, t0);
    char dir[1400], pname[1500], why[800];
    snprintf(dir, sizeof dir, "%s/active/%s", cfg.spool, J->id);
    snprintf(pname, sizeof pname, "%s/proof-%u.json", dir, part);
    uint64_t t_rand = t0, t_ver = t0, t_write = t0;
    if (!spool_exists(pname)) {
        struct circuit *c;
        if (circuit_get(J->circuit, &c, why, sizeof why) < 0) {
            release(slab, job, part, PART_FAILED, why);
            return;
        }
        const uint8_t *values = shm_slab_data(&S, slab) + h->values_off;
        uint8_t r[32], s[32];
        zk_proof_t proof;
        int rc = zk_random_rs(c->z.curve, r, s);
        if (rc == 0) rc = zk_finalize(&c->z, &h->raw, r, s, &proof);
        t_rand = daemon_now_ns();
        shm_event(&S, EV_FIN_RANDOMIZE, job, part, slab, t0, t_rand - t0, 0);
        if (rc < 0) {
            snprintf(why, sizeof why, "finalization failed: %s", strerror(-rc));
            release(slab, job, part, PART_FAILED, why);
            return;
        }
        t_ver = t_rand;
        if (c->has_vk) {
            zk_err_t e = {{0}};
            rc = zk_verify_proof(&c->vk, &proof, values + 32, h->n_pub, &e);
            t_ver = daemon_now_ns();
            shm_event(&S, EV_FIN_VERIFY, job, part, slab, t_rand, t_ver - t_rand, rc == 0);
            if (rc < 0) {
                shm_count(&S, CNT_VERIFY_FAILED, 1);
                snprintf(why, sizeof why, "the proof of partition %u does not verify: %s", part, e.msg);
                release(slab, job, part, PART_FAILED, why);
                return;
            }
        }
        char *pj = NULL, *uj = NULL;
        rc = zk_proof_json(c->z.curve, &proof, &pj);
        if (rc == 0) rc = zk_public_json(values, h->n_pub, &uj);
        if (rc == 0) {
            char un[64], pn[64];
            snprintf(un, sizeof un, "public-%u.json", part);
            snprintf(pn, sizeof pn, "proof-%u.json", part);
            rc = write_commit(dir, un, uj, strlen(uj), (int)part, false);
            if (rc == 0) rc = write_commit(dir, pn, pj, strlen(pj), (int)part, true);
        }
        free(pj);
        free(uj);
        t_write = daemon_now_ns();
        shm_event(&S, EV_FIN_WRITE, job, part, slab, t_ver, t_write - t_ver, 0);
        if (rc < 0) {
            snprintf(why, sizeof why, "cannot write proof-%u.json in %s: %s", part, dir, strerror(-rc));
            release(slab, job, part, PART_FAILED, why);
            return;
        }
    }
    /* else: the proof was committed by a finalizer that died before recording it */
    uint64_t now = daemon_now_ns();
    atomic_store(&P->fin_ns, now - t0);
    atomic_store(&P->t_done_ns, now);
    release(slab, job, part, PART_DONE, NULL);
    finalized++;
    shm_count(&S, CNT_FINALIZED, 1);
    shm_count(&S, CNT_FIN_BUSY_NS, now - t0);
    atomic_fetch_add(&S.procs[S.self].busy_ns, now - t0);
    char f[3][64];
    snprintf(f[0], 64, "ZKPIPE_RANDOMIZE_NS=%llu", (unsigned long long)(t_rand - t0));
    snprintf(f[1], 64, "ZKPIPE_VERIFY_NS=%llu", (unsigned long long)(t_ver - t_rand));
    snprintf(f[2], 64, "ZKPIPE_WRITE_NS=%llu", (unsigned long long)(t_write - t_ver));
    const char *fields[] = {f[0], f[1], f[2], NULL};
    log_msg(LOG_DEBUG, &lc, fields, "Finalized partition %u of job %s in %.1f ms", part, J->id, ms(now - t0));
    if (shm_job_outstanding(&S, job) == 0) complete_job(job);
    shm_heartbeat(&S, SHM_NONE);
}

int main(int argc, char **argv) {
    daemon_args_t args;
    int ex;
    if (!stage_init(argc, argv, "zkpipe-finalizerd",
                    "The last stage: turns PROVED slabs into proofs (randomized, verified when [finalizer] verify\n"
                    "= yes), writes public-<k>.json and proof-<k>.json atomically and ends jobs in done/ or failed/.",
                    false, true, &args, &cfg, &ex))
        return ex;
    char err[1200];
    if (!stage_attach(&cfg, &S, ROLE_FINALIZERD, (uint32_t)args.instance)) return 1;
    for (uint32_t i = 0; i < cfg.n_circuits; i++) {
        struct circuit *c;
        if (cfg.circuits[i].preload && circuit_get(cfg.circuits[i].name, &c, err, sizeof err) < 0)
            log_err("Failed to load circuit %s: %s", cfg.circuits[i].name, err);
    }
    int reclaimed = shm_reclaim(&S);
    int wait_ms = daemon_wait_ms(1000);
    daemon_notify_ready("attached; waiting for PROVED slabs");
    log_info("Attached to %s, spool %s, verify = %s; reclaimed %d slabs", cfg.segment, cfg.spool,
             cfg.verify ? "yes" : "no", reclaimed);
    uint64_t last_status = 0;
    while (!daemon_stop) {
        shm_heartbeat(&S, SHM_NONE);
        daemon_notify_watchdog();
        uint32_t seq = atomic_load_explicit(&S.hdr->slab_seq, memory_order_acquire);
        uint32_t slab;
        if (shm_slab_pick(&S, SLAB_PROVED, SLAB_FINALIZING, &slab) == 0) {
            finalize(slab);
            continue;
        }
        complete_ready_jobs();
        uint64_t now = daemon_now_ns();
        if (now - last_status > 2000000000ull) {
            last_status = now;
            daemon_notify_status("%llu partitions finalized", (unsigned long long)finalized);
        }
        /* job failures and cancellations bump job_seq; PROVED slabs bump slab_seq */
        if (shm_wait(&S.hdr->slab_seq, seq, wait_ms < 200 ? wait_ms : 200) == -ETIMEDOUT) shm_reclaim(&S);
    }
    daemon_notify_stopping();
    log_info("Stopping after %llu partitions", (unsigned long long)finalized);
    shm_close(&S);
    return 0;
}
