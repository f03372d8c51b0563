/* wasm -> C (wasm2c) -> shared object (system C compiler), cached under the wasm's SHA-256.
 *
 * Cache file: CACHE/<sha256 of the wasm>-v<ABI>-<code id>.so (codegen_id), written as
 * CACHE/.build-XXXXXX/gen.so and renamed into place. The object is followed by a trailer (struct
 * trailer) giving the wasm's hash and the hash and length of the object bytes; witgen_cache_check
 * verifies all three before the loader may dlopen the file, so a truncated, foreign or stale file is
 * rebuilt, never run. */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/file.h"
#include "fr_native_src.h"
#include "module.h"
#include "split.h"
#include "witgen.h"
#include "zk/binfile.h"

extern char **environ;

#define TRAILER_MAGIC "ZKWITGEN"
/* no -march: the object must run on any x86-64 the executable runs on. Each unit (glue.c and
 * split.c's unit-K.c) is compiled with these, then linked with -shared. */
static const char *const cc_flags[] = {"-O2", "-fPIC", "-fvisibility=hidden", "-w", "-c"};
/* instead of the first flag for split.c's units of the circuit's functions (the glue, which holds
 * the field runtime, stays -O2): at 2^20, -O1 builds them in 60 % of -O2's time, and the witness
 * takes the same time (bench/RESULTS.md) */
static const char cc_unit_opt[] = "-O1";
#define N_CC_FLAGS (sizeof cc_flags / sizeof cc_flags[0])
/* what every unit-K.c starts with: the glue's view of the runtime imports (module.h) */
static const char unit_prefix[] = "#include <stdint.h>\n#include <stdlib.h>\n#include <string.h>\n"
                                  "struct witgen_host { void (*exc)(void *, uint32_t); void (*perr)(void *); "
                                  "void (*wbuf)(void *); void (*shm)(void *); };\n"
                                  "struct Z_runtime_instance_t { const struct witgen_host *host; void *ctx; };\n";
/* the layout of split.c's output; part of the code id */
#define SPLIT_SCHEME "split-3"

struct trailer {
    char magic[8];
    uint32_t abi;
    uint32_t reserved;
    uint8_t wasm_sha[32];
    uint8_t so_sha[32];
    uint64_t so_len;
};

static void hex(const uint8_t *b, size_t n, char *out) {
    for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", b[i]);
}

static void sha256(const uint8_t *b, size_t n, uint8_t out[32]) {
    struct sha256_ctx c;
    sha256_init(&c);
    sha256_update(&c, n, b);
    sha256_digest(&c, SHA256_DIGEST_SIZE, out);
}

int witgen_sha256_file(const char *path, uint8_t out[32], zk_err_t *err) {
    uint8_t *b;
    size_t n;
    int r = zk_read_file(path, 0, &b, &n, err);
    if (r < 0) return r;
    sha256(b, n, out);
    free(b);
    return 0;
}

int witgen_cache_check(const char *so_path, const uint8_t wasm_sha[32], zk_err_t *err) {
    int fd = open(so_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
    if (fd < 0) return zk_fail(err, errno, "%s: %s", so_path, strerror(errno));
    int r = witgen_cache_check_fd(fd, so_path, wasm_sha, err);
    close(fd);
    return r;
}

int witgen_cache_check_fd(int fd, const char *so_path, const uint8_t wasm_sha[32], zk_err_t *err) {
    zk_err_t ignored;
    if (!err) err = &ignored;
    char *buf;
    size_t n;
    int r = file_read_fd(fd, so_path, 0, 0, &buf, &n, err->msg, sizeof err->msg);
    if (r < 0) return r;
    uint8_t *b = (uint8_t *)buf;
    struct trailer t;
    r = 0;
    if (n < sizeof t) {
        r = zk_fail(err, EINVAL, "%s: %zu bytes, too short for a compiled generator (truncated?)", so_path, n);
    } else {
        memcpy(&t, b + n - sizeof t, sizeof t);
        uint8_t h[32];
        if (memcmp(t.magic, TRAILER_MAGIC, 8) || t.abi != WITGEN_ABI)
            r = zk_fail(err, EINVAL, "%s: no zkpipe generator trailer (truncated or foreign file)", so_path);
        else if (memcmp(t.wasm_sha, wasm_sha, 32))
            r = zk_fail(err, EINVAL, "%s: compiled from another wasm", so_path);
        else if (t.so_len != n - sizeof t)
            r = zk_fail(err, EINVAL, "%s: object is %zu bytes, its trailer says %llu (truncated?)", so_path,
                        n - sizeof t, (unsigned long long)t.so_len);
        else if (sha256(b, n - sizeof t, h), memcmp(h, t.so_sha, 32))
            r = zk_fail(err, EINVAL, "%s: object bytes do not match their hash (corrupt)", so_path);
    }
    free(b);
    return r;
}

/* Creates the directories of path that are missing, each 0755 whatever the umask. */
static int mkdir_p(const char *path) {
    char p[1024];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1;; s++) {
        if (*s && *s != '/') continue;
        char c = *s;
        *s = 0;
        if (mkdir(p, 0755) == 0) {
            if (chmod(p, 0755) < 0) return -errno;
        } else if (errno != EEXIST) {
            return -errno;
        }
        if (!c) return 0;
        *s = c;
    }
}

