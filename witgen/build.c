/* wasm -> C (wasm2c) -> shared object (system C compiler), cached under the wasm's SHA-256.
 *
 * Cache file: CACHE/<sha256 of the wasm>-v<ABI>.so, written as CACHE/.build-XXXXXX/gen.so and
 * renamed into place. The object is followed by a trailer (struct trailer) giving the wasm's hash
 * and the hash and length of the object bytes; witgen_cache_check verifies all three before the
 * loader may dlopen the file, so a truncated, foreign or stale file is rebuilt, never run. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "module.h"
#include "witgen.h"

extern char **environ;

#define TRAILER_MAGIC "ZKWITGEN"

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

static int read_all(int fd, uint8_t **ret, size_t *ret_len) {
    struct stat st;
    if (fstat(fd, &st) < 0) return -errno;
    if (!S_ISREG(st.st_mode)) return -EINVAL;
    size_t n = (size_t)st.st_size;
    uint8_t *b = malloc(n ? n : 1);
    if (!b) return -ENOMEM;
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(fd, b + got, n - got, (off_t)got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            free(b);
            return k < 0 ? -errno : -EIO;
        }
        got += (size_t)k;
    }
    *ret = b;
    *ret_len = n;
    return 0;
}

/* Reads a regular file (not a FIFO, not a device: O_NONBLOCK so that opening a FIFO never hangs). */
static int load_file(const char *path, uint8_t **ret, size_t *ret_len, zk_err_t *err) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return zk_fail(err, errno, "%s: cannot open: %s", path, strerror(errno));
    int r = read_all(fd, ret, ret_len);
    close(fd);
    if (r == -EINVAL) return zk_fail(err, EINVAL, "%s: not a regular file", path);
    if (r < 0) return zk_fail(err, -r, "%s: cannot read: %s", path, strerror(-r));
    return 0;
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
    int r = load_file(path, &b, &n, err);
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
    uint8_t *b;
    size_t n;
    int r = read_all(fd, &b, &n);
    if (r < 0) return zk_fail(err, r == -EINVAL ? EINVAL : -r, "%s: not a readable regular file", so_path);
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

static int mkdir_p(const char *path) {
    char p[1024];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') continue;
        *s = 0;
        if (mkdir(p, 0775) < 0 && errno != EEXIST) return -errno;
        *s = '/';
    }
    if (mkdir(p, 0775) < 0 && errno != EEXIST) return -errno;
    return 0;
}

static void rm_rf_flat(const char *dir) {
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char p[1400];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* Runs argv with stdout and stderr into log_path; ticks while it runs. */
static int run_tool(char *const argv[], const char *log_path, const witgen_opts_t *o, zk_err_t *err) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int r = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (r) return zk_fail(err, r, "cannot run %s: %s", argv[0], strerror(r));
    int st;
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) return zk_fail(err, errno, "waitpid %s: %s", argv[0], strerror(errno));
        if (o->tick) o->tick(o->tick_ctx);
        poll(NULL, 0, 100);
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
    /* the tool's first message line says why */
    char line[300] = "";
    FILE *f = fopen(log_path, "r");
    if (f) {
        while (fgets(line, sizeof line, f))
            if (strstr(line, "rror") || strstr(line, "fatal")) break;
        fclose(f);
    }
    line[strcspn(line, "\n")] = 0;
    if (WIFEXITED(st))
        return zk_fail(err, EIO, "%s exited with status %d%s%s", argv[0], WEXITSTATUS(st), line[0] ? ": " : "", line);
    return zk_fail(err, EIO, "%s killed by signal %d", argv[0], WTERMSIG(st));
}

static int write_file(const char *path, const void *data, size_t n) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return -errno;
    const uint8_t *p = data;
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            int e = errno;
            close(fd);
            return -e;
        }
        p += k;
        n -= (size_t)k;
    }
    if (fsync(fd) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    return close(fd) < 0 ? -errno : 0;
}

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
    if (load_file(header, &h, &n, &e2) < 0) return zk_fail(err, EIO, "%s: wasm2c wrote no header", wasm_path);
    char *txt = realloc(h, n + 1);
    txt[n] = 0;
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

/* circom's field multiplication, as wasm2c names it: renamed to ..._wasm so that the glue's native
 * version (module.h) takes its place. A wasm without it (stripped names, another compiler) keeps
 * its own code. */
