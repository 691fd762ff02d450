/* rank_link: the collector of ranks on other hosts and the forwarder of `mlbench rank-exec`
 * (see rank_link.h for the protocol). */
#include "measure/rank_link.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <jansson.h>
#include <math.h>

#include "measure/marker_parse.h"
#include "util/clock.h"
#include "util/units.h"
#include "util/xalloc.h"

#define LINE_MAX_BYTES 256                  /* a protocol line, its newline included */
#define MSG_MAX (1 << 16)                   /* a K or S message's JSON */
#define CONN_BUF (LINE_MAX_BYTES + MSG_MAX + 2)
#define MAX_SERIES 1024
#define MAX_ROWS 2000000                    /* a host's samples in one run (6 h at 10 ms) */
#define PINGS 8                             /* round trips of the offset estimate */
#define BYE_TIMEOUT_MS 10000

/* Splits "HOST:PORT" or "[V6]:PORT" into host and port (owned copies in host[hlen]). */
static int split_address(const char *addr, char *host, size_t hlen, const char **port)
{
    const char *colon = strrchr(addr, ':');
    if (!colon || !colon[1])
        return -1;
    const char *h = addr;
    size_t n = (size_t)(colon - addr);
    if (n >= 2 && h[0] == '[' && h[n - 1] == ']') {
        h++;
        n -= 2;
    }
    if (n >= hlen)
        return -1;
    memcpy(host, h, n);
    host[n] = '\0';
    *port = colon + 1;
    return 0;
}

/* ---- the collector ----------------------------------------------------------------------- */

struct conn {
    int fd;
    int host;            /* index + 1 in rank_collector.hosts, 0 before the hello */
    bool sampler;        /* this connection sends its host's samples */
    int64_t offset_ns;   /* ours - theirs */
    char *buf;           /* CONN_BUF bytes */
    size_t n;
    struct host_samples hs; /* being received: series once K came, rows from S */
    bool has_series;
};

struct rank_collector {
    int listen_fd;
    int wake[2];         /* written to stop the thread */
    pthread_t thread;
    struct marker_receiver *markers;
    char token[33];
    char env[512];
    struct conn *conns;  /* RANK_LINK_MAX_HOSTS slots, fd -1 when free */
    char *hosts[RANK_LINK_MAX_HOSTS]; /* host names, by index: pids of host i carry i + 1 */
    bool sampled[RANK_LINK_MAX_HOSTS]; /* a connection of that host is its sampler now */
    int n_hosts;
    pthread_mutex_t mu;
    uint64_t refused;    /* guarded by mu */
};

/* Hands the host samples k received to the run (none: nothing). */
static void flush_samples(struct rank_collector *c, struct conn *k)
{
    if (k->has_series && k->hs.tab.n > 0) {
        k->hs.host = xstrdup(c->hosts[k->host - 1]);
        markers_store_host(c->markers, &k->hs);
    }
    host_samples_free(&k->hs);
    k->has_series = false;
}

