/* The loaded generator: dlopen of a verified cache object, one wasm instance, circom's runtime
 * protocol (the one circom_runtime's witness_calculator.js speaks), and traps.
 *
 * Traps: generated code calls wasm_rt_trap (unreachable, division by zero, bad indirect call),
 * which longjmps to wasm_rt_jmp_buf; out-of-bounds accesses hit the guard region of the 8 GiB
 * reservation wasm_rt_allocate_memory makes and stack exhaustion hits the stack guard page, both
 * SIGSEGV, which our handler turns into the same longjmp (on the alternate stack wasm_rt_init set
 * up). A SIGSEGV outside generator code is not ours: the handler restores the default action and
 * the fault recurs as a normal crash. After any trap or exception the instance is dropped and a
 * new one is made for the next input. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wasm-rt.h>

#include "module.h"
#include "witgen.h"

/* defined by libwasm-rt-impl (wasm-rt-impl.h in Debian's wabt) */
extern jmp_buf wasm_rt_jmp_buf;

#define WASM_PAGE 65536u
#define RESERVATION 0x200000000ull /* what wasm_rt_allocate_memory reserves per memory */
#define TRAP_CIRCOM_EXCEPTION 100  /* our longjmp value for exceptionHandler */

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
    void (*log_line)(void *, const char *);
    void *log_ctx;
    /* protocol state of one run */
    uint32_t exc_code;
    char errstr[1024];
    char msgstr[1024];
};

static __thread struct witgen *volatile g_running; /* the generator running on this thread, if any */
static volatile sig_atomic_t g_handler_installed;

static void segv_handler(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    struct witgen *g = g_running;
    if (!g || !g->inst) {
        /* not a generator fault: crash as if we had no handler */
        signal(sig, SIG_DFL);
        return;
    }
    wasm_rt_memory_t *mem = g->m->memory(g->inst);
    uintptr_t a = (uintptr_t)si->si_addr, lo = (uintptr_t)mem->data;
    wasm_rt_trap(a >= lo && a < lo + RESERVATION ? WASM_RT_TRAP_OOB : WASM_RT_TRAP_EXHAUSTION);
}

static void runtime_init(void) {
    if (g_handler_installed) return;
    wasm_rt_init(); /* sigaltstack + its own handler, replaced next */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sa.sa_sigaction = segv_handler;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    g_handler_installed = 1;
}

/* getMessage(): characters until 0, appended to buf */
static void get_message(struct witgen *g, char *buf, size_t cap) {
    size_t n = strlen(buf);
    for (;;) {
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
    if (g->log_line) g->log_line(g->log_ctx, g->msgstr);
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

static void drop_instance(struct witgen *g) {
    if (g->inst) g->m->free_instance(g->inst);
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

/* Makes the instance if there is none; reads the field and sizes. */
static int ensure_instance(struct witgen *g, zk_err_t *err) {
    if (g->inst) return 0;
    volatile int code;
    WITGEN_TRY(g, code);
    if (code) return fail_run(g, code, "instantiate", NULL, err);
    g->exc_code = 0;
    g->errstr[0] = g->msgstr[0] = 0;
    g->inst = g->m->instantiate(&g->host, g);
    if (!g->inst) {
        g_running = NULL;
        return zk_fail(err, ENOMEM, "%s: cannot instantiate: out of memory", g->wasm_path);
    }
    wasm_rt_memory_t *mem = g->m->memory(g->inst);
    /* the linear memory in 2 MiB pages where the kernel has them (THP "madvise" mode): a generator
     * touches tens of MiB once, and 4 KiB faults were a tenth of its time */
    madvise(mem->data, RESERVATION, MADV_HUGEPAGE);
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
    uint32_t ver = g->m->get_version(g->inst);
    uint32_t n32 = g->m->get_field_num_len32(g->inst);
    if (ver != 2 || n32 == 0 || n32 > 16) {
        g_running = NULL;
        drop_instance(g);
        return zk_fail(err, EINVAL, "%s: not a circom 2 witness generator (version %u, %u-word field)", g->wasm_path,
                       ver, n32);
    }
    g->n32 = n32;
    g->m->get_raw_prime(g->inst);
    for (uint32_t i = 0; i < n32; i++) g->prime[i] = g->m->read_shared_rw_memory(g->inst, i);
    if (g->m->native_fr && g->m->check_native(g->inst) < 0) {
        g_running = NULL;
        drop_instance(g);
        return zk_fail(err, EINVAL, "%s: the wasm's prime is not the one of its field code (%s's); not a circom generator",
                       g->wasm_path, g->m->native_fr == 1 ? "bn128" : "bls12381");
    }
    g->n_witness = g->m->get_witness_size(g->inst);
    g->n_inputs = g->m->get_input_size(g->inst);
    g_running = NULL;
    return 0;
}

int witgen_open(witgen_t **ret, const char *wasm_path, const witgen_opts_t *o, bool *ret_built, zk_err_t *err) {
    *ret = NULL;
    char so[1200];
    int fd, r;
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
    g->log_line = o->log_line;
    g->log_ctx = o->log_ctx;
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

int witgen_calc(witgen_t *g, const char *input_path, uint8_t *out, size_t cap, size_t *ret_len, zk_err_t *err) {
    int r = ensure_instance(g, err);
    if (r < 0) return r;
    size_t need = witgen_wtns_size(g);
    if (cap < need)
        return zk_fail(err, ENOSPC, "%s: the witness needs %zu bytes, %zu available", input_path, need, cap);
    witgen_input_t in;
    if ((r = witgen_input_load(&in, input_path, g->prime, g->n32, err)) < 0) return r;
    volatile uint32_t set = 0;
    volatile int code;
    const char *volatile step = "init";
    WITGEN_TRY(g, code);
    if (code) {
        char what[200];
        snprintf(what, sizeof what, "%s", (const char *)step);
        witgen_input_free(&in);
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
    witgen_input_free(&in);
    return r;
}
