/* libpq, loaded when the first connection is made instead of when the program starts.
 *
 * The zkpipe CLI serves one-shot commands (prove, witness, verify) whose whole run is a few tens
 * of milliseconds; linking libpq made every start map its 26 libraries (OpenSSL, Kerberos, LDAP,
 * GnuTLS …) at about 3 ms of CPU per run (`perf stat` of an empty main with and without -lpq),
 * for commands that never touch a database. So nothing here links libpq: each libpq function that
 * fleet/ calls is defined below with libpq's own prototype (checked against libpq-fe.h) and goes
 * through a pointer that fleet_pq_load() resolves with dlopen("libpq.so.5") on the first
 * connection. Invariant: no PQ* function below is reached before fleet_pq_load() succeeded —
 * fleet_connect() calls it first, and every other call takes the PGconn or PGresult that only a
 * connection gives. */
#include <dlfcn.h>
#include <errno.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>

#include "fleet.h"

#define FLEET_PQ_SONAME "libpq.so.5"

/* Every libpq function fleet/, feeder/ and cli/db.c call: X(return type, name, (params), (args)) */
#define FLEET_PQ_FUNCTIONS(X)                                                                                          \
    X(PGconn *, PQconnectdbParams, (const char *const *k, const char *const *v, int expand), (k, v, expand))           \
    X(ConnStatusType, PQstatus, (const PGconn *c), (c))                                                                \
    X(char *, PQerrorMessage, (const PGconn *c), (c))                                                                  \
    X(char *, PQdb, (const PGconn *c), (c))                                                                            \
    X(char *, PQhost, (const PGconn *c), (c))                                                                          \
    X(char *, PQport, (const PGconn *c), (c))                                                                          \
    X(int, PQsocket, (const PGconn *c), (c))                                                                           \
    X(PGresult *, PQexec, (PGconn * c, const char *q), (c, q))                                                         \
    X(PGresult *, PQexecParams,                                                                                        \
      (PGconn * c, const char *q, int n, const Oid *t, const char *const *v, const int *l, const int *f, int rf),      \
      (c, q, n, t, v, l, f, rf))                                                                                       \
    X(ExecStatusType, PQresultStatus, (const PGresult *r), (r))                                                        \
    X(char *, PQresultErrorMessage, (const PGresult *r), (r))                                                          \
    X(int, PQntuples, (const PGresult *r), (r))                                                                        \
    X(int, PQnfields, (const PGresult *r), (r))                                                                        \
    X(char *, PQfname, (const PGresult *r, int i), (r, i))                                                             \
    X(char *, PQgetvalue, (const PGresult *r, int t, int f), (r, t, f))                                                \
    X(int, PQgetlength, (const PGresult *r, int t, int f), (r, t, f))                                                  \
    X(int, PQgetisnull, (const PGresult *r, int t, int f), (r, t, f))                                                  \
    X(char *, PQcmdTuples, (PGresult * r), (r))                                                                        \
    X(int, PQconsumeInput, (PGconn * c), (c))                                                                          \
    X(PGnotify *, PQnotifies, (PGconn * c), (c))                                                                       \
    X(PGconn *, PQconnectStartParams, (const char *const *k, const char *const *v, int expand), (k, v, expand))        \
    X(PostgresPollingStatusType, PQconnectPoll, (PGconn * c), (c))                                                     \
    X(int, PQsetnonblocking, (PGconn * c, int arg), (c, arg))                                                          \
    X(int, PQsendQuery, (PGconn * c, const char *q), (c, q))                                                           \
    X(int, PQsendQueryParams,                                                                                          \
      (PGconn * c, const char *q, int n, const Oid *t, const char *const *v, const int *l, const int *f, int rf),      \
      (c, q, n, t, v, l, f, rf))                                                                                       \
    X(int, PQflush, (PGconn * c), (c))                                                                                 \
    X(int, PQisBusy, (PGconn * c), (c))                                                                                \
    X(PGresult *, PQgetResult, (PGconn * c), (c))
/* … and those that return nothing */
#define FLEET_PQ_VOID_FUNCTIONS(X)                                                                                     \
    X(void, PQfinish, (PGconn * c), (c))                                                                               \
    X(void, PQclear, (PGresult * r), (r))                                                                              \
    X(void, PQfreemem, (void *p), (p))

#define FLEET_PQ_POINTER(ret, name, params, args) static ret(*p_##name) params;
FLEET_PQ_FUNCTIONS(FLEET_PQ_POINTER)
FLEET_PQ_VOID_FUNCTIONS(FLEET_PQ_POINTER)

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_error[512];

static void load(void) {
    void *h = dlopen(FLEET_PQ_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(load_error, sizeof load_error, "cannot load " FLEET_PQ_SONAME " (Debian package libpq5): %s",
                 dlerror());
        return;
    }
#define FLEET_PQ_RESOLVE(ret, name, params, args)                                                                      \
    if (!(p_##name = (ret(*) params)dlsym(h, #name))) {                                                                \
        snprintf(load_error, sizeof load_error, FLEET_PQ_SONAME " has no %s", #name);                                  \
        return;                                                                                                        \
    }
    FLEET_PQ_FUNCTIONS(FLEET_PQ_RESOLVE)
    FLEET_PQ_VOID_FUNCTIONS(FLEET_PQ_RESOLVE)
}

int fleet_pq_load(char *err, size_t errlen) {
    pthread_once(&load_once, load);
    if (!load_error[0]) return 0;
    snprintf(err, errlen, "%s", load_error);
    return -ELIBACC;
}

#define FLEET_PQ_DEFINE(ret, name, params, args)                                                                       \
    ret name params { return p_##name args; }
FLEET_PQ_FUNCTIONS(FLEET_PQ_DEFINE)
#define FLEET_PQ_DEFINE_VOID(ret, name, params, args)                                                                  \
    void name params { p_##name args; }
FLEET_PQ_VOID_FUNCTIONS(FLEET_PQ_DEFINE_VOID)
