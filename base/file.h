/* The ground floor's files: the one whole-file reader, the one atomic writer, the one remover of a
 * flat folder, and the fd loops under them. Every reader and writer of the project goes through
 * these, so the rules are kept in one place:
 *
 * - A file read is a regular file: it is opened O_NONBLOCK (a FIFO where the file belongs is
 *   refused at once, never waited on), then fstat decides; with FILE_NOFOLLOW a symbolic link as the
 *   last component is refused too (the spool, caches: places a hostile user may plant a link in).
 * - A whole read is bounded by the size fstat gave (and by the caller's cap): a file that grows or
 *   shrinks while it is read is refused, never read without end or half.
 * - A file written is written whole or not at all: a temporary ".NAME.tmp.PID.RAND" beside it,
 *   created O_EXCL|O_NOFOLLOW (a name planted there is never written through), fsync, rename over
 *   NAME, fsync of the folder.
 *
 * Errors are a negative errno and one line in why ("PATH: not a regular file (a FIFO)"), PATH as
 * the caller gave it. Nothing here allocates beyond what it returns, logs, or uses another folder of
 * the project. */
#pragma once
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Refuse a symbolic link as the last component ("PATH: is a symbolic link (not followed)"). */
#define FILE_NOFOLLOW 1

/* What a file of mode m is, for a message: "a FIFO", "a directory", "a character device", ... */
const char *file_kind(mode_t m);

/* Opens DIRFD/PATH (AT_FDCWD: PATH alone) for reading, a regular file only (the rules above); the
 * fd is blocking again once open. *ret_st (when not NULL) is its fstat. The fd, or a negative errno. */
int file_open_regular(int dirfd, const char *path, int flags, struct stat *ret_st, char *why, size_t whylen);

/* Reads the regular file open at fd whole, from offset 0, into malloc'd memory: pad bytes (left
 * as they are, for the caller), the file's bytes, a NUL. Refused when larger than cap (0: no cap
 * but what memory allows) or when its size changes while it is read. name is what messages call it. */
int file_read_fd(int fd, const char *name, size_t cap, size_t pad, char **ret_buf, size_t *ret_len, char *why,
                 size_t whylen);
/* file_open_regular, then file_read_fd. */
int file_read(int dirfd, const char *path, int flags, size_t cap, size_t pad, char **ret_buf, size_t *ret_len,
              char *why, size_t whylen);

/* The atomic writer: DIRFD/NAME through a temporary (the rules above). With hook set, the test points
 * HOOK.before_rename and HOOK.after_rename (base/testpoint.h) are passed around the rename, for
 * partition part. 0 or a negative errno; a failed write leaves no temporary. */
int file_write_atomic_at(int dirfd, const char *name, const void *data, size_t len, const char *hook, int part);
/* Several files into one folder at once (finalizerd: public-<k>.json, then proof-<k>.json): every
 * temporary written, the writeback of all started, each fsync'd, then renamed in the order given,
 * then one fsync of the folder, so a crash leaves a prefix of them in place and one journal commit
 * can cover them all; the test points run once, around the renames. At most FILE_ATOMIC_MAX files.
 * On an error the files not renamed are removed. */
#define FILE_ATOMIC_MAX 8
typedef struct file_atomic {
    const char *name;
    const void *data;
    size_t len;
} file_atomic_t;
int file_write_atomic_files_at(int dirfd, const file_atomic_t *files, size_t n, const char *hook, int part);
/* The same in two steps, for a writer with something left to check before the files may appear
 * (zkpipe prove verifies its proof meanwhile): file_atomic_prepare writes and fsyncs every
 * temporary (on an error it removes them and returns it), then either file_atomic_commit renames
 * them in the order given and fsyncs the folder (the test points of HOOK run around the renames),
 * or file_atomic_abort removes them. files and dirfd must outlive the batch. */
typedef struct file_atomic_batch {
    int dirfd;
    const file_atomic_t *files;
    size_t n; /* temporaries written */
    char tmp[FILE_ATOMIC_MAX][NAME_MAX + 1];
} file_atomic_batch_t;
int file_atomic_prepare(file_atomic_batch_t *b, int dirfd, const file_atomic_t *files, size_t n);
int file_atomic_commit(file_atomic_batch_t *b, const char *hook, int part);
void file_atomic_abort(file_atomic_batch_t *b);
/* The folder of path ("." for a bare name), opened O_DIRECTORY: its fd or a negative errno; *name
 * is path's last component (a pointer into path). */
int file_open_dir_of(const char *path, const char **name);
/* The same for a path (its folder is opened here). */
int file_write_atomic(const char *path, const void *data, size_t len);
/* Whether name is a temporary of file_write_atomic_at (or of the older "NAME.tmp.PID" writers): what
 * a writer that died leaves behind. */
bool file_is_temporary(const char *name);

/* Unlinks the entries of the folder dirfd whose names match (all of them for match NULL; "." and
 * ".." never), files and links alike, never what a link points to. Best effort. */
void file_unlink_entries_at(int dirfd, bool (*match)(const char *name));
/* Removes PARENT/NAME, a folder of files (no subfolders), and its files; never follows a link (a
 * link or file at NAME is unlinked itself). Best effort: what cannot be removed stays. */
void file_remove_flat_dir_at(int parent, const char *name);
/* The same for a path. */
void file_remove_flat_dir(const char *path);
/* fsync of a folder (after a rename into it). */
int file_fsync_dir(const char *dir);

/* The fd loops: all of len written (EINTR retried); 0 or a negative errno. */
int fd_write_all(int fd, const void *data, size_t len);
/* Up to len bytes from offset off; fewer only at the end of the file. The count, or a negative errno. */
ssize_t fd_pread_all(int fd, void *buf, size_t len, uint64_t off);
