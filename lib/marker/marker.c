/* libmlbench_marker: the C client of the mlbench marker protocol (include/mlbench/marker.h).
 *
 * Two transports (docs/markers.md). When mlbench offers rings (MLBENCH_MARKER_RING), stage,
 * counter and instant events are written into the calling thread's shared-memory ring
 * (marker_ring.c): no system call, no lock. Otherwise, and always for metadata, each call
 * formats one event `<kind> <t_ns> <pid> <tid> <name>[ <value>]` into a stack buffer and sends
 * it as one datagram on a Unix socket connected, once per process, to the path in
 * MLBENCH_MARKER_SOCKET. The client's on/off state is one atomic int (g_sock): "not
 * initialised yet", "disabled", or the connected socket, so the disabled path is one relaxed
 * load and one branch.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* The library is built with -fvisibility=hidden: only the API declared here is exported. */
#pragma GCC visibility push(default)
#include "mlbench/marker.h"
#pragma GCC visibility pop
#include "marker_private.h"

#define MARKER_ENV MLBENCH_MARKER_SOCKET_ENV
#define SOCK_UNKNOWN (-2) /* first call not made yet */
#define SOCK_OFF (-1)     /* variable unset or socket unreachable: every call is a no-op */
#define REPORT_MAX 64     /* bytes of an offending value quoted in the error message */

#define STR_(x) #x
#define STR(x) STR_(x)

static atomic_int g_sock = SOCK_UNKNOWN;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
pid_t g_marker_pid;                        /* getpid() of this process; refreshed after fork */
_Thread_local pid_t t_marker_tid;          /* gettid() of this thread; 0 = not read yet */
bool g_marker_ring_on;                     /* mlbench reads rings: set once, before g_sock */
static atomic_flag g_reported = ATOMIC_FLAG_INIT; /* first invalid event already reported */
static char g_rank[48];             /* "RANK[ WORLD_SIZE]" from the launcher, "" for none */
static atomic_int g_rank_pid;       /* the process that has announced its rank */

/* The launcher's variables that name a process's rank, the first that holds a number counting
 * (docs/markers.md, "Ranks"). torchrun's RANK comes first, and only beside its WORLD_SIZE: under
 * srun or mpirun, torchrun's workers also see the outer launcher's variables, which number the
 * torchrun agents, not the workers. */
static const struct { const char *rank, *size; bool needs_size; } RANK_VARS[] = {
    {"RANK", "WORLD_SIZE", true},
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", false},
    {"PMIX_RANK", "PMIX_SIZE", false},
    {"PMI_RANK", "PMI_SIZE", false},
    {"SLURM_PROCID", "SLURM_NTASKS", false},
};

/* A decimal number 0..2^31-2 in s, or -1. */
static long env_number(const char *name)
{
    const char *s = getenv(name);
    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    return errno == 0 && *end == '\0' && v < 2147483647L ? v : -1;
}

/* The rank and world size (0: unknown) the environment gives, or -1. */
static long rank_from_env(long *size_out)
{
    for (size_t i = 0; i < sizeof RANK_VARS / sizeof RANK_VARS[0]; i++) {
        long rank = env_number(RANK_VARS[i].rank), size = env_number(RANK_VARS[i].size);
        if (rank < 0 || (RANK_VARS[i].needs_size && size < 1))
            continue;
        *size_out = size >= 1 ? size : 0;
        return rank;
    }
    *size_out = 0;
    return -1;
}

/* Fills g_rank from the environment. */
static void read_rank(void)
{
    long size, rank = rank_from_env(&size);
    if (rank < 0)
        return;
    if (size >= 1)
        snprintf(g_rank, sizeof g_rank, "%ld %ld", rank, size);
    else
        snprintf(g_rank, sizeof g_rank, "%ld", rank);
}

/* Runs in the child, on its only thread (the one that called fork): the cached pid and that
 * thread's cached tid belong to the parent. The connected socket is inherited and stays
 * usable: datagrams from parent and child go to the same harness socket. */
static void marker_atfork_child(void)
{
    g_marker_pid = getpid();
    t_marker_tid = 0;
    marker_ring_atfork_child();
}

