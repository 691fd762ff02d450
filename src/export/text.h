/* text: the terminal summary of a result, the one renderer that `mlbench run` (after its runs)
 * and `mlbench show` (of a stored result) both print, from the result document
 * ("mlbench.result/1", docs/result-schema.md), so the two print the same thing; and the JSON
 * summary of `mlbench run --json`. Not thread-safe (one call at a time per stream). */
#ifndef MLBENCH_EXPORT_TEXT_H
#define MLBENCH_EXPORT_TEXT_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>

#include <jansson.h>

/* Longest stage or counter name a table shows, in terminal columns: name columns widen to the
 * longest name up to this, and longer names are cut at a character boundary with an ellipsis
 * (the result file keeps them whole). */
#define EXPORT_TEXT_NAME_COLS 40

/* Prints the summary of the result document doc to out: the command, the result's id, creation
 * time, host and mlbench version, the runs (and why each one that did not succeed failed); by
 * default then the answer (the bottleneck and its verdict in words, the top 3 findings, each
 * piece of advice once with its stages), the stage table with the interval of each median
 * (its coverage named truly), span latency, ranks and counters, the sources that could not
 * measure (a machine without an NVIDIA driver is not one), each warning code once, and
 * "result: PATH" when result_path is not NULL. verbose (-v) prints every section instead: CPU
 * and memory, the overlap of stages on other threads, metadata, the resource table per stage,
 * every verdict and finding, every note and warning. doc is borrowed and may be incomplete
 * (missing members print as "-" or are left out). Nothing from the document reaches out as a
 * control character (see export_text_clean). Returns 0, or -1 when out cannot be written. */
int export_text_print(FILE *out, const json_t *doc, const char *result_path, bool verbose);

/* The way every terminal view is written: compose(mem, doc, path) writes the text into memory,
 * then it goes to out through term_clean (no control character from the document reaches the
 * terminal). Returns 0, or -1 when out cannot be written. The sweep table uses it too. */
int export_text_compose(FILE *out, void (*compose)(FILE *, const json_t *, const char *),
                        const json_t *doc, const char *path);

/* The same for a view of anything: draw(mem, arg) written to out through term_clean. Returns
 * 0, or -1 when out cannot be written. */
int export_text_draw(FILE *out, void (*draw)(FILE *, const void *), const void *arg);

/* Prints {"id", "result_file", "status", "summary", "warnings"} of doc as one JSON document
 * (ASCII, indented) and a newline. result_path may be NULL (written as null). */
void export_text_print_json(FILE *out, json_t *doc, const char *result_path);


#endif
