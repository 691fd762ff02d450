/* marker_private.h: what the files of libmlbench_marker share (hidden: the library is built with
 * -fvisibility=hidden). marker.c holds the API, the datagram transport and initialisation;
 * marker_ring.c the shared-memory rings (include/mlbench/marker_ring.h). */
#ifndef MLBENCH_MARKER_PRIVATE_H
#define MLBENCH_MARKER_PRIVATE_H

#include <stdbool.h>
#include <sys/types.h>

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

extern pid_t g_marker_pid;              /* getpid(); refreshed in forked children */
extern _Thread_local pid_t t_marker_tid; /* gettid() of this thread, 0 until read */
extern bool g_marker_ring_on;           /* mlbench reads rings (set at initialisation) */
extern const char marker_name_advice[];

/* Reports the first invalid event of the process on stderr; sets errno = EINVAL, returns -1. */
int marker_invalid(const char *what, const char *value, const char *advice);
/* Validates and formats one event into buf (MLBENCH_MARKER_MAX_EVENT + 1 bytes); returns its
 * length, or -1 with errno set (reported by marker_invalid). */
int marker_format(char *buf, char kind, const char *name, const char *value);
/* marker_format, then one datagram on fd. Returns 0, or -1 with errno set. */
int marker_send(int fd, char kind, const char *name, const char *value);

/* At initialisation: whether mlbench offers rings (MLBENCH_MARKER_RING), reading the ring size. */
bool marker_ring_setup(void);
/* Writes a B, E, C or I event into the calling thread's ring, creating the ring on first use.
 * Returns 0 (written, or dropped and counted because the ring was full), -1 with errno set
 * (EINVAL for a bad name; the event is lost), or 1 when the event must go as a datagram (this
 * thread has no ring, or the process has used all its name ids). */
int marker_ring_event(int sock, char kind, const char *name, double value);
/* In a forked child: forget the parent's rings and names (the child makes its own). */
void marker_ring_atfork_child(void);

#endif
