/* The fleet queue: schema, claims, leases, the fenced write-back (fleet/fleet.h, docs/fleet.md). */
#include "fleet/fleet.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "base/text.h"
#include "spool/spool.h"
#include "config/shared.h"

/* Migration k (1-based) takes the schema from version k-1 to k. Plain SQL: tables, one index and
 * one SQL-language function; no extensions, no triggers, no PL/pgSQL. */
static const char *const migrations[FLEET_SCHEMA_VERSION] = {
    /* 1: jobs, partitions, boxes, zkpipe_submit() */
    "CREATE TABLE zkpipe_jobs ("
    " id text PRIMARY KEY,"
    " circuit text NOT NULL,"
    " priority integer NOT NULL DEFAULT 2 CHECK (priority BETWEEN 0 AND 3),"
    " submitted timestamptz NOT NULL DEFAULT now(),"
    " n_parts integer NOT NULL CHECK (n_parts BETWEEN 1 AND 256),"
    " state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'leased', 'done', 'failed', 'cancelled')),"
    " attempts integer NOT NULL DEFAULT 0,"
    " error text,"
    " lease_owner text,"
    " lease_expiry timestamptz,"
    " lease_gen bigint NOT NULL DEFAULT 0,"
    " finished timestamptz,"
    " total_ms double precision,"
    " inputs boolean NOT NULL DEFAULT false);" /* partitions are circuit inputs (input.json), not .wtns */
    "CREATE INDEX zkpipe_jobs_claim ON zkpipe_jobs (state, priority, submitted);"
    "CREATE TABLE zkpipe_partitions ("
    " job text NOT NULL REFERENCES zkpipe_jobs (id) ON DELETE CASCADE,"
    " idx integer NOT NULL CHECK (idx >= 0),"
    " input bytea NOT NULL,"
    " proof text,"
    " public text,"
    " queue_ms double precision, synth_ms double precision, ready_wait_ms double precision,"
    " gpu_ms double precision, finalize_ms double precision,"
    " box text,"
    " PRIMARY KEY (job, idx));"
    "CREATE TABLE zkpipe_boxes ("
    " name text PRIMARY KEY,"
    " circuits text NOT NULL DEFAULT '',"
    " capacity integer NOT NULL DEFAULT 0,"
    " heartbeat timestamptz NOT NULL DEFAULT now());"
    /* Submission from any language: SELECT zkpipe_submit('circuit', 'NORMAL', ARRAY[w0, w1]::bytea[]),
     * or with circuit inputs (input.json texts): zkpipe_submit('circuit', 'NORMAL', ARRAY[...], true) */
    "CREATE FUNCTION zkpipe_submit(p_circuit text, p_priority text, p_inputs bytea[], p_json boolean DEFAULT false)"
    " RETURNS text LANGUAGE sql AS $zk$"
    " WITH j AS (INSERT INTO zkpipe_jobs (id, circuit, priority, n_parts, inputs) VALUES ("
    "   to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYYMMDD\"T\"HH24MISS.US') || '-' ||"
    "   substr(md5(random()::text || clock_timestamp()::text), 1, 6),"
    "   p_circuit,"
    "   CASE upper(coalesce(p_priority, 'NORMAL')) WHEN 'CRITICAL' THEN 0 WHEN 'HIGH' THEN 1 WHEN 'NORMAL' THEN 2"
    "   WHEN 'LOW' THEN 3 ELSE ('zkpipe_submit: priority must be CRITICAL, HIGH, NORMAL or LOW, not '"
    "   || p_priority)::integer END,"
    "   coalesce(cardinality(p_inputs), 0), coalesce(p_json, false)) RETURNING id),"
    " p AS (INSERT INTO zkpipe_partitions (job, idx, input)"
    "   SELECT j.id, (i.ord - 1)::integer, i.inp FROM j, unnest(p_inputs) WITH ORDINALITY AS i (inp, ord)"
    "   RETURNING 1)"
    " SELECT j.id FROM j, (SELECT pg_notify('zkpipe_jobs', p_circuit)) AS n"
    " $zk$;",
};

/* Every call waits for the server at most FLEET_IDLE_MS without a byte moving (a stopped or cut-off
 * server: the caller reconnects) and never past the deadline that fleet_set_deadline set. */
static uint64_t call_deadline_ns;
/* The connection whose last call timed out (pg_fail says so instead of libpq's "server closed") */
static const PGconn *timed_out;

void fleet_set_deadline(uint64_t deadline_ns) { call_deadline_ns = deadline_ns; }

static uint64_t mono_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Waits until the socket has events, until idle_end or the deadline: 1 ready, 0 timed out, -1 error. */
static int wait_socket(int fd, short events, uint64_t idle_end) {
    for (;;) {
        uint64_t now = mono_ns(), end = idle_end;
        if (call_deadline_ns && call_deadline_ns < end) end = call_deadline_ns;
        if (fd < 0) return -1;
        if (now >= end) return 0;
        struct pollfd p = {.fd = fd, .events = events};
        int r = poll(&p, 1, (int)((end - now + 999999) / 1000000));
        if (r > 0) return 1;
        if (r < 0 && errno != EINTR) return -1;
    }
}

