/* The parts of a .zkey each stage reads (plan/parts.h). */
#include "plan/parts.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "zk/binfile.h"
#include "zk/zkey.h"

int circuit_read_range(int fd, uint8_t *m, uint64_t off, uint64_t len, const char *path, uint64_t size, zk_err_t *e) {
    ssize_t n = fd_pread_all(fd, m + off, (size_t)len, off);
    if (n < 0)
        return zk_fail(e, (int)-n, "%s: read at %llu of %llu bytes: %s", path, (unsigned long long)off,
                       (unsigned long long)size, strerror((int)-n));
    if ((uint64_t)n < len)
        return zk_fail(e, EIO, "%s: read %llu of %llu bytes: the file shrank while it was read", path,
                       (unsigned long long)(off + (uint64_t)n), (unsigned long long)size);
    return 0;
}

int circuit_key_ranges(int fd, uint8_t *m, uint64_t size, uint32_t skip, const char *path, uint64_t ranges[][2],
                       unsigned *n_ranges, uint64_t *held, zk_err_t *e) {
    *n_ranges = 1;
    ranges[0][0] = 0, ranges[0][1] = *held = size;
    int r = circuit_read_range(fd, m, 0, size < 12 ? size : 12, path, size, e);
    if (r < 0 || size < 12 || memcmp(m, "zkey", 4)) return r;
    uint32_t n_sec = zk_le32(m + 8);
    uint64_t pos = 12, total = 12;
    unsigned n = 0;
    for (uint32_t i = 0; i < n_sec; i++) {
        if (size - pos < 12 || n + 1 >= CIRCUIT_MAX_RANGES) return 0;
        if ((r = circuit_read_range(fd, m, pos, 12, path, size, e)) < 0) return r;
        uint32_t id = zk_le32(m + pos);
        uint64_t sz = zk_le64(m + pos + 4), start = pos + 12;
        if (sz > size - start) return 0;
        if (!(id < 32 && ((skip >> id) & 1))) ranges[n][0] = start, ranges[n][1] = sz, total += sz, n++;
        total += 12;
        pos = start + sz;
    }
    if (pos != size) return 0;
    *n_ranges = n;
    *held = total;
    return 0;
}

uint32_t circuit_skip_of(unsigned want) {
    return (want & CIRCUIT_COEFS ? 0 : 1u << 4) | (want & CIRCUIT_POINTS ? 0 : 0x1fu << 5);
}

int circuits_parts(const char *path, circuit_parts_t *out, zk_err_t *e) {
    memset(out, 0, sizeof *out);
    _cleanup_close_ int fd = -1;
    size_t size;
    int r = zk_open_regular(path, &fd, &size, e);
    if (r < 0) return r;
    if (size == 0) return zk_fail(e, EINVAL, "%s: empty file", path);
    uint8_t *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return zk_fail(e, errno, "%s: cannot reserve %zu bytes: %s", path, size, strerror(errno));
    static const unsigned wants[CIRCUIT_STAGES] = {[CIRCUIT_SYNTHD] = CIRCUIT_COEFS, [CIRCUIT_GPUD] = CIRCUIT_POINTS,
                                                   [CIRCUIT_FINALIZERD] = 0};
    uint64_t ranges[CIRCUIT_MAX_RANGES][2];
    unsigned n = 0;
    for (int i = 0; r == 0 && i < CIRCUIT_STAGES; i++)
        r = circuit_key_ranges(fd, m, size, circuit_skip_of(wants[i]), path, ranges, &n, &out->held[i], e);
    /* sections 1 to 3 alone (the headers and IC; never a large section of another kind), for the
     * key's dimensions */
    uint64_t small;
    if (r == 0) r = circuit_key_ranges(fd, m, size, ~0xeu, path, ranges, &n, &small, e);
    for (unsigned i = 0; r == 0 && small < size && i < n; i++)
        r = circuit_read_range(fd, m, ranges[i][0], ranges[i][1], path, size, e);
    if (r == 0 && small == size)
        r = zk_fail(e, EINVAL, "%s: not a .zkey whose sections can be walked", path);
    zk_zkey_t z;
    if (r == 0 && (r = zk_zkey_parse_parts(&z, path, m, size, ZK_ZKEY_SKIPPABLE, e)) == 0) {
        out->curve = z.curve, out->n_vars = z.n_vars, out->n_pub = z.n_pub, out->domain = z.domain_size;
        out->file_size = size;
        zk_zkey_close(&z);
    }
    munmap(m, size);
    return r;
}