/* Nobody but the caller (or root) may change what st is: owned by one of them, and not writable by
 * group or others, unless (a directory above the cache) sticky. */
static const char *untrusted(const struct stat *st, bool sticky_ok) {
    static _Thread_local char why[120];
    if (st->st_uid != geteuid() && st->st_uid != 0) {
        snprintf(why, sizeof why, "owned by uid %u, not by this user (uid %u) or root", (unsigned)st->st_uid,
                 (unsigned)geteuid());
        return why;
    }
    if ((st->st_mode & 022) && !(sticky_ok && (st->st_mode & S_ISVTX))) {
        snprintf(why, sizeof why, "writable by %s (mode %04o)", st->st_mode & 002 ? "others" : "the group",
                 (unsigned)(st->st_mode & 07777));
        return why;
    }
    return NULL;
}

/* The cache must be a directory only the caller (or root) can change, and so must every directory
 * above it (or be sticky): else another user could plant an object there that dlopen would run. The
 * cache itself is not followed through a symbolic link. Checked before anything in it is opened. */
static int check_cache_dir(const char *cache, zk_err_t *err) {
    struct stat st;
    if (lstat(cache, &st) < 0) return zk_fail(err, errno, "%s: cache directory: %s", cache, strerror(errno));
    if (S_ISLNK(st.st_mode))
        return zk_fail(err, EPERM, "%s: the cache directory is a symbolic link; refused (name the directory itself)",
                       cache);
    if (!S_ISDIR(st.st_mode)) return zk_fail(err, ENOTDIR, "%s: the cache is not a directory", cache);
    const char *why = untrusted(&st, false);
    if (why) return zk_fail(err, EPERM, "%s: the cache directory is %s; refused", cache, why);
    char up[1100];
    snprintf(up, sizeof up, "%s/..", cache);
    char *real = realpath(up, NULL);
    if (!real) return zk_fail(err, errno, "%s: cannot resolve: %s", up, strerror(errno));
    int r = 0;
    for (char *s = real;; s++) {
        if (*s && *s != '/') continue;
        char c = *s;
        *s = 0;
        const char *d = real[0] ? real : "/";
        if (stat(d, &st) < 0) {
            r = zk_fail(err, errno, "%s: %s", d, strerror(errno));
            break;
        }
        if ((why = untrusted(&st, true))) {
            r = zk_fail(err, EPERM, "%s: the cache %s is below %s, which is %s; refused", cache, cache, d, why);
            break;
        }
        if (!c) break;
        *s = c;
    }
    free(real);
    return r;
}

typedef struct tool {
    char **argv;
    char log[1300]; /* stdout and stderr */
    pid_t pid;      /* 0: not started, -1: ended */
    int st;
} tool_t;

/* A build that failed for want of memory (ENOMEM) says so first */
#define OOM_REASON "out of memory building the generator"

/* What the tools print when they run out of memory: gcc's cc1 and as ("out of memory allocating
 * N bytes", "virtual memory exhausted"), the gcc driver when the OOM killer ended cc1 ("Killed
 * signal terminated program cc1"), wasm2c (std::bad_alloc, then SIGABRT), ld. */
static const char *const oom_words[] = {"out of memory", "memory exhausted", "Cannot allocate memory", "bad_alloc",
                                        "Killed signal terminated"};

static bool oom_line(const char *line) {
    for (size_t i = 0; i < sizeof oom_words / sizeof oom_words[0]; i++)
        if (strstr(line, oom_words[i])) return true;
    return false;
}

/* The reason of a failed tool: its first line saying it ran out of memory (then ENOMEM), else its
 * first error line, else its last line; killed by SIGKILL (the OOM killer, most likely) is ENOMEM
 * too. */
