/* Witness generation from circuit inputs (docs/witgen.md).
 *
 * A circom witness-generator wasm is translated once to C with wabt's wasm2c, compiled with the
 * system C compiler into a shared object kept in a cache directory under the wasm's content hash,
 * and loaded with dlopen. The loader speaks circom's wasm runtime protocol (init, FNV-1a-64 signal
 * hashes, setInputSignal, getWitness, exception codes and getMessageChar text) and writes the same
 * .wtns bytes as `snarkjs wtns calculate`. A native generator can instead run as a child process
 * (witgen_run_cmd). Library code never prints: errors are one line in zk_err_t naming the file. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zk/curve_info.h"
#include "zk/zkey.h"

/* Called every ~100 ms while a build, a child generator or a wasm run goes on (heartbeats; during a
 * wasm run from a watcher thread, while the calling thread is in the generator); may be NULL. */
typedef void (*witgen_tick_fn)(void *ctx);

/* A generator run's time limit where the caller sets none of its own: synthd's witness_timeout
 * default (config.c), zkpipe witness and fullprove, libzkpipe. */
#define WITGEN_TIMEOUT_DEFAULT_S 600u

typedef struct witgen_opts {
    const char *cache_dir;    /* where compiled generators are kept (created if missing) */
    uint64_t memory_limit;    /* cap on the wasm's linear memory in bytes; 0 = the wasm's own maximum */
    /* true: the wasm's linear memory is advised MADV_HUGEPAGE (synthd with [pipeline] hugepages =
     * yes); false leaves it to the system's THP policy (zkpipe witness, libzkpipe). Not by default:
     * with THP defrag "madvise" each 2 MiB fault may compact memory first, and a quiet 2^20 witness
     * took 0.411 s advised against 0.341 s without (bench/RESULTS.md, "First witness") */
    bool hugepages;
    witgen_tick_fn tick;      /* may be NULL */
    void *tick_ctx;
    /* a run of the wasm generator (one input, from its parsing to the last witness value) may take
     * this long, then fails "generator ran past N s" (-ETIMEDOUT); 0 = no limit. Instantiation and
     * the protocol's first calls have OPEN_LIMIT_S (runtime.c: 10 s), or this when shorter. */
    unsigned timeout_s;
    /* asked every ~100 ms while a generator runs (wasm: from the watcher thread): true stops it, and
     * the run fails with -ECANCELED (a cancelled job); may be NULL */
    bool (*stop)(void *ctx);
    void *stop_ctx;
    /* the circuit's log() output, one line at a time; NULL = dropped */
    void (*log_line)(void *ctx, const char *line);
    void *log_ctx;
    /* true: nothing is built; where the cache holds no valid object the call fails with
     * -EINPROGRESS (synthd then builds it in the background with witgen_build) */
    bool cached_only;
    /* called once when this call starts building (it holds the object's lock and the cache lacks
     * the object; a process that waits for another's build is not building); may be NULL */
    void (*building)(void *ctx);
    void *building_ctx;
} witgen_opts_t;

/* ---- build.c: wasm -> C -> shared object, cached ---- */

/* The cache directory when none is given (cache.c): $ZKPIPE_CACHE, else $XDG_CACHE_HOME/zkpipe, else
 * $HOME/.cache/zkpipe, else the password file's home directory's .cache/zkpipe, else
 * $XDG_RUNTIME_DIR/zkpipe-cache; NULL when there is none (never a shared directory such as /tmp:
 * another user could plant objects there). buf (cap bytes) holds a composed path. */
const char *witgen_default_cache(char *buf, size_t cap);

/* Makes sure the cache holds a valid compiled generator for wasm_path and gives its path. A cached
 * file that is truncated, foreign or for another wasm is rebuilt. *ret_built says whether it was
 * built now. The build is written under a temporary name and renamed into place. While it waits
 * for another process's build or runs the tools, o->stop is asked every ~50 ms: true kills the tools
 * and the call fails with -ECANCELED. A tool killed by SIGKILL (the OOM killer, most likely) fails
 * it with -ENOMEM. Safe to call from any thread (synthd builds on a thread of its own). */
int witgen_build(const char *wasm_path, const witgen_opts_t *o, char *so_path, size_t so_cap, bool *ret_built,
                 zk_err_t *err);
/* The same, and *ret_fd is a descriptor of the object, checked through it (the caller closes it). */
int witgen_build_fd(const char *wasm_path, const witgen_opts_t *o, char *so_path, size_t so_cap, bool *ret_built,
                    int *ret_fd, zk_err_t *err);
/* Checks a cached object: the trailer names wasm_sha (32 bytes) and the bytes before it hash to
 * what the trailer says. 0, or -EINVAL/-ENOENT with the reason. */
int witgen_cache_check(const char *so_path, const uint8_t wasm_sha[32], zk_err_t *err);
/* The same on an open descriptor (read from offset 0 with pread-like reads; name for messages). */
int witgen_cache_check_fd(int fd, const char *so_path, const uint8_t wasm_sha[32], zk_err_t *err);
/* SHA-256 of a file's bytes (nettle). */
int witgen_sha256_file(const char *path, uint8_t out[32], zk_err_t *err);

/* ---- runtime.c: the loaded generator ---- */

typedef struct witgen witgen_t;

