/* The stages' circuit cache (one for synthd, gpud and finalizerd): for each [circuit NAME] of the
 * ini, its .zkey (and, where asked, its verification key and its .r1cs) held in private memory.
 *
 * Invariants:
 * - A key is read into the stage's own memory, never mapped: rewriting the file in place (cp new
 *   live.zkey) cannot SIGBUS a stage. Its file identity (device, inode, size, mtime) is kept.
 * - A stage holds only the parts of a key it uses (synthd the coefs, gpud the points, finalizerd
 *   the header and IC): one copy of a large key's points per box, in gpud.
 * - circuits_get notices a changed file and loads it again before the next partition; a new
 *   content bumps the entry's generation (gpud then loads it into its backend again); the same
 *   content keeps the generation.
 * - One retry rule: a load that failed is tried again at the next use at most once a second; in
 *   between, the same reason is returned at once.
 * - The files' identity is looked at (stat) at most every CIRCUIT_STAT_NS per circuit, so a stage
 *   running partitions back to back adds no system call per partition. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "config/config.h"
#include "plan/parts.h"
#include "zk/r1cs.h"
#include "zk/verify.h"
#include "zk/zkey.h"

#define CIRCUIT_STAT_NS 500000000ull

typedef struct circuit_file {
    void *image; /* size bytes reserved; held of them read (a .zkey: the parts the stage uses) */
    size_t size;
    uint64_t held;
    dev_t dev;
    ino_t ino;
    struct timespec mtime;
} circuit_file_t;

typedef struct stage_circuit {
    const cfg_circuit_t *cfg;
    bool loaded;
    zk_zkey_t z;
    circuit_file_t zkey_file;
    bool has_vk;
    zk_vk_t vk;
    bool has_r1cs;
    zk_r1cs_t r;
    circuit_file_t r1cs_file;
    uint64_t generation;     /* bumped each time a new content is loaded */
    uint64_t retry_after_ns; /* after a failed load */
    uint64_t checked_ns;     /* when the files' identity was last looked at */
    char error[700];
} stage_circuit_t;

/* Bytes of the loaded circuits' files held in this process (its private copies of the parts of the
 * zkeys it uses, and of the r1cs). */
uint64_t circuits_bytes(void);
/* want: CIRCUIT_VK, CIRCUIT_R1CS (the r1cs only where the ini names one), and which parts of the
 * key the stage uses besides its header and IC: CIRCUIT_COEFS (synthd), CIRCUIT_POINTS (gpud); the
 * others are never read into this process (zk_zkey_parse_parts). */
void circuits_init(const cfg_t *cfg, unsigned want);
/* The circuit, loaded (again, when its files changed on disk and may_reload). NULL with a one-line
 * reason in why ("circuit NAME: ...") when it is not configured or cannot be loaded. */
stage_circuit_t *circuits_get(const char *name, bool may_reload, char *why, size_t whylen);
/* A proof already in a job directory (DIRFD/proof-<k>.json with DIRFD/public-<k>.json, read as
 * file_read with FILE_NOFOLLOW does) is trusted only if it verifies against the circuit's key and its public file
 * holds the signals it must: pub (n_pub values, 32 bytes each, standard form), or, when pub is NULL,
 * whatever the public file says. 0, or a negative errno with the reason in why. Needs CIRCUIT_VK. */
int circuit_check_proof(const stage_circuit_t *c, int dirfd, uint32_t k, const uint8_t *pub, uint32_t n_pub, char *why,
                        size_t whylen);
/* Loads every circuit marked preload; logs each failure. */
void circuits_preload(void);