/* A call that timed out: the socket is shut so that libpq marks the connection bad (the server,
 * when it runs again, sees the client gone and ends the statement); the caller reconnects. */
static void give_up(PGconn *pg) {
    timed_out = pg;
    (void)shutdown(PQsocket(pg), SHUT_RDWR);
    (void)PQconsumeInput(pg);
}

/* One query (n = 0 and no params: a string of statements, as PQexec), bounded in time as above.
 * The last result, or the first error; NULL when the connection failed or timed out. */
static PGresult *run(PGconn *pg, const char *sql, int n, const char *const *v, const int *lens, const int *fmts,
                     int result_fmt) {
    timed_out = NULL;
    if (!(n ? PQsendQueryParams(pg, sql, n, NULL, v, lens, fmts, result_fmt) : PQsendQuery(pg, sql))) return NULL;
    uint64_t idle_end = mono_ns() + FLEET_IDLE_MS * 1000000ull;
    int f;
    while ((f = PQflush(pg)) == 1) { /* a large input: the socket takes it as the server reads */
        int w = wait_socket(PQsocket(pg), POLLIN | POLLOUT, idle_end);
        if (w <= 0) return give_up(pg), NULL;
        if (!PQconsumeInput(pg)) return NULL;
        idle_end = mono_ns() + FLEET_IDLE_MS * 1000000ull;
    }
    if (f < 0) return NULL;
    /* the server stores what it was sent before it answers: 1 s more per MiB of parameters */
    uint64_t sent = 0;
    for (int i = 0; i < n; i++) sent += lens && fmts && fmts[i] ? (uint64_t)lens[i] : v[i] ? strlen(v[i]) : 0;
    uint64_t answer_ms = FLEET_IDLE_MS + (sent >> 20) * 1000;
    idle_end = mono_ns() + answer_ms * 1000000ull;
    PGresult *keep = NULL;
    for (;;) {
        while (PQisBusy(pg)) {
            int w = wait_socket(PQsocket(pg), POLLIN, idle_end);
            if (w <= 0 || (w == 1 && !PQconsumeInput(pg))) {
                if (w <= 0) give_up(pg);
                PQclear(keep);
                return NULL;
            }
            idle_end = mono_ns() + answer_ms * 1000000ull;
        }
        PGresult *r = PQgetResult(pg);
        if (!r) return keep;
        ExecStatusType st = PQresultStatus(keep);
        if (keep && st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
            PQclear(r); /* the first error stays */
        } else {
            PQclear(keep);
            keep = r;
        }
    }
}

static PGresult *exec_sql(PGconn *pg, const char *sql) { return run(pg, sql, 0, NULL, NULL, NULL, 0); }

static int pg_fail(PGconn *pg, const char *what, PGresult *r, char *err, size_t errlen) {
    const char *m = r ? PQresultErrorMessage(r) : PQerrorMessage(pg);
    if (!m || !*m) m = PQerrorMessage(pg);
    char line[FLEET_ERR_MAX];
    if (timed_out == pg && pg)
        snprintf(line, sizeof line, "no answer from the server within %s (stopped, hung or cut off)",
                 call_deadline_ns && mono_ns() >= call_deadline_ns ? "the time limit" : "the idle limit");
    else
        snprintf(line, sizeof line, "%s", m && *m ? m : "no answer");
    line[strcspn(line, "\n")] = 0;
    snprintf(err, errlen, "database %s: %s: %s", PQdb(pg) ? PQdb(pg) : "?", what, line);
    if (r) PQclear(r);
    return -EIO;
}

/* One statement that returns no rows (or whose rows are not needed). */
static int exec_cmd(PGconn *pg, const char *what, const char *sql, char *err, size_t errlen) {
    PGresult *r = exec_sql(pg, sql);
    ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) return pg_fail(pg, what, r, err, errlen);
    PQclear(r);
    return 0;
}

static PGresult *exec_params(PGconn *pg, const char *sql, int n, const char *const *v, const int *lens, const int *fmts,
                             int result_fmt) {
    return run(pg, sql, n, v, lens, fmts, result_fmt);
}

/* The connection's handshake, bounded by FLEET_CONNECT_MS and the deadline: 1 up, 0 no answer in
 * time, -1 refused or failed (PQerrorMessage says why). */
static int connect_poll(PGconn *pg) {
    uint64_t end = mono_ns() + FLEET_CONNECT_MS * 1000000ull;
    PostgresPollingStatusType st = PGRES_POLLING_WRITING;
    while (st != PGRES_POLLING_OK) {
        if (st == PGRES_POLLING_FAILED) return -1;
        int w = wait_socket(PQsocket(pg), st == PGRES_POLLING_READING ? POLLIN : POLLOUT, end);
        if (w <= 0) return w;
        st = PQconnectPoll(pg);
    }
    return 1;
}

