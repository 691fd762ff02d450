/* text_analysis: the analysis part of the terminal summary (text.c), and the two text helpers
 * the summary's files share. Not thread-safe (one call at a time per stream). */
#ifndef MLBENCH_EXPORT_TEXT_ANALYSIS_H
#define MLBENCH_EXPORT_TEXT_ANALYSIS_H

#include <stdio.h>

#include "doc/result.h"

#define TEXT_VERDICT_COLS 16 /* the verdict and counter name columns are at least this wide */

/* The default view's answer: the bottleneck and its verdict in plain words with the evidence
 * (and start-up when it is larger), then the top 3 findings, each piece of advice once with
 * every stage it is for, none a warning of the result says already. */
void text_answer(FILE *out, const struct doc_result *r);

/* The verbose view's analysis: every stage's verdict with its share, then every finding. */
void text_analysis(FILE *out, const struct doc_result *r);

/* Prints s; each line after the first starts with indent (a message with a stderr tail). */
void text_lines(FILE *out, const char *s, const char *indent);

/* s as text_lines prints it, as a new string (a table cell that spans lines). */
char *text_indented(const char *s, const char *indent);

#endif
