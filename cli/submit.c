/* zkpipe submit: builds a job directory in SPOOL/tmp (holding its lock, so that an abandoned one can
 * be told from one being built), copies every input into it (the job owns its inputs), writes
 * job.ini and renames it into incoming/, the commit point. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"
#include "commands.h"
#include "common/spool.h"
#include "shm/cleanup.h"
#include "shm/slab.h"
#include "zk/zkey.h"

#define SUBMIT_USAGE                                                                                                   \
    "zkpipe submit [--config FILE] --circuit NAME [--priority CRITICAL|HIGH|NORMAL|LOW] W1.wtns [W2.wtns ...]"

static const char *SUBMIT_HELP =
    "Queues one job of one partition per witness and prints the job id on the last line. Each witness\n"
    "is copied into the spool (a reflink where the file system has them): changing or removing it\n"
    "afterwards does not change the job. A witness must be a regular file no larger than a witness of\n"
    "the circuit can be. New jobs are refused while the spool has less free space than [pipeline]\n"
    "min_free.";

static void remove_tree(const char *dir) {
    char **names;
    size_t n;
    if (spool_list(dir, &names, &n) == 0) {
        for (size_t i = 0; i < n; i++) {
            char p[1400];
            snprintf(p, sizeof p, "%s/%s", dir, names[i]);
            unlink(p);
        }
        spool_free_list(names, n);
    }
    (void)rmdir(dir);
}

static double mib(int64_t b) { return b / 1048576.0; }

int zkpipe_cmd_submit(int argc, char **argv) {
    const char *config, *circuit = NULL, *prio_s = NULL;
    const cli_option_t opts[] = {{"circuit", 'C', "NAME", &circuit}, {"priority", 'p', "P", &prio_s}, {0}};
    int parsed = cli_options(argc, argv, SUBMIT_USAGE, SUBMIT_HELP, opts, &config);
    if (parsed >= 0) return parsed;
    if (!circuit || optind >= argc) return cli_usage_error(SUBMIT_USAGE);
    uint32_t n = (uint32_t)(argc - optind);
    if (n > SHM_MAX_PARTS) {
        fprintf(stderr, "zkpipe: %u witnesses; a job has at most %u partitions\n", n, SHM_MAX_PARTS);
        return 2;
    }
    cfg_t c;
    if (cli_load_config(config, &c) < 0) return 1;
    const cfg_circuit_t *ci = cfg_circuit(&c, circuit);
    if (!ci) {
        fprintf(stderr, "zkpipe: circuit %s is not configured in %s\n", circuit, config);
        return 2;
    }
    int prio = ci->priority;
    if (prio_s && (prio = cfg_parse_priority(prio_s)) < 0) {
        fprintf(stderr, "zkpipe: --priority %s: expected CRITICAL, HIGH, NORMAL or LOW\n", prio_s);
        return 2;
    }
    /* the most a witness of this circuit can be: what synthd has room for in a slab */
    zk_zkey_t z;
    zk_err_t e = {{0}};
    if (zk_zkey_open(&z, ci->zkey, &e) < 0) {
        fprintf(stderr, "zkpipe: circuit %s: %s\n", circuit, e.msg);
        return 1;
    }
    uint64_t cap = shm_slab_layout(z.n_vars, z.domain_size).wtns_cap;
    zk_zkey_close(&z);
    char err[1200];
    if (spool_init(c.spool, err, sizeof err) < 0) {
        fprintf(stderr, "zkpipe: %s\n", err);
        return 1;
    }
    uint64_t total = 0;
    for (uint32_t k = 0; k < n; k++) {
        struct stat st;
        if (stat(argv[optind + (int)k], &st) == 0 && S_ISREG(st.st_mode)) total += (uint64_t)st.st_size;
    }
    int64_t avail = spool_free_bytes(c.spool);
    if (avail >= 0 && (uint64_t)avail < c.min_free + total) {
        fprintf(stderr,
                "zkpipe: the spool %s has %.1f MiB free, less than this job's inputs (%.1f MiB) plus [pipeline] "
                "min_free (%.1f MiB): not accepting new jobs until space is freed\n",
                c.spool, mib(avail), mib((int64_t)total), mib((int64_t)c.min_free));
        return 1;
    }
    spool_job_t j = {.prio = prio, .n_parts = n, .submit_ns = shm_realtime_ns()};
    spool_new_id(j.id);
    snprintf(j.circuit, sizeof j.circuit, "%s", circuit);
    char tmp[1400], dst[1400];
    snprintf(tmp, sizeof tmp, "%s/tmp/%s", c.spool, j.id);
    snprintf(dst, sizeof dst, "%s/incoming/%s", c.spool, j.id);
    if (mkdir(tmp, 0775) < 0) {
        fprintf(stderr, "zkpipe: cannot create %s: %m\n", tmp);
        return 1;
    }
    _cleanup_close_ int dfd = spool_open_dir(tmp);
    if (dfd < 0 || spool_lock_tmp(dfd) < 0) {
        fprintf(stderr, "zkpipe: cannot open %s: %s\n", tmp, strerror(dfd < 0 ? -dfd : errno));
        (void)rmdir(tmp);
        return 1;
    }
    /* The stages (user zkpipe) must rename the job directory into active/ (moving a directory needs
     * write access to it) and write proofs into it, whoever submits: group-writable whatever the
     * submitter's umask, with the spool's group (setgid, docs/deploy.md). */
    (void)fchmod(dfd, 02770);
    for (uint32_t k = 0; k < n; k++) {
        char name[64];
        snprintf(name, sizeof name, "witness-%u.wtns", k);
        if (spool_copy_in(argv[optind + (int)k], dfd, name, cap, err, sizeof err) < 0) {
            fprintf(stderr, "zkpipe: %s\n", err);
            remove_tree(tmp);
            return 1;
        }
    }
    int r = spool_write_job(tmp, &j);
    if (r == 0 && fsync(dfd) < 0) r = -errno;
    if (r == 0 && rename(tmp, dst) < 0) r = -errno;
    if (r < 0) {
        fprintf(stderr, "zkpipe: cannot submit into %s: %s\n", dst,
                r == -ENOSPC ? "no space left on the spool's file system" : strerror(-r));
        remove_tree(tmp);
        return 1;
    }
    char inc[1400];
    snprintf(inc, sizeof inc, "%s/incoming", c.spool);
    (void)spool_fsync_dir(inc);
    shm_t s;
    if (cli_attach(&c, &s, true) == 1) { /* wake the synthds at once */
        shm_bump(&s.hdr->job_seq);
        shm_close(&s);
    }
    printf("submitted %u partition%s of circuit %s, priority %s\n%s\n", n, n == 1 ? "" : "s", circuit,
           cfg_priority_name(prio), j.id);
    return 0;
}