PGconn *fleet_connect(const char *dsn, char *err, size_t errlen) {
    /* A dead server or a cut network must end a call (the feeder reconnects) instead of hanging it:
     * TCP keepalives, a user timeout of 30 s, and every wait bounded here (connect_poll, run).
     * The dsn's own settings win: it expands after ours. */
    const char *keys[] = {"connect_timeout",
                          "keepalives_idle",
                          "keepalives_interval",
                          "keepalives_count",
                          "tcp_user_timeout",
                          "application_name",
                          "dbname",
                          NULL};
    const char *vals[] = {"5", "10", "5", "3", "30000", "zkpipe", dsn, NULL};
    if (fleet_pq_load(err, errlen) < 0) return NULL;
    PGconn *pg = PQconnectStartParams(keys, vals, 1);
    int up = pg && PQstatus(pg) != CONNECTION_BAD ? connect_poll(pg) : -1;
    if (up == 1 && (PQstatus(pg) != CONNECTION_OK || PQsetnonblocking(pg, 1) != 0)) up = -1;
    if (up != 1) {
        char line[FLEET_ERR_MAX];
        const char *m = !pg       ? "out of memory"
                        : up == 0 ? "no answer in time (the server is stopped, hung or cut off)"
                                  : PQerrorMessage(pg);
        snprintf(line, sizeof line, "%s", m && *m ? m : "no answer");
        line[strcspn(line, "\n")] = 0;
        /* names the server, never the dsn itself: it may hold a password */
        snprintf(err, errlen, "cannot connect to the database %s on %s port %s: %s", pg && PQdb(pg) ? PQdb(pg) : "?",
                 pg && PQhost(pg) ? PQhost(pg) : "?", pg && PQport(pg) ? PQport(pg) : "?", line);
        PQfinish(pg);
        return NULL;
    }
    PQclear(exec_sql(pg, "SET client_min_messages = warning"));
    return pg;
}

int fleet_listen(PGconn *pg, const char *channel, char *err, size_t errlen) {
    char sql[96], what[96];
    snprintf(sql, sizeof sql, "LISTEN %s", channel);
    snprintf(what, sizeof what, "LISTEN %s", channel);
    return exec_cmd(pg, what, sql, err, errlen);
}

/* The version row, or 0 when the schema table is missing; -1 with err on errors. */
static int schema_version(PGconn *pg, bool lock, char *err, size_t errlen) {
    PGresult *r = exec_sql(pg, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'zkpipe_schema'"
                               " AND table_schema = current_schema()");
    if (PQresultStatus(r) != PGRES_TUPLES_OK) return pg_fail(pg, "reading the schema version", r, err, errlen), -1;
    bool exists = atoi(PQgetvalue(r, 0, 0)) > 0;
    PQclear(r);
    if (!exists) return 0;
    r = exec_sql(pg, lock ? "SELECT version FROM zkpipe_schema WHERE id = 1 FOR UPDATE"
                          : "SELECT version FROM zkpipe_schema WHERE id = 1");
    if (PQresultStatus(r) != PGRES_TUPLES_OK) return pg_fail(pg, "reading the schema version", r, err, errlen), -1;
    int v = PQntuples(r) ? atoi(PQgetvalue(r, 0, 0)) : 0;
    PQclear(r);
    return v;
}

static int newer_error(PGconn *pg, int v, char *err, size_t errlen) {
    snprintf(err, errlen,
             "database %s: schema version %d is newer than this zkpipe knows (%d): refusing to use it; upgrade zkpipe",
             PQdb(pg), v, FLEET_SCHEMA_VERSION);
    return -EPROTO;
}

int fleet_db_init(PGconn *pg, int *ret_from, char *err, size_t errlen) {
    if (exec_cmd(pg, "begin", "BEGIN", err, errlen) < 0) return -EIO;
    int r = exec_cmd(pg, "creating zkpipe_schema",
                     "CREATE TABLE IF NOT EXISTS zkpipe_schema (id integer PRIMARY KEY CHECK (id = 1),"
                     " version integer NOT NULL);"
                     "INSERT INTO zkpipe_schema (id, version) VALUES (1, 0) ON CONFLICT (id) DO NOTHING",
                     err, errlen);
    int v = r < 0 ? -1 : schema_version(pg, true, err, errlen); /* the row lock serialises two inits */
    if (v < 0) r = -EIO;
    if (r == 0 && ret_from) *ret_from = v;
    if (r == 0 && v > FLEET_SCHEMA_VERSION) r = newer_error(pg, v, err, errlen);
    for (int k = v; r == 0 && k < FLEET_SCHEMA_VERSION; k++) {
        char what[64];
        snprintf(what, sizeof what, "migration %d", k + 1);
        r = exec_cmd(pg, what, migrations[k], err, errlen);
    }
    if (r == 0 && v < FLEET_SCHEMA_VERSION) {
        char sql[96];
        snprintf(sql, sizeof sql, "UPDATE zkpipe_schema SET version = %d WHERE id = 1", FLEET_SCHEMA_VERSION);
        r = exec_cmd(pg, "recording the schema version", sql, err, errlen);
    }
    if (r < 0) {
        PQclear(exec_sql(pg, "ROLLBACK"));
        return r;
    }
    return exec_cmd(pg, "commit", "COMMIT", err, errlen);
}

