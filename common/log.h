/* Daemon logging: structured journal entries (ZKPIPE_JOB, ZKPIPE_PARTITION, ZKPIPE_STAGE,
 * ZKPIPE_SLAB, ZKPIPE_<STEP>_NS durations) when JOURNAL_STREAM is set, plain stderr lines otherwise.
 * Only daemons and the CLI log; library code returns errors. */
#pragma once
#include <stdint.h>
#include <syslog.h>

void log_init(const char *ident); /* "zkpipe-synthd@1" */
/* Text put before every message from now on ("[replay h200.ini] "; "" = none). */
void log_prefix(const char *prefix);

typedef struct log_ctx {
    const char *job; /* NULL if none */
    int part;        /* -1 if none */
    int slab;        /* -1 if none */
} log_ctx_t;

/* One entry. fields: up to 12 extra "NAME=value" strings, NULL-terminated list (may be NULL). */
void log_msg(int prio, const log_ctx_t *ctx, const char *const *fields, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define log_info(...) log_msg(LOG_INFO, NULL, NULL, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARNING, NULL, NULL, __VA_ARGS__)
#define log_err(...) log_msg(LOG_ERR, NULL, NULL, __VA_ARGS__)
