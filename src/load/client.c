/* client: the load generator's engine (load.h): per thread, an epoll loop over keep-alive
 * connections, a timerfd for the next due query, responses parsed by http-parser (the parser
 * wrk uses; Debian's libhttp-parser-dev). Each thread issues its share of the queries and
 * keeps its own histograms and seconds; load_execute merges them. */
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <http_parser.h>

#include "load/load.h"
#include "load/schedule.h"
#include "util/clock.h"
#include "util/xalloc.h"

#define RECV_BUF 65536
#define MAX_EVENTS 256
#define TIMEOUT_SCAN_NS 50000000LL /* how often in-flight requests are checked for the timeout */

enum conn_state { CONN_CLOSED, CONN_CONNECTING, CONN_IDLE, CONN_BUSY };

struct worker;

struct conn {
    int fd;
    enum conn_state state;
    http_parser parser;
    struct worker *w;
    const struct load_request *req; /* in flight, or NULL */
    size_t sent;                     /* bytes of req written */
    int64_t due_ns;                  /* the query's due time */
    int64_t ready_ns;                /* when it could have been written (lag counts from here) */
    int64_t send_ns;                 /* when its first byte was written */
    bool complete;                   /* the parser saw the whole response */
    bool counted_send;
    bool out;                        /* EPOLLOUT is in its epoll registration */
};

/* Per-second accumulation: the latencies of the current second, sorted when it ends. */
struct second_acc {
    int64_t *v;
    size_t n, cap;
    uint64_t failed;
};

struct worker {
    const struct load_config *cfg;
    int index;
    int epfd, tfd;
    struct conn *conns;
    int n_conns;
    int *idle;             /* stack of idle connection indexes */
    int n_idle;
    struct schedule sched;
    int64_t next_due;      /* server: the next arrival, or INT64_MAX when done issuing */
    int64_t *pending;      /* server: due times waiting for a connection (ring) */
    size_t p_head, p_len, p_cap;
    size_t req_cursor;
    uint64_t quota;        /* queries this thread issues at least */
    int64_t t0, min_end;   /* issuing began; it may stop from min_end on */
    bool issuing;
    int in_flight;         /* requests */
    /* multi-stream: the current query */
    int ms_left;           /* samples outstanding */
    bool ms_failed;
    int64_t ms_due;
    int64_t connect_fail_until; /* back off reconnecting after a refused connect */
    int64_t armed_at;      /* the timer's deadline, INT64_MIN once it fired */
    struct load_run r;     /* this thread's share (seconds are built from acc) */
    struct second_acc *acc;
    size_t n_acc, cap_acc;
    char *buf;
    char err[256];
};

static int64_t seconds_ns(double s) { return (int64_t)llround(s * 1e9); }

static struct second_acc *second_at(struct worker *w, int64_t t_ns)
{
    int64_t s = (t_ns - w->t0) / 1000000000LL;
    if (s < 0)
        s = 0;
    if ((size_t)s >= w->cap_acc) {
        size_t cap = w->cap_acc ? w->cap_acc : 64;
        while (cap <= (size_t)s)
            cap *= 2;
        w->acc = xreallocarray(w->acc, cap, sizeof *w->acc);
        memset(w->acc + w->cap_acc, 0, (cap - w->cap_acc) * sizeof *w->acc);
        w->cap_acc = cap;
    }
    if ((size_t)s >= w->n_acc)
        w->n_acc = (size_t)s + 1;
    return &w->acc[s];
}

static void record_query(struct worker *w, int64_t due_ns, int64_t end_ns, bool ok)
{
    struct second_acc *a = second_at(w, end_ns);
    if (w->cfg->on_query)
        w->cfg->on_query(w->cfg->on_query_arg, end_ns - due_ns, ok);
    if (!ok) {
        w->r.failed++;
        a->failed++;
        return;
    }
    w->r.completed++;
    hist_record(&w->r.latency, end_ns - due_ns);
    a->v = xgrow(a->v, &a->cap, a->n + 1, sizeof *a->v);
    a->v[a->n++] = end_ns - due_ns;
}

/* ---- the queries' sources ---- */

static bool want_more(const struct worker *w, int64_t now)
{
    if (!w->issuing)
        return false;
    if (w->cfg->abort && *w->cfg->abort)
        return false;
    return now < w->min_end || w->r.issued < w->quota;
}

