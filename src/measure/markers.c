/* markers: marker socket receiver thread (see markers.h).
 *
 * Control messages travel through the same socket as the events, from the controlling thread:
 * a datagram is queued in order, so when the thread sees our "fence" every event sent before
 * it has been stored. They start with byte 0x01, which no valid event can, and carry a random
 * key so that a workload cannot forge them.
 *
 * Every datagram carries its sender's credentials (SO_PASSCRED): one from a process outside
 * mlbench's process tree (senders.h) is foreign, counted and otherwise ignored, so that a
 * process that learnt the socket's path cannot add stages, counters or metadata to a run.
 *
 * With rings offered (rings.h), the same thread also reads the rings the workload's threads
 * hand over on the socket (SCM_RIGHTS): every RING_DRAIN_NS while any is mapped, and at the
 * end of each run, after the fence. */
#include "measure/markers.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "measure/rings.h"
#include "measure/senders.h"
#include "mlbench/marker_ring.h"
#include "util/clock.h"
#include "util/fsx.h"
#include "util/xalloc.h"


struct marker_receiver {
    int fd;      /* bound socket, read by the thread */
    int ctl_fd;  /* connected socket for control messages */
    char ctl_fence[32], ctl_stop[32]; /* control messages with the key */
    char dir[256];
    struct sockaddr_un addr;
    pthread_t thread;
    struct senders *senders; /* owned by the thread */
    struct ring_set *rings;  /* NULL: rings not offered; else guarded by mu */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* guarded by mu */
    struct event_log *log;
    uint64_t outside;  /* well-formed or malformed, from the tree, while no run */
    uint64_t foreign;  /* from outside the tree, in runs and between them */
    pid_t first_foreign_pid;
    uint64_t fences_seen;
    char current[128];
    marker_listener listener;
    void *listener_arg;
};

/* Counts a datagram from outside the tree; r->mu is held. */
static void foreign_locked(struct marker_receiver *r, pid_t pid)
{
    if (!r->foreign++)
        r->first_foreign_pid = pid;
    if (r->log)
        event_log_add_foreign(r->log, pid);
}

/* Stores one parsed event, or a malformed datagram buf[0..len) (why set); r->mu is held. */
static void store_locked(struct marker_receiver *r, const struct marker_token *tok,
                         const char *why, const char *buf, size_t len)
{
    if (!why && r->listener)
        r->listener(r->listener_arg, tok);
    if (!r->log) {
        r->outside++;
    } else if (why) {
        event_log_add_malformed(r->log, why, buf, len < MARKER_MAX_EVENT ? len : MARKER_MAX_EVENT);
    } else {
        event_log_add(r->log, tok);
        if (tok->kind == MARKER_BEGIN && tok->name_len < sizeof r->current) {
            memcpy(r->current, tok->name, tok->name_len);
            r->current[tok->name_len] = '\0';
        } else if (tok->kind == MARKER_END && strlen(r->current) == tok->name_len &&
                   memcmp(r->current, tok->name, tok->name_len) == 0) {
            r->current[0] = '\0';
        }
    }
}

/* The rings' sink: records as events, faults as malformed datagrams; r->mu is held. */
static void ring_event(void *arg, const struct marker_token *tok)
{
    store_locked(arg, tok, NULL, NULL, 0);
}

static void ring_malformed(void *arg, const char *why, const char *text, size_t len)
{
    struct marker_token none = {0};
    store_locked(arg, &none, why, text, len);
}

/* Events the run still keeps; none outside a run (only counted), unless a listener wants them. */
static uint64_t ring_room(void *arg)
{
    const struct marker_receiver *r = arg;
    if (r->listener)
        return UINT64_MAX;
    return r->log && r->log->n < EVENT_LOG_MAX_EVENTS ? EVENT_LOG_MAX_EVENTS - r->log->n : 0;
}