static int tool_failed(const tool_t *t, zk_err_t *err) {
    char line[300] = "", first[300] = "";
    bool oom = false;
    FILE *f = fopen(t->log, "re");
    if (f) {
        while (fgets(line, sizeof line, f)) {
            if ((oom = oom_line(line))) break;
            if (!first[0] && (strstr(line, "rror") || strstr(line, "fatal"))) snprintf(first, sizeof first, "%s", line);
        }
        fclose(f);
    }
    if (!oom && first[0]) snprintf(line, sizeof line, "%s", first);
    line[strcspn(line, "\n")] = 0;
    const char *sep = line[0] ? ": " : "";
    if (WIFEXITED(t->st))
        return zk_fail(err, oom ? ENOMEM : EIO, "%s exited with status %d%s%s", t->argv[0], WEXITSTATUS(t->st), sep,
                       line);
    int sig = WTERMSIG(t->st);
    if (sig == SIGKILL)
        return zk_fail(err, ENOMEM, "%s killed by signal %d (%s: by the OOM killer?)", t->argv[0], sig, strsignal(sig));
    return zk_fail(err, oom ? ENOMEM : EIO, "%s killed by signal %d (%s)%s%s", t->argv[0], sig, strsignal(sig),
                   oom ? sep : "", oom ? line : "");
}

/* Runs the n tools, at most jobs at once, each in directory cwd (NULL: this one); ticks while they
 * run. On the first failure, or when o->stop says so (-ECANCELED), the others are killed and that
 * failure is the reason. */
