/* What every zkpipe daemon does the same way: arguments, signals, sd_notify (READY, STATUS,
 * WATCHDOG, STOPPING) and the futex wait timeout that keeps the watchdog fed. (The test hooks every
 * process may stop at are base/testpoint.h.) */
#pragma once
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct daemon_args {
    const char *config;  /* --config FILE (default /etc/zkpipe/zkpipe.ini) */
    int instance;        /* --instance N (systemd %i), default 0 */
    const char *backend; /* gpud: --backend cpu|cuda|auto */
    int device;          /* gpud: --device N */
} daemon_args_t;

/* Parses the daemons' common options; --help prints the usage, `about` (what the daemon does) and
 * the options. false: exit with *ret_exit (0 after --help, 2 on bad usage). */
bool daemon_parse_args(int argc, char **argv, const char *name, const char *about, bool gpu, daemon_args_t *a,
                       int *ret_exit);

extern volatile sig_atomic_t daemon_stop;
void daemon_signals_init(void);

void daemon_notify_ready(const char *status);
void daemon_notify_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void daemon_notify_watchdog(void);
void daemon_notify_stopping(void);
/* While starting: gives systemd usec more from now before READY=1 is due (EXTEND_TIMEOUT_USEC=), so a
 * long key load is bounded per step instead of by one TimeoutStartSec= for the whole start. */
void daemon_notify_extend(uint64_t usec, const char *status);
/* Futex timeout for the main loop: below half of WATCHDOG_USEC when set, else `dflt`. */
int daemon_wait_ms(int dflt);

uint64_t daemon_now_ns(void);
