/* compare_method: what every part of the comparison applies (docs/compare.md): its options
 * and their defaults, which runs of a result count, and the verdict a change gets. A leaf of
 * the comparison's files (compare.c and the compare_*.c it calls): it calls none of them.
 * Pure functions on results read through doc/result.h, thread-safe. */
#ifndef MLBENCH_COMPARE_METHOD_H
#define MLBENCH_COMPARE_METHOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "doc/result.h"

#define COMPARE_DEFAULT_ALPHA 0.05
#define COMPARE_DEFAULT_MIN_EFFECT_PCT 2.0
#define COMPARE_DEFAULT_RESAMPLES 10000u
#define COMPARE_DEFAULT_SEED UINT64_C(0x6d6c62656e6368) /* "mlbench" in ASCII */

struct compare_options {
    double alpha;           /* significance level, in (0, 1); the interval covers 1 - alpha */
    double min_effect_pct;  /* smallest |change| in percent that can count as a change, >= 0 */
    unsigned resamples;     /* bootstrap resamples, >= 1 */
    uint64_t seed;          /* bootstrap seed, <= INT64_MAX (JSON integers are signed): the
                             * same seed gives the same intervals */
};

/* The defaults: alpha 0.05, minimum effect 2 %, 10 000 resamples, COMPARE_DEFAULT_SEED. */
void compare_options_default(struct compare_options *opt);

/* Whether a run counts: a measured run that succeeded (not a warm-up, status "ok"). */
bool compare_run_counts(const struct doc_run *run);

#define COMPARE_INTERVAL_LEVEL_MIN 0.8 /* a distribution-free interval covering less decides
                                        * nothing (2 runs a side: 67 %) */
#define COMPARE_RUNS_NEEDED_MAX 10000  /* a larger estimate is given as "more than" */

/* What a quantity measured on both sides comes to (docs/compare.md#verdict). */
struct compare_decision {
    const char *verdict;    /* "faster", "slower", "no change" (the interval lies within the
                             * minimum effect either way), "inconclusive" (neither: the runs
                             * cannot tell), "too few runs" (below 2 on a side); static */
    const char *decided_by; /* "rank test" or "ratio interval" for faster and slower, else NULL */
    double lo, hi;          /* the interval of the ratio candidate / baseline, NAN without */
    double level;           /* its real coverage: 1 - alpha for the bootstrap's; where the rank
                             * test cannot reach alpha with the runs at hand, the exact coverage
                             * of the distribution-free interval that replaces it */
    long runs_needed;       /* inconclusive: about this many runs a side would narrow the
                             * interval to +-settle_pct; -1: more than COMPARE_RUNS_NEEDED_MAX;
                             * 0 otherwise */
    double settle_pct;
};

/* The smallest two-sided p-value the exact rank test can give with nb and nc values (no
 * ties): 2 / C(nb + nc, nb), at most 1. 3 runs a side: 0.1. */
double compare_rank_p_min(size_t nb, size_t nc);

/* Decides from the values b[0..nb) and c[0..nc) (times of each side), their relative change
 * of the medians in percent, the rank test's p and the bootstrap interval [ci_lo, ci_hi] at
 * 1 - alpha. Where p_min (compare_rank_p_min) is below alpha: "faster"/"slower" when p < alpha,
 * |change_pct| >= the minimum effect and the interval excludes 1 (decided by the rank test).
 * Else the interval is the smallest and largest of the nb * nc ratios c[j] / b[i], which covers
 * the ratio with probability exactly 1 - p_min for continuous times differing by a factor
 * (Hodges-Lehmann's construction, the rank test's own interval); at COMPARE_INTERVAL_LEVEL_MIN
 * or more it decides alone: "slower" when it lies above 1 and the change reaches the minimum
 * effect (decided by the ratio interval). Otherwise "no change" when the interval lies within
 * [1 / (1 + m), 1 + m] (m the minimum effect), else "inconclusive" with an estimate of the runs
 * that would settle it: the interval's width shrinks as one over the square root of the runs. */
void compare_decide(const struct compare_options *opt, const double *b, size_t nb,
                    const double *c, size_t nc, double change_pct, double p, double ci_lo,
                    double ci_hi, struct compare_decision *d);

/* The verdict where an interval [lo, hi] of the ratio alone decides (span latency quantiles, a
 * load scenario's seconds): "faster"/"slower" when it excludes 1 and |change_pct| reaches the
 * minimum effect, "no change" when it lies within the minimum effect either way, else
 * "inconclusive" (also without an interval). A static string. */
const char *compare_interval_verdict(const struct compare_options *opt, double change_pct,
                                     double lo, double hi);

#endif
