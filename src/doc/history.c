/* doc/history.c: the answers every part of the history needs (doc/history.h): a result's
 * figure by stage name, and whether it can be a point of a trend. */
#include "doc/history.h"

#include <math.h>
#include <string.h>

const struct doc_history_stats *doc_history_figure(const struct doc_history_result *r,
                                                   const char *stage)
{
    if (!strcmp(stage, DOC_HISTORY_TOTAL))
        return &r->wall;
    for (size_t k = 0; k < r->n_stages; k++)
        if (r->stages[k].name && !strcmp(r->stages[k].name, stage))
            return &r->stages[k].t;
    return NULL;
}

const struct doc_history_stats *doc_history_trend_figure(const struct doc_history_result *r,
                                                         const char *stage)
{
    const struct doc_history_stats *t = doc_history_figure(r, stage);
    if (!t || r->runs_ok == 0 || !isfinite(t->median_ns) || t->median_ns <= 0)
        return NULL;
    return t;
}
