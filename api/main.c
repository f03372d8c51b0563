/* zkpipe-api: takes jobs from applications over HTTP (libmicrohttpd) on [api] listen and answers
 * with their state and proofs (docs/api.md).
 *
 * Invariants:
 * - It holds no job state a restart could lose: a job goes in only through spool_submit (its token
 *   name as job.ini submitter), its state and proofs are read from the spool (spool_job_place,
 *   spool_read_job, spool_read_result), a cancel is job_cancel's. What it keeps of its own lives in
 *   SPOOL/api/, each file written by file_write_atomic_at before the job it names is submitted:
 *   keys/<sha256(token name, Idempotency-Key)> holds the job id of that key, compat-<token> the
 *   latest job of rapidsnark's routes.
 * - One event thread runs MHD (external polling on its epoll fd, beside an inotify of done/ and
 *   failed/ and the workers' eventfd) and owns every request. Only spool_submit (with the key's or
 *   the compat record) runs on the WORKERS threads, on a task the event thread handed over with the request's
 *   connection suspended; the task comes back through done_list. A long-poll (?wait=) suspends its
 *   connection until its job ends (the inotify event) or its time (at most [api] max_wait) passes;
 *   it never holds a thread. A keyed request whose key is in flight waits behind that task.
 * - Slow clients (common/http.h): outside a request a connection may idle IDLE_S, a request that is
 *   not suspended may take REQUEST_S, and when the slots run short the oldest idle one is closed.
 * - A request body is read only after its route, method, Host and token were accepted, and never
 *   past [api] max_body (413). A job id in a path is spool_valid_id's syntax, else 400. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <microhttpd.h>
#include <nettle/base64.h>
#include <nettle/sha2.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api/tokens.h"
#include "base/testpoint.h"
#include "spool/cancel.h"
#include "common/daemon.h"
#include "common/http.h"
#include "common/log.h"
#include "spool/spool.h"
#include "config/config.h"
#include "base/cleanup.h"
#include "base/file.h"
#include "shm/shm.h"
#include "shm/slab.h"
#include "zk/wtns.h"
#include "zk/zkey.h"

enum { IDLE_S = 10, REQUEST_S = 60, KEY_MAX = 255 };

static cfg_t cfg;
static api_tokens_t tokens;
static http_guard_t guard;
static char hostname[256];
static char api_dir[CFG_PATH_MAX + 16];
static volatile sig_atomic_t reload;
static unsigned long long requests, submitted;

/* ---- the segment: only to wake the synthds after a submission (job_seq) ---- */

static shm_t S;
static bool attached;

static void wake_synthds(void) {
    struct stat now, ours;
    if (attached && (stat(cfg.segment, &now) < 0 || fstat(S.fd, &ours) < 0 || now.st_ino != ours.st_ino ||
                     now.st_dev != ours.st_dev)) {
        shm_close(&S);
        attached = false;
    }
    char err[1200];
    if (!attached) attached = shm_open_segment(&S, cfg.segment, NULL, false, err, sizeof err) == 0;
    if (attached) shm_bump(&S.hdr->job_seq);
}

/* ---- circuits: what the zkey says, read once ---- */

typedef struct circuit_info {
    bool read;
    char error[600]; /* the zkey cannot be read */
    const zk_curve_t *curve;
    uint32_t n_vars, n_pub;
    uint64_t wtns_cap;
} circuit_info_t;
static circuit_info_t infos[CFG_MAX_CIRCUITS];

static const circuit_info_t *circuit_info(const cfg_circuit_t *ci) {
    circuit_info_t *in = &infos[ci - cfg.circuits];
    if (in->read) return in;
    zk_zkey_t z;
    zk_err_t e = {{0}};
    if (zk_zkey_open_flags(&z, ci->zkey, ZK_ZKEY_LAZY, &e) < 0) {
        snprintf(in->error, sizeof in->error, "circuit %s: %s", ci->name, e.msg);
        return in; /* read again at the next request: the key may be fixed */
    }
    in->curve = z.curve;
    in->n_vars = z.n_vars;
    in->n_pub = z.n_pub;
    in->wtns_cap = shm_slab_layout(z.n_vars, z.domain_size).wtns_cap;
    in->error[0] = 0;
    in->read = true;
    zk_zkey_close(&z);
    return in;
}

