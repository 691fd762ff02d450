/* stats: summary statistics of repeated measurements (pure functions, no I/O, thread-safe).
 * Methods and their references are documented in docs/statistics.md. */
#ifndef MLBENCH_STATS_H
#define MLBENCH_STATS_H

#include <stddef.h>

/* |modified z-score| above which a value is an outlier (Iglewicz and Hoaglin). */
#define STATS_OUTLIER_Z 3.5

struct stats_summary {
    size_t n;
    double median;
    double mean;
    double stddev;    /* sample standard deviation (n-1); 0 when n == 1 */
    double mad;       /* raw median absolute deviation from the median (not scaled by 1.4826) */
    double min, max;
    double cv;        /* stddev / mean; 0 when mean == 0 */
    /* Distribution-free interval for the median from order statistics: the narrowest symmetric
     * pair of order statistics whose binomial coverage is >= 95 %. When n is too small for 95 %
     * (n < 6) it is [min, max] and ci_level says the coverage actually reached (n=1: 0). */
    double ci_low, ci_high;
    double ci_level;  /* coverage of [ci_low, ci_high], 0..1 */
    size_t n_outliers; /* values with |modified z| > STATS_OUTLIER_Z */
};

/* Summarises x[0..n-1] (any order; x is not modified) into *out.
 * Returns 0, or -1 when n == 0 or a value is not finite (NaN, +-inf; then *out is zeroed).
 * Uses O(n) heap scratch (aborts through xmalloc on OOM) and O(n log n) time. */
int stats_summarize(const double *x, size_t n, struct stats_summary *out);

/* Median of x[0..n-1] (any order, not modified; the mean of the two middle values when n is
 * even); NAN when n == 0 or a value is not finite. */
double stats_median(const double *x, size_t n);

/* The q-quantile (0 <= q <= 1) of sorted[0..n-1], sorted ascending and finite, by nearest rank:
 * the smallest value with at least q * n of the values at or below it (sorted[ceil(q n) - 1],
 * sorted[0] for q = 0). Always an observed value, never interpolated: p99 of 50 spans is the
 * slowest one. NAN when n == 0 or q is outside [0, 1]. docs/statistics.md#percentiles. */
double stats_quantile_sorted(const double *sorted, size_t n, double q);
/* The 1-based rank stats_quantile_sorted() picks: ceil(q n) clamped to [1, n]; 0 when n == 0
 * or q is outside [0, 1]. For code that finds the value without a sorted copy. */
size_t stats_quantile_rank(size_t n, double q);

/* Sorts x[0..n-1] ascending in place (finite values). */
void stats_sort(double *x, size_t n);

/* Modified z-score of every x[i] against the sample's median, written to z[0..n-1] (the
 * caller's array of n doubles; x is not modified):
 * 0.6745 (x - median) / MAD, or (x - median) / (1.253314 MeanAD) when MAD is 0, where MeanAD
 * is the mean absolute deviation from the median, and 0 for all when both are 0.
 * Returns the number with |z| > STATS_OUTLIER_Z. When a value is not finite every z[i] is NAN
 * and 0 is returned; n == 0 writes nothing and returns 0. */
size_t stats_modified_z(const double *x, size_t n, double *z);

#endif
