/* zkpipe-generator: a systemd generator (systemd.generator(7)) that reads the zkpipe ini and makes
 * zkpipe.target want one zkpipe-synthd@ per [synth] instance, one zkpipe-gpud@ per [gpu] device and
 * one zkpipe-finalizerd@ per [finalizer] instance (and zkpipe-exporter.service where it is built, with a
 * drop-in that limits it to localhost when it listens on loopback), plus drop-ins that open the configured spool (and a
 * segment outside /dev/shm) to the sandboxed stages. A bad ini generates nothing and logs the
 * error with file:line; a missing ini generates nothing (the package is installed, not configured). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <systemd/sd-journal.h>

#include "base/file.h"
#include "config/config.h"

#ifndef ZKPIPE_UNITDIR
#define ZKPIPE_UNITDIR "/usr/lib/systemd/system"
#endif

#define GEN_NAME "zkpipe-generator"
#define GEN_DROPIN "50-zkpipe-generator.conf"

/* Instance counts past this are almost surely a typo; refuse them instead of making 10^6 symlinks. */
#define GEN_MAX_INSTANCES 1024

static bool gen_log_journal_ok = true;
static bool gen_log_console;

/* Generators run before journald is up at boot (and after it on daemon-reload): try the journal, then
 * the kernel log, then stderr, so that the message lands where `journalctl -b` finds it.
 * SYSTEMD_LOG_TARGET=console (systemd's own convention) sends everything to stderr. */
static void gen_log(int prio, const char *fmt, ...) {
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);

    if (gen_log_console || isatty(STDERR_FILENO)) {
        fprintf(stderr, GEN_NAME ": %s\n", msg);
        if (gen_log_console) return;
    }
    if (gen_log_journal_ok) {
        if (sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%d", prio, "SYSLOG_IDENTIFIER=" GEN_NAME, NULL) >= 0) return;
        gen_log_journal_ok = false;
    }
    int fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd >= 0) {
        char line[2200];
        int n = snprintf(line, sizeof(line), "<%d>" GEN_NAME ": %s\n", prio, msg);
        ssize_t w = write(fd, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
        close(fd);
        if (w > 0) return;
    }
    if (!isatty(STDERR_FILENO)) fprintf(stderr, GEN_NAME ": %s\n", msg);
}

/* snprintf that reports truncation: generated paths and texts must be whole or not at all. */
__attribute__((format(printf, 3, 4))) static int gen_fmt(char *buf, size_t size, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    if (n < 0) return -EINVAL;
    if ((size_t)n >= size) return -ENAMETOOLONG;
    return 0;
}

static int gen_mkdir(const char *path) {
    if (mkdir(path, 0755) < 0 && errno != EEXIST) return -errno;
    return 0;
}

/* dir/zkpipe.target.wants/<unit> -> ZKPIPE_UNITDIR/<template>; systemd only reads the link name. */
static int gen_want(const char *dir, const char *tmpl, const char *instance) {
    char wants[PATH_MAX], link[PATH_MAX], target[PATH_MAX], unit[256];
    int r;

    r = gen_fmt(wants, sizeof(wants), "%s/zkpipe.target.wants", dir);

    if (r < 0) return r;
    r = gen_mkdir(wants);
    if (r < 0) return r;
    /* tmpl is "zkpipe-synthd@.service": insert the instance after the '@'; a plain unit (instance
     * NULL) is linked as it is */
    const char *at = strchr(tmpl, '@');
    if (!at && instance) return -EINVAL;
    if (at)
        r = gen_fmt(unit, sizeof(unit), "%.*s@%s%s", (int)(at - tmpl), tmpl, instance, at + 1);
    else
        r = gen_fmt(unit, sizeof(unit), "%s", tmpl);
    if (r < 0) return r;
    r = gen_fmt(link, sizeof(link), "%s/%s", wants, unit);
    if (r < 0) return r;
    r = gen_fmt(target, sizeof(target), "%s/%s", ZKPIPE_UNITDIR, tmpl);
    if (r < 0) return r;
    if (symlink(target, link) < 0 && errno != EEXIST) return -errno;
    return 0;
}

/* Quotes a path for a unit file setting: systemd splits on whitespace and treats backslashes and
 * quotes specially, and '%' starts a specifier. Refuse what we cannot express plainly. */
static int gen_path_ok(const char *p) {
    if (p[0] != '/') return -EINVAL;
    for (const char *s = p; *s; s++)
        if (*s <= ' ' || *s == '"' || *s == '\'' || *s == '\\' || *s == '%' || *s == 0x7f) return -EINVAL;
    return 0;
}

static int gen_dropin(const char *dir, const char *unit, const char *text) {
    char d[PATH_MAX], f[PATH_MAX];
    int r;
    r = gen_fmt(d, sizeof(d), "%s/%s.d", dir, unit);
    if (r < 0) return r;
    r = gen_mkdir(d);
    if (r < 0) return r;
    r = gen_fmt(f, sizeof(f), "%s/" GEN_DROPIN, d);
    if (r < 0) return r;
    return file_write_atomic(f, text, strlen(text));
}

