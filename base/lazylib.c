/* base/lazylib.h: one library opened on first use, its symbols resolved all or none. */
#include "lazylib.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

static void resolve(lazylib_t *l) {
    void *h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(l->error, sizeof l->error, "cannot load %s (Debian package %s): %s", l->soname, l->package,
                 dlerror());
        l->state = -1;
        return;
    }
    for (size_t i = 0; i < l->n_syms; i++) {
        if (!(*l->syms[i].slot = dlsym(h, l->syms[i].name))) {
            snprintf(l->error, sizeof l->error, "%s has no %s", l->soname, l->syms[i].name);
            for (size_t k = 0; k < l->n_syms; k++) *l->syms[k].slot = NULL;
            l->state = -1;
            return; /* the handle stays open: a half-used library is not unloaded under anyone */
        }
    }
    l->state = 1;
}

int lazylib_load(lazylib_t *l, char *err, size_t errlen) {
    pthread_mutex_lock(&l->lock);
    if (l->state == 0) resolve(l);
    int ok = l->state == 1;
    if (!ok && err && errlen) snprintf(err, errlen, "%s", l->error);
    pthread_mutex_unlock(&l->lock);
    return ok ? 0 : -ELIBACC;
}