/* n events beyond ring_room: counted as store_locked counts them, without being read. */
static void ring_skip(void *arg, uint64_t n)
{
    struct marker_receiver *r = arg;
    if (r->log)
        r->log->dropped += n;
    else
        r->outside += n;
}

/* Stores one datagram of process sender (its credentials), fd the descriptor it carried (-1:
 * none; always closed or kept by the rings); r->mu is held. */
static void handle_locked(struct marker_receiver *r, const char *buf, size_t len, int fd,
                          pid_t sender)
{
    struct marker_token tok;
    const char *why = marker_parse(buf, len, &tok);
    if (!why && r->rings) {
        struct ring_sink sink = {r, ring_event, ring_malformed, ring_room, ring_skip};
        if (rings_control(r->rings, &tok, fd, sender, &sink))
            return;
    } else if (fd >= 0) {
        close(fd);
    }
    store_locked(r, &tok, why, buf, len);
}

void markers_store(struct marker_receiver *r, const struct marker_token *tok, const char *why,
                   const char *buf, size_t len)
{
    pthread_mutex_lock(&r->mu);
    store_locked(r, tok, why, buf, len);
    pthread_mutex_unlock(&r->mu);
}

void markers_store_host(struct marker_receiver *r, struct host_samples *h)
{
    pthread_mutex_lock(&r->mu);
    if (r->log)
        event_log_add_host(r->log, h);
    else
        host_samples_free(h);
    pthread_mutex_unlock(&r->mu);
}

static int is_ctl(const char *buf, size_t len, const char *ctl)
{
    return len == strlen(ctl) && memcmp(buf, ctl, len) == 0;
}

#define BATCH 32 /* datagrams taken per system call */
#define FDS_MAX 4 /* descriptors taken with one datagram (a ring announcement carries one) */
#define RING_DRAIN_NS 2000000 /* how often rings are read while any is mapped */
#define RING_DRAIN_BUSY_NS 250000 /* ... and while they fill fast (rings_busy) */

/* The sender's pid from SCM_CREDENTIALS (0 when the datagram carries none), and the first
 * descriptor it carried into *fd (-1: none; any others are closed). */
static pid_t sender_pid(struct msghdr *h, int *fd)
{
    pid_t pid = 0;
    *fd = -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR(h, c)) {
        if (c->cmsg_level != SOL_SOCKET)
            continue;
        if (c->cmsg_type == SCM_CREDENTIALS && c->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
            struct ucred u;
            memcpy(&u, CMSG_DATA(c), sizeof u);
            pid = u.pid;
        } else if (c->cmsg_type == SCM_RIGHTS) {
            size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < n; i++) {
                int f;
                memcpy(&f, CMSG_DATA(c) + i * sizeof f, sizeof f);
                if (*fd < 0)
                    *fd = f;
                else
                    close(f);
            }
        }
    }
    return pid;
}

/* The receiver thread's buffers (one receiver per process). A datagram longer than a buffer is
 * truncated and flagged MSG_TRUNC: it is then reported as "overlong". */
static char g_buf[BATCH][MARKER_MAX_EVENT + 1];
static union {
    char bytes[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(FDS_MAX * sizeof(int))];
    struct cmsghdr align;
} g_ctl[BATCH];

/* Receives and handles one batch of datagrams. Returns how many, -1 when the socket is gone or
 * the stop message came (the thread ends), 0 when none was waiting (flags MSG_DONTWAIT). */
