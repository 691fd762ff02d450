/* compare_text: the terminal view of a comparison document ("mlbench.comparison/1",
 * docs/compare.md), what `mlbench compare` prints without --json, read through
 * doc/comparison.h. Not thread-safe (one call at a time per stream). */
#ifndef MLBENCH_EXPORT_COMPARE_TEXT_H
#define MLBENCH_EXPORT_COMPARE_TEXT_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

/* Prints the comparison to out: per candidate the two results compared, whether they are like
 * for like, each side's measurement-quality warnings, the stage table (medians, change,
 * speedup, ratio interval, p, verdict, runs), what the intervals marked * cover and what an
 * inconclusive row leaves open, why each unreliable verdict is unreliable and how to get a
 * clean answer, the span latency of the stages that have it, the load table of load results,
 * cost, scaling, then the counters and metadata that differ; verbose (-v) every counter and
 * key, the resources and the environment's differences too; with several candidates the total
 * of each; and the verdict rule. comparison is borrowed; what it lacks prints as "—" or "?" or
 * is left out. Written through export_text_compose (no control character of the document
 * reaches out). Returns 0, or -1 when out cannot be written. */
int export_compare_print(FILE *out, const json_t *comparison, bool verbose);

#endif
