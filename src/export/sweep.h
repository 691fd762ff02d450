/* sweep.h: how a sweep document ("mlbench.sweep/1", docs/sweeps.md) is shown: the terminal
 * table of `mlbench sweep` (sweep_text.c) and, for the report formats, the tables and sentences
 * they share (sweep_tables.c), so the terminal, Markdown and HTML say the same things. A sweep
 * document may be old, hand-made or hostile: every member may be missing, null or of the wrong
 * type, and nothing read from it sizes a loop beyond what the file holds. Not thread-safe. */
#ifndef MLBENCH_EXPORT_SWEEP_H
#define MLBENCH_EXPORT_SWEEP_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>

#include <jansson.h>

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

#define EXPORT_SWEEP_MAX_COUNTERS 8  /* counter columns, in order of first appearance */
#define EXPORT_SWEEP_MAX_PARAMS 16   /* parameter columns (CSV) and chart parameters */

/* What the table of a sweep shows, found once over its points. Strings are borrowed from
 * the document. */
struct export_sweep_columns {
    size_t npoints;                    /* json_array_size(points) */
    size_t ncounters;
    const char *counter[EXPORT_SWEEP_MAX_COUNTERS];
    const char *counter_stage[EXPORT_SWEEP_MAX_COUNTERS]; /* NULL: over the run or mixed */
    bool counter_count[EXPORT_SWEEP_MAX_COUNTERS]; /* a count: its rate is shown, else its value */
    size_t nparams;
    const char *param[EXPORT_SWEEP_MAX_PARAMS];
    bool param_numeric[EXPORT_SWEEP_MAX_PARAMS];   /* every value the points have parses */
    bool gpu_memory, gpu_util, priced;
    const char *currency;              /* price.currency, "USD" when priced without one */
    long long winner;                  /* winner.index, or -1 */
    /* columns of export_sweep_table */
    size_t col_counters, col_peak, col_gpu_memory, col_gpu_util, col_cost, col_objective;
    size_t col_objective_mark;         /* the column the objective is (marked "*") */
    size_t ncols;
};
void export_sweep_columns(const json_t *sweep, struct export_sweep_columns *c);

/* The name of a point: its name, else its command joined, else "point N" (never NULL; a new
 * string owned by the caller). */
char *export_sweep_point_name(const json_t *point, size_t position);
/* The counter named name in a point's figures.counters, or NULL. */
const json_t *export_sweep_counter(const json_t *point, const char *name);
/* Whether the point is the sweep's winner. */
bool export_sweep_is_winner(const struct export_sweep_columns *c, const json_t *point,
                            size_t position);
/* A point's status for people: "ok", "out of memory: <detail>"... (new string). */
char *export_sweep_status(const json_t *point);

/* Starts t as the sweep table (the caller frees it): one row per point; column 0 the mark
 * ("★" the winner, "✗" constraints not met), then point, status, total median, its interval,
 * peak memory, bottleneck, one column per counter, GPU memory and utilisation when any point
 * has them, cost when priced, and the objective's value when it is none of these. The
 * objective's column header ends with " *". Returns the number of rows. */
size_t export_sweep_table(struct export_table *t, const json_t *sweep,
                          const struct export_sweep_columns *c);

/* Appends a sentence to l (export.h), printf-style, its line breaks and tabs made spaces: the
 * sentences of a sweep for the outline and the terminal. */
void export_lines_add(struct export_lines *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* One sentence: what was swept ("matrix sweep of 4 points over batch (2 values) and lr
 * (2 values), interleaved over 5 rounds (seed 1234); complete."). New string. */
char *export_sweep_about(const json_t *sweep);
/* "winner: batch=64: the lowest total median (1.20 s)", or "no winner: ..." (new string). */
char *export_sweep_winner(const json_t *sweep);
/* "* the objective: min:total, the lowest total median; constraints: ..." (new string). */
char *export_sweep_objective(const json_t *sweep);
/* Notes under the table: the points that did not run ok and why, the constraints each point
 * failed, and every warning of every point ("batch=32: high_cv: ..."). */
void export_sweep_notes(const json_t *sweep, struct export_lines *not_ok,
                        struct export_lines *constraints, struct export_lines *warnings);

/* find-max: starts t as the table of the probes (value, fits or why not, peak memory,
 * throughput, point) and returns its rows (0 and an empty table outside find-max mode). */
size_t export_sweep_probes(struct export_table *t, const json_t *sweep);
/* find-max: the answer: the largest value that fits, the first failure, the budget, the memory
 * line and its prediction, the fastest probe against the largest fit. Nothing outside
 * find-max mode. */
void export_sweep_find_max(const json_t *sweep, struct export_lines *l);

/* A value "a parameter is numeric" accepts: a whole, finite number (strtod, nothing after). */
bool export_sweep_parse_number(const char *s, double *v);

#endif
