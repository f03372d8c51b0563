/* The loaded generator: dlopen of a verified cache object, one wasm instance, circom's runtime
 * protocol (the one circom_runtime's witness_calculator.js speaks), and traps.
 *
 * Traps: generated code calls wasm_rt_trap (unreachable, division by zero, bad indirect call),
 * which longjmps to wasm_rt_jmp_buf; out-of-bounds accesses hit the guard region of the 8 GiB
 * reservation wasm_rt_allocate_memory makes and stack exhaustion hits the stack guard page, both
 * SIGSEGV, which our handler turns into the same longjmp (on the alternate stack wasm_rt_init set
 * up). A SIGSEGV outside generator code, or a SIGBUS outside the wasm's memory, is not ours: the
 * handler puts back the action the process had before witgen (the default crash, a stage's SIGBUS
 * line) and the fault recurs. After any trap or exception the instance is dropped and a
 * new one is made for the next input.
 *
 * Time limits: while generator code runs, a watcher thread ticks the caller's heartbeat every
 * 100 ms and, past the run's deadline (witness_timeout; OPEN_LIMIT_S for instantiation and the
 * protocol's first calls) or when the caller's stop() says so (a cancelled job), sends STOP_SIGNAL
 * to the generating thread, whose handler leaves the generator through the same wasm_rt_trap as a
 * fault. Code that must not be left by a longjmp (malloc inside instantiate, the log callback)
 * runs with no_stop raised; the stop then happens as it ends. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <wasm-rt.h>

#include "module.h"
#include "witgen.h"

/* defined by libwasm-rt-impl (wasm-rt-impl.h in Debian's wabt) */
extern jmp_buf wasm_rt_jmp_buf;

#define WASM_PAGE 65536u
#define RESERVATION 0x200000000ull /* what wasm_rt_allocate_memory reserves per memory */
#define TRAP_CIRCOM_EXCEPTION 100  /* our longjmp value for exceptionHandler */
#define TRAP_TIMEOUT 101           /* the watcher: past the run's deadline */
#define TRAP_STOPPED 102           /* the watcher: the caller's stop() said so */
#define STOP_SIGNAL (SIGRTMIN + 6)
#define OPEN_LIMIT_S 10u      /* instantiate, getVersion ... getInputSize: constant work in circom's wasm */
#define MESSAGE_MAX 4096u     /* getMessageChar calls for one message (a wasm that never returns 0) */
#define WASM_MAX_PAGES 65535u /* wasm_rt_memory_t's byte size is 32-bit: 65536 pages do not fit */

struct witgen {
    char wasm_path[1024];
    void *dl;
    const struct witgen_module *m;
    struct witgen_host host;
    void *inst;
    uint32_t n32, n_witness, n_inputs;
    uint32_t prime[16];
    const zk_curve_t *curve;
    uint64_t memory_limit;
    bool hugepages; /* witgen_opts_t's: advise the linear memory MADV_HUGEPAGE */
    void (*log_line)(void *, const char *);
    void *log_ctx;
    unsigned timeout_s;
    witgen_tick_fn tick;
    void *tick_ctx;
    bool (*stop)(void *);
    void *stop_ctx;
    /* the watcher of one run (see the top) */
    _Atomic int stop_code;         /* 0, TRAP_TIMEOUT or TRAP_STOPPED */
    volatile sig_atomic_t no_stop; /* > 0: in code a longjmp must not leave */
    unsigned run_limit_s;          /* the deadline of the run, for its message */
    /* protocol state of one run */
    uint32_t exc_code;
    char errstr[1024];
    char msgstr[1024];
};

static __thread struct witgen *volatile g_running; /* the generator running on this thread, if any */
static volatile sig_atomic_t g_handler_installed;
static struct sigaction g_prev_segv, g_prev_bus; /* the process's own handlers (a stage's SIGBUS line) */

static void segv_handler(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    struct witgen *g = g_running;
    uintptr_t a = (uintptr_t)si->si_addr, lo = 0;
    if (g && g->inst) lo = (uintptr_t)((wasm_rt_memory_t *)g->m->memory(g->inst))->data;
    bool in_memory = lo && a >= lo && a < lo + RESERVATION;
    /* SIGSEGV in generator code: its memory's guard region, else its stack's guard page. SIGBUS
     * only in its memory (elsewhere it is a mapped file cut short: the slab's segment) */
    if (!g || !g->inst || (sig == SIGBUS && !in_memory)) {
        /* not a generator fault: the action the process had before witgen (a stage's SIGBUS
         * message, or the default crash); the fault recurs on return */
        sigaction(sig, sig == SIGBUS ? &g_prev_bus : &g_prev_segv, NULL);
        return;
    }
    wasm_rt_trap(in_memory ? WASM_RT_TRAP_OOB : WASM_RT_TRAP_EXHAUSTION);
}