int fleet_check_schema(PGconn *pg, char *err, size_t errlen) {
    int v = schema_version(pg, false, err, errlen);
    if (v < 0) return -EIO;
    if (v > FLEET_SCHEMA_VERSION) return newer_error(pg, v, err, errlen);
    if (v < FLEET_SCHEMA_VERSION) {
        snprintf(err, errlen, "database %s: schema version %d, this zkpipe needs %d: run zkpipe db init --dsn DSN",
                 PQdb(pg), v, FLEET_SCHEMA_VERSION);
        return -ENOENT;
    }
    return 0;
}

int fleet_submit(PGconn *pg, const char *circuit, int prio, const void *const *inputs, const size_t *lens, uint32_t n,
                 bool json, char id[FLEET_ID_MAX], char *err, size_t errlen) {
    size_t cap = 64 + (size_t)n * 16;
    char *sql = malloc(cap);
    const char **v = calloc(n + 2, sizeof *v);
    int *l = calloc(n + 2, sizeof *l), *f = calloc(n + 2, sizeof *f);
    int rc = -ENOMEM;
    if (!sql || !v || !l || !f) goto out;
    size_t o = (size_t)snprintf(sql, cap, "SELECT zkpipe_submit($1, $2, ARRAY[");
    for (uint32_t k = 0; k < n; k++) o += (size_t)snprintf(sql + o, cap - o, "%s$%u::bytea", k ? ", " : "", k + 3);
    snprintf(sql + o, cap - o, "], %s)", json ? "true" : "false");
    v[0] = circuit;
    v[1] = cfg_priority_name(prio);
    for (uint32_t k = 0; k < n; k++) {
        v[k + 2] = lens[k] ? inputs[k] : "";
        l[k + 2] = (int)lens[k];
        f[k + 2] = 1; /* binary: the bytes as they are */
    }
    PGresult *r = exec_params(pg, sql, (int)n + 2, v, l, f, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
        rc = pg_fail(pg, "zkpipe_submit", r, err, errlen);
        goto out;
    }
    snprintf(id, FLEET_ID_MAX, "%s", PQgetvalue(r, 0, 0));
    PQclear(r);
    rc = 0;
out:
    if (rc == -ENOMEM) snprintf(err, errlen, "out of memory");
    free(sql);
    free(v);
    free(l);
    free(f);
    return rc;
}

/* The circuits as a PostgreSQL array literal; names are [A-Za-z0-9_.-]: no quoting. */
/* A PostgreSQL text[] literal of the n names (circuit names and job ids: no quote or backslash in
 * them, each quoted anyway); malloc'd, NULL when out of memory. */
static char *text_array(const char *const *v, uint32_t n) {
    size_t len = 3;
    for (uint32_t i = 0; i < n; i++) len += strlen(v[i]) + 3;
    char *a = malloc(len);
    if (!a) return NULL;
    size_t o = (size_t)snprintf(a, len, "{");
    for (uint32_t i = 0; i < n; i++) o += (size_t)snprintf(a + o, len - o, "%s\"%s\"", i ? "," : "", v[i]);
    snprintf(a + o, len - o, "}");
    return a;
}

