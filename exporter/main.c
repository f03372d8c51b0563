/* zkpipe-exporter: serves a running pipeline over HTTP (libmicrohttpd) on [exporter] listen:
 * /metrics (the Prometheus text of zkpipe metrics), /status and /timeline (JSON) and / (the live
 * page, exporter/page.html, built into the binary). It attaches the segment read-only and never
 * registers, writes it or takes its lock: a dead or restarted exporter changes nothing for the
 * pipeline. A segment that is re-created (another generation) is attached again at the next
 * request; no segment is served as zkpipe_segment_up 0 and 503 for the JSON.
 *
 * Hostile clients: one thread runs libmicrohttpd (external polling) and, between its rounds,
 * closes every connection that has spent more than CONN_HEADER_S seconds outside a request (a
 * client that trickles its headers, or an idle keep-alive), and, whenever fewer than CONN_SPARE of
 * the CONN_LIMIT slots are free, the oldest such connection (common/http.h, shared with
 * zkpipe-api): slow clients can never keep a scrape out. A request whose Host is not an IP literal, localhost, this machine's host name or one of
 * [exporter] hosts gets 421 (a page on another site that resolves its name to this address - DNS
 * rebinding - reads nothing). */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/daemon.h"
#include "common/http.h"
#include "common/log.h"
#include "common/stage.h"
#include "config/config.h"
#include "exporter/nvml.h"
#include "exporter/observe.h"
#include "shm/shm.h"

/* the live page, built in (exporter/page.html through embed.py) */
extern const char obs_page_html[];

enum { CONN_LIMIT = 64, CONN_SPARE = 8, CONN_HEADER_S = 5 };

static cfg_t cfg;
static shm_t S;
static char hostname[256]; /* this machine's, lowercase */
static http_guard_t guard; /* the slow-client limits (common/http.h) */

static void request_done(void *cls, struct MHD_Connection *c, void **state, enum MHD_RequestTerminationCode why) {
    (void)cls, (void)state, (void)why;
    http_guard_request_done(c);
}

static double since_s(const struct timespec *t) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t->tv_sec) + (double)(now.tv_nsec - t->tv_nsec) / 1e9;
}

static bool attached;
static unsigned long long requests;

/* Attached to the segment now at cfg.segment (again, when it was re-created under that name). */
static bool segment(void) {
    struct stat now, ours;
    if (attached && (stat(cfg.segment, &now) < 0 || fstat(S.fd, &ours) < 0 || now.st_ino != ours.st_ino ||
                     now.st_dev != ours.st_dev)) {
        shm_close(&S);
        attached = false;
    }
    if (!attached) {
        char err[1200];
        int r = shm_open_readonly(&S, cfg.segment, err, sizeof err);
        if (r < 0) {
            if (r != -ENOENT) log_warn("%s", err);
            return false;
        }
        stage_guard_mapping("the shared segment (read-only)", S.base, S.size);
        attached = true;
        log_info("Attached %s read-only (generation %016llx)", cfg.segment, (unsigned long long)S.hdr->generation);
    }
    return true;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, const char *type, char *body, bool owned) {
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), body, owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    enum MHD_Result ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **state) {
    (void)cls, (void)version, (void)upload, (void)upload_size, (void)state;
    http_guard_request_begin(c);
    requests++;
    if (!http_host_allowed(MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST), hostname,
                           cfg.exporter_hosts))
        return reply(c, MHD_HTTP_MISDIRECTED_REQUEST, "text/plain",
                     "this Host is not served: use the address, localhost or a name in [exporter] hosts\n", false);
    if (strcmp(method, "GET") && strcmp(method, "HEAD"))
        return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "only GET\n", false);
    bool up = segment();
    if (!strcmp(url, "/metrics")) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        if (!f) return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain", "out of memory\n", false);
        if (up)
            obs_metrics(&S, f, nvml_metrics);
        else
            obs_metrics_absent(f, nvml_metrics);
        fclose(f);
        return reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", text, true);
    }
    if (!strcmp(url, "/status") || !strcmp(url, "/timeline")) {
        if (!up)
            return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "application/json",
                         "{\"error\":\"no segment (is the pipeline running?)\"}", false);
        char *j = !strcmp(url, "/status") ? obs_status_json(&S, &cfg) : obs_timeline_json(&S, 60ull * 1000000000ull);
        return reply(c, MHD_HTTP_OK, "application/json", j, true);
    }
    if (!strcmp(url, "/") || !strcmp(url, "/index.html"))
        return reply(c, MHD_HTTP_OK, "text/html; charset=utf-8", (char *)obs_page_html, false);
    return reply(c, MHD_HTTP_NOT_FOUND, "text/plain", "not found: try /, /metrics, /status, /timeline\n", false);
}