/* Builds (if needed), loads and instantiates the generator for wasm_path. *ret_built may be NULL. */
int witgen_open(witgen_t **ret, const char *wasm_path, const witgen_opts_t *o, bool *ret_built, zk_err_t *err);
void witgen_close(witgen_t *g);
/* The curve whose scalar field is the wasm's prime. */
const zk_curve_t *witgen_curve(const witgen_t *g);
/* The loaded object and its current instance (NULL after a failed run), for test_witgen. */
struct witgen_module;
const struct witgen_module *witgen_module_of(witgen_t *g, void **inst);
/* Values in the witness (nVars). */
uint32_t witgen_n_witness(const witgen_t *g);
/* Bytes of the .wtns image witgen_calc writes. */
size_t witgen_wtns_size(const witgen_t *g);
/* The wasm's prime is the zkey's curve and its witness has the zkey's nVars, or an error naming
 * both files. */
int witgen_check_zkey(const witgen_t *g, const zk_zkey_t *z, const char *zkey_name, zk_err_t *err);
/* Computes the witness for the circom input JSON at input_path and writes the .wtns image into out
 * (cap bytes, at least witgen_wtns_size). A rejected input, a bad input file or a trap (out of
 * bounds, stack exhausted, out of memory) is an error; the generator stays usable afterwards. */
int witgen_calc(witgen_t *g, const char *input_path, uint8_t *out, size_t cap, size_t *ret_len, zk_err_t *err);

/* ---- input.c: circom input JSON ---- */

typedef struct witgen_signal {
    char *name;      /* "a", or "bus.field" for nested objects */
    uint64_t hash;   /* FNV-1a-64 of name */
    uint32_t n;      /* values, flattened row-major */
    uint32_t *vals;  /* n x n32 words, LE, each reduced mod the prime */
} witgen_signal_t;

typedef struct witgen_input {
    uint32_t n_signals;
    witgen_signal_t *signals;
} witgen_input_t;

uint64_t witgen_fnv1a64(const char *s);
/* Parses input_path (numbers, decimal strings, 0x hex strings, negative values mod prime, nested
 * arrays row-major, nested objects as "a.b"). prime: n32 LE words. */
int witgen_input_load(witgen_input_t *in, const char *input_path, const uint32_t *prime, uint32_t n32, zk_err_t *err);
/* The same, refusing a file of more than max_bytes (0 = no limit) by its size, before reading it. */
int witgen_input_load_max(witgen_input_t *in, const char *input_path, const uint32_t *prime, uint32_t n32,
                          size_t max_bytes, zk_err_t *err);
/* The most an input.json for a circuit of n_values input values may be: 1 MiB and, per value,
 * 256 bytes (names, nesting, white space) and 12 per field word (the digits, generously). */
size_t witgen_input_max_bytes(uint32_t n_values, uint32_t n32);
void witgen_input_free(witgen_input_t *in);

/* ---- child.c: a native generator run as a child process ---- */

typedef struct witgen_cmd {
    const char *program;   /* "PROGRAM [ARGS...]" split at spaces; run as PROGRAM ARGS... input.json out.wtns */
    unsigned timeout_s;    /* 0 = none */
    uint64_t memory_limit; /* RLIMIT_AS in bytes, 0 = none */
    witgen_tick_fn tick;
    void *tick_ctx;
    bool (*stop)(void *ctx); /* asked at every tick: true kills the generator (-ECANCELED); may be NULL */
    void *stop_ctx;
} witgen_cmd_t;

/* Runs the generator; 0 when it exited 0 and out_path exists. Errors say how it ended (exit
 * status, signal, timeout) and the last line it wrote on stderr. Nothing it started outlives the
 * call, nor the caller (child.c: a subreaper between the caller and the generator). */
int witgen_run_cmd(const witgen_cmd_t *c, const char *input_path, const char *out_path, zk_err_t *err);

/* ---- partition.c: a pipeline stage's use of a circuit's generator (synthd) ---- */

typedef struct witgen_source {
    const char *wasm;         /* "" = none */
    const char *cmd;          /* witness_cmd, "" = none */
    unsigned timeout_s;       /* witness_timeout: a witness_cmd's, a wasm run's */
    uint64_t memory_limit;    /* witness_cmd's RLIMIT_AS, the wasm's memory cap; 0 = none */
    const char *cache_dir;
} witgen_source_t;

static inline bool witgen_source_any(const witgen_source_t *s) { return (s->wasm && s->wasm[0]) || (s->cmd && s->cmd[0]); }

/* Loads the circuit's wasm generator (building it when the cache lacks it: *ret_built) and checks its
 * prime and witness size against the zkey. *ret is NULL for a witness_cmd circuit. */
int witgen_source_open(witgen_t **ret, const witgen_source_t *s, const witgen_opts_t *o, const zk_zkey_t *z,
                       const char *zkey_name, bool *ret_built, zk_err_t *err);
/* Writes partition part's .wtns image (from JOB_DIR/input-<part>.json) into out: with the loaded
 * wasm g, or by running witness_cmd (its output JOB_DIR/.witness-<part>.wtns is read and removed).
 * The caller parses and checks the image as it does a submitted witness. Messages name the input
 * file as "input-<part>.json". */
int witgen_partition(witgen_t *g, const witgen_source_t *s, const witgen_opts_t *o, const char *job_dir, uint32_t part,
                     uint8_t *out, size_t cap, size_t *ret_len, zk_err_t *err);
