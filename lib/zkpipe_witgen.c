/* libzkpipe's witness generation (zkpipe.h): witgen/ behind a lock, on a thread of its own.
 *
 * The wasm runtime keeps its trap state in globals (wasm_rt_jmp_buf), so one generator runs at a
 * time in the process. Each run is on a fresh thread with a 16 MiB stack and its own alternate
 * signal stack, so that a circuit that exhausts the stack gets witgen's trap handler (an error)
 * whatever thread called us and however small its stack is. Compiled generators resolve the
 * runtime (wasm_rt_*) from the global scope: libzkpipe exports it and makes itself global once,
 * also when the program loaded it with dlopen(RTLD_LOCAL). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "include/zkpipe/zkpipe.h"
#include "witgen/witgen.h"

#define API __attribute__((visibility("default")))
#define GEN_STACK (16u << 20)
#define GEN_ALTSTACK (256u << 10)

struct zkpipe_witgen {
    witgen_t *g;
};

static pthread_mutex_t gen_lock = PTHREAD_MUTEX_INITIALIZER;

struct gen_job {
    int (*fn)(struct gen_job *);
    const char *wasm, *cache, *input;
    witgen_t *g;
    uint8_t *out;
    size_t cap, len;
    zk_err_t *err;
    int rc;
};

static void *gen_thread(void *arg) {
    struct gen_job *j = arg;
    stack_t ss = {.ss_sp = malloc(GEN_ALTSTACK), .ss_size = GEN_ALTSTACK}, off = {.ss_flags = SS_DISABLE};
    if (!ss.ss_sp || sigaltstack(&ss, NULL) < 0) {
        free(ss.ss_sp);
        j->rc = zk_fail(j->err, ENOMEM, "no alternate signal stack for the witness generator");
        return NULL;
    }
    j->rc = j->fn(j);
    (void)sigaltstack(&off, NULL);
    free(ss.ss_sp);
    return NULL;
}

static int gen_run(struct gen_job *j) {
    pthread_attr_t a;
    pthread_t t;
    pthread_mutex_lock(&gen_lock);
    int e = pthread_attr_init(&a);
    if (!e) e = pthread_attr_setstacksize(&a, GEN_STACK);
    if (!e) e = pthread_create(&t, &a, gen_thread, j);
    if (!e) pthread_join(t, NULL);
    pthread_attr_destroy(&a);
    pthread_mutex_unlock(&gen_lock);
    if (e) return zk_fail(j->err, e, "cannot start the witness generator's thread: %s", strerror(e));
    return j->rc;
}

/* Our own symbols (the wasm runtime among them) into the global scope, for the generators. */
static void make_global(void) {
    Dl_info info;
    if (dladdr((void *)&make_global, &info) && info.dli_fname)
        (void)dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL); /* never closed */
}
static pthread_once_t global_once = PTHREAD_ONCE_INIT;

static int job_open(struct gen_job *j) {
    witgen_opts_t o = {.cache_dir = j->cache, .timeout_s = WITGEN_TIMEOUT_DEFAULT_S};
    return witgen_open(&j->g, j->wasm, &o, NULL, j->err);
}

static int job_calc(struct gen_job *j) { return witgen_calc(j->g, j->input, j->out, j->cap, &j->len, j->err); }

static int put(zkpipe_error *err, const zk_err_t *e, int rc) {
    if (err) snprintf(err->message, sizeof err->message, "%s", e->msg[0] ? e->msg : "failed");
    return rc;
}

API int zkpipe_witgen_open(zkpipe_witgen **ret, const char *wasm_path, const char *cache_dir, zkpipe_error *err) {
    zk_err_t e = {{0}};
    if (!ret || !wasm_path) return put(err, &e, zk_fail(&e, EINVAL, "the %s is NULL", !ret ? "ret pointer" : "wasm path"));
    char buf[1100];
    pthread_once(&global_once, make_global);
    struct gen_job j = {.fn = job_open, .wasm = wasm_path, .err = &e};
    j.cache = cache_dir && cache_dir[0] ? cache_dir : witgen_default_cache(buf, sizeof buf);
    if (!j.cache)
        return put(err, &e,
                   zk_fail(&e, ENOENT,
                           "no cache directory for compiled generators: HOME is unset and this user has no home; "
                           "give cache_dir or set ZKPIPE_CACHE"));
    zkpipe_witgen *gen = malloc(sizeof *gen);
    if (!gen) return put(err, &e, zk_fail(&e, ENOMEM, "out of memory"));
    int rc = gen_run(&j);
    if (rc < 0) {
        free(gen);
        return put(err, &e, rc);
    }
    gen->g = j.g;
    *ret = gen;
    return 0;
}

API void zkpipe_witgen_close(zkpipe_witgen *gen) {
    if (!gen) return;
    pthread_mutex_lock(&gen_lock);
    witgen_close(gen->g);
    pthread_mutex_unlock(&gen_lock);
    free(gen);
}

/* witgen reads its input from a file: the text goes into an anonymous one, named in messages as
 * "input JSON" rather than by its /proc path. */
API int zkpipe_witgen_calc(zkpipe_witgen *gen, const char *input_json, size_t len, void **ret_wtns, size_t *ret_size,
                           zkpipe_error *err) {
    zk_err_t e = {{0}};
    if (!gen || !input_json || !ret_wtns || !ret_size)
        return put(err, &e, zk_fail(&e, EINVAL, "the %s is NULL", !gen ? "generator" : !input_json ? "input" : "ret pointer"));
    int fd = memfd_create("zkpipe-input", MFD_CLOEXEC);
    if (fd < 0) return put(err, &e, zk_fail(&e, errno, "input JSON: memfd_create failed: %s", strerror(errno)));
    size_t off = 0;
    while (off < len) {
        ssize_t k = write(fd, input_json + off, len - off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            int en = errno;
            close(fd);
            return put(err, &e, zk_fail(&e, en, "input JSON: write failed: %s", strerror(en)));
        }
        off += (size_t)k;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    size_t cap = witgen_wtns_size(gen->g);
    uint8_t *out = malloc(cap);
    if (!out) {
        close(fd);
        return put(err, &e, zk_fail(&e, ENOMEM, "out of memory for a witness of %zu bytes", cap));
    }
    struct gen_job j = {.fn = job_calc, .g = gen->g, .input = path, .out = out, .cap = cap, .err = &e};
    int rc = gen_run(&j);
    close(fd);
    if (rc < 0) {
        free(out);
        size_t pl = strlen(path);
        if (!strncmp(e.msg, path, pl)) { /* "/proc/self/fd/N: ..." -> "input JSON: ..." */
            char rest[sizeof e.msg - 16];
            snprintf(rest, sizeof rest, "%s", e.msg + pl);
            snprintf(e.msg, sizeof e.msg, "input JSON%s", rest);
        }
        return put(err, &e, rc);
    }
    *ret_wtns = out;
    *ret_size = j.len;
    return 0;
}