static int run_tools(tool_t *t, size_t n, size_t jobs, const char *cwd, const witgen_opts_t *o, zk_err_t *err) {
    size_t next = 0, running = 0;
    int r = 0;
    const tool_t *failed = NULL;
    while (next < n || running) {
        while (!r && next < n && running < jobs) {
            tool_t *x = &t[next++];
            posix_spawn_file_actions_t fa;
            posix_spawn_file_actions_init(&fa);
            posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
            posix_spawn_file_actions_addopen(&fa, 1, x->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            posix_spawn_file_actions_adddup2(&fa, 1, 2);
            if (cwd) posix_spawn_file_actions_addchdir_np(&fa, cwd);
            int e = posix_spawnp(&x->pid, x->argv[0], &fa, NULL, x->argv, environ);
            posix_spawn_file_actions_destroy(&fa);
            if (e) {
                x->pid = -1;
                r = zk_fail(err, e, "cannot run %s: %s", x->argv[0], strerror(e));
                break;
            }
            running++;
        }
        if (!running) break;
        bool reaped = false;
        for (size_t i = 0; i < next; i++) {
            if (t[i].pid <= 0) continue;
            pid_t w = waitpid(t[i].pid, &t[i].st, WNOHANG);
            if (w < 0 && errno == EINTR) continue;
            if (w == 0) continue;
            t[i].pid = -1;
            running--;
            reaped = true;
            if (w < 0) t[i].st = 0x7f00; /* lost: counts as exit status 127 */
            if (!r && !(WIFEXITED(t[i].st) && WEXITSTATUS(t[i].st) == 0)) {
                failed = &t[i];
                r = -EIO;
                for (size_t k = 0; k < next; k++)
                    if (t[k].pid > 0) kill(t[k].pid, SIGKILL);
            }
        }
        if (!reaped) {
            if (!r && o->stop && o->stop(o->stop_ctx)) {
                r = zk_fail(err, ECANCELED, "the build was stopped");
                for (size_t k = 0; k < next; k++)
                    if (t[k].pid > 0) kill(t[k].pid, SIGKILL);
            }
            if (o->tick) o->tick(o->tick_ctx);
            poll(NULL, 0, 50);
        }
    }
    return failed ? tool_failed(failed, err) : r;
}

/* Runs argv with stdout and stderr into log_path; ticks while it runs. */
static int run_tool(char *const argv[], const char *log_path, const witgen_opts_t *o, zk_err_t *err) {
    tool_t t = {.argv = (char **)argv};
    snprintf(t.log, sizeof t.log, "%s", log_path);
    return run_tools(&t, 1, 1, NULL, o, err);
}

/* The C compiler's parallelism: the CPUs this process may run on. */
static size_t cc_jobs(void) {
    cpu_set_t set;
    int n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    return n < 1 ? 1 : n > WITGEN_MAX_UNITS ? WITGEN_MAX_UNITS : (size_t)n;
}

/* the build folder's files (wasm, C, glue): scratch, removed after the build, so not synced (the one
 * durable write is the object's, file_write_atomic) */
static int write_file(const char *path, const void *data, size_t n) { return witgen_write_file(path, data, n); }

/* Every export the loader calls; a wasm without one is not a circom 2 witness generator. */
static const char *const needed_exports[] = {
    "getVersion",     "getFieldNumLen32",   "getRawPrime", "readSharedRWMemory", "writeSharedRWMemory",
    "init",           "getInputSignalSize", "setInputSignal", "getInputSize",    "getWitnessSize",
    "getWitness",     "getMessageChar",     "memory",
};

static int check_exports(const char *wasm_path, const char *header, zk_err_t *err) {
    uint8_t *h;
    size_t n;
    zk_err_t e2;
    if (zk_read_file(header, 0, &h, &n, &e2) < 0) return zk_fail(err, EIO, "%s: wasm2c wrote no header", wasm_path);
    char *txt = (char *)h; /* zk_read_file ends it with a NUL */
    int r = 0;
    for (size_t i = 0; i < sizeof needed_exports / sizeof needed_exports[0] && !r; i++) {
        char pat[80];
        snprintf(pat, sizeof pat, "/* export: '%s' */", needed_exports[i]);
        if (!strstr(txt, pat))
            r = zk_fail(err, EINVAL, "%s: not a circom 2 witness generator: no export '%s'", wasm_path,
                        needed_exports[i]);
    }
    if (!r && !strstr(txt, "/* import: 'runtime' 'exceptionHandler' */"))
        r = zk_fail(err, EINVAL, "%s: not a circom 2 witness generator: no import runtime.exceptionHandler", wasm_path);
    free(txt);
    return r;
}

/* The wasm2c text (from "static" to the closing brace) of every runtime function witgen/fr_native.c
 * replaces (WITGEN_FR_NATIVES) or whose behaviour it assumes (the ones those call), as circom 2
 * (circom2 0.2.23 from npm) and wabt 1.0.32 write them: SHA-256, and the curve where the text holds
 * the prime's Montgomery constant (0: the same text for both). A wasm whose runtime differs in any of
 * them (another circom, another wasm2c) keeps its own code throughout. */
static const struct fr_print {
    const char *name;
    int curve; /* 0 any, 1 bn128, 2 bls12381 */
    const char *sha;
} fr_prints[] = {
    {"int_add", 0, "619d1c20efa7f6131fd50e67b1f4552622b562e4f20656d326168a91c27a8b7f"},
    {"int_sub", 0, "1dc6a85350db6044873c88972e61defe539b34e7c8214290645e25854373082d"},
    {"int_gt", 0, "b3e2e56526ceb17df6b50699e0ae8e40981d64d2b2b22245c1f286137184bf50"},
    {"int_gte", 0, "a6d51276ac126e82cddb1f7d86d9c9bf70ea62168c64f3c77d30733c145d4022"},
    {"int_eq", 0, "480783c3a3f9af8f3759ad42afd2ee936bee3179fd8321f185130d588b25d45b"},
    {"int_isZero", 0, "d4e3bc794f485671fa0c3680061134de554998e070c6c3d8bcf9499171262602"},
    {"int_copy", 0, "4c6bfccf7740b58f34c346fc56ee763d07cd7b3e7052c9d0d43837ac514059ff"},
    {"int_zero", 0, "e4dd8f15bf17aef5a1b2d1a22f0c64102407f1a7e94560de313d2a122292188d"},
    {"F1m_add", 0, "d6c16068415e3b94082dfe800edbad67af11d3312ab25e1b66dae8529b43a995"},
    {"F1m_sub", 0, "efd7772f09805ce148851b3e9b54a456b18341f6c864e7a10fd2644f223f10a4"},
    {"F1m_mul", 1, "28bcd870f9c6ccdece1d8c5ff26d98ce8c78aceb320783adb35cc6144a567fb7"},
    {"F1m_mul", 2, "1296720e2aea3812047ada2e1dbe9ebd10b12c22cddffa858d1f747a9be8b9fc"},
    {"F1m_fromMontgomery", 0, "c06a9f0993ac6d409d033b5e0482c50dddb5922751ce4064d35337c1fa81b96b"},
    {"copy", 0, "c40b6152121fffc605bdfe5de328940f4056a4041c11bfeb2b66408578e96651"},
    {"toNormal", 0, "a426d63a446fad7d8e49fc82157afc586c785da69fe53e4eaa365f25176f69cc"},
    {"rawCopyS2L", 0, "d0d8d14f83b193e18a17390ea2cc804148f5b2835dc0967a0aee5737cb6a9dd3"},
    {"toMontgomery", 0, "3c4aedd98f8846413c2cf7be598abde0e686dd2388f71392ea590e3455afba25"},
    {"isNegative", 0, "f713814d5a746d9bb112e149e7c4f6c45a0b349aa4ff0a1c00d8912689dfa7e5"},
    {"getLsb32", 0, "7e77fb685304bb8ce63ebcf64812e7114e738ecd9f35405806c702a6e02c06c2"},
    {"neg", 0, "46ecf3f84fdabc3f2b29ec88f994ad9cabf73d2d53059cff5aa8610d8bb86ab2"},
    {"toInt", 0, "7d31ac1e126ad025f7473ce2d1a2e5514b1c41c8abb93a5c212db5fe06a4b9c3"},
    {"isTrue", 0, "06b1b170978d68c02e8ed0b08e777fc66ae74487c4ccbe4f41c093683b9ef7d8"},
    {"F1m_mReduct", 1, "4b593b0f3f94112b0a2a4cc7439380ed9cc9b7d7d66ccc409b6dd1ca7c8213e5"},
    {"F1m_mReduct", 2, "033faf5fa56ba800dc8bc9118d4de95cd39cf95e6ed09d01e7af8940d538f345"},
    {"F1m_neg", 0, "360569d5cf7bdcd9b073cfe709160bbb75d7c58f973004d965933470510abcae"},
    {"F1m_toMontgomery", 0, "9263ae45cc51948537de2fb93448f6f9575901d08052feb505dd7405730d8aad"},
};

#define WITGEN_FR_NAME(name, kind) #name,
static const char *const fr_native_names[] = {WITGEN_FR_NATIVES(WITGEN_FR_NAME)};
#undef WITGEN_FR_NAME

/* The definition of w2c_Fr_<name> in wasm2c's text: *at is where "w2c_Fr_<name>" starts, the
 * function's text runs from *start ("static ...") to *end (after the closing brace). */
static bool find_fr(const char *txt, const char *name, const char **start, const char **at, const char **end) {
    char pat[120];
    snprintf(pat, sizeof pat, " w2c_Fr_%s(Z_circuit_instance_t* instance", name);
    const char *p = strstr(txt, pat);
    if (!p) return false;
    const char *s = p;
    while (s > txt && s[-1] != '\n') s--;
    const char *e = strstr(p, "\n}\n");
    if (strncmp(s, "static ", 7) || !e) return false;
    *start = s, *at = p + 1, *end = e + 3;
    return true;
}

/* 1 (bn128) or 2 (bls12381) when every function of fr_prints is there with its text, else 0 (also
 * when a replaced function had no fingerprint: test_witgen then finds no natives) */
static int native_fr_curve(const char *txt) {
    for (size_t i = 0; i < sizeof fr_native_names / sizeof fr_native_names[0]; i++) {
        size_t j = 0;
        while (j < sizeof fr_prints / sizeof fr_prints[0] && strcmp(fr_prints[j].name, fr_native_names[i])) j++;
        if (j == sizeof fr_prints / sizeof fr_prints[0]) return 0;
    }
    int curve = 0;
    for (size_t i = 0; i < sizeof fr_prints / sizeof fr_prints[0]; i++) {
        const struct fr_print *f = &fr_prints[i];
        if (i && !strcmp(f->name, fr_prints[i - 1].name)) continue; /* the other curve's entry */
        const char *s, *at, *e;
        if (!find_fr(txt, f->name, &s, &at, &e)) return 0;
        uint8_t h[32];
        char hx[65];
        sha256((const uint8_t *)s, (size_t)(e - s), h);
        hex(h, 32, hx);
        int match = -1;
        for (size_t j = i; j < sizeof fr_prints / sizeof fr_prints[0] && !strcmp(fr_prints[j].name, f->name); j++)
            if (!strcmp(fr_prints[j].sha, hx)) match = fr_prints[j].curve;
        if (match < 0 || (match && curve && match != curve)) return 0;
        if (match) curve = match;
    }
    return curve;
}

/* When circuit.c's runtime is the fingerprinted one: renames each replaced w2c_Fr_<name> to
 * w2c_Fr_<name>_wasm (so that the wasm's code calls fr_native.c's) and writes fr_native.c into the
 * build folder; *ret_curve is then its curve, else 0 and circuit.c is left as it is. */
static int use_native_fr(const char *c_path, const char *native_path, int *ret_curve, zk_err_t *err) {
    uint8_t *b;
    size_t n;
    *ret_curve = 0;
    int r = zk_read_file(c_path, 0, &b, &n, err);
    if (r < 0) return r;
    char *txt = (char *)b; /* zk_read_file ends it with a NUL */
    int curve = native_fr_curve(txt);
    if (!curve) {
        free(txt);
        return 0;
    }
    /* the insertion points in file order, then one pass writing the text with "_wasm" after each name */
    enum { nn = sizeof fr_native_names / sizeof fr_native_names[0] };
    size_t cut[nn];
    for (size_t i = 0; i < nn; i++) {
        const char *s, *at = NULL, *e;
        if (!find_fr(txt, fr_native_names[i], &s, &at, &e)) abort(); /* native_fr_curve saw every one */
        cut[i] = (size_t)(at - txt) + strlen("w2c_Fr_") + strlen(fr_native_names[i]);
    }
    for (size_t i = 1; i < nn; i++)
        for (size_t j = i; j > 0 && cut[j - 1] > cut[j]; j--) {
            size_t x = cut[j];
            cut[j] = cut[j - 1], cut[j - 1] = x;
        }
    size_t len = n + nn * 5;
    char *out = malloc(len), *o = out;
    if (!out) {
        free(txt);
        return zk_fail(err, ENOMEM, "%s: out of memory", c_path);
    }
    size_t from = 0;
    for (size_t i = 0; i < nn; i++) {
        memcpy(o, txt + from, cut[i] - from), o += cut[i] - from;
        memcpy(o, "_wasm", 5), o += 5;
        from = cut[i];
    }
    memcpy(o, txt + from, n - from);
    free(txt);
    if ((r = write_file(c_path, out, len)) < 0)
        r = zk_fail(err, -r, "%s: cannot rewrite: %s", c_path, strerror(-r));
    else if ((r = write_file(native_path, WITGEN_FR_NATIVE_SOURCE, strlen(WITGEN_FR_NATIVE_SOURCE))) < 0)
        r = zk_fail(err, -r, "%s: cannot write: %s", native_path, strerror(-r));
    free(out);
    if (r == 0) *ret_curve = curve;
    return r;
}

/* 16 hex digits naming what turns a wasm into an object besides the wasm: the glue, the native
 * runtime, its fingerprints and the compiler flags. A zkpipe whose code generation changed builds
 * anew instead of loading an object an older one made. */
static void codegen_id(char out[17]) {
    struct sha256_ctx c;
    sha256_init(&c);
    sha256_update(&c, strlen(WITGEN_GLUE_SOURCE), (const uint8_t *)WITGEN_GLUE_SOURCE);
    sha256_update(&c, strlen(WITGEN_FR_NATIVE_SOURCE), (const uint8_t *)WITGEN_FR_NATIVE_SOURCE);
    for (size_t i = 0; i < sizeof fr_prints / sizeof fr_prints[0]; i++)
        sha256_update(&c, strlen(fr_prints[i].sha), (const uint8_t *)fr_prints[i].sha);
    for (size_t i = 0; i < N_CC_FLAGS; i++) sha256_update(&c, strlen(cc_flags[i]) + 1, (const uint8_t *)cc_flags[i]);
    sha256_update(&c, strlen(unit_prefix), (const uint8_t *)unit_prefix);
    sha256_update(&c, strlen(SPLIT_SCHEME), (const uint8_t *)SPLIT_SCHEME);
    sha256_update(&c, strlen(cc_unit_opt), (const uint8_t *)cc_unit_opt);
    uint8_t h[32];
    sha256_digest(&c, 32, h);
    hex(h, 8, out);
}

/* A build that failed on a full file system says so, whatever the tool that met it made of it
 * (wasm2c writes a truncated header and exits 0): the reason becomes ENOSPC, so that synthd waits
 * for space instead of failing the partition. */
#define SPACE_MIN (1u << 20)
static int space_reason(const char *cache, int r, zk_err_t *err) {
    struct statvfs v;
    if (r == -ENOSPC || r == -EDQUOT || statvfs(cache, &v) < 0 || (uint64_t)v.f_bavail * v.f_frsize >= SPACE_MIN)
        return r;
    zk_err_t e = *err;
    return zk_fail(err, ENOSPC,
                   "%s: no space left on the cache's file system (%llu KiB free); the build stopped with: %s", cache,
                   (unsigned long long)v.f_bavail * v.f_frsize / 1024, e.msg);
}

/* DIR/circuit.c (and glue.c, fr_native.c) -> DIR/gen.so: split.c's units compiled in parallel in
 * DIR (every path given to the compiler is relative to it: .incbin names its files so), then
 * linked. */
static int compile(const char *dir, int fr_curve, const witgen_opts_t *o, zk_err_t *err) {
    size_t jobs = cc_jobs();
    int n_units = 0;
    int r = witgen_split(dir, unit_prefix, fr_curve, (int)(jobs < 2 ? 2 : 2 * jobs), &n_units, err);
    if (r < 0) return r;
    const char *cc = getenv("CC");
    if (!cc || !cc[0]) cc = "cc";
    char def[40];
    snprintf(def, sizeof def, "-DWITGEN_NATIVE_FR=%d", fr_curve);
    enum { per = N_CC_FLAGS + 8 };
    size_t n = (size_t)n_units + 1;
    char *argv[WITGEN_MAX_UNITS + 1][per], names[WITGEN_MAX_UNITS + 1][2][24];
    char *link[WITGEN_MAX_UNITS + 6];
    tool_t t[WITGEN_MAX_UNITS + 1];
    size_t nl = 0;
    link[nl++] = (char *)cc;
    link[nl++] = "-shared";
    link[nl++] = "-o";
    link[nl++] = "gen.so";
    for (size_t u = 0; u < n; u++) {
        /* the units in the order split.c dealt them (the largest first), then the glue */
        if (u == n - 1) {
            snprintf(names[u][0], sizeof names[u][0], "glue.c");
            snprintf(names[u][1], sizeof names[u][1], "glue.o");
        } else {
            snprintf(names[u][0], sizeof names[u][0], "unit-%zu.c", u);
            snprintf(names[u][1], sizeof names[u][1], "unit-%zu.o", u);
        }
        size_t k = 0;
        argv[u][k++] = (char *)cc;
        for (size_t i = 0; i < N_CC_FLAGS; i++) argv[u][k++] = (char *)cc_flags[i];
        if (u < n - 1) argv[u][1] = (char *)cc_unit_opt;
        argv[u][k++] = "-I.";
        argv[u][k++] = "-o";
        argv[u][k++] = names[u][1];
        argv[u][k++] = names[u][0];
        if (fr_curve) argv[u][k++] = def;
        argv[u][k] = NULL;
        t[u] = (tool_t){.argv = argv[u]};
        snprintf(t[u].log, sizeof t[u].log, "%s/log-%zu", dir, u);
        link[nl++] = names[u][1];
    }
    link[nl] = NULL;
    if ((r = run_tools(t, n, jobs, dir, o, err)) < 0) return r;
    tool_t lt = {.argv = link};
    snprintf(lt.log, sizeof lt.log, "%s/log-link", dir);
    return run_tools(&lt, 1, 1, dir, o, err);
}

int witgen_build(const char *wasm_path, const witgen_opts_t *o, char *so_path, size_t so_cap, bool *ret_built,
                 zk_err_t *err) {
    int fd;
    int r = witgen_build_fd(wasm_path, o, so_path, so_cap, ret_built, &fd, err);
    if (r == 0) close(fd);
    return r;
}

/* Opens so_path and checks it through the descriptor; on success *ret_fd is that descriptor. */
static int open_checked(const char *so_path, const uint8_t wsha[32], int *ret_fd, zk_err_t *err) {
    int fd = open(so_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
    if (fd < 0) return zk_fail(err, errno, "%s: %s", so_path, strerror(errno));
    struct stat st;
    const char *why = fstat(fd, &st) < 0     ? strerror(errno)
                      : !S_ISREG(st.st_mode) ? "not a regular file"
                                             : untrusted(&st, false);
    if (why) {
        close(fd);
        return zk_fail(err, EPERM, "%s: the cached object is %s; refused", so_path, why);
    }
    int r = witgen_cache_check_fd(fd, so_path, wsha, err);
    if (r < 0) {
        close(fd);
        return r;
    }
    *ret_fd = fd;
    return 0;
}

/* flock on SO_PATH.lock, waiting (and ticking) while another process builds that object */
static int lock_build(const char *so_path, const witgen_opts_t *o, zk_err_t *err) {
    char p[1200];
    snprintf(p, sizeof p, "%s.lock", so_path);
    int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) return zk_fail(err, errno, "%s: cannot open: %s", p, strerror(errno));
    while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        if (errno != EWOULDBLOCK && errno != EINTR) {
            int e = errno;
            close(fd);
            return zk_fail(err, e, "%s: cannot lock: %s", p, strerror(e));
        }
        if (o->stop && o->stop(o->stop_ctx)) {
            close(fd);
            return zk_fail(err, ECANCELED, "%s: stopped while waiting for another build", p);
        }
        if (o->tick) o->tick(o->tick_ctx);
        poll(NULL, 0, 100);
    }
    return fd;
}

