/* nvtx_range: NVTX ranges as stage markers (part of libmlbench_nvtx, see nvtx_inject.c):
 * push/pop ranges on a per-thread stack (levels per domain), start/end ranges in a table by
 * id, and the raw datagram that ends a range on the thread that started it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "mlbench/marker.h"
#include "nvtx_private.h"

/* ---- Push/pop ranges: a stack per thread, levels per domain ---- */

struct frame {
    const struct nvtx_domain *domain; /* NULL: the global domain */
    size_t off, len;                  /* the name, in the stack's names[] */
    int level;                        /* 0-based depth within its domain on this thread */
    pid_t pid;                        /* the process that pushed it (a forked child inherits
                                       * its parent's open ranges, but not their stages) */
};

struct thread_stack {
    struct frame *frames;
    size_t n, cap;
    char *names; /* the frames' names, NUL-terminated, in push order */
    size_t used, names_cap;
};

static _Thread_local struct thread_stack *t_stack;

void nvtx_thread_stack_free(void *p)
{
    struct thread_stack *ts = p;
    free(ts->frames);
    free(ts->names);
    free(ts);
    t_stack = NULL;
}

static struct thread_stack *thread_stack(void)
{
    if (t_stack == NULL) {
        t_stack = nvtx_xrealloc(NULL, sizeof *t_stack);
        memset(t_stack, 0, sizeof *t_stack);
        (void)pthread_setspecific(g_stack_key, t_stack); /* only frees it at thread exit */
    }
    return t_stack;
}

/* Push: B with the message's name; returns the range's 0-based level within domain d. */
int nvtx_range_push(const struct nvtx_domain *d, const struct message *m)
{
    struct thread_stack *ts = thread_stack();
    if (ts->names_cap - ts->used < NAME_CAP + 1) {
        ts->names_cap = ts->used + NAME_CAP + 1 + ts->names_cap;
        ts->names = nvtx_xrealloc(ts->names, ts->names_cap);
    }
    if (ts->n == ts->cap) {
        ts->cap = ts->cap ? 2 * ts->cap : 16;
        ts->frames = nvtx_xrealloc(ts->frames, ts->cap * sizeof *ts->frames);
    }
    int level = 0;
    for (size_t i = ts->n; i-- > 0;) {
        if (ts->frames[i].domain == d) {
            level = ts->frames[i].level + 1;
            break;
        }
    }
    char *name = ts->names + ts->used;
    size_t len = nvtx_event_name(name, d, m);
    ts->frames[ts->n++] = (struct frame){d, ts->used, len, level, g_pid};
    ts->used += len + 1;
    (void)mlb_stage_begin(name);
    return level;
}

/* Pop: E for the innermost range of domain d on this thread; returns its level, or -1 when
 * there is none (nothing is sent). A range a forked child inherited is popped silently: its
 * stage belongs to the parent's thread. */
int nvtx_range_pop(const struct nvtx_domain *d)
{
    struct thread_stack *ts = t_stack;
    if (ts == NULL)
        return -1;
    size_t i = ts->n;
    while (i > 0 && ts->frames[i - 1].domain != d)
        i--;
    if (i == 0)
        return -1;
    struct frame f = ts->frames[--i];
    if (f.pid == g_pid)
        (void)mlb_stage_end(ts->names + f.off);
    if (i + 1 < ts->n) {
        /* Another domain's ranges are open above it: close the gap it leaves. */
        size_t gap = f.len + 1;
        memmove(ts->names + f.off, ts->names + f.off + gap, ts->used - f.off - gap);
        memmove(&ts->frames[i], &ts->frames[i + 1], (ts->n - i - 1) * sizeof *ts->frames);
        for (size_t j = i; j < ts->n - 1; j++)
            ts->frames[j].off -= gap;
    }
    ts->n--;
    ts->used -= f.len + 1;
    return f.level;
}

/* ---- Start/end ranges: a table of open ranges by id ---- */

struct range {
    struct range *next;
    uint64_t id;
    pid_t pid, tid; /* the thread that started it: its E must carry them */
    char name[];
};

static struct range **g_range_buckets; /* chained hash table, by id; under g_lock */
static size_t g_range_mask, g_range_count;
static atomic_uint_fast64_t g_next_range_id = 1; /* 0 means "no range" to NVTX */
static atomic_flag g_unknown_reported = ATOMIC_FLAG_INIT;

/* The marker library pairs B and E on its caller's thread; an E for a range started by another
 * thread is formatted here and sent on a socket of this library's own. */
static pthread_once_t g_raw_once = PTHREAD_ONCE_INIT;
static int g_raw_fd = -1;

