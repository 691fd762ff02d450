/* peak: the search of `mlbench load --scenario server --find-peak` for the largest arrival rate
 * whose latency percentile meets the bound: double while a short probe meets it, bisect between
 * the last rate that met it and the first that did not until they are within the tolerance,
 * then confirm the rate found with a full-length run; a confirmation that fails makes the upper
 * end and the search goes on below it (at most PEAK_MAX_CONFIRMS times). Pure. */
#ifndef MLBENCH_LOAD_PEAK_H
#define MLBENCH_LOAD_PEAK_H

#include <stdbool.h>

#define PEAK_MAX_PROBES 40
#define PEAK_MAX_CONFIRMS 3

struct peak_search {
    double lo;         /* the highest rate known to meet the bound (0: none yet) */
    double hi;         /* the lowest rate known to miss it (0: none yet) */
    double tolerance;  /* stop bisecting when hi - lo <= tolerance * hi */
    double current;    /* the rate being tried */
    bool confirming;   /* current is the confirming run */
    bool done;
    int probes, confirms;
    double found;      /* the confirmed rate, 0 when none met the bound */
};

/* Starts at start_qps (> 0) with the relative tolerance (0 < tolerance < 1). */
void peak_init(struct peak_search *s, double start_qps, double tolerance);
/* The run to make next: false when the search is over (then s->found holds the answer). */
bool peak_next(const struct peak_search *s, double *qps, bool *confirm);
/* Reports whether the run peak_next asked for met the bound. */
void peak_report(struct peak_search *s, bool met);

#endif
