/* The whole-file reader, the atomic writer and the flat-folder remover (base/file.h). */
#include "file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "testpoint.h"

const char *file_kind(mode_t m) {
    return S_ISREG(m)    ? "a regular file"
           : S_ISDIR(m)  ? "a directory"
           : S_ISFIFO(m) ? "a FIFO"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISLNK(m)  ? "a symbolic link"
           : S_ISSOCK(m) ? "a socket"
                         : "not a plain file";
}

/* fstat of fd: a regular file whose size (with pad bytes more) fits in memory's counts. */
static int stat_regular(int fd, const char *name, size_t pad, struct stat *st, char *why, size_t whylen) {
    if (fstat(fd, st) < 0) {
        int e = errno;
        return snprintf(why, whylen, "%s: cannot stat: %s", name, strerror(e)), -e;
    }
    if (!S_ISREG(st->st_mode))
        return snprintf(why, whylen, "%s: not a regular file (%s)", name, file_kind(st->st_mode)), -EINVAL;
    if ((uint64_t)st->st_size > (uint64_t)SIZE_MAX / 2 - pad - 2)
        return snprintf(why, whylen, "%s: file of %lld bytes is too large", name, (long long)st->st_size), -EFBIG;
    return 0;
}

int file_open_regular(int dirfd, const char *path, int flags, struct stat *ret_st, char *why, size_t whylen) {
    int oflags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (flags & FILE_NOFOLLOW ? O_NOFOLLOW : 0);
    _cleanup_close_ int fd = openat(dirfd, path, oflags);
    if (fd < 0) {
        int e = errno;
        if (e == ELOOP && (flags & FILE_NOFOLLOW))
            snprintf(why, whylen, "%s: is a symbolic link (not followed)", path);
        else
            snprintf(why, whylen, "%s: cannot open: %s", path, strerror(e));
        return -e;
    }
    struct stat st;
    int r = stat_regular(fd, path, 0, &st, why, whylen);
    if (r < 0) return r;
    /* reads of a regular file never block anyway; cleared for io_uring and stdio readers */
    (void)fcntl(fd, F_SETFL, 0);
    if (ret_st) *ret_st = st;
    return TAKE_FD(fd);
}

ssize_t fd_pread_all(int fd, void *buf, size_t len, uint64_t off) {
    size_t got = 0;
    while (got < len) {
        ssize_t n = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -errno;
        if (n == 0) break;
        got += (size_t)n;
    }
    return (ssize_t)got;
}

int fd_write_all(int fd, const void *data, size_t len) {
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, (const char *)data + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return -errno;
        off += (size_t)w;
    }
    return 0;
}

int file_read_fd(int fd, const char *name, size_t cap, size_t pad, char **ret_buf, size_t *ret_len, char *why,
                 size_t whylen) {
    struct stat st;
    int r = stat_regular(fd, name, pad, &st, why, whylen);
    if (r < 0) return r;
    if (cap && (uint64_t)st.st_size > cap)
        return snprintf(why, whylen, "%s: %lld bytes, more than the %zu it can be", name, (long long)st.st_size, cap),
               -EFBIG;
    size_t size = (size_t)st.st_size;
    /* one byte more than fstat said: a file that grew is noticed instead of read without end */
    char *buf = malloc(pad + size + 1);
    if (!buf) return snprintf(why, whylen, "%s: out of memory reading %zu bytes", name, size), -ENOMEM;
    ssize_t n = fd_pread_all(fd, buf + pad, size + 1, 0);
    if (n < 0) {
        free(buf);
        return snprintf(why, whylen, "%s: read failed: %s", name, strerror((int)-n)), (int)n;
    }
    if ((size_t)n != size) {
        free(buf);
        return snprintf(why, whylen, "%s: its size is %zu bytes but %s%zu were read (the file changed while it was read)",
                        name, size, (size_t)n > size ? "more than " : "", (size_t)n > size ? size : (size_t)n),
               -EIO;
    }
    buf[pad + size] = 0;
    *ret_buf = buf;
    *ret_len = size;
    return 0;
}

int file_read(int dirfd, const char *path, int flags, size_t cap, size_t pad, char **ret_buf, size_t *ret_len,
              char *why, size_t whylen) {
    _cleanup_close_ int fd = file_open_regular(dirfd, path, flags, NULL, why, whylen);
    if (fd < 0) return fd;
    return file_read_fd(fd, path, cap, pad, ret_buf, ret_len, why, whylen);
}