int fleet_give_up_lapsed(PGconn *pg, const char *box, const char *const *circuits, uint32_t n_circuits,
                         const char *const *held, uint32_t n_held, uint32_t max_attempts, fleet_lapsed_t *out,
                         uint32_t max, char *err, size_t errlen) {
    if (!max_attempts || !n_circuits || !max) return 0;
    char maxa[16], maxs[16];
    char *arr = text_array(circuits, n_circuits), *mine = text_array(held, n_held);
    if (!arr || !mine) return free(arr), free(mine), snprintf(err, errlen, "out of memory"), -ENOMEM;
    snprintf(maxa, sizeof maxa, "%u", max_attempts);
    snprintf(maxs, sizeof maxs, "%u", max);
    const char *v[] = {arr, maxa, maxs, box, mine};
    /* one statement (its own transaction): the waiters are notified when it commits. A job the
     * caller holds is only late renewing, not lapsed: it is renewed, never given up here. */
    PGresult *r =
        exec_params(pg,
                    "WITH g AS (UPDATE zkpipe_jobs AS j SET state = 'failed', lease_expiry = NULL, finished = now(),"
                    " error = 'its lease lapsed ' || j.attempts || ' times, the last on box ' || j.lease_owner"
                    " || ' (each box that claimed it stopped renewing: killed, hung or cut off);'"
                    " || ' not claimed again (max_attempts = ' || $2 || ')'"
                    " FROM (SELECT id FROM zkpipe_jobs WHERE circuit = ANY ($1::text[]) AND state = 'leased'"
                    "  AND lease_expiry < now() AND attempts >= $2::integer"
                    "  AND NOT (lease_owner = $4 AND id = ANY ($5::text[]))"
                    "  ORDER BY id LIMIT $3::integer FOR UPDATE SKIP LOCKED) AS c"
                    " WHERE j.id = c.id RETURNING j.id, j.attempts, j.lease_owner)"
                    " SELECT id, attempts, lease_owner, pg_notify('zkpipe_done', id)::text FROM g",
                    5, v, NULL, NULL, 0);
    free(arr);
    free(mine);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) return pg_fail(pg, "failing lapsed jobs", r, err, errlen);
    int n = PQntuples(r);
    for (int i = 0; i < n; i++) {
        snprintf(out[i].id, sizeof out[i].id, "%s", PQgetvalue(r, i, 0));
        out[i].attempts = (uint32_t)atoi(PQgetvalue(r, i, 1));
        snprintf(out[i].last_owner, sizeof out[i].last_owner, "%s", PQgetvalue(r, i, 2));
    }
    PQclear(r);
    return n;
}

int fleet_claim(PGconn *pg, const char *box, const char *const *circuits, uint32_t n_circuits,
                const char *const *held, uint32_t n_held, uint32_t max, uint32_t lease_s, uint32_t max_attempts,
                fleet_claim_t *out, char *err, size_t errlen) {
    if (!max || !n_circuits) return 0;
    char maxs[16], leases[16], maxa[16];
    char *arr = text_array(circuits, n_circuits), *mine = text_array(held, n_held);
    if (!arr || !mine) return free(arr), free(mine), snprintf(err, errlen, "out of memory"), -ENOMEM;
    snprintf(maxs, sizeof maxs, "%u", max);
    snprintf(leases, sizeof leases, "%u", lease_s);
    snprintf(maxa, sizeof maxa, "%u", max_attempts);
    const char *v[] = {box, arr, maxs, leases, maxa, mine};
    /* a lapsed job this box still holds is renewed by it (same generation), not claimed anew */
    PGresult *r = exec_params(pg,
                              "UPDATE zkpipe_jobs AS j SET state = 'leased', lease_owner = $1,"
                              " lease_expiry = now() + $4::integer * interval '1 second',"
                              " lease_gen = j.lease_gen + 1, attempts = j.attempts + 1"
                              " FROM (SELECT id FROM zkpipe_jobs WHERE circuit = ANY ($2::text[])"
                              "  AND (state = 'queued' OR (state = 'leased' AND lease_expiry < now()"
                              "   AND ($5::integer = 0 OR attempts < $5::integer)"
                              "   AND NOT (lease_owner = $1 AND id = ANY ($6::text[]))))"
                              "  ORDER BY priority, submitted, id LIMIT $3::integer FOR UPDATE SKIP LOCKED) AS c"
                              " WHERE j.id = c.id"
                              " RETURNING j.id, j.circuit, j.priority, j.lease_gen, j.n_parts,"
                              " (extract(epoch FROM j.submitted) * 1000000)::bigint, j.inputs",
                              6, v, NULL, NULL, 0);
    free(arr);
    free(mine);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) return pg_fail(pg, "claiming jobs", r, err, errlen);
    int rows = PQntuples(r), n = 0;
    for (int i = 0; i < rows; i++) {
        if ((size_t)PQgetlength(r, i, 0) >= sizeof out[0].id) { /* no spool id: failed below, by its whole id */
            char why[160];
            snprintf(why, sizeof why, "the job id (%d bytes) is not a spool id ([A-Za-z0-9._-], at most 31 characters)",
                     PQgetlength(r, i, 0));
            if (fleet_fail(pg, box, PQgetvalue(r, i, 0), strtoll(PQgetvalue(r, i, 3), NULL, 10), why, err, errlen) < 0)
                return PQclear(r), -EIO;
            continue;
        }
        fleet_claim_t *c = &out[n++];
        snprintf(c->id, sizeof c->id, "%s", PQgetvalue(r, i, 0));
        snprintf(c->circuit, sizeof c->circuit, "%s", PQgetvalue(r, i, 1));
        c->prio = atoi(PQgetvalue(r, i, 2));
        c->gen = strtoll(PQgetvalue(r, i, 3), NULL, 10);
        c->n_parts = (uint32_t)atoi(PQgetvalue(r, i, 4));
        c->submit_ns = strtoull(PQgetvalue(r, i, 5), NULL, 10) * 1000u;
        c->inputs = !strcmp(PQgetvalue(r, i, 6), "t");
    }
    PQclear(r);
    /* RETURNING has no order: priority, then submission, then id, as claimed */
    for (int i = 1; i < n; i++)
        for (int k = i; k > 0; k--) {
            fleet_claim_t *a = &out[k - 1], *b = &out[k];
            if (a->prio < b->prio || (a->prio == b->prio && a->submit_ns < b->submit_ns) ||
                (a->prio == b->prio && a->submit_ns == b->submit_ns && strcmp(a->id, b->id) <= 0))
                break;
            fleet_claim_t t = *a;
            *a = *b;
            *b = t;
        }
    return n;
}

