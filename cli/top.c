/* zkpipe top: a live terminal view of the pipeline, redrawn in place with plain ANSI every
 * --interval seconds: slabs by state, stages (busy %, heartbeat; a stage that stopped heart-beating
 * in reverse video), partitions queued by priority, the GPU stage's idle gaps (p50/p99 over the last
 * minute, from the segment's histograms), trims and their cost, and the jobs in flight. `q` quits;
 * a closed terminal (end of input, a hang-up, a failed write) ends it cleanly with the terminal
 * restored. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "client.h"
#include "commands.h"
#include "exporter/observe.h"

#define TOP_USAGE "zkpipe top [--config FILE] [--interval S]"
#define TOP_WINDOW 64 /* snapshots kept for the one-minute window */

static struct termios saved;
static bool raw_mode, alt_screen;
static volatile sig_atomic_t hung_up;

static void restore(void) {
    if (alt_screen) {
        static const char s[] = "\033[?25h\033[?1049l";
        (void)!write(STDOUT_FILENO, s, sizeof s - 1);
        alt_screen = false;
    }
    if (raw_mode) tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved), raw_mode = false;
}

static void on_signal(int sig) { hung_up = sig; }

typedef struct {
    uint64_t t_ns;
    shm_hist_snap_t idle; /* both idle gaps of the GPU stage, added */
} snap_t;

static void idle_snapshot(shm_t *s, snap_t *ret) {
    shm_hist_snap_t a, b;
    (void)shm_hist_read(s, STEP_GPU_WAIT_READY, &a);
    (void)shm_hist_read(s, STEP_GPU_IDLE_READY, &b);
    ret->t_ns = shm_now_ns();
    for (uint32_t k = 0; k < SHM_HIST_BUCKETS; k++) ret->idle.bucket[k] = a.bucket[k] + b.bucket[k];
    ret->idle.sum_ns = a.sum_ns + b.sum_ns;
    ret->idle.count = a.count + b.count;
}

static void print_ms(FILE *o, uint64_t ns) {
    if (ns == UINT64_MAX)
        fputs("  >1100 s", o);
    else
        fprintf(o, "%8.3f ms", ns / 1e6);
}

/* One frame into f; the caller writes it out at once. */
static void frame(FILE *f, const cfg_t *c, shm_t *s, int att, snap_t *win, int *n_win, int rows) {
    int line = 0;
#define OUT(...) (line < rows - 1 ? (fprintf(f, __VA_ARGS__), fputs("\033[K\n", f), line++) : 0)
    fputs("\033[H", f);
    OUT("zkpipe top: pipeline %s  (q quits)", c->name);
    if (att != 1) {
        OUT("segment %s: %s", c->segment, att == 0 ? "not present (no stage is running)" : "unusable");
        fputs("\033[J", f);
        return;
    }
    uint32_t sc[SLAB_NSTATES];
    shm_slab_counts(s, sc);
    char buf[256];
    int n = 0;
    for (int i = 0; i < SLAB_NSTATES; i++)
        n += snprintf(buf + n, sizeof buf - n, " %s %u", shm_slab_state_name(i), sc[i]);
    OUT("slabs (%u):%s", s->hdr->n_slabs, buf);
    uint32_t q[CFG_PRIO_COUNT];
    obs_queued(s, q);
    OUT("queued: critical %u  high %u  normal %u  low %u", q[0], q[1], q[2], q[3]);
    OUT("partitions: synthesized %llu  proved %llu  finalized %llu  failed %llu   reclaimed slabs %llu",
        (unsigned long long)shm_counter(s, CNT_SYNTHESIZED), (unsigned long long)shm_counter(s, CNT_PROVED),
        (unsigned long long)shm_counter(s, CNT_FINALIZED), (unsigned long long)shm_counter(s, CNT_PART_FAILED),
        (unsigned long long)shm_counter(s, CNT_RECLAIMED));
    /* the idle gaps of the last minute: now minus the oldest snapshot within 60 s */
    snap_t now;
    idle_snapshot(s, &now);
    if (*n_win == TOP_WINDOW) memmove(win, win + 1, sizeof *win * (TOP_WINDOW - 1)), (*n_win)--;
    win[(*n_win)++] = now;
    int o = 0;
    while (o < *n_win - 1 && now.t_ns - win[o].t_ns > 60000000000ull) o++;
    shm_hist_snap_t d;
    shm_hist_diff(&now.idle, &win[o].idle, &d);
    if (o == *n_win - 1) d = now.idle; /* the first frame: since the start */
    fprintf(f, "GPU idle gaps (last %.0f s): %llu, p50 ", o == *n_win - 1 ? 0.0 : (now.t_ns - win[o].t_ns) / 1e9,
            (unsigned long long)d.count);
    print_ms(f, shm_hist_quantile_ns(&d, 0.5));
    fputs("  p99 ", f);
    print_ms(f, shm_hist_quantile_ns(&d, 0.99));
    OUT("  total %.1f ms", d.sum_ns / 1e6);
    shm_hist_snap_t trim;
    (void)shm_hist_read(s, STEP_SYNTH_TRIM, &trim);
    OUT("trims: %llu, %.1f ms in all, %.3f ms each", (unsigned long long)shm_counter(s, CNT_TRIMS), trim.sum_ns / 1e6,
        trim.count ? trim.sum_ns / 1e6 / trim.count : 0.0);
    OUT("%s", "");
    OUT("%-12s %8s %8s %7s %10s %6s  %s", "STAGE", "INSTANCE", "PID", "BUSY%", "HEARTBEAT", "SLAB", "DEVICE (PROVED)");
    obs_proc_t procs[SHM_MAX_PROCS];
    uint32_t np = obs_procs(s, procs, SHM_MAX_PROCS);
    for (uint32_t i = 0; i < np; i++) {
        obs_proc_t *p = &procs[i];
        bool stale = p->heartbeat_age_s > OBS_STALE_S;
        char slab[16] = "-";
        if (p->info.cur_slab != SHM_NONE) snprintf(slab, sizeof slab, "%u", p->info.cur_slab);
        char dev[64] = "";
        if (p->info.role == ROLE_GPUD)
            snprintf(dev, sizeof dev, "  %s (%llu)", p->info.device, (unsigned long long)p->info.steps);
        OUT("%s%-12s %8u %8u %6.1f%% %8.1f s %6s%s%s", stale ? "\033[7m" : "", shm_role_name(p->info.role),
            p->info.instance, p->info.pid, 100.0 * p->busy_ratio, p->heartbeat_age_s, slab, dev,
            stale ? "  STOPPED HEART-BEATING\033[0m" : "");
    }
    OUT("%s", "");
    OUT("%-34s %-16s %-9s %-10s %s", "JOB", "CIRCUIT", "PRIORITY", "STATE", "PARTITIONS DONE/TOTAL");
    for (uint32_t i = 0; i < s->hdr->n_jobs; i++) {
        shm_job_t *j = &s->jobs[i];
        uint32_t st = shm_job_state(j);
        if (!shm_job_live(st)) continue;
        uint32_t pc[PART_NSTATES];
        shm_part_counts(s, i, pc);
        OUT("%-34.34s %-16.16s %-9s %-10s %u/%u", j->id, j->circuit, obs_priority_label(j->prio),
            shm_job_state_name(st), pc[PART_DONE], j->n_parts);
    }
    fputs("\033[J", f);
#undef OUT
}

