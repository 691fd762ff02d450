/* compare_cost: cost in a comparison (docs/compare.md#cost): when both results carry a `cost`
 * (mlbench run --price or --price-file), each side's cost per run at its own price, the ratio of
 * the times beside the ratio of the costs ("3x faster but 8x the price"), and the cost per unit
 * of the count counters both sides priced. Each side keeps its own price, so results of
 * different machines compare on both. Pure, thread-safe. */
#include "analysis/compare_cost.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>


#define COMPARE_COST_MAX_UNITS 64 /* per-unit rows looked at (the file's list is not trusted) */

static json_t *jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static double ratio(double cand, double base)
{
    return isfinite(cand) && isfinite(base) && base > 0 ? cand / base : NAN;
}

static json_t *side(const struct doc_cost *cost, const struct doc_result *result)
{
    return json_pack("{s:o, s:o, s:o, s:o}", "price_per_hour", jnum(cost->price_per_hour),
                     "currency", cost->currency ? json_string(cost->currency) : json_null(),
                     "run_median", jnum(cost->run_median), "total_median_ns",
                     jnum(result->summary.wall.median));
}

/* The per-unit entry of counter in a cost, or NULL. */
static const struct doc_cost_unit *unit_of(const struct doc_cost *cost, const char *counter)
{
    for (size_t i = 0; i < cost->n_per_unit && i < COMPARE_COST_MAX_UNITS; i++) {
        const char *name = cost->per_unit[i].counter;
        if (name && !strcmp(name, counter))
            return &cost->per_unit[i];
    }
    return NULL;
}

json_t *compare_cost(const struct doc_result *base, const struct doc_result *cand)
{
    struct doc_cost cb, cc;
    if (!doc_cost_read(base->cost, &cb))
        return json_null();
    if (!doc_cost_read(cand->cost, &cc)) {
        doc_cost_free(&cb);
        return json_null();
    }
    bool same = cb.currency && cc.currency && !strcmp(cb.currency, cc.currency);
    double time_ratio = ratio(cand->summary.wall.median, base->summary.wall.median);
    double cost_ratio = same ? ratio(cc.run_median, cb.run_median) : NAN;
    json_t *units = json_array();
    for (size_t i = 0; i < cb.n_per_unit && i < COMPARE_COST_MAX_UNITS; i++) {
        const struct doc_cost_unit *ub = &cb.per_unit[i];
        const struct doc_cost_unit *uc = ub->counter ? unit_of(&cc, ub->counter) : NULL;
        if (!uc || !(ub->per > 0) || !(uc->per > 0))
            continue;
        /* Both at the baseline's unit (say, per 1M images), whatever the candidate chose. */
        double vb = ub->median, vc = uc->median / uc->per * ub->per;
        json_array_append_new(units, json_pack("{s:s, s:f, s:o, s:o, s:o}", "counter",
                                               ub->counter, "per", ub->per, "baseline", jnum(vb),
                                               "candidate", jnum(vc), "ratio",
                                               jnum(same ? ratio(vc, vb) : NAN)));
    }
    json_t *out = json_pack("{s:o, s:o, s:b, s:o, s:o, s:o}", "baseline", side(&cb, base),
                            "candidate", side(&cc, cand), "same_currency", same, "time_ratio",
                            jnum(time_ratio), "cost_ratio", jnum(cost_ratio), "per_unit", units);
    doc_cost_free(&cb);
    doc_cost_free(&cc);
    return out;
}