static void stop_issuing(struct worker *w, int64_t now)
{
    if (w->issuing) {
        w->issuing = false;
        w->r.issue_end_ns = now;
    }
}

/* ---- connections ---- */

static void conn_close(struct conn *c)
{
    if (c->fd >= 0) {
        epoll_ctl(c->w->epfd, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
    }
    c->fd = -1;
    c->state = CONN_CLOSED;
}

static int conn_open(struct conn *c)
{
    const struct load_config *cfg = c->w->cfg;
    int fd = socket(cfg->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (const struct sockaddr *)&cfg->addr, cfg->addrlen) < 0 && errno != EINPROGRESS) {
        int e = errno;
        close(fd);
        return -e;
    }
    c->fd = fd;
    c->state = CONN_CONNECTING;
    struct epoll_event ev = {.events = EPOLLOUT | EPOLLIN | EPOLLRDHUP, .data.ptr = c};
    epoll_ctl(c->w->epfd, EPOLL_CTL_ADD, fd, &ev);
    c->out = true;
    return 0;
}

/* Asks epoll for EPOLLOUT or not: a system call only when that changes (a request written in
 * one send, the usual case, needs none). */
static void conn_want_write(struct conn *c, bool on)
{
    if (c->out == on)
        return;
    c->out = on;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | (on ? EPOLLOUT : 0), .data.ptr = c};
    epoll_ctl(c->w->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

static void make_idle(struct worker *w, struct conn *c)
{
    c->state = CONN_IDLE;
    c->req = NULL;
    w->idle[w->n_idle++] = (int)(c - w->conns);
}

/* Writes what is left of c's request; false when the connection failed. */
static bool conn_flush(struct conn *c, int64_t now)
{
    while (c->sent < c->req->len) {
        ssize_t k = send(c->fd, c->req->bytes + c->sent, c->req->len - c->sent, MSG_NOSIGNAL);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN) {
                conn_want_write(c, true);
                return true;
            }
            return false;
        }
        if (!c->counted_send) {
            c->counted_send = true;
            c->send_ns = now;
            int64_t from = c->ready_ns > c->due_ns ? c->ready_ns : c->due_ns;
            hist_record(&c->w->r.send_lag, now - from);
        }
        c->sent += (size_t)k;
        c->w->r.bytes_sent += (uint64_t)k;
    }
    conn_want_write(c, false);
    return true;
}

static void query_done(struct worker *w, struct conn *c, int64_t now, bool ok);

/* Puts a request on connection c (idle or closed) for a query due at due_ns. */
static void conn_issue(struct worker *w, struct conn *c, int64_t due_ns, int64_t ready_ns, int64_t now)
{
    const struct load_config *cfg = w->cfg;
    c->req = &cfg->requests[w->req_cursor++ % cfg->n_requests];
    c->sent = 0;
    c->due_ns = due_ns;
    c->ready_ns = ready_ns;
    c->send_ns = now;
    c->complete = false;
    c->counted_send = false;
    w->r.requests++;
    w->in_flight++;
    http_parser_init(&c->parser, HTTP_RESPONSE);
    c->parser.data = c;
    if (c->state == CONN_CLOSED) {
        if (now < w->connect_fail_until || conn_open(c) < 0) {
            w->r.errors.connect++;
            query_done(w, c, now, false);
            return;
        }
        w->r.reconnects++;
        return; /* written once connected */
    }
    c->state = CONN_BUSY;
    if (!conn_flush(c, now)) {
        w->r.errors.reset++;
        conn_close(c);
        query_done(w, c, now, false);
    }
}

/* ---- dispatch: what each scenario issues when ---- */

static struct conn *take_idle(struct worker *w)
{
    while (w->n_idle > 0) {
        struct conn *c = &w->conns[w->idle[--w->n_idle]];
        if (c->state == CONN_IDLE || c->state == CONN_CLOSED)
            return c;
    }
    return NULL;
}

