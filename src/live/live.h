/* live: streaming aggregates of what mlbench measures, for a live exporter (`mlbench monitor`,
 * `mlbench run --serve`). The sampler's listener stores the latest sample row; the marker
 * receiver's listener folds each event into per-stage duration histograms, open-span gauges,
 * counter and metadata values. live_render writes it all in the Prometheus text format
 * (docs/monitoring.md lists the families).
 *
 * Memory is bounded however long it runs: at most LIVE_MAX_NAMES distinct names of each kind
 * (stages, counters, instants, metadata keys), LIVE_MAX_THREADS threads with open stages,
 * LIVE_MAX_DEPTH open stages per thread. What a bound turns away is counted in
 * mlbench_markers_dropped_total{reason=...}, never silently lost.
 *
 * Thread-safety: every function may be called from any thread. One mutex guards the state:
 * events arrive on the marker thread, rows on the sampler thread, scrapes on HTTP threads. */
#ifndef MLBENCH_LIVE_H
#define MLBENCH_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "measure/marker_parse.h"
#include "measure/sampler.h"

#define LIVE_MAX_NAMES 1000      /* distinct names per kind: stages, counters, instants, metadata */
#define LIVE_MAX_NAME_BYTES 256  /* longer stage/counter/instant names or keys are not tracked */
#define LIVE_MAX_VALUE_BYTES 256 /* metadata values are cut to this many bytes */
#define LIVE_MAX_THREADS 4096    /* threads with stages open at once */
#define LIVE_MAX_DEPTH 64        /* stages open at once on one thread */

struct live_metrics;

/* A new, empty aggregate. Never NULL (allocation failure aborts). Free with live_free. */
struct live_metrics *live_new(void);
/* Frees everything. The listeners must be removed (or their threads stopped) first. NULL is
 * allowed. */
void live_free(struct live_metrics *live);

/* marker_listener (markers_set_listener(r, live_on_marker, live)): folds one event in. arg is
 * the struct live_metrics. tok == NULL counts one malformed datagram. */
void live_on_marker(void *arg, const struct marker_token *tok);
/* sampler_listener (sampler_set_listener(s, live_on_sample, live)): keeps a copy of row `row`
 * of tab as the latest values. arg is the struct live_metrics. */
void live_on_sample(void *arg, const struct sample_table *tab, size_t row);
/* A query of `mlbench load` ended (arg: the live_metrics): ok with its latency from its due
 * time, or failed (latency ignored). Exported as mlbench_load_latency_seconds and
 * mlbench_load_queries_total (docs/monitoring.md). */
void live_on_query(void *arg, int64_t latency_ns, bool ok);

/* Says that a marker receiver feeds this aggregate, so the marker counters are exported (at 0
 * until events come). Without it, the marker families appear once an event arrives. */
void live_expect_markers(struct live_metrics *live);
/* Adds malformed datagrams learnt of another way (e.g. a run's event log). */
void live_add_malformed(struct live_metrics *live, uint64_t n);
/* For a receiver that is never in a run (`mlbench monitor`): datagrams is markers_outside(),
 * every datagram it got. Those that did not reach live_on_marker as events were malformed;
 * call it after reading markers_outside, so that the estimate never exceeds the truth (events
 * still in flight make it lag, not overshoot). The exported count is the larger of this
 * estimate and the malformed datagrams reported directly. */
void live_set_marker_datagrams(struct live_metrics *live, uint64_t datagrams);
/* Sets mlbench_markers_foreign_total: markers_foreign(), datagrams from processes outside the
 * measured tree, which never reach live_on_marker. */
void live_set_marker_foreign(struct live_metrics *live, uint64_t total);
/* Sets mlbench_sampler_errors_total (the sampler's running count, sampler_errors()). */
void live_set_sampler_errors(struct live_metrics *live, uint64_t total);

/* The workload ended: its open spans are forgotten (mlbench_stage_active goes back to 0).
 * Histograms and counters are kept. */
void live_close_spans(struct live_metrics *live);
/* Forgets the open spans of threads that no longer exist (tgkill(pid, tid, 0) fails with
 * ESRCH): a worker killed inside a stage, a thread that ended without ending its stage.
 * Threads whose process did not exist in mlbench's PID namespace when their first stage
 * began (a container's) are never pruned. Returns the number of threads forgotten. */
size_t live_prune_dead(struct live_metrics *live);

/* The current exposition (text format 0.0.4), NUL-terminated, owned by the caller (free()).
 * *len receives its length. */
char *live_render(struct live_metrics *live, size_t *len);

/* What the aggregate holds, for tests and diagnostics. */
struct live_usage {
    size_t stages, counters, instants, metadata; /* distinct names kept */
    size_t threads;                              /* threads with open stages */
    size_t open_spans;
    size_t series;                               /* resource series of the latest row */
    size_t bytes;                                /* heap memory held (approximate: payloads) */
    uint64_t dropped;                            /* all mlbench_markers_dropped_total reasons */
};
void live_usage(struct live_metrics *live, struct live_usage *u);

#endif
