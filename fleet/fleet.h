/* The fleet queue (docs/fleet.md): one PostgreSQL database that many boxes claim jobs from. Shared
 * by zkpipe-feeder (feeder/) and the zkpipe CLI (cli/db.c). Plain SQL, no extensions, so that it
 * also runs on PostgreSQL-compatible distributed databases.
 *
 * Invariants:
 * - A job is claimed only while it is queued or its lease has lapsed; each claim increments
 *   lease_gen in the same statement (FOR UPDATE SKIP LOCKED: two boxes never claim one job at once).
 * - A result is written only in the transaction that also ends the job, and only while the job is
 *   still leased at the writer's generation (the fence): a box that lost its lease, or whose job
 *   another box claimed since, writes nothing; a job has at most one set of results.
 * - Every function returns a negative value with one line in err on a database error; when
 *   PQstatus says the connection broke (or a call timed out: nothing waits on the server unbounded,
 *   fleet_set_deadline), the caller drops it and reconnects (every step here can be repeated);
 *   otherwise the database refused that statement, and the caller fails that one job.
 * - Every text written is valid UTF-8 (text_utf8_escape, base/text.h). */
#pragma once
#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The schema this binary knows; a database at a newer version is refused. */
#define FLEET_SCHEMA_VERSION 1
#define FLEET_ID_MAX 48
#define FLEET_ERR_MAX 1200
/* A call gives up (and the connection is dropped) when the server sends nothing for this long (plus
 * 1 s per MiB the call sent: a large input is stored before the answer): a stopped, hung or cut-off
 * server. A connection's handshake gives up after FLEET_CONNECT_MS. */
#define FLEET_IDLE_MS 15000u
#define FLEET_CONNECT_MS 5000u

/* Loads libpq (fleet/pq_lazy.c: programs that include fleet/ do not link it, so that the CLI's
 * one-shot commands do not pay for its libraries at every start); fleet_connect calls it. -ELIBACC
 * with err when it cannot be loaded. */
int fleet_pq_load(char *err, size_t errlen);
/* Connects (dsn: a libpq connection string or URI). NULL with err on failure. */
PGconn *fleet_connect(const char *dsn, char *err, size_t errlen);
/* Every later connect and call also gives up at deadline_ns (CLOCK_MONOTONIC; 0: none): zkpipe wait
 * --timeout returns on time even when the server stopped answering mid-query. */
void fleet_set_deadline(uint64_t deadline_ns);
/* LISTEN channel (a fixed name). */
int fleet_listen(PGconn *pg, const char *channel, char *err, size_t errlen);
/* Creates or migrates the schema to FLEET_SCHEMA_VERSION in one transaction, idempotent.
 * *ret_from: the version found (0: none). -EPROTO when the database is newer. */
int fleet_db_init(PGconn *pg, int *ret_from, char *err, size_t errlen);
/* The database's schema version is this binary's (-EPROTO when newer, -ENOENT when older or none). */
int fleet_check_schema(PGconn *pg, char *err, size_t errlen);

/* Queues a job of n partitions (inputs as bytes: .wtns files, or input.json texts when json) through
 * the SQL function zkpipe_submit; the new job's id into id. */
int fleet_submit(PGconn *pg, const char *circuit, int prio, const void *const *inputs, const size_t *lens, uint32_t n,
                 bool json, char id[FLEET_ID_MAX], char *err, size_t errlen);

typedef struct fleet_claim {
    char id[FLEET_ID_MAX];
    char circuit[64];
    int prio;
    int64_t gen;
    uint32_t n_parts;
    uint64_t submit_ns; /* CLOCK_REALTIME */
    bool inputs;        /* the partitions are circuit inputs (input.json), not .wtns */
} fleet_claim_t;
/* Claims at most max queued (or lapsed) jobs of the given circuits for box, in priority then
 * submission order, leased for lease_s seconds; one statement. A lapsed job already claimed
 * max_attempts times is not claimed again (0: no cap; see fleet_give_up_lapsed). Returns how many
 * (into out, in that order). The n_held jobs named in held are box's own live leases: one of them
 * that lapsed (the box was only late renewing: stopped, or the database was) is not claimed again
 * (fleet_renew keeps it). A claimed job whose id does not fit fleet_claim_t.id (it is no spool
 * id) is failed here with that reason and not returned; the caller checks every other id. */