int witgen_build_fd(const char *wasm_path, const witgen_opts_t *o, char *so_path, size_t so_cap, bool *ret_built,
                    int *ret_fd, zk_err_t *err) {
    *ret_fd = -1;
    if (ret_built) *ret_built = false;
    uint8_t *wasm;
    size_t wasm_len;
    int r = zk_read_file(wasm_path, 0, &wasm, &wasm_len, err);
    if (r < 0) return r;
    if (wasm_len < 8 || memcmp(wasm, "\0asm", 4)) {
        free(wasm);
        return zk_fail(err, EINVAL, "%s: not a wasm module (bad magic)", wasm_path);
    }
    uint8_t wsha[32];
    sha256(wasm, wasm_len, wsha);
    char hx[65];
    hex(wsha, 32, hx);
    const char *cache = o->cache_dir && o->cache_dir[0] ? o->cache_dir : ".";
    char cg[17];
    codegen_id(cg);
    snprintf(so_path, so_cap, "%s/%s-v%d-%s.so", cache, hx, WITGEN_ABI, cg);
    struct stat cst;
    if (lstat(cache, &cst) < 0 && errno == ENOENT && (r = mkdir_p(cache)) < 0) {
        free(wasm);
        return zk_fail(err, -r, "%s: cannot create the cache directory: %s", cache, strerror(-r));
    }
    if ((r = check_cache_dir(cache, err)) < 0) {
        free(wasm);
        return r;
    }
    zk_err_t e2;
    if ((r = open_checked(so_path, wsha, ret_fd, &e2)) == 0) {
        free(wasm);
        return 0;
    }
    if (r == -EPERM || o->cached_only) {
        free(wasm);
        if (r == -EPERM) *err = e2;
        return r == -EPERM ? r : zk_fail(err, EINPROGRESS, "%s: not built yet", so_path);
    }
    /* one build of an object at a time (two synthds starting on one circuit): the others wait for
     * it, ticking, and then find it cached */
    int lock_fd = lock_build(so_path, o, err);
    if (lock_fd < 0) {
        free(wasm);
        return lock_fd;
    }
    if ((r = open_checked(so_path, wsha, ret_fd, &e2)) == 0 || r == -EPERM) {
        free(wasm);
        close(lock_fd);
        if (r) *err = e2;
        return r;
    }
    char dir[1100];
    snprintf(dir, sizeof dir, "%s/.build-XXXXXX", cache);
    if (!mkdtemp(dir)) {
        free(wasm);
        close(lock_fd);
        return zk_fail(err, errno, "%s: cannot create a build directory: %s", cache, strerror(errno));
    }
    char p_wasm[1200], p_c[1200], p_h[1200], p_glue[1200], p_so[1200], p_log[1200], p_fr[1200];
    snprintf(p_wasm, sizeof p_wasm, "%s/circuit.wasm", dir);
    snprintf(p_c, sizeof p_c, "%s/circuit.c", dir);
    snprintf(p_h, sizeof p_h, "%s/circuit.h", dir);
    snprintf(p_glue, sizeof p_glue, "%s/glue.c", dir);
    snprintf(p_so, sizeof p_so, "%s/gen.so", dir);
    snprintf(p_log, sizeof p_log, "%s/log", dir);
    snprintf(p_fr, sizeof p_fr, "%s/fr_native.c", dir);
    /* translate the bytes that were hashed, not whatever the path holds by now */
    r = write_file(p_wasm, wasm, wasm_len);
    free(wasm);
    if (r < 0) {
        r = zk_fail(err, -r, "%s: cannot write: %s", p_wasm, strerror(-r));
        goto out;
    }
    if (o->building) o->building(o->building_ctx);
    char *w2c[] = {"wasm2c", "-n", "circuit", "-o", p_c, p_wasm, NULL};
    if ((r = run_tool(w2c, p_log, o, err)) < 0) {
        zk_err_t e3 = *err;
        r = zk_fail(err, r == -ENOMEM || r == -ECANCELED ? -r : EINVAL, "%s: %s%s", wasm_path,
                    r == -ENOMEM ? OOM_REASON ": " : "", e3.msg);
        goto out;
    }
    if ((r = check_exports(wasm_path, p_h, err)) < 0) goto out;
    int fr_curve = 0;
    if ((r = use_native_fr(p_c, p_fr, &fr_curve, err)) < 0) goto out;
    if ((r = write_file(p_glue, WITGEN_GLUE_SOURCE, strlen(WITGEN_GLUE_SOURCE))) < 0) {
        r = zk_fail(err, -r, "%s: cannot write: %s", p_glue, strerror(-r));
        goto out;
    }
    if ((r = compile(dir, fr_curve, o, err)) < 0) {
        zk_err_t e3 = *err;
        r = zk_fail(err, -r, "%s: %s: %s", wasm_path, r == -ENOMEM ? OOM_REASON : "compiling the generator failed",
                    e3.msg);
        goto out;
    }
    uint8_t *so;
    size_t so_len;
    if ((r = zk_read_file(p_so, 0, &so, &so_len, err)) < 0) goto out;
    struct trailer t;
    memset(&t, 0, sizeof t);
    memcpy(t.magic, TRAILER_MAGIC, 8);
    t.abi = WITGEN_ABI;
    memcpy(t.wasm_sha, wsha, 32);
    sha256(so, so_len, t.so_sha);
    t.so_len = so_len;
    uint8_t *img = realloc(so, so_len + sizeof t);
    if (!img) {
        free(so);
        r = zk_fail(err, ENOMEM, "%s: out of memory", p_so);
        goto out;
    }
    memcpy(img + so_len, &t, sizeof t);
    r = file_write_atomic(so_path, img, so_len + sizeof t);
    free(img);
    if (r < 0) {
        r = zk_fail(err, -r, "%s: cannot write: %s", so_path, strerror(-r));
        goto out;
    }
    if (ret_built) *ret_built = true;
    r = open_checked(so_path, wsha, ret_fd, err);
out:
    if (r < 0) r = space_reason(cache, r, err);
    file_remove_flat_dir(dir);
    close(lock_fd); /* releases the lock */
    return r;
}
