/* attrib: attribution of samples to stages. A sample belongs to every stage open at its time;
 * for a counter, the interval between two samples belongs to the stages open at its midpoint.
 * Pure functions, thread-safe on distinct data. */
#ifndef MLBENCH_ATTRIB_H
#define MLBENCH_ATTRIB_H

#include <stddef.h>
#include <stdint.h>

#include "measure/sampler.h"

/* One series over one stage of one run. Gauges: mean (time-weighted: each sample
 * stands for half the gaps to its neighbours), min and peak of the samples; counters:
 * the rate per second over the attributed intervals (time-weighted mean), and the lowest and
 * highest rate over windows of consecutive intervals of at least ATTRIB_RATE_WINDOW_NS, at most
 * the series' max_rate. All NAN when no valid sample fell in the stage (n == 0). */
/* Rates of counters: min and peak are over windows at least this long (attrib.c). */
#define ATTRIB_RATE_WINDOW_NS 95000000.0

struct metric_stat {
    double mean, min, peak;
    size_t n; /* samples (gauge) or intervals (counter) used */
};

/* A time interval relative to the run's start, ns. */
struct interval {
    int64_t start_ns, end_ns;
};

/* Statistics of every series of tab over the union of iv[0..n_iv) (sorted by start, disjoint),
 * with t0_ns the run's start on the samples' clock. out[] has tab->n_series entries. */
void attrib_stage(const struct sample_table *tab, int64_t t0_ns, const struct interval *iv,
                  size_t n_iv, struct metric_stat *out);

struct stage_data;

/* Attributes tab to each stage of d (merging the spans of each stage name) and to the whole run
 * [0, wall_ns]. Returns an array of d->n_stages + 1 rows of tab->n_series statistics: row i for
 * d->stages[i], the last row for the whole run; owned by the caller (free each row, then it). */
struct metric_stat **attrib_run(const struct sample_table *tab, int64_t t0_ns, int64_t wall_ns,
                                const struct stage_data *d);
void attrib_free(struct metric_stat **rows, size_t n_rows);

#endif
