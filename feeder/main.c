/* zkpipe-feeder: one per box. Claims jobs from the fleet's PostgreSQL queue ([source postgres]) for
 * the circuits this box serves, as many as the box can start soon, writes each into the local
 * spool through the one submission path (spool_submit), renews its leases, and writes every
 * finished job back fenced by its lease generation, then retires the local copy (docs/fleet.md).
 *
 * Invariants:
 * - SPOOL/fleet/ID (the job's lease generation) is written before the job enters the spool and
 *   removed only after the job's local copy is retired: a restarted feeder knows every local copy
 *   that is a fleet job, and with which generation it was claimed.
 * - A local copy is retired only after its write-back committed or the fence refused it.
 * - The segment is read only through shm/'s named functions (slab and partition counts). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "spool/spool.h"
#include "common/stage.h"
#include "base/cleanup.h"
#include "base/file.h"
#include "fleet/fleet.h"
#include "shm/slab.h"
#include "zk/zkey.h"

#define MAX_HELD 1024
#define WRITE_BACK_RETRY_S 60u

static const char *ABOUT =
    "Feeds this box from the fleet's PostgreSQL queue ([source postgres] in the ini): claims jobs\n"
    "for the configured circuits, proves them through the local spool and writes the results back.";

typedef struct held {
    char id[FLEET_ID_MAX];
    int64_t gen;
    bool lost;         /* the renewal found another generation: the result will be refused */
    uint64_t retry_ns; /* the database refused its write-back and its failure: not before then */
} held_t;

static cfg_t cfg;
static shm_t seg;
static char box[CFG_NAME_MAX + 72];
static held_t held[MAX_HELD];
static uint32_t n_held;
static uint64_t caps[CFG_MAX_CIRCUITS]; /* the largest witness of each circuit, 0 = not served */
static const char *served[CFG_MAX_CIRCUITS];
static uint32_t n_served;
static char served_list[CFG_MAX_CIRCUITS * (CFG_NAME_MAX + 1)];
static uint64_t n_claimed, n_written, n_fenced;
static uint64_t claim_after_ns; /* a job given back for want of space: the next claim waits a second */

static void record_path(char *p, size_t n, const char *id) { snprintf(p, n, "%s/fleet/%s", cfg.spool, id); }

static int record_write(const char *id, int64_t gen) {
    char p[1400], text[32];
    record_path(p, sizeof p, id);
    int n = snprintf(text, sizeof text, "%lld\n", (long long)gen);
    return file_write_atomic(p, text, (size_t)n);
}

static held_t *find_held(const char *id) {
    for (uint32_t i = 0; i < n_held; i++)
        if (!strcmp(held[i].id, id)) return &held[i];
    return NULL;
}

static void drop_held(held_t *h) {
    char p[1400];
    record_path(p, sizeof p, h->id);
    (void)unlink(p);
    *h = held[--n_held];
}

/* The records of a previous run: every local fleet job and its generation. A record is a regular
 * file named by a spool id, opened without following a link or blocking (anyone of the spool's
 * group could plant a FIFO there); anything else is left alone with one line. */
static void load_records(void) {
    char dir[1400];
    snprintf(dir, sizeof dir, "%s/fleet", cfg.spool);
    _cleanup_close_ int dfd = spool_open_dir(dir);
    char **names;
    size_t n;
    if (dfd < 0 || spool_list(dir, &names, &n) < 0) return;
    for (size_t i = 0; i < n && n_held < MAX_HELD; i++) {
        char buf[32] = {0}, why[600];
        if (!spool_valid_id(names[i])) {
            log_warn("%s/%s: not a job id; ignored", dir, names[i]);
            continue;
        }
        struct stat st;
        _cleanup_close_ int fd = file_open_regular(dfd, names[i], FILE_NOFOLLOW, &st, why, sizeof why);
        if (fd < 0) {
            log_warn("%s/%s; not a record, ignored", dir, why);
            continue;
        }
        if (read(fd, buf, sizeof buf - 1) <= 0) { /* a crash while it was written: no job behind it */
            (void)unlinkat(dfd, names[i], 0);
            continue;
        }
        held_t *h = &held[n_held++];
        snprintf(h->id, sizeof h->id, "%s", names[i]);
        h->gen = strtoll(buf, NULL, 10);
        h->lost = false;
        h->retry_ns = 0;
    }
    spool_free_list(names, n);
    if (n_held) log_info("%u fleet jobs from the previous run are in the spool", n_held);
}

