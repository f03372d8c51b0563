/* The fleet side of the CLI (docs/fleet.md): zkpipe db init, and the --dsn branches of submit, wait
 * and status. Every query is in fleet/. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/file.h"
#include "client.h"
#include "commands.h"
#include "spool/spool.h"
#include "fleet/fleet.h"
#include "shm/shm.h"

#define DB_USAGE "zkpipe db init --dsn DSN"
/* No witness of any circuit is this large (and it is the most a bytea holds); the feeder checks each
 * against its circuit's witness. An input.json has the spool's own cap, which every box refuses
 * beyond. */
#define FLEET_WTNS_CAP (1ull << 30)

static PGconn *connect_checked(const char *dsn, bool check) {
    char err[FLEET_ERR_MAX];
    PGconn *pg = fleet_connect(dsn, err, sizeof err);
    if (pg && check && fleet_check_schema(pg, err, sizeof err) < 0) {
        PQfinish(pg);
        pg = NULL;
    }
    if (!pg) fprintf(stderr, "zkpipe: %s\n", err);
    return pg;
}

int zkpipe_cmd_db(int argc, char **argv) {
    const char *config, *dsn = NULL;
    const cli_option_t opts[] = {{"dsn", 'D', "DSN", &dsn}, {0}};
    int parsed = cli_options(argc, argv, DB_USAGE,
                             "Creates the fleet's tables in the database, or migrates them to this zkpipe's schema\n"
                             "version; running it again changes nothing. A newer schema is refused.",
                             opts, &config);
    if (parsed >= 0) return parsed;
    if (!dsn || optind + 1 != argc || strcmp(argv[optind], "init")) return cli_usage_error(DB_USAGE);
    PGconn *pg = connect_checked(dsn, false);
    if (!pg) return 1;
    char err[FLEET_ERR_MAX];
    int from = 0;
    int r = fleet_db_init(pg, &from, err, sizeof err);
    PQfinish(pg);
    if (r < 0) {
        fprintf(stderr, "zkpipe: %s\n", err);
        return 1;
    }
    if (from == FLEET_SCHEMA_VERSION)
        printf("schema version %d: up to date\n", from);
    else
        printf("schema version %d: migrated from %d\n", FLEET_SCHEMA_VERSION, from);
    return 0;
}

int zkpipe_fleet_submit(const char *dsn, const char *circuit, const char *prio_s, bool json, int n, char **files) {
    int prio = prio_s ? cfg_parse_priority(prio_s) : CFG_PRIO_NORMAL;
    if (prio < 0) {
        fprintf(stderr, "zkpipe: --priority %s: expected CRITICAL, HIGH, NORMAL or LOW\n", prio_s);
        return 2;
    }
    if (n > (int)SHM_MAX_PARTS) {
        fprintf(stderr, "zkpipe: %d inputs; a job has at most %u partitions\n", n, SHM_MAX_PARTS);
        return 2;
    }
    char *bufs[SHM_MAX_PARTS] = {0};
    size_t lens[SHM_MAX_PARTS];
    char err[FLEET_ERR_MAX], id[FLEET_ID_MAX];
    int rc = 1;
    for (int k = 0; k < n; k++)
        if (file_read(AT_FDCWD, files[k], 0, json ? SPOOL_INPUT_JSON_MAX : FLEET_WTNS_CAP, 0, &bufs[k], &lens[k], err,
                      sizeof err) < 0) {
            fprintf(stderr, "zkpipe: %s\n", err);
            goto out;
        }
    PGconn *pg = connect_checked(dsn, true);
    if (!pg) goto out;
    if (fleet_submit(pg, circuit, prio, (const void *const *)bufs, lens, (uint32_t)n, json, id, err, sizeof err) < 0)
        fprintf(stderr, "zkpipe: %s\n", err);
    else
        printf("submitted %d partition%s of circuit %s, priority %s, to the fleet queue\n%s\n", n, n == 1 ? "" : "s",
               circuit, cfg_priority_name(prio), id),
            rc = 0;
    PQfinish(pg);
out:
    for (int k = 0; k < n; k++) free(bufs[k]);
    return rc;
}

static int write_out(const char *dir, const char *kind, const char *k, const char *text) {
    char path[1400];
    snprintf(path, sizeof path, "%s/%s-%s.json", dir, kind, k);
    int r = file_write_atomic(path, text, strlen(text));
    if (r < 0) fprintf(stderr, "zkpipe: %s: cannot write: %s\n", path, strerror(-r));
    return r;
}

/* Prints (and with out, writes) the results of a finished job; rc 0 (done) becomes 1 when a
 * partition has no proof, 2 when out cannot be written. */
static int write_results(PGresult *res, const char *id, int rc, const char *out) {
    for (int i = 0; i < PQntuples(res); i++) {
        const char *k = PQgetvalue(res, i, 0);
        bool have = !PQgetisnull(res, i, 1) && !PQgetisnull(res, i, 2);
        if (!rc && !have) {
            fprintf(stderr, "zkpipe: job %s is done but partition %s has no proof\n", id, k);
            rc = 1;
        }
        if (have && out &&
            (write_out(out, "proof", k, PQgetvalue(res, i, 1)) < 0 ||
             write_out(out, "public", k, PQgetvalue(res, i, 2)) < 0))
            return 2;
        if (have && out)
            printf("partition %s: box %s %s/proof-%s.json %s/public-%s.json\n", k, PQgetvalue(res, i, 3), out, k, out,
                   k);
        else if (have)
            printf("partition %s: box %s\n", k, PQgetvalue(res, i, 3));
    }
    return rc;
}