static int receive_batch(struct marker_receiver *r, int flags)
{
    struct mmsghdr msgs[BATCH];
    struct iovec iov[BATCH];
    pid_t sender[BATCH];
    int fd[BATCH];
    bool inside[BATCH];

    for (int i = 0; i < BATCH; i++) {
        iov[i] = (struct iovec){.iov_base = g_buf[i], .iov_len = sizeof g_buf[i]};
        msgs[i] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[i], .msg_iovlen = 1,
                                               .msg_control = g_ctl[i].bytes,
                                               .msg_controllen = sizeof g_ctl[i].bytes}};
    }
    /* Batching matters when a workload sends fast: each wake-up of this thread costs the
     * sender a cross-CPU interrupt, and senders block once 10 datagrams are queued. */
    int n;
    while ((n = recvmmsg(r->fd, msgs, BATCH, flags | MSG_CMSG_CLOEXEC, NULL)) < 0 &&
           errno == EINTR)
        ;
    if (n < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
    /* Senders are checked before the lock is taken: a check may read /proc. One clock
     * reading serves the batch. */
    int64_t now = mono_ns();
    for (int i = 0; i < n; i++) {
        sender[i] = sender_pid(&msgs[i].msg_hdr, &fd[i]);
        inside[i] = senders_accept(r->senders, sender[i], now);
    }
    pthread_mutex_lock(&r->mu);
    for (int i = 0; i < n; i++) {
        size_t len = msgs[i].msg_len;
        if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC)
            len = MARKER_MAX_EVENT + 1;
        if (!inside[i]) { /* a control message from outside is foreign too */
            if (fd[i] >= 0)
                close(fd[i]);
            foreign_locked(r, sender[i]);
            continue;
        }
        if (is_ctl(g_buf[i], len, r->ctl_stop)) {
            for (int k = i; k < n; k++)
                if (fd[k] >= 0)
                    close(fd[k]);
            pthread_mutex_unlock(&r->mu);
            return -1;
        }
        if (is_ctl(g_buf[i], len, r->ctl_fence)) {
            if (fd[i] >= 0)
                close(fd[i]);
            r->fences_seen++;
            pthread_cond_broadcast(&r->cv);
            continue;
        }
        handle_locked(r, g_buf[i], len, fd[i], sender[i]);
    }
    pthread_mutex_unlock(&r->mu);
    return n;
}

/* Reads the rings; r->mu is held. A record whose name is announced in a datagram not read yet
 * makes the socket be read to the end first. */
static void drain_rings_locked(struct marker_receiver *r, bool *again)
{
    struct ring_sink sink = {r, ring_event, ring_malformed, ring_room, ring_skip};
    *again = rings_drain(r->rings, &sink, mono_ns(), *again) && !*again;
}

static void *receiver_main(void *arg)
{
    struct marker_receiver *r = arg;
    bool again = false; /* a ring waits for a name: read the whole socket, then the rings */
    for (;;) {
        pthread_mutex_lock(&r->mu);
        bool polling = r->rings && rings_count(r->rings) > 0;
        bool busy = polling && rings_busy(r->rings);
        pthread_mutex_unlock(&r->mu);
        int n;
        if (!polling) {
            n = receive_batch(r, MSG_WAITFORONE);
        } else {
            if (!again) {
                struct pollfd p = {.fd = r->fd, .events = POLLIN};
                struct timespec wait = {0, busy ? RING_DRAIN_BUSY_NS : RING_DRAIN_NS};
                (void)ppoll(&p, 1, &wait, NULL);
            }
            while ((n = receive_batch(r, MSG_DONTWAIT)) == BATCH && again)
                ;
        }
        if (n < 0)
            return NULL;
        if (polling || (r->rings && again)) {
            pthread_mutex_lock(&r->mu);
            drain_rings_locked(r, &again);
            pthread_mutex_unlock(&r->mu);
        }
    }
}

static int send_ctl(struct marker_receiver *r, const char *msg)
{
    ssize_t n;
    do
        n = send(r->ctl_fd, msg, strlen(msg), 0);
    while (n < 0 && errno == EINTR);
    return n < 0 ? -1 : 0;
}

