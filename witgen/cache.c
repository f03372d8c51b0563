/* The default cache of compiled generators, one place for `zkpipe witness` and libzkpipe. */
#include <stdio.h>
#include <stdlib.h>

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
    snprintf(buf, cap, "%s/.cache/zkpipe", e && e[0] ? e : "/tmp");
    return buf;
}