static void pending_push(struct worker *w, int64_t due)
{
    if (w->p_len == w->p_cap) {
        size_t cap = w->p_cap ? w->p_cap * 2 : 1024;
        int64_t *p = xmalloc(cap * sizeof *p);
        for (size_t i = 0; i < w->p_len; i++)
            p[i] = w->pending[(w->p_head + i) % w->p_cap];
        free(w->pending);
        w->pending = p;
        w->p_head = 0;
        w->p_cap = cap;
    }
    w->pending[(w->p_head + w->p_len++) % w->p_cap] = due;
}

static void dispatch(struct worker *w, int64_t now)
{
    const struct load_config *cfg = w->cfg;
    switch (cfg->scenario) {
    case LOAD_SERVER:
        while (w->next_due <= now) {
            if (!want_more(w, w->next_due)) {
                stop_issuing(w, now);
                w->next_due = INT64_MAX;
                break;
            }
            pending_push(w, w->next_due);
            w->r.issued++;
            w->next_due = schedule_next(&w->sched);
        }
        while (w->p_len > 0) {
            struct conn *c = take_idle(w);
            if (!c)
                break;
            int64_t due = w->pending[w->p_head];
            w->p_head = (w->p_head + 1) % w->p_cap;
            w->p_len--;
            conn_issue(w, c, due, c->ready_ns, now);
        }
        break;
    case LOAD_SINGLE_STREAM:
    case LOAD_OFFLINE:
        while (w->n_idle > 0) {
            if (!want_more(w, now)) {
                stop_issuing(w, now);
                break;
            }
            if (now < w->connect_fail_until)
                break; /* the server refused a connection just now: try again in a while */
            struct conn *c = take_idle(w);
            if (!c)
                break;
            w->r.issued++;
            conn_issue(w, c, now, now, now);
        }
        break;
    case LOAD_MULTI_STREAM:
        if (w->ms_left == 0 && w->n_idle >= cfg->samples_per_query) {
            if (!want_more(w, now)) {
                stop_issuing(w, now);
                break;
            }
            w->r.issued++;
            w->ms_left = cfg->samples_per_query;
            w->ms_failed = false;
            w->ms_due = now;
            for (int i = 0; i < cfg->samples_per_query; i++) {
                struct conn *c = take_idle(w);
                if (c)
                    conn_issue(w, c, now, now, now);
            }
        }
        break;
    }
}

/* A request ended (ok: a 2xx response came whole). */
static void query_done(struct worker *w, struct conn *c, int64_t now, bool ok)
{
    w->in_flight--;
    if (ok)
        hist_record(&w->r.response, now - c->send_ns);
    if (w->cfg->scenario == LOAD_MULTI_STREAM) {
        if (!ok)
            w->ms_failed = true;
        if (--w->ms_left == 0)
            record_query(w, w->ms_due, now, !w->ms_failed);
    } else {
        record_query(w, c->due_ns, now, ok);
    }
    c->ready_ns = now;
    if (c->state == CONN_BUSY)
        make_idle(w, c);
    else if (c->state == CONN_CLOSED)
        w->idle[w->n_idle++] = (int)(c - w->conns);
    c->req = NULL;
}

/* ---- responses ---- */

static int on_complete(http_parser *p)
{
    struct conn *c = p->data;
    c->complete = true;
    http_parser_pause(p, 1); /* one response per request, never pipelined */
    return 0;
}

static const http_parser_settings parser_settings = {.on_message_complete = on_complete};

static void conn_failed(struct worker *w, struct conn *c, int64_t now, uint64_t *kind)
{
    conn_close(c);
    if (c->req) {
        (*kind)++;
        query_done(w, c, now, false);
    }
}

