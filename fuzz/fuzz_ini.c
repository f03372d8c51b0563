/* libFuzzer target: the zkpipe ini (config/config.c) read both ways, from a file (cfg_load) and from a
 * string (cfg_load_string); for an input without NUL bytes both must agree. */
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#include "config/config.h"
#include "fuzz.h"

static char path[256];

static void cleanup(void) { unlink(path); }

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    const char *t = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/zkpipe-fuzz-ini-XXXXXX", t && *t ? t : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) abort();
    close(fd);
    atexit(cleanup);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static cfg_t c; /* 70 KB: not on the stack */
    char err[1024] = "";
    int fd = open(path, O_WRONLY | O_TRUNC);
    if (fd < 0 || write(fd, data, size) != (ssize_t)size) abort();
    close(fd);
    int rc_file = cfg_load(&c, path, err, sizeof err);
    fuzz_check_error(rc_file, err, path);
    char *text = malloc(size + 1);
    if (!text) abort();
    memcpy(text, data, size);
    text[size] = 0;
    err[0] = 0;
    int rc_str = cfg_load_string(&c, path, text, err, sizeof err); /* same name: same folder for relative paths */
    fuzz_check_error(rc_str, err, path);
    free(text);
    if (!memchr(data, 0, size) && (rc_file == 0) != (rc_str == 0)) {
        fprintf(stderr, "cfg_load %d, cfg_load_string %d: %s\n", rc_file, rc_str, err);
        abort();
    }
    return 0;
}
