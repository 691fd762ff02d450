/* detect: step changes in a series of results (the same benchmark measured again and again),
 * for `mlbench history --detect`. Each point is one result's median of a figure with its own
 * spread (interval of the median, MAD, n). The method, robust binary segmentation on the log
 * scale with per-result weights, is described and justified in docs/store.md. Pure functions,
 * no I/O, thread-safe. */
#ifndef MLBENCH_DETECT_H
#define MLBENCH_DETECT_H

#include <stddef.h>

#define DETECT_DEFAULT_MIN_EFFECT_PCT 2.0 /* as mlbench compare: smaller changes do not count */
#define DETECT_DEFAULT_Z 4.0              /* strength a change needs (in standard errors) */

struct detect_point {
    double median;          /* the result's median (any unit, > 0); others are left out */
    double ci_low, ci_high; /* interval of the median; NAN when unknown */
    double ci_level;        /* its coverage, 0..1; NAN when unknown */
    double mad;             /* raw median absolute deviation of the runs; NAN when unknown */
    long n;                 /* runs the median is over; 0 when unknown */
};

struct detect_options {
    double min_effect_pct;  /* smallest |change| in percent reported, >= 0 */
    double z;               /* smallest strength reported, > 0 */
};

struct detect_change {
    size_t index;           /* the first point after the change (an index into the input) */
    double before, after;   /* level of the segments either side (unit of the medians) */
    double change_pct;      /* 100 (after / before - 1): > 0 slower for a time */
    double z;               /* strength: difference of the levels over its standard error */
};

/* The defaults: DETECT_DEFAULT_MIN_EFFECT_PCT, DETECT_DEFAULT_Z. */
void detect_options_default(struct detect_options *opt);

/* Finds the step changes in p[0..n) (oldest first). Points whose median is not finite and
 * positive are skipped. opt NULL means the defaults. Returns the number of changes, with the
 * changes in *out in order (owned by the caller, free()), or 0 with *out NULL. Series of fewer
 * than 3 usable points have no changes: their noise cannot be told. */
size_t detect_changes(const struct detect_point *p, size_t n, const struct detect_options *opt,
                      struct detect_change **out);

#endif
