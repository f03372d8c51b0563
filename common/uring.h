/* Whole-file reads through io_uring, straight into caller memory (a slab). */
#pragma once
#include <stddef.h>
#include <stdint.h>

typedef struct uring_reader uring_reader_t;

int uring_reader_new(uring_reader_t **ret, unsigned depth);
void uring_reader_free(uring_reader_t *u);
/* Reads all of path into buf (capacity cap). -EFBIG when the file is larger than cap
 * (*ret_len says how large). */
int uring_read_file(uring_reader_t *u, const char *path, void *buf, size_t cap, size_t *ret_len);
/* The same from an open regular file (-EINVAL for anything else); fd stays open. */
int uring_read_fd(uring_reader_t *u, int fd, void *buf, size_t cap, size_t *ret_len);
