/* Cleanup attributes (as systemd uses them): a variable declared with one of these is released on
 * every path out of its scope, so early returns cannot leak or double-close. TAKE_FD hands an fd
 * over to an owner that outlives the scope. */
#pragma once
#include <stdlib.h>
#include <unistd.h>

static inline void zp_closep(int *fd) {
    if (*fd >= 0) close(*fd);
}
static inline void zp_freep(void *p) { free(*(void **)p); }
#define _cleanup_close_ __attribute__((cleanup(zp_closep)))
#define _cleanup_free_ __attribute__((cleanup(zp_freep)))
#define TAKE_FD(fd)                                                                                                    \
    ({                                                                                                                 \
        int _fd = (fd);                                                                                                \
        (fd) = -1;                                                                                                     \
        _fd;                                                                                                           \
    })