static void conn_readable(struct worker *w, struct conn *c, int64_t now)
{
    for (;;) {
        ssize_t k = recv(c->fd, w->buf, RECV_BUF, 0);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN)
                return;
            conn_failed(w, c, now, &w->r.errors.reset);
            return;
        }
        if (k == 0) { /* closed by the server: an error only with a request in flight */
            if (c->req)
                http_parser_execute(&c->parser, &parser_settings, NULL, 0); /* EOF ends a body */
            if (c->req && c->complete && c->state == CONN_BUSY) {
                unsigned st = c->parser.status_code;
                bool ok = st >= 200 && st < 300;
                if (!ok)
                    w->r.errors.status[st < LOAD_STATUS_CODES ? st : 0]++;
                conn_close(c);
                query_done(w, c, now, ok);
                return;
            }
            conn_failed(w, c, now, &w->r.errors.reset);
            return;
        }
        w->r.bytes_received += (uint64_t)k;
        if (!c->req) { /* bytes nobody asked for */
            conn_failed(w, c, now, &w->r.errors.protocol);
            return;
        }
        size_t used = http_parser_execute(&c->parser, &parser_settings, w->buf, (size_t)k);
        enum http_errno e = HTTP_PARSER_ERRNO(&c->parser);
        if (e != HPE_OK && e != HPE_PAUSED) {
            conn_failed(w, c, now, &w->r.errors.protocol);
            return;
        }
        if (c->complete) {
            unsigned st = c->parser.status_code;
            bool ok = st >= 200 && st < 300;
            if (!ok)
                w->r.errors.status[st < LOAD_STATUS_CODES ? st : 0]++;
            bool keep = http_should_keep_alive(&c->parser) && used == (size_t)k;
            if (!keep)
                conn_close(c);
            query_done(w, c, now, ok);
            return;
        }
    }
}

static void conn_event(struct worker *w, struct conn *c, uint32_t ev, int64_t now)
{
    if (c->state == CONN_CONNECTING) {
        int soerr = 0;
        socklen_t len = sizeof soerr;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &soerr, &len);
        if (soerr || (ev & (EPOLLERR | EPOLLHUP))) {
            snprintf(w->err, sizeof w->err, "%s", strerror(soerr ? soerr : ECONNREFUSED));
            w->connect_fail_until = now + 10000000; /* 10 ms before the next try */
            conn_failed(w, c, now, &w->r.errors.connect);
            return;
        }
        if (!(ev & EPOLLOUT))
            return;
        if (c->req) {
            c->state = CONN_BUSY;
            if (!conn_flush(c, now))
                conn_failed(w, c, now, &w->r.errors.reset);
        } else {
            conn_want_write(c, false);
            make_idle(w, c);
        }
        return;
    }
    if (c->state == CONN_BUSY && (ev & EPOLLOUT) && c->sent < c->req->len) {
        if (!conn_flush(c, now)) {
            conn_failed(w, c, now, &w->r.errors.reset);
            return;
        }
    }
    if (ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
        if (c->state == CONN_IDLE && !(ev & EPOLLIN)) {
            conn_close(c); /* the server closed an idle connection: reopen when needed */
            return;
        }
        if (c->fd >= 0)
            conn_readable(w, c, now);
    }
}

static void scan_timeouts(struct worker *w, int64_t now)
{
    int64_t limit = seconds_ns(w->cfg->request_timeout_s);
    for (int i = 0; i < w->n_conns; i++) {
        struct conn *c = &w->conns[i];
        if (c->req && now - c->send_ns > limit)
            conn_failed(w, c, now, &w->r.errors.timeout);
    }
}

/* Sets the worker's timer to at (absolute), unless it is set there already and has not fired:
 * most loop passes wake for a connection, not the timer, and keep the same deadline. */