int fleet_input_sizes(PGconn *pg, const char *id, uint32_t n_parts, uint64_t cap, uint64_t *lens, char *err,
                      size_t errlen) {
    const char *v[] = {id};
    /* the lengths only: no input is sent before the caller has them all and they fit */
    PGresult *r = exec_params(pg,
                              "SELECT idx::text AS k, octet_length(input)::text FROM zkpipe_partitions WHERE job = $1"
                              " ORDER BY idx",
                              1, v, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) return pg_fail(pg, "reading the sizes of inputs", r, err, errlen);
    uint32_t n = (uint32_t)PQntuples(r);
    bool ok = n == n_parts;
    for (uint32_t k = 0; ok && k < n; k++) ok = strtoul(PQgetvalue(r, (int)k, 0), NULL, 10) == k;
    if (!ok) {
        snprintf(err, errlen, "job %s: n_parts = %u but its partitions are not exactly 0..%u (%u rows)", id, n_parts,
                 n_parts - 1, n);
        PQclear(r);
        return -EINVAL;
    }
    for (uint32_t k = 0; k < n; k++) {
        lens[k] = strtoull(PQgetvalue(r, (int)k, 1), NULL, 10);
        if (lens[k] > cap || PQgetisnull(r, (int)k, 1)) {
            snprintf(err, errlen, "job %s: input %u: %llu bytes, more than the %llu an input of this circuit can be",
                     id, k, (unsigned long long)lens[k], (unsigned long long)cap);
            PQclear(r);
            return -EFBIG;
        }
    }
    PQclear(r);
    return 0;
}

PGresult *fleet_input(PGconn *pg, const char *id, uint32_t k, uint64_t len, char *err, size_t errlen) {
    char ks[16], lens[24];
    snprintf(ks, sizeof ks, "%u", k);
    snprintf(lens, sizeof lens, "%llu", (unsigned long long)len);
    const char *v[] = {id, ks, lens};
    /* sent only while it still has the length the caller checked (a row changed since is refused
     * by the server, not fetched) */
    PGresult *r = exec_params(pg,
                              "SELECT input, octet_length(input) = $3::bigint FROM zkpipe_partitions"
                              " WHERE job = $1 AND idx = $2::integer",
                              3, v, NULL, NULL, 1);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) return pg_fail(pg, "reading an input", r, err, errlen), NULL;
    if (PQntuples(r) != 1 || PQgetisnull(r, 0, 1) || !*PQgetvalue(r, 0, 1)) {
        snprintf(err, errlen, "job %s: input %u changed while it was being read (it was %llu bytes)", id, k,
                 (unsigned long long)len);
        PQclear(r);
        return NULL;
    }
    return r;
}

int fleet_renew(PGconn *pg, const char *box, const char *id, int64_t gen, uint32_t lease_s, char *err, size_t errlen) {
    char gens[24], leases[16];
    snprintf(gens, sizeof gens, "%lld", (long long)gen);
    snprintf(leases, sizeof leases, "%u", lease_s);
    const char *v[] = {box, id, gens, leases};
    PGresult *r = exec_params(pg,
                              "UPDATE zkpipe_jobs SET lease_expiry = now() + $4::integer * interval '1 second'"
                              " WHERE id = $2 AND lease_owner = $1 AND lease_gen = $3::bigint AND state = 'leased'",
                              4, v, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_COMMAND_OK) return pg_fail(pg, "renewing a lease", r, err, errlen);
    int n = atoi(PQcmdTuples(r));
    PQclear(r);
    return n == 1;
}

/* Ends the job, fenced (inside the write-back's transaction, or alone), and notifies its waiters
 * when that commits; 1 when this generation still held it. */
