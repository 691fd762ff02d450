/* analyze: bottleneck analysis. Classifies each stage from its resource figures (what it is
 * bound by), and lists findings with evidence and a recommendation, ordered by the time they
 * could save. Pure functions over plain data; the rules, their thresholds and their saving
 * estimates are documented in docs/analysis.md. Thread-safe on distinct data. */
#ifndef MLBENCH_ANALYZE_H
#define MLBENCH_ANALYZE_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/rule_input.h"

/* One conclusion about one stage. */
struct finding {
    char *rule;              /* rule id, e.g. "cpu-bound-single-thread" (docs/analysis.md) */
    char *stage;
    char *evidence;          /* the numbers it rests on, for people */
    char *recommendation;    /* what to try */
    double saving_ns;        /* estimated time per run it could save in its stage (findings of
                              * nested stages overlap: do not add them); 0 when it cannot be said */
};

/* The verdict of one stage: the rule that classifies it ("idle" and so on). */
struct verdict {
    char *stage;
    char *rule;
    char *evidence;
};

struct analysis {
    struct verdict *verdicts;   /* one per stage analysed, in input order, then total */
    size_t n_verdicts;
    struct finding *findings;   /* in the one order every output uses (analyze.c, findings_order):
                                 * saving_ns, largest first; then stages before the run's own
                                 * findings; then the larger share of the run; then input order */
    size_t n_findings;
    char *bottleneck;           /* stage holding the pipeline back (largest top-level share; the
                                 * first on ties), or NULL when there is no top-level stage */
};

/* Analyses stages[0..n) (leaf and parent stages alike) and total (NULL: none; then the run-wide
 * checks look at the top-level stages). Neither input is kept. *out is overwritten, not freed;
 * its strings are owned by it: free it with analysis_free (which zeroes it). */
void analyze(const struct analysis_context *ctx, const struct stage_resources *stages, size_t n,
             const struct stage_resources *total, struct analysis *out);
void analysis_free(struct analysis *a);

#endif
