/* cost: the cost figures of a result from its summary and its price (see cost.h). */
#include "result/cost.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/jsonx.h"

double cost_of_seconds(double seconds, double per_hour)
{
    if (!isfinite(seconds) || seconds < 0 || !isfinite(per_hour) || per_hour <= 0)
        return NAN;
    return seconds * per_hour / 3600.0;
}

double cost_unit_scale(double cost_per_unit)
{
    if (!isfinite(cost_per_unit) || cost_per_unit <= 0)
        return 1;
    double per = 1;
    while (per < 1e12 && cost_per_unit * per < 0.01)
        per *= 1000;
    return per;
}

const char *cost_unit_label(double per)
{
    if (per >= 1e12)
        return "1T";
    if (per >= 1e9)
        return "1B";
    if (per >= 1e6)
        return "1M";
    if (per >= 1e3)
        return "1k";
    return "1";
}

bool cost_is_to_target(const char *counter)
{
    static const char suffix[] = "_time_to_target_s";
    if (!counter)
        return false;
    size_t n = strlen(counter), k = sizeof suffix - 1;
    return !strcmp(counter, "time_to_target_s") || (n > k && !strcmp(counter + n - k, suffix));
}

static json_t *jstr(const char *s)
{
    return s ? json_string(s) : json_null();
}

/* The cost of a duration summary in nanoseconds: median and interval. */
static json_t *interval_json(const struct stats_summary *ns, bool valid, double per_hour)
{
    double f = 1e-9;
    return json_pack("{s:o, s:o, s:o}", "median",
                     jsonx_real_or_null(valid ? cost_of_seconds(ns->median * f, per_hour) : NAN), "ci_low",
                     jsonx_real_or_null(valid ? cost_of_seconds(ns->ci_low * f, per_hour) : NAN), "ci_high",
                     jsonx_real_or_null(valid ? cost_of_seconds(ns->ci_high * f, per_hour) : NAN));
}

static json_t *per_unit_json(const struct counter_summary *c, const struct price_match *m)
{
    /* The rate over the whole run: the unit's share of everything the run was paid for. */
    double per_unit = c->rate_median > 0 ? cost_of_seconds(1.0, m->per_hour) / c->rate_median
                                         : NAN;
    if (!isfinite(per_unit))
        return NULL;
    double per = cost_unit_scale(per_unit);
    char desc[300];
    snprintf(desc, sizeof desc, "%s per %s %s", m->currency, cost_unit_label(per), c->name);
    return json_pack("{s:s, s:f, s:o, s:s}", "counter", c->name, "per", per, "median",
                     jsonx_real_or_null(per_unit * per), "description", desc);
}

json_t *cost_json(const struct summary *s, const struct price_match *m)
{
    json_t *stages = json_array(), *per_unit = json_array(), *to_target = json_array();
    for (size_t i = 0; i < s->n_stages; i++) {
        const struct stage_summary *st = &s->stages[i];
        json_array_append_new(stages, json_pack("{s:s, s:o}", "name", st->name, "median",
                                                jsonx_real_or_null(st->n ? cost_of_seconds(
                                                         st->active.median * 1e-9, m->per_hour)
                                                           : NAN)));
    }
    for (size_t i = 0; i < s->n_counters; i++) {
        const struct counter_summary *c = &s->counters[i];
        if (c->count) {
            json_t *u = per_unit_json(c, m);
            if (u)
                json_array_append_new(per_unit, u);
        }
        if (cost_is_to_target(c->name) && c->n > 0)
            json_array_append_new(
                to_target, json_pack("{s:s, s:o, s:o, s:o}", "counter", c->name, "median",
                                     jsonx_real_or_null(cost_of_seconds(c->last.median, m->per_hour)),
                                     "ci_low", jsonx_real_or_null(cost_of_seconds(c->last.ci_low, m->per_hour)),
                                     "ci_high",
                                     jsonx_real_or_null(cost_of_seconds(c->last.ci_high, m->per_hour))));
    }
    json_t *file = json_null();
    if (m->file)
        file = json_pack("{s:s, s:o, s:o, s:o, s:o}", "path", m->file, "entry", jstr(m->entry),
                         "rule", jstr(m->rule), "field", jstr(m->field), "value",
                         jstr(m->value));
    return json_pack("{s:f, s:s, s:s, s:o, s:o, s:o, s:o, s:o}", "price_per_hour", m->per_hour,
                     "currency", m->currency, "source", m->source, "price_file", file, "run",
                     interval_json(&s->wall, s->valid, m->per_hour), "stages", stages,
                     "per_unit", per_unit, "to_target", to_target);
}