static int end_fenced(PGconn *pg, const char *box, const char *id, int64_t gen, const char *state, const char *error,
                      double total_ms, char *err, size_t errlen) {
    char gens[24], totals[32];
    snprintf(gens, sizeof gens, "%lld", (long long)gen);
    snprintf(totals, sizeof totals, "%.3f", total_ms);
    char text[FLEET_ERR_MAX];
    text_utf8_escape(error ? error : "", text, sizeof text);
    const char *v[] = {box, id, gens, state, text, totals};
    PGresult *r = exec_params(pg,
                              "UPDATE zkpipe_jobs SET state = $4, error = nullif($5, ''), lease_expiry = NULL,"
                              " finished = now(), total_ms = $6::double precision"
                              " WHERE id = $2 AND lease_owner = $1 AND lease_gen = $3::bigint AND state = 'leased'"
                              " RETURNING pg_notify('zkpipe_done', $2)::text",
                              6, v, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) return pg_fail(pg, "ending a job", r, err, errlen);
    int n = atoi(PQcmdTuples(r));
    PQclear(r);
    return n == 1;
}

int fleet_release(PGconn *pg, const char *box, const char *id, int64_t gen, char *err, size_t errlen) {
    char gens[24];
    snprintf(gens, sizeof gens, "%lld", (long long)gen);
    const char *v[] = {box, id, gens};
    /* queued again as it was before this claim: the claim's attempt is given back (fenced) */
    PGresult *r = exec_params(pg,
                              "UPDATE zkpipe_jobs SET state = 'queued', lease_owner = NULL, lease_expiry = NULL,"
                              " attempts = greatest(attempts - 1, 0)"
                              " WHERE id = $2 AND lease_owner = $1 AND lease_gen = $3::bigint AND state = 'leased'",
                              3, v, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_COMMAND_OK) return pg_fail(pg, "giving a job back", r, err, errlen);
    int n = atoi(PQcmdTuples(r));
    PQclear(r);
    return n == 1;
}

int fleet_fail(PGconn *pg, const char *box, const char *id, int64_t gen, const char *reason, char *err, size_t errlen) {
    return end_fenced(pg, box, id, gen, "failed", reason, 0, err, errlen); /* one statement, its own transaction */
}

/* proof-<k>.json or public-<k>.json, whole (spool_read_part), or NULL with err set. */
static char *read_part(int dfd, spool_file_t f, uint32_t k, char *err, size_t errlen) {
    char *buf = NULL;
    size_t len;
    return spool_read_part(dfd, f, k, &buf, &len, err, errlen) < 0 ? NULL : buf;
}

int fleet_write_back(PGconn *pg, const char *box, const char *id, int64_t gen, const char *dir, char *err,
                     size_t errlen) {
    _cleanup_close_ int dfd = spool_open_dir(dir);
    char why[FLEET_ERR_MAX];
    spool_result_t res;
    int r = dfd < 0 ? dfd : spool_read_result(dfd, &res, why, sizeof why);
    if (r < 0) {
        snprintf(err, errlen, "%s: %s", dir, dfd < 0 ? strerror(-dfd) : why);
        return -EINVAL;
    }
    const char *status = res.status;
    const char *state = !strcmp(status, "done") ? "done" : !strcmp(status, "cancelled") ? "cancelled" : "failed";
    char error[FLEET_ERR_MAX];
    snprintf(error, sizeof error, "%s", res.error);
    if (strcmp(state, "done") && !error[0]) snprintf(error, sizeof error, "the job %s on box %s", status, box);
    int rc = exec_cmd(pg, "begin", "BEGIN", err, errlen) < 0 ? -EIO : 0;
    if (rc == 0) rc = end_fenced(pg, box, id, gen, state, error, res.total_ms, err, errlen);
    size_t n = res.n_parts;
    for (size_t k = 0; rc == 1 && k < n; k++) {
        const spool_part_result_t *p = &res.parts[k];
        char *proof = NULL, *pub = NULL;
        if (!strcmp(p->status, "done")) {
            proof = read_part(dfd, SPOOL_F_PROOF, (uint32_t)k, why, sizeof why);
            pub = proof ? read_part(dfd, SPOOL_F_PUBLIC, (uint32_t)k, why, sizeof why) : NULL;
            if (pub && (!text_utf8_valid(proof) || !text_utf8_valid(pub))) {
                snprintf(err, errlen, "%s: proof-%zu.json or public-%zu.json is not UTF-8 text", dir, k, k);
                free(proof);
                free(pub);
                rc = -EILSEQ;
                break;
            }
            if (!pub) {
                snprintf(err, errlen, "%s: %s", dir, why);
                free(proof);
                rc = -EINVAL;
                break;
            }
        }
        char ks[24], ms[5][32];
        snprintf(ks, sizeof ks, "%zu", k);
        const double msv[5] = {p->queue_ms, p->synth_ms, p->ready_wait_ms, p->gpu_ms, p->finalize_ms};
        for (int i = 0; i < 5; i++) snprintf(ms[i], sizeof ms[i], "%.3f", msv[i]);
        const char *v[] = {id, ks, proof, pub, ms[0], ms[1], ms[2], ms[3], ms[4], box};
        PGresult *r = exec_params(pg,
                                  "UPDATE zkpipe_partitions SET proof = $3, public = $4, queue_ms = $5::float8,"
                                  " synth_ms = $6::float8, ready_wait_ms = $7::float8, gpu_ms = $8::float8,"
                                  " finalize_ms = $9::float8, box = $10 WHERE job = $1 AND idx = $2::integer",
                                  10, v, NULL, NULL, 0);
        free(proof);
        free(pub);
        if (PQresultStatus(r) != PGRES_COMMAND_OK) {
            rc = pg_fail(pg, "writing a partition's result", r, err, errlen);
            break;
        }
        PQclear(r);
    }
    spool_result_free(&res);
    if (rc == 1 && exec_cmd(pg, "commit", "COMMIT", err, errlen) < 0) rc = -EIO;
    if (rc != 1) PQclear(exec_sql(pg, "ROLLBACK"));
    return rc;
}

