/* compare_cost: cost in a comparison (docs/compare.md#cost): when both results carry a `cost`
 * (mlbench run --price or --price-file), each side's cost per run at its own price, the ratio of
 * the times beside the ratio of the costs ("3x faster but 8x the price"), and the cost per unit
 * of the count counters both sides priced. Each side keeps its own price, so results of
 * different machines compare on both. Pure, thread-safe. */
#include "analysis/compare_cost.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "util/jsonx.h"

#define COMPARE_COST_MAX_UNITS 64 /* per-unit rows looked at (the file's list is not trusted) */

static json_t *jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static double ratio(double cand, double base)
{
    return isfinite(cand) && isfinite(base) && base > 0 ? cand / base : NAN;
}

static json_t *side(const json_t *cost, const json_t *result)
{
    const char *cur = jsonx_str(cost, "currency");
    return json_pack("{s:o, s:o, s:o, s:o}", "price_per_hour",
                     jnum(jsonx_num(cost, "price_per_hour")), "currency",
                     cur ? json_string(cur) : json_null(), "run_median",
                     jnum(jsonx_num(json_object_get(cost, "run"), "median")), "total_median_ns",
                     jnum(jsonx_num(json_object_get(json_object_get(result, "summary"), "wall_ns"),
                                    "median")));
}

/* The per-unit entry of counter in a cost object, or NULL. */
static const json_t *unit_of(const json_t *cost, const char *counter)
{
    const json_t *units = json_object_get(cost, "per_unit");
    for (size_t i = 0; i < json_array_size(units) && i < COMPARE_COST_MAX_UNITS; i++) {
        const char *name = jsonx_str(json_array_get(units, i), "counter");
        if (name && !strcmp(name, counter))
            return json_array_get(units, i);
    }
    return NULL;
}

json_t *compare_cost(const json_t *base, const json_t *cand)
{
    const json_t *cb = json_object_get(base, "cost"), *cc = json_object_get(cand, "cost");
    if (!json_is_object(cb) || !json_is_object(cc))
        return json_null();
    const char *kb = jsonx_str(cb, "currency"), *kc = jsonx_str(cc, "currency");
    bool same = kb && kc && !strcmp(kb, kc);
    json_t *b = side(cb, base), *c = side(cc, cand);
    double time_ratio = ratio(jsonx_num(c, "total_median_ns"), jsonx_num(b, "total_median_ns"));
    double cost_ratio = same ? ratio(jsonx_num(c, "run_median"), jsonx_num(b, "run_median"))
                             : NAN;
    json_t *units = json_array();
    const json_t *ub_all = json_object_get(cb, "per_unit");
    for (size_t i = 0; i < json_array_size(ub_all) && i < COMPARE_COST_MAX_UNITS; i++) {
        const json_t *ub = json_array_get(ub_all, i);
        const char *name = jsonx_str(ub, "counter");
        const json_t *uc = name ? unit_of(cc, name) : NULL;
        double per = jsonx_num(ub, "per"), per_c = jsonx_num(uc, "per");
        if (!uc || !(per > 0) || !(per_c > 0))
            continue;
        /* Both at the baseline's unit (say, per 1M images), whatever the candidate chose. */
        double vb = jsonx_num(ub, "median"), vc = jsonx_num(uc, "median") / per_c * per;
        json_array_append_new(units, json_pack("{s:s, s:f, s:o, s:o, s:o}", "counter", name,
                                               "per", per, "baseline", jnum(vb), "candidate",
                                               jnum(vc), "ratio",
                                               jnum(same ? ratio(vc, vb) : NAN)));
    }
    return json_pack("{s:o, s:o, s:b, s:o, s:o, s:o}", "baseline", b, "candidate", c,
                     "same_currency", same, "time_ratio", jnum(time_ratio), "cost_ratio",
                     jnum(cost_ratio), "per_unit", units);
}
