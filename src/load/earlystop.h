/* earlystop: MLPerf LoadGen's early-stopping estimate (loadgen/early_stopping.cc and
 * PerformanceSummary::EarlyStopping in loadgen/results.cc; the rule is in the MLPerf inference
 * rules' "Early stopping" section). With q = 1 - percentile/100 the chance that one query is
 * slower than the true percentile, and X ~ Binomial(n, q), n queries of which k were slower
 * than a latency L support "the percentile is at most L" with the confidence when
 * P(X <= k) < 1 - confidence (strictly: LoadGen's find_min_passing tests prob < 1 - c).
 *
 * LoadGen's estimate (single-stream, multi-stream) is sorted[n - t], 0-based, of the n
 * latencies sorted ascending, for the largest t >= 1 that passes: the t-th largest latency,
 * discarding the t - 1 above it; with no t >= 1 passing ("need to process at least h_min + 1
 * queries") there is none. Its server scenario passes a run of n queries, t of them slower
 * than the target latency, when t passes. LoadGen searches the smallest passing h = n - t for
 * each t, evaluating the tail with a hypergeometric series; the two searches give the same t,
 * and the tail here is summed in long double, so the answers agree except where P(X <= t) is
 * within rounding (about 1e-9 relative) of 1 - confidence.
 * Pure functions; thread-safe. */
#ifndef MLBENCH_EARLYSTOP_H
#define MLBENCH_EARLYSTOP_H

#include <stdbool.h>
#include <stdint.h>

#include "load/histogram.h"

#define EARLYSTOP_CONFIDENCE 0.99 /* LoadGen's (results.cc: confidence = 0.99, tolerance 0) */

/* The largest number k of queries slower than a latency that n queries may have for "the
 * percentile-th percentile is at most that latency" to hold with the confidence (0 <
 * percentile < 100, taken as hist_fraction does; 0 < confidence < 1): the largest k with
 * P(X <= k) < 1 - confidence, X ~ Binomial(n, 1 - percentile/100). Returns -1 when even k = 0
 * fails (too few queries), or for arguments outside those ranges. A server-scenario run passes
 * when its queries over the target latency are at most this. Fast for any n (binary search on
 * k, each tail a sum of O(sqrt(n)) terms: about 1 ms at n = 10^7). */
int64_t earlystop_max_overlatency(uint64_t n, double percentile, double confidence);
/* The fewest queries for which earlystop_estimate has an answer (max_overlatency >= 1):
 * LoadGen's "need to process at least h_min + 1 queries" (64 for p90, 662 for p99 at 0.99).
 * 0 for arguments outside the ranges above. (A server run with no query over the latency
 * already passes with fewer: the n where max_overlatency becomes 0.) */
uint64_t earlystop_min_queries(double percentile, double confidence);
/* The estimate from a histogram of the n latencies: the value of rank n - k + 1 (1-based; the
 * k-th largest) where k = earlystop_max_overlatency(n, ...) >= 1, as the histogram reports
 * ranks (hist_value_at_rank: exact below 2^HIST_SUB_BITS ns, at most 1/128 above the true
 * value otherwise, never below it). Returns true and sets *estimate_ns, or false when too few
 * queries (k < 1). */
bool earlystop_estimate(const struct hist *h, double percentile, double confidence,
                        int64_t *estimate_ns);

#endif
