/* A pipeline stage's use of a circuit's generator: one loaded wasm instance per circuit (reused for
 * every partition), or a witness_cmd child per partition; the .wtns image goes straight into the
 * caller's buffer (synthd: the slab). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "witgen.h"

int witgen_source_open(witgen_t **ret, const witgen_source_t *s, const witgen_opts_t *o, const zk_zkey_t *z,
                       const char *zkey_name, bool *ret_built, zk_err_t *err) {
    *ret = NULL;
    if (ret_built) *ret_built = false;
    if (!s->wasm || !s->wasm[0]) return 0;
    witgen_opts_t oo = *o;
    oo.cache_dir = s->cache_dir;
    oo.memory_limit = s->memory_limit;
    oo.timeout_s = s->timeout_s;
    witgen_t *g;
    int r = witgen_open(&g, s->wasm, &oo, ret_built, err);
    if (r < 0) return r;
    if ((r = witgen_check_zkey(g, z, zkey_name, err)) < 0) {
        witgen_close(g);
        return r;
    }
    *ret = g;
    return 0;
}

/* "DIR/input-3.json: ..." -> "input-3.json: ..." */
static void strip_dir(zk_err_t *err, const char *dir) {
    size_t n = strlen(dir);
    if (!strncmp(err->msg, dir, n) && err->msg[n] == '/') memmove(err->msg, err->msg + n + 1, strlen(err->msg + n));
}

static int read_image(const char *path, const char *name, uint8_t *out, size_t cap, size_t *ret_len, zk_err_t *err) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return zk_fail(err, errno, "%s: cannot open: %s", name, strerror(errno));
    struct stat st;
    int r = 0;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
        r = zk_fail(err, EINVAL, "%s: not a regular file", name);
    else if ((uint64_t)st.st_size > cap)
        r = zk_fail(err, EFBIG, "%s: %lld bytes, more than a witness of this circuit can be", name,
                    (long long)st.st_size);
    size_t got = 0;
    while (r == 0 && got < (size_t)st.st_size) {
        ssize_t k = pread(fd, out + got, (size_t)st.st_size - got, (off_t)got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) r = zk_fail(err, EIO, "%s: read error", name);
        else got += (size_t)k;
    }
    close(fd);
    *ret_len = got;
    return r;
}

int witgen_partition(witgen_t *g, const witgen_source_t *s, const witgen_opts_t *o, const char *job_dir, uint32_t part,
                     uint8_t *out, size_t cap, size_t *ret_len, zk_err_t *err) {
    char input[1400];
    snprintf(input, sizeof input, "%s/input-%u.json", job_dir, part);
    int r;
    if (g) {
        r = witgen_calc(g, input, out, cap, ret_len, err);
    } else if (s->cmd && s->cmd[0]) {
        char wtns[1400], name[80];
        snprintf(wtns, sizeof wtns, "%s/.witness-%u.wtns", job_dir, part);
        witgen_cmd_t c = {s->cmd, s->timeout_s, s->memory_limit, o->tick, o->tick_ctx, o->stop, o->stop_ctx};
        r = witgen_run_cmd(&c, input, wtns, err);
        if (r < 0) {
            zk_err_t e2 = *err;
            zk_fail(err, -r, "input-%u.json: witness_cmd %s", part, e2.msg);
        } else {
            snprintf(name, sizeof name, "witness_cmd's output for input-%u.json", part);
            r = read_image(wtns, name, out, cap, ret_len, err);
        }
        unlink(wtns);
    } else {
        r = zk_fail(err, EINVAL, "input-%u.json: the circuit has no witness generator (wasm or witness_cmd)", part);
    }
    if (r < 0) strip_dir(err, job_dir);
    return r;
}
