/* Reader of snarkjs Groth16 .zkey files (formats.md §1, §4).
 * The file is mmap'd read-only; point sections are used in place (Montgomery LE, the in-memory
 * layout of the *_aff_t types). A section whose payload is not 8-byte aligned in the file is copied
 * once, whole, into aligned memory (never converted element by element).
 * zk_zkey_open validates everything before returning: magic, version, section table bounds
 * (overflow-safe), protocol, n8q/q/n8r/r (the curve), every section size against the header,
 * domainSize a power of two with nVars/nPublic consistent, each coef record's matrix/constraint/signal
 * in range. Errors name the file, the section and what is wrong. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "curve_info.h"

typedef struct zk_zkey {
    const zk_curve_t *curve;
    uint32_t n_vars;      /* wires, witness length, including wire 0 */
    uint32_t n_pub;       /* nPublic, excluding wire 0 */
    uint32_t domain_size; /* n, a power of two */
    uint32_t log_domain;  /* log2(n) */

    /* header points (section 2), affine Montgomery bytes, 8-byte aligned */
    const void *alpha1, *beta1, *beta2, *gamma2, *delta1, *delta2;
    const void *ic;       /* (n_pub+1) G1 (section 3) */

    const uint8_t *coefs; /* section 4 records, after the u32 count: n_coefs x (u32 m, u32 c, u32 s, n8r value) */
    uint32_t n_coefs;

    const void *points_a;  /* n_vars G1 (section 5) */
    const void *points_b1; /* n_vars G1 (section 6) */
    const void *points_b2; /* n_vars G2 (section 7) */
    const void *points_c;  /* n_vars - n_pub - 1 G1 (section 8) */
    const void *points_h;  /* domain_size G1 (section 9) */

    /* private */
    void *map;
    size_t map_size;
    void *copies[10]; /* [2]: the header points, [3..9]: sections; anonymous mappings, untouched until filled */
    size_t copy_size[10];
    const uint8_t *lazy_src[10]; /* ZK_ZKEY_LAZY: where an unaligned point section lies in the mapping */
    uint64_t lazy_size[10];
    const uint8_t *mapped_src[10]; /* ZK_ZKEY_LAZY: where a section used in place lies in the mapping */
    uint64_t mapped_size[10];
} zk_zkey_t;

int zk_zkey_open(zk_zkey_t *z, const char *path, zk_err_t *err);
/* zk_zkey_parse (below) of an image that holds only some sections' payloads (a daemon's: each stage
 * reads what it uses, common/circuits.c): a section whose bit (1u << id) is in skip is checked by
 * its size alone and its pointer is NULL (the coefs: n_coefs 0). Skippable: the coefs (4) and the
 * point sections (5..9); the header and IC are always read. The image is the caller's own
 * anonymous memory: the pages of a section copied because it is unaligned are given back
 * (MADV_DONTNEED) once copied, so it is resident once. */
#define ZK_ZKEY_SKIPPABLE (0x3fu << 4)
int zk_zkey_parse_parts(zk_zkey_t *z, const char *name, const uint8_t *data, size_t size, uint32_t skip,
                        zk_err_t *err);
/* Whether two keys hold the same content in every section both hold (and skip the same ones). */
bool zk_zkey_same(const zk_zkey_t *a, const zk_zkey_t *b);
/* ZK_ZKEY_LAZY (for a one-shot prover, which reads each section in one pass): nothing of the key is
 * kept resident longer than the step that reads it. An unaligned point section (5..9) gets its
 * aligned buffer at open, but is copied into it only by zk_zkey_hold and given back by zk_zkey_drop,
 * so that at most the section of the running MSM is resident (once); an aligned one is read in
 * place from the mapping, and zk_zkey_drop unmaps its pages from this process again (they stay in
 * the page cache), as it does for the coefs (id 4) after synthesis. Until held, an unaligned lazy
 * section reads as zero: every reader of points_* of a lazy key holds it first (the core does,
 * zk_zkey_hold_all for anything else). */
#define ZK_ZKEY_LAZY 1u
int zk_zkey_open_flags(zk_zkey_t *z, const char *path, unsigned flags, zk_err_t *err);
/* Section id (4..9) readable at its pointer: copied from the mapping (whose pages are then dropped)
 * when it is an unaligned lazy one, the kernel asked to read ahead (MADV_WILLNEED) when it is used in
 * place from the mapping; a no-op for a key that is not lazy. zk_zkey_drop gives a lazy section's
 * pages back (the copy's, or the mapping's: read again from the file when touched). */
void zk_zkey_hold(const zk_zkey_t *z, int id);
void zk_zkey_drop(const zk_zkey_t *z, int id);
void zk_zkey_hold_all(const zk_zkey_t *z);
/* Validates a zkey image already in memory (name is only used in messages); the pointers of *z
 * point into data, which must outlive z. zk_zkey_close frees the copies and leaves data alone. */
int zk_zkey_parse(zk_zkey_t *z, const char *name, const uint8_t *data, size_t size, zk_err_t *err);
void zk_zkey_close(zk_zkey_t *z);

/* Advises the kernel to load (or pin with MAP_POPULATE semantics) every point section now. */
void zk_zkey_prefault(const zk_zkey_t *z);
