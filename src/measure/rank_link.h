/* rank_link: marker events of ranks on other hosts (docs/ranks.md, "Across hosts").
 *
 * `mlbench run --ranks-listen ADDR` starts a collector: a TCP listener whose address and a
 * one-time token go to the command as MLBENCH_RANK_COLLECTOR ("HOST:PORT#TOKEN"; forward it with
 * `mpirun -x MLBENCH_RANK_COLLECTOR`). `mlbench rank-exec` on a host where the marker socket is
 * not reachable opens a forwarder instead: a marker socket of its own for its rank, whose
 * datagrams it sends over one TCP connection to the collector, which stores them in the run as
 * if they had come through the socket, with the host's pids mapped apart (pid + host << 22) and
 * its clock moved onto ours (the offset measured at connection time).
 *
 * The protocol, one connection per rank-exec, lines of ASCII and framed datagrams:
 *   -> "H 1 TOKEN HOSTNAME\n"            <- "OK N S\n" (N: the host's index, by name; S: 1 when
 *                                           this connection is to send the host's samples, the
 *                                           first of the host's open ones), or the connection
 *                                           is closed (wrong token, too many hosts)
 *   -> "P T1\n"                          <- "Q T1 T2\n" (T2: our clock), repeated: the offset is
 *                                           the reply with the shortest round trip's
 *   -> "O OFFSET\n"                      our clock - theirs, ns
 *   -> "D LEN\n" + LEN bytes             one datagram
 *   -> "K LEN\n" + LEN bytes of JSON     the host samples' series: [{metric, labels, kind,
 *                                           source, max_rate?}] (the sampler's, once)
 *   -> "S LEN\n" + LEN bytes of JSON     one row: [t_ns (their clock), value or null...]
 *   -> "B\n"                             <- "A\n" once everything sent before is stored
 * The host's samples reach the run when the sampler says goodbye (or its connection ends), as a
 * struct host_samples on our clock (event_log.h). A connection that breaks the protocol is
 * closed; what it sent before stays. Not thread-safe
 * per object; the collector runs one thread. */
#ifndef MLBENCH_RANK_LINK_H
#define MLBENCH_RANK_LINK_H

#include <stddef.h>
#include <stdint.h>

#include <stdbool.h>

#include "measure/markers.h"
#include "sources/source.h"

#define RANK_LINK_ENV "MLBENCH_RANK_COLLECTOR"
#define RANK_LINK_MAX_HOSTS 255     /* connections at a time; hosts numbered 1.. */
#define RANK_LINK_PID_SHIFT 22      /* Linux pids are below 2^22 (pid_max) */

struct rank_collector;

/* Listens on listen ("HOST:PORT", "[V6]:PORT"; port 0 picks one) and stores what forwarders
 * send into m's runs. NULL with a message naming the address in err. */
struct rank_collector *rank_collector_start(const char *listen, struct marker_receiver *m,
                                            char *err, size_t errlen);
/* "MLBENCH_RANK_COLLECTOR=HOST:PORT#TOKEN" for the command's environment (a wildcard HOST is
 * replaced by this host's name). */
const char *rank_collector_env(const struct rank_collector *c);
/* Connections refused (wrong token or hello, too many hosts) so far. */
uint64_t rank_collector_refused(struct rank_collector *c);
/* Stops the thread and closes every connection. NULL is allowed. */
void rank_collector_stop(struct rank_collector *c);

struct rank_forward;

/* Connects to the collector of spec (the variable's value) and makes the local marker socket.
 * NULL with a message in err. */
struct rank_forward *rank_forward_open(const char *spec, char *err, size_t errlen);
/* The local marker socket's path (for MLBENCH_MARKER_SOCKET) and descriptor (to poll). */
const char *rank_forward_path(const struct rank_forward *f);
int rank_forward_fd(const struct rank_forward *f);
/* Sends every datagram waiting on the local socket. 0, or -1 when the link is lost (later
 * datagrams are dropped and counted). */
int rank_forward_pump(struct rank_forward *f);
/* Whether the collector asked this forwarder for its host's samples (one per host at a time). */
bool rank_forward_samples_wanted(const struct rank_forward *f);
/* Sends the samples of tab (the host's, on this host's clock) when they were asked for; a row
 * too long for the protocol (64 KiB) is dropped and counted. Call before rank_forward_close. */
void rank_forward_send_samples(struct rank_forward *f, const struct sample_table *tab);
/* Sends what is left, says goodbye and waits (10 s at most) until the collector has stored it;
 * removes the socket. Returns the datagrams lost (0 when all arrived), or -1 when the link was
 * lost at some point. Frees f. */
long rank_forward_close(struct rank_forward *f);

#endif