/* ---- replies ---- */

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned code, char *body, const char *extra_header,
                                  const char *extra_value) {
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    if (!r) return free(body), MHD_NO;
    MHD_add_response_header(r, "Content-Type", "application/json");
    MHD_add_response_header(r, "Cache-Control", "no-store");
    if (extra_header) MHD_add_response_header(r, extra_header, extra_value);
    enum MHD_Result ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result reply_json(struct MHD_Connection *c, unsigned code, json_object *o) {
    char *s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
    return s ? reply_text(c, code, s, NULL, NULL) : MHD_NO;
}

static enum MHD_Result reply_error(struct MHD_Connection *c, unsigned code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static enum MHD_Result reply_error(struct MHD_Connection *c, unsigned code, const char *fmt, ...) {
    char msg[1600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_object *o = json_object_new_object();
    json_object_object_add(o, "error", json_object_new_string(msg));
    if (code == MHD_HTTP_UNAUTHORIZED) {
        char *s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
        json_object_put(o);
        return s ? reply_text(c, code, s, "WWW-Authenticate", "Bearer") : MHD_NO;
    }
    if (code == MHD_HTTP_SERVICE_UNAVAILABLE) {
        char *s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
        json_object_put(o);
        return s ? reply_text(c, code, s, "Retry-After", "30") : MHD_NO;
    }
    return reply_json(c, code, o);
}

/* ---- requests ---- */

typedef struct req {
    struct MHD_Connection *conn;
    const api_token_t *token; /* checked at the first call; tokens are not reloaded while a request runs */
    char token_name[64];
    char *body;
    size_t len, cap;
    bool started; /* the first call is done: route, Host and token accepted */
    bool too_big; /* the body passed max_body: skipped bytes are counted */
    size_t skipped;
    bool suspended;       /* in the waiters list */
    uint64_t deadline_ns; /* of a long-poll (CLOCK_MONOTONIC) */
    char id[SPOOL_ID_MAX];
    struct req *prev, *next;
    struct task *task;       /* a submission handed to a worker (its connection suspended) */
    struct req *follow_next; /* waiting behind a task of the same Idempotency-Key */
} req_t;
static req_t *waiters;

static void waiter_remove(req_t *r) {
    if (!r->suspended) return;
    if (r->prev)
        r->prev->next = r->next;
    else
        waiters = r->next;
    if (r->next) r->next->prev = r->prev;
    r->prev = r->next = NULL;
    r->suspended = false;
    http_conn_t *k = http_guard_conn(r->conn);
    if (k) k->suspended = false;
}

static void waiter_wake(req_t *r) {
    struct MHD_Connection *c = r->conn;
    waiter_remove(r);
    MHD_resume_connection(c);
}

static void waiter_add(req_t *r, uint64_t deadline_ns) {
    r->deadline_ns = deadline_ns;
    r->suspended = true;
    r->prev = NULL;
    r->next = waiters;
    if (waiters) waiters->prev = r;
    waiters = r;
    http_conn_t *k = http_guard_conn(r->conn);
    if (k) k->suspended = true;
    MHD_suspend_connection(r->conn);
}

/* Holds a request's connection for a worker (not a long-poll: no deadline, not in waiters). */
static void request_suspend(req_t *r) {
    http_conn_t *k = http_guard_conn(r->conn);
    if (k) k->suspended = true;
    MHD_suspend_connection(r->conn);
}

static void request_resume(req_t *r) {
    http_conn_t *k = http_guard_conn(r->conn);
    if (k) k->suspended = false;
    MHD_resume_connection(r->conn);
}

static void request_done(void *cls, struct MHD_Connection *c, void **state, enum MHD_RequestTerminationCode why) {
    (void)cls, (void)why;
    req_t *r = *state;
    http_guard_request_done(c);
    if (!r) return;
    waiter_remove(r);
    free(r->body);
    free(r);
    *state = NULL;
}

static uint64_t mono_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* ---- the job view: everything from the spool ---- */

typedef enum { ST_QUEUED, ST_RUNNING, ST_DONE, ST_FAILED, ST_CANCELLED } job_state_t;
static const char *const state_names[] = {"queued", "running", "done", "failed", "cancelled"};

typedef struct view {
    spool_job_t job;
    spool_place_t place;
    job_state_t state;
    char dir[1500];
    bool has_result;
    spool_result_t res;
} view_t;

/* 0; -ENOENT for no job, or one that is not the token's (the same answer: 404). */
static int view_load(view_t *v, const char *id, const char *owner) {
    memset(v, 0, sizeof *v);
    v->place = spool_job_place(cfg.spool, id);
    if (v->place == SPOOL_NOWHERE) return -ENOENT;
    spool_path(v->dir, sizeof v->dir, cfg.spool, v->place, id);
    char why[600];
    if (spool_read_job(v->dir, &v->job, why, sizeof why) < 0) {
        /* it moved on between the two looks: once more where it is now */
        v->place = spool_job_place(cfg.spool, id);
        if (v->place == SPOOL_NOWHERE) return -ENOENT;
        spool_path(v->dir, sizeof v->dir, cfg.spool, v->place, id);
        if (spool_read_job(v->dir, &v->job, why, sizeof why) < 0) return -ENOENT;
    }
    if (strcmp(v->job.submitter, owner)) return -ENOENT;
    if (v->place == SPOOL_INCOMING) {
        v->state = ST_QUEUED;
    } else if (v->place == SPOOL_ACTIVE) {
        v->state = ST_RUNNING;
    } else {
        _cleanup_close_ int dfd = spool_open_dir(v->dir);
        v->has_result = dfd >= 0 && spool_read_result(dfd, &v->res, why, sizeof why) == 0;
        bool done = v->place == SPOOL_DONE;
        v->state = done ? ST_DONE : v->has_result && !strcmp(v->res.status, "cancelled") ? ST_CANCELLED : ST_FAILED;
    }
    return 0;
}

static void view_free(view_t *v) {
    if (v->has_result) spool_result_free(&v->res);
    v->has_result = false;
}

static bool terminal(job_state_t s) { return s >= ST_DONE; }

/* proof-<k>.json or public-<k>.json of the job, parsed (NULL when absent or not JSON); text too */
static json_object *read_part_json(int dfd, spool_file_t f, uint32_t k, char **ret_text) {
    char why[600], *buf = NULL;
    size_t len;
    if (spool_read_part(dfd, f, k, &buf, &len, why, sizeof why) < 0) return NULL;
    json_object *o = json_tokener_parse(buf);
    if (ret_text)
        *ret_text = buf;
    else
        free(buf);
    return o;
}

static json_object *view_json(view_t *v) {
    json_object *o = json_object_new_object();
    json_object_object_add(o, "id", json_object_new_string(v->job.id));
    json_object_object_add(o, "circuit", json_object_new_string(v->job.circuit));
    json_object_object_add(o, "state", json_object_new_string(state_names[v->state]));
    json_object_object_add(o, "priority", json_object_new_string(cfg_priority_name(v->job.prio)));
    json_object_object_add(o, "partitions", json_object_new_int((int)v->job.n_parts));
    _cleanup_close_ int dfd = spool_open_dir(v->dir);
    uint32_t finished = 0;
    if (v->has_result) {
        for (uint32_t k = 0; v->res.parts && k < v->res.n_parts; k++)
            if (!strcmp(v->res.parts[k].status, "done")) finished++;
    } else if (v->state == ST_RUNNING && dfd >= 0) {
        for (uint32_t k = 0; k < v->job.n_parts; k++) {
            char name[SPOOL_FILE_NAME_MAX];
            struct stat st;
            spool_file_name(name, SPOOL_F_PUBLIC, k); /* written after the proof */
            if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) finished++;
        }
    }
    json_object_object_add(o, "finished", json_object_new_int((int)finished));
    json_object_object_add(o, "error", v->has_result && v->res.error[0] ? json_object_new_string(v->res.error) : NULL);
    json_object *proofs = json_object_new_array();
    if (v->state == ST_DONE && dfd >= 0)
        for (uint32_t k = 0; k < v->job.n_parts; k++) {
            json_object *p = json_object_new_object();
            json_object_object_add(p, "proof", read_part_json(dfd, SPOOL_F_PROOF, k, NULL));
            json_object_object_add(p, "public", read_part_json(dfd, SPOOL_F_PUBLIC, k, NULL));
            json_object_array_add(proofs, p);
        }
    json_object_object_add(o, "proofs", proofs);
    json_object *t = json_object_new_object();
    json_object_object_add(t, "submitted_ns", json_object_new_uint64(v->job.submit_ns));
    if (v->has_result) {
        double q = 0, s = 0, g = 0, f = 0;
        for (uint32_t k = 0; v->res.parts && k < v->res.n_parts; k++) {
            const spool_part_result_t *p = &v->res.parts[k];
            q = p->queue_ms > q ? p->queue_ms : q;
            s += p->synth_ms, g += p->gpu_ms, f += p->finalize_ms;
        }
        json_object_object_add(t, "total_ms", json_object_new_double(v->res.total_ms));
        json_object_object_add(t, "queue_ms", json_object_new_double(q));
        json_object_object_add(t, "synth_ms", json_object_new_double(s));
        json_object_object_add(t, "gpu_ms", json_object_new_double(g));
        json_object_object_add(t, "finalize_ms", json_object_new_double(f));
    }
    json_object_object_add(o, "times", t);
    return o;
}

/* ---- submission ---- */

/* SPOOL/api/NAME read into buf (a job id), or -ENOENT */
static int api_record_read(const char *name, char id[SPOOL_ID_MAX]) {
    _cleanup_close_ int dfd = spool_open_dir(api_dir);
    char *buf, why[600];
    size_t len;
    if (dfd < 0 || file_read(dfd, name, FILE_NOFOLLOW, 256, 0, &buf, &len, why, sizeof why) < 0) return -ENOENT;
    buf[strcspn(buf, "\n")] = 0;
    bool ok = spool_valid_id(buf);
    if (ok) snprintf(id, SPOOL_ID_MAX, "%s", buf);
    free(buf);
    return ok ? 0 : -EINVAL;
}

static int api_record_write(const char *name, const char *id) {
    _cleanup_close_ int dfd = spool_open_dir(api_dir);
    char line[SPOOL_ID_MAX + 1];
    int n = snprintf(line, sizeof line, "%s\n", id);
    return dfd < 0 ? dfd : file_write_atomic_at(dfd, name, line, (size_t)n, NULL, -1);
}

static void key_record_name(const char *token, const char *key, char out[80]) {
    struct sha256_ctx h;
    uint8_t d[32];
    sha256_init(&h);
    sha256_update(&h, strlen(token) + 1, (const uint8_t *)token); /* the NUL separates them */
    sha256_update(&h, strlen(key), (const uint8_t *)key);
    sha256_digest(&h, 32, d);
    strcpy(out, "key-");
    for (int i = 0; i < 32; i++) snprintf(out + 4 + 2 * i, 3, "%02x", d[i]);
}

typedef struct parts {
    spool_input_t in[CFG_MAX_PARTITIONS];
    char *owned[CFG_MAX_PARTITIONS];
    uint32_t n;
    bool inputs;
} parts_t;

static void parts_free(parts_t *p) {
    for (uint32_t k = 0; k < p->n; k++) free(p->owned[k]);
}

/* A submission's answer: code and message (a failure), or the job id (0). */
typedef struct outcome {
    unsigned code;
    char msg[1600];
} outcome_t;

static int fail_with(outcome_t *o, unsigned code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail_with(outcome_t *o, unsigned code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->msg, sizeof o->msg, fmt, ap);
    va_end(ap);
    o->code = code;
    return -1;
}
#define FAIL fail_with

/* Decodes "witnesses" (base64 .wtns, each checked against the circuit's key) or "inputs"
 * (objects, each serialized as its input.json). */
static int parts_parse(parts_t *p, json_object *arr, bool inputs, const cfg_circuit_t *ci, outcome_t *o) {
    size_t n = json_object_array_length(arr);
    if (!n) return FAIL(o, 400, "\"%s\" is empty: a job has at least one partition", inputs ? "inputs" : "witnesses");
    if (n > cfg.api_max_partitions)
        return FAIL(o, 413, "%zu partitions: at most %u a job ([api] max_partitions)", n, cfg.api_max_partitions);
    p->inputs = inputs;
    const circuit_info_t *info = NULL;
    if (!inputs) {
        info = circuit_info(ci);
        if (!info->read) return FAIL(o, 500, "%s", info->error);
    }
    for (size_t k = 0; k < n; k++) {
        json_object *e = json_object_array_get_idx(arr, k);
        if (inputs) {
            if (!json_object_is_type(e, json_type_object))
                return FAIL(o, 400, "inputs[%zu]: expected an object (the circuit's input.json)", k);
            const char *s = json_object_to_json_string_ext(e, JSON_C_TO_STRING_PLAIN);
            p->owned[p->n] = strdup(s);
            if (!p->owned[p->n]) return FAIL(o, 500, "out of memory");
            p->in[p->n] = (spool_input_t){.data = p->owned[p->n], .len = strlen(s)};
            p->n++;
            continue;
        }
        if (!json_object_is_type(e, json_type_string))
            return FAIL(o, 400, "witnesses[%zu]: expected a string (a .wtns file in base64)", k);
        size_t sl = (size_t)json_object_get_string_len(e);
        uint8_t *buf = malloc(BASE64_DECODE_LENGTH(sl) + 8);
        if (!buf) return FAIL(o, 500, "out of memory");
        struct base64_decode_ctx b;
        size_t len = 0;
        base64_decode_init(&b);
        if (!base64_decode_update(&b, &len, buf, sl, json_object_get_string(e)) || !base64_decode_final(&b)) {
            free(buf);
            return FAIL(o, 400, "witnesses[%zu]: not base64", k);
        }
        p->owned[p->n] = (char *)buf;
        p->in[p->n] = (spool_input_t){.data = buf, .len = len};
        p->n++;
        if (len > info->wtns_cap)
            return FAIL(o, 413, "witnesses[%zu]: %zu bytes, more than a witness of circuit %s can be (%llu)", k, len,
                        ci->name, (unsigned long long)info->wtns_cap);
        zk_wtns_t w;
        zk_err_t e2 = {{0}};
        char name[48];
        snprintf(name, sizeof name, "witnesses[%zu]", k);
        zk_zkey_t key = {.curve = info->curve, .n_vars = info->n_vars};
        if (zk_wtns_parse(&w, name, buf, len, &e2) < 0) return FAIL(o, 422, "%s", e2.msg);
        int bad = zk_wtns_check_zkey(&w, name, &key, ci->zkey, &e2);
        zk_wtns_free(&w);
        if (bad < 0) return FAIL(o, 422, "%s", e2.msg);
    }
    return 0;
}

/* Submits one job of parts for token (the key's record first, when key; the record named latest
 * pointed at it first, when latest: rapidsnark's routes). *ret_replay: the key named a job that
 * exists. */
static int submit_job(const char *token, const cfg_circuit_t *ci, int prio, parts_t *p, const char *key,
                      const char *latest, char id[SPOOL_ID_MAX], bool *ret_replay, outcome_t *o) {
    char rec[80];
    *ret_replay = false;
    spool_new_id(id);
    if (latest) { /* a job the record names that never got in reads as "ready" */
        int r = api_record_write(latest, id);
        if (r < 0) return FAIL(o, 500, "cannot write %s/%s: %s", api_dir, latest, strerror(-r));
    }
    if (key) {
        key_record_name(token, key, rec);
        char old[SPOOL_ID_MAX];
        if (api_record_read(rec, old) == 0) {
            snprintf(id, SPOOL_ID_MAX, "%s", old);
            if (spool_job_place(cfg.spool, id) != SPOOL_NOWHERE) return *ret_replay = true, 0;
            /* the record was written, the job not (a crash between them): submitted now under it */
        } else {
            int r = api_record_write(rec, id);
            if (r < 0)
                return FAIL(o, r == -ENOSPC || r == -EDQUOT ? 503 : 500, "cannot keep the Idempotency-Key in %s: %s",
                            api_dir, strerror(-r));
        }
        test_point("api.key_kept", -1);
    }
    spool_job_t j = {.prio = prio, .n_parts = p->n, .submit_ns = shm_realtime_ns(), .inputs = p->inputs};
    snprintf(j.id, sizeof j.id, "%s", id);
    snprintf(j.circuit, sizeof j.circuit, "%s", ci->name);
    snprintf(j.submitter, sizeof j.submitter, "%s", token);
    uint64_t cap = 0;
    for (uint32_t k = 0; k < p->n; k++) cap = p->in[k].len > cap ? p->in[k].len : cap; /* checked above */
    char err[1200];
    int r = spool_submit(cfg.spool, &j, p->in, cap, cfg.min_free, err, sizeof err);
    if (r == -ENOSPC || r == -EDQUOT) return FAIL(o, 503, "%s", err);
    if (r < 0) return FAIL(o, 500, "%s", err);
    test_point("api.submitted", -1);
    return 0;
}

/* ---- submission workers: the spool's fsyncs overlap, the event thread never waits for them ---- */

/* One POST /v1/jobs on its way into the spool. Its connection is suspended meanwhile; the fields
 * above `done` are the event thread's until the task is queued, the results the worker's until it
 * is handed back. */
typedef struct task {
    struct req *r;
    char token[64], key[KEY_MAX + 1], rec[80]; /* rec: the key's record, or the latest of compat */
    bool has_key, compat;
    const cfg_circuit_t *ci;
    int prio;
    parts_t p;
    struct req *followers; /* requests with the same key, run again once this one is in */
    struct task *next, *inflight_next;
    /* results */
    int rc;
    outcome_t o;
    char id[SPOOL_ID_MAX];
    bool replay;
} task_t;

enum { WORKERS = 8 };
static pthread_mutex_t task_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t task_cv = PTHREAD_COND_INITIALIZER;
static task_t *todo_head, *todo_tail, *done_list;
static bool workers_stop;
static int done_fd = -1; /* eventfd: a task was handed back */
static task_t *inflight; /* keyed tasks queued or running (event thread only) */

static void *worker_main(void *arg) {
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&task_mu);
        while (!todo_head && !workers_stop) pthread_cond_wait(&task_cv, &task_mu);
        task_t *t = todo_head;
        if (!t) {
            pthread_mutex_unlock(&task_mu);
            return NULL;
        }
        todo_head = t->next;
        if (!todo_head) todo_tail = NULL;
        pthread_mutex_unlock(&task_mu);
        t->rc = submit_job(t->token, t->ci, t->prio, &t->p, t->has_key ? t->key : NULL, t->compat ? t->rec : NULL,
                           t->id, &t->replay, &t->o);
        pthread_mutex_lock(&task_mu);
        t->next = done_list;
        done_list = t;
        pthread_mutex_unlock(&task_mu);
        uint64_t one = 1;
        (void)!write(done_fd, &one, sizeof one);
    }
}

