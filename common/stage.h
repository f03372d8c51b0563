/* The skeleton every pipeline stage (synthd, gpud, finalizerd) runs on: start-up in two steps (so
 * that gpud can bring its backend up between them), then a main loop of ticks and waits. Errors
 * are logged as one line each.
 *
 * Invariants:
 * - Every pass of a stage's main loop calls stage_tick: the heartbeat in the segment, the systemd
 *   watchdog and the STATUS line are fed there and nowhere else.
 * - A stage waits only through stage_wait: a futex wait on a sequence word, bounded by the
 *   watchdog's half period; a wait that times out reclaims the slabs of dead owners.
 * - A SIGBUS in a mapping the stage guards (the segment) is logged with that mapping's name and the
 *   process exits (status 4) for its unit to restart it, instead of dying silently. */
#pragma once
#include <stdbool.h>

#include "common/daemon.h"
#include "common/log.h"
#include "config/config.h"
#include "shm/shm.h"

/* Parses the common options (--help: `about`), logs as NAME@INSTANCE, installs the signal
 * handlers, loads the ini (slab size resolved) and, with spool, prepares the spool directories.
 * false: the caller exits with *ret_exit. */
bool stage_init(int argc, char **argv, const char *name, const char *about, bool gpu, bool spool, daemon_args_t *args,
                cfg_t *cfg, int *ret_exit);
/* Attaches the segment the ini describes (creating it if missing, checking its geometry), guards
 * its mapping against SIGBUS and registers this process there as role/instance. false: logged;
 * the caller exits 1. */
/* One line of what this stage holds: the circuits' files it keeps (private copies), its resident
 * memory split into own (anonymous), segment (shared) and mapped files, what of it is in huge pages,
 * and extra (the stage's own items: pinned memory, tables, scratch), e.g. "Memory after loading the
 * keys: ...". */
void stage_log_memory(const char *when, const char *extra);
bool stage_attach(const cfg_t *cfg, shm_t *s, uint32_t role, uint32_t instance);

/* Names a mapping for the SIGBUS handler (at most 8). */
void stage_guard_mapping(const char *what, const void *base, size_t len);

typedef struct stage_loop {
    shm_t *s;
    int wait_ms;          /* the longest wait: below half the watchdog period */
    uint64_t last_status; /* when STATUS= was last sent */
    void (*status)(char *buf, size_t len); /* the stage's STATUS= line */
} stage_loop_t;

void stage_loop_init(stage_loop_t *l, shm_t *s, void (*status)(char *buf, size_t len));
/* One pass of the main loop: heartbeat (cur_slab: the slab in work, SHM_NONE when idle), watchdog,
 * and the status line every two seconds. */
void stage_tick(stage_loop_t *l, uint32_t cur_slab);
/* Waits until *word differs from seen (a futex), at most cap_ms (or the loop's wait when cap_ms is
 * 0 or longer); reclaims dead owners' slabs when the wait timed out. Returns the shm_wait result. */
int stage_wait(stage_loop_t *l, _Atomic uint32_t *word, uint32_t seen, int cap_ms);

/* A stage gives up the partition it holds in slab idx (in state from): logs why (a failure; reason
 * NULL: a cancel, not logged) and hands it to shm_part_give_up, which fails it (or drops it) and
 * frees the slab. */
void stage_give_up(shm_t *s, uint32_t idx, uint32_t from, uint32_t job, uint32_t part, const char *reason);

/* The journal fields of a pass: "ZKPIPE_<STEP>_NS=<ns>" for each step it recorded that has one (the
 * step table's JOURNAL column), into bufs; fields gets them, NULL-terminated (room for STEP_MAX + 1).
 * Returns their count. */
int stage_pass_fields(const shm_pass_t *p, char bufs[][48], const char **fields);
/* The partition's journal entry for a pass: the message with the fields of stage_pass_fields. */
void stage_log_pass(int prio, const log_ctx_t *ctx, const shm_pass_t *p, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
