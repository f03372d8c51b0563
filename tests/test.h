/* Tiny test harness: one program per module. TEST(name) registers a case; CHECK* report file:line and
 * mark the case failed; TEST_SETUP()/TEST_TEARDOWN() (at most one each per program) run once before
 * the first and after the last case. main() runs every case (or those named on the command line) and
 * exits 0, 1 (a failure, a name on the command line that is no case, no case at all, a failed setup
 * or teardown) or 77 (every case skipped, or the setup said skip). */
#pragma once
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEST_SKIP 77

typedef int (*test_fn)(void);
struct test_case {
    const char *name;
    test_fn fn;
};
/* Registered by constructors before main(); the table grows, so no case is ever left out. */
static struct test_case *test_cases;
static int test_count, test_cap;
static bool test_register_failed;
static int test_failed_flag;
static int (*test_setup_fn)(void);
static int (*test_teardown_fn)(void);

static inline void test_register(const char *name, test_fn fn) {
    if (test_count == test_cap) {
        int cap = test_cap ? test_cap * 2 : 64;
        struct test_case *v = (struct test_case *)realloc(test_cases, (size_t)cap * sizeof *v);
        if (!v) {
            test_register_failed = true;
            return;
        }
        test_cases = v;
        test_cap = cap;
    }
    test_cases[test_count++] = (struct test_case){name, fn};
}

#define TEST(name)                                                                                                   \
    static int test_##name(void);                                                                                    \
    __attribute__((constructor)) static void test_register_##name(void) { test_register(#name, test_##name); }       \
    static int test_##name(void)

/* Fixtures of the whole program: the setup returns 0, 1 (failed: no case runs) or TEST_SKIP (every
 * case skipped); the teardown returns 0 or 1 and runs whenever the setup ran, even after failures. */
#define TEST_SETUP()                                                                                                 \
    static int test_setup(void);                                                                                     \
    __attribute__((constructor)) static void test_register_setup(void) { test_setup_fn = test_setup; }               \
    static int test_setup(void)
#define TEST_TEARDOWN()                                                                                              \
    static int test_teardown(void);                                                                                  \
    __attribute__((constructor)) static void test_register_teardown(void) { test_teardown_fn = test_teardown; }      \
    static int test_teardown(void)

#define CHECK(cond)                                                                                                  \
    do {                                                                                                             \
        if (!(cond)) {                                                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);                                 \
            test_failed_flag = 1;                                                                                    \
            return 1;                                                                                                \
        }                                                                                                            \
    } while (0)

#define CHECK_MSG(cond, ...)                                                                                         \
    do {                                                                                                             \
        if (!(cond)) {                                                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);                                 \
            fprintf(stderr, __VA_ARGS__);                                                                            \
            fputc('\n', stderr);                                                                                     \
            test_failed_flag = 1;                                                                                    \
            return 1;                                                                                                \
        }                                                                                                            \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                                                           \
    do {                                                                                                             \
        long long _a = (long long)(a), _b = (long long)(b);                                                          \
        if (_a != _b) {                                                                                              \
            fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld != %lld)\n", __FILE__, __LINE__, #a, #b, _a, _b);   \
            test_failed_flag = 1;                                                                                    \
            return 1;                                                                                                \
        }                                                                                                            \
    } while (0)

#define CHECK_STR_CONTAINS(hay, needle)                                                                              \
    do {                                                                                                             \
        const char *_h = (hay), *_n = (needle);                                                                      \
        if (!_h || !strstr(_h, _n)) {                                                                                \
            fprintf(stderr, "%s:%d: CHECK failed: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__,             \
                    _h ? _h : "(null)", _n);                                                                         \
            test_failed_flag = 1;                                                                                    \
            return 1;                                                                                                \
        }                                                                                                            \
    } while (0)

/* Path of a file in tests/data: $ZKPIPE_TEST_DATA when set (a test program run away from the tree
 * it was built in, as tests/gpu/device-check.sh does with prebuilt programs), else the
 * TEST_DATA_DIR the build passes. */
static inline const char *test_data(const char *rel) {
    static char buf[8][1024];
    static int k;
    char *b = buf[k++ % 8];
    const char *dir = getenv("ZKPIPE_TEST_DATA");
    snprintf(b, 1024, "%s/%s", dir && *dir ? dir : TEST_DATA_DIR, rel);
    return b;
}

static bool test_selected(int argc, char **argv, const char *name) {
    if (argc <= 1) return true;
    for (int j = 1; j < argc; j++)
        if (!strcmp(argv[j], name)) return true;
    return false;
}

int main(int argc, char **argv) {
    if (test_register_failed) {
        fprintf(stderr, "%s: out of memory registering the test cases\n", argv[0]);
        return 1;
    }
    if (test_count == 0) {
        fprintf(stderr, "%s: no test cases registered\n", argv[0]);
        return 1;
    }
    /* every name asked for must be a case: a typo must not pass by running nothing */
    int unknown = 0;
    for (int j = 1; j < argc; j++) {
        bool found = false;
        for (int i = 0; i < test_count && !found; i++) found = !strcmp(argv[j], test_cases[i].name);
        if (!found) {
            fprintf(stderr, "%s: no test case named '%s'\n", argv[0], argv[j]);
            unknown++;
        }
    }
    if (unknown) {
        fprintf(stderr, "cases:");
        for (int i = 0; i < test_count; i++) fprintf(stderr, " %s", test_cases[i].name);
        fputc('\n', stderr);
        return 1;
    }
    if (test_setup_fn) {
        test_failed_flag = 0;
        int rc = test_setup_fn();
        if (rc == TEST_SKIP) {
            fprintf(stderr, "SKIP (setup)\n");
            return TEST_SKIP;
        }
        if (rc != 0 || test_failed_flag) {
            fprintf(stderr, "FAIL (setup)\n");
            if (test_teardown_fn) (void)test_teardown_fn();
            return 1;
        }
    }
    int failed = 0, skipped = 0, ran = 0;
    for (int i = 0; i < test_count; i++) {
        if (!test_selected(argc, argv, test_cases[i].name)) continue;
        test_failed_flag = 0;
        int rc = test_cases[i].fn();
        ran++;
        if (rc == TEST_SKIP) {
            skipped++;
            fprintf(stderr, "SKIP %s\n", test_cases[i].name);
        } else if (rc != 0 || test_failed_flag) {
            failed++;
            fprintf(stderr, "FAIL %s\n", test_cases[i].name);
        } else {
            fprintf(stderr, "ok   %s\n", test_cases[i].name);
        }
    }
    if (test_teardown_fn) {
        test_failed_flag = 0;
        if (test_teardown_fn() != 0 || test_failed_flag) {
            fprintf(stderr, "FAIL (teardown)\n");
            failed++;
        }
    }
    free(test_cases);
    if (failed) return 1;
    if (skipped == ran) return TEST_SKIP;
    return 0;
}

/* kB of a /proc/self/status field ("RssFile:", "VmSize:"), -1 when it has none. */
static inline long status_kb(const char *key) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, strlen(key))) v = atol(line + strlen(key) + 1);
    if (f) fclose(f);
    return v;
}
