/* One temporary folder per test program (made by its setup, removed by its teardown) and the small
 * file helpers the tests of files use (test_base, test_common). Define TMPDIR_NAME (the folder's
 * name before its random suffix) before including it, after test.h. */
#pragma once
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <fcntl.h>

#include "base/file.h"

static char tmp_root[512];

TEST_SETUP() {
    const char *dir = getenv("TMPDIR");
    snprintf(tmp_root, sizeof tmp_root, "%s/" TMPDIR_NAME "-XXXXXX", dir && *dir ? dir : "/tmp");
    CHECK_MSG(mkdtemp(tmp_root), "%s: %s", tmp_root, strerror(errno));
    return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path) < 0 ? -1 : 0;
}

TEST_TEARDOWN() {
    CHECK_MSG(nftw(tmp_root, rm_one, 16, FTW_DEPTH | FTW_PHYS) == 0, "%s: cannot remove", tmp_root);
    return 0;
}

/* tmp_root/REL (printf-style); 64 buffers in rotation (copy a path that must outlive that). */
static const char *tmp_path(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *tmp_path(const char *fmt, ...) {
    static char buf[64][1024];
    static int k;
    char rel[512], *b = buf[k++ % 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rel, sizeof rel, fmt, ap);
    va_end(ap);
    snprintf(b, 1024, "%s/%s", tmp_root, rel);
    return b;
}

static int write_file(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "we");
    if (!f) return -errno;
    size_t n = fwrite(data, 1, len, f);
    return fclose(f) == 0 && n == len ? 0 : -EIO;
}
static int write_text(const char *path, const char *text) { return write_file(path, text, strlen(text)); }

/* The whole file as a string (NULL when it cannot be read); static buffer. */
static const char *read_text(const char *path) {
    static char buf[8192];
    FILE *f = fopen(path, "re");
    if (!f) return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

static bool is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Entries of a folder that the atomic writer's rule calls temporaries (file_is_temporary), dot
 * files included: a writer that left one behind. -1 when the folder cannot be read. */
static int count_tmp(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int c = 0;
    for (struct dirent *e; (e = readdir(d));) c += file_is_temporary(e->d_name);
    closedir(d);
    return c;
}
