/* record_text: what `mlbench record` says of each result it stored (docs/cli.md, "mlbench
 * record"): a line for people, or an object of its --json array, read from the result document
 * (doc/result.h) beside the timings document it was made from (doc/timings.h). */
#ifndef MLBENCH_EXPORT_RECORD_TEXT_H
#define MLBENCH_EXPORT_RECORD_TEXT_H

#include <stdio.h>

#include <jansson.h>

#include "doc/timings.h"

/* Prints "stored ID  label 'x'  NAME: 1.234 us per call (median of N rounds of M calls, 95% CI
 * lo .. hi)" for the result doc made from t, then its warnings, through term_clean (names come
 * from the input). Returns 0, or -1 when out cannot be written. */
int export_record_print(FILE *out, const json_t *doc, const struct timings *t);

/* {"id", "label", "name", "path", "median_ns", "ci_low_ns", "ci_high_ns", "n"} of the result doc
 * made from t; path is the result file (NULL: written as null). New reference. */
json_t *export_record_json(const json_t *doc, const struct timings *t, const char *path);

#endif
