/* instruments: what a measured command runs inside, for as long as it is measured: the marker
 * receiver, the sampler that follows the command's process tree, and the environments of the
 * command (ours with MLBENCH_MARKER_SOCKET set to the receiver) and of its helpers (--prepare,
 * --cleanup: without it, so they cannot add events to a run). Used by the repetition loop
 * (session/session.c) and by `mlbench monitor`.
 *
 * Call runner_init() before instruments_open: the receiver's and sampler's threads must start
 * with the runner's signals blocked. Not thread-safe. */
#ifndef MLBENCH_INSTRUMENTS_H
#define MLBENCH_INSTRUMENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "measure/markers.h"
#include "measure/rank_link.h"
#include "measure/sampler.h"

struct instruments_config {
    int64_t interval_ns;    /* sampling interval (with adaptive, the longest) */
    bool adaptive;          /* sampler_config.adaptive */
    bool all_gpus;          /* --all-gpus */
    bool markers;           /* receive the command's markers (false: sampling only) */
    const char *extra_var;  /* "NAME=value" for the command's environment too, or NULL */
    const char *rank_listen; /* --ranks-listen ADDR: collect ranks of other hosts, or NULL */
};

struct instruments {
    struct marker_receiver *markers; /* NULL without markers or once instruments_stop_markers ran */
    struct rank_collector *collector; /* with rank_listen (and markers), else NULL */
    struct sampler *sampler;
    char **env;             /* the command's environment (strings borrowed from environ) */
    char **helper_env;      /* the helpers' environment */
    char *socket_var;       /* "MLBENCH_MARKER_SOCKET=<path>" in env, or NULL */
};

/* Starts the receiver (when asked), the rank collector (when asked) and opens the sampler
 * (never fails: sources that cannot start are skipped). Returns 0, or with a message in err
 * and nothing left open -1 (the receiver failed), -2 (the user's input: the collector's
 * address is bad or in use, or MLBENCH_MARKER_TRANSPORT / MLBENCH_MARKER_RING_BYTES is bad). */
int instruments_open(struct instruments *s, const struct instruments_config *cfg, char *err, size_t errlen);
/* For runner_spec.spawned with arg = the session: the sampler follows pid from now on. */
void instruments_spawned(void *arg, pid_t pid);
/* For runner_spec.before_reap with arg = the session: the receiver handles every datagram sent
 * so far while the ended child is still a zombie it can verify. */
void instruments_before_reap(void *arg);
/* Stops the receiver (its listener is not called after this); the sampler stays open. */
void instruments_stop_markers(struct instruments *s);
/* Stops and frees everything. Sample tables borrow the sampler's series definitions: free them
 * before. */
void instruments_close(struct instruments *s);

#endif
