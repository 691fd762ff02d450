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

/* The verdict of a quantity measured nb and nc times (docs/compare.md#verdict): "too few
 * runs" below 2 on a side, "faster" or "slower" when p < alpha, |change_pct| >= the minimum
 * effect and the ratio interval [ci_lo, ci_hi] excludes 1, else "no significant change". A
 * static string. */
const char *compare_verdict(const struct compare_options *opt, size_t nb, size_t nc,
                            double change_pct, double p, double ci_lo, double ci_hi);

#endif