/* Partitions this box can start soon: free slabs plus one slab ring of look-ahead, less what waits
 * locally already (pending partitions in the segment, jobs not yet taken in from incoming/). */
static int64_t room(void) {
    uint32_t counts[SLAB_NSTATES];
    shm_slab_counts(&seg, counts);
    int64_t r = (int64_t)counts[SLAB_FREE] + seg.hdr->n_slabs;
    for (uint32_t i = 0; i < seg.hdr->n_jobs; i++) {
        if (!shm_job_live(shm_job_state(&seg.jobs[i]))) continue;
        uint32_t pc[PART_NSTATES];
        shm_part_counts(&seg, i, pc);
        r -= pc[PART_PENDING];
    }
    uint32_t unfinished = 0;
    for (uint32_t i = 0; i < n_held; i++) {
        spool_place_t pl = spool_job_place(cfg.spool, held[i].id);
        if (pl == SPOOL_INCOMING) r--;
        if (pl == SPOOL_INCOMING || pl == SPOOL_ACTIVE) unfinished++;
    }
    /* the job table must keep room for local submissions and restarts */
    if (unfinished >= seg.hdr->n_jobs / 2) return 0;
    if (r > (int64_t)(seg.hdr->n_jobs / 2 - unfinished)) r = seg.hdr->n_jobs / 2 - unfinished;
    return r;
}

/* Write-back of every finished local fleet job, then its retirement. -1: the connection failed. */
static int write_backs(PGconn *pg) {
    for (uint32_t i = 0; i < n_held;) {
        held_t *h = &held[i];
        if (h->retry_ns && daemon_now_ns() < h->retry_ns) {
            i++;
            continue;
        }
        spool_place_t pl = spool_job_place(cfg.spool, h->id);
        /* not finished, or finished but its end not recorded in the segment yet (the finalizer may
         * still repeat it on the directory) */
        int slot = pl != SPOOL_NOWHERE ? shm_job_find(&seg, h->id) : -1;
        if (pl == SPOOL_INCOMING || pl == SPOOL_ACTIVE || (slot >= 0 && shm_job_live(shm_job_state(&seg.jobs[slot])))) {
            i++;
            continue;
        }
        char dir[1400], err[FLEET_ERR_MAX];
        if (pl != SPOOL_NOWHERE) {
            spool_path(dir, sizeof dir, cfg.spool, pl, h->id);
            int w = fleet_write_back(pg, box, h->id, h->gen, dir, err, sizeof err);
            if (w < 0 && PQstatus(pg) != CONNECTION_OK) return log_err("%s", err), -1;
            if (w < 0) { /* the local result cannot be read, or the database refused it: the job fails with why */
                char why[FLEET_ERR_MAX];
                snprintf(why, sizeof why, "%s", err);
                log_err("job %s: %s", h->id, why);
                w = fleet_fail(pg, box, h->id, h->gen, why, err, sizeof err);
                if (w < 0 && PQstatus(pg) != CONNECTION_OK) return log_err("%s", err), -1;
                if (w < 0) { /* this job only: the others are written back meanwhile */
                    log_err("job %s: %s; its local copy stays, tried again in %u s", h->id, err, WRITE_BACK_RETRY_S);
                    h->retry_ns = daemon_now_ns() + WRITE_BACK_RETRY_S * 1000000000ull;
                    i++;
                    continue;
                }
            }
            if (w == 1) {
                n_written++;
                log_info("job %s (generation %lld): %s, written back", h->id, (long long)h->gen, spool_place_name(pl));
            } else {
                n_fenced++;
                log_warn("job %s: the lease of generation %lld was lost; its result is not written (fenced)", h->id,
                         (long long)h->gen);
            }
            file_remove_flat_dir(dir);
        }
        drop_held(h); /* no local copy (a crash before it entered the spool): the lease lapses */
    }
    return 0;
}

