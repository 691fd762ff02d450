/* span_stats: the latency distribution of one stage's spans (each `step`, each request):
 * count, nearest-rank percentiles (stats_quantile_sorted) and a log-scaled histogram
 * (docs/statistics.md#span-latency, docs/result-schema.md). Pure, thread-safe on distinct data. */
#ifndef MLBENCH_SPAN_STATS_H
#define MLBENCH_SPAN_STATS_H

#include <stddef.h>
#include <stdint.h>

/* Histogram bins per power of two of nanoseconds: bin b holds durations d with
 * 2^(b / 4) <= d < 2^((b + 1) / 4) ns (steps of about 19 %); a span of 0 ns counts as 1 ns. */
#define SPAN_STATS_BINS_PER_OCTAVE 4
#define SPAN_STATS_MAX_BIN (64 * SPAN_STATS_BINS_PER_OCTAVE - 1) /* bins of int64 durations */

struct span_stats {
    uint64_t n;                              /* closed spans */
    double p50_ns, p90_ns, p99_ns, p999_ns, max_ns;
    int first_bin;                           /* the bin of counts[0] */
    uint64_t *counts;                        /* from the first to the last non-empty bin */
    size_t n_bins;
};

/* The statistics of the n durations (ns, finite, >= 0) in d, which is sorted in place.
 * Returns a new object (free with span_stats_free), or NULL when n == 0. */
struct span_stats *span_stats_make(double *d, size_t n);
void span_stats_free(struct span_stats *s);

/* The histogram bin of a duration in ns (0 .. SPAN_STATS_MAX_BIN). */
int span_stats_bin(double ns);

#endif
