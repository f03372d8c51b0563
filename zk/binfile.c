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

#include "base/file.h"

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

int zk_open_regular(const char *path, int *ret_fd, size_t *ret_size, zk_err_t *err) {
    zk_err_t ignored;
    if (!err) err = &ignored;
    struct stat st;
    int fd = file_open_regular(AT_FDCWD, path, 0, &st, err->msg, sizeof err->msg);
    if (fd < 0) return fd;
    *ret_fd = fd;
    *ret_size = (size_t)st.st_size;
    return 0;
}

int zk_read_file(const char *path, size_t pad, uint8_t **ret_buf, size_t *ret_len, zk_err_t *err) {
    zk_err_t ignored;
    if (!err) err = &ignored;
    char *buf;
    int r = file_read(AT_FDCWD, path, 0, 0, pad, &buf, ret_len, err->msg, sizeof err->msg);
    if (r < 0) return r;
    *ret_buf = (uint8_t *)buf;
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