/* A connection for the wait, listening for zkpipe_done, its schema checked once: NULL with err when
 * the database cannot be reached now; *bad set when it answered with a schema this zkpipe refuses. */
static PGconn *wait_connect(const char *dsn, bool check, bool *bad, char *err, size_t errlen) {
    PGconn *pg = fleet_connect(dsn, err, errlen);
    if (pg && check && fleet_check_schema(pg, err, errlen) < 0) {
        *bad = PQstatus(pg) == CONNECTION_OK; /* it answered: no retry changes that */
        PQfinish(pg);
        return NULL;
    }
    if (pg && fleet_listen(pg, "zkpipe_done", err, errlen) < 0) {
        PQfinish(pg);
        pg = NULL;
    }
    return pg;
}

/* Exit codes (cli/main.c): 0 every partition has a proof, 1 the job failed or was cancelled or the
 * timeout passed, 2 bad usage, no such job, or an --out DIR that is missing or cannot be written.
 * A database that cannot be reached (stopped, restarting, cut off) is tried again, with back-off,
 * until the timeout; before its first answer, for at most WAIT_FIRST_S without one (a wrong DSN
 * does not wait for ever). */
#define WAIT_FIRST_S 30.0
int zkpipe_fleet_wait(const char *dsn, const char *out, double timeout, const char *id) {
    if (out) { /* before the wait, not after it */
        struct stat st;
        const char *why = stat(out, &st) < 0         ? strerror(errno)
                          : !S_ISDIR(st.st_mode)     ? "not a directory"
                          : access(out, W_OK | X_OK) ? strerror(errno)
                                                     : NULL;
        if (why) return fprintf(stderr, "zkpipe: --out %s: %s (the proofs go there)\n", out, why), 2;
    }
    uint64_t t0 = shm_now_ns();
    /* every call to the database, connections included, ends by the timeout (a stopped server) */
    if (timeout >= 0 && timeout < 1e9) fleet_set_deadline(t0 + (uint64_t)(timeout * 1e9));
    char err[FLEET_ERR_MAX] = "", state[32], error[1200];
    PGconn *pg = NULL;
    bool answered = false, bad = false;
    uint32_t n = 0;
    int backoff = 100, rc = 1;
    char known[32] = "unknown"; /* the last state read */
    for (;;) {
        double waited = (double)(shm_now_ns() - t0) / 1e9;
        int r = -EIO;
        if (!pg && !(pg = wait_connect(dsn, !answered, &bad, err, sizeof err)) &&
            (bad || (!answered && waited >= WAIT_FIRST_S))) {
            fprintf(stderr, "zkpipe: %s\n", err);
            return 1;
        }
        if (pg) r = fleet_job_state(pg, id, state, sizeof state, error, sizeof error, &n, err, sizeof err);
        if (r == 0 || r == -ENOENT) answered = true, backoff = 100;
        if (r == 0) snprintf(known, sizeof known, "%s", state);
        if (r == -ENOENT) {
            fprintf(stderr, "zkpipe: %s\n", err);
            PQfinish(pg);
            return 2;
        }
        if (r == 0 && fleet_state_final(state)) {
            rc = strcmp(state, "done") ? 1 : 0;
            PGresult *res = fleet_results(pg, id, err, sizeof err);
            if (res) {
                if (rc) fprintf(stderr, "zkpipe: job %s %s: %s\n", id, state, error);
                rc = write_results(res, id, rc, out);
                PQclear(res);
                break;
            }
            if (PQstatus(pg) == CONNECTION_OK) { /* refused, not cut off */
                fprintf(stderr, "zkpipe: %s\n", err);
                PQfinish(pg);
                return 1;
            }
            r = -EIO; /* lost while reading the results: again, from the state */
        }
        double left = timeout < 0 ? 1e9 : timeout - (double)(shm_now_ns() - t0) / 1e9;
        if (left <= 0) {
            fprintf(stderr, "zkpipe: job %s: still %s after %g s%s%s\n", id, known, timeout, r < 0 ? "; " : "",
                    r < 0 ? err : "");
            PQfinish(pg);
            return 1;
        }
        int slice = left * 1000 < 1000 ? (int)(left * 1000) + 1 : 1000;
        if (r < 0) { /* the database went away: reconnect with back-off, the job is still there */
            PQfinish(pg);
            pg = NULL;
            (void)poll(NULL, 0, backoff < slice ? backoff : slice);
            backoff = backoff * 2 > 5000 ? 5000 : backoff * 2;
            continue;
        }
        struct pollfd p = {.fd = PQsocket(pg), .events = POLLIN};
        if (poll(&p, 1, slice) > 0 && PQconsumeInput(pg)) {
            PGnotify *m;
            while ((m = PQnotifies(pg))) PQfreemem(m);
        }
    }
    PQfinish(pg);
    if (!rc) printf("job %s done (%u partitions)\n", id, n);
    return rc;
}

int zkpipe_fleet_status(const char *dsn) {
    PGconn *pg = connect_checked(dsn, true);
    if (!pg) return 1;
    char err[FLEET_ERR_MAX];
    int r = fleet_print_status(pg, stdout, err, sizeof err);
    if (r < 0) fprintf(stderr, "zkpipe: %s\n", err);
    PQfinish(pg);
    return r < 0 ? 1 : 0;
}