static void raw_open(void)
{
    const char *path = getenv(MLBENCH_MARKER_SOCKET_ENV);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (path == NULL || strlen(path) >= sizeof addr.sun_path)
        return; /* cannot happen: the marker library connected to it */
    strcpy(addr.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (const struct sockaddr *)&addr, sizeof addr) != 0) {
        close(fd);
        fd = -1;
    }
    if (fd < 0)
        fprintf(stderr, "mlbench-nvtx: cannot connect to %s: ranges ended on another thread "
                        "than the one that started them are lost\n", path);
    g_raw_fd = fd;
}

/* Sends "E <now> <pid> <tid> <name>" for the thread (pid, tid). */
static void send_end_as(pid_t pid, pid_t tid, const char *name)
{
    pthread_once(&g_raw_once, raw_open);
    if (g_raw_fd < 0)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    char buf[MLBENCH_MARKER_MAX_EVENT + 1];
    int n = snprintf(buf, sizeof buf, "E %llu %ld %ld %s",
                     (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec,
                     (long)pid, (long)tid, name);
    if (n < 0 || n > MLBENCH_MARKER_MAX_EVENT)
        return; /* cannot happen: names are at most NAME_CAP bytes */
    while (send(g_raw_fd, buf, (size_t)n, MSG_NOSIGNAL) < 0 && errno == EINTR)
        ;
}

/* Inserts r; g_lock held. */
static void range_insert(struct range *r)
{
    if (g_range_count >= g_range_mask) { /* also on the first call: mask 0 */
        size_t nb = g_range_mask ? 2 * (g_range_mask + 1) : 64;
        struct range **nt = nvtx_xrealloc(NULL, nb * sizeof *nt);
        memset(nt, 0, nb * sizeof *nt);
        for (size_t i = 0; g_range_buckets != NULL && i <= g_range_mask; i++) {
            for (struct range *x = g_range_buckets[i], *next; x != NULL; x = next) {
                next = x->next;
                x->next = nt[x->id & (nb - 1)];
                nt[x->id & (nb - 1)] = x;
            }
        }
        free(g_range_buckets);
        g_range_buckets = nt;
        g_range_mask = nb - 1;
    }
    struct range **head = &g_range_buckets[r->id & g_range_mask];
    r->next = *head;
    *head = r;
    g_range_count++;
}

/* Removes and returns the range `id`, or NULL; g_lock held. */
static struct range *range_remove(uint64_t id)
{
    if (g_range_buckets == NULL)
        return NULL;
    for (struct range **p = &g_range_buckets[id & g_range_mask]; *p != NULL; p = &(*p)->next) {
        if ((*p)->id == id) {
            struct range *r = *p;
            *p = r->next;
            g_range_count--;
            return r;
        }
    }
    return NULL;
}

/* Start: B on this thread; returns the range's id (never 0). */
uint64_t nvtx_range_start(const struct nvtx_domain *d, const struct message *m)
{
    char name[NAME_CAP + 1];
    size_t len = nvtx_event_name(name, d, m);
    struct range *r = nvtx_xrealloc(NULL, sizeof *r + len + 1);
    uint64_t id = atomic_fetch_add_explicit(&g_next_range_id, 1, memory_order_relaxed);
    r->id = id;
    r->pid = g_pid;
    r->tid = nvtx_thread_id();
    memcpy(r->name, name, len + 1);
    /* B goes out before the id is returned, so before any thread can end the range (and r is
     * not read once it is in the table: another thread may end it and free it). */
    (void)mlb_stage_begin(name);
    pthread_mutex_lock(&g_lock);
    range_insert(r);
    pthread_mutex_unlock(&g_lock);
    return id;
}

/* End: E for the range, on the thread that started it. A forked child ending a range its
 * parent started sends nothing: the parent's span is the parent's to end. */
void nvtx_range_end(uint64_t id)
{
    pthread_mutex_lock(&g_lock);
    struct range *r = range_remove(id);
    pthread_mutex_unlock(&g_lock);
    if (r == NULL) {
        if (!atomic_flag_test_and_set(&g_unknown_reported))
            fprintf(stderr, "mlbench-nvtx: nvtxRangeEnd of unknown range id %llu (ended twice, "
                            "or never started): ignored (reported once per process)\n",
                    (unsigned long long)id);
        return;
    }
    if (r->pid == g_pid && r->tid == nvtx_thread_id())
        (void)mlb_stage_end(r->name);
    else if (r->pid == g_pid)
        send_end_as(r->pid, r->tid, r->name);
    free(r);
}