static int renew_all(PGconn *pg) {
    for (uint32_t i = 0; i < n_held; i++) {
        held_t *h = &held[i];
        if (h->lost) continue;
        char err[FLEET_ERR_MAX];
        int r = fleet_renew(pg, box, h->id, h->gen, cfg.lease_s, err, sizeof err);
        if (r < 0) return log_err("%s", err), -1;
        if (r == 0) {
            h->lost = true;
            log_warn("job %s: lease of generation %lld lost; cancelling the local copy", h->id, (long long)h->gen);
            int slot = shm_job_find(&seg, h->id);
            if (slot >= 0 && shm_job_live(shm_job_state(&seg.jobs[slot]))) (void)shm_job_cancel(&seg, (uint32_t)slot);
        }
    }
    return 0;
}

static void hold(const char *id, int64_t gen) {
    held_t *h = &held[n_held++];
    *h = (held_t){.gen = gen};
    snprintf(h->id, sizeof h->id, "%s", id);
}

/* The feeder's spool_input_t.read: input k of job id from the database, held until the next. */
typedef struct fetch {
    PGconn *pg;
    const char *id;
    PGresult *r;
} fetch_t;

static int fetch_input(void *ctx, uint32_t k, const void **ret_data, size_t *ret_len, char *err, size_t errlen) {
    fetch_t *f = ctx;
    PQclear(f->r);
    f->r = NULL;
    /* the length announced to spool_submit is the one the server must still have */
    char e[FLEET_ERR_MAX];
    size_t want = *ret_len;
    f->r = fleet_input(f->pg, f->id, k, want, e, sizeof e);
    if (!f->r) return snprintf(err, errlen, "%s", e), PQstatus(f->pg) != CONNECTION_OK ? -ECONNRESET : -ESTALE;
    *ret_data = PQgetvalue(f->r, 0, 0);
    *ret_len = (size_t)PQgetlength(f->r, 0, 0);
    return 0;
}

/* Takes one claimed job into the spool. -1: the connection failed. Its id is checked before
 * anything uses it (it names SPOOL/fleet/ID and the job's folder); a job of the spool that this
 * feeder holds no record of is not the fleet's (a local job of the same id), and is never taken. */
