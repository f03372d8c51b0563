/* Tiny test harness: one program per module. TEST(name) registers a case; CHECK* report file:line and
 * mark the case failed; main() runs every case (or those named on the command line) and exits 0,
 * 1 (a failure) or 77 (every case skipped). */
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
#define TEST_MAX 256
static struct test_case test_cases[TEST_MAX];
static int test_count;
static int test_failed_flag;

#define TEST(name)                                                                                                   \
    static int test_##name(void);                                                                                    \
    __attribute__((constructor)) static void test_register_##name(void) {                                            \
        if (test_count < TEST_MAX) test_cases[test_count++] = (struct test_case){#name, test_##name};                \
    }                                                                                                                \
    static int test_##name(void)

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

int main(int argc, char **argv) {
    int failed = 0, skipped = 0, ran = 0;
    for (int i = 0; i < test_count; i++) {
        if (argc > 1) {
            bool want = false;
            for (int j = 1; j < argc; j++) want |= strcmp(argv[j], test_cases[i].name) == 0;
            if (!want) continue;
        }
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
    if (failed) return 1;
    if (ran > 0 && skipped == ran) return TEST_SKIP;
    return 0;
}
