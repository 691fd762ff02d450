/* http_server: /metrics and /healthz on libmicrohttpd (see http_server.h).
 *
 * The socket is created and bound here rather than by libmicrohttpd, so that a failure says
 * why (port in use, address not on this machine, privileged port) with the address given. */
#include "live/http_server.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <microhttpd.h>

#include "util/units.h"
#include "util/xalloc.h"
#include "live/prometheus.h"

#if MHD_VERSION < 0x00097002
typedef int mhd_result; /* before 0.9.71 handlers returned int */
#else
typedef enum MHD_Result mhd_result;
#endif

#define HTTP_THREADS 2           /* scrapes are short: two threads keep one slow client from
                                  * blocking the others */
#define HTTP_TIMEOUT_S 30        /* idle connections are closed after this */
#define HTTP_MAX_CONNECTIONS 256

struct http_server {
    struct MHD_Daemon *daemon;
    struct live_metrics *live;
    char address[INET6_ADDRSTRLEN + 16];
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
    if (bind(fd, (struct sockaddr *)&ss, sslen) < 0 || listen(fd, 128) < 0) {
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

    /* poll, not the epoll that MHD_USE_AUTO picks: with epoll, libmicrohttpd 0.9.75 misses
     * the end of a client that closes in the middle of a request, and holds the connection
     * (CLOSE-WAIT) until the idle timeout: a few hundred such clients took every connection
     * and /metrics stopped answering (fuzz_http). poll sees the end and closes it. */
    unsigned flags = MHD_USE_POLL_INTERNAL_THREAD;
    if (ss.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    s->daemon = MHD_start_daemon(flags, 0, NULL, NULL, handle, s,
                                 MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
                                 MHD_OPTION_THREAD_POOL_SIZE, (unsigned)HTTP_THREADS,
                                 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_TIMEOUT_S,
                                 MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_MAX_CONNECTIONS,
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