int fleet_heartbeat(PGconn *pg, const char *box, const char *circuits, uint32_t capacity, char *err, size_t errlen) {
    char caps[16];
    snprintf(caps, sizeof caps, "%u", capacity);
    const char *v[] = {box, circuits, caps};
    PGresult *r = exec_params(pg,
                              "INSERT INTO zkpipe_boxes (name, circuits, capacity, heartbeat)"
                              " VALUES ($1, $2, $3::integer, now()) ON CONFLICT (name) DO UPDATE"
                              " SET circuits = excluded.circuits, capacity = excluded.capacity, heartbeat = now()",
                              3, v, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_COMMAND_OK) return pg_fail(pg, "heartbeat", r, err, errlen);
    PQclear(r);
    return 0;
}

int fleet_job_state(PGconn *pg, const char *id, char *state, size_t slen, char *error, size_t elen, uint32_t *n_parts,
                    char *err, size_t errlen) {
    const char *v[] = {id};
    PGresult *r = exec_params(pg, "SELECT state, coalesce(error, ''), n_parts FROM zkpipe_jobs WHERE id = $1", 1, v,
                              NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) return pg_fail(pg, "reading a job", r, err, errlen);
    if (PQntuples(r) != 1) {
        PQclear(r);
        snprintf(err, errlen, "no job %s in database %s", id, PQdb(pg));
        return -ENOENT;
    }
    snprintf(state, slen, "%s", PQgetvalue(r, 0, 0));
    snprintf(error, elen, "%s", PQgetvalue(r, 0, 1));
    *n_parts = (uint32_t)atoi(PQgetvalue(r, 0, 2));
    PQclear(r);
    return 0;
}

bool fleet_state_final(const char *state) {
    return !strcmp(state, "done") || !strcmp(state, "failed") || !strcmp(state, "cancelled");
}

PGresult *fleet_results(PGconn *pg, const char *id, char *err, size_t errlen) {
    const char *v[] = {id};
    PGresult *r = exec_params(pg, "SELECT idx, proof, public, box FROM zkpipe_partitions WHERE job = $1 ORDER BY idx",
                              1, v, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) return pg_fail(pg, "reading results", r, err, errlen), NULL;
    return r;
}

static void print_rows(FILE *f, PGresult *r, const char *head) {
    fprintf(f, "%s\n", head);
    for (int i = 0; i < PQntuples(r); i++) {
        fprintf(f, " ");
        for (int k = 0; k < PQnfields(r); k++) fprintf(f, " %s %s", PQfname(r, k), PQgetvalue(r, i, k));
        fprintf(f, "\n");
    }
}

int fleet_print_status(PGconn *pg, FILE *f, char *err, size_t errlen) {
    static const struct {
        const char *head, *sql;
    } q[] = {
        {"boxes:", "SELECT name AS box, circuits, capacity,"
                   " round(extract(epoch FROM now() - heartbeat)::numeric, 1) AS heartbeat_age_s,"
                   " (SELECT count(*) FROM zkpipe_jobs j WHERE j.state = 'leased' AND j.lease_owner = b.name) AS leased"
                   " FROM zkpipe_boxes b ORDER BY name"},
        {"jobs:", "SELECT state, count(*) AS jobs, coalesce(sum(n_parts), 0) AS partitions FROM zkpipe_jobs"
                  " GROUP BY state ORDER BY state"},
        {"leases:", "SELECT id AS job, circuit, lease_owner AS owner, lease_gen AS gen, attempts,"
                    " round(extract(epoch FROM lease_expiry - now())::numeric, 1) AS expires_in_s"
                    " FROM zkpipe_jobs WHERE state = 'leased' ORDER BY priority, submitted LIMIT 50"},
    };
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        PGresult *r = exec_sql(pg, q[i].sql);
        if (PQresultStatus(r) != PGRES_TUPLES_OK) return pg_fail(pg, "status", r, err, errlen);
        print_rows(f, r, q[i].head);
        PQclear(r);
    }
    return 0;
}
