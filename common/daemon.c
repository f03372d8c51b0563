/* Shared daemon plumbing (common/daemon.h). */
#include "daemon.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "base/testpoint.h"
#include "config/config.h"

volatile sig_atomic_t daemon_stop;

static void on_signal(int sig) {
    (void)sig;
    daemon_stop = 1;
}

void daemon_signals_init(void) {
    struct sigaction sa = {0};
    sa.sa_handler = on_signal; /* no SA_RESTART: a futex wait returns EINTR at once */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    test_point_stop_flag(&daemon_stop); /* SIGTERM ends a test delay */
}

static void usage(FILE *f, const char *name, bool gpu) {
    fprintf(f, "Usage: %s [--config FILE] [--instance N]%s\n", name,
            gpu ? " [--backend cpu|cuda|auto] [--device N]" : "");
}

bool daemon_parse_args(int argc, char **argv, const char *name, const char *about, bool gpu, daemon_args_t *a,
                       int *ret_exit) {
    static const struct option opts[] = {
        {"config", required_argument, NULL, 'c'},  {"instance", required_argument, NULL, 'i'},
        {"backend", required_argument, NULL, 'b'}, {"device", required_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},          {0}};
    a->config = CFG_DEFAULT_PATH;
    a->instance = 0;
    a->backend = NULL;
    a->device = 0;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "c:i:b:d:h", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            a->config = optarg;
            break;
        case 'i':
            a->instance = atoi(optarg);
            break;
        case 'b':
            if (!gpu) goto usage;
            a->backend = optarg;
            break;
        case 'd':
            if (!gpu) goto usage;
            a->device = atoi(optarg);
            if (!a->instance) a->instance = a->device;
            break;
        case 'h':
            usage(stdout, name, gpu);
            printf("\n%s\n\nOptions:\n"
                   "  -c, --config FILE   the pipeline's ini (default " CFG_DEFAULT_PATH ")\n"
                   "  -i, --instance N    this process's instance number (systemd passes %%i; default 0)\n",
                   about);
            if (gpu)
                printf("  -b, --backend B     overrides [gpu] backend: cpu, cuda, or auto (CUDA when built in and a\n"
                       "                      device answers, else the CPU backend with one warning)\n"
                       "  -d, --device N      CUDA device ordinal (default 0; also the instance unless -i)\n");
            printf(
                "  -h, --help          this text\n\nIt runs until SIGTERM; see docs/pipeline.md and docs/deploy.md.\n");
            *ret_exit = 0;
            return false;
        default:
            goto usage;
        }
    }
    if (optind != argc) goto usage;
    return true;
usage:
    usage(stderr, name, gpu);
    *ret_exit = 2;
    return false;
}

void daemon_notify_ready(const char *status) { (void)sd_notifyf(0, "READY=1\nSTATUS=%s", status); }

void daemon_notify_status(const char *fmt, ...) {
    if (!getenv("NOTIFY_SOCKET")) return;
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    (void)sd_notifyf(0, "STATUS=%s", buf);
}

void daemon_notify_watchdog(void) {
    static uint64_t last;
    uint64_t now = daemon_now_ns();
    if (now - last < 100000000ull) return; /* at most 10 per second */
    last = now;
    (void)sd_notify(0, "WATCHDOG=1");
}

void daemon_notify_stopping(void) { (void)sd_notify(0, "STOPPING=1"); }

void daemon_notify_extend(uint64_t usec, const char *status) {
    (void)sd_notifyf(0, "EXTEND_TIMEOUT_USEC=%llu\nSTATUS=%s", (unsigned long long)usec, status);
}

int daemon_wait_ms(int dflt) {
    uint64_t usec = 0;
    if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
        int half = (int)(usec / 2000) - 50;
        if (half < 10) half = 10;
        if (half < dflt) return half;
    }
    return dflt;
}

uint64_t daemon_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}
