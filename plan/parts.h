/* The parts of a .zkey each stage holds in its own memory (the stages' circuit cache,
 * common/circuits.h, reads them; zkpipe plan and the slab sizing, plan/slab.h, count them): synthd
 * the coefficients, gpud the points, finalizerd the header and IC; the sections a stage does not use
 * are never read into it. Read with the ground floor's reader rules (base/file.h). */
#pragma once
#include <stdint.h>

#include "zk/curve_info.h"

/* What a stage wants of a circuit (circuits_init): the verifying key, the .r1cs, and besides the
 * key's header and IC its coefficients (synthd) or points (gpud). */
enum { CIRCUIT_VK = 1, CIRCUIT_R1CS = 2, CIRCUIT_COEFS = 4, CIRCUIT_POINTS = 8 };
/* What each stage holds of the key at path (zkpipe plan): held[CIRCUIT_SYNTHD] the coefs' part
 * (synthd), [CIRCUIT_GPUD] the points' (gpud), [CIRCUIT_FINALIZERD] the header and IC (finalizerd),
 * the bytes circuits_bytes counts once loaded; the key's dimensions from its header (read alone). */
enum { CIRCUIT_SYNTHD, CIRCUIT_GPUD, CIRCUIT_FINALIZERD, CIRCUIT_STAGES };
typedef struct circuit_parts {
    const zk_curve_t *curve;
    uint32_t n_vars, n_pub, domain;
    uint64_t file_size;
    uint64_t held[CIRCUIT_STAGES];
} circuit_parts_t;
int circuits_parts(const char *path, circuit_parts_t *out, zk_err_t *e);
/* The most byte ranges one stage's parts of a key make. */
#define CIRCUIT_MAX_RANGES 32
/* The sections of a key a stage that wants `want` (CIRCUIT_*) does not read, as a mask of ids. */
uint32_t circuit_skip_of(unsigned want);
/* The parts of the .zkey open at fd (size bytes) a stage with skip reads, as byte ranges (at most
 * CIRCUIT_MAX_RANGES, with their total in *held): the file header, every section header and the
 * payloads of the sections not in skip (those pages of m stay untouched zeros, never resident). The
 * section headers are read into m as it walks them. When the table does not walk, the whole file is
 * one range (the parser names what is wrong). */
int circuit_key_ranges(int fd, uint8_t *m, uint64_t size, uint32_t skip, const char *path, uint64_t ranges[][2],
                       unsigned *n_ranges, uint64_t *held, zk_err_t *e);
/* pread of [off, off + len) of fd into m + off, whole; a file that shrank is named. */
int circuit_read_range(int fd, uint8_t *m, uint64_t off, uint64_t len, const char *path, uint64_t size, zk_err_t *e);
