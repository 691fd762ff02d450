/* http_server: /metrics and /healthz on libmicrohttpd (see http_server.h).
 *
 * The socket is created and bound here rather than by libmicrohttpd, so that a failure says
 * why (port in use, address not on this machine, privileged port) with the address given.
 *
 * Slow clients cannot hold every connection (docs/security.md): libmicrohttpd polls with
 * poll() (no FD_SETSIZE bound), the connection limit follows the descriptors the process may
 * open, and connections are tracked here by when their current phase began (accepted, request
 * received, response sent). Its idle timeout restarts with every byte, so a client trickling a
 * byte a second would never end; instead, when the table is nearly full, or a phase has lasted
 * HTTP_PHASE_DEADLINE_S, the connection whose phase began longest ago is shut down. A scraper's
 * request arrives within milliseconds of its connection: it is not the oldest unless some
 * thousands of connections are opened in those milliseconds. Every
 * callback runs on libmicrohttpd's one polling thread: the tracking needs no lock, and a
 * tracked descriptor is still open (the CLOSED notification comes before close()). */
#include "live/http_server.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <microhttpd.h>

#include "util/clock.h"
#include "util/units.h"
#include "util/xalloc.h"
#include "live/prometheus.h"

#if MHD_VERSION < 0x00097002
typedef int mhd_result; /* before 0.9.71 handlers returned int */
#else
typedef enum MHD_Result mhd_result;
#endif

#define HTTP_TIMEOUT_S 10          /* libmicrohttpd closes a connection silent for this long */
#define HTTP_PHASE_DEADLINE_S 30   /* most time to send a request or receive a response, however
                                    * slowly the bytes come */
#define HTTP_MAX_CONNECTIONS 4096  /* at most, whatever the descriptor limit */
#define HTTP_MIN_CONNECTIONS 64    /* at least, whatever the descriptor limit */
#define HTTP_FD_RESERVE 128        /* descriptors left to the rest of mlbench (sampler, markers,
                                    * NVML, log) */
#define HTTP_HEADROOM 32           /* shedding starts this many connections below the limit:
                                    * libmicrohttpd accepts up to 11 in one round before the
                                    * shut ones are closed in the next */
#define HTTP_BACKLOG 1024          /* connections the kernel queues (capped by somaxconn) */
#define HTTP_CONNECTION_MEMORY (16 * 1024) /* per connection: request headers up to ~16 KiB
                                            * (431 beyond), then the response headers */

/* One connection, in the server's list oldest phase first. */
struct http_conn {
    struct http_conn *prev, *next;
    int64_t phase_ns; /* when its phase began: accepted, request received, response sent */
    MHD_socket fd;
    bool shut;        /* shut down here, out of the list; libmicrohttpd closes it next */
};

struct http_server {
    struct MHD_Daemon *daemon;
    struct live_metrics *live;
    char address[INET6_ADDRSTRLEN + 16];
    /* Touched on the polling thread only. */
    struct http_conn *head, *tail;
    unsigned open;  /* connections in the list */
    unsigned keep;  /* more than this many: the oldest is shut */
};

static const char usage_hint[] = "expected HOST:PORT, [IPV6]:PORT or :PORT, e.g. 127.0.0.1:9464";

