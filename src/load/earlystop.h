/* earlystop: LoadGen's early-stopping estimate (loadgen/early_stopping.cc, and the rules in
 * mlcommons/inference's "Early stopping" section). A run of n queries of which k took longer
 * than a latency L says, with the given confidence, that the true p-th percentile is at most L
 * only when the binomial tail P(X <= k | n, 1 - p) is below 1 - confidence. The estimate is
 * the smallest latency the observed queries support in that sense: the value of the lowest
 * order statistic that passes, which is at or above the raw percentile and falls towards it
 * as n grows. With too few queries no latency passes, and the estimate is unknown.
 * Pure functions. */
#ifndef MLBENCH_EARLYSTOP_H
#define MLBENCH_EARLYSTOP_H

#include <stdbool.h>
#include <stdint.h>

#include "load/histogram.h"

#define EARLYSTOP_CONFIDENCE 0.99 /* LoadGen's default */

/* The largest number of queries above the estimate that n queries may have for the claim
 * "the percentile-th percentile is at most this" to hold with the confidence (0 < percentile
 * < 100, 0 < confidence < 1): the largest k with P(X <= k | n, 1 - percentile/100) <=
 * 1 - confidence, X binomial. Returns -1 when even k = 0 fails (too few queries). */
int64_t earlystop_max_overlatency(uint64_t n, double percentile, double confidence);
/* The fewest queries for which earlystop_max_overlatency is >= 0. */
uint64_t earlystop_min_queries(double percentile, double confidence);
/* The estimate from a histogram of the n latencies: the latency of rank n - k (1-based) where
 * k = earlystop_max_overlatency(n, ...), as the histogram reports ranks (hist_percentile's
 * rounding up). Returns true and sets *estimate_ns, or false when too few queries. */
bool earlystop_estimate(const struct hist *h, double percentile, double confidence,
                        int64_t *estimate_ns);

#endif
