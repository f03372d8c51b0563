/* Test hooks any process of the project may stop or wait at, named points on the paths a test
 * wants to interrupt (a kill between a write and its rename, a slow step). Read from the
 * environment once per process; documented in docs/pipeline.md:
 *   ZKPIPE_TEST_PAUSE=POINT[:PART]    the process stops itself (SIGSTOP) the first time it reaches
 *                                     POINT (for partition PART when given), so a test can kill it there.
 *   ZKPIPE_TEST_DELAY=POINT:MS[:PART] sleeps MS at POINT every time (for PART only when given).
 * Either takes several specs separated by commas (one matcher for both); a pause still happens once.
 * Without those variables a point costs a comparison. */
#pragma once
#include <signal.h>

void test_point(const char *point, int part);
/* A delay at a point ends early once *stop is set (the daemons' stop flag, set by SIGTERM). */
void test_point_stop_flag(volatile sig_atomic_t *stop);