/* STOP_SIGNAL from the watcher: leave the generator unless it is in code that must finish first */
static void stop_handler(int sig) {
    (void)sig;
    struct witgen *g = g_running;
    if (!g || g->no_stop) return;
    int code = atomic_load(&g->stop_code);
    if (code) wasm_rt_trap((wasm_rt_trap_t)code);
}

/* Around code a longjmp must not leave; a stop that came meanwhile happens at the end. */
static void stop_hold(struct witgen *g) { g->no_stop = g->no_stop + 1; }
static void stop_release(struct witgen *g) {
    g->no_stop = g->no_stop - 1;
    int code = atomic_load(&g->stop_code);
    if (!g->no_stop && code && g_running == g) wasm_rt_trap((wasm_rt_trap_t)code);
}

static uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

typedef struct watch {
    struct witgen *g;
    pthread_t target, th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done, running;
    uint64_t deadline_ns; /* UINT64_MAX: none */
} watch_t;

static void *watch_main(void *arg) {
    watch_t *w = arg;
    struct witgen *g = w->g;
    pthread_mutex_lock(&w->mu);
    while (!w->done) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += 100000000;
        if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
        pthread_cond_timedwait(&w->cv, &w->mu, &ts);
        if (w->done) break;
        pthread_mutex_unlock(&w->mu);
        if (g->tick) g->tick(g->tick_ctx);
        int code = mono_ns() >= w->deadline_ns ? TRAP_TIMEOUT : g->stop && g->stop(g->stop_ctx) ? TRAP_STOPPED : 0;
        if (code) {
            int none = 0;
            atomic_compare_exchange_strong(&g->stop_code, &none, code);
            pthread_kill(w->target, STOP_SIGNAL); /* again every 100 ms until the run ends */
        }
        pthread_mutex_lock(&w->mu);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* Starts the watcher of a run of at most limit_s seconds (0: no deadline) on this thread. Without a
 * deadline, a tick or a stop() there is nothing to watch and no thread. */
static void watch_start(watch_t *w, struct witgen *g, unsigned limit_s) {
    memset(w, 0, sizeof *w);
    atomic_store(&g->stop_code, 0);
    g->run_limit_s = limit_s;
    if (!limit_s && !g->tick && !g->stop) return;
    w->g = g;
    w->target = pthread_self();
    w->deadline_ns = limit_s ? mono_ns() + (uint64_t)limit_s * 1000000000ull : UINT64_MAX;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&w->mu, NULL);
    /* the watcher takes no signals: STOP_SIGNAL and the daemon's are for the generating thread,
     * which must take STOP_SIGNAL whatever mask its caller gave it */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    sigdelset(&old, STOP_SIGNAL);
    w->running = pthread_create(&w->th, NULL, watch_main, w) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!w->running) {
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->mu);
    }
}

/* Ends the watcher (a STOP_SIGNAL it sent is taken, and ignored, before this returns). */
static void watch_stop(watch_t *w) {
    if (!w->running) return;
    pthread_mutex_lock(&w->mu);
    w->done = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->th, NULL);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    w->running = false;
}

static void runtime_init(void) {
    if (g_handler_installed) return;
    /* the actions to go back to for faults that are not the generator's: the process's own,
     * taken before wasm_rt_init puts its handler in */
    sigaction(SIGSEGV, NULL, &g_prev_segv);
    sigaction(SIGBUS, NULL, &g_prev_bus);
    wasm_rt_init(); /* sigaltstack + its own handler, replaced next */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sa.sa_sigaction = segv_handler;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    struct sigaction st;
    memset(&st, 0, sizeof st);
    st.sa_flags = SA_ONSTACK;
    sigemptyset(&st.sa_mask);
    st.sa_handler = stop_handler;
    sigaction(STOP_SIGNAL, &st, NULL);
    g_handler_installed = 1;
}