static void arm_timer(struct worker *w, int64_t at)
{
    if (at == w->armed_at)
        return;
    w->armed_at = at;
    struct itimerspec its = {0};
    if (at != INT64_MAX) {
        its.it_value.tv_sec = at / 1000000000LL;
        its.it_value.tv_nsec = at % 1000000000LL;
        if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
            its.it_value.tv_nsec = 1;
    }
    timerfd_settime(w->tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* LoadGen's percentile of sorted values (histogram.h's rank rule). */
static int64_t rank_value(const int64_t *v, size_t n, double p)
{
    return v[hist_rank(n, p) - 1];
}

static void build_seconds(struct worker *w)
{
    w->r.n_seconds = w->n_acc;
    w->r.seconds = xcalloc(w->n_acc ? w->n_acc : 1, sizeof *w->r.seconds);
    for (size_t i = 0; i < w->n_acc; i++) {
        struct second_acc *a = &w->acc[i];
        struct load_second *s = &w->r.seconds[i];
        s->completed = a->n;
        s->failed = a->failed;
        if (a->n) {
            qsort(a->v, a->n, sizeof *a->v, cmp_i64);
            s->p50_ns = rank_value(a->v, a->n, 50);
            s->p90_ns = rank_value(a->v, a->n, 90);
            s->p99_ns = rank_value(a->v, a->n, 99);
            s->max_ns = a->v[a->n - 1];
        }
        free(a->v);
    }
    free(w->acc);
    w->acc = NULL;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    const struct load_config *cfg = w->cfg;
    struct timespec cpu0, cpu1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
    struct epoll_event evs[MAX_EVENTS];
    int64_t drain_until = INT64_MAX, next_scan = 0;

    w->armed_at = INT64_MIN;
    w->t0 = mono_ns();
    w->r.start_ns = w->t0;
    w->min_end = w->t0 + seconds_ns(cfg->min_duration_s);
    w->issuing = true;
    if (cfg->scenario == LOAD_SERVER) {
        schedule_init(&w->sched, cfg->qps / cfg->threads, cfg->seed + (uint64_t)w->index, w->t0);
        w->next_due = schedule_next(&w->sched);
    } else {
        w->next_due = INT64_MAX;
    }
    for (;;) {
        int64_t now = mono_ns();
        dispatch(w, now);
        if (!w->issuing && drain_until == INT64_MAX)
            drain_until = now + seconds_ns(cfg->request_timeout_s) + 100000000;
        if (!w->issuing && (w->in_flight == 0 || now >= drain_until))
            break;
        if (now >= next_scan) {
            scan_timeouts(w, now);
            next_scan = now + TIMEOUT_SCAN_NS;
        }
        int64_t wake = next_scan;
        if (w->next_due < wake)
            wake = w->next_due;
        if (w->issuing && now < w->min_end && w->min_end < wake)
            wake = w->min_end;
        if (drain_until < wake)
            wake = drain_until;
        if (w->connect_fail_until > now && w->connect_fail_until < wake)
            wake = w->connect_fail_until;
        arm_timer(w, wake);
        int n = epoll_wait(w->epfd, evs, MAX_EVENTS, -1);
        now = mono_ns();
        for (int i = 0; i < n; i++) {
            if (evs[i].data.ptr == NULL) {
                uint64_t ticks;
                ssize_t rd = read(w->tfd, &ticks, sizeof ticks);
                (void)rd;
                w->armed_at = INT64_MIN;
                continue;
            }
            conn_event(w, evs[i].data.ptr, evs[i].events, now);
        }
    }
    int64_t end = mono_ns();
    stop_issuing(w, end);
    for (int i = 0; i < w->n_conns; i++) { /* what the drain gave up on */
        struct conn *c = &w->conns[i];
        if (c->req)
            conn_failed(w, c, end, &w->r.errors.timeout);
        conn_close(c);
    }
    while (w->p_len > 0) { /* server: due but never sent */
        w->r.errors.timeout++;
        record_query(w, w->pending[w->p_head], end, false);
        w->p_head = (w->p_head + 1) % w->p_cap;
        w->p_len--;
    }
    w->r.end_ns = end;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1);
    w->r.client_cpu_s = (double)(cpu1.tv_sec - cpu0.tv_sec) + (double)(cpu1.tv_nsec - cpu0.tv_nsec) * 1e-9;
    w->r.interrupted = cfg->abort && *cfg->abort;
    build_seconds(w);
    return NULL;
}

/* Opens the worker's first connections (blocking briefly for each, so that a server that is
 * not there is reported before the run starts). Returns 0, or -1 with a message in err. */
static int worker_open(struct worker *w, char *err, size_t errlen)
{
    w->epfd = epoll_create1(EPOLL_CLOEXEC);
    w->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (w->epfd < 0 || w->tfd < 0) {
        snprintf(err, errlen, "cannot create the generator's event loop: %s", strerror(errno));
        return -1;
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->tfd, &ev);
    w->buf = xmalloc(RECV_BUF);
    w->idle = xcalloc((size_t)w->n_conns, sizeof *w->idle);
    for (int i = 0; i < w->n_conns; i++) {
        struct conn *c = &w->conns[i];
        c->fd = -1;
        c->w = w;
        int rc = conn_open(c);
        if (rc < 0) {
            snprintf(err, errlen, "cannot connect to %s: %s", w->cfg->address, strerror(-rc));
            return -1;
        }
        /* wait for the handshake: at most 5 s */
        int64_t give_up = mono_ns() + 5000000000LL;
        for (;;) {
            struct epoll_event got[4];
            int n = epoll_wait(w->epfd, got, 4, 100);
            bool done = false;
            for (int k = 0; k < n; k++) {
                if (got[k].data.ptr != c)
                    continue;
                int soerr = 0;
                socklen_t len = sizeof soerr;
                getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &soerr, &len);
                if (soerr || (got[k].events & (EPOLLERR | EPOLLHUP))) {
                    snprintf(err, errlen, "cannot connect to %s: %s", w->cfg->address,
                             strerror(soerr ? soerr : ECONNREFUSED));
                    return -1;
                }
                done = (got[k].events & EPOLLOUT) != 0;
            }
            if (done)
                break;
            if (mono_ns() > give_up) {
                snprintf(err, errlen, "cannot connect to %s: no answer within 5 s", w->cfg->address);
                return -1;
            }
        }
        conn_want_write(c, false);
        make_idle(w, c);
    }
    return 0;
}

