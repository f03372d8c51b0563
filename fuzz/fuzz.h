/* Shared by the libFuzzer targets (fuzz/README.md): the rule every reader keeps on bad input, checked
 * on every input the fuzzer makes. */
#pragma once
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A refusal is one line that names the input (name) and says something: anything else aborts, so the
 * fuzzer reports it as a crash with the input that caused it. */
static inline void fuzz_check_error(int rc, const char *msg, const char *name) {
    if (rc >= 0) return;
    if (!msg[0] || !strstr(msg, name) || strchr(msg, '\n')) {
        fprintf(stderr, "bad error message (rc %d): \"%s\" (must be one line naming %s)\n", rc, msg, name);
        abort();
    }
}

/* Reads every byte of [p, p + n): ASan reports any of them outside the input or a freed block. */
static volatile unsigned fuzz_sink;
static inline void fuzz_touch(const void *p, size_t n) {
    const unsigned char *b = p;
    unsigned s = 0;
    for (size_t i = 0; i < n; i++) s += b[i];
    fuzz_sink += s;
}