struct marker_receiver *markers_start(bool rings, char *err, size_t errlen)
{
    struct marker_receiver *r = xcalloc(1, sizeof *r);
    if (rings)
        r->rings = rings_new();
    r->fd = r->ctl_fd = -1;
    unsigned long long key = 0;
    if (getrandom(&key, sizeof key, 0) != (ssize_t)sizeof key)
        key = (unsigned long long)getpid() * 2654435761u ^ (unsigned long long)time(NULL);
    snprintf(r->ctl_fence, sizeof r->ctl_fence, "\001F%016llx", key);
    snprintf(r->ctl_stop, sizeof r->ctl_stop, "\001S%016llx", key);
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);

    /* sun_path holds 108 bytes: fall back to /tmp when TMPDIR is too long. */
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp || strlen(tmp) > 60)
        tmp = "/tmp";
    fsx_clean_stale(tmp, "mlbench-", "marker.sock"); /* of receivers killed with mlbench */
    snprintf(r->dir, sizeof r->dir, "%s/mlbench-%ld-XXXXXX", tmp, (long)getpid());
    if (!mkdtemp(r->dir)) {
        snprintf(err, errlen, "cannot create a directory for the marker socket in %s: %s "
                 "(set TMPDIR to a writable directory)", tmp, strerror(errno));
        r->dir[0] = '\0';
        goto fail;
    }
    r->addr.sun_family = AF_UNIX;
    if (strlen(r->dir) + sizeof "/marker.sock" > sizeof r->addr.sun_path) {
        snprintf(err, errlen, "marker socket path in %s is too long (set TMPDIR to a short "
                 "directory)", r->dir);
        goto fail;
    }
    memcpy(r->addr.sun_path, r->dir, strlen(r->dir));
    memcpy(r->addr.sun_path + strlen(r->dir), "/marker.sock", sizeof "/marker.sock");

    r->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (r->fd < 0 || bind(r->fd, (struct sockaddr *)&r->addr, sizeof r->addr) < 0) {
        snprintf(err, errlen, "cannot create the marker socket %s: %s", r->addr.sun_path,
                 strerror(errno));
        goto fail;
    }
    /* A deep queue lets bursts of events through without blocking the workload for long. */
    int rcvbuf = 8 << 20;
    setsockopt(r->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    /* Before any workload exists: the kernel then attaches every sender's credentials. */
    int on = 1;
    if (setsockopt(r->fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) < 0) {
        snprintf(err, errlen, "cannot ask for the credentials of marker senders: %s",
                 strerror(errno));
        goto fail;
    }
    if (!(r->senders = senders_new("/proc", getpid()))) {
        snprintf(err, errlen, "cannot check marker senders in /proc");
        goto fail;
    }

    r->ctl_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (r->ctl_fd < 0 || connect(r->ctl_fd, (struct sockaddr *)&r->addr, sizeof r->addr) < 0) {
        snprintf(err, errlen, "cannot connect to the marker socket: %s", strerror(errno));
        goto fail;
    }
    int rc = pthread_create(&r->thread, NULL, receiver_main, r);
    if (rc) {
        snprintf(err, errlen, "cannot start the marker thread: %s", strerror(rc));
        goto fail;
    }
    return r;

fail:
    if (r->fd >= 0)
        close(r->fd);
    if (r->ctl_fd >= 0)
        close(r->ctl_fd);
    if (r->addr.sun_path[0])
        unlink(r->addr.sun_path);
    if (r->dir[0])
        rmdir(r->dir);
    senders_free(r->senders);
    rings_free(r->rings);
    free(r);
    return NULL;
}

bool markers_rings_offered(const struct marker_receiver *r)
{
    return r->rings != NULL;
}

