/* The stages' common skeleton (stage.h). */
#include "common/stage.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/circuits.h"
#include "common/log.h"
#include "spool/spool.h"
#include "plan/slab.h"
#include "zk/kernels.h"

#define GUARD_MAX 8
static struct guard {
    char what[96];
    uintptr_t base, end;
} guards[GUARD_MAX];
static volatile sig_atomic_t n_guards;
static char ident_for_signal[64];

static size_t cat(char *buf, size_t n, size_t cap, const char *s) {
    while (*s && n + 1 < cap) buf[n++] = *s++;
    return n;
}

/* Async-signal-safe: builds the line with plain stores and write(2). */
static void on_sigbus(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    uintptr_t a = (uintptr_t)si->si_addr;
    const char *what = "an unguarded mapping (a file mapped by a library)";
    for (int i = 0; i < n_guards; i++)
        if (a >= guards[i].base && a < guards[i].end) what = guards[i].what;
    char line[400];
    size_t n = 0;
    n = cat(line, n, sizeof line, ident_for_signal);
    n = cat(line, n, sizeof line, ": SIGBUS in ");
    n = cat(line, n, sizeof line, what);
    n = cat(line, n, sizeof line,
            " (its file was truncated, or its file system ran out of space); exiting for a restart\n");
    (void)!write(STDERR_FILENO, line, n);
    (void)sig;
    _exit(4);
}

void stage_guard_mapping(const char *what, const void *base, size_t len) {
    if (n_guards >= GUARD_MAX) return;
    struct guard *g = &guards[n_guards];
    snprintf(g->what, sizeof g->what, "%s", what);
    g->base = (uintptr_t)base;
    g->end = (uintptr_t)base + len;
    n_guards = n_guards + 1;
    static bool installed;
    if (!installed) {
        installed = true;
        struct sigaction sa = {0};
        sa.sa_sigaction = on_sigbus;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGBUS, &sa, NULL);
    }
}

bool stage_init(int argc, char **argv, const char *name, const char *about, bool gpu, bool spool, daemon_args_t *args,
                cfg_t *cfg, int *ret_exit) {
    if (!daemon_parse_args(argc, argv, name, about, gpu, args, ret_exit)) return false;
    *ret_exit = 1;
    char err[1200];
    snprintf(ident_for_signal, sizeof ident_for_signal, "%s@%d", name, args->instance);
    log_init(ident_for_signal);
    daemon_signals_init();
    if (cfg_load(cfg, args->config, err, sizeof err) < 0 || slab_resolve_size(cfg, err, sizeof err) < 0) {
        log_err("Failed to load the configuration: %s", err);
        return false;
    }
    if (spool && spool_init(cfg->spool, err, sizeof err) < 0) {
        log_err("Failed to prepare the spool: %s", err);
        return false;
    }
    return true;
}

bool stage_attach(const cfg_t *cfg, shm_t *s, uint32_t role, uint32_t instance) {
    char err[1200];
    shm_geometry_t g = {.slabs = cfg->slabs, .jobs = cfg->jobs, .events = cfg->events, .slab_size = cfg->slab_size};
    if (shm_open_segment(s, cfg->segment, &g, true, err, sizeof err) < 0) {
        log_err("Failed to attach the segment: %s", err);
        return false;
    }
    char what[96];
    snprintf(what, sizeof what, "the segment %.80s", cfg->segment);
    stage_guard_mapping(what, s->base, s->size);
    if (shm_register(s, role, instance) < 0) {
        log_err("Failed to register in %s: process table full", cfg->segment);
        return false;
    }
    log_info("Field kernels: %s", zk_kernels_describe());
    if (cfg->hugepages) {
        char desc[200];
        if (shm_segment_hugepages(s, desc, sizeof desc) < 0) log_warn("Huge pages for the segment: %s", desc);
        else log_info("Huge pages for the segment: %s", desc);
    }
    return true;
}

void stage_log_memory(const char *when, const char *extra) {
    shm_mem_usage_t u;
    shm_mem_usage(&u);
    log_info("Memory %s: circuit files held %.1f MiB; resident %.1f MiB (own %.1f, segment %.1f, mapped files %.1f), "
             "in huge pages own %.1f, segment %.1f MiB%s%s",
             when, circuits_bytes() / 1048576.0, u.rss / 1048576.0, u.anon / 1048576.0, u.shmem / 1048576.0,
             u.file / 1048576.0, u.anon_huge / 1048576.0, u.shmem_huge / 1048576.0, extra && *extra ? "; " : "",
             extra ? extra : "");
}

void stage_loop_init(stage_loop_t *l, shm_t *s, void (*status)(char *buf, size_t len)) {
    *l = (stage_loop_t){.s = s, .wait_ms = daemon_wait_ms(1000), .status = status};
}

void stage_tick(stage_loop_t *l, uint32_t cur_slab) {
    shm_heartbeat(l->s, cur_slab);
    daemon_notify_watchdog();
    uint64_t now = daemon_now_ns();
    if (l->status && now - l->last_status > 2000000000ull) {
        l->last_status = now;
        char buf[200];
        l->status(buf, sizeof buf);
        daemon_notify_status("%s", buf);
    }
}

int stage_wait(stage_loop_t *l, _Atomic uint32_t *word, uint32_t seen, int cap_ms) {
    int ms = cap_ms > 0 && cap_ms < l->wait_ms ? cap_ms : l->wait_ms;
    int r = shm_wait(word, seen, ms);
    if (r == -ETIMEDOUT) shm_reclaim(l->s);
    return r;
}

void stage_give_up(shm_t *s, uint32_t idx, uint32_t from, uint32_t job, uint32_t part, const char *reason) {
    if (reason)
        log_msg(LOG_ERR, &(log_ctx_t){.job = s->jobs[job].id, .part = (int)part, .slab = (int)idx}, NULL,
                "Partition %u of job %s failed: %s", part, s->jobs[job].id, reason);
    (void)shm_part_give_up(s, idx, from, job, part, reason);
}

int stage_pass_fields(const shm_pass_t *p, char bufs[][48], const char **fields) {
    int n = 0;
    for (uint32_t k = 0; k < STEP_MAX; k++) {
        const char *journal = shm_step_info(k)->journal;
        if (!(p->recorded >> k & 1) || !journal) continue;
        snprintf(bufs[n], 48, "%s=%llu", journal, (unsigned long long)p->ns[k]);
        fields[n] = bufs[n];
        n++;
    }
    fields[n] = NULL;
    return n;
}

void stage_log_pass(int prio, const log_ctx_t *ctx, const shm_pass_t *p, const char *fmt, ...) {
    char bufs[STEP_MAX][48], msg[600];
    const char *fields[STEP_MAX + 1];
    (void)stage_pass_fields(p, bufs, fields);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    log_msg(prio, ctx, fields, "%s", msg);
}