static int take_in(PGconn *pg, const fleet_claim_t *c) {
    char err[FLEET_ERR_MAX];
    const char *why = NULL;
    int ci = cfg_circuit_index(&cfg, c->circuit);
    held_t *h = NULL;
    if (!spool_valid_id(c->id)) {
        why = "the job id is not a spool id ([A-Za-z0-9._-], at most 31 characters)";
    } else if ((h = find_held(c->id)) && spool_job_place(cfg.spool, c->id) != SPOOL_NOWHERE) {
        /* our own local copy, claimed again after a lapse */
        h->gen = c->gen;
        h->lost = false;
        (void)record_write(c->id, c->gen);
        log_info("job %s: claimed again (generation %lld); the local copy goes on", c->id, (long long)c->gen);
        return 0;
    } else if (h) {
        drop_held(h); /* its record, but no local copy (a crash before it entered the spool): taken in anew */
    }
    if (!why) {
        if (spool_job_place(cfg.spool, c->id) != SPOOL_NOWHERE)
            why = "this box's spool has a local job of that id (not a fleet job): not taken";
        else if (ci < 0 || !caps[ci])
            why = "the circuit is not served by this box";
        else if (c->inputs && !cfg.circuits[ci].wasm[0] && !cfg.circuits[ci].witness_cmd[0])
            why = "the job brings circuit inputs, and this box has no witness generator (wasm or witness_cmd) for the "
                  "circuit";
        else if (n_held >= MAX_HELD)
            return 0;
    }
    if (why) {
        snprintf(err, sizeof err, "job %s: %s", c->id, why);
        log_err("%s", err);
        return fleet_fail(pg, box, c->id, c->gen, err, err, sizeof err) < 0 ? -1 : 0;
    }
    uint64_t cap = c->inputs ? SPOOL_INPUT_JSON_MAX : caps[ci];
    uint64_t lens[SHM_MAX_PARTS];
    int r = -EINVAL;
    if (c->n_parts > SHM_MAX_PARTS)
        snprintf(err, sizeof err, "job %s: %u partitions, more than %u", c->id, c->n_parts, SHM_MAX_PARTS);
    else
        r = fleet_input_sizes(pg, c->id, c->n_parts, cap, lens, err, sizeof err);
    if (r < 0) {
        if (PQstatus(pg) != CONNECTION_OK) return log_err("%s", err), -1;
        log_err("%s", err);
        return fleet_fail(pg, box, c->id, c->gen, err, err, sizeof err) < 0 ? -1 : 0;
    }
    /* each input is fetched when the spool writes it, and let go before the next */
    fetch_t f = {.pg = pg, .id = c->id};
    spool_input_t inputs[SHM_MAX_PARTS];
    for (uint32_t k = 0; k < c->n_parts; k++)
        inputs[k] = (spool_input_t){.len = (size_t)lens[k], .read = fetch_input, .ctx = &f};
    spool_job_t j = {.prio = c->prio, .n_parts = c->n_parts, .submit_ns = c->submit_ns, .inputs = c->inputs};
    snprintf(j.id, sizeof j.id, "%s", c->id);
    snprintf(j.circuit, sizeof j.circuit, "%s", c->circuit);
    r = record_write(c->id, c->gen);
    char why2[1200];
    if (r == 0)
        r = spool_submit(cfg.spool, &j, inputs, cap, cfg.min_free, why2, sizeof why2);
    else
        snprintf(why2, sizeof why2, "%s/fleet/%s: cannot write: %s", cfg.spool, c->id, strerror(-r));
    PQclear(f.r);
    if (r < 0) {
        char p[1400];
        record_path(p, sizeof p, c->id);
        (void)unlink(p);
        if (PQstatus(pg) != CONNECTION_OK) /* lost while fetching an input: the lease lapses, or is renewed */
            return log_err("job %s: not taken in: %s", c->id, why2), -1;
        if (r != -EFBIG && r != -ESTALE) {
            /* the box, not the job (no space, min_free, an I/O error): given back to the queue, its
             * attempt undone, for another box (or this one later) */
            log_err("job %s: not taken in: %s; given back to the queue", c->id, why2);
            claim_after_ns = daemon_now_ns() + 1000000000ull; /* no claim-and-give-back churn */
            return fleet_release(pg, box, c->id, c->gen, err, sizeof err) < 0 ? log_err("%s", err), -1 : 0;
        }
        snprintf(err, sizeof err, "job %s: %s", c->id, why2);
        log_err("%s", err);
        return fleet_fail(pg, box, c->id, c->gen, why2, err, sizeof err) < 0 ? -1 : 0;
    }
    hold(c->id, c->gen);
    n_claimed++;
    log_info("job %s (%s, %u partitions, generation %lld) claimed into the spool", c->id, c->circuit, c->n_parts,
             (long long)c->gen);
    return 0;
}

