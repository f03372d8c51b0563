/* wasm2c's circuit.c -> data files and units compiled in parallel (split.c). */
#pragma once
#include "zk/curve_info.h"

#include <stdbool.h>
#include <stddef.h>

#define WITGEN_MAX_UNITS 16

/* Rewrites DIR/circuit.c (wasm2c -n circuit, after build.c's native renaming; fr_curve as there):
 * data segments into DIR/<name>.bin for the assembler's .incbin (the compiler must run in DIR),
 * the preamble into DIR/pre.c, and, when the layout is wasm2c 1.0.32's, the circuit's functions into
 * *ret_units (<= max_units) files DIR/unit-K.c, each starting with unit_prefix. *ret_units 0: circuit.c
 * is left as it was, or holds everything. 0, or a write error (no space: ENOSPC) with the reason. */
int witgen_split(const char *dir, const char *unit_prefix, int fr_curve, int max_units, int *ret_units, zk_err_t *err);

/* text (a wasm2c function, NUL-terminated) with its runs of constant copies folded into loops over
 * a table (split.c), as witgen_split writes the circuit's functions: a malloc'd NUL-terminated copy
 * and its length, NULL when out of memory. For test_witgen. */
char *witgen_fold_copies(const char *text, size_t *ret_n);

/* Writes a file of the build folder (created 0644 whatever the umask, never through a symbolic
 * link; not synced: scratch): 0 or -errno. */
int witgen_write_file(const char *path, const void *data, size_t n);
