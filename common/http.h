/* What zkpipe's HTTP daemons (zkpipe-exporter, zkpipe-api) do the same way on libmicrohttpd with
 * external polling: every open connection is tracked, oldest first, and between MHD's rounds
 * http_guard_reap shuts down
 * - a connection that has spent more than idle_s outside a request (a client that trickles its
 *   headers, an idle keep-alive),
 * - a request that has run more than request_s (a client that trickles its body; 0 = no limit),
 *   unless the daemon has suspended it (a long-poll: bounded by the daemon itself),
 * - whenever fewer than spare of the limit slots are free, the oldest connection outside a request,
 * so slow clients never keep another client out. And the Host check against DNS rebinding. */
#pragma once
#include <microhttpd.h>
#include <stdbool.h>
#include <time.h>

typedef struct http_conn {
    struct http_conn *prev, *next;
    int fd;
    bool in_request;       /* headers complete, a response being made or sent */
    bool suspended;        /* held by the daemon (MHD_suspend_connection) */
    bool closing;          /* shut down by us, MHD has not closed it yet */
    struct timespec since; /* when it began to wait for a request, or its request began */
} http_conn_t;

typedef struct http_guard {
    http_conn_t *head, *tail;
    unsigned open;
    unsigned limit, spare, idle_s, request_s;
} http_guard_t;

void http_guard_init(http_guard_t *g, unsigned limit, unsigned spare, unsigned idle_s, unsigned request_s);
/* MHD_OPTION_NOTIFY_CONNECTION's callback (cls: the guard). */
void http_guard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                       enum MHD_ConnectionNotificationCode code);
/* MHD_OPTION_NOTIFY_COMPLETED's part: the connection waits for its next request. */
void http_guard_request_done(struct MHD_Connection *c);
/* The connection's tracking record (NULL when untracked). */
http_conn_t *http_guard_conn(struct MHD_Connection *c);
/* The first call of a request: it is in a request from now. */
void http_guard_request_begin(struct MHD_Connection *c);
/* Between MHD's rounds (see above); MHD closes what it shuts down in its next round. */
void http_guard_reap(http_guard_t *g);
/* A Host header's name part is an IP literal, localhost, hostname (lowercase, "" for none) or one
 * of hosts (lowercase names joined by ','); an absent Host (HTTP/1.0) too. */
bool http_host_allowed(const char *host, const char *hostname, const char *hosts);
/* This machine's host name, lowercase ("" when unknown). */
void http_hostname(char *buf, size_t len);