int fleet_claim(PGconn *pg, const char *box, const char *const *circuits, uint32_t n_circuits,
                const char *const *held, uint32_t n_held, uint32_t max, uint32_t lease_s, uint32_t max_attempts,
                fleet_claim_t *out, char *err, size_t errlen);

typedef struct fleet_lapsed {
    char id[FLEET_ID_MAX];
    uint32_t attempts;
    char last_owner[64];
} fleet_lapsed_t;
/* Ends as failed, with the reason, at most max jobs of these circuits whose lease lapsed after
 * max_attempts claims (every box that took it died, hung or was cut off: a job that kills its
 * box is not handed to box after box forever), and notifies their waiters; one transaction.
 * The lapsed owner's late write-back is then refused by the fence. A job box holds (held, as in
 * fleet_claim) is never given up: it is late, not lapsed. Returns how many (into out);
 * 0 when max_attempts is 0. */
int fleet_give_up_lapsed(PGconn *pg, const char *box, const char *const *circuits, uint32_t n_circuits,
                         const char *const *held, uint32_t n_held, uint32_t max_attempts, fleet_lapsed_t *out,
                         uint32_t max, char *err, size_t errlen);
/* The sizes of a job's n_parts inputs into lens, compared with cap on the server's answer before
 * any input is sent: -EINVAL with err when the rows are not exactly partitions 0..n_parts-1,
 * -EFBIG when one is larger than cap, or a database error (then PQstatus tells). */
int fleet_input_sizes(PGconn *pg, const char *id, uint32_t n_parts, uint64_t cap, uint64_t *lens, char *err,
                      size_t errlen);
/* Input k of a job (binary: row 0, column 0), sent only while it is still len bytes, so that the
 * caller holds one input at a time. NULL with err when the row changed or on a database error
 * (then PQstatus tells). PQclear it. */
PGresult *fleet_input(PGconn *pg, const char *id, uint32_t k, uint64_t len, char *err, size_t errlen);
/* Gives a claimed job back to the queue (queued, no owner) with the claim's attempt undone, while
 * box still holds it at gen: the box could not take it in for a reason of its own (its spool full),
 * which must not count against the job's max_attempts. 1 given back, 0 no longer this claim's. */
int fleet_release(PGconn *pg, const char *box, const char *id, int64_t gen, char *err, size_t errlen);
/* Extends the lease. 1 renewed, 0 lost (another generation, or the job ended). */
int fleet_renew(PGconn *pg, const char *box, const char *id, int64_t gen, uint32_t lease_s, char *err, size_t errlen);
/* The fenced write-back of a finished local job directory (result.json, proof-<k>.json,
 * public-<k>.json): results, timings and the final state in one transaction. 1 written, 0 refused
 * by the fence (nothing written). The error text is made valid UTF-8 (text_utf8_escape, base/text.h); a proof
 * or public file that is not UTF-8 is -EILSEQ (the caller fails the job with the reason). */
int fleet_write_back(PGconn *pg, const char *box, const char *id, int64_t gen, const char *dir, char *err,
                     size_t errlen);
/* Ends a claimed job as failed with reason (fenced as above; the reason made valid UTF-8), for a job
 * that cannot enter the spool or be written back. 1 written, 0 fenced. */
int fleet_fail(PGconn *pg, const char *box, const char *id, int64_t gen, const char *reason, char *err, size_t errlen);
/* The box's row: circuits it serves, capacity (slabs), heartbeat = now. */
int fleet_heartbeat(PGconn *pg, const char *box, const char *circuits, uint32_t capacity, char *err, size_t errlen);

/* The job's state ("queued", "leased", "done", "failed", "cancelled"), error and partition count.
 * -ENOENT when there is no such job. */
int fleet_job_state(PGconn *pg, const char *id, char *state, size_t slen, char *error, size_t elen, uint32_t *n_parts,
                    char *err, size_t errlen);
bool fleet_state_final(const char *state);
/* A job's partitions: idx, proof, public, box (text), in index order. NULL with err. PQclear it. */
PGresult *fleet_results(PGconn *pg, const char *id, char *err, size_t errlen);
/* zkpipe status --dsn: boxes (heartbeat age, leases held), jobs by state, the leases. */
int fleet_print_status(PGconn *pg, FILE *f, char *err, size_t errlen);
