/* markers: the receiving end of the marker protocol. A background thread owns a Unix datagram
 * socket in a private temporary directory and appends every event to the event log of the
 * repetition in progress. The calls below are made from one controlling thread. */
#ifndef MLBENCH_MARKERS_H
#define MLBENCH_MARKERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "measure/event_log.h"

struct marker_receiver;

/* Called on the receiver thread for every well-formed event, during runs and between them, with
 * the receiver's lock held: it must be quick and must not call markers_* functions. The
 * token's strings point into the datagram (not NUL-terminated). */
typedef void (*marker_listener)(void *arg, const struct marker_token *tok);

/* Chooses the transport: MLBENCH_MARKER_TRANSPORT "ring" (default) or "datagram" into *rings,
 * and checks MLBENCH_MARKER_RING_BYTES. Returns 0, or -1 with a message in err (the user's
 * input: exit 2). */
#define MARKERS_TRANSPORT_ENV "MLBENCH_MARKER_TRANSPORT"
int markers_transport_from_env(bool *rings, char *err, size_t errlen);
/* Creates the socket and starts the thread; with rings, the workload's threads may also hand
 * over rings (rings.h). Returns NULL with a message in err on failure. */
struct marker_receiver *markers_start(bool rings, char *err, size_t errlen);
/* Whether rings are offered: then put MLBENCH_MARKER_RING=1 in the command's environment. */
bool markers_rings_offered(const struct marker_receiver *r);
/* Path to put in MLBENCH_MARKER_SOCKET; owned by the receiver. */
const char *markers_path(const struct marker_receiver *r);
/* From now on events go to log (owned by the caller, initialised). */
void markers_begin_run(struct marker_receiver *r, struct event_log *log);
/* Waits until every datagram sent before this call has been handled (checked and stored). */
void markers_sync(struct marker_receiver *r);
/* Waits until every event sent before this call has been stored (the datagrams up to a fence,
 * then every ring read to its end; the drops of each ring counted into the log), orders the
 * run's events by time, then detaches the log. Events arriving later, or between runs, are
 * counted by markers_outside(). */
void markers_end_run(struct marker_receiver *r);
/* Copies the most recently begun stage that has not ended ("" if none) for progress display. */
void markers_current_stage(struct marker_receiver *r, char *buf, size_t len);
/* Datagrams of the process tree received while no repetition was running. */
uint64_t markers_outside(struct marker_receiver *r);
/* Datagrams from processes outside mlbench's process tree (senders.h), in runs and between
 * them; ignored, and counted in the run's event log too. *first_pid (when not NULL) gets the
 * first sender's pid (0: one without credentials). */
uint64_t markers_foreign(struct marker_receiver *r, pid_t *first_pid);
/* Sets (fn != NULL) or removes the listener; from the controlling thread. */
void markers_set_listener(struct marker_receiver *r, marker_listener fn, void *arg);
/* Stores an event that came another way than the socket (rank_link.h: a rank on another
 * host), as a datagram of the socket would be: tok (its pid, tid and time already ours) when
 * why is NULL, else the malformed datagram buf[0..len) with its reason. Any thread. */
void markers_store(struct marker_receiver *r, const struct marker_token *tok, const char *why,
                   const char *buf, size_t len);
/* Moves the samples of another host (rank_link.h) into the run being received; without one
 * they are freed. Any thread. */
void markers_store_host(struct marker_receiver *r, struct host_samples *h);
/* Stops the thread, removes the socket and its directory, frees r. NULL is allowed. */
void markers_stop(struct marker_receiver *r);

#endif
