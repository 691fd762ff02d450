/* compare: compares mlbench results stage by stage (`mlbench compare`, and comparisons embedded
 * in reports): medians, change, the interval and test of significance.h, verdicts, counters,
 * metadata, resources and environment differences, and the CI gates. Pure functions (no I/O,
 * no command line), thread-safe: the results are read through doc/result.h, the comparison
 * document the gates check through doc/comparison.h. The method is in docs/compare.md. */
#ifndef MLBENCH_COMPARE_H
#define MLBENCH_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "analysis/compare_method.h"
#include "doc/comparison.h" /* DOC_COMPARISON_SCHEMA */
#include "doc/result.h"

/* Compares results[1..n) with results[0] (the baseline), each a result document as
 * doc_result_load_file() returns it (read once through doc/result.h); paths[i] is where
 * results[i] came from (paths, or any entry, may be NULL: written as null). opt NULL means the
 * defaults; bootstrap intervals need O(resamples) memory and O(resamples * runs) time per
 * stage. Returns a new reference to a document of schema DOC_COMPARISON_SCHEMA (shape in
 * docs/compare.md, read by doc/comparison.h), or NULL when n < 2 or an option is out of range.
 * Never fails on odd content: missing fields give nulls. */
json_t *compare_results(json_t *const *results, const char *const *paths, size_t n,
                        const struct compare_options *opt);

/* The comparison of load results (a "load" section, `mlbench load`;
 * docs/compare.md#load-results): base[0..nb) and cand[0..nc) are the results of each side as
 * doc_result_read views (nb, nc >= 1; more than one: repeated results, which are then
 * resampled), each side's scenario runs that count (doc_load_counts: not find-peak's probes)
 * matched by scenario and, for the server scenario, target QPS; per match the p50, the metric
 * percentile and the p99 of latency_s and the throughput, with a bootstrap interval of the
 * ratio and a verdict. *hits as for compare_explain (compare_clean_answer; may be NULL), opt
 * NULL the defaults. Returns a new object, or a JSON null when a side's first result has no
 * load section. */
json_t *compare_load(const struct doc_result *const *base, size_t nb,
                     const struct doc_result *const *cand, size_t nc,
                     const struct compare_options *opt, unsigned *hits);

/* What a stage row of compare_results says of cand against base for stage (NULL: the total),
 * without the measurement-quality check: the decision (compare_method.h) and the change of the
 * medians in percent (NAN without values on a side). opt NULL means the defaults. */
void compare_two(const struct doc_result *base, const struct doc_result *cand, const char *stage,
                 const struct compare_options *opt, struct compare_decision *d,
                 double *change_pct);

/* The CI gates of `mlbench compare` (docs/compare.md). A negative threshold is off. */
struct compare_gates {
    double fail_if_slower_pct;  /* fail when significantly slower by more than this */
    const char *stage;          /* the stage that gate looks at; NULL: "total" */
    double max_accuracy_drop;   /* fail when counter "accuracy" drops by more than this many
                                 * percentage points (values in 0..1 are read as fractions) */
    bool allow_undecided;       /* a slower gate that cannot decide is a note, not
                                 * COMPARE_GATE_UNDECIDED */
};

#define COMPARE_GATE_PASS 0
#define COMPARE_GATE_FAIL 1
#define COMPARE_GATE_UNDECIDED 4 /* mlbench compare's exit status too */

/* Checks the gates against every candidate of doc (a compare_results() document). Returns
 * COMPARE_GATE_FAIL when a gate failed, else COMPARE_GATE_UNDECIDED when --fail-if-slower could
 * not decide (a slowdown beyond its threshold is compatible with the runs, and none is shown;
 * unless allow_undecided), else COMPARE_GATE_PASS; msg receives one line per failed or
 * undecided gate and one per note ("note: " first), '\n'-separated, saying why ("" when there
 * is nothing to say; truncated to msglen). */
int compare_check_gates(const json_t *doc, const struct compare_gates *gates, char *msg,
                        size_t msglen);

/* Nonzero when an environment key (a dotted path such as "gpus[0].name") describes hardware or
 * software that changes speed, so a difference makes two results not like for like. */
int compare_env_key_matters(const char *key);

#endif