static void marker_init(void)
{
    const char *path = getenv(MARKER_ENV);
    if (path == NULL || path[0] == '\0') {
        atomic_store_explicit(&g_sock, SOCK_OFF, memory_order_release);
        return;
    }

    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    size_t path_len = strlen(path);
    if (path_len >= sizeof addr.sun_path) {
        fprintf(stderr, "mlbench-marker: cannot connect to %s: path longer than %zu bytes; "
                        "markers disabled\n", path, sizeof addr.sun_path - 1);
        atomic_store_explicit(&g_sock, SOCK_OFF, memory_order_release);
        return;
    }
    memcpy(addr.sun_path, path, path_len + 1);

    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (const struct sockaddr *)&addr, sizeof addr) != 0) {
        fprintf(stderr, "mlbench-marker: cannot connect to %s: %s; markers disabled\n", path,
                strerror(errno));
        if (fd >= 0)
            close(fd);
        atomic_store_explicit(&g_sock, SOCK_OFF, memory_order_release);
        return;
    }
    g_marker_pid = getpid();
    read_rank();
    g_marker_ring_on = marker_ring_setup();
    /* Registered only when enabled; a failure (ENOMEM) only costs stale ids in forked children. */
    (void)pthread_atfork(NULL, NULL, marker_atfork_child);
    atomic_store_explicit(&g_sock, fd, memory_order_release);
}

/* The connected socket, or SOCK_OFF. Disabled, this costs one relaxed load and one branch;
 * enabled, the acquire fence makes g_marker_pid (written before g_sock) visible. */
static inline int marker_socket(void)
{
    int fd = atomic_load_explicit(&g_sock, memory_order_relaxed);
    if (LIKELY(fd == SOCK_OFF))
        return fd;
    if (UNLIKELY(fd == SOCK_UNKNOWN)) {
        pthread_once(&g_once, marker_init);
        fd = atomic_load_explicit(&g_sock, memory_order_relaxed);
    }
    atomic_thread_fence(memory_order_acquire);
    return fd;
}

/* Writes the decimal digits of v at p; returns the end. */
static char *put_u64(char *p, uint64_t v)
{
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    while (n > 0)
        *p++ = tmp[--n];
    return p;
}

/* Reports the first invalid event of the process on stderr, then sets errno and returns -1.
 * The offending value is quoted with control characters escaped, cut at REPORT_MAX bytes. */
int marker_invalid(const char *what, const char *value, const char *advice)
{
    if (!atomic_flag_test_and_set(&g_reported)) {
        char quoted[REPORT_MAX * 4 + 48];
        if (value == NULL) {
            strcpy(quoted, "NULL");
        } else {
            size_t q = 0, i = 0;
            quoted[q++] = '"';
            for (; i < REPORT_MAX && value[i] != '\0'; i++) {
                unsigned char c = (unsigned char)value[i];
                if (c < 0x20 || c == 0x7f || c == '"' || c == '\\')
                    q += (size_t)snprintf(quoted + q, sizeof quoted - q, "\\x%02x", c);
                else
                    quoted[q++] = (char)c;
            }
            quoted[q++] = '"';
            quoted[q] = '\0';
            if (value[i] != '\0')
                snprintf(quoted + q, sizeof quoted - q, "... (%zu bytes)", strlen(value));
        }
        fprintf(stderr, "mlbench-marker: %s %s: %s; the event is dropped (reported once per "
                        "process)\n", what, quoted, advice);
    }
    errno = EINVAL;
    return -1;
}

/* Sends "mlbench.rank" before the first event of each process that has a rank (its forked
 * children too: they are the same rank's workers). Two threads racing here both send it; the
 * harness keeps the first. */
static void announce_rank(int fd)
{
    if (LIKELY(g_rank[0] == '\0' || atomic_load_explicit(&g_rank_pid, memory_order_relaxed) ==
                                       g_marker_pid))
        return;
    atomic_store_explicit(&g_rank_pid, g_marker_pid, memory_order_relaxed);
    (void)marker_send(fd, 'M', "mlbench.rank", g_rank);
}

const char marker_name_advice[] =
    "a name or key must be non-empty, without spaces or control characters, e.g. \"data_load\"";
static const char SIZE_ADVICE[] =
    "an event is at most " STR(MLBENCH_MARKER_MAX_EVENT) " bytes: shorten the name or the value";