static void worker_free(struct worker *w)
{
    for (int i = 0; i < w->n_conns; i++)
        if (w->conns[i].fd >= 0)
            close(w->conns[i].fd);
    if (w->epfd >= 0)
        close(w->epfd);
    if (w->tfd >= 0)
        close(w->tfd);
    free(w->conns);
    free(w->idle);
    free(w->pending);
    free(w->buf);
    free(w->r.seconds);
    if (w->acc) {
        for (size_t i = 0; i < w->cap_acc; i++)
            free(w->acc[i].v);
        free(w->acc);
    }
}

int load_execute(const struct load_config *cfg, struct load_run *run, char *err, size_t errlen)
{
    memset(run, 0, sizeof *run);
    hist_reset(&run->latency);
    hist_reset(&run->response);
    hist_reset(&run->send_lag);
    int threads = cfg->threads > 0 ? cfg->threads : 1;
    if (threads > cfg->connections)
        threads = cfg->connections;
    struct worker *ws = xcalloc((size_t)threads, sizeof *ws);
    int rc = 0;
    for (int t = 0; t < threads; t++) {
        struct worker *w = &ws[t];
        w->cfg = cfg;
        w->index = t;
        w->epfd = w->tfd = -1;
        w->n_conns = cfg->connections / threads + (t < cfg->connections % threads);
        w->conns = xcalloc((size_t)w->n_conns, sizeof *w->conns);
        for (int i = 0; i < w->n_conns; i++)
            w->conns[i].fd = -1;
        w->quota = cfg->min_queries / (uint64_t)threads + ((uint64_t)t < cfg->min_queries % (uint64_t)threads);
        hist_reset(&w->r.latency);
        hist_reset(&w->r.response);
        hist_reset(&w->r.send_lag);
        if (rc == 0 && worker_open(w, err, errlen) < 0)
            rc = -1;
    }
    pthread_t *tids = xcalloc((size_t)threads, sizeof *tids);
    int started = 0;
    if (rc == 0) {
        run->start_unix_ns = unix_ns();
        for (; started < threads; started++)
            if (pthread_create(&tids[started], NULL, worker_main, &ws[started]) != 0) {
                snprintf(err, errlen, "cannot start generator thread %d: %s", started, strerror(errno));
                rc = -1;
                break;
            }
    }
    for (int t = 0; t < started; t++)
        pthread_join(tids[t], NULL);
    free(tids);
    if (rc == 0) {
        run->scenario = cfg->scenario;
        run->target_qps = cfg->scenario == LOAD_SERVER ? cfg->qps : 0;
        run->start_ns = INT64_MAX;
        for (int t = 0; t < threads; t++)
            if (ws[t].r.start_ns < run->start_ns)
                run->start_ns = ws[t].r.start_ns;
        double wall = 0;
        for (int t = 0; t < threads; t++) {
            const struct load_run *s = &ws[t].r;
            load_run_merge(run, s);
        }
        wall = (double)(run->end_ns - run->start_ns) * 1e-9;
        for (int t = 0; t < threads; t++)
            if (wall > 0 && ws[t].r.client_cpu_s / wall > run->client_busiest_ratio)
                run->client_busiest_ratio = ws[t].r.client_cpu_s / wall;
    }
    for (int t = 0; t < threads; t++)
        worker_free(&ws[t]);
    free(ws);
    return rc;
}
