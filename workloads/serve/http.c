/* http: serve's endpoints on libmicrohttpd (see http.h).
 *
 * libmicrohttpd calls the handler once when a request's headers are in, once per piece of its
 * body, and once more at its end; every answer is queued on that last call, so the connection
 * stays open for the client's next request (an answer queued earlier makes libmicrohttpd close
 * it). The exception is a body whose Content-Length is above --max-body: answered 413 at once,
 * without reading it. A request's state (struct exchange) is freed in the completion callback,
 * which libmicrohttpd calls however the request ends, the client gone included. */
#include "serve/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#if MHD_VERSION < 0x00097002
typedef int mhd_result; /* before 0.9.71 handlers returned int */
#else
typedef enum MHD_Result mhd_result;
#endif
#ifndef MHD_HTTP_CONTENT_TOO_LARGE
#define MHD_HTTP_CONTENT_TOO_LARGE 413 /* before 0.9.74: MHD_HTTP_PAYLOAD_TOO_LARGE */
#endif

#define HTTP_IDLE_TIMEOUT_S 60     /* a connection silent this long is closed */
#define HTTP_MAX_CONNECTIONS 1024  /* open at once (one thread each) */
#define HTTP_BACKLOG 1024          /* connections the kernel queues before accept */
#define HTTP_CONNECTION_MEMORY (128 * 1024) /* headers and each piece of the body */
#define JSON_TYPE "application/json"

struct http {
    struct MHD_Daemon *daemon;
    struct http_config c;
    char address[INET6_ADDRSTRLEN + 16];
    atomic_int quiesced;
};

/* What a request asks for. */
enum route {
    R_SERVER_META,
    R_LIVE,
    R_READY,
    R_MODEL_META,
    R_MODEL_READY,
    R_INFER,
};

/* One request in progress: its route, an error decided before its body was read, its body. */
struct exchange {
    enum route route;
    unsigned status; /* nonzero: answer this error with message at the end */
    char message[384];
    char *body;
    size_t len, cap;
    uint64_t discarded; /* bytes of a body over --max-body thrown away */
};

/* ---- the listening address ---------------------------------------------------------------- */

static const char listen_hint[] = "expected HOST:PORT, [IPV6]:PORT or :PORT, e.g. "
                                  HTTP_DEFAULT_LISTEN " (port 0: any free port)";

/* Parses HOST:PORT into *addr. 0, or -1 with a message. */
static int parse_listen(const char *listen, struct sockaddr_storage *addr, socklen_t *addrlen,
                        char *err, size_t errlen)
{
    char host[256] = "";
    const char *port;
    int v6 = listen[0] == '[';
    if (v6) {
        const char *end = strchr(listen, ']');
        size_t n = end ? (size_t)(end - listen - 1) : 0;
        if (!end || end[1] != ':' || n == 0 || n >= sizeof host) {
            snprintf(err, errlen, "--listen '%s': %s", listen, listen_hint);
            return -1;
        }
        memcpy(host, listen + 1, n);
        host[n] = '\0';
        port = end + 2;
    } else {
        const char *colon = strrchr(listen, ':');
        size_t n = colon ? (size_t)(colon - listen) : 0;
        if (!colon || memchr(listen, ':', n) || n >= sizeof host) {
            snprintf(err, errlen, "--listen '%s': %s%s", listen, listen_hint,
                     colon && memchr(listen, ':', n) ? "; an IPv6 address goes in brackets"
                                                     : "");
            return -1;
        }
        memcpy(host, listen, n);
        host[n] = '\0';
        port = colon + 1;
    }
    char *end;
    errno = 0;
    long p = *port >= '0' && *port <= '9' ? strtol(port, &end, 10) : -1;
    if (p < 0 || p > 65535 || errno || *end) {
        snprintf(err, errlen, "--listen '%s': the port '%s' must be a number from 0 to 65535",
                 listen, port);
        return -1;
    }
    struct addrinfo hints = {.ai_family = v6 ? AF_INET6 : AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICSERV | (v6 ? AI_NUMERICHOST : 0)};
    struct addrinfo *res = NULL;
    char portstr[8];
    snprintf(portstr, sizeof portstr, "%ld", p);
    int rc = getaddrinfo(host[0] ? host : "127.0.0.1", portstr, &hints, &res);
    if (rc != 0 || !res) {
        snprintf(err, errlen, "--listen '%s': unknown host '%s' (%s)", listen, host,
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

static void format_address(const struct sockaddr_storage *ss, char *buf, size_t len)
{
    char host[INET6_ADDRSTRLEN] = "?";
    if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)(const void *)ss;
        inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
        snprintf(buf, len, "[%s]:%u", host, (unsigned)ntohs(a->sin6_port));
    } else {
        const struct sockaddr_in *a = (const struct sockaddr_in *)(const void *)ss;
        inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
        snprintf(buf, len, "%s:%u", host, (unsigned)ntohs(a->sin_port));
    }
}

/* ---- answers ------------------------------------------------------------------------------ */

/* Queues body (malloc'd, taken; NULL: memory ran out, answered 500 without a body). */
static mhd_result reply(struct MHD_Connection *c, unsigned status, char *body, size_t len,
                        const char *allow)
{
    static char none[] = "";
    if (!body) {
        status = MHD_HTTP_INTERNAL_SERVER_ERROR;
        len = 0;
    }
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body ? body : none,
                                                             body ? MHD_RESPMEM_MUST_FREE
                                                                  : MHD_RESPMEM_PERSISTENT);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, JSON_TYPE);
    if (allow)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
    mhd_result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static mhd_result reply_error(struct MHD_Connection *c, unsigned status, const char *message,
                              const char *allow)
{
    size_t len = 0;
    char *body = v2_format_error(message, &len);
    return reply(c, status, body, len, allow);
}