int zkpipe_cmd_top(int argc, char **argv) {
    const char *config, *interval = "1";
    cli_option_t opts[] = {{"interval", 'n', "S", &interval}, {0}};
    int parsed =
        cli_options(argc, argv, TOP_USAGE, "A live view of the pipeline, redrawn every S seconds (default 1); q quits.",
                    opts, &config);
    if (parsed >= 0) return parsed;
    if (optind < argc) return cli_usage_error(TOP_USAGE);
    char *end;
    double iv = strtod(interval, &end);
    if (*end || !(iv >= 0.1 && iv <= 3600)) {
        fprintf(stderr, "zkpipe: --interval %s: expected seconds from 0.1 to 3600\n", interval);
        return 2;
    }
    cfg_t c;
    if (cli_load_config(config, &c) < 0) return 2;
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    atexit(restore);
    if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0) {
        struct termios t = saved;
        t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
        t.c_cc[VMIN] = 1;
        t.c_cc[VTIME] = 0;
        raw_mode = tcsetattr(STDIN_FILENO, TCSANOW, &t) == 0;
    }
    if (isatty(STDOUT_FILENO)) {
        static const char s[] = "\033[?1049h\033[?25l\033[2J";
        alt_screen = write(STDOUT_FILENO, s, sizeof s - 1) > 0;
    }
    static snap_t win[TOP_WINDOW];
    int n_win = 0, rc = 0;
    shm_t s;
    int att = 0;
    while (!hung_up) {
        if (att != 1) {
            att = cli_attach(&c, &s, true);
            n_win = 0;
        }
        struct winsize ws = {0};
        int rows = ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row ? ws.ws_row : 1000;
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        if (!f) return 1;
        frame(f, &c, &s, att, win, &n_win, rows);
        fclose(f);
        ssize_t w = write(STDOUT_FILENO, text, len);
        free(text);
        if (w != (ssize_t)len) break; /* the terminal went away */
        struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
        int r = poll(&p, 1, (int)(iv * 1000));
        if (r < 0 && errno != EINTR) break;
        if (r > 0) {
            char ch;
            ssize_t k = read(STDIN_FILENO, &ch, 1);
            if (k <= 0 || (p.revents & (POLLHUP | POLLERR))) break; /* input closed: the terminal is gone */
            if (ch == 'q' || ch == 'Q') break;
        }
    }
    if (att == 1) shm_close(&s);
    restore();
    return rc;
}