/* The body as one JSON value; 400 with json-c's reason and the byte where it stopped. */
static json_object *parse_body(const req_t *r, outcome_t *o) {
    if (!r->len) return FAIL(o, 400, "malformed JSON: the body is empty"), NULL;
    json_tokener *t = json_tokener_new_ex(32);
    if (!t) return FAIL(o, 500, "out of memory"), NULL;
    json_object *v = json_tokener_parse_ex(t, r->body, (int)r->len);
    enum json_tokener_error e = json_tokener_get_error(t);
    size_t end = json_tokener_get_parse_end(t);
    json_tokener_free(t);
    if (e == json_tokener_continue)
        return json_object_put(v), FAIL(o, 400, "malformed JSON: the body ends early"), NULL;
    if (e != json_tokener_success)
        return json_object_put(v), FAIL(o, 400, "malformed JSON at byte %zu: %s", end, json_tokener_error_desc(e)),
               NULL;
    for (; end < r->len; end++)
        if (!strchr(" \t\r\n", r->body[end]))
            return json_object_put(v), FAIL(o, 400, "malformed JSON at byte %zu: text after the value", end), NULL;
    return v;
}

static const cfg_circuit_t *circuit_for(const req_t *r, const char *name, outcome_t *o) {
    if (!cfg_valid_name(name)) return FAIL(o, 400, "not a circuit name: %.64s", name), NULL;
    const cfg_circuit_t *ci = cfg_circuit(&cfg, name);
    if (!ci) return FAIL(o, 404, "circuit %s is not configured", name), NULL;
    if (r->token && !api_token_allows(r->token, name))
        return FAIL(o, 403, "token %s may not use circuit %s", r->token_name, name), NULL;
    return ci;
}

