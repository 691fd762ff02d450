/* findings: the list of findings an analysis builds, and the one order every output shows them
 * in (docs/analysis.md, "Order of the findings"). Internal to the analysis library: the rule
 * files add (analyze.c and the checks of finding_checks.h), analyze.c sorts once, and
 * analysis_free (analyze.h, defined here) frees. Not thread-safe on one builder. */
#ifndef MLBENCH_FINDINGS_H
#define MLBENCH_FINDINGS_H

#include <stddef.h>

#include "analysis/rule_input.h"

struct analysis;

struct findings_builder {
    struct analysis *a;                 /* the findings go to a->findings */
    size_t cap;
    double *rank;                       /* per finding: its stage's share, -1 for total's */
    bool *behind;                       /* per finding: it ranks after the others (a stage
                                         * under LEAD_SHARE_MIN of the run, or rough figures) */
    const struct stage_resources *total; /* the run's own figures, or NULL */
};

/* Adds a finding about stage s with copies of the strings; a saving that is not finite and
 * positive counts as 0. */
void findings_add(struct findings_builder *b, const char *rule, const struct stage_resources *s,
                  const char *evidence, const char *recommendation, double saving_ns);

/* Puts b->a's findings in the one order and frees the builder's own memory (not the findings). */
void findings_sort(struct findings_builder *b);

#endif
