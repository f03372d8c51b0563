/* Journal or stderr logging for the daemons (common/log.h). */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

static char log_ident[64] = "zkpipe";
static char log_stage[64] = "zkpipe"; /* "synthd", "gpud", "finalizerd" */
static int log_journal = -1;
static char log_pre[128];

void log_prefix(const char *prefix) { snprintf(log_pre, sizeof log_pre, "%s", prefix); }

void log_init(const char *ident) {
    snprintf(log_ident, sizeof log_ident, "%s", ident);
    const char *st = strncmp(ident, "zkpipe-", 7) ? ident : ident + 7;
    snprintf(log_stage, sizeof log_stage, "%.*s", (int)strcspn(st, "@"), st);
    log_journal = getenv("JOURNAL_STREAM") != NULL;
}

void log_msg(int prio, const log_ctx_t *ctx, const char *const *fields, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    size_t pre = strlen(log_pre);
    memcpy(msg, log_pre, pre);
    vsnprintf(msg + pre, sizeof msg - pre, fmt, ap);
    va_end(ap);
    if (log_journal < 0) log_journal = getenv("JOURNAL_STREAM") != NULL;
    if (log_journal) {
        char bufs[8][1100];
        struct iovec iov[24];
        int n = 0;
#define ADD(...)                                                                                                       \
    do {                                                                                                               \
        int _l = snprintf(bufs[n < 8 ? n : 7], sizeof bufs[0], __VA_ARGS__);                                           \
        iov[n].iov_base = bufs[n];                                                                                     \
        iov[n].iov_len = _l < (int)sizeof bufs[0] ? (size_t)_l : sizeof bufs[0] - 1;                                   \
        n++;                                                                                                           \
    } while (0)
        ADD("MESSAGE=%s", msg);
        ADD("PRIORITY=%d", prio);
        ADD("SYSLOG_IDENTIFIER=%s", log_ident);
        ADD("ZKPIPE_STAGE=%s", log_stage);
        if (ctx && ctx->job) ADD("ZKPIPE_JOB=%s", ctx->job);
        if (ctx && ctx->part >= 0) ADD("ZKPIPE_PARTITION=%d", ctx->part);
        if (ctx && ctx->slab >= 0) ADD("ZKPIPE_SLAB=%d", ctx->slab);
#undef ADD
        for (int i = 0; fields && fields[i] && n < 24; i++) {
            iov[n].iov_base = (void *)fields[i];
            iov[n].iov_len = strlen(fields[i]);
            n++;
        }
        if (sd_journal_sendv(iov, n) >= 0) return;
    }
    char extra[512] = "";
    size_t m = 0;
    if (ctx && ctx->job) m += snprintf(extra + m, sizeof extra - m, " job=%s", ctx->job);
    if (ctx && ctx->part >= 0 && m < sizeof extra)
        m += snprintf(extra + m, sizeof extra - m, " partition=%d", ctx->part);
    if (ctx && ctx->slab >= 0 && m < sizeof extra) m += snprintf(extra + m, sizeof extra - m, " slab=%d", ctx->slab);
    for (int i = 0; fields && fields[i] && m < sizeof extra; i++)
        m += snprintf(extra + m, sizeof extra - m, " %s", fields[i]);
    fprintf(stderr, "%s[%d]: %s%s%s\n", log_ident, (int)getpid(), msg, *extra ? " |" : "", extra);
}
