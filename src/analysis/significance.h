/* significance: the statistics that tell a change from noise in `mlbench compare`: the
 * Mann-Whitney U test and a percentile bootstrap interval of the ratio of medians, drawn from a
 * seeded xoshiro256** generator so that the same inputs and seed always give the same interval
 * (stored comparisons depend on that stream). Pure functions, thread-safe. The method and its
 * references are in docs/compare.md. */
#ifndef MLBENCH_SIGNIFICANCE_H
#define MLBENCH_SIGNIFICANCE_H

#include <stddef.h>
#include <stdint.h>

/* Mann-Whitney U test, two-sided, of samples x[0..nx) and y[0..ny). */
struct significance_mwu {
    double u;   /* U statistic of x: pairs (x_i, y_j) with x_i > y_j, ties counting 1/2 */
    double p;   /* two-sided p-value, in [0, 1] */
    int exact;  /* 1: exact distribution (no ties, C(nx+ny, nx) < 2^62, nx ny <= 10^7);
                 * 0: normal approximation with tie and continuity correction */
};

/* Fills *out. Returns 0, or -1 when nx or ny is 0 or a value is not finite (*out is then
 * {NAN, NAN, 0}). Uses O(nx + ny) heap scratch, and O(nx * ny) more for the exact case. */
int significance_mann_whitney(const double *x, size_t nx, const double *y, size_t ny,
                              struct significance_mwu *out);

/* Percentile bootstrap interval at level (in (0,1)) of median(cand) / median(base): both
 * samples are resampled with replacement `resamples` times from a generator seeded with
 * seed, so equal inputs give equal intervals. Returns 0 with *lo <= *hi, or -1 when a
 * sample is empty, a value is not finite, or a resampled baseline median is 0 (no ratio). */
int significance_bootstrap_ratio(const double *base, size_t nb, const double *cand,
                                 size_t nc, unsigned resamples, uint64_t seed, double level,
                                 double *lo, double *hi);

/* The same interval for the ratio of the nearest-rank q-quantiles (0 <= q <= 1,
 * stats_quantile_sorted) instead of the medians: quantile_q(cand) / quantile_q(base), each
 * sample resampled as above (span latencies: p50, p99), the resample's quantile drawn directly
 * from its exact distribution (a Beta order statistic), so the cost is O(resamples) after
 * sorting, whatever the sample sizes. -1 also when q is outside [0, 1]. */
int significance_bootstrap_quantile_ratio(const double *base, size_t nb, const double *cand,
                                          size_t nc, double q, unsigned resamples,
                                          uint64_t seed, double level, double *lo, double *hi);

/* Circular block bootstrap (Politis and Romano 1992) interval at level of the ratio
 * wmean(cand) / wmean(base), wmean the weighted mean sum(w v) / sum(w), for series whose
 * neighbouring values are correlated (a load run's per-second windows): each resample of a
 * series of n values joins blocks of `block` consecutive values (wrapping past the end) from
 * uniform random starts until it has n, so dependence within a block is kept. w may be NULL
 * (all weights 1). block 0 means round(cbrt(n)), at least 1; it is capped at n. Same
 * generator and seed rule as significance_bootstrap_ratio. Returns 0 with *lo <= *hi, or -1
 * when a series is empty, a value or weight is not finite, a weight is negative, or a
 * resample has no weight or a zero baseline mean. */
int significance_block_bootstrap_ratio(const double *base, const double *base_w, size_t nb,
                                       const double *cand, const double *cand_w, size_t nc,
                                       size_t block, unsigned resamples, uint64_t seed,
                                       double level, double *lo, double *hi);

/* The block length significance_block_bootstrap_ratio uses for block 0: round(cbrt(n)), at
 * least 1 (n^(1/3) is the rate Hall, Horowitz and Jing 1995 give for variance and intervals). */
size_t significance_default_block(size_t n);

#endif
