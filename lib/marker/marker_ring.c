/* marker_ring: the shared-memory transport of libmlbench_marker (include/mlbench/marker_ring.h,
 * docs/markers.md "Ring transport").
 *
 * Each writer thread owns one single-producer ring: a sealed memfd, handed to mlbench once over
 * the marker socket, then written with plain stores and one release store per event. Names are
 * interned once per process (an "mlbench.name" datagram before their first use); a small
 * direct-mapped cache per thread finds a name's id without a lock. The hot path is a hash of
 * the name, one clock read (vDSO) and a 32-byte record: no system call, no lock, no wait. A
 * full ring drops the event and counts it in the ring's header, which mlbench reports. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "mlbench/marker.h"
#include "mlbench/marker_ring.h"
#include "marker_private.h"

/* The longest name a ring event takes, the same bound as the Python client's: the announcement
 * "M <t_ns> <pid> <tid> mlbench.name <id> <name>" must fit in one datagram. A longer (valid)
 * name goes as a datagram, so what is accepted never depends on the transport. */
#define RING_NAME_MAX (MLBENCH_MARKER_MAX_EVENT - 45 - 1 - 24)
#define CACHE_SLOTS 64 /* per thread, direct-mapped by hash */

_Static_assert(sizeof(struct mlb_ring_header) == MLB_RING_HEADER_BYTES, "ring header layout");
_Static_assert(sizeof(struct mlb_ring_record) == MLB_RING_RECORD_BYTES, "ring record layout");

struct wring {
    struct mlb_ring_header *h;
    struct mlb_ring_record *rec;
    size_t map_bytes;
    uint64_t mask;      /* capacity - 1 */
    uint64_t head;      /* our copy of h->head */
    uint64_t tail_seen; /* h->tail when last read: re-read only when the ring looks full */
    uint64_t dropped;   /* our copy of h->dropped */
};

struct cache_slot {
    const char *s; /* the interned copy (g_names), NULL = empty */
    uint64_t hash;
    uint32_t id;
};

/* ---- Per thread ---- */
static _Thread_local struct wring *t_ring;
static _Thread_local int t_ring_state; /* 0: not tried, 1: t_ring ready, -1: datagrams */
static _Thread_local struct cache_slot t_cache[CACHE_SLOTS];

/* ---- Per process ---- */
static size_t g_ring_bytes = MLB_RING_DEFAULT_BYTES; /* of records */
static pthread_key_t g_ring_key;  /* destructor unmaps a thread's ring when it exits */
static pthread_mutex_t g_names_mu = PTHREAD_MUTEX_INITIALIZER;
struct name {
    char *s;
    uint64_t hash;
    uint32_t id;
};
static struct name *g_names; /* open addressing by hash, g_names_slots a power of two */
static size_t g_names_n, g_names_slots;

/* FNV-1a over a NUL-terminated string; *len gets its length. */
static inline uint64_t name_hash(const char *s, size_t *len)
{
    uint64_t h = 1469598103934665603ull;
    const unsigned char *p = (const unsigned char *)s;
    for (; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    *len = (size_t)((const char *)p - s);
    return h;
}

static void ring_free(struct wring *w)
{
    munmap(w->h, w->map_bytes);
    free(w);
}

static void ring_thread_exit(void *p)
{
    ring_free(p);
    t_ring = NULL;
    t_ring_state = -1; /* a later event of this thread (another destructor) goes as a datagram */
}

bool marker_ring_setup(void)
{
    const char *on = getenv(MLBENCH_MARKER_RING_ENV);
    if (on == NULL || strcmp(on, "1") != 0)
        return false;
    /* mlbench has checked the variable; a bad value here (set by the workload itself) keeps
     * the default rather than failing the workload. */
    const char *s = getenv(MLBENCH_MARKER_RING_BYTES_ENV);
    if (s != NULL && *s >= '0' && *s <= '9') {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno == 0 && *end == '\0' && v >= MLB_RING_MIN_BYTES) {
            if (v > MLB_RING_MAX_BYTES)
                v = MLB_RING_MAX_BYTES;
            size_t b = MLB_RING_MIN_BYTES;
            while (b * 2 <= v)
                b *= 2;
            g_ring_bytes = b;
        }
    }
    return pthread_key_create(&g_ring_key, ring_thread_exit) == 0;
}