/* getMessage(): characters until 0 (at most MESSAGE_MAX), appended to buf */
static void get_message(struct witgen *g, char *buf, size_t cap) {
    size_t n = strlen(buf);
    for (uint32_t i = 0; i < MESSAGE_MAX; i++) {
        uint32_t c = g->m->get_message_char(g->inst);
        if (c == 0) break;
        if (n + 1 < cap) buf[n++] = (char)c;
    }
    buf[n] = 0;
}

static void h_exception(void *ctx, uint32_t code) {
    struct witgen *g = ctx;
    g->exc_code = code;
    wasm_rt_trap((wasm_rt_trap_t)TRAP_CIRCOM_EXCEPTION);
}

static void h_print_error(void *ctx) {
    struct witgen *g = ctx;
    get_message(g, g->errstr, sizeof g->errstr - 2);
    strcat(g->errstr, "\n");
}

static void flush_msg(struct witgen *g) {
    if (g->log_line) {
        stop_hold(g); /* the caller's logging takes locks */
        g->log_line(g->log_ctx, g->msgstr);
        stop_release(g);
    }
    g->msgstr[0] = 0;
}

static void h_write_buffer(void *ctx) {
    struct witgen *g = ctx;
    char msg[512] = "";
    get_message(g, msg, sizeof msg);
    if (!strcmp(msg, "\n")) {
        flush_msg(g);
        return;
    }
    size_t n = strlen(g->msgstr);
    snprintf(g->msgstr + n, sizeof g->msgstr - n, "%s%s", n ? " " : "", msg);
}

/* The shared memory (n32 LE words) in decimal. */
static void h_show_shared(void *ctx) {
    struct witgen *g = ctx;
    uint32_t w[16];
    for (uint32_t i = 0; i < g->n32; i++) w[i] = g->m->read_shared_rw_memory(g->inst, i);
    char dec[200];
    int k = (int)sizeof dec - 1;
    dec[k] = 0;
    bool nz;
    do {
        uint64_t rem = 0;
        nz = false;
        for (uint32_t i = g->n32; i-- > 0;) {
            uint64_t cur = (rem << 32) | w[i];
            w[i] = (uint32_t)(cur / 10);
            rem = cur % 10;
            nz |= w[i] != 0;
        }
        dec[--k] = (char)('0' + rem);
    } while (nz && k > 0);
    size_t n = strlen(g->msgstr);
    snprintf(g->msgstr + n, sizeof g->msgstr - n, "%s%s", n ? " " : "", dec + k);
}

static const char *trap_name(int code) {
    switch (code) {
    case WASM_RT_TRAP_OOB: return "out-of-bounds memory access";
    case WASM_RT_TRAP_EXHAUSTION: return "call stack exhausted";
    case WASM_RT_TRAP_INT_OVERFLOW: return "integer overflow";
    case WASM_RT_TRAP_DIV_BY_ZERO: return "integer division by zero";
    case WASM_RT_TRAP_INVALID_CONVERSION: return "invalid conversion";
    case WASM_RT_TRAP_UNREACHABLE: return "unreachable executed";
    case WASM_RT_TRAP_CALL_INDIRECT: return "invalid indirect call";
    default: return "trap";
    }
}

/* circom_runtime's texts for the exception codes */
static const char *exception_name(uint32_t code) {
    switch (code) {
    case 1: return "Signal not found.";
    case 2: return "Too many signals set.";
    case 3: return "Signal already set.";
    case 4: return "Assert Failed.";
    case 5: return "Not enough memory.";
    case 6: return "Input signal array access exceeds the size.";
    default: return "Unknown error.";
    }
}

/* wabt 1.0.32's wasm_rt_free_memory unmaps only the memory's current size of its 8 GiB reservation:
 * the rest stayed mapped (PROT_NONE), so every instance dropped (a failed input, a closed
 * generator) left 8 GiB of address space and a mapping behind, and synthd would have run out of
 * either after some thousands of bad inputs. The tail is unmapped here, before the instance frees
 * the rest: only the tail, because once freed the head's addresses may be another thread's. */
static void drop_instance(struct witgen *g) {
    if (!g->inst) return;
    wasm_rt_memory_t *mem = g->m->memory(g->inst);
    if (mem && mem->data) (void)munmap(mem->data + mem->size, RESERVATION - mem->size); /* size: 32 bits */
    g->m->free_instance(g->inst);
    g->inst = NULL;
}