static int claim(PGconn *pg) {
    if (daemon_now_ns() < claim_after_ns) return 0;
    /* a spool below min_free takes no job in: nothing is claimed (no attempt spent) until space is
     * freed */
    int64_t avail = spool_free_bytes(cfg.spool);
    static bool held_off;
    if (avail >= 0 && (uint64_t)avail < cfg.min_free) {
        if (!held_off)
            log_warn("the spool %s has %.1f MiB free, less than [pipeline] min_free: claiming nothing until space is "
                     "freed",
                     cfg.spool, (double)avail / 1048576.0);
        held_off = true;
        return 0;
    }
    if (held_off) log_info("the spool has space again: claiming");
    held_off = false;
    int64_t want = room();
    if (want > cfg.batch) want = cfg.batch;
    if (want <= 0) return 0;
    fleet_claim_t c[1024];
    char err[FLEET_ERR_MAX];
    fleet_lapsed_t gone[16];
    /* the leases this feeder still holds: late renewals (a stop of this process or of the
     * database) are no lapses to it, and are renewed, not claimed anew or given up */
    static const char *mine[MAX_HELD];
    uint32_t n_mine = 0;
    for (uint32_t i = 0; i < n_held; i++)
        if (!held[i].lost) mine[n_mine++] = held[i].id;
    int g = fleet_give_up_lapsed(pg, box, served, n_served, mine, n_mine, cfg.max_attempts, gone, 16, err,
                                 sizeof err);
    if (g < 0) return log_err("%s", err), -1;
    for (int i = 0; i < g; i++)
        log_warn("job %s failed: its lease lapsed %u times, the last on box %s; not claimed again (max_attempts = %u)",
                 gone[i].id, gone[i].attempts, gone[i].last_owner, cfg.max_attempts);
    int n = fleet_claim(pg, box, served, n_served, mine, n_mine, (uint32_t)want, cfg.lease_s, cfg.max_attempts, c, err,
                        sizeof err);
    if (n < 0) return log_err("%s", err), -1;
    for (int i = 0; i < n; i++)
        if (take_in(pg, &c[i]) < 0) return -1;
    if (n) shm_bump(&seg.hdr->job_seq); /* wake the synthds */
    return n;
}

static void status_line(char *buf, size_t len) {
    snprintf(buf, len, "box %s: %u jobs held, %llu claimed, %llu written back, %llu fenced", box, n_held,
             (unsigned long long)n_claimed, (unsigned long long)n_written, (unsigned long long)n_fenced);
}

static PGconn *connect_db(void) {
    char err[FLEET_ERR_MAX];
    PGconn *pg = fleet_connect(cfg.source_dsn, err, sizeof err);
    if (pg && fleet_check_schema(pg, err, sizeof err) < 0) {
        PQfinish(pg);
        pg = NULL;
    }
    if (pg && fleet_listen(pg, "zkpipe_jobs", err, sizeof err) < 0) {
        PQfinish(pg);
        pg = NULL;
    }
    static char last[FLEET_ERR_MAX];
    if (!pg && strcmp(last, err)) log_err("%s; retrying with back-off", err); /* once per distinct error */
    if (!pg) snprintf(last, sizeof last, "%s", err);
    if (pg) last[0] = 0;
    return pg;
}

/* Waits for a notification, the socket's end, or ms; false when the connection broke. */
static bool wait_db(PGconn *pg, int ms) {
    struct pollfd p = {.fd = pg ? PQsocket(pg) : -1, .events = POLLIN};
    int r = poll(&p, p.fd >= 0 ? 1 : 0, ms);
    if (r <= 0 || !pg) return true;
    if (!PQconsumeInput(pg)) return false;
    PGnotify *n;
    while ((n = PQnotifies(pg))) PQfreemem(n);
    return true;
}