/* Sends "mlbench.ring <capacity>" with the ring's descriptor. */
static int ring_announce(int sock, int fd, uint64_t capacity)
{
    char value[24], buf[MLBENCH_MARKER_MAX_EVENT + 1];
    snprintf(value, sizeof value, "%llu", (unsigned long long)capacity);
    int len = marker_format(buf, 'M', "mlbench.ring", value);
    if (len < 0)
        return -1;
    union {
        char bytes[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    memset(&ctl, 0, sizeof ctl);
    struct iovec iov = {.iov_base = buf, .iov_len = (size_t)len};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.bytes,
                         .msg_controllen = sizeof ctl.bytes};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    ssize_t n;
    while ((n = sendmsg(sock, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    return n < 0 ? -1 : 0;
}

/* The calling thread's new ring, handed to mlbench; NULL when it cannot be made (the thread
 * then sends datagrams). */
static struct wring *ring_create(int sock)
{
    size_t map_bytes = MLB_RING_HEADER_BYTES + g_ring_bytes;
    int fd = memfd_create("mlbench-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return NULL;
    struct wring *w = NULL;
    void *map = MAP_FAILED;
    if (ftruncate(fd, (off_t)map_bytes) != 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
        goto fail;
    /* Populated now, on the thread's first event, so that no page fault lands on the hot path
     * later (one every 128 records of the first lap otherwise: 13 us each in the VM measured in
     * bench/RESULTS.md). The ring is resident from now on: it counts in the workload's RSS. */
    map = mmap(NULL, map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (map == MAP_FAILED || !(w = calloc(1, sizeof *w)))
        goto fail;
    /* Written once too: a VM whose host backs guest memory lazily charges the first write of
     * every page again (60 ns an event over the first lap, measured), populated or not. */
    memset(map, 0, map_bytes);
    if (UNLIKELY(t_marker_tid == 0))
        t_marker_tid = (pid_t)syscall(SYS_gettid);
    w->h = map;
    w->rec = (struct mlb_ring_record *)((char *)map + MLB_RING_HEADER_BYTES);
    w->map_bytes = map_bytes;
    w->mask = g_ring_bytes / MLB_RING_RECORD_BYTES - 1;
    memcpy(w->h->magic, MLB_RING_MAGIC, sizeof w->h->magic);
    w->h->version = MLB_RING_VERSION;
    w->h->record_bytes = MLB_RING_RECORD_BYTES;
    w->h->capacity = w->mask + 1;
    w->h->pid = g_marker_pid;
    w->h->tid = t_marker_tid;
    if (ring_announce(sock, fd, w->mask + 1) != 0)
        goto fail;
    close(fd); /* mlbench holds its own reference from now on */
    (void)pthread_setspecific(g_ring_key, w);
    return w;

fail:
    if (map != MAP_FAILED)
        munmap(map, map_bytes);
    free(w);
    close(fd);
    return NULL;
}

/* Whether name is valid and short enough for a ring (RING_NAME_MAX bytes). */
static bool ring_name_ok(const char *name, size_t len)
{
    if (len == 0 || len > RING_NAME_MAX)
        return false;
    for (const unsigned char *s = (const unsigned char *)name; *s; s++)
        if (*s <= 0x20 || *s == 0x7f)
            return false;
    return true;
}

/* The id of name (hash h, len bytes) in the process table, interning and announcing it when
 * new. Returns the id, 0 when the event must go as a datagram (too long, or no id left), or -1
 * with errno (invalid name, or the announcement could not be sent). */
static int64_t name_intern(int sock, const char *name, size_t len, uint64_t h,
                           const char **interned)
{
    pthread_mutex_lock(&g_names_mu);
    int64_t id = 0;
    size_t i = 0;
    if (g_names_slots) {
        for (i = h & (g_names_slots - 1); g_names[i].s; i = (i + 1) & (g_names_slots - 1))
            if (g_names[i].hash == h && strcmp(g_names[i].s, name) == 0) {
                *interned = g_names[i].s;
                id = g_names[i].id;
                goto out;
            }
    }
    if (!ring_name_ok(name, len)) {
        pthread_mutex_unlock(&g_names_mu);
        if (len > RING_NAME_MAX)
            return 0; /* marker_send says whether it is valid */
        return marker_invalid("invalid name", name, marker_name_advice);
    }
    if (g_names_n >= MLB_RING_MAX_NAMES)
        goto out; /* 0: datagrams */
    if ((g_names_n + 1) * 2 > g_names_slots) {
        size_t slots = g_names_slots ? 2 * g_names_slots : 64;
        struct name *t = calloc(slots, sizeof *t);
        if (!t)
            goto out;
        for (size_t k = 0; k < g_names_slots; k++) {
            if (!g_names[k].s)
                continue;
            size_t j = g_names[k].hash & (slots - 1);
            while (t[j].s)
                j = (j + 1) & (slots - 1);
            t[j] = g_names[k];
        }
        free(g_names);
        g_names = t;
        g_names_slots = slots;
        for (i = h & (slots - 1); g_names[i].s; i = (i + 1) & (slots - 1))
            ;
    }
    char *copy = strdup(name);
    char value[RING_NAME_MAX + 16];
    if (!copy)
        goto out;
    /* Announced before it is in the table: no thread can write a record with an id mlbench
     * has not been told, since the datagram is queued before the first such record exists. */
    snprintf(value, sizeof value, "%zu %s", g_names_n + 1, name);
    if (marker_send(sock, 'M', "mlbench.name", value) != 0) {
        int e = errno;
        free(copy);
        pthread_mutex_unlock(&g_names_mu);
        errno = e;
        return -1;
    }
    id = (int64_t)++g_names_n;
    g_names[i] = (struct name){copy, h, (uint32_t)id};
    *interned = copy;
out:
    pthread_mutex_unlock(&g_names_mu);
    return id;
}

/* Appends one record, or counts it dropped when the ring is full. */
static inline void ring_put(struct wring *w, char kind, uint32_t id, double value)
{
    uint64_t head = w->head;
    if (UNLIKELY(head - w->tail_seen > w->mask)) {
        w->tail_seen = __atomic_load_n(&w->h->tail, __ATOMIC_ACQUIRE);
        if (head - w->tail_seen > w->mask) {
            __atomic_store_n(&w->h->dropped, ++w->dropped, __ATOMIC_RELAXED);
            return;
        }
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    __atomic_store_n(&w->h->begun, head + 1, __ATOMIC_RELAXED);
    struct mlb_ring_record *r = &w->rec[head & w->mask];
    r->t_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    r->value = value;
    r->name = id;
    r->kind = (uint8_t)kind;
    __atomic_store_n(&w->h->head, head + 1, __ATOMIC_RELEASE);
    w->head = head + 1;
}

int marker_ring_event(int sock, char kind, const char *name, double value)
{
    struct wring *w = t_ring;
    if (UNLIKELY(w == NULL)) {
        if (t_ring_state < 0)
            return 1;
        if (!(w = ring_create(sock))) {
            t_ring_state = -1;
            return 1;
        }
        t_ring = w;
        t_ring_state = 1;
    }
    if (UNLIKELY(name == NULL))
        return marker_invalid("invalid name", NULL, marker_name_advice);
    size_t len;
    uint64_t h = name_hash(name, &len);
    struct cache_slot *c = &t_cache[h & (CACHE_SLOTS - 1)];
    if (LIKELY(c->s != NULL && c->hash == h && strcmp(c->s, name) == 0)) {
        ring_put(w, kind, c->id, value);
        return 0;
    }
    const char *interned = NULL;
    int64_t id = name_intern(sock, name, len, h, &interned);
    if (id <= 0)
        return id < 0 ? -1 : 1;
    *c = (struct cache_slot){interned, h, (uint32_t)id};
    ring_put(w, kind, (uint32_t)id, value);
    return 0;
}

void marker_ring_atfork_child(void)
{
    /* Only this thread lives on in the child. The parent's rings stay mapped in the child
     * (other threads' too): never written here. */
    if (t_ring) {
        (void)pthread_setspecific(g_ring_key, NULL);
        ring_free(t_ring);
    }
    t_ring = NULL;
    t_ring_state = 0;
    memset(t_cache, 0, sizeof t_cache);
    for (size_t i = 0; i < g_names_slots; i++)
        free(g_names[i].s);
    free(g_names);
    g_names = NULL;
    g_names_n = g_names_slots = 0;
    pthread_mutex_init(&g_names_mu, NULL); /* another thread may have held it at fork */
}