static void conn_close(struct rank_collector *c, struct conn *k, bool refused)
{
    if (k->sampler) {
        flush_samples(c, k);
        c->sampled[k->host - 1] = false;
    }
    host_samples_free(&k->hs);
    close(k->fd);
    free(k->buf);
    *k = (struct conn){.fd = -1};
    if (refused) {
        pthread_mutex_lock(&c->mu);
        c->refused++;
        pthread_mutex_unlock(&c->mu);
    }
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* One datagram of host k: its pid and tid moved apart, its time onto our clock. */
static void store_datagram(struct rank_collector *c, struct conn *k, const char *d, size_t len)
{
    struct marker_token tok;
    const char *why = marker_parse(d, len, &tok);
    if (!why && (tok.pid < 0 || tok.tid < 0 || tok.pid >= 1 << RANK_LINK_PID_SHIFT ||
                 tok.tid >= 1 << RANK_LINK_PID_SHIFT))
        why = "pid out of range";
    if (!why && __builtin_add_overflow(tok.t_ns, k->offset_ns, &tok.t_ns))
        why = "time out of range";
    if (!why) {
        tok.pid |= k->host << RANK_LINK_PID_SHIFT;
        tok.tid |= k->host << RANK_LINK_PID_SHIFT;
    }
    markers_store(c->markers, &tok, why, d, len);
}

/* "K": the series of k's host samples, a JSON array of {metric, labels, kind, source,
 * max_rate}. false when it is not that. */
static bool read_series(struct conn *k, const char *d, size_t len)
{
    json_t *a = json_loadb(d, len, 0, NULL);
    size_t n = json_array_size(a);
    bool ok = !k->has_series && k->sampler && n > 0 && n <= MAX_SERIES;
    struct series_def *defs = ok ? xcalloc(n, sizeof *defs) : NULL;
    for (size_t i = 0; ok && i < n; i++) {
        const char *metric = NULL, *labels = NULL, *kind = NULL, *source = NULL;
        double max_rate = 0;
        ok = json_unpack(json_array_get(a, i), "{s:s, s:s, s:s, s:s, s?F}", "metric", &metric,
                         "labels", &labels, "kind", &kind, "source", &source, "max_rate",
                         &max_rate) == 0 && (!strcmp(kind, "gauge") || !strcmp(kind, "counter"));
        if (ok)
            defs[i] = (struct series_def){xstrdup(metric), xstrdup(labels),
                                          strcmp(kind, "counter") ? SERIES_GAUGE : SERIES_COUNTER,
                                          xstrdup(source), max_rate > 0 ? max_rate : 0};
    }
    json_decref(a);
    if (!ok) {
        for (size_t i = 0; defs && i < n; i++) {
            free(defs[i].name);
            free(defs[i].labels);
            free((char *)defs[i].source);
        }
        free(defs);
        return false;
    }
    struct series_registry reg = {.defs = defs, .n = n};
    sample_table_init(&k->hs.tab, &reg);
    k->hs.defs = defs;
    k->has_series = true;
    return true;
}

/* "S": one row of k's host samples, [t_ns, value or null per series], t_ns on their clock.
 * false when it is not that. */
static bool read_row(struct conn *k, const char *d, size_t len)
{
    json_t *a = json_loadb(d, len, 0, NULL);
    struct sample_table *tab = &k->hs.tab;
    bool ok = k->has_series && json_array_size(a) == tab->n_series + 1 &&
              json_is_integer(json_array_get(a, 0));
    for (size_t i = 1; ok && i <= tab->n_series; i++)
        ok = json_is_number(json_array_get(a, i)) || json_is_null(json_array_get(a, i));
    int64_t t;
    ok = ok && !__builtin_add_overflow(json_integer_value(json_array_get(a, 0)), k->offset_ns,
                                       &t);
    if (ok && tab->n < MAX_ROWS) {
        size_t row = sample_table_add_row(tab, t);
        for (size_t i = 0; i < tab->n_series; i++) {
            const json_t *v = json_array_get(a, i + 1);
            if (json_is_number(v))
                sample_table_set(tab, i, row, json_number_value(v));
        }
    }
    json_decref(a);
    return ok;
}

/* The hello "H 1 TOKEN HOSTNAME": numbers k's host (by name: its pids are its own) and says
 * whether k samples it. false when refused. */
static bool hello(struct rank_collector *c, struct conn *k, const char *msg)
{
    char tok[40], name[200];
    if (sscanf(msg, "H 1 %39s %199s", tok, name) != 2 || strcmp(tok, c->token) != 0 ||
        !units_utf8_valid(name, strlen(name)))
        return false;
    for (const char *p = name; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return false; /* a host name is printed and written: no controls */
    int i = 0;
    while (i < c->n_hosts && strcmp(c->hosts[i], name) != 0)
        i++;
    if (i == c->n_hosts) {
        if (c->n_hosts == RANK_LINK_MAX_HOSTS)
            return false;
        c->hosts[c->n_hosts++] = xstrdup(name);
    }
    k->host = i + 1;
    k->sampler = !c->sampled[i];
    c->sampled[i] = true;
    char ok[32];
    int n = snprintf(ok, sizeof ok, "OK %d %d\n", k->host, k->sampler);
    return send_all(k->fd, ok, (size_t)n) == 0;
}

/* Handles the complete messages in k's buffer. Returns false when k must be closed (as
 * refused when *refused). */
static bool conn_serve(struct rank_collector *c, struct conn *k, bool *refused)
{
    size_t at = 0;
    for (;;) {
        char *nl = memchr(k->buf + at, '\n', k->n - at);
        if (!nl) {
            if (k->n - at >= LINE_MAX_BYTES)
                return false; /* a line too long: not our protocol */
            break;
        }
        size_t line = (size_t)(nl - (k->buf + at));
        if (line >= LINE_MAX_BYTES)
            return false;
        char msg[LINE_MAX_BYTES];
        memcpy(msg, k->buf + at, line);
        msg[line] = '\0';
        char *arg = line > 2 ? msg + 2 : msg + line;
        if (!k->host) {
            if (!hello(c, k, msg)) {
                *refused = true;
                return false;
            }
        } else if (msg[0] == 'P' && msg[1] == ' ') {
            char q[96];
            int n = snprintf(q, sizeof q, "Q %.40s %lld\n", arg, (long long)mono_ns());
            if (send_all(k->fd, q, (size_t)n) < 0)
                return false;
        } else if (msg[0] == 'O' && msg[1] == ' ') {
            char *end;
            errno = 0;
            long long off = strtoll(arg, &end, 10);
            if (errno || *end)
                return false;
            k->offset_ns = off;
        } else if ((msg[0] == 'D' || msg[0] == 'K' || msg[0] == 'S') && msg[1] == ' ') {
            long len;
            if (units_parse_long(arg, 0, msg[0] == 'D' ? MARKER_MAX_EVENT + 1 : MSG_MAX,
                                 &len) < 0)
                return false;
            if (k->n - at - line - 1 < (size_t)len)
                break; /* the message is not all here yet */
            if (msg[0] == 'D')
                store_datagram(c, k, nl + 1, (size_t)len);
            else if (!(msg[0] == 'K' ? read_series : read_row)(k, nl + 1, (size_t)len))
                return false;
            at += line + 1 + (size_t)len;
            continue;
        } else if (msg[0] == 'B' && line == 1) {
            /* Everything before is stored (markers_store returned): say so. */
            if (k->sampler)
                flush_samples(c, k);
            if (send_all(k->fd, "A\n", 2) < 0)
                return false;
        } else {
            return false;
        }
        at += line + 1;
    }
    memmove(k->buf, k->buf + at, k->n - at);
    k->n -= at;
    return true;
}

static void *collector_main(void *arg)
{
    struct rank_collector *c = arg;
    struct pollfd *p = xcalloc(RANK_LINK_MAX_HOSTS + 2, sizeof *p);
    int *slot = xcalloc(RANK_LINK_MAX_HOSTS + 2, sizeof *slot);
    for (;;) {
        size_t n = 0;
        p[n++] = (struct pollfd){.fd = c->wake[0], .events = POLLIN};
        p[n++] = (struct pollfd){.fd = c->listen_fd, .events = POLLIN};
        for (int i = 0; i < RANK_LINK_MAX_HOSTS; i++)
            if (c->conns[i].fd >= 0) {
                slot[n] = i;
                p[n++] = (struct pollfd){.fd = c->conns[i].fd, .events = POLLIN};
            }
        if (poll(p, n, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (p[0].revents)
            break;
        if (p[1].revents & POLLIN) {
            int fd = accept4(c->listen_fd, NULL, NULL, SOCK_CLOEXEC);
            int free_slot = -1;
            for (int i = 0; i < RANK_LINK_MAX_HOSTS && free_slot < 0 && fd >= 0; i++)
                if (c->conns[i].fd < 0)
                    free_slot = i;
            if (fd >= 0 && free_slot < 0) {
                struct conn tmp = {.fd = fd};
                conn_close(c, &tmp, true);
            } else if (fd >= 0) {
                c->conns[free_slot] = (struct conn){.fd = fd, .buf = xmalloc(CONN_BUF)};
            }
        }
        for (size_t i = 2; i < n; i++) {
            if (!p[i].revents)
                continue;
            struct conn *k = &c->conns[slot[i]];
            ssize_t r = recv(k->fd, k->buf + k->n, CONN_BUF - k->n, 0);
            if (r < 0 && errno == EINTR)
                continue;
            bool refused = false;
            if (r <= 0) {
                conn_close(c, k, false);
                continue;
            }
            k->n += (size_t)r;
            if (!conn_serve(c, k, &refused))
                conn_close(c, k, refused);
        }
    }
    free(slot);
    free(p);
    return NULL;
}

struct rank_collector *rank_collector_start(const char *address, struct marker_receiver *m,
                                            char *err, size_t errlen)
{
    char host[256];
    const char *port;
    if (split_address(address, host, sizeof host, &port) < 0) {
        snprintf(err, errlen, "--ranks-listen '%s' is not HOST:PORT (e.g. 10.0.0.1:0, or "
                 "0.0.0.0:9470; port 0 picks a free one)", address);
        return NULL;
    }
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *ai;
    int rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &ai);
    if (rc) {
        snprintf(err, errlen, "--ranks-listen '%s': %s", address, gai_strerror(rc));
        return NULL;
    }
    struct rank_collector *c = xcalloc(1, sizeof *c);
    c->listen_fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int on = 1;
    if (c->listen_fd >= 0)
        setsockopt(c->listen_fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (c->listen_fd < 0 || bind(c->listen_fd, ai->ai_addr, ai->ai_addrlen) < 0 ||
        listen(c->listen_fd, 64) < 0) {
        snprintf(err, errlen, "--ranks-listen '%s': cannot listen there: %s (give an address "
                 "of this host and a free port)", address, strerror(errno));
        if (c->listen_fd >= 0)
            close(c->listen_fd);
        freeaddrinfo(ai);
        free(c);
        return NULL;
    }
    freeaddrinfo(ai);
    struct sockaddr_storage sa;
    socklen_t sl = sizeof sa;
    getsockname(c->listen_fd, (struct sockaddr *)&sa, &sl);
    char shown_port[16];
    getnameinfo((struct sockaddr *)&sa, sl, NULL, 0, shown_port, sizeof shown_port,
                NI_NUMERICSERV);
    bool wildcard = !host[0] || !strcmp(host, "0.0.0.0") || !strcmp(host, "::");
    if (wildcard && gethostname(host, sizeof host) < 0)
        snprintf(host, sizeof host, "localhost");
    unsigned char raw[16];
    if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
        for (size_t i = 0; i < sizeof raw; i++)
            raw[i] = (unsigned char)(mono_ns() >> (i % 8));
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(c->token + 2 * i, 3, "%02x", raw[i]);
    bool v6 = strchr(host, ':') != NULL;
    snprintf(c->env, sizeof c->env, "%s=%s%s%s:%s#%s", RANK_LINK_ENV, v6 ? "[" : "", host,
             v6 ? "]" : "", shown_port, c->token);
    c->markers = m;
    c->conns = xcalloc(RANK_LINK_MAX_HOSTS, sizeof *c->conns);
    for (int i = 0; i < RANK_LINK_MAX_HOSTS; i++)
        c->conns[i].fd = -1;
    pthread_mutex_init(&c->mu, NULL);
    if (pipe2(c->wake, O_CLOEXEC) < 0) {
        rc = errno;
    } else if ((rc = pthread_create(&c->thread, NULL, collector_main, c)) != 0) {
        close(c->wake[0]);
        close(c->wake[1]);
    }
    if (rc) {
        snprintf(err, errlen, "cannot start the rank collector: %s", strerror(rc));
        close(c->listen_fd);
        pthread_mutex_destroy(&c->mu);
        free(c->conns);
        free(c);
        return NULL;
    }
    return c;
}

const char *rank_collector_env(const struct rank_collector *c)
{
    return c->env;
}

uint64_t rank_collector_refused(struct rank_collector *c)
{
    pthread_mutex_lock(&c->mu);
    uint64_t n = c->refused;
    pthread_mutex_unlock(&c->mu);
    return n;
}

void rank_collector_stop(struct rank_collector *c)
{
    if (!c)
        return;
    ssize_t w;
    do
        w = write(c->wake[1], "x", 1);
    while (w < 0 && errno == EINTR);
    pthread_join(c->thread, NULL);
    for (int i = 0; i < RANK_LINK_MAX_HOSTS; i++)
        if (c->conns[i].fd >= 0)
            conn_close(c, &c->conns[i], false);
    for (int i = 0; i < c->n_hosts; i++)
        free(c->hosts[i]);
    close(c->listen_fd);
    close(c->wake[0]);
    close(c->wake[1]);
    pthread_mutex_destroy(&c->mu);
    free(c->conns);
    free(c);
}

/* ---- the forwarder ----------------------------------------------------------------------- */

struct rank_forward {
    int tcp;
    bool sample;         /* the collector wants this host's samples from us */
    int fd;              /* the local marker socket, non-blocking */
    char dir[80];        /* TMPDIR is at most 60 bytes (else /tmp): the path fits sun_path */
    struct sockaddr_un addr;
    bool lost;
    long dropped;
};

/* Reads one line (without its newline) from fd into line[len]; 0, or -1 on EOF or error. */
static int read_line(int fd, char *line, size_t len)
{
    size_t n = 0;
    while (n + 1 < len) {
        ssize_t r = recv(fd, line + n, 1, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        if (line[n] == '\n') {
            line[n] = '\0';
            return 0;
        }
        n++;
    }
    return -1;
}

/* Connects to host:port; the socket, or -1 with errno's message in err. */
static int connect_to(const char *host, const char *port, char *err, size_t errlen)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai, *a;
    int rc = getaddrinfo(host, port, &hints, &ai);
    if (rc) {
        snprintf(err, errlen, "%s", gai_strerror(rc));
        return -1;
    }
    int fd = -1;
    for (a = ai; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) < 0) {
            snprintf(err, errlen, "%s", strerror(errno));
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(ai);
    return fd;
}

/* The hello and the offset estimate. 0, or -1 with the message in err. */
static int handshake(int fd, const char *token, bool *sample, char *err, size_t errlen)
{
    char host[200] = "?", line[LINE_MAX_BYTES];
    gethostname(host, sizeof host - 1);
    host[strcspn(host, " \n")] = '\0';
    int n = snprintf(line, sizeof line, "H 1 %s %s\n", token, host);
    int index, wanted = 0;
    if (send_all(fd, line, (size_t)n) < 0 || read_line(fd, line, sizeof line) < 0 ||
        sscanf(line, "OK %d %d", &index, &wanted) != 2) {
        snprintf(err, errlen, "the collector refused the connection (a wrong token, or too "
                 "many hosts)");
        return -1;
    }
    int64_t best_rtt = INT64_MAX, offset = 0;
    for (int i = 0; i < PINGS; i++) {
        int64_t t1 = mono_ns();
        long long e1, t2;
        n = snprintf(line, sizeof line, "P %lld\n", (long long)t1);
        if (send_all(fd, line, (size_t)n) < 0 || read_line(fd, line, sizeof line) < 0 ||
            sscanf(line, "Q %lld %lld", &e1, &t2) != 2 || e1 != t1) {
            snprintf(err, errlen, "the collector did not answer the clock exchange");
            return -1;
        }
        int64_t t3 = mono_ns();
        if (t3 - t1 < best_rtt) {
            best_rtt = t3 - t1;
            offset = t2 - (t1 + (t3 - t1) / 2);
        }
    }
    *sample = wanted == 1;
    n = snprintf(line, sizeof line, "O %lld\n", (long long)offset);
    return send_all(fd, line, (size_t)n) < 0 ? -1 : 0;
}

struct rank_forward *rank_forward_open(const char *spec, char *err, size_t errlen)
{
    char addr[300], host[256], why[200] = "";
    const char *hash = strrchr(spec, '#'), *port;
    size_t alen = hash ? (size_t)(hash - spec) : 0;
    if (!hash || alen >= sizeof addr || strlen(hash + 1) != 32) {
        snprintf(err, errlen, "%s is not HOST:PORT#TOKEN (set by mlbench run --ranks-listen)",
                 RANK_LINK_ENV);
        return NULL;
    }
    memcpy(addr, spec, alen);
    addr[alen] = '\0';
    if (split_address(addr, host, sizeof host, &port) < 0) {
        snprintf(err, errlen, "%s: '%s' is not HOST:PORT", RANK_LINK_ENV, addr);
        return NULL;
    }
    int tcp = connect_to(host, port, why, sizeof why);
    if (tcp < 0) {
        snprintf(err, errlen, "cannot reach the collector at %s: %s", addr, why);
        return NULL;
    }
    bool sample = false;
    if (handshake(tcp, hash + 1, &sample, why, sizeof why) < 0) {
        snprintf(err, errlen, "collector at %s: %s", addr, why);
        close(tcp);
        return NULL;
    }
    struct rank_forward *f = xcalloc(1, sizeof *f);
    f->tcp = tcp;
    f->sample = sample;
    f->fd = -1;
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp || strlen(tmp) > 60)
        tmp = "/tmp";
    snprintf(f->dir, sizeof f->dir, "%s/mlbench-rank-XXXXXX", tmp);
    f->addr.sun_family = AF_UNIX;
    if (!mkdtemp(f->dir)) {
        snprintf(err, errlen, "cannot create a directory in %s: %s", tmp, strerror(errno));
        f->dir[0] = '\0';
    } else {
        snprintf(f->addr.sun_path, sizeof f->addr.sun_path, "%s/marker.sock", f->dir);
        f->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        int rcvbuf = 8 << 20;
        if (f->fd >= 0)
            setsockopt(f->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
        if (f->fd < 0 || bind(f->fd, (struct sockaddr *)&f->addr, sizeof f->addr) < 0)
            snprintf(err, errlen, "cannot create the rank's marker socket: %s",
                     strerror(errno));
        else
            return f;
    }
    if (f->fd >= 0)
        close(f->fd);
    if (f->dir[0])
        rmdir(f->dir);
    close(tcp);
    free(f);
    return NULL;
}

const char *rank_forward_path(const struct rank_forward *f)
{
    return f->addr.sun_path;
}

int rank_forward_fd(const struct rank_forward *f)
{
    return f->fd;
}

int rank_forward_pump(struct rank_forward *f)
{
    char buf[MARKER_MAX_EVENT + 2 + 24];
    for (;;) {
        char *d = buf + 24;
        ssize_t n = recv(f->fd, d, MARKER_MAX_EVENT + 1, MSG_DONTWAIT | MSG_TRUNC);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break; /* nothing more waiting */
        if (n > MARKER_MAX_EVENT)
            n = MARKER_MAX_EVENT + 1; /* overlong: the collector reports it */
        if (f->lost) {
            f->dropped++;
            continue;
        }
        char head[24];
        int h = snprintf(head, sizeof head, "D %zd\n", n);
        memcpy(d - h, head, (size_t)h);
        if (send_all(f->tcp, d - h, (size_t)(h + n)) < 0) {
            f->lost = true;
            f->dropped++;
        }
    }
    return f->lost ? -1 : 0;
}

bool rank_forward_samples_wanted(const struct rank_forward *f)
{
    return f->sample;
}

/* Sends one K or S message: kind, the JSON of j (stolen). */
static void send_message(struct rank_forward *f, char kind, json_t *j)
{
    char *text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    size_t len = text ? strlen(text) : 0;
    if (!text || len > MSG_MAX || f->lost) {
        f->dropped += !f->lost;
        free(text);
        return;
    }
    char head[24];
    int h = snprintf(head, sizeof head, "%c %zu\n", kind, len);
    if (send_all(f->tcp, head, (size_t)h) < 0 || send_all(f->tcp, text, len) < 0) {
        f->lost = true;
        f->dropped++;
    }
    free(text);
}

void rank_forward_send_samples(struct rank_forward *f, const struct sample_table *tab)
{
    if (!f->sample || tab->n_series == 0 || tab->n == 0)
        return;
    json_t *series = json_array();
    for (size_t i = 0; i < tab->n_series; i++) {
        const struct series_def *d = &tab->defs[i];
        json_t *o = json_pack("{s:s, s:s, s:s, s:s}", "metric", d->name, "labels", d->labels,
                              "kind", d->kind == SERIES_COUNTER ? "counter" : "gauge",
                              "source", d->source);
        if (o && d->max_rate > 0)
            json_object_set_new(o, "max_rate", json_real(d->max_rate));
        json_array_append_new(series, o);
    }
    send_message(f, 'K', series);
    for (size_t r = 0; r < tab->n && !f->lost; r++) {
        json_t *row = json_array();
        json_array_append_new(row, json_integer(tab->t_ns[r]));
        for (size_t i = 0; i < tab->n_series; i++)
            json_array_append_new(row, isfinite(tab->v[i][r]) ? json_real(tab->v[i][r])
                                                              : json_null());
        send_message(f, 'S', row);
    }
}

long rank_forward_close(struct rank_forward *f)
{
    rank_forward_pump(f);
    bool acked = false;
    if (!f->lost && send_all(f->tcp, "B\n", 2) == 0) {
        struct pollfd p = {.fd = f->tcp, .events = POLLIN};
        char line[16];
        acked = poll(&p, 1, BYE_TIMEOUT_MS) == 1 && read_line(f->tcp, line, sizeof line) == 0 &&
                !strcmp(line, "A");
    }
    long dropped = f->lost || !acked ? (f->dropped ? f->dropped : -1) : 0;
    close(f->tcp);
    close(f->fd);
    unlink(f->addr.sun_path);
    rmdir(f->dir);
    free(f);
    return dropped;
}