int main(int argc, char **argv) {
    daemon_args_t args;
    int ex;
    if (!daemon_parse_args(argc, argv, "zkpipe-exporter",
                           "Serves the pipeline's metrics (Prometheus text), status and timeline (JSON) and a live\n"
                           "page over HTTP on [exporter] listen (default 127.0.0.1:9821). Reads the segment only.",
                           false, &args, &ex))
        return ex;
    log_init("zkpipe-exporter");
    daemon_signals_init();
    char err[1200];
    if (cfg_load(&cfg, args.config, err, sizeof err) < 0) {
        log_err("%s", err);
        return 1;
    }
    struct sockaddr_storage sa = {0};
    socklen_t salen;
    unsigned flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG; /* polled by this thread: see the top of the file */
    http_hostname(hostname, sizeof hostname);
    http_guard_init(&guard, CONN_LIMIT, CONN_SPARE, CONN_HEADER_S, 0);
    if (strchr(cfg.exporter_host, ':')) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&sa;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons(cfg.exporter_port);
        inet_pton(AF_INET6, cfg.exporter_host, &a->sin6_addr);
        salen = sizeof *a;
        flags |= MHD_USE_IPv6;
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&sa;
        a->sin_family = AF_INET;
        a->sin_port = htons(cfg.exporter_port);
        inet_pton(AF_INET, cfg.exporter_host, &a->sin_addr);
        salen = sizeof *a;
    }
    (void)salen;
    nvml_init();
    struct MHD_Daemon *d =
        MHD_start_daemon(flags, cfg.exporter_port, NULL, NULL, handle, NULL, MHD_OPTION_SOCK_ADDR,
                         (struct sockaddr *)&sa, MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_CONNECTION_LIMIT,
                         (unsigned)CONN_LIMIT, MHD_OPTION_NOTIFY_CONNECTION, http_guard_notify, &guard,
                         MHD_OPTION_NOTIFY_COMPLETED, request_done, NULL, MHD_OPTION_END);
    if (!d) {
        log_err("%s: cannot listen on %s:%u (%s): [exporter] listen", cfg.path, cfg.exporter_host, cfg.exporter_port,
                strerror(errno));
        return 1;
    }
    daemon_notify_ready("serving");
    log_info("Serving %s on http://%s%s%s:%u/ (%s)", cfg.segment, strchr(cfg.exporter_host, ':') ? "[" : "",
             cfg.exporter_host, strchr(cfg.exporter_host, ':') ? "]" : "", cfg.exporter_port,
             nvml_available() ? "NVML found" : "no NVML: no GPU metrics");
    int wait_ms = daemon_wait_ms(1000);
    struct timespec beat;
    clock_gettime(CLOCK_MONOTONIC, &beat);
    while (!daemon_stop) {
        MHD_run_wait(d, 200);
        http_guard_reap(&guard);
        if (since_s(&beat) * 1000 >= wait_ms) {
            clock_gettime(CLOCK_MONOTONIC, &beat);
            daemon_notify_watchdog();
            daemon_notify_status("%llu requests, %u connections", (unsigned long long)requests, guard.open);
        }
    }
    daemon_notify_stopping();
    MHD_stop_daemon(d);
    if (attached) shm_close(&S);
    return 0;
}