/* Runs generator code between wasm_rt_try and here; returns the longjmp value (0 = none). The
 * macro keeps setjmp in the caller's frame, as it must be. */
#define WITGEN_TRY(g, code_var)                                                                                        \
    do {                                                                                                               \
        g_running = (g);                                                                                               \
        wasm_rt_set_unwind_target(&wasm_rt_jmp_buf);                                                                   \
        code_var = WASM_RT_SETJMP(wasm_rt_jmp_buf);                                                                    \
    } while (0)

static int fail_run(struct witgen *g, int code, const char *what, const char *input, zk_err_t *err) {
    g_running = NULL;
    drop_instance(g);
    const char *name = input ? input : g->wasm_path;
    if (code == TRAP_TIMEOUT)
        return zk_fail(err, ETIMEDOUT, "%s: generator ran past %u s (%s)", name, g->run_limit_s, what);
    if (code == TRAP_STOPPED) return zk_fail(err, ECANCELED, "%s: generator stopped (%s): cancelled", name, what);
    if (code == TRAP_CIRCOM_EXCEPTION) {
        /* one line: the circuit's own message lines joined with "; " */
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", g->errstr);
        size_t n = strlen(msg);
        while (n && msg[n - 1] == '\n') msg[--n] = 0;
        for (char *p = msg; *p; p++)
            if (*p == '\n') *p = ';';
        if (g->exc_code == 4)
            return zk_fail(err, EINVAL, "%s: the circuit rejects the input (%s): %s%s%s", name, what,
                           exception_name(4), msg[0] ? " " : "", msg);
        if (g->exc_code == 5)
            return zk_fail(err, ENOMEM, "%s: generator out of memory (%s): %s%s%s", name, what, exception_name(5),
                           msg[0] ? " " : "", msg);
        return zk_fail(err, EINVAL, "%s: generator error (%s): %s%s%s", name, what, exception_name(g->exc_code),
                       msg[0] ? " " : "", msg);
    }
    return zk_fail(err, EFAULT, "%s: generator trap (%s): %s", name, what, trap_name(code));
}

/* Makes the instance; reads the field and sizes (ensure_instance's run, under its watcher). */
static int make_instance(struct witgen *g, zk_err_t *err) {
    volatile int code;
    const char *volatile step = "instantiate";
    WITGEN_TRY(g, code);
    if (code) {
        char what[40];
        snprintf(what, sizeof what, "%s", (const char *)step);
        return fail_run(g, code, what, NULL, err);
    }
    g->exc_code = 0;
    g->errstr[0] = g->msgstr[0] = 0;
    stop_hold(g); /* instantiate allocates */
    g->inst = g->m->instantiate(&g->host, g);
    if (!g->inst) {
        g_running = NULL;
        g->no_stop = 0;
        return zk_fail(err, ENOMEM, "%s: cannot instantiate: out of memory", g->wasm_path);
    }
    stop_release(g);
    wasm_rt_memory_t *mem = g->m->memory(g->inst);
    /* [pipeline] hugepages: the linear memory in 2 MiB pages where the kernel has them (a generator
     * touches tens of MiB once); otherwise the system's THP policy decides (witgen.h, hugepages) */
    if (g->hugepages) (void)madvise(mem->data, RESERVATION, MADV_HUGEPAGE);
    if (g->memory_limit) {
        uint64_t pages = g->memory_limit / WASM_PAGE;
        if (pages < mem->pages) {
            uint32_t have = mem->pages;
            g_running = NULL;
            drop_instance(g);
            return zk_fail(err, ENOMEM, "%s: the wasm starts with %llu bytes of memory, over the limit of %llu",
                           g->wasm_path, (unsigned long long)have * WASM_PAGE, (unsigned long long)g->memory_limit);
        }
        if (pages < mem->max_pages) mem->max_pages = (uint32_t)pages;
    }
    step = "getVersion";
    uint32_t ver = g->m->get_version(g->inst);
    step = "getFieldNumLen32";
    uint32_t n32 = g->m->get_field_num_len32(g->inst);
    if (ver != 2 || n32 == 0 || n32 > 16) {
        g_running = NULL;
        drop_instance(g);
        return zk_fail(err, EINVAL, "%s: not a circom 2 witness generator (version %u, %u-word field)", g->wasm_path,
                       ver, n32);
    }
    g->n32 = n32;
    step = "getRawPrime";
    g->m->get_raw_prime(g->inst);
    for (uint32_t i = 0; i < n32; i++) g->prime[i] = g->m->read_shared_rw_memory(g->inst, i);
    if (g->m->native_fr && g->m->check_native(g->inst) < 0) {
        g_running = NULL;
        drop_instance(g);
        return zk_fail(err, EINVAL, "%s: the wasm's prime is not the one of its field code (%s's); not a circom generator",
                       g->wasm_path, g->m->native_fr == 1 ? "bn128" : "bls12381");
    }
    step = "getWitnessSize";
    g->n_witness = g->m->get_witness_size(g->inst);
    step = "getInputSize";
    g->n_inputs = g->m->get_input_size(g->inst);
    g_running = NULL;
    return 0;
}

