/* The test hooks (base/testpoint.h). */
#include "testpoint.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t *stop_flag;

void test_point_stop_flag(volatile sig_atomic_t *stop) { stop_flag = stop; }

static bool match_point(const char *spec, const char *point, int part, long *ret_ms, bool with_ms) {
    size_t pl = strlen(point);
    if (strncmp(spec, point, pl) || (spec[pl] && spec[pl] != ':')) return false;
    const char *p = spec[pl] ? spec + pl + 1 : "";
    if (with_ms) {
        char *end;
        *ret_ms = strtol(p, &end, 10);
        p = *end == ':' ? end + 1 : end;
    }
    if (*p && atoi(p) != part) return false;
    return true;
}

/* The first of the comma-separated delay specs that matches, its MS in *ret_ms. */
static bool match_any(const char *specs, const char *point, int part, long *ret_ms) {
    for (const char *p = specs; *p;) {
        size_t n = strcspn(p, ",");
        char one[128];
        snprintf(one, sizeof one, "%.*s", (int)n, p);
        if (match_point(one, point, part, ret_ms, true)) return true;
        p += n + (p[n] == ',');
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
    if (delay_spec[0] && match_any(delay_spec, point, part, &ms) && ms > 0) {
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) < 0 && !(stop_flag && *stop_flag)) {
        }
    }
}