int main(int argc, char **argv) {
    daemon_args_t args;
    int rc;
    if (!stage_init(argc, argv, "zkpipe-feeder", ABOUT, false, true, &args, &cfg, &rc)) return rc;
    if (!cfg.source_dsn[0]) {
        log_err("%s: [source postgres] dsn is not set: this box has no fleet queue to feed from", cfg.path);
        return 1;
    }
    if (cfg.box[0]) {
        snprintf(box, sizeof box, "%s", cfg.box);
    } else {
        char host[64] = "localhost";
        (void)gethostname(host, sizeof host - 1);
        snprintf(box, sizeof box, "%s-%s", host, cfg.name);
    }
    char dir[1400], err[1200];
    snprintf(dir, sizeof dir, "%s/fleet", cfg.spool);
    if (mkdir(dir, 0770) < 0 && errno != EEXIST) {
        log_err("%s: cannot create: %m", dir);
        return 1;
    }
    shm_geometry_t g = {.slabs = cfg.slabs, .jobs = cfg.jobs, .events = cfg.events, .slab_size = cfg.slab_size};
    if (shm_open_segment(&seg, cfg.segment, &g, true, err, sizeof err) < 0) {
        log_err("Failed to attach the segment: %s", err);
        return 1;
    }
    size_t o = 0;
    for (uint32_t i = 0; i < cfg.n_circuits; i++) {
        zk_zkey_t z;
        zk_err_t e = {{0}};
        if (zk_zkey_open(&z, cfg.circuits[i].zkey, &e) < 0) {
            log_err("circuit %s: %s; not serving it", cfg.circuits[i].name, e.msg);
            continue;
        }
        caps[i] = shm_slab_layout(z.n_vars, z.domain_size).wtns_cap;
        zk_zkey_close(&z);
        served[n_served++] = cfg.circuits[i].name;
        o += (size_t)snprintf(served_list + o, sizeof served_list - o, "%s%s", o ? "," : "", cfg.circuits[i].name);
    }
    load_records();
    daemon_notify_ready("feeding");
    log_info("box %s feeds %s from the fleet queue (lease %us, batch %u, max_attempts %u)", box, served_list,
             cfg.lease_s, cfg.batch, cfg.max_attempts);
    PGconn *pg = NULL;
    int backoff = 100;
    uint64_t last_renew = 0;
    uint64_t renew_every = (uint64_t)cfg.lease_s * 1000000000ull / 3;
    char last_status[256] = "";
    while (!daemon_stop) {
        daemon_notify_watchdog();
        uint64_t now = daemon_now_ns();
        char st[256];
        status_line(st, sizeof st);
        if (strcmp(st, last_status))
            daemon_notify_status("%s", st), snprintf(last_status, sizeof last_status, "%s", st);
        if (!pg) {
            pg = connect_db();
            if (!pg) {
                (void)poll(NULL, 0, backoff);
                backoff = backoff * 2 > 5000 ? 5000 : backoff * 2;
                continue;
            }
            log_info("connected to the fleet queue");
            last_renew = 0;
        }
        bool ok = write_backs(pg) == 0;
        if (ok && (now - last_renew >= renew_every || !last_renew)) {
            ok = renew_all(pg) == 0;
            if (ok && fleet_heartbeat(pg, box, served_list, cfg.slabs, err, sizeof err) < 0) {
                log_err("%s", err);
                ok = false;
            }
            last_renew = now;
        }
        int claimed = 0;
        if (ok) {
            claimed = claim(pg);
            ok = claimed >= 0;
        }
        if (ok && !claimed) ok = wait_db(pg, n_held ? 100 : (int)cfg.poll_ms);
        if (!ok || PQstatus(pg) != CONNECTION_OK) {
            /* the back-off grows until a whole pass succeeds: a server that accepts connections but
             * fails every pass is not hammered */
            log_warn("lost the connection to the fleet queue; reconnecting in %d ms", backoff);
            PQfinish(pg);
            pg = NULL;
            (void)poll(NULL, 0, backoff);
            backoff = backoff * 2 > 5000 ? 5000 : backoff * 2;
        } else {
            backoff = 100;
        }
    }
    daemon_notify_stopping();
    PQfinish(pg);
    shm_close(&seg);
    return 0;
}