#define F1M_MUL "static void w2c_Fr_F1m_mul(Z_circuit_instance_t* instance, u32 w2c_x, u32 w2c_y, u32 w2c_r) {"
static int use_native_mul(const char *c_path, bool *ret, zk_err_t *err) {
    uint8_t *b;
    size_t n;
    int r = load_file(c_path, &b, &n, err);
    if (r < 0) return r;
    char *txt = realloc(b, n + 1);
    txt[n] = 0;
    char *at = strstr(txt, F1M_MUL);
    *ret = at != NULL;
    if (at) {
        static const char renamed[] = "static void w2c_Fr_F1m_mul_wasm(";
        size_t head = (size_t)(at - txt), old_len = strlen("static void w2c_Fr_F1m_mul(");
        int fd = open(c_path, O_WRONLY | O_TRUNC | O_CLOEXEC);
        if (fd < 0 || write(fd, txt, head) != (ssize_t)head ||
            write(fd, renamed, sizeof renamed - 1) != (ssize_t)(sizeof renamed - 1) ||
            write(fd, at + old_len, n - head - old_len) != (ssize_t)(n - head - old_len))
            r = zk_fail(err, EIO, "%s: cannot rewrite: %s", c_path, strerror(errno));
        if (fd >= 0) close(fd);
    }
    free(txt);
    return r;
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
    int r = witgen_cache_check_fd(fd, so_path, wsha, err);
    if (r < 0) {
        close(fd);
        return r;
    }
    *ret_fd = fd;
    return 0;
}

int witgen_build_fd(const char *wasm_path, const witgen_opts_t *o, char *so_path, size_t so_cap, bool *ret_built,
                    int *ret_fd, zk_err_t *err) {
    *ret_fd = -1;
    if (ret_built) *ret_built = false;
    uint8_t *wasm;
    size_t wasm_len;
    int r = load_file(wasm_path, &wasm, &wasm_len, err);
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
    snprintf(so_path, so_cap, "%s/%s-v%d.so", cache, hx, WITGEN_ABI);
    zk_err_t e2;
    if (open_checked(so_path, wsha, ret_fd, &e2) == 0) {
        free(wasm);
        return 0;
    }
    if ((r = mkdir_p(cache)) < 0) {
        free(wasm);
        return zk_fail(err, -r, "%s: cannot create the cache directory: %s", cache, strerror(-r));
    }
    char dir[1100];
    snprintf(dir, sizeof dir, "%s/.build-XXXXXX", cache);
    if (!mkdtemp(dir)) {
        free(wasm);
        return zk_fail(err, errno, "%s: cannot create a build directory: %s", cache, strerror(errno));
    }
    char p_wasm[1200], p_c[1200], p_h[1200], p_glue[1200], p_so[1200], p_log[1200];
    snprintf(p_wasm, sizeof p_wasm, "%s/circuit.wasm", dir);
    snprintf(p_c, sizeof p_c, "%s/circuit.c", dir);
    snprintf(p_h, sizeof p_h, "%s/circuit.h", dir);
    snprintf(p_glue, sizeof p_glue, "%s/glue.c", dir);
    snprintf(p_so, sizeof p_so, "%s/gen.so", dir);
    snprintf(p_log, sizeof p_log, "%s/log", dir);
    /* translate the bytes that were hashed, not whatever the path holds by now */
    r = write_file(p_wasm, wasm, wasm_len);
    free(wasm);
    if (r < 0) {
        r = zk_fail(err, -r, "%s: cannot write: %s", p_wasm, strerror(-r));
        goto out;
    }
    char *w2c[] = {"wasm2c", "-n", "circuit", "-o", p_c, p_wasm, NULL};
    if ((r = run_tool(w2c, p_log, o, err)) < 0) {
        zk_err_t e3 = *err;
        r = zk_fail(err, EINVAL, "%s: %s", wasm_path, e3.msg);
        goto out;
    }
    if ((r = check_exports(wasm_path, p_h, err)) < 0) goto out;
    bool native_mul = false;
    if ((r = use_native_mul(p_c, &native_mul, err)) < 0) goto out;
    if ((r = write_file(p_glue, WITGEN_GLUE_SOURCE, strlen(WITGEN_GLUE_SOURCE))) < 0) {
        r = zk_fail(err, -r, "%s: cannot write: %s", p_glue, strerror(-r));
        goto out;
    }
    const char *cc = getenv("CC");
    if (!cc || !cc[0]) cc = "cc";
    /* no -march: the object must run on any x86-64 the executable runs on */
    char *ccv[] = {(char *)cc, "-O2", "-fPIC", "-shared", "-fvisibility=hidden", "-w", "-I", dir, "-o", p_so, p_glue,
                   native_mul ? "-DWITGEN_NATIVE_MUL" : NULL, NULL};
    if ((r = run_tool(ccv, p_log, o, err)) < 0) {
        zk_err_t e3 = *err;
        r = zk_fail(err, EIO, "%s: compiling the generator failed: %s", wasm_path, e3.msg);
        goto out;
    }
    uint8_t *so;
    size_t so_len;
    if ((r = load_file(p_so, &so, &so_len, err)) < 0) goto out;
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
    r = write_file(p_so, img, so_len + sizeof t);
    free(img);
    if (r < 0) {
        r = zk_fail(err, -r, "%s: cannot write: %s", p_so, strerror(-r));
        goto out;
    }
    if (rename(p_so, so_path) < 0) {
        r = zk_fail(err, errno, "%s: cannot rename into place: %s", so_path, strerror(errno));
        goto out;
    }
    int dfd = open(cache, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    if (ret_built) *ret_built = true;
    r = open_checked(so_path, wsha, ret_fd, err);
out:
    rm_rf_flat(dir);
    return r;
}