/* An empty 200 (health), or 503 while the server stops. */
static mhd_result reply_health(const struct http *h, struct MHD_Connection *c, int needs_ready)
{
    if (needs_ready && atomic_load(&h->quiesced))
        return reply_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "the server is shutting down", NULL);
    return reply(c, MHD_HTTP_OK, strdup(""), 0, NULL);
}

/* ---- routing ------------------------------------------------------------------------------ */

/* The route of url and method into ex; an unknown path, model or version, or a method the
 * route does not take, sets ex->status and ex->message instead. */
static void classify(const struct http *h, struct exchange *ex, const char *url,
                     const char *method)
{
    const char *model = h->c.model->name;
    static const char models[] = "/v2/models/";
    int found = 1;
    if (!strcmp(url, "/v2") || !strcmp(url, "/v2/")) {
        ex->route = R_SERVER_META;
    } else if (!strcmp(url, "/v2/health/live")) {
        ex->route = R_LIVE;
    } else if (!strcmp(url, "/v2/health/ready")) {
        ex->route = R_READY;
    } else if (!strncmp(url, models, sizeof models - 1)) {
        const char *name = url + sizeof models - 1, *rest = strchr(name, '/');
        size_t n = rest ? (size_t)(rest - name) : strlen(name);
        if (n != strlen(model) || strncmp(name, model, n)) {
            ex->status = MHD_HTTP_NOT_FOUND;
            snprintf(ex->message, sizeof ex->message, "unknown model '%.*s': this server "
                     "serves '%s'", n > 64 ? 64 : (int)n, name, model);
            return;
        }
        rest = rest ? rest : "";
        if (!strncmp(rest, "/versions/", 10)) {
            const char *v = rest + 10, *after = strchr(v, '/');
            size_t vn = after ? (size_t)(after - v) : strlen(v);
            if (vn != 1 || *v != '1') {
                ex->status = MHD_HTTP_NOT_FOUND;
                snprintf(ex->message, sizeof ex->message, "unknown version '%.*s' of model "
                         "'%s': it has version 1", vn > 32 ? 32 : (int)vn, v, model);
                return;
            }
            rest = after ? after : "";
        }
        if (!*rest)
            ex->route = R_MODEL_META;
        else if (!strcmp(rest, "/ready"))
            ex->route = R_MODEL_READY;
        else if (!strcmp(rest, "/infer"))
            ex->route = R_INFER;
        else
            found = 0;
    } else {
        found = 0;
    }
    if (!found) {
        ex->status = MHD_HTTP_NOT_FOUND;
        snprintf(ex->message, sizeof ex->message, "not found: '%.128s'; this server answers "
                 "GET /v2, /v2/health/live, /v2/health/ready, /v2/models/%s, "
                 "/v2/models/%s/ready and POST /v2/models/%s/infer", url, model, model, model);
        return;
    }
    int post = ex->route == R_INFER;
    int ok = post ? !strcmp(method, MHD_HTTP_METHOD_POST)
                  : !strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD);
    if (!ok) {
        ex->status = MHD_HTTP_METHOD_NOT_ALLOWED;
        snprintf(ex->message, sizeof ex->message, "method %.16s is not allowed on %.128s: use "
                 "%s", method, url, post ? "POST" : "GET");
    }
}

/* ---- inference ---------------------------------------------------------------------------- */