/* Makes the instance if there is none, within OPEN_LIMIT_S (or the run's limit when shorter). */
static int ensure_instance(struct witgen *g, zk_err_t *err) {
    if (g->inst) return 0;
    watch_t w;
    watch_start(&w, g, g->timeout_s && g->timeout_s < OPEN_LIMIT_S ? g->timeout_s : OPEN_LIMIT_S);
    int r = make_instance(g, err);
    watch_stop(&w);
    return r;
}

/* The initial pages of the wasm's memory (its memory section or an imported memory), read from the
 * file; -1 when it has none this reader finds (wasm2c then judges the file). */
static bool leb_u32(FILE *f, uint32_t *v) {
    uint64_t r = 0;
    for (int sh = 0; sh < 35; sh += 7) {
        int c = fgetc(f);
        if (c == EOF) return false;
        r |= (uint64_t)(c & 0x7f) << sh;
        if (!(c & 0x80)) {
            *v = (uint32_t)r;
            return r <= UINT32_MAX;
        }
    }
    return false;
}

static bool skip_name(FILE *f) {
    uint32_t n;
    return leb_u32(f, &n) && fseek(f, n, SEEK_CUR) == 0;
}

static int64_t wasm_initial_pages(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0) return -1;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return -1;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return -1;
    }
    int64_t pages = -1;
    uint8_t hdr[8];
    uint32_t size, n, flags, init, skip;
    if (fread(hdr, 1, 8, f) != 8 || memcmp(hdr, "\0asm", 4)) goto out;
    for (int id; (id = fgetc(f)) != EOF && leb_u32(f, &size);) {
        long start = ftell(f);
        if (id == 5) { /* memory section: the first memory's limits */
            if (leb_u32(f, &n) && n && leb_u32(f, &flags) && leb_u32(f, &init)) pages = init;
            goto out;
        }
        if (id == 2 && leb_u32(f, &n)) { /* imports: a memory among them */
            for (uint32_t i = 0; i < n; i++) {
                if (!skip_name(f) || !skip_name(f)) goto out;
                int kind = fgetc(f);
                if (kind == 0) { /* function: type index */
                    if (!leb_u32(f, &skip)) goto out;
                } else if (kind == 1) { /* table: reftype, limits */
                    if (fgetc(f) == EOF || !leb_u32(f, &flags) || !leb_u32(f, &skip)) goto out;
                    if ((flags & 1) && !leb_u32(f, &skip)) goto out;
                } else if (kind == 2) {
                    if (leb_u32(f, &flags) && leb_u32(f, &init)) pages = init;
                    goto out;
                } else if (kind == 3) { /* global: valtype, mutability */
                    if (fgetc(f) == EOF || fgetc(f) == EOF) goto out;
                } else {
                    goto out;
                }
            }
        }
        if (id > 5 && id != 12) goto out; /* past where a memory can be declared */
        if (fseek(f, start + (long)size, SEEK_SET) < 0) goto out;
    }
out:
    fclose(f);
    return pages;
}

