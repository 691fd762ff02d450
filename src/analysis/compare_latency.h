/* compare_latency: the per-stage span latency of a comparison, for compare.c (docs/compare.md
 * #span-latency-p50-and-p99-per-stage). Pure functions on results read through doc/result.h,
 * thread-safe. */
#ifndef MLBENCH_COMPARE_LATENCY_H
#define MLBENCH_COMPARE_LATENCY_H

#include <jansson.h>

#include "analysis/compare_method.h"

#define COMPARE_LATENCY_MIN_SPANS 20

/* The per-stage latency comparison of stage: a new object, or a JSON null when either side has
 * fewer than COMPARE_LATENCY_MIN_SPANS closed spans. *hits as for compare_explain
 * (compare_quality.h). */
json_t *compare_latency(const struct doc_result *base, const struct doc_result *cand,
                        const char *stage, const struct compare_options *opt, unsigned *hits);

#endif