static mhd_result infer(struct http *h, struct MHD_Connection *c, struct exchange *ex)
{
    char err[512];
    struct v2_request rq;
    const struct v2_model *m = h->c.model;
    /* the binary tensor extension: the JSON is the body's first N bytes, the tensors follow */
    const char *hl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                 "Inference-Header-Content-Length");
    size_t json_len = ex->len;
    if (hl) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(hl, &end, 10);
        if (end == hl || *end || errno || *hl == '-' || v > ex->len) {
            free(ex->body);
            ex->body = NULL;
            snprintf(err, sizeof err, "Inference-Header-Content-Length '%.32s' is not a byte "
                     "count within the body's %zu bytes", hl, ex->len);
            return reply_error(c, MHD_HTTP_BAD_REQUEST, err, NULL);
        }
        json_len = (size_t)v;
    }
    enum v2_status st = v2_parse_infer(ex->body ? ex->body : "", ex->len, json_len, m, &rq, err,
                                       sizeof err);
    free(ex->body); /* the images are parsed out of it: its memory goes before the wait */
    ex->body = NULL;
    if (st != V2_OK)
        return reply_error(c, st == V2_NO_MEMORY ? MHD_HTTP_INTERNAL_SERVER_ERROR
                                                 : MHD_HTTP_BAD_REQUEST, err, NULL);
    float *prob = malloc((size_t)rq.n * (size_t)m->classes * sizeof *prob);
    if (!prob) {
        v2_request_free(&rq);
        return reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory for the "
                           "probabilities", NULL);
    }
    if (batcher_run(h->c.batcher, rq.n, rq.x, prob) != 0) {
        free(prob);
        v2_request_free(&rq);
        return reply_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "the server is shutting down",
                           NULL);
    }
    size_t len = 0;
    char *body = v2_format_infer(m, rq.id, prob, rq.n, &len);
    free(prob);
    v2_request_free(&rq);
    return reply(c, MHD_HTTP_OK, body, len, NULL);
}

/* The first call of a request: its route, and an inference body's declared size. */
static mhd_result start_exchange(struct http *h, struct MHD_Connection *c, const char *url,
                                 const char *method, void **con_cls)
{
    struct exchange *ex = calloc(1, sizeof *ex);
    if (!ex)
        return MHD_NO;
    *con_cls = ex;
    classify(h, ex, url, method);
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                 MHD_HTTP_HEADER_CONTENT_LENGTH);
    uint64_t declared = cl ? strtoull(cl, NULL, 10) : 0;
    if (declared > (uint64_t)h->c.max_body) {
        /* Not read at all: answered now, and libmicrohttpd closes the connection. */
        char msg[256];
        if (ex->status)
            return reply_error(c, ex->status, ex->message, NULL);
        snprintf(msg, sizeof msg, "the request body of %" PRIu64 " bytes is above the "
                 "server's --max-body of %" PRId64 " bytes", declared, h->c.max_body);
        return reply_error(c, MHD_HTTP_CONTENT_TOO_LARGE, msg, NULL);
    }
    if (ex->route == R_INFER && !ex->status && declared > 0) {
        ex->body = malloc((size_t)declared + 1);
        ex->cap = ex->body ? (size_t)declared + 1 : 0;
    }
    return MHD_YES;
}

/* A piece of the body: kept for an inference, else dropped. Above --max-body (a body without
 * Content-Length), the rest is read and dropped up to as much again, then the connection is
 * closed. */
static mhd_result body_piece(struct http *h, struct exchange *ex, const char *data,
                             size_t size)
{
    if (ex->route != R_INFER || ex->status) {
        ex->discarded += size;
        return ex->discarded > 2 * (uint64_t)h->c.max_body ? MHD_NO : MHD_YES;
    }
    if (ex->len + size > (uint64_t)h->c.max_body) {
        ex->status = MHD_HTTP_CONTENT_TOO_LARGE;
        snprintf(ex->message, sizeof ex->message, "the request body is above the server's "
                 "--max-body of %" PRId64 " bytes", h->c.max_body);
        free(ex->body);
        ex->body = NULL;
        ex->discarded = ex->len + size;
        ex->len = ex->cap = 0;
        return MHD_YES;
    }
    if (ex->len + size > ex->cap) {
        size_t cap = ex->cap ? ex->cap : 64 * 1024;
        while (cap < ex->len + size)
            cap *= 2;
        if (cap > (size_t)h->c.max_body)
            cap = (size_t)h->c.max_body;
        char *p = realloc(ex->body, cap);
        if (!p)
            return MHD_NO; /* out of memory: this connection is dropped, the server goes on */
        ex->body = p;
        ex->cap = cap;
    }
    memcpy(ex->body + ex->len, data, size);
    ex->len += size;
    return MHD_YES;
}