/* Hands t to the workers, the request's connection suspended until it comes back. */
static void task_queue(req_t *r, task_t *t) {
    r->task = t;
    request_suspend(r);
    pthread_mutex_lock(&task_mu);
    if (todo_tail)
        todo_tail->next = t;
    else
        todo_head = t;
    todo_tail = t;
    pthread_cond_signal(&task_cv);
    pthread_mutex_unlock(&task_mu);
}

/* The answer of a task the worker handed back (the connection resumed). */
static enum MHD_Result post_job_answer(struct MHD_Connection *c, req_t *r) {
    task_t *t = r->task;
    r->task = NULL;
    enum MHD_Result ret;
    if (t->rc < 0) {
        ret = reply_error(c, t->o.code, "%s", t->o.msg);
    } else {
        json_object *ans = json_object_new_object();
        view_t vw;
        bool seen = view_load(&vw, t->id, r->token_name) == 0;
        json_object_object_add(ans, "id", json_object_new_string(t->id));
        json_object_object_add(ans, "state", json_object_new_string(seen ? state_names[vw.state] : "queued"));
        if (seen) view_free(&vw);
        char *s = strdup(json_object_to_json_string_ext(ans, JSON_C_TO_STRING_PLAIN));
        json_object_put(ans);
        ret = s ? reply_text(c, MHD_HTTP_ACCEPTED, s, t->replay ? "Idempotent-Replayed" : NULL, "true") : MHD_NO;
    }
    parts_free(&t->p);
    free(t);
    return ret;
}

