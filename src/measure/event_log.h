/* event_log: the marker events received during one repetition, in arrival order (time order
 * after event_log_sort), with names and values interned (a run may carry millions of events
 * with a handful of names).
 * Not thread-safe: the receiver serialises access (markers.c). */
#ifndef MLBENCH_EVENT_LOG_H
#define MLBENCH_EVENT_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "measure/marker_parse.h"
#include "sources/source.h"

#define EVENT_LOG_MAX_EVENTS 5000000u /* per repetition; later ones are counted as dropped */
#define EVENT_LOG_EXAMPLES 8          /* malformed datagrams kept as examples, one per reason */

struct marker_event {
    int64_t t_ns;
    int32_t pid, tid;
    uint32_t name;   /* string id (event_log_str) */
    uint32_t value;  /* string id of an M event's value; 0 otherwise */
    double number;   /* value of a C event */
    char kind;       /* enum marker_kind */
    uint32_t seq;    /* arrival order, for event_log_sort (in what was padding) */
};

/* The samples of another host of a multi-rank job (rank_link.h), taken there by a rank's
 * `mlbench rank-exec` and moved onto this host's clock. */
struct host_samples {
    char *host;
    struct series_def *defs;  /* owned, with their strings (source included) */
    struct sample_table tab;  /* defs point into defs above */
};

/* Events a writer thread's ring dropped in the run because it was full (rings.h). */
struct ring_drop {
    int32_t pid, tid;
    uint64_t events;
};

struct event_log {
    struct marker_event *ev;
    size_t n, cap;
    uint64_t dropped;            /* beyond EVENT_LOG_MAX_EVENTS */
    uint64_t malformed;          /* datagrams that did not parse */
    uint64_t foreign;            /* datagrams from processes outside the tree (markers.h) */
    int32_t first_foreign_pid;   /* sender of the first of them (0: none, or no credentials) */
    char example[EVENT_LOG_EXAMPLES][160]; /* "reason: first bytes" of the first malformed ones */
    size_t n_examples;
    /* interned strings: id 0 is "", ids index strings[] */
    char **strings;
    size_t n_strings, cap_strings;
    uint32_t *slots;             /* open addressing hash of string ids, 0 = empty */
    size_t n_slots;
    struct host_samples *hosts;  /* other hosts' samples, in arrival order */
    size_t n_hosts;
    /* the ring transport (rings.h) */
    bool rings_offered;          /* the run's workload was offered rings */
    uint32_t rings;              /* rings read during the run */
    uint64_t ring_dropped;       /* events the rings dropped, all threads */
    struct ring_drop *drops;     /* per thread, in the order the rings were announced */
    size_t n_drops;
};

void event_log_init(struct event_log *log);
/* Frees everything the log owns; the log can be initialised again. */
void event_log_free(struct event_log *log);
/* Appends a parsed event (copies its strings). */
void event_log_add(struct event_log *log, const struct marker_token *tok);
/* Counts a malformed datagram and keeps the first few as examples. */
void event_log_add_malformed(struct event_log *log, const char *reason, const char *buf, size_t len);
/* Counts a datagram from a process outside the workload's tree; remembers the first pid. */
void event_log_add_foreign(struct event_log *log, pid_t pid);
/* Takes over h (its contents; h itself stays the caller's). */
void event_log_add_host(struct event_log *log, struct host_samples *h);
/* Counts events dropped by the ring of thread (pid, tid). */
void event_log_add_ring_drops(struct event_log *log, int32_t pid, int32_t tid, uint64_t events);
/* Orders the events by time, events of the same time in arrival order: two transports (rings
 * and datagrams) and several rings arrive interleaved in any order, while the stages of a
 * thread, adoptions and ranks are read in time order. */
void event_log_sort(struct event_log *log);
/* Frees what h owns. */
void host_samples_free(struct host_samples *h);
/* Interns s[0..len) and returns its id (never 0 unless len == 0). */
uint32_t event_log_intern(struct event_log *log, const char *s, size_t len);
/* The NUL-terminated string of an id; owned by the log. */
const char *event_log_str(const struct event_log *log, uint32_t id);

#endif
