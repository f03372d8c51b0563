/* Shared parts of the HTTP daemons (common/http.h). */
#include "http.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static double since_s(const struct timespec *t) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t->tv_sec) + (double)(now.tv_nsec - t->tv_nsec) / 1e9;
}

void http_guard_init(http_guard_t *g, unsigned limit, unsigned spare, unsigned idle_s, unsigned request_s) {
    *g = (http_guard_t){.limit = limit, .spare = spare, .idle_s = idle_s, .request_s = request_s};
}

void http_guard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                       enum MHD_ConnectionNotificationCode code) {
    http_guard_t *g = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        http_conn_t *k = calloc(1, sizeof *k);
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (!k || !ci) { /* untracked: MHD's own idle timeout still applies */
            free(k);
            *socket_context = NULL;
            return;
        }
        k->fd = ci->connect_fd;
        clock_gettime(CLOCK_MONOTONIC, &k->since);
        k->prev = g->tail;
        if (g->tail)
            g->tail->next = k;
        else
            g->head = k;
        g->tail = k;
        g->open++;
        *socket_context = k;
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
        http_conn_t *k = *socket_context;
        if (k->prev)
            k->prev->next = k->next;
        else
            g->head = k->next;
        if (k->next)
            k->next->prev = k->prev;
        else
            g->tail = k->prev;
        g->open--;
        free(k);
        *socket_context = NULL;
    }
}

http_conn_t *http_guard_conn(struct MHD_Connection *c) {
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

void http_guard_request_begin(struct MHD_Connection *c) {
    http_conn_t *k = http_guard_conn(c);
    if (!k || k->in_request) return;
    k->in_request = true;
    clock_gettime(CLOCK_MONOTONIC, &k->since);
}

void http_guard_request_done(struct MHD_Connection *c) {
    http_conn_t *k = http_guard_conn(c);
    if (!k) return;
    k->in_request = false;
    k->suspended = false;
    clock_gettime(CLOCK_MONOTONIC, &k->since);
}

void http_guard_reap(http_guard_t *g) {
    unsigned live = 0;
    for (http_conn_t *k = g->head; k; k = k->next)
        if (!k->closing) live++;
    for (http_conn_t *k = g->head; k; k = k->next) {
        if (k->closing || k->suspended) continue;
        bool late = k->in_request ? g->request_s && since_s(&k->since) > g->request_s
                                  : since_s(&k->since) > g->idle_s || live + g->spare > g->limit;
        if (late) {
            shutdown(k->fd, SHUT_RDWR);
            k->closing = true;
            live--;
        }
    }
}

bool http_host_allowed(const char *host, const char *hostname, const char *hosts) {
    if (!host || !*host) return true; /* HTTP/1.0 without Host: not a browser */
    char name[256];
    size_t n;
    if (host[0] == '[') { /* [IPv6]:PORT */
        const char *end = strchr(host, ']');
        if (!end || (size_t)(end - host - 1) >= sizeof name) return false;
        n = (size_t)(end - host - 1);
        memcpy(name, host + 1, n);
        name[n] = 0;
        unsigned char a[16];
        return inet_pton(AF_INET6, name, a) == 1;
    }
    const char *colon = strchr(host, ':');
    n = colon ? (size_t)(colon - host) : strlen(host);
    if (n == 0 || n >= sizeof name) return false;
    for (size_t i = 0; i < n; i++) name[i] = (char)tolower((unsigned char)host[i]);
    name[n] = 0;
    if (n > 1 && name[n - 1] == '.') name[--n] = 0; /* an absolute name */
    unsigned char a[4];
    if (inet_pton(AF_INET, name, a) == 1 || !strcmp(name, "localhost") || (*hostname && !strcmp(name, hostname)))
        return true;
    for (const char *h = hosts; *h;) {
        const char *e = strchr(h, ',');
        size_t l = e ? (size_t)(e - h) : strlen(h);
        if (l == n && !memcmp(h, name, n)) return true;
        if (!e) break;
        h = e + 1;
    }
    return false;
}

void http_hostname(char *buf, size_t len) {
    if (gethostname(buf, len - 1) == 0) {
        buf[len - 1] = 0;
        for (char *h = buf; *h; h++) *h = (char)tolower((unsigned char)*h);
    } else {
        buf[0] = 0;
    }
}