static enum MHD_Result post_job(struct MHD_Connection *c, req_t *r) {
    if (r->task) return post_job_answer(c, r);
    outcome_t o = {0};
    json_object *v = parse_body(r, &o);
    if (!v) return reply_error(c, o.code, "%s", o.msg);
    json_object *jc = NULL, *jin = NULL, *jw = NULL, *jp = NULL;
    int rc = -1;
    parts_t p = {0};
    const cfg_circuit_t *ci = NULL;
    int prio = 0;
    if (!json_object_is_type(v, json_type_object)) {
        FAIL(&o, 400, "expected an object {\"circuit\": NAME, \"inputs\" or \"witnesses\": [...]}");
        goto out;
    }
    json_object_object_foreach(v, k, val) {
        (void)val;
        if (strcmp(k, "circuit") && strcmp(k, "inputs") && strcmp(k, "witnesses") && strcmp(k, "priority")) {
            FAIL(&o, 400, "unknown field \"%.64s\" (expected circuit, inputs or witnesses, priority)", k);
            goto out;
        }
    }
    json_object_object_get_ex(v, "circuit", &jc);
    json_object_object_get_ex(v, "inputs", &jin);
    json_object_object_get_ex(v, "witnesses", &jw);
    json_object_object_get_ex(v, "priority", &jp);
    if (!jc || !json_object_is_type(jc, json_type_string)) {
        FAIL(&o, 400, "\"circuit\": expected the name of a circuit (a string)");
        goto out;
    }
    if (!!jin == !!jw || (jin && !json_object_is_type(jin, json_type_array)) ||
        (jw && !json_object_is_type(jw, json_type_array))) {
        FAIL(&o, 400,
             "expected one of \"inputs\" (an array of input.json objects) or \"witnesses\" (an array of "
             "base64 .wtns)");
        goto out;
    }
    if (!(ci = circuit_for(r, json_object_get_string(jc), &o))) goto out;
    prio = ci->priority;
    if (jp &&
        (!json_object_is_type(jp, json_type_string) || (prio = cfg_parse_priority(json_object_get_string(jp))) < 0)) {
        FAIL(&o, 400, "\"priority\": expected CRITICAL, HIGH, NORMAL or LOW");
        goto out;
    }
    if (jin && !ci->wasm[0] && !ci->witness_cmd[0]) {
        FAIL(&o, 422, "circuit %s has no witness generator (wasm or witness_cmd): send \"witnesses\"", ci->name);
        goto out;
    }
    const char *key = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Idempotency-Key");
    if (key) {
        size_t kl = strlen(key);
        bool ok = kl && kl <= KEY_MAX;
        for (const char *q = key; ok && *q; q++) ok = *q >= 0x21 && *q <= 0x7e;
        if (!ok) {
            FAIL(&o, 400, "Idempotency-Key: expected 1 to %d visible ASCII characters", KEY_MAX);
            goto out;
        }
    }
    if (parts_parse(&p, jin ? jin : jw, jin != NULL, ci, &o) < 0) goto out;
    task_t *t = calloc(1, sizeof *t);
    if (!t) {
        FAIL(&o, 500, "out of memory");
        goto out;
    }
    t->r = r;
    snprintf(t->token, sizeof t->token, "%s", r->token_name);
    t->ci = ci;
    t->prio = prio;
    t->p = p; /* the task owns the inputs now */
    if (key) {
        t->has_key = true;
        snprintf(t->key, sizeof t->key, "%s", key);
        key_record_name(r->token_name, key, t->rec);
        for (task_t *q = inflight; q; q = q->inflight_next)
            if (!strcmp(q->rec, t->rec)) { /* the same key is on its way in: run again after it */
                parts_free(&t->p);
                free(t);
                json_object_put(v);
                r->follow_next = q->followers;
                q->followers = r;
                request_suspend(r);
                return MHD_YES;
            }
        t->inflight_next = inflight;
        inflight = t;
    }
    json_object_put(v);
    task_queue(r, t);
    return MHD_YES;
out:
    json_object_put(v);
    parts_free(&p);
    (void)rc;
    return reply_error(c, o.code, "%s", o.msg);
}

/* GET /v1/jobs/ID[?wait=S]: answers now, or suspends the connection until the job ends */
static enum MHD_Result get_job(struct MHD_Connection *c, req_t *r) {
    double wait_s = 0;
    const char *w = r->deadline_ns ? NULL : MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "wait");
    if (w) {
        char *end;
        wait_s = strtod(w, &end);
        if (!*w || *end || !(wait_s >= 0) || wait_s > 1e6)
            return reply_error(c, MHD_HTTP_BAD_REQUEST, "wait=%.32s: expected seconds (at most [api] max_wait = %u)", w,
                               cfg.api_max_wait);
        if (wait_s > cfg.api_max_wait) wait_s = cfg.api_max_wait;
    }
    view_t v;
    if (view_load(&v, r->id, r->token_name) < 0) return reply_error(c, MHD_HTTP_NOT_FOUND, "no job %s", r->id);
    uint64_t now = mono_ns();
    if (!terminal(v.state) && (w ? wait_s > 0 : r->deadline_ns > now)) {
        /* first time: until wait_s from now; woken for another job of the folder: until the same end */
        view_free(&v);
        waiter_add(r, w ? now + (uint64_t)(wait_s * 1e9) : r->deadline_ns);
        return MHD_YES;
    }
    json_object *o = view_json(&v);
    view_free(&v);
    return reply_json(c, MHD_HTTP_OK, o);
}

static enum MHD_Result delete_job(struct MHD_Connection *c, req_t *r) {
    view_t v;
    if (view_load(&v, r->id, r->token_name) < 0) return reply_error(c, MHD_HTTP_NOT_FOUND, "no job %s", r->id);
    view_free(&v);
    spool_place_t place;
    char why[1600];
    int k = job_cancel(&cfg, r->id, &place, why, sizeof why);
    if (k == -ESRCH) return reply_error(c, MHD_HTTP_NOT_FOUND, "no job %s", r->id);
    if (k == -EALREADY) return reply_error(c, MHD_HTTP_CONFLICT, "job %s has already finished", r->id);
    if (k < 0) return reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", why);
    json_object *o = json_object_new_object();
    json_object_object_add(o, "id", json_object_new_string(r->id));
    json_object_object_add(o, "state", json_object_new_string(k == 1 ? "cancelling" : "cancelled"));
    return reply_json(c, MHD_HTTP_ACCEPTED, o);
}

static enum MHD_Result get_circuits(struct MHD_Connection *c, req_t *r) {
    json_object *a = json_object_new_array();
    for (uint32_t i = 0; i < cfg.n_circuits; i++) {
        const cfg_circuit_t *ci = &cfg.circuits[i];
        if (r->token && !api_token_allows(r->token, ci->name)) continue;
        const circuit_info_t *in = circuit_info(ci);
        json_object *o = json_object_new_object();
        json_object_object_add(o, "name", json_object_new_string(ci->name));
        json_object_object_add(o, "curve", in->read ? json_object_new_string(in->curve->name) : NULL);
        json_object_object_add(o, "nPublic", in->read ? json_object_new_int((int)in->n_pub) : NULL);
        json_object_object_add(o, "inputs", json_object_new_boolean(ci->wasm[0] || ci->witness_cmd[0]));
        json_object_object_add(o, "priority", json_object_new_string(cfg_priority_name(ci->priority)));
        if (!in->read) json_object_object_add(o, "error", json_object_new_string(in->error));
        json_object_array_add(a, o);
    }
    json_object *o = json_object_new_object();
    json_object_object_add(o, "circuits", a);
    return reply_json(c, MHD_HTTP_OK, o);
}

