/* The shared binary container of .zkey/.wtns/.r1cs/.ptau files (formats.md §1): magic, version and
 * a table of (id, u64 size, payload) sections. zk_bin_parse checks the whole table before anyone
 * reads a payload: every section inside the file (overflow-safe), no id twice, and the file ending
 * exactly after the last section. Payload pointers are into the caller's image, unaligned. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "curve_info.h"

/* Ids 1..ZK_BIN_MAX_ID are indexed; larger ids are bounds-checked and otherwise ignored. */
#define ZK_BIN_MAX_ID 31

typedef struct zk_bin_section {
    uint64_t off;  /* payload offset in the file */
    uint64_t size; /* payload bytes */
    bool present;
} zk_bin_section_t;

typedef struct zk_bin {
    const uint8_t *data;
    size_t size;
    uint32_t version;
    uint32_t n_sections;
    zk_bin_section_t sec[ZK_BIN_MAX_ID + 1];
} zk_bin_t;

/* Parses the container of a file image. kind is the expected magic ("zkey", "wtns", "r1cs", "ptau");
 * versions min_version..max_version are accepted; sec_word is how messages name a section
 * ("section", or "witness section"). Errors: "NAME: not a zkey file (magic 'zKey')", "NAME is an
 * r1cs file, not a zkey", "NAME: section 7 size 128384 at offset 217472 runs past end of file
 * (281669 bytes)", "NAME: section 4 appears twice", ... */
int zk_bin_parse(zk_bin_t *b, const char *name, const uint8_t *data, size_t size, const char *kind,
                 uint32_t min_version, uint32_t max_version, const char *sec_word, zk_err_t *err);

/* The payload of section id, or NULL if absent. */
static inline const uint8_t *zk_bin_payload(const zk_bin_t *b, uint32_t id) {
    if (id > ZK_BIN_MAX_ID || !b->sec[id].present) return NULL;
    return b->data + b->sec[id].off;
}

/* Unaligned little-endian loads (the hosts are little-endian, curve_info.c asserts it). */
static inline uint32_t zk_le32(const uint8_t *p) {
    uint32_t v;
    __builtin_memcpy(&v, p, 4);
    return v;
}
static inline uint64_t zk_le64(const uint8_t *p) {
    uint64_t v;
    __builtin_memcpy(&v, p, 8);
    return v;
}

/* The ground floor's reader (base/file.h) with the library's error type: zk_open_regular opens path
 * for reading, a regular file once symlinks are followed, never blocking ("NAME: not a regular file
 * (a FIFO)"); *ret_size is the file's size. */
int zk_open_regular(const char *path, int *ret_fd, size_t *ret_size, zk_err_t *err);

/* Reads a whole regular file (file_read) into malloc'd memory: its bytes at *ret_buf + pad,
 * followed by a NUL; *ret_len is the file's size. A file that changes size while it is read is
 * refused. */
int zk_read_file(const char *path, size_t pad, uint8_t **ret_buf, size_t *ret_len, zk_err_t *err);

/* Maps a whole regular file read-only (zk_open_regular). An empty file gives *ret_map = NULL, *ret_size = 0 and
 * success (the container parser reports it). Errors name the file. */
int zk_map_file(const char *path, void **ret_map, size_t *ret_size, zk_err_t *err);

/* The memory the system can give without swapping or killing anyone: MemAvailable of /proc/meminfo
 * in bytes (free memory plus the page cache it may drop), or UINT64_MAX where that is unknown. What a
 * loader checks a multi-GB allocation against before it makes one, so that a key or a domain larger
 * than the machine is refused with one line instead of waking the OOM killer. */
uint64_t zk_mem_available(void);

/* Up to n bytes of s as text for a one-line message, cut to fit cap (NUL included): printable ASCII
 * as it is, but quotes, backslashes and every other byte (newlines, controls, non-ASCII) as \xNN. */
void zk_printable(const void *s, size_t n, char *out, size_t cap);

/* a < b, little-endian byte strings of n8 bytes (n8 a multiple of 8). */
bool zk_le_lt(const uint8_t *a, const uint8_t *b, size_t n8);
