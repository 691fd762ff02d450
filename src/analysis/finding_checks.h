/* finding_checks: the findings beside the verdicts, one ops struct per rule file, which
 * analyze.c lists in one table and walks (a new rule is a file and a row): for each stage that
 * gets findings, after its verdict's finding, the checks of scope FINDING_STAGE; for the run,
 * those of FINDING_RUN; once after every stage, those of FINDING_JOB. A check reads what
 * rule_figures.h and rule_input.h hold and adds to a findings_builder; it never calls back into
 * analyze.c. Pure functions, thread-safe on distinct data. Documented for users in
 * docs/analysis.md ("Extra findings", "Ranks"): keep the two in step. */
#ifndef MLBENCH_FINDING_CHECKS_H
#define MLBENCH_FINDING_CHECKS_H

#include <stddef.h>

#include "analysis/findings.h"
#include "analysis/rule_figures.h"
#include "analysis/rule_input.h"

enum finding_scope {
    FINDING_STAGE, /* each stage that gets findings, after its verdict's */
    FINDING_RUN,   /* the run as a whole: total, or each top-level stage when there is none */
    FINDING_JOB,   /* once, after every stage: a multi-rank job's ranks */
};

/* What a check reads. */
struct finding_input {
    const struct analysis_context *ctx;
    const struct stage_resources *stage;  /* FINDING_STAGE, FINDING_RUN: the stage; else NULL */
    const struct figures *figures;        /* ...and its figures; else NULL */
    const char *verdict;                  /* FINDING_STAGE: the rule id of its verdict */
    const struct stage_resources *stages; /* analyze's input: stages[0..n) and total (or NULL) */
    size_t n;
    const struct stage_resources *total;
};

struct finding_check {
    enum finding_scope scope;
    /* Adds to b the findings of its rules about what `in` holds. */
    void (*add)(const struct finding_input *in, struct findings_builder *b);
};

/* stage_findings.c: mixed-precision, tensor-cores-idle, memory-pressure (FINDING_STAGE). */
extern const struct finding_check stage_findings_check;
/* run_findings.c: gpu-memory-headroom, other-load, cpu-contention (FINDING_RUN). */
extern const struct finding_check run_findings_check;
/* rank_findings.c: straggler, communication-bound (FINDING_JOB, from ctx->rank_stages). */
extern const struct finding_check rank_findings_check;

#endif
