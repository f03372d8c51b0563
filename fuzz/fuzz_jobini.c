/* libFuzzer target: a job directory's job.ini (spool_read_job, which reads DIR/job.ini): each input is
 * written to job.ini in a temporary job directory that holds witness-0..3.wtns. */
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#include "spool/spool.h"
#include "fuzz.h"

static char dir[256], ini[300];

static void cleanup(void) {
    char p[300];
    for (int k = 0; k < 4; k++) {
        snprintf(p, sizeof p, "%s/witness-%d.wtns", dir, k);
        unlink(p);
    }
    unlink(ini);
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/zkpipe-fuzz-job-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(dir)) abort();
    snprintf(ini, sizeof ini, "%s/job.ini", dir);
    for (int k = 0; k < 4; k++) {
        char p[300];
        snprintf(p, sizeof p, "%s/witness-%d.wtns", dir, k);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) abort();
        close(fd);
    }
    atexit(cleanup);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int fd = open(ini, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, data, size) != (ssize_t)size) abort();
    close(fd);
    spool_job_t j;
    char err[512] = "";
    int rc = spool_read_job(dir, &j, err, sizeof err);
    fuzz_check_error(rc, err, "job.ini");
    if (rc == 0 && (!spool_valid_id(j.id) || !j.circuit[0] || j.n_parts == 0 || j.n_parts > 4 || j.prio < 0 ||
                    j.prio > 3))
        abort(); /* accepted: every field in range, every witness present */
    return 0;
}