int witgen_open(witgen_t **ret, const char *wasm_path, const witgen_opts_t *o, bool *ret_built, zk_err_t *err) {
    *ret = NULL;
    char so[1200];
    int fd, r;
    int64_t pages = wasm_initial_pages(wasm_path);
    if (pages > WASM_MAX_PAGES)
        return zk_fail(err, EFBIG,
                       "%s: the wasm asks for %llu bytes of initial memory (%lld pages); the runtime's memory holds at "
                       "most %u pages (4 GiB - 64 KiB)",
                       wasm_path, (unsigned long long)pages * WASM_PAGE, (long long)pages, WASM_MAX_PAGES);
    /* the object is checked through fd; it is loaded by its path (dlopen tells objects apart by
     * name, so /proc/self/fd/N would be one name for many files), and the path must still name the
     * checked file before and after the load. Replaced in between (another process's build of the
     * same object renamed over it): checked again, a few times. */
    struct stat st_fd, st_a, st_b;
    for (int attempt = 0;; attempt++) {
        if ((r = witgen_build_fd(wasm_path, o, so, sizeof so, attempt ? NULL : ret_built, &fd, err)) < 0) return r;
        bool same = fstat(fd, &st_fd) == 0 && stat(so, &st_a) == 0 && st_a.st_dev == st_fd.st_dev &&
                    st_a.st_ino == st_fd.st_ino;
        close(fd);
        if (same) break;
        if (attempt == 3) return zk_fail(err, EAGAIN, "%s: replaced while it was being checked; try again", so);
    }
    runtime_init();
    void *dl = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    if (!dl) return zk_fail(err, EINVAL, "%s: cannot load: %s", so, dlerror());
    if (stat(so, &st_b) < 0 || st_b.st_dev != st_fd.st_dev || st_b.st_ino != st_fd.st_ino) {
        dlclose(dl);
        return zk_fail(err, EAGAIN, "%s: replaced while it was being loaded; try again", so);
    }
    const struct witgen_module *m = dlsym(dl, WITGEN_MODULE_SYMBOL);
    if (!m || m->abi != WITGEN_ABI) {
        dlclose(dl);
        return zk_fail(err, EINVAL, "%s: not a zkpipe generator of ABI %d", so, WITGEN_ABI);
    }
    struct witgen *g = calloc(1, sizeof *g);
    if (!g) {
        dlclose(dl);
        return zk_fail(err, ENOMEM, "out of memory");
    }
    snprintf(g->wasm_path, sizeof g->wasm_path, "%s", wasm_path);
    g->dl = dl;
    g->m = m;
    g->host = (struct witgen_host){h_exception, h_print_error, h_write_buffer, h_show_shared};
    g->memory_limit = o->memory_limit;
    g->hugepages = o->hugepages;
    g->log_line = o->log_line;
    g->log_ctx = o->log_ctx;
    g->timeout_s = o->timeout_s;
    g->tick = o->tick;
    g->tick_ctx = o->tick_ctx;
    g->stop = o->stop;
    g->stop_ctx = o->stop_ctx;
    m->init_module();
    if ((r = ensure_instance(g, err)) < 0) {
        witgen_close(g);
        return r;
    }
    g->curve = zk_curve_by_r((const uint8_t *)g->prime, g->n32 * 4);
    if (!g->curve) {
        witgen_close(g);
        return zk_fail(err, EINVAL, "%s: the wasm's prime is not the scalar field of bn128 or bls12381", wasm_path);
    }
    *ret = g;
    return 0;
}

void witgen_close(witgen_t *g) {
    if (!g) return;
    drop_instance(g);
    /* the object stays mapped: wasm2c registers its function types with the shared runtime */
    free(g);
}

const zk_curve_t *witgen_curve(const witgen_t *g) { return g->curve; }
const struct witgen_module *witgen_module_of(witgen_t *g, void **inst) {
    *inst = g->inst;
    return g->m;
}
uint32_t witgen_n_witness(const witgen_t *g) { return g->n_witness; }
size_t witgen_wtns_size(const witgen_t *g) { return 44 + (size_t)g->n32 * 4 + (size_t)g->n_witness * g->n32 * 4; }

int witgen_check_zkey(const witgen_t *g, const zk_zkey_t *z, const char *zkey_name, zk_err_t *err) {
    if (g->curve != z->curve)
        return zk_fail(err, EINVAL, "%s: the wasm's prime is %s's, the zkey %s is for %s", g->wasm_path,
                       g->curve->name, zkey_name, z->curve->name);
    if (g->n_witness != z->n_vars)
        return zk_fail(err, EINVAL, "%s: the wasm makes witnesses of %u values, the zkey %s needs %u", g->wasm_path,
                       g->n_witness, zkey_name, z->n_vars);
    return 0;
}

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