int http_parse_listen(const char *listen, struct sockaddr_storage *addr, socklen_t *addrlen,
                      char *err, size_t errlen)
{
    char host[256];
    const char *port;
    bool v6 = false;
    if (!listen || !*listen) {
        snprintf(err, errlen, "empty listen address: %s", usage_hint);
        return -1;
    }
    if (listen[0] == '[') {
        const char *close = strchr(listen, ']');
        if (!close || close[1] != ':' || close == listen + 1) {
            snprintf(err, errlen, "bad listen address '%s': %s", listen, usage_hint);
            return -1;
        }
        size_t n = (size_t)(close - listen - 1);
        if (n >= sizeof host) {
            snprintf(err, errlen, "bad listen address '%s': host too long", listen);
            return -1;
        }
        memcpy(host, listen + 1, n);
        host[n] = '\0';
        port = close + 2;
        v6 = true;
    } else {
        const char *colon = strrchr(listen, ':');
        if (colon && strchr(listen, ':') != colon) {
            snprintf(err, errlen, "bad listen address '%s': put an IPv6 address in brackets, "
                     "e.g. [::1]:9464", listen);
            return -1;
        }
        size_t n = colon ? (size_t)(colon - listen) : 0;
        if (n >= sizeof host) {
            snprintf(err, errlen, "bad listen address '%s': host too long", listen);
            return -1;
        }
        memcpy(host, listen, n);
        host[n] = '\0';
        port = colon ? colon + 1 : listen;
    }
    long portnum;
    if (units_parse_long(port, 0, 65535, &portnum) < 0) {
        snprintf(err, errlen, "bad listen address '%s': port '%s' is not a number from 0 to "
                 "65535 (%s)", listen, port, usage_hint);
        return -1;
    }
    if (!host[0])
        snprintf(host, sizeof host, "127.0.0.1");

    struct addrinfo hints = {.ai_family = v6 ? AF_INET6 : AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICSERV | (v6 ? AI_NUMERICHOST : 0)};
    struct addrinfo *res = NULL;
    char portstr[8];
    snprintf(portstr, sizeof portstr, "%ld", portnum);
    int rc = getaddrinfo(host, portstr, &hints, &res);
    if (rc != 0 || !res) {
        snprintf(err, errlen, "bad listen address '%s': %s '%s' (%s)", listen,
                 v6 ? "not an IPv6 address:" : "unknown host", host,
                 rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
        if (res)
            freeaddrinfo(res);
        return -1;
    }
    memset(addr, 0, sizeof *addr);
    memcpy(addr, res->ai_addr, res->ai_addrlen);
    *addrlen = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

char *http_format_address(const struct sockaddr *addr, socklen_t addrlen, char *buf, size_t len)
{
    char host[INET6_ADDRSTRLEN] = "?";
    unsigned port = 0;
    (void)addrlen;
    if (addr->sa_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)(const void *)addr;
        inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
        port = ntohs(a->sin6_port);
        snprintf(buf, len, "[%s]:%u", host, port);
    } else {
        const struct sockaddr_in *a = (const struct sockaddr_in *)(const void *)addr;
        inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
        port = ntohs(a->sin_port);
        snprintf(buf, len, "%s:%u", host, port);
    }
    return buf;
}

static void conn_unlink(struct http_server *s, struct http_conn *hc)
{
    if (hc->prev)
        hc->prev->next = hc->next;
    else
        s->head = hc->next;
    if (hc->next)
        hc->next->prev = hc->prev;
    else
        s->tail = hc->prev;
    hc->prev = hc->next = NULL;
    s->open--;
}

static void conn_append(struct http_server *s, struct http_conn *hc, int64_t now_ns)
{
    hc->phase_ns = now_ns;
    hc->prev = s->tail;
    hc->next = NULL;
    if (s->tail)
        s->tail->next = hc;
    else
        s->head = hc;
    s->tail = hc;
    s->open++;
}

/* Shuts the oldest connections while there are too many or their phase is past the deadline.
 * shutdown() rather than close(): libmicrohttpd owns the descriptor; it sees the end of the
 * stream at its next poll and closes the connection itself. */
static void conn_shed(struct http_server *s, int64_t now_ns)
{
    const int64_t deadline_ns = now_ns - (int64_t)HTTP_PHASE_DEADLINE_S * 1000000000;
    while (s->head && (s->open > s->keep || s->head->phase_ns < deadline_ns)) {
        struct http_conn *hc = s->head;
        conn_unlink(s, hc);
        hc->shut = true;
        if (hc->fd != MHD_INVALID_SOCKET)
            shutdown(hc->fd, SHUT_RDWR);
    }
}

/* A new phase of c: to the end of the list. */
static void conn_phase(struct http_server *s, struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    struct http_conn *hc = ci ? ci->socket_context : NULL;
    int64_t now = mono_ns();
    if (hc && !hc->shut) {
        conn_unlink(s, hc);
        conn_append(s, hc, now);
    }
    conn_shed(s, now);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    struct http_server *s = cls;
    struct http_conn *hc = *socket_context;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        hc = xcalloc(1, sizeof *hc);
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        hc->fd = ci ? ci->connect_fd : MHD_INVALID_SOCKET;
        *socket_context = hc;
        int64_t now = mono_ns();
        conn_append(s, hc, now);
        conn_shed(s, now); /* the new one is the youngest: another goes */
    } else if (hc) {
        if (!hc->shut)
            conn_unlink(s, hc);
        free(hc);
        *socket_context = NULL;
    }
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)con_cls;
    (void)toe;
    conn_phase(cls, c); /* the response is sent: waiting for the next request */
}

/* Connections to allow: the descriptors this process may open (its soft RLIMIT_NOFILE) less
 * HTTP_FD_RESERVE, within [HTTP_MIN_CONNECTIONS, HTTP_MAX_CONNECTIONS]. The soft limit is not
 * raised: the workload would inherit it, and programs that use select() need it at 1024. */
static unsigned connection_limit(void)
{
    struct rlimit rl;
    rlim_t fds = HTTP_MAX_CONNECTIONS + HTTP_FD_RESERVE;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < fds)
        fds = rl.rlim_cur;
    if (fds < HTTP_MIN_CONNECTIONS + HTTP_FD_RESERVE)
        return HTTP_MIN_CONNECTIONS;
    return (unsigned)(fds - HTTP_FD_RESERVE);
}