int file_atomic_prepare(file_atomic_batch_t *b, int dirfd, const file_atomic_t *files, size_t n) {
    b->dirfd = dirfd, b->files = files, b->n = 0;
    if (n > FILE_ATOMIC_MAX) return -E2BIG;
    int fds[FILE_ATOMIC_MAX];
    size_t made = 0;
    int r = 0;
    while (r == 0 && made < n) {
        uint32_t rnd = 0;
        if (getrandom(&rnd, sizeof rnd, GRND_NONBLOCK) != sizeof rnd) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            rnd = (uint32_t)ts.tv_nsec;
        }
        if ((size_t)snprintf(b->tmp[made], sizeof b->tmp[made], ".%s.tmp.%d.%08x", files[made].name, (int)getpid(),
                             rnd) >= sizeof b->tmp[made]) {
            r = -ENAMETOOLONG;
            break;
        }
        /* O_EXCL|O_NOFOLLOW: a name planted in the folder (a symlink, a file) is never written through */
        int fd = openat(dirfd, b->tmp[made], O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0) {
            r = -errno;
            break;
        }
        fds[made++] = fd;
        r = fd_write_all(fd, files[made - 1].data, files[made - 1].len);
    }
    /* every file's writeback is started before the first fsync, so that one journal commit can cover
     * them all */
    for (size_t i = 0; r == 0 && i < made; i++) (void)sync_file_range(fds[i], 0, 0, SYNC_FILE_RANGE_WRITE);
    for (size_t i = 0; r == 0 && i < made; i++)
        if (fsync(fds[i]) < 0) r = -errno;
    for (size_t i = 0; i < made; i++)
        if (close(fds[i]) < 0 && r == 0) r = -errno;
    b->n = made;
    if (r < 0) file_atomic_abort(b);
    return r;
}

void file_atomic_abort(file_atomic_batch_t *b) {
    for (size_t i = 0; i < b->n; i++) (void)unlinkat(b->dirfd, b->tmp[i], 0);
    b->n = 0;
}

int file_atomic_commit(file_atomic_batch_t *b, const char *hook, int part) {
    size_t renamed = 0;
    int r = 0;
    char point[96];
    if (hook) {
        snprintf(point, sizeof point, "%s.before_rename", hook);
        test_point(point, part);
    }
    while (r == 0 && renamed < b->n)
        if (renameat(b->dirfd, b->tmp[renamed], b->dirfd, b->files[renamed].name) < 0)
            r = -errno;
        else
            renamed++;
    for (size_t i = renamed; i < b->n; i++) (void)unlinkat(b->dirfd, b->tmp[i], 0);
    b->n = 0;
    if (renamed) (void)fsync(b->dirfd);
    if (r < 0) return r;
    if (hook) {
        snprintf(point, sizeof point, "%s.after_rename", hook);
        test_point(point, part);
    }
    return 0;
}

int file_write_atomic_files_at(int dirfd, const file_atomic_t *files, size_t n, const char *hook, int part) {
    file_atomic_batch_t b;
    int r = file_atomic_prepare(&b, dirfd, files, n);
    return r < 0 ? r : file_atomic_commit(&b, hook, part);
}

int file_write_atomic_at(int dirfd, const char *name, const void *data, size_t len, const char *hook, int part) {
    return file_write_atomic_files_at(dirfd, &(file_atomic_t){name, data, len}, 1, hook, part);
}

/* The folder of path and its last component: "a/b" -> "a", "b"; "b" -> ".", "b"; "/b" -> "/", "b". */
static const char *split_path(const char *path, char *dir, size_t dirlen) {
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(dir, dirlen, ".");
        return path;
    }
    snprintf(dir, dirlen, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    return slash + 1;
}

int file_open_dir_of(const char *path, const char **name) {
    char dir[PATH_MAX];
    *name = split_path(path, dir, sizeof dir);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return dfd < 0 ? -errno : dfd;
}

int file_write_atomic(const char *path, const void *data, size_t len) {
    const char *name;
    _cleanup_close_ int dfd = file_open_dir_of(path, &name);
    if (dfd < 0) return dfd;
    return file_write_atomic_at(dfd, name, data, len, NULL, -1);
}

bool file_is_temporary(const char *name) { return strstr(name, ".tmp.") != NULL; }

void file_unlink_entries_at(int dirfd, bool (*match)(const char *name)) {
    int fd2 = dup(dirfd);
    DIR *d = fd2 >= 0 ? fdopendir(fd2) : NULL;
    if (!d) {
        if (fd2 >= 0) close(fd2);
        return;
    }
    struct dirent *de;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && (!match || match(de->d_name)))
            (void)unlinkat(dirfd, de->d_name, 0);
    closedir(d);
}

void file_remove_flat_dir_at(int parent, const char *name) {
    _cleanup_close_ int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        (void)unlinkat(parent, name, 0); /* not a folder: a file or a link */
        return;
    }
    file_unlink_entries_at(fd, NULL);
    (void)unlinkat(parent, name, AT_REMOVEDIR);
}

void file_remove_flat_dir(const char *path) {
    const char *name;
    _cleanup_close_ int pfd = file_open_dir_of(path, &name);
    if (pfd >= 0) file_remove_flat_dir_at(pfd, name);
}

int file_fsync_dir(const char *dir) {
    _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -errno;
    return fsync(fd) < 0 ? -errno : 0;
}
