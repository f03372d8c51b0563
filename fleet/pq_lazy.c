/* libpq, loaded when the first connection is made instead of when the program starts.
 *
 * The zkpipe CLI serves one-shot commands (prove, witness, verify) whose whole run is a few tens
 * of milliseconds; linking libpq made every start map its 26 libraries (OpenSSL, Kerberos, LDAP,
 * GnuTLS …) at about 3 ms of CPU per run (`perf stat` of an empty main with and without -lpq),
 * for commands that never touch a database. So nothing here links libpq: each libpq function that
 * fleet/ calls is defined below with libpq's own prototype (checked against libpq-fe.h) and goes
 * through a pointer that fleet_pq_load() resolves (base/lazylib.h: dlopen("libpq.so.5")) on the
 * first connection. Invariant: no PQ* function below is reached before fleet_pq_load() succeeded —
 * fleet_connect() calls it first, and every other call takes the PGconn or PGresult that only a
 * connection gives. */
#include <libpq-fe.h>

#include "base/lazylib.h"
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

FLEET_PQ_FUNCTIONS(LAZYLIB_POINTER)
FLEET_PQ_VOID_FUNCTIONS(LAZYLIB_POINTER)
static const lazylib_sym_t pq_syms[] = {FLEET_PQ_FUNCTIONS(LAZYLIB_SYM) FLEET_PQ_VOID_FUNCTIONS(LAZYLIB_SYM)};
static lazylib_t pq = LAZYLIB_INIT(FLEET_PQ_SONAME, "libpq5", pq_syms);

int fleet_pq_load(char *err, size_t errlen) { return lazylib_load(&pq, err, errlen); }

FLEET_PQ_FUNCTIONS(LAZYLIB_DEFINE)
FLEET_PQ_VOID_FUNCTIONS(LAZYLIB_DEFINE_VOID)
