/* rings: mlbench's reader of the marker rings (include/mlbench/marker_ring.h, docs/markers.md
 * "Ring transport"). The marker receiver hands it the rings and names announced on the marker
 * socket and calls rings_drain every few milliseconds and at the end of each run; each record
 * becomes a marker token, as a datagram would. Whatever a ring holds is checked before use: a
 * hostile or broken writer can make records malformed, never make the reader read outside the
 * mapping (the descriptor is sealed against shrinking) or trust its counters.
 * Not thread-safe: the receiver serialises calls (markers.c). */
#ifndef MLBENCH_RINGS_H
#define MLBENCH_RINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "measure/event_log.h"
#include "measure/marker_parse.h"

#define RINGS_MAX 4096 /* rings mapped at once; more are refused (malformed) */

/* Where what is read goes. */
struct ring_sink {
    void *arg;
    /* A record as a token (its strings belong to the ring set, valid until the next call). */
    void (*event)(void *arg, const struct marker_token *tok);
    /* A malformed record or announcement: a short reason and a description. */
    void (*malformed)(void *arg, const char *why, const char *text, size_t len);
    /* How many more events would be kept (NULL: no bound). Records beyond it are not read one
     * by one: skip gets their number, to be counted as events not kept. */
    uint64_t (*room)(void *arg);
    void (*skip)(void *arg, uint64_t n);
};

struct ring_set;

struct ring_set *rings_new(void);
/* Unmaps every ring; NULL is allowed. */
void rings_free(struct ring_set *s);
/* Handles a transport event of the socket: "mlbench.ring" (fd: the descriptor it carried, or
 * -1; always taken: mapped or closed) or "mlbench.name", sent by process `sender` (the pid of
 * its credentials, which keys its names and says when it has ended). Returns whether tok was
 * one (it is then not an event of the workload); a bad one goes to sink->malformed. */
bool rings_control(struct ring_set *s, const struct marker_token *tok, int fd, pid_t sender,
                   const struct ring_sink *sink);
/* Reads the new records of every ring into sink. A record naming an id its process has not
 * announced yet stops that ring when !strict (returns true: read the socket, then call again
 * with strict, since the announcement was queued before the record was written); with strict
 * it is malformed. Records stamped after now_ns + 1 s, or before 0, are malformed. */
bool rings_drain(struct ring_set *s, const struct ring_sink *sink, int64_t now_ns, bool strict);
/* Number of rings mapped (for the receiver's wait: no rings, no polling). */
size_t rings_count(const struct ring_set *s);
/* Whether the last rings_drain found a ring at least an eighth full: read more often. */
bool rings_busy(const struct ring_set *s);
/* A run begins: drops counted from now on are the run's. */
void rings_begin_run(struct ring_set *s);
/* A run ends, after its last rings_drain: the drops during the run go into log (when not
 * NULL), with the number of rings read; a writer that has died in the middle of a record
 * (its process gone) leaves a torn record, malformed; the rings of processes that have ended
 * are unmapped. */
void rings_end_run(struct ring_set *s, struct event_log *log, const struct ring_sink *sink);

#endif
