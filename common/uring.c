/* io_uring file reader (common/uring.h): the file is read in chunks of up to 1 MiB, several in
 * flight, into the destination buffer. */
#include "uring.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

struct uring_reader {
    struct io_uring ring;
    unsigned depth;
};

int uring_reader_new(uring_reader_t **ret, unsigned depth) {
    uring_reader_t *u = calloc(1, sizeof *u);
    if (!u) return -ENOMEM;
    int r = io_uring_queue_init(depth, &u->ring, 0);
    if (r < 0) {
        free(u);
        return r;
    }
    u->depth = depth;
    *ret = u;
    return 0;
}

void uring_reader_free(uring_reader_t *u) {
    if (!u) return;
    io_uring_queue_exit(&u->ring);
    free(u);
}

int uring_read_fd(uring_reader_t *u, int fd, void *buf, size_t cap, size_t *ret_len) {
    struct stat st;
    if (fstat(fd, &st) < 0) return -errno;
    if (!S_ISREG(st.st_mode)) return -EINVAL;
    size_t len = (size_t)st.st_size;
    *ret_len = len;
    if (len > cap) return -EFBIG;
    const size_t chunk = 1u << 20;
    size_t next = 0, done = 0;
    unsigned inflight = 0;
    int r = 0;
    while (done < len && r == 0) {
        while (next < len && inflight < u->depth) {
            struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
            if (!sqe) break;
            size_t n = len - next < chunk ? len - next : chunk;
            io_uring_prep_read(sqe, fd, (char *)buf + next, (unsigned)n, (uint64_t)next);
            io_uring_sqe_set_data64(sqe, ((uint64_t)next << 24) | n);
            next += n;
            inflight++;
        }
        int s = io_uring_submit(&u->ring);
        if (s < 0) {
            r = s;
            break;
        }
        struct io_uring_cqe *cqe;
        s = io_uring_wait_cqe(&u->ring, &cqe);
        if (s == -EINTR) continue;
        if (s < 0) {
            r = s;
            break;
        }
        uint64_t tag = io_uring_cqe_get_data64(cqe);
        size_t off = tag >> 24, want = tag & 0xffffff;
        int res = cqe->res;
        io_uring_cqe_seen(&u->ring, cqe);
        inflight--;
        if (res < 0) {
            r = res;
        } else if ((size_t)res < want) {
            if (res == 0)
                r = -EIO; /* file shrank under us */
            else {
                /* short read: ask for the rest of that chunk */
                struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
                if (!sqe)
                    r = -EBUSY;
                else {
                    io_uring_prep_read(sqe, fd, (char *)buf + off + res, (unsigned)(want - res), off + res);
                    io_uring_sqe_set_data64(sqe, ((uint64_t)(off + res) << 24) | (want - res));
                    inflight++;
                    done += (size_t)res;
                }
            }
        } else {
            done += (size_t)res;
        }
    }
    /* drain anything still in flight before the buffer can be reused */
    while (inflight > 0) {
        struct io_uring_cqe *cqe;
        if (io_uring_wait_cqe(&u->ring, &cqe) < 0) break;
        io_uring_cqe_seen(&u->ring, cqe);
        inflight--;
    }
    return r;
}