static mhd_result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                         const char *version, const char *upload_data, size_t *upload_size,
                         void **con_cls)
{
    struct http *h = cls;
    struct exchange *ex = *con_cls;
    (void)version;
    if (!ex)
        return start_exchange(h, c, url, method, con_cls);
    if (*upload_size) {
        mhd_result r = body_piece(h, ex, upload_data, *upload_size);
        *upload_size = 0;
        return r;
    }
    if (ex->status)
        return reply_error(c, ex->status, ex->message,
                           ex->status != MHD_HTTP_METHOD_NOT_ALLOWED ? NULL
                           : ex->route == R_INFER                    ? "POST"
                                                                     : "GET, HEAD");
    size_t len = 0;
    char *body;
    switch (ex->route) {
    case R_SERVER_META:
        body = v2_format_server_metadata(h->c.version, &len);
        return reply(c, MHD_HTTP_OK, body, len, NULL);
    case R_LIVE:
        return reply_health(h, c, 0);
    case R_READY:
    case R_MODEL_READY:
        return reply_health(h, c, 1);
    case R_MODEL_META:
        body = v2_format_model_metadata(h->c.model, &len);
        return reply(c, MHD_HTTP_OK, body, len, NULL);
    case R_INFER:
        return infer(h, c, ex);
    }
    return MHD_NO;
}

/* However the request ended (answered, client gone, timed out, server stopping). */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct exchange *ex = *con_cls;
    (void)cls;
    (void)c;
    (void)toe;
    if (ex) {
        free(ex->body);
        free(ex);
        *con_cls = NULL;
    }
}

/* ---- the server --------------------------------------------------------------------------- */

static const char *bind_hint(int e)
{
    switch (e) {
    case EADDRINUSE: return "the port is in use: choose another, or port 0 for any free one";
    case EADDRNOTAVAIL: return "no such address on this machine";
    case EACCES: return "permission denied (ports below 1024 need privileges)";
    default: return strerror(e);
    }
}

struct http *http_start(const struct http_config *c, int *bad_address, char *err, size_t errlen)
{
    struct sockaddr_storage ss;
    socklen_t sslen;
    *bad_address = 1;
    if (parse_listen(c->listen, &ss, &sslen, err, errlen) < 0)
        return NULL;
    *bad_address = 0;
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "cannot listen on '%s': %s", c->listen, strerror(errno));
        return NULL;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one); /* a restart within TIME_WAIT */
    if (bind(fd, (struct sockaddr *)&ss, sslen) < 0 || listen(fd, HTTP_BACKLOG) < 0) {
        snprintf(err, errlen, "cannot listen on '%s': %s", c->listen, bind_hint(errno));
        close(fd);
        return NULL;
    }
    struct http *h = calloc(1, sizeof *h);
    if (!h) {
        snprintf(err, errlen, "cannot allocate the HTTP server");
        close(fd);
        return NULL;
    }
    h->c = *c;
    struct sockaddr_storage bound;
    socklen_t blen = sizeof bound;
    if (getsockname(fd, (struct sockaddr *)&bound, &blen) == 0)
        format_address(&bound, h->address, sizeof h->address);
    else
        snprintf(h->address, sizeof h->address, "%s", c->listen);
    /* A thread per connection: it may block in batcher_run while its batch computes. poll, not
     * select (no FD_SETSIZE bound) nor epoll (libmicrohttpd 0.9.75 with epoll misses a client
     * that closes in the middle of a request: src/live/http_server.c says more). ITC: for
     * MHD_quiesce_daemon. */
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                     MHD_USE_POLL | MHD_USE_ITC;
    if (ss.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    h->daemon = MHD_start_daemon(flags, 0, NULL, NULL, handle, h,
                                 MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
                                 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_IDLE_TIMEOUT_S,
                                 MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_MAX_CONNECTIONS,
                                 MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                                 (size_t)HTTP_CONNECTION_MEMORY,
                                 MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
                                 MHD_OPTION_END);
    if (!h->daemon) {
        snprintf(err, errlen, "cannot serve HTTP on %s: libmicrohttpd did not start",
                 h->address);
        if (fcntl(fd, F_GETFD) != -1) /* unless libmicrohttpd closed it already */
            close(fd);
        free(h);
        return NULL;
    }
    return h;
}

const char *http_address(const struct http *h)
{
    return h->address;
}

void http_quiesce(struct http *h)
{
    atomic_store(&h->quiesced, 1);
    MHD_socket fd = MHD_quiesce_daemon(h->daemon);
    if (fd != MHD_INVALID_SOCKET)
        close(fd);
}

void http_stop(struct http *h)
{
    if (!h)
        return;
    MHD_stop_daemon(h->daemon);
    free(h);
}
