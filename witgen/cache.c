/* The default cache of compiled generators, one place for `zkpipe witness` and libzkpipe. */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "witgen.h"

const char *witgen_default_cache(char *buf, size_t cap) {
    const char *e = getenv("ZKPIPE_CACHE");
    if (e && e[0]) return e;
    e = getenv("XDG_CACHE_HOME");
    if (e && e[0]) {
        snprintf(buf, cap, "%s/zkpipe", e);
        return buf;
    }
    e = getenv("HOME");
    if (!e || !e[0]) {
        const struct passwd *pw = getpwuid(geteuid());
        e = pw && pw->pw_dir && pw->pw_dir[0] == '/' && strcmp(pw->pw_dir, "/") ? pw->pw_dir : NULL;
    }
    if (e) {
        snprintf(buf, cap, "%s/.cache/zkpipe", e);
        return buf;
    }
    e = getenv("XDG_RUNTIME_DIR");
    if (e && e[0] == '/') {
        snprintf(buf, cap, "%s/zkpipe-cache", e);
        return buf;
    }
    return NULL;
}
