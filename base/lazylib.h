/* A shared library loaded on its first use instead of linked at start (fleet/pq_lazy.c: libpq;
 * cli/curl_lazy.c: libcurl), so that a one-shot command that never needs it does not map it and
 * its dependencies. The caller keeps a pointer per function and a table naming them; lazylib_load
 * opens the library once and fills every pointer, or none. */
#pragma once
#include <pthread.h>
#include <stddef.h>

typedef struct lazylib_sym {
    const char *name; /* the symbol, as dlsym knows it */
    void **slot;      /* where its address goes: the caller's function pointer */
} lazylib_sym_t;

typedef struct lazylib {
    const char *soname;  /* "libpq.so.5" */
    const char *package; /* the Debian package that installs it, named in the error */
    const lazylib_sym_t *syms;
    size_t n_syms;
    pthread_mutex_t lock; /* PTHREAD_MUTEX_INITIALIZER */
    int state;            /* 0: not tried; 1: loaded; -1: failed, error says why */
    char error[512];
} lazylib_t;

/* For a list of the library's functions as X(return type, name, (params), (args)): the pointer of
 * each, its entry in the symbol table, and the function itself, which calls through the pointer
 * (with the library's own prototype, so that the header checks it) */
#define LAZYLIB_POINTER(ret, name, params, args) static ret(*p_##name) params;
#define LAZYLIB_SYM(ret, name, params, args) {#name, (void **)&p_##name},
#define LAZYLIB_DEFINE(ret, name, params, args)                                                                        \
    ret name params { return p_##name args; }
#define LAZYLIB_DEFINE_VOID(ret, name, params, args)                                                                   \
    void name params { p_##name args; }

#define LAZYLIB_INIT(so, pkg, table)                                                                                   \
    {.soname = (so), .package = (pkg), .syms = (table), .n_syms = sizeof(table) / sizeof((table)[0]),                 \
     .lock = PTHREAD_MUTEX_INITIALIZER}

/* Opens l's library and resolves every symbol of its table, the first time; each later call gives
 * the first one's outcome. 0, or -ELIBACC with "cannot load SONAME (Debian package P): why" or
 * "SONAME has no NAME" in err; after a failure every slot is NULL. Thread-safe. */
int lazylib_load(lazylib_t *l, char *err, size_t errlen);