/* ---- rapidsnark proverServer's routes: the latest job of a token (or of the box, without one) ---- */

static void compat_record_name(const req_t *r, char out[80]) {
    snprintf(out, 80, "compat-%s", r->token ? r->token_name : "-");
}

static enum MHD_Result compat_status(struct MHD_Connection *c, req_t *r) {
    char rec[80], id[SPOOL_ID_MAX];
    compat_record_name(r, rec);
    json_object *o = json_object_new_object();
    view_t v;
    if (api_record_read(rec, id) < 0 || view_load(&v, id, r->token_name) < 0) {
        json_object_object_add(o, "status", json_object_new_string("ready"));
        return reply_json(c, MHD_HTTP_OK, o);
    }
    static const char *const st[] = {"busy", "busy", "success", "failed", "aborted"};
    json_object_object_add(o, "status", json_object_new_string(st[v.state]));
    json_object_object_add(o, "id", json_object_new_string(id));
    if (v.state == ST_DONE) {
        _cleanup_close_ int dfd = spool_open_dir(v.dir);
        char *proof = NULL, *pub = NULL;
        json_object_put(read_part_json(dfd, SPOOL_F_PROOF, 0, &proof));
        json_object_put(read_part_json(dfd, SPOOL_F_PUBLIC, 0, &pub));
        json_object_object_add(o, "proof", json_object_new_string(proof ? proof : ""));
        json_object_object_add(o, "pubData", json_object_new_string(pub ? pub : ""));
        free(proof);
        free(pub);
    } else if (v.state == ST_FAILED) {
        json_object_object_add(o, "error", json_object_new_string(v.has_result ? v.res.error : "failed"));
    }
    view_free(&v);
    return reply_json(c, MHD_HTTP_OK, o);
}

static enum MHD_Result compat_input(struct MHD_Connection *c, req_t *r, const char *circuit) {
    if (r->task) { /* handed back by a worker */
        task_t *t = r->task;
        r->task = NULL;
        enum MHD_Result ret = t->rc < 0 ? reply_error(c, t->o.code, "%s", t->o.msg) : compat_status(c, r);
        parts_free(&t->p);
        free(t);
        return ret;
    }
    outcome_t o = {0};
    const cfg_circuit_t *ci = circuit_for(r, circuit, &o);
    if (!ci) return reply_error(c, o.code, "%s", o.msg);
    if (!ci->wasm[0] && !ci->witness_cmd[0])
        return reply_error(c, 422, "circuit %s has no witness generator (wasm or witness_cmd)", ci->name);
    json_object *v = parse_body(r, &o);
    if (!v) return reply_error(c, o.code, "%s", o.msg);
    if (!json_object_is_type(v, json_type_object)) {
        json_object_put(v);
        return reply_error(c, 400, "expected the circuit's input.json (an object)");
    }
    json_object *arr = json_object_new_array();
    json_object_array_add(arr, v);
    task_t *t = calloc(1, sizeof *t);
    if (!t) return json_object_put(arr), MHD_NO;
    int bad = parts_parse(&t->p, arr, true, ci, &o);
    json_object_put(arr);
    if (bad) {
        parts_free(&t->p);
        free(t);
        return reply_error(c, o.code, "%s", o.msg);
    }
    t->r = r;
    t->compat = true;
    snprintf(t->token, sizeof t->token, "%s", r->token_name);
    t->ci = ci;
    t->prio = ci->priority;
    compat_record_name(r, t->rec);
    task_queue(r, t);
    return MHD_YES;
}

static enum MHD_Result compat_cancel(struct MHD_Connection *c, req_t *r) {
    char rec[80], id[SPOOL_ID_MAX];
    compat_record_name(r, rec);
    view_t v;
    if (api_record_read(rec, id) == 0 && view_load(&v, id, r->token_name) == 0) {
        bool live = !terminal(v.state);
        view_free(&v);
        spool_place_t place;
        char why[1600];
        if (live && job_cancel(&cfg, id, &place, why, sizeof why) < 0 && strcmp(why, ""))
            log_warn("cancel %s: %s", id, why);
    }
    return compat_status(c, r);
}

/* ---- routing ---- */

typedef enum {
    R_NONE,
    R_HEALTH,
    R_CIRCUITS,
    R_JOBS,
    R_JOB,
    R_C_INPUT,
    R_C_STATUS,
    R_C_CANCEL,
    R_C_STARTSTOP,
} route_t;

static bool is(const char *a, const char *b) { return !strcmp(a, b); }

/* The route of url and whether method fits it (*allow: the methods it takes). */
static route_t route_of(const char *url, const char *method, bool *ok, const char **allow) {
    route_t rt = R_NONE;
    *allow = "GET";
    if (is(url, "/healthz"))
        rt = R_HEALTH;
    else if (is(url, "/v1/circuits"))
        rt = R_CIRCUITS;
    else if (is(url, "/v1/jobs"))
        rt = R_JOBS, *allow = "POST";
    else if (!strncmp(url, "/v1/jobs/", 9))
        rt = R_JOB, *allow = "GET, DELETE";
    else if (cfg.api_compat && !strncmp(url, "/input/", 7))
        rt = R_C_INPUT, *allow = "POST";
    else if (cfg.api_compat && is(url, "/status"))
        rt = R_C_STATUS;
    else if (cfg.api_compat && is(url, "/cancel"))
        rt = R_C_CANCEL, *allow = "POST";
    else if (cfg.api_compat && (is(url, "/start") || is(url, "/stop")))
        rt = R_C_STARTSTOP, *allow = "POST";
    bool get = is(method, "GET") || is(method, "HEAD");
    switch (rt) {
    case R_JOBS:
    case R_C_INPUT:
    case R_C_CANCEL:
    case R_C_STARTSTOP:
        *ok = is(method, "POST");
        break;
    case R_JOB:
        *ok = get || is(method, "DELETE");
        break;
    default:
        *ok = get;
    }
    return rt;
}

