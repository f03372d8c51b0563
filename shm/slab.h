/* One slab's data (docs/shm.md "Layout"): a header page, the witness file image, then a, b, c.
 * The one definition of the layout: synthd fills slabs by it, gpud and finalizerd read them by the
 * offsets in the header page, and the slab size of the segment is resolved from it. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "base/align.h"
#include "shm/shm.h"
#include "zk/groth16.h"

#define SHM_SLAB_ALIGN CFG_SLAB_ALIGN
#define SHM_SLAB_HEADER 4096u     /* the header page */
/* A circom .wtns has its values at byte 76: read at HEADER + 52, they land 128-byte aligned. */
#define SHM_SLAB_WTNS_PAD 52u

typedef struct shm_slab_layout {
    uint64_t wtns_off, wtns_cap; /* where the witness file image is read, and its room */
    uint64_t abc_each;           /* bytes of each of a, b, c (domain_size x 32, whole pages) */
    uint64_t a_off, b_off, c_off;
    uint64_t bytes; /* the slab bytes this circuit needs (not rounded to SHM_SLAB_ALIGN) */
} shm_slab_layout_t;

/* The layout for a circuit of n_vars wires and the given domain: the witness image has room for
 * the values and up to one page of file header and padding. */
static inline shm_slab_layout_t shm_slab_layout(uint32_t n_vars, uint32_t domain_size) {
    shm_slab_layout_t l;
    l.wtns_off = SHM_SLAB_HEADER + SHM_SLAB_WTNS_PAD;
    l.abc_each = align_up((uint64_t)domain_size * 32, 4096);
    l.a_off = SHM_SLAB_HEADER + align_up((uint64_t)n_vars * 32 + 4096, 4096);
    l.b_off = l.a_off + l.abc_each;
    l.c_off = l.b_off + l.abc_each;
    l.bytes = l.c_off + l.abc_each;
    l.wtns_cap = l.a_off - l.wtns_off;
    return l;
}

/* The header page; written by the owner of the slab's current state (FILLING: everything but raw;
 * PROVING: raw). The steps' times are not here: shm_step (shm.h) records them. */
typedef struct shm_slab_hdr {
    uint32_t job, job_gen, part, curve_id;
    char job_id[SHM_ID_MAX];
    char circuit[SHM_CIRCUIT_MAX];
    uint32_t n_vars, n_pub, domain_size, pad0;
    uint64_t wtns_off, wtns_len;               /* the witness file image, relative to the slab */
    uint64_t values_off;                       /* witness values (n_vars x 32, standard form) */
    uint64_t a_off, b_off, c_off;              /* a, b, c (domain_size x 32 each, Montgomery) */
    zk_raw_t raw;                              /* written by gpud */
} shm_slab_hdr_t;

/* The header page is part of the segment's layout (SHM_LAYOUT_VERSION): zk's structs inside it are
 * pinned here, so that a change to them fails the build until the version is bumped. */
_Static_assert(sizeof(zk_raw_t) == 576, "zk_raw_t changed: bump SHM_LAYOUT_VERSION and update this size");
_Static_assert(sizeof(shm_slab_hdr_t) == 768 && offsetof(shm_slab_hdr_t, raw) == 192, "shm_slab_hdr_t layout");
_Static_assert(sizeof(shm_slab_hdr_t) <= SHM_SLAB_HEADER, "the slab header must fit its page");

static inline shm_slab_hdr_t *shm_slab_header(shm_t *s, uint32_t i) { return (shm_slab_hdr_t *)shm_slab_data(s, i); }