/* One input through the generator (witgen_calc's run, under its watcher). */
static int run_input(witgen_t *g, const witgen_input_t *inp, const char *input_path, uint8_t *out, size_t *ret_len,
                     zk_err_t *err) {
    const witgen_input_t in = *inp;
    int r;
    volatile uint32_t set = 0;
    volatile int code;
    const char *volatile step = "init";
    WITGEN_TRY(g, code);
    if (code) {
        char what[200];
        snprintf(what, sizeof what, "%s", (const char *)step);
        return fail_run(g, code, what, input_path, err);
    }
    g->exc_code = 0;
    g->errstr[0] = g->msgstr[0] = 0;
    g->m->init(g->inst, 0);
    for (uint32_t s = 0; s < in.n_signals; s++) {
        const witgen_signal_t *sg = &in.signals[s];
        uint32_t hm = (uint32_t)(sg->hash >> 32), hl = (uint32_t)sg->hash;
        step = "setInputSignal";
        int32_t size = (int32_t)g->m->get_input_signal_size(g->inst, hm, hl);
        if (size <= 0) { /* circom 2.2 answers 0 for a name it does not know */
            g_running = NULL;
            r = zk_fail(err, EINVAL, "%s: signal %s is not an input of the circuit", input_path, sg->name);
            goto out;
        }
        if (sg->n != (uint32_t)size) {
            g_running = NULL;
            r = zk_fail(err, EINVAL, "%s: signal %s: %u value%s given, the circuit's input has %d (%s)", input_path,
                        sg->name, sg->n, sg->n == 1 ? "" : "s", size, sg->n < (uint32_t)size ? "not enough values"
                                                                                               : "too many values");
            goto out;
        }
        for (uint32_t i = 0; i < sg->n; i++) {
            for (uint32_t j = 0; j < g->n32; j++)
                g->m->write_shared_rw_memory(g->inst, j, sg->vals[(size_t)i * g->n32 + j]);
            g->m->set_input_signal(g->inst, hm, hl, i);
            set = set + 1;
        }
    }
    if (set < g->n_inputs) {
        g_running = NULL;
        r = zk_fail(err, EINVAL, "%s: an input signal is missing: %u of the circuit's %u input values are set",
                    input_path, (uint32_t)set, g->n_inputs);
        goto out;
    }
    /* the .wtns image, as circom_runtime's calculateWTNSBin writes it */
    step = "getWitness";
    uint32_t n8 = g->n32 * 4;
    memcpy(out, "wtns", 4);
    put32(out + 4, 2);
    put32(out + 8, 2);
    put32(out + 12, 1);
    uint64_t s1 = 8 + n8;
    memcpy(out + 16, &s1, 8);
    put32(out + 24, n8);
    memcpy(out + 28, g->prime, n8);
    uint8_t *p = out + 28 + n8;
    put32(p, g->n_witness);
    put32(p + 4, 2);
    uint64_t s2 = (uint64_t)n8 * g->n_witness;
    memcpy(p + 8, &s2, 8);
    p += 16;
    g->m->get_witness_all(g->inst, g->n_witness, g->n32, p); /* little-endian words, as put32 */
    p += (size_t)n8 * g->n_witness;
    g_running = NULL;
    if (g->msgstr[0]) flush_msg(g);
    *ret_len = (size_t)(p - out);
    r = 0;
out:
    if (r < 0) drop_instance(g); /* a half-set input: start the next one on a fresh instance */
    return r;
}

int witgen_calc(witgen_t *g, const char *input_path, uint8_t *out, size_t cap, size_t *ret_len, zk_err_t *err) {
    int r = ensure_instance(g, err);
    if (r < 0) return r;
    size_t need = witgen_wtns_size(g);
    if (cap < need)
        return zk_fail(err, ENOSPC, "%s: the witness needs %zu bytes, %zu available", input_path, need, cap);
    /* the watcher runs from the input's parsing on (heartbeats); a stop then waits for its end */
    watch_t w;
    watch_start(&w, g, g->timeout_s);
    witgen_input_t in;
    r = witgen_input_load_max(&in, input_path, g->prime, g->n32, witgen_input_max_bytes(g->n_inputs, g->n32), err);
    if (r == 0) {
        int code = atomic_load(&g->stop_code);
        r = code ? fail_run(g, code, "reading the input", input_path, err)
                 : run_input(g, &in, input_path, out, ret_len, err);
        witgen_input_free(&in);
    }
    watch_stop(&w);
    return r;
}