static int gen_dirname(const char *path, char *out, size_t outlen) {
    int r = gen_fmt(out, outlen, "%s", path);
    if (r < 0) return r;
    char *slash = strrchr(out, '/');
    if (slash == out)
        out[1] = '\0';
    else if (slash)
        *slash = '\0';
    return 0;
}

/* What the parser accepts but a unit file cannot carry; logged like a parse error. */
static int gen_check(const cfg_t *c) {
    if (gen_path_ok(c->spool) < 0) {
        gen_log(LOG_ERR,
                "%s: [pipeline] spool path '%s' cannot be written into a unit file (needs an absolute "
                "path without spaces, quotes, backslashes or %%); generating nothing",
                c->path, c->spool);
        return -EINVAL;
    }
    if (gen_path_ok(c->segment) < 0) {
        gen_log(LOG_ERR, "%s: [pipeline] segment path '%s' cannot be written into a unit file; generating nothing",
                c->path, c->segment);
        return -EINVAL;
    }
    if (c->synth_instances > GEN_MAX_INSTANCES || c->gpu_devices > GEN_MAX_INSTANCES ||
        c->finalizer_instances > GEN_MAX_INSTANCES) {
        gen_log(LOG_ERR, "%s: more than %d instances of a stage; generating nothing", c->path, GEN_MAX_INSTANCES);
        return -ERANGE;
    }
    return 0;
}

#ifdef ZKPIPE_EXPORTER
/* zkpipe.target wants the exporter; listening on a loopback address, it may talk to localhost only. */
static int gen_exporter(const char *dir, const cfg_t *c) {
    char wants[PATH_MAX], link[PATH_MAX], text[PATH_MAX + 256];
    int r = gen_fmt(wants, sizeof(wants), "%s/zkpipe.target.wants", dir);
    if (r < 0) return r;
    r = gen_mkdir(wants);
    if (r < 0) return r;
    r = gen_fmt(link, sizeof(link), "%s/zkpipe-exporter.service", wants);
    if (r < 0) return r;
    if (symlink(ZKPIPE_UNITDIR "/zkpipe-exporter.service", link) < 0 && errno != EEXIST) return -errno;
    bool loopback = !strncmp(c->exporter_host, "127.", 4) || !strcmp(c->exporter_host, "::1");
    r = gen_fmt(text, sizeof(text),
                "# Generated by " GEN_NAME " from %s ([exporter] listen = %s%s%s:%u)\n[Service]\n%s", c->path,
                strchr(c->exporter_host, ':') ? "[" : "", c->exporter_host, strchr(c->exporter_host, ':') ? "]" : "",
                c->exporter_port, loopback ? "IPAddressDeny=any\nIPAddressAllow=localhost\n" : "");
    if (r < 0) return r;
    return gen_dropin(dir, "zkpipe-exporter.service", text);
}
#endif

#ifdef ZKPIPE_API
/* zkpipe.target wants zkpipe-api once its tokens file exists (creating it is how the API is turned
 * on); it writes the spool, and listening on a loopback address it may talk to localhost only. */
static int gen_api(const char *dir, const cfg_t *c) {
    if (access(c->api_tokens, F_OK) < 0) return 0;
    char wants[PATH_MAX], link[PATH_MAX], text[2 * PATH_MAX + 256];
    int r = gen_fmt(wants, sizeof(wants), "%s/zkpipe.target.wants", dir);
    if (r < 0) return r;
    r = gen_mkdir(wants);
    if (r < 0) return r;
    r = gen_fmt(link, sizeof(link), "%s/zkpipe-api.service", wants);
    if (r < 0) return r;
    if (symlink(ZKPIPE_UNITDIR "/zkpipe-api.service", link) < 0 && errno != EEXIST) return -errno;
    r = gen_fmt(text, sizeof(text),
                "# Generated by " GEN_NAME " from %s ([api] listen = %s%s%s:%u)\n[Service]\nReadWritePaths=%s\n%s",
                c->path, strchr(c->api_host, ':') ? "[" : "", c->api_host, strchr(c->api_host, ':') ? "]" : "",
                c->api_port, c->spool, cfg_loopback(c->api_host) ? "IPAddressDeny=any\nIPAddressAllow=localhost\n" : "");
    if (r < 0) return r;
    return gen_dropin(dir, "zkpipe-api.service", text);
}
#endif

