/* For the tests that meson runs once per field kernel set (tests/meson.build: NAME-portable,
 * NAME-mulx, with ZKPIPE_KERNELS=SET): a set this CPU lacks skips the whole program (exit 77), a
 * value that names no set fails it, so a run never silently checks another set than its name says. */
#pragma once
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "zk/kernels.h"

__attribute__((constructor)) static void kernel_set_or_skip(void) {
    int st = zk_kernels_env_status();
    if (st == -ENOTSUP) {
        fprintf(stderr, "skipped: %s\n", zk_kernels_describe());
        exit(77);
    }
    if (st < 0) {
        fprintf(stderr, "%s\n", zk_kernels_describe());
        exit(1);
    }
    fprintf(stderr, "kernels: %s\n", zk_kernels_describe());
}