int marker_format(char *buf, char kind, const char *name, const char *value)
{
    if (UNLIKELY(name == NULL))
        return marker_invalid("invalid name", NULL, marker_name_advice);

    char *const end = buf + MLBENCH_MARKER_MAX_EVENT;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    if (UNLIKELY(t_marker_tid == 0))
        t_marker_tid = (pid_t)syscall(SYS_gettid);

    /* The header is at most 1+1+20+1+10+1+10+1 bytes: it always fits. */
    char *p = buf;
    *p++ = kind;
    *p++ = ' ';
    p = put_u64(p, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
    *p++ = ' ';
    p = put_u64(p, (uint64_t)g_marker_pid);
    *p++ = ' ';
    p = put_u64(p, (uint64_t)t_marker_tid);
    *p++ = ' ';

    const unsigned char *s = (const unsigned char *)name;
    if (UNLIKELY(*s == '\0'))
        return marker_invalid("invalid name", name, marker_name_advice);
    for (; *s != '\0'; s++) {
        if (UNLIKELY(*s <= 0x20 || *s == 0x7f))
            return marker_invalid("invalid name", name, marker_name_advice);
        if (UNLIKELY(p == end))
            return marker_invalid("event too long for name", name, SIZE_ADVICE);
        *p++ = (char)*s;
    }

    /* Metadata with an empty value is sent as the key alone. */
    if (value != NULL && value[0] != '\0') {
        if (UNLIKELY(p == end))
            return marker_invalid("event too long for name", name, SIZE_ADVICE);
        *p++ = ' ';
        for (s = (const unsigned char *)value; *s != '\0'; s++) {
            if (UNLIKELY(*s < 0x20 || *s == 0x7f))
                return marker_invalid("invalid value (control character)", value,
                                      "a value may hold spaces but no newline, tab or "
                                      "other control character");
            if (UNLIKELY(p == end))
                return marker_invalid("event too long for value", value, SIZE_ADVICE);
            *p++ = (char)*s;
        }
    }

    return (int)(p - buf);
}

int marker_send(int fd, char kind, const char *name, const char *value)
{
    char buf[MLBENCH_MARKER_MAX_EVENT + 1];
    int len = marker_format(buf, kind, name, value);
    if (len < 0)
        return -1;
    ssize_t sent;
    do {
        sent = send(fd, buf, (size_t)len, MSG_NOSIGNAL);
    } while (UNLIKELY(sent < 0 && errno == EINTR));
    return sent < 0 ? -1 : 0;
}

/* Stage, counter and instant events: into the thread's ring when mlbench reads rings and the
 * ring takes it, else as a datagram (value_text: the counter's value as text). */
static int marker_event(int fd, char kind, const char *name, double value,
                        const char *value_text)
{
    announce_rank(fd);
    if (g_marker_ring_on) {
        int rc = marker_ring_event(fd, kind, name, value);
        if (LIKELY(rc <= 0))
            return rc;
    }
    return marker_send(fd, kind, name, value_text);
}

/* API contracts are in include/mlbench/marker.h. When disabled the arguments are not checked:
 * that is what keeps the disabled path at one branch. */

int mlb_stage_begin(const char *name)
{
    int fd = marker_socket();
    if (LIKELY(fd == SOCK_OFF))
        return 0;
    return marker_event(fd, 'B', name, 0.0, NULL);
}

int mlb_stage_end(const char *name)
{
    int fd = marker_socket();
    if (LIKELY(fd == SOCK_OFF))
        return 0;
    return marker_event(fd, 'E', name, 0.0, NULL);
}

int mlb_instant(const char *name)
{
    int fd = marker_socket();
    if (LIKELY(fd == SOCK_OFF))
        return 0;
    return marker_event(fd, 'I', name, 0.0, NULL);
}

int mlb_counter(const char *name, double value)
{
    int fd = marker_socket();
    if (LIKELY(fd == SOCK_OFF))
        return 0;
    if (g_marker_ring_on) {
        announce_rank(fd);
        int rc = marker_ring_event(fd, 'C', name, value);
        if (LIKELY(rc <= 0))
            return rc;
    }
    /* %.17g round-trips through strtod; non-finite values are spelled like Python's repr. */
    char num[32];
    if (isnan(value))
        strcpy(num, "nan"); /* never "-nan" */
    else if (isinf(value))
        strcpy(num, value > 0 ? "inf" : "-inf");
    else
        snprintf(num, sizeof num, "%.17g", value);
    announce_rank(fd);
    return marker_send(fd, 'C', name, num);
}

int mlb_meta(const char *key, const char *value)
{
    int fd = marker_socket();
    if (LIKELY(fd == SOCK_OFF))
        return 0;
    if (UNLIKELY(value == NULL))
        return marker_invalid("invalid value (NULL) for key", key,
                              "pass \"\" for an empty value");
    announce_rank(fd);
    return marker_send(fd, 'M', key, value);
}

int mlb_enabled(void)
{
    return marker_socket() >= 0;
}

int mlb_rank(int *world_size)
{
    long size, rank = rank_from_env(&size);
    if (world_size)
        *world_size = (int)size;
    return (int)rank;
}
