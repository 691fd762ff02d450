/* sweep.h: how a sweep document ("mlbench.sweep/1", docs/sweep.md) is shown: the terminal
 * table of `mlbench sweep` (sweep_text.c) and, for the report formats, the tables and sentences
 * they share (sweep_tables.c), so the terminal, Markdown and HTML say the same things. They
 * read the document's view (doc/sweep.h: req->sweep_doc for the formats), which takes an old,
 * hand-made or hostile file as it is: every member may be missing, null or of the wrong type,
 * and nothing read from it sizes a loop beyond what the file holds. Not thread-safe. */
#ifndef MLBENCH_EXPORT_SWEEP_H
#define MLBENCH_EXPORT_SWEEP_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>

#include <jansson.h>

#include "doc/sweep.h"
#include "export/export.h"

/* Prints the sweep to out for a terminal, at most 80 columns wide where names allow (longer
 * names are cut with an ellipsis): what was swept, one row per point (mark, name, status,
 * total median and interval, peak memory, bottleneck, throughput counters, GPU memory and
 * utilisation, cost, in as many tables as 80 columns need), the winner (or why none), the
 * points that did not run and why, the constraints not met, each point's warnings, and in
 * find-max mode the probes and the answer; "sweep: PATH" when sweep_path is not NULL. Nothing
 * from the document reaches out as a control character (term_clean). Returns 0, or -1 when
 * out cannot be written. */
int export_sweep_print(FILE *out, const json_t *sweep, const char *sweep_path);

/* ---- for the exporters ---------------------------------------------------------------- */

/* The columns of export_sweep_table, laid out once from what the points have (the view's
 * doc_sweep_columns); a column not shown is SIZE_MAX. */
struct export_sweep_columns {
    size_t col_counters;               /* the first counter's; one per counter */
    size_t col_peak, col_gpu_memory, col_gpu_util, col_cost, col_objective;
    size_t col_objective_mark;         /* the column the objective is (marked "*") */
    size_t ncols;
};
void export_sweep_columns(const struct doc_sweep *s, struct export_sweep_columns *c);

/* A point's status for people: "ok", "out of memory: <detail>"... (new string). */
char *export_sweep_status(const struct doc_sweep_point *p);

/* Starts t as the sweep table (the caller frees it): one row per point; column 0 the mark
 * ("★" the winner, "✗" constraints not met), then point, status, total median, its
 * interval, peak memory, bottleneck, one column per counter, GPU memory and utilisation when
 * any point has them, cost when priced, and the objective's value when it is none of these.
 * The objective's column header ends with " *". Returns the number of rows. */
size_t export_sweep_table(struct export_table *t, const struct doc_sweep *s,
                          const struct export_sweep_columns *c);

/* Appends a sentence to l (export.h), printf-style, its line breaks and tabs made spaces: the
 * sentences of a sweep for the outline and the terminal. */
void export_lines_add(struct strvec *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* One sentence: what was swept ("matrix sweep of 4 points over batch (2 values) and lr
 * (2 values), interleaved over 5 rounds (seed 1234); complete."). New string. */
char *export_sweep_about(const struct doc_sweep *s);
/* "winner: batch=64: the lowest total median (1.20 s)", or "no winner: ..." (new string). */
char *export_sweep_winner(const struct doc_sweep *s);
/* "* the objective: min:total, the lowest total median; constraints: ..." (new string). */
char *export_sweep_objective(const struct doc_sweep *s);
/* Notes under the table: the points that did not run ok and why, the constraints each point
 * failed, and each warning code of the points once, with the points it touches and what it
 * says ("few_runs (batch=1, batch=2 and 8 more): only 2 measured run(s): ..."). */
void export_sweep_notes(const struct doc_sweep *s, struct strvec *not_ok,
                        struct strvec *constraints, struct strvec *warnings);

/* find-max: starts t as the table of the probes (value, fits or why not, peak memory,
 * throughput, point) and returns its rows (0 and an empty table outside find-max mode). */
size_t export_sweep_probes(struct export_table *t, const struct doc_sweep *s);
/* find-max: the answer: the largest value that fits, the first failure, the budget, the memory
 * line and its prediction, the fastest probe against the largest fit. Nothing outside
 * find-max mode. */
void export_sweep_find_max(const struct doc_sweep *s, struct strvec *l);

#endif
