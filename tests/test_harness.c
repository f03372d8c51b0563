/* tests/test.h itself: more cases than the first table held (256) all register and run, the setup
 * runs before the first case. meson also runs this program with a name that is no case, which must
 * fail (tests/meson.build: harness_unknown_case). */
#include "test.h"

#define N_MANY 300 /* more than the fixed table of 256 that once dropped cases silently */

static int setup_runs, many_ran;

TEST_SETUP() {
    setup_runs++;
    return 0;
}

/* Registered first, so it runs even where a table full of the cases below would drop the rest. */
TEST(all_registered) {
    CHECK_EQ_INT(setup_runs, 1);
    CHECK_EQ_INT(test_count, 1 + N_MANY + 1);
    return 0;
}

#define MANY1(p)                                                                                                       \
    TEST(many_##p) {                                                                                                   \
        many_ran++;                                                                                                    \
        return 0;                                                                                                      \
    }
#define MANY10(p)                                                                                                      \
    MANY1(p##0)                                                                                                        \
    MANY1(p##1) MANY1(p##2) MANY1(p##3) MANY1(p##4) MANY1(p##5) MANY1(p##6) MANY1(p##7) MANY1(p##8) MANY1(p##9)
#define MANY100(p)                                                                                                     \
    MANY10(p##0)                                                                                                       \
    MANY10(p##1) MANY10(p##2) MANY10(p##3) MANY10(p##4) MANY10(p##5) MANY10(p##6) MANY10(p##7) MANY10(p##8)            \
        MANY10(p##9)
MANY100(a)
MANY100(b)
MANY100(c)

/* Registered last: every case before it ran (without a filter on the command line). */
TEST(all_ran) {
    CHECK_EQ_INT(many_ran, N_MANY);
    return 0;
}
