/* findings: building the list of findings and ordering it (see findings.h). */
#include "analysis/findings.h"
#include "analysis/analyze.h"
#include "analysis/rule_figures.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

void findings_add(struct findings_builder *b, const char *rule, const struct stage_resources *s,
                  const char *evidence, const char *recommendation, double saving_ns)
{
    struct analysis *a = b->a;
    if (a->n_findings == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 16;
        a->findings = xreallocarray(a->findings, b->cap, sizeof *a->findings);
        b->rank = xreallocarray(b->rank, b->cap, sizeof *b->rank);
        b->behind = xreallocarray(b->behind, b->cap, sizeof *b->behind);
    }
    b->rank[a->n_findings] = s == b->total ? -1 : isfinite(s->share) ? s->share : 0;
    b->behind[a->n_findings] = (s != b->total && isfinite(s->share) && s->share < LEAD_SHARE_MIN) ||
                               (s->samples > 0 && s->samples < FEW_SAMPLES);
    a->findings[a->n_findings++] = (struct finding){
        .rule = xstrdup(rule), .stage = xstrdup(s->name ? s->name : "?"),
        .evidence = xstrdup(evidence), .recommendation = xstrdup(recommendation),
        .saving_ns = isfinite(saving_ns) && saving_ns > 0 ? saving_ns : 0};
}

struct ranked {
    struct finding f;
    double share; /* of its stage; -1 for the run's own findings */
    bool behind;  /* a small stage's, or from rough figures */
    size_t order;
};

/* The one order of the findings, which every output follows (the first finding is the first
 * recommendation everywhere): findings of a stage under LEAD_SHARE_MIN of the run, and those
 * drawn from fewer than FEW_SAMPLES samples ("rough"), after all others (issue 35: a 1.4 %
 * setup stage's 18 ms saving came first); within each group the larger saving first; among
 * equal savings the stage with the larger share of the run first, so that the bottleneck's
 * findings lead among equals, and the run's own findings (total) after every stage's; then the
 * order in which they were found (a stage's verdict before its other findings, stages in input
 * order). */
static int findings_order(const void *pa, const void *pb)
{
    const struct ranked *a = pa, *b = pb;
    if (a->behind != b->behind)
        return a->behind ? 1 : -1;
    if (a->f.saving_ns != b->f.saving_ns)
        return a->f.saving_ns > b->f.saving_ns ? -1 : 1;
    if (a->share != b->share)
        return a->share > b->share ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

void findings_sort(struct findings_builder *b)
{
    struct analysis *a = b->a;
    if (a->n_findings >= 2) {
        struct ranked *r = xmalloc(a->n_findings * sizeof *r);
        for (size_t i = 0; i < a->n_findings; i++)
            r[i] = (struct ranked){a->findings[i], b->rank[i], b->behind[i], i};
        qsort(r, a->n_findings, sizeof *r, findings_order);
        for (size_t i = 0; i < a->n_findings; i++)
            a->findings[i] = r[i].f;
        free(r);
    }
    free(b->rank);
    free(b->behind);
    b->rank = NULL;
    b->behind = NULL;
}

void analysis_free(struct analysis *a)
{
    for (size_t i = 0; i < a->n_verdicts; i++) {
        free(a->verdicts[i].stage);
        free(a->verdicts[i].rule);
        free(a->verdicts[i].evidence);
    }
    for (size_t i = 0; i < a->n_findings; i++) {
        free(a->findings[i].rule);
        free(a->findings[i].stage);
        free(a->findings[i].evidence);
        free(a->findings[i].recommendation);
    }
    free(a->verdicts);
    free(a->findings);
    free(a->bottleneck);
    memset(a, 0, sizeof *a);
}
