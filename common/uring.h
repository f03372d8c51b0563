/* Whole-file reads through io_uring, straight into caller memory (a slab). */
#pragma once
#include <stddef.h>
#include <stdint.h>

typedef struct uring_reader uring_reader_t;

int uring_reader_new(uring_reader_t **ret, unsigned depth);
void uring_reader_free(uring_reader_t *u);
/* Reads all of the open regular file fd (-EINVAL for anything else) into buf (capacity cap); fd stays
 * open. -EFBIG when the file is larger than cap (*ret_len says how large). */
int uring_read_fd(uring_reader_t *u, int fd, void *buf, size_t cap, size_t *ret_len);