int markers_transport_from_env(bool *rings, char *err, size_t errlen)
{
    const char *t = getenv(MARKERS_TRANSPORT_ENV);
    if (!t || !*t || !strcmp(t, "ring")) {
        *rings = true;
    } else if (!strcmp(t, "datagram")) {
        *rings = false;
    } else {
        snprintf(err, errlen, "%s=%.64s: expected \"ring\" (the default) or \"datagram\"",
                 MARKERS_TRANSPORT_ENV, t);
        return -1;
    }
    const char *b = getenv(MLBENCH_MARKER_RING_BYTES_ENV);
    if (b && *b) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(b, &end, 10);
        if (*b < '0' || *b > '9' || errno || *end || v < MLB_RING_MIN_BYTES ||
            v > MLB_RING_MAX_BYTES) {
            snprintf(err, errlen, "%s=%.64s: expected a number of bytes from %u to %u (it is "
                     "rounded down to a power of two)", MLBENCH_MARKER_RING_BYTES_ENV, b,
                     MLB_RING_MIN_BYTES, MLB_RING_MAX_BYTES);
            return -1;
        }
    }
    return 0;
}

const char *markers_path(const struct marker_receiver *r)
{
    return r->addr.sun_path;
}

void markers_begin_run(struct marker_receiver *r, struct event_log *log)
{
    pthread_mutex_lock(&r->mu);
    if (r->rings) { /* what is in the rings now came before the run */
        bool strict = true;
        drain_rings_locked(r, &strict);
        rings_begin_run(r->rings);
        log->rings_offered = true;
    }
    r->log = log;
    r->current[0] = '\0';
    pthread_mutex_unlock(&r->mu);
}

/* Sends a fence and waits for it with r->mu held on return. */
static void fence_locked(struct marker_receiver *r)
{
    pthread_mutex_lock(&r->mu);
    uint64_t want = r->fences_seen + 1;
    pthread_mutex_unlock(&r->mu);

    int sent = send_ctl(r, r->ctl_fence) == 0;
    pthread_mutex_lock(&r->mu);
    while (sent && r->fences_seen < want)
        pthread_cond_wait(&r->cv, &r->mu);
}

void markers_sync(struct marker_receiver *r)
{
    fence_locked(r);
    pthread_mutex_unlock(&r->mu);
}

void markers_end_run(struct marker_receiver *r)
{
    fence_locked(r);
    if (r->rings) {
        /* Every name of a record written before the fence was announced before it. */
        bool strict = true;
        drain_rings_locked(r, &strict);
        struct ring_sink sink = {r, ring_event, ring_malformed, ring_room, ring_skip};
        rings_end_run(r->rings, r->log, &sink);
    }
    if (r->log)
        event_log_sort(r->log);
    r->log = NULL;
    r->current[0] = '\0';
    pthread_mutex_unlock(&r->mu);
}

void markers_set_listener(struct marker_receiver *r, marker_listener fn, void *arg)
{
    pthread_mutex_lock(&r->mu);
    r->listener = fn;
    r->listener_arg = arg;
    pthread_mutex_unlock(&r->mu);
}

void markers_current_stage(struct marker_receiver *r, char *buf, size_t len)
{
    pthread_mutex_lock(&r->mu);
    snprintf(buf, len, "%s", r->current);
    pthread_mutex_unlock(&r->mu);
}

uint64_t markers_outside(struct marker_receiver *r)
{
    pthread_mutex_lock(&r->mu);
    uint64_t n = r->outside;
    pthread_mutex_unlock(&r->mu);
    return n;
}

uint64_t markers_foreign(struct marker_receiver *r, pid_t *first_pid)
{
    pthread_mutex_lock(&r->mu);
    uint64_t n = r->foreign;
    if (first_pid)
        *first_pid = r->first_foreign_pid;
    pthread_mutex_unlock(&r->mu);
    return n;
}

void markers_stop(struct marker_receiver *r)
{
    if (!r)
        return;
    if (send_ctl(r, r->ctl_stop) == 0)
        pthread_join(r->thread, NULL);
    else
        pthread_cancel(r->thread), pthread_join(r->thread, NULL);
    close(r->fd);
    close(r->ctl_fd);
    unlink(r->addr.sun_path);
    rmdir(r->dir);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    senders_free(r->senders);
    rings_free(r->rings);
    free(r);
}
