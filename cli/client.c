/* Shared parts of the pipeline's client commands (cli/client.h). */
#include "client.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "spool/spool.h"
#include "base/cleanup.h"

int cli_usage_error(const char *usage) {
    fprintf(stderr, "Usage: %s\n", usage);
    return 2;
}

int cli_options(int argc, char **argv, const char *usage, const char *help, const cli_option_t *opts,
                const char **config) {
    struct option lo[16];
    char so[48] = "c:h";
    size_t n = 0, sl = strlen(so);
    lo[n++] = (struct option){"config", required_argument, NULL, 'c'};
    lo[n++] = (struct option){"help", no_argument, NULL, 'h'};
    for (const cli_option_t *o = opts; o && o->name && n < 15; o++) {
        lo[n++] = (struct option){o->name, o->arg ? required_argument : no_argument, NULL, o->key};
        if (sl + 3 < sizeof so) {
            so[sl++] = (char)o->key;
            if (o->arg) so[sl++] = ':';
            so[sl] = 0;
        }
    }
    lo[n] = (struct option){0};
    *config = CFG_DEFAULT_PATH;
    optind = 1;
    int k;
    while ((k = getopt_long(argc, argv, so, lo, NULL)) != -1) {
        if (k == 'c') {
            *config = optarg;
            continue;
        }
        if (k == 'h') {
            printf("Usage: %s\n", usage);
            if (help) printf("\n%s\n", help);
            return 0;
        }
        const cli_option_t *o = opts;
        for (; o && o->name && o->key != k; o++) {
        }
        if (!o || !o->name) return cli_usage_error(usage);
        *o->value = o->arg ? optarg : "1";
    }
    return -1;
}

int cli_load_config(const char *path, cfg_t *c) {
    char err[1200];
    if (cfg_load(c, path, err, sizeof err) < 0) {
        fprintf(stderr, "zkpipe: %s\n", err);
        return -1;
    }
    return 0;
}

int cli_attach(const cfg_t *c, shm_t *s, bool quiet) {
    char err[1200];
    int r = shm_open_segment(s, c->segment, NULL, false, err, sizeof err);
    if (r == 0) return 1;
    if (r == -ENOENT) return 0;
    if (!quiet) fprintf(stderr, "zkpipe: %s\n", err);
    return -1;
}

int cli_read_result(const char *dir, char *status, size_t slen, char *error, size_t elen, uint32_t *n_parts) {
    char why[600];
    _cleanup_close_ int dfd = spool_open_dir(dir);
    spool_result_t r;
    if (dfd < 0 || spool_read_result(dfd, &r, why, sizeof why) < 0) return -EINVAL;
    snprintf(status, slen, "%s", r.status);
    snprintf(error, elen, "%s", r.error);
    *n_parts = r.n_parts;
    spool_result_free(&r);
    return 0;
}