static int gen_run(const char *dir, const cfg_t *c) {
    char inst[32], text[4 * PATH_MAX], rw[2 * PATH_MAX + 64], segdir[PATH_MAX];
    int r;

    /* The stages run with ProtectSystem=strict: open the spool, and the segment's folder when it is
     * not the default /dev/shm (a hugetlbfs mount, say). */
    r = gen_dirname(c->segment, segdir, sizeof(segdir));
    if (r < 0) return r;
    if (!strcmp(segdir, "/dev/shm"))
        r = gen_fmt(rw, sizeof(rw), "ReadWritePaths=%s\n", c->spool);
    else
        r = gen_fmt(rw, sizeof(rw), "ReadWritePaths=%s %s\n", c->spool, segdir);
    if (r < 0) return r;

    const char *stages[] = {"zkpipe-synthd@.service", "zkpipe-gpud@.service", "zkpipe-finalizerd@.service"};
    for (size_t i = 0; i < sizeof(stages) / sizeof(stages[0]); i++) {
        r = gen_fmt(text, sizeof(text), "# Generated by " GEN_NAME " from %s\n[Service]\n%s", c->path, rw);
        if (r < 0) return r;
        r = gen_dropin(dir, stages[i], text);
        if (r < 0) return r;
    }
    /* The segment set-up also creates the spool (tmpfiles.d only knows the default parent), as root
     * ('+'), before it drops to the zkpipe user. systemd sets up the mount namespace even for the
     * '+' command, so the spool may not exist yet there: '-' makes ReadWritePaths= tolerate that. */
    r = gen_fmt(text, sizeof(text),
                "# Generated by " GEN_NAME " from %s\n[Service]\nReadWritePaths=-%s\n"
                "ExecStartPre=+/usr/bin/install -d -o zkpipe -g zkpipe -m 2770 %s\n",
                c->path, rw + strlen("ReadWritePaths="), c->spool);
    if (r < 0) return r;
    r = gen_dropin(dir, "zkpipe-segment.service", text);
    if (r < 0) return r;

#ifdef ZKPIPE_EXPORTER
    r = gen_exporter(dir, c);
    if (r < 0) return r;
#endif
#ifdef ZKPIPE_API
    r = gen_api(dir, c);
    if (r < 0) return r;
#endif
    for (uint32_t i = 1; i <= c->synth_instances; i++) {
        r = gen_fmt(inst, sizeof(inst), "%u", i);
        if (r < 0) return r;
        r = gen_want(dir, "zkpipe-synthd@.service", inst);
        if (r < 0) return r;
    }
    for (uint32_t i = 0; i < c->gpu_devices; i++) {
        r = gen_fmt(inst, sizeof(inst), "%u", i);
        if (r < 0) return r;
        r = gen_want(dir, "zkpipe-gpud@.service", inst);
        if (r < 0) return r;
    }
    for (uint32_t i = 1; i <= c->finalizer_instances; i++) {
        r = gen_fmt(inst, sizeof(inst), "%u", i);
        if (r < 0) return r;
        r = gen_want(dir, "zkpipe-finalizerd@.service", inst);
        if (r < 0) return r;
    }
    /* a box of a fleet (docs/fleet.md): its feeder, with the same view of the spool */
    if (c->source_dsn[0]) {
        r = gen_fmt(text, sizeof(text), "# Generated by " GEN_NAME " from %s\n[Service]\n%s", c->path, rw);
        if (r == 0) r = gen_dropin(dir, "zkpipe-feeder.service", text);
        if (r == 0) r = gen_want(dir, "zkpipe-feeder.service", NULL);
        if (r < 0) return r;
    }
    return 0;
}

int main(int argc, char **argv) {
    /* systemd passes normal, early and late dirs; one dir is accepted for manual runs and tests. */
    if (argc != 2 && argc != 4) {
        fprintf(stderr, "Usage: " GEN_NAME " NORMAL_DIR [EARLY_DIR LATE_DIR]\n"
                        "Reads $ZKPIPE_CONFIG or " CFG_DEFAULT_PATH ".\n");
        return 2;
    }
    const char *dir = argv[1];
    const char *target = getenv("SYSTEMD_LOG_TARGET");
    gen_log_console = target && !strcmp(target, "console");
    const char *path = getenv("ZKPIPE_CONFIG");
    if (!path || !*path) path = CFG_DEFAULT_PATH;

    if (access(path, F_OK) < 0 && errno == ENOENT) {
        gen_log(LOG_INFO, "%s does not exist; zkpipe.target wants no stages", path);
        return 0;
    }
    static cfg_t cfg;
    char err[1024] = "";
    int r = cfg_load(&cfg, path, err, sizeof(err));
    if (r < 0) {
        gen_log(LOG_ERR, "%s; generating no zkpipe units", err[0] ? err : strerror(-r));
        /* Exit 0: a generator's failure is only logged by systemd, and a half-written set is worse than none. */
        return 0;
    }
    if (gen_check(&cfg) < 0) return 0;
    r = gen_run(dir, &cfg);
    if (r < 0) {
        gen_log(LOG_ERR, "Failed to generate zkpipe units in %s: %s", dir, strerror(-r));
        return 1;
    }
#ifdef ZKPIPE_EXPORTER
    const char *exporter = " and the exporter";
#else
    const char *exporter = "";
#endif
    gen_log(LOG_INFO, "%s: zkpipe.target wants %u synthd, %u gpud, %u finalizerd%s", path, cfg.synth_instances,
            cfg.gpu_devices, cfg.finalizer_instances, exporter);
    return 0;
}
