/* The test hooks (base/testpoint.h). */
#include "testpoint.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t *stop_flag;

void test_point_stop_flag(volatile sig_atomic_t *stop) { stop_flag = stop; }

/* Whether one of the comma-separated specs POINT[:MS][:PART] names this point (and partition); the
 * first that does gives *ret_ms when with_ms. */
static bool match_point(const char *specs, const char *point, int part, long *ret_ms, bool with_ms) {
    size_t pl = strlen(point);
    for (const char *spec = specs; *spec;) {
        size_t n = strcspn(spec, ",");
        char one[128];
        snprintf(one, sizeof one, "%.*s", (int)n, spec);
        spec += n + (spec[n] == ',');
        if (strncmp(one, point, pl) || (one[pl] && one[pl] != ':')) continue;
        const char *p = one[pl] ? one + pl + 1 : "";
        long ms = 0;
        if (with_ms) {
            char *end;
            ms = strtol(p, &end, 10);
            p = *end == ':' ? end + 1 : end;
        }
        if (*p && atoi(p) != part) continue;
        if (with_ms) *ret_ms = ms;
        return true;
    }
    return false;
}

void test_point(const char *point, int part) {
    static int inited;
    static char pause_spec[128], delay_spec[128];
    static bool paused;
    if (!inited) {
        inited = 1;
        const char *p = getenv("ZKPIPE_TEST_PAUSE"), *d = getenv("ZKPIPE_TEST_DELAY");
        if (p) snprintf(pause_spec, sizeof pause_spec, "%s", p);
        if (d) snprintf(delay_spec, sizeof delay_spec, "%s", d);
    }
    long ms = 0;
    if (!paused && pause_spec[0] && match_point(pause_spec, point, part, &ms, false)) {
        paused = true;
        raise(SIGSTOP);
    }
    if (delay_spec[0] && match_point(delay_spec, point, part, &ms, true) && ms > 0) {
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) < 0 && !(stop_flag && *stop_flag)) {
        }
    }
}