/* The token of the request: 0, or a reply was queued (401). */
static int authorize(struct MHD_Connection *c, req_t *r, enum MHD_Result *ret) {
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!h || strncasecmp(h, "Bearer ", 7)) {
        *ret = reply_error(c, MHD_HTTP_UNAUTHORIZED, "no token: send Authorization: Bearer TOKEN");
        return -1;
    }
    const char *t = h + 7;
    while (*t == ' ') t++;
    size_t len = strlen(t);
    while (len && t[len - 1] == ' ') len--;
    r->token = len ? api_tokens_find(&tokens, t, len) : NULL;
    if (!r->token) {
        *ret = reply_error(c, MHD_HTTP_UNAUTHORIZED, "the token is not valid");
        return -1;
    }
    snprintf(r->token_name, sizeof r->token_name, "%s", r->token->name);
    return 0;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **state) {
    (void)cls, (void)version;
    req_t *r = *state;
    bool ok;
    const char *allow;
    route_t rt = route_of(url, method, &ok, &allow);
    if (!r) { /* the first call: headers only */
        http_guard_request_begin(c);
        requests++;
        if (!(r = calloc(1, sizeof *r))) return MHD_NO;
        r->conn = c;
        *state = r;
        if (!http_host_allowed(MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST), hostname,
                               cfg.api_hosts))
            return reply_error(c, MHD_HTTP_MISDIRECTED_REQUEST,
                               "this Host is not served: use the address, localhost or a name in [api] hosts");
        if (rt == R_NONE)
            return reply_error(c, MHD_HTTP_NOT_FOUND,
                               "no route %.200s: try /v1/jobs, /v1/jobs/ID, /v1/circuits, /healthz%s", url,
                               cfg.api_compat ? ", /input/CIRCUIT, /status, /cancel" : "");
        if (!ok) {
            char *s = strdup("{\"error\":\"method not allowed\"}");
            return s ? reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, s, "Allow", allow) : MHD_NO;
        }
        if (rt == R_JOB) {
            const char *id = url + 9;
            if (!spool_valid_id(id)) return reply_error(c, MHD_HTTP_BAD_REQUEST, "not a job id: %.64s", id);
            snprintf(r->id, sizeof r->id, "%s", id);
        }
        bool open = rt == R_HEALTH || (rt >= R_C_INPUT && cfg.api_compat == CFG_COMPAT_OPEN);
        enum MHD_Result ret;
        if (!open && authorize(c, r, &ret) < 0) return ret;
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > cfg.api_max_body)
            return reply_error(c, MHD_HTTP_CONTENT_TOO_LARGE,
                               "the body has %.20s bytes, more than [api] max_body (%llu)", cl,
                               (unsigned long long)cfg.api_max_body);
        r->started = true;
        return MHD_YES;
    }
    if (!r->started) return MHD_NO; /* a reply was queued at the first call and the client sends on */
    if (*upload_size) {
        /* a body without Content-Length past max_body (MHD takes a reply only once the body is
         * in): the rest is counted, not kept, and the reply is 413; one twice as large is cut off */
        if (r->too_big || r->len + *upload_size > cfg.api_max_body) {
            r->too_big = true;
            r->skipped += *upload_size;
            *upload_size = 0;
            return r->skipped > cfg.api_max_body ? MHD_NO : MHD_YES;
        }
        if (r->len + *upload_size + 1 > r->cap) {
            size_t cap = r->cap ? r->cap : 4096;
            while (cap < r->len + *upload_size + 1) cap *= 2;
            char *b = realloc(r->body, cap);
            if (!b) return MHD_NO;
            r->body = b, r->cap = cap;
        }
        memcpy(r->body + r->len, upload, *upload_size);
        r->len += *upload_size;
        r->body[r->len] = 0;
        *upload_size = 0;
        return MHD_YES;
    }
    if (r->too_big)
        return reply_error(c, MHD_HTTP_CONTENT_TOO_LARGE, "the body is larger than [api] max_body (%llu)",
                           (unsigned long long)cfg.api_max_body);
    switch (rt) {
    case R_HEALTH: {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "status", json_object_new_string("ok"));
        json_object_object_add(o, "spool", json_object_new_string(cfg.spool));
        int64_t free_b = spool_free_bytes(cfg.spool);
        json_object_object_add(o, "accepting", json_object_new_boolean(free_b < 0 || (uint64_t)free_b > cfg.min_free));
        return reply_json(c, MHD_HTTP_OK, o);
    }
    case R_CIRCUITS:
        return get_circuits(c, r);
    case R_JOBS:
        return post_job(c, r);
    case R_JOB:
        return is(method, "DELETE") ? delete_job(c, r) : get_job(c, r);
    case R_C_INPUT:
        return compat_input(c, r, url + 7);
    case R_C_STATUS:
    case R_C_STARTSTOP:
        return compat_status(c, r);
    case R_C_CANCEL:
        return compat_cancel(c, r);
    default:
        return MHD_NO;
    }
}

/* ---- the loop ---- */

/* URLs are taken as sent: nothing on the routes needs an escape, and an unescaped %00 or %2F could
 * make a path look like an id (a job id or circuit name with '%' is refused as such). */
static size_t no_unescape(void *cls, struct MHD_Connection *c, char *s) {
    (void)cls, (void)c;
    return strlen(s);
}

static void on_hup(int sig) {
    (void)sig;
    reload = 1;
}

static void wake_id(const char *id) {
    for (req_t *r = waiters, *n; r; r = n) {
        n = r->next;
        if (!id || !strcmp(r->id, id)) waiter_wake(r);
    }
}

/* Tasks handed back: their connections resume (the handler answers from the task), and the
 * requests that waited behind a keyed one run again (they now find its record). */
static void drain_done(void) {
    uint64_t n;
    (void)!read(done_fd, &n, sizeof n);
    pthread_mutex_lock(&task_mu);
    task_t *list = done_list;
    done_list = NULL;
    pthread_mutex_unlock(&task_mu);
    bool any = false;
    for (task_t *t = list, *next; t; t = next) {
        next = t->next;
        if (t->has_key)
            for (task_t **q = &inflight; *q; q = &(*q)->inflight_next)
                if (*q == t) {
                    *q = t->inflight_next;
                    break;
                }
        for (req_t *f = t->followers, *fn; f; f = fn) {
            fn = f->follow_next;
            request_resume(f);
        }
        if (t->rc == 0 && !t->replay) submitted++, any = true;
        request_resume(t->r);
    }
    if (any) wake_synthds();
}

static void drain_inotify(int fd) {
    char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        for (char *p = buf; p < buf + n;) {
            struct inotify_event *e = (struct inotify_event *)p;
            if (e->mask & IN_Q_OVERFLOW)
                wake_id(NULL);
            else if (e->len)
                wake_id(e->name);
            p += sizeof *e + e->len;
        }
}

