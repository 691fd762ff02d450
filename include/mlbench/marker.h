/* mlbench marker API: tell a running `mlbench` which stage of a workload is executing.
 *
 * Each call sends one datagram of the marker protocol (docs/markers.md) to the Unix socket
 * named by the environment variable MLBENCH_MARKER_SOCKET, read once, on the first call. When
 * the variable is unset (the program runs outside mlbench) every call is a no-op that costs one
 * branch and does not look at its arguments. When it is set but the socket cannot be reached,
 * one line says so on stderr and every call is a no-op too.
 *
 * All functions are thread-safe and keep working in processes forked after the first call
 * (data-loader workers): the event carries the sender's current pid and thread id.
 * They return 0 on success (or when disabled) and -1 on error with errno set:
 *   EINVAL       name/key NULL, empty, or containing white space or a control character; a
 *                metadata value NULL or containing a control character; or the event would
 *                exceed MLBENCH_MARKER_MAX_EVENT bytes (the first such error per process is
 *                also reported once on stderr with the offending value); nothing is sent;
 *   other        the send failed (harness gone): the event is lost, the workload goes on.
 * Link with -lmlbench_marker (pkg-config: mlbench-marker).
 */
#ifndef MLBENCH_MARKER_H
#define MLBENCH_MARKER_H

#ifdef __cplusplus
extern "C" {
#endif

/* Largest datagram of the protocol, in bytes. */
#define MLBENCH_MARKER_MAX_EVENT 4096
/* The variable that holds the path of the harness's socket (unset outside mlbench). */
#define MLBENCH_MARKER_SOCKET_ENV "MLBENCH_MARKER_SOCKET"

/* Begin stage `name` on the calling thread; stages nest per thread. */
int mlb_stage_begin(const char *name);
/* End stage `name` on the calling thread (the innermost open stage of that name). */
int mlb_stage_end(const char *name);
/* Record a sample `value` of counter `name` (items processed, loss, accuracy...). The value is
 * sent as "%.17g" (it round-trips through strtod); NaN and infinities as nan, inf, -inf. */
int mlb_counter(const char *name, double value);
/* Record metadata `key` = `value` (batch_size, precision, device, model...); value may hold
 * spaces but no control character, may be "" (then the event ends with the key), not NULL. */
int mlb_meta(const char *key, const char *value);
/* Record an instant event `name` (a checkpoint saved, an epoch boundary...). */
int mlb_instant(const char *name);
/* Nonzero when events are being sent (MLBENCH_MARKER_SOCKET was set and connectable). */
int mlb_enabled(void);
/* This process's rank in a multi-rank job, from its launcher's variables (docs/markers.md,
 * "Ranks": RANK with WORLD_SIZE, OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK, SLURM_PROCID, the
 * first set), or -1 when it has none; the job's size into *world_size when it is known, else 0
 * (world_size may be NULL). The events of a process with a rank announce it to mlbench. */
int mlb_rank(int *world_size);

#ifdef __cplusplus
}
#endif

#endif