static mhd_result reply(struct MHD_Connection *c, unsigned status, const char *type, char *body,
                        size_t len, enum MHD_ResponseMemoryMode mode)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
    if (!r) {
        if (mode == MHD_RESPMEM_MUST_FREE)
            free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    mhd_result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

#define TEXT "text/plain; charset=utf-8"

static mhd_result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                         const char *version, const char *upload_data, size_t *upload_size,
                         void **con_cls)
{
    struct http_server *s = cls;
    static int request_seen;
    (void)version;
    (void)upload_data;
    /* Answer on the second call, once the request is complete (a body, if any, discarded):
     * a response queued on the first call makes libmicrohttpd close the connection, and
     * Prometheus would then pay a new TCP connection per scrape. */
    if (!*con_cls) {
        *con_cls = &request_seen;
        conn_phase(s, c); /* the request's headers are in: now its response */
        return MHD_YES;
    }
    if (*upload_size) {
        *upload_size = 0;
        return MHD_YES;
    }
    static char not_found[] = "not found: mlbench serves /metrics and /healthz\n";

    if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD)) {
        static char not_allowed[] = "method not allowed: use GET\n";
        return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, TEXT, not_allowed, sizeof not_allowed - 1,
                     MHD_RESPMEM_PERSISTENT);
    }
    if (!strcmp(url, "/metrics")) {
        size_t len;
        char *body = live_render(s->live, &len);
        return reply(c, MHD_HTTP_OK, PROM_CONTENT_TYPE, body, len, MHD_RESPMEM_MUST_FREE);
    }
    if (!strcmp(url, "/healthz")) {
        static char ok[] = "ok\n";
        return reply(c, MHD_HTTP_OK, TEXT, ok, sizeof ok - 1, MHD_RESPMEM_PERSISTENT);
    }
    return reply(c, MHD_HTTP_NOT_FOUND, TEXT, not_found, sizeof not_found - 1,
                 MHD_RESPMEM_PERSISTENT);
}

static const char *bind_hint(int e)
{
    switch (e) {
    case EADDRINUSE: return "the port is in use (another mlbench monitor?): choose another port";
    case EADDRNOTAVAIL: return "no such address on this machine";
    case EACCES: return "permission denied (ports below 1024 need privileges)";
    default: return strerror(e);
    }
}

struct http_server *http_server_start(const char *listen_addr, struct live_metrics *live,
                                      char *err, size_t errlen)
{
    if (!listen_addr || !*listen_addr)
        listen_addr = HTTP_DEFAULT_LISTEN;
    struct sockaddr_storage ss;
    socklen_t sslen;
    if (http_parse_listen(listen_addr, &ss, &sslen, err, errlen) < 0)
        return NULL;

    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "cannot listen on '%s': %s", listen_addr, strerror(errno));
        return NULL;
    }
    int one = 1;
    /* A restarted service may bind while its old connections linger in TIME_WAIT; a port that
     * another process listens on is still refused. */
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&ss, sslen) < 0 || listen(fd, HTTP_BACKLOG) < 0) {
        int e = errno;
        snprintf(err, errlen, "cannot listen on '%s': %s", listen_addr, bind_hint(e));
        close(fd);
        return NULL;
    }

    struct http_server *s = xcalloc(1, sizeof *s);
    s->live = live;
    struct sockaddr_storage bound;
    socklen_t blen = sizeof bound;
    if (getsockname(fd, (struct sockaddr *)&bound, &blen) == 0)
        http_format_address((struct sockaddr *)&bound, blen, s->address, sizeof s->address);
    else
        snprintf(s->address, sizeof s->address, "%s", listen_addr);

    unsigned limit = connection_limit();
    s->keep = limit > 2 * HTTP_HEADROOM ? limit - HTTP_HEADROOM : limit / 2;
    /* One polling thread: scrapes take well under a millisecond, writes never block it, and
     * the connection tracking above relies on every callback running on it. poll (no
     * FD_SETSIZE bound either), not the epoll that MHD_USE_AUTO picks: with epoll,
     * libmicrohttpd 0.9.75 misses the end of a client that closes in the middle of a request
     * and holds the connection (CLOSE-WAIT) until the idle timeout (fuzz_http). */
    unsigned flags = MHD_USE_POLL_INTERNAL_THREAD;
    if (ss.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    s->daemon = MHD_start_daemon(flags, 0, NULL, NULL, handle, s,
                                 MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
                                 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_TIMEOUT_S,
                                 MHD_OPTION_CONNECTION_LIMIT, limit,
                                 MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                                 (size_t)HTTP_CONNECTION_MEMORY,
                                 MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
                                 MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
                                 MHD_OPTION_END);
    if (!s->daemon) {
        snprintf(err, errlen, "cannot serve HTTP on %s: libmicrohttpd did not start", s->address);
        if (fcntl(fd, F_GETFD) != -1) /* unless libmicrohttpd closed it already */
            close(fd);
        free(s);
        return NULL;
    }
    return s;
}

const char *http_server_address(const struct http_server *s)
{
    return s->address;
}

void http_server_stop(struct http_server *s)
{
    if (!s)
        return;
    MHD_stop_daemon(s->daemon); /* closes the listening socket too */
    free(s);
}