int main(int argc, char **argv) {
    daemon_args_t args;
    int ex;
    if (!daemon_parse_args(argc, argv, "zkpipe-api",
                           "Takes proof jobs over HTTP on [api] listen (default 127.0.0.1:9080): POST /v1/jobs,\n"
                           "GET /v1/jobs/ID[?wait=S], DELETE /v1/jobs/ID, GET /v1/circuits, GET /healthz, and with\n"
                           "[api] rapidsnark_compat rapidsnark proverServer's /input/CIRCUIT, /status, /cancel.\n"
                           "Tokens ([api] tokens, mode 0600) are read again on SIGHUP. docs/api.md",
                           false, &args, &ex))
        return ex;
    log_init("zkpipe-api");
    daemon_signals_init();
    struct sigaction sa_hup = {.sa_handler = on_hup};
    sigaction(SIGHUP, &sa_hup, NULL);
    char err[1600];
    if (cfg_load(&cfg, args.config, err, sizeof err) < 0) {
        log_err("%s", err);
        return 1;
    }
    if (api_tokens_load(&tokens, cfg.api_tokens, &cfg, err, sizeof err) < 0) {
        log_err("%s", err);
        return 1;
    }
    if (spool_init(cfg.spool, err, sizeof err) < 0) {
        log_err("%s", err);
        return 1;
    }
    snprintf(api_dir, sizeof api_dir, "%s/api", cfg.spool);
    if (mkdir(api_dir, 0770) < 0 && errno != EEXIST) {
        log_err("%s: cannot create: %s", api_dir, strerror(errno));
        return 1;
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < cfg.api_max_connections + 64u) {
        rl.rlim_cur = rl.rlim_max < cfg.api_max_connections + 64u ? rl.rlim_max : cfg.api_max_connections + 64u;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
    http_hostname(hostname, sizeof hostname);
    http_guard_init(&guard, cfg.api_max_connections, cfg.api_max_connections / 8, IDLE_S, REQUEST_S);
    struct sockaddr_storage sa = {0};
    unsigned flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME;
    if (strchr(cfg.api_host, ':')) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&sa;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons(cfg.api_port);
        inet_pton(AF_INET6, cfg.api_host, &a->sin6_addr);
        flags |= MHD_USE_IPv6;
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&sa;
        a->sin_family = AF_INET;
        a->sin_port = htons(cfg.api_port);
        inet_pton(AF_INET, cfg.api_host, &a->sin_addr);
    }
    struct MHD_Daemon *d =
        MHD_start_daemon(flags, cfg.api_port, NULL, NULL, handle, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                         MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_S + 5, MHD_OPTION_CONNECTION_LIMIT,
                         cfg.api_max_connections, MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u, MHD_OPTION_NOTIFY_CONNECTION,
                         http_guard_notify, &guard, MHD_OPTION_NOTIFY_COMPLETED, request_done, NULL,
                         MHD_OPTION_UNESCAPE_CALLBACK, no_unescape, NULL, MHD_OPTION_END);
    if (!d) {
        log_err("%s: cannot listen on %s:%u (%s): [api] listen", cfg.path, cfg.api_host, cfg.api_port, strerror(errno));
        return 1;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_EPOLL_FD);
    int ep = epoll_create1(EPOLL_CLOEXEC), in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (!di || ep < 0 || in < 0) {
        log_err("cannot set up the event loop: %s", strerror(errno));
        return 1;
    }
    for (spool_place_t p = SPOOL_DONE; p <= SPOOL_FAILED; p++) {
        char dir[1400];
        spool_path(dir, sizeof dir, cfg.spool, p, NULL);
        if (inotify_add_watch(in, dir, IN_MOVED_TO | IN_CREATE | IN_ONLYDIR) < 0) {
            log_err("%s: cannot watch: %s", dir, strerror(errno));
            return 1;
        }
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = di->epoll_fd};
    epoll_ctl(ep, EPOLL_CTL_ADD, di->epoll_fd, &ev);
    ev.data.fd = in;
    epoll_ctl(ep, EPOLL_CTL_ADD, in, &ev);
    done_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    pthread_t workers[WORKERS];
    if (done_fd < 0) {
        log_err("cannot set up the event loop: %s", strerror(errno));
        return 1;
    }
    ev.data.fd = done_fd;
    epoll_ctl(ep, EPOLL_CTL_ADD, done_fd, &ev);
    for (int i = 0; i < WORKERS; i++)
        if ((errno = pthread_create(&workers[i], NULL, worker_main, NULL))) {
            log_err("cannot start the submission threads: %s", strerror(errno));
            return 1;
        }
    daemon_notify_ready("serving");
    log_info("Serving %s on http://%s%s%s:%u/ (%zu tokens%s)", cfg.spool, strchr(cfg.api_host, ':') ? "[" : "",
             cfg.api_host, strchr(cfg.api_host, ':') ? "]" : "", cfg.api_port, tokens.n,
             cfg.api_compat == CFG_COMPAT_OPEN    ? ", rapidsnark routes without a token"
             : cfg.api_compat == CFG_COMPAT_TOKEN ? ", rapidsnark routes with a token"
                                                  : "");
    int wait_ms = daemon_wait_ms(1000);
    uint64_t beat = mono_ns();
    while (!daemon_stop) {
        if (reload) {
            reload = 0;
            if (api_tokens_load(&tokens, cfg.api_tokens, &cfg, err, sizeof err) < 0)
                log_warn("%s (the tokens read before stay in use)", err);
            else
                log_info("Read %s again: %zu tokens", cfg.api_tokens, tokens.n);
        }
        int ms = 200;
        MHD_UNSIGNED_LONG_LONG to;
        if (MHD_get_timeout(d, &to) == MHD_YES && to < (MHD_UNSIGNED_LONG_LONG)ms) ms = (int)to;
        uint64_t now = mono_ns();
        for (req_t *r = waiters; r; r = r->next) {
            int left = r->deadline_ns > now ? (int)((r->deadline_ns - now) / 1000000 + 1) : 0;
            if (left < ms) ms = left;
        }
        struct epoll_event evs[4];
        (void)epoll_wait(ep, evs, 4, ms);
        drain_done();
        drain_inotify(in);
        now = mono_ns();
        for (req_t *r = waiters, *n; r; r = n) {
            n = r->next;
            if (r->deadline_ns <= now) waiter_wake(r);
        }
        MHD_run(d);
        http_guard_reap(&guard);
        if ((mono_ns() - beat) / 1000000 >= (uint64_t)wait_ms) {
            beat = mono_ns();
            daemon_notify_watchdog();
            daemon_notify_status("%llu requests, %llu jobs submitted, %u connections", requests, submitted, guard.open);
        }
    }
    daemon_notify_stopping();
    pthread_mutex_lock(&task_mu);
    workers_stop = true; /* queued submissions are finished first */
    pthread_cond_broadcast(&task_cv);
    pthread_mutex_unlock(&task_mu);
    for (int i = 0; i < WORKERS; i++) pthread_join(workers[i], NULL);
    drain_done();
    wake_id(NULL);
    MHD_run(d);
    MHD_stop_daemon(d);
    if (attached) shm_close(&S);
    api_tokens_free(&tokens);
    return 0;
}
