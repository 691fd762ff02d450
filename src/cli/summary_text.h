/* summary_text: the terminal summary of a result (a table per stage with readable units) and
 * the JSON summary printed by --json. Writes to the given stream; no control characters. */
#ifndef MLBENCH_SUMMARY_TEXT_H
#define MLBENCH_SUMMARY_TEXT_H

#include <stdio.h>

#include "result/result.h"

/* Prints the summary table, counters, metadata and warnings of r. result_path may be NULL. */
void summary_text_print(FILE *out, const struct bench_result *r, const char *result_path);
/* Prints {"id", "result_file", "status", "summary", "warnings"} of the result document doc
 * (from result_to_json) as one JSON document. */
void summary_text_print_json(FILE *out, json_t *doc, const char *result_path);

#endif
