/* Container parsing shared by the zkey, wtns and r1cs readers (formats.md §1). */
#include "binfile.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct {
    const char *magic;
    const char *what;
} known_magics[] = {
    {"zkey", "a zkey"},
    {"wtns", "a wtns"},
    {"r1cs", "an r1cs"},
    {"ptau", "a ptau"},
};

void zk_printable(const void *s, size_t n, char *out, size_t cap) {
    static const char hex[] = "0123456789abcdef";
    const uint8_t *b = s;
    size_t o = 0;
    if (!cap) return;
    for (size_t i = 0; i < n; i++) {
        if (b[i] >= 0x20 && b[i] < 0x7f && b[i] != '\'' && b[i] != '"' && b[i] != '\\') {
            if (o + 1 >= cap) break;
            out[o++] = (char)b[i];
        } else {
            if (o + 4 >= cap) break;
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[b[i] >> 4];
            out[o++] = hex[b[i] & 15];
        }
    }
    out[o] = 0;
}

int zk_bin_parse(zk_bin_t *b, const char *name, const uint8_t *data, size_t size, const char *kind,
                 uint32_t min_version, uint32_t max_version, const char *sec_word, zk_err_t *err) {
    memset(b, 0, sizeof(*b));
    if (size == 0) return zk_fail(err, EINVAL, "%s: empty file, too short for a header", name);
    if (size < 12)
        return zk_fail(err, EINVAL, "%s: file of %zu bytes is too short for a header (12 bytes)", name, size);
    if (memcmp(data, kind, 4) != 0) {
        const char *want = kind[0] == 'r' ? "an" : "a";
        for (size_t i = 0; i < sizeof(known_magics) / sizeof(known_magics[0]); i++)
            if (memcmp(data, known_magics[i].magic, 4) == 0)
                return zk_fail(err, EINVAL, "%s is %s file, not %s %s", name, known_magics[i].what, want, kind);
        char m[17];
        zk_printable(data, 4, m, sizeof(m));
        return zk_fail(err, EINVAL, "%s: not %s %s file (magic '%s')", name, want, kind, m);
    }
    uint32_t version = zk_le32(data + 4), n = zk_le32(data + 8);
    if (version < min_version || version > max_version)
        return zk_fail(err, EINVAL, "%s: unsupported %s version %u (supported: %u..%u)", name, kind, version,
                       min_version, max_version);
    /* Each section needs at least its 12-byte header: bounds n before walking. */
    if (n > (size - 12) / 12)
        return zk_fail(err, EINVAL, "%s: header says %u sections, the file of %zu bytes cannot hold them", name, n,
                       size);
    uint64_t pos = 12;
    for (uint32_t i = 0; i < n; i++) {
        if (size - pos < 12)
            return zk_fail(err, EINVAL,
                           "%s: the header of %s %u of %u (offset %" PRIu64 ") runs past end of file (%zu bytes)",
                           name, sec_word, i + 1, n, pos, size);
        uint32_t id = zk_le32(data + pos);
        uint64_t sz = zk_le64(data + pos + 4);
        uint64_t start = pos + 12;
        if (sz > size - start)
            return zk_fail(err, EINVAL,
                           "%s: %s %u size %" PRIu64 " at offset %" PRIu64 " runs past end of file (%zu bytes)", name,
                           sec_word, id, sz, start, size);
        if (id <= ZK_BIN_MAX_ID) {
            if (b->sec[id].present)
                return zk_fail(err, EINVAL, "%s: %s %u appears twice (offsets %" PRIu64 " and %" PRIu64 ")", name,
                               sec_word, id, b->sec[id].off, start);
            b->sec[id] = (zk_bin_section_t){.off = start, .size = sz, .present = true};
        }
        pos = start + sz;
    }
    if (pos != size)
        return zk_fail(err, EINVAL, "%s: %zu bytes after the last section (file ends at %zu, sections at %" PRIu64 ")",
                       name, size - (size_t)pos, size, pos);
    b->data = data;
    b->size = size;
    b->version = version;
    b->n_sections = n;
    return 0;
}

static const char *file_kind(mode_t m) {
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a plain file";
}

int zk_open_regular(const char *path, int *ret_fd, size_t *ret_size, zk_err_t *err) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return zk_fail(err, errno, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        return zk_fail(err, e, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return zk_fail(err, EINVAL, "%s: not a regular file (%s)", path, file_kind(st.st_mode));
    }
    if ((uint64_t)st.st_size > (uint64_t)SIZE_MAX / 2) {
        close(fd);
        return zk_fail(err, EFBIG, "%s: file of %lld bytes is too large", path, (long long)st.st_size);
    }
    *ret_fd = fd;
    *ret_size = (size_t)st.st_size;
    return 0;
}

int zk_read_file(const char *path, size_t pad, uint8_t **ret_buf, size_t *ret_len, zk_err_t *err) {
    int fd;
    size_t size;
    int rc = zk_open_regular(path, &fd, &size, err);
    if (rc < 0) return rc;
    uint8_t *buf = malloc(pad + size + 1);
    if (!buf) {
        close(fd);
        return zk_fail(err, ENOMEM, "%s: out of memory reading %zu bytes", path, size);
    }
    size_t len = 0;
    /* one byte more than fstat said: a file that grew is noticed instead of read without end */
    while (len <= size) {
        ssize_t k = read(fd, buf + pad + len, size + 1 - len);
        if (k < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            free(buf);
            close(fd);
            return zk_fail(err, e, "%s: read failed: %s", path, strerror(e));
        }
        if (k == 0) break;
        len += (size_t)k;
    }
    close(fd);
    if (len != size) {
        free(buf);
        return zk_fail(err, EIO, "%s: its size is %zu bytes but %s%zu were read (the file changed while it was read)",
                       path, size, len > size ? "more than " : "", len > size ? size : len);
    }
    buf[pad + len] = 0;
    *ret_buf = buf;
    *ret_len = len;
    return 0;
}

int zk_map_file(const char *path, void **ret_map, size_t *ret_size, zk_err_t *err) {
    int fd;
    size_t size;
    int rc = zk_open_regular(path, &fd, &size, err);
    if (rc < 0) return rc;
    if (size == 0) {
        close(fd);
        *ret_map = NULL;
        *ret_size = 0;
        return 0;
    }
    void *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    if (m == MAP_FAILED) return zk_fail(err, e, "%s: cannot map %zu bytes: %s", path, size, strerror(e));
    *ret_map = m;
    *ret_size = size;
    return 0;
}

uint64_t zk_mem_available(void) {
    FILE *f = fopen("/proc/meminfo", "re");
    if (!f) return UINT64_MAX;
    char line[256];
    unsigned long long kib = 0;
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) found = sscanf(line, "MemAvailable: %llu kB", &kib) == 1;
    fclose(f);
    return found ? (uint64_t)kib * 1024 : UINT64_MAX;
}

bool zk_le_lt(const uint8_t *a, const uint8_t *b, size_t n8) {
    for (size_t i = n8 / 8; i-- > 0;) {
        uint64_t x = zk_le64(a + 8 * i), y = zk_le64(b + 8 * i);
        if (x != y) return x < y;
    }
    return false;
}
