/* analysis/history: the series of a store's history (doc/history.h, docs/store.md): the
 * results grouped into benchmarks (the same label, or the same command when there is no
 * label), the figures shown, and per benchmark and figure the series of the results whose runs
 * succeeded, with the step changes detect.c finds in each. Pure: no I/O; not thread-safe per
 * model. */
#ifndef MLBENCH_ANALYSIS_HISTORY_H
#define MLBENCH_ANALYSIS_HISTORY_H

#include <stdbool.h>

#include "doc/history.h"

/* Fills what h (its results and its stage filter h->stage read) gets from the analysis:
 * h->benchmark and h->n_benchmarks; h->stages, the figures shown (h->stage alone when given,
 * else DOC_HISTORY_TOTAL, then the stages in order of first appearance); and, with series, the
 * series with their points and the step changes found with h->min_effect_pct and h->z: one per
 * benchmark and figure that has a point, and the first figure of every benchmark even without
 * one (a dashboard says that nothing succeeded). Free with history_series_free. */
void history_series_build(struct doc_history *h, bool series);
/* Frees what history_series_build filled, and zeroes it. */
void history_series_free(struct doc_history *h);

/* The newest result of benchmark b, an index into h->results; h->n_results when it has none. */
size_t history_newest(const struct doc_history *h, size_t b);
/* Whether a change to slower starts at the newest result of its benchmark (what fails a CI
 * job: `mlbench history --detect` exits 1). */
bool history_regressed(const struct doc_history *h);

#endif
