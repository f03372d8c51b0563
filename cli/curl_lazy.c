/* libcurl, loaded by the first --url command instead of when the zkpipe command starts.
 *
 * Linking libcurl made every start of zkpipe map 38 shared objects (GnuTLS, OpenSSL, Kerberos,
 * LDAP, SSH, …) and run their relocations and constructors: 6.9-8.3 ms a start against 1.4 ms
 * without (bench/startup, quiet), for the one-shot commands (prove, witness, verify) that never
 * speak HTTP. So nothing links libcurl: each libcurl function cli/apiclient.c calls is defined
 * below with libcurl's own prototype (checked against curl/curl.h) and goes through a pointer that
 * curl_global_init() resolves (base/lazylib.h: dlopen("libcurl.so.4")) — apiclient.c calls it first. The same pattern as fleet/pq_lazy.c for
 * libpq. Invariant: when the load fails, curl_global_init says why on stderr and returns
 * CURLE_FAILED_INIT, and curl_easy_init returns NULL (apiclient.c's conn_open gives up), so no
 * other pointer below is reached unresolved. */
#define CURL_DISABLE_TYPECHECK /* the real function names, not curl.h's type-checking macros */
#include <curl/curl.h>
#include <stdarg.h>
#include <stdio.h>

#include "base/lazylib.h"

#define CLI_CURL_SONAME "libcurl.so.4"

/* Every fixed-argument libcurl function apiclient.c calls: X(return type, name, (params), (args)) */
#define CLI_CURL_FUNCTIONS(X)                                                                                          \
    X(struct curl_slist *, curl_slist_append, (struct curl_slist * l, const char *s), (l, s))                          \
    X(CURLcode, curl_easy_perform, (CURL * h), (h))                                                                    \
    X(const char *, curl_easy_strerror, (CURLcode c), (c))
#define CLI_CURL_VOID_FUNCTIONS(X)                                                                                     \
    X(void, curl_slist_free_all, (struct curl_slist * l), (l))                                                         \
    X(void, curl_easy_cleanup, (CURL * h), (h))                                                                        \
    X(void, curl_easy_reset, (CURL * h), (h))

CLI_CURL_FUNCTIONS(LAZYLIB_POINTER)
CLI_CURL_VOID_FUNCTIONS(LAZYLIB_POINTER)
static CURLcode (*p_curl_global_init)(long flags);
static CURL *(*p_curl_easy_init)(void);
static CURLcode (*p_curl_easy_setopt)(CURL *h, CURLoption o, ...);
static CURLcode (*p_curl_easy_getinfo)(CURL *h, CURLINFO i, ...);

static const lazylib_sym_t curl_syms[] = {
    CLI_CURL_FUNCTIONS(LAZYLIB_SYM) CLI_CURL_VOID_FUNCTIONS(LAZYLIB_SYM) LAZYLIB_SYM(, curl_global_init, , )
        LAZYLIB_SYM(, curl_easy_init, , ) LAZYLIB_SYM(, curl_easy_setopt, , ) LAZYLIB_SYM(, curl_easy_getinfo, , )};
static lazylib_t curl = LAZYLIB_INIT(CLI_CURL_SONAME, "libcurl4", curl_syms);

CURLcode curl_global_init(long flags) {
    char err[512];
    if (lazylib_load(&curl, err, sizeof err) < 0) {
        fprintf(stderr, "zkpipe: %s\n", err);
        return CURLE_FAILED_INIT;
    }
    return p_curl_global_init(flags);
}

/* NULL unless curl_global_init loaded the library */
CURL *curl_easy_init(void) { return p_curl_easy_init ? p_curl_easy_init() : NULL; }

CLI_CURL_FUNCTIONS(LAZYLIB_DEFINE)
CLI_CURL_VOID_FUNCTIONS(LAZYLIB_DEFINE_VOID)

/* The variadic two pass their one argument on by its kind, which libcurl encodes in the option's
 * number (curl.h: CURLOPTTYPE_*; every CURLINFO argument is a pointer). */
CURLcode curl_easy_setopt(CURL *h, CURLoption o, ...) {
    va_list ap;
    va_start(ap, o);
    CURLcode r;
    if (o < CURLOPTTYPE_OBJECTPOINT)
        r = p_curl_easy_setopt(h, o, va_arg(ap, long));
    else if (o < CURLOPTTYPE_FUNCTIONPOINT)
        r = p_curl_easy_setopt(h, o, va_arg(ap, void *));
    else if (o < CURLOPTTYPE_OFF_T)
        r = p_curl_easy_setopt(h, o, va_arg(ap, void (*)(void)));
    else if (o < CURLOPTTYPE_BLOB)
        r = p_curl_easy_setopt(h, o, va_arg(ap, curl_off_t));
    else
        r = p_curl_easy_setopt(h, o, va_arg(ap, void *));
    va_end(ap);
    return r;
}

CURLcode curl_easy_getinfo(CURL *h, CURLINFO i, ...) {
    va_list ap;
    va_start(ap, i);
    CURLcode r = p_curl_easy_getinfo(h, i, va_arg(ap, void *));
    va_end(ap);
    return r;
}
