/* sweep_figures: what a sweep shows of each point, from its result (see sweep.h): the
 * "figures" object of docs/sweep.md, read from the result document and written into the sweep
 * document. Split from sweep.c, which runs the points. */
#include "session/sweep.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "doc/result.h"
#include "doc/sweep.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

/* v, or NAN when it is not finite: a figure the document would write as null. */
static double known(double v)
{
    return isfinite(v) ? v : NAN;
}

/* The peak (or mean) of metric in a resources list, summed over its labels (GPUs), or averaged
 * over them when not sum; NAN without one. */
static double resource(const struct doc_resources *res, const char *metric, bool peak, bool sum)
{
    double total = NAN;
    size_t n = 0;
    for (size_t i = 0; i < res->n; i++) {
        const struct doc_resource *r = &res->v[i];
        double v = peak ? r->peak : r->mean;
        if (!r->metric || strcmp(r->metric, metric) || isnan(v))
            continue;
        total = isnan(total) ? v : total + v;
        n++;
    }
    return known(n && !sum ? total / (double)n : total);
}

void sweep_figures(const struct doc_result *r, struct doc_sweep_figures *f)
{
    const struct doc_summary *s = &r->summary;
    doc_sweep_figures_read(NULL, f);
    f->total_median_ns = s->wall.median;
    f->total_ci_low_ns = s->wall.ci_low;
    f->total_ci_high_ns = s->wall.ci_high;
    f->total_n = s->wall.present ? (double)s->wall.n : NAN;

    const char *bottleneck = r->analysis.bottleneck;
    f->stages = s->n_stages ? xcalloc(s->n_stages, sizeof *f->stages) : NULL;
    for (size_t i = 0; i < s->n_stages; i++) {
        const struct doc_stage *st = &s->stages[i];
        if (!st->name)
            continue;
        f->stages[f->n_stages++] = (struct doc_sweep_stage){
            .name = st->name, .depth = st->depth, .median_ns = st->active.median,
            .share = st->share};
        if (bottleneck && !strcmp(bottleneck, st->name) && !f->bottleneck.stage) {
            const char *rule = NULL; /* the last verdict on the stage */
            for (size_t k = 0; k < r->analysis.n_verdicts; k++) {
                const struct doc_verdict *v = &r->analysis.verdicts[k];
                if (v->stage && !strcmp(v->stage, st->name))
                    rule = v->rule;
            }
            f->bottleneck = (struct doc_sweep_bottleneck){
                .stage = st->name, .verdict = rule, .share = st->share,
                .median_ns = st->active.median};
        }
    }

    f->counters = s->n_counters ? xcalloc(s->n_counters, sizeof *f->counters) : NULL;
    for (size_t i = 0; i < s->n_counters; i++) {
        const struct doc_counter *c = &s->counters[i];
        if (!c->name)
            continue;
        double rate = c->stage ? c->stage_rate_per_s_median : NAN;
        if (isnan(rate))
            rate = c->rate_per_s_median;
        f->counters[f->n_counters++] = (struct doc_sweep_counter){
            .name = c->name, .stage = c->stage, .rate_per_s = c->count ? rate : NAN,
            .last_median = c->last.median, .count = c->count};
    }

    f->peak_memory_bytes = resource(&s->resources, "process_resident_bytes", true, false);
    if (isnan(f->peak_memory_bytes))
        f->peak_memory_bytes = s->max_rss.max;
    f->gpu_memory_peak_bytes = resource(&s->resources, "gpu_process_memory_bytes", true, true);
    f->gpu_utilization_mean = resource(&s->resources, "gpu_utilization_ratio", false, false);
    struct doc_cost cost;
    f->cost_per_run = doc_cost_read(r->cost, &cost) ? cost.run_median : NAN;
    doc_cost_free(&cost);
}

json_t *sweep_figures_json(const struct doc_sweep_figures *f)
{
    json_t *j = json_object();
    json_object_set_new(j, "total", json_pack("{s:o, s:o, s:o, s:o}",
        "median_ns", jsonx_real_or_null(f->total_median_ns),
        "ci_low_ns", jsonx_real_or_null(f->total_ci_low_ns),
        "ci_high_ns", jsonx_real_or_null(f->total_ci_high_ns), "n", jsonx_count_or_null(f->total_n)));
    json_t *stages = json_array();
    for (size_t i = 0; i < f->n_stages; i++) {
        const struct doc_sweep_stage *st = &f->stages[i];
        json_array_append_new(stages, json_pack("{s:s, s:o, s:o, s:o}", "name", st->name,
            "depth", jsonx_real_or_null(st->depth), "median_ns",
            jsonx_real_or_null(st->median_ns), "share", jsonx_real_or_null(st->share)));
    }
    json_object_set_new(j, "stages", stages);
    const struct doc_sweep_bottleneck *bn = &f->bottleneck;
    json_object_set_new(j, "bottleneck", !bn->stage ? json_null()
        : json_pack("{s:s, s:s?, s:o, s:o}", "stage", bn->stage, "verdict", bn->verdict,
                    "share", jsonx_real_or_null(bn->share),
                    "median_ns", jsonx_real_or_null(bn->median_ns)));
    json_t *counters = json_array();
    for (size_t i = 0; i < f->n_counters; i++) {
        const struct doc_sweep_counter *c = &f->counters[i];
        json_array_append_new(counters, json_pack("{s:s, s:s?, s:o, s:o, s:b}", "name", c->name,
            "stage", c->stage, "rate_per_s", jsonx_real_or_null(c->rate_per_s),
            "last_median", jsonx_real_or_null(c->last_median), "count", c->count));
    }
    json_object_set_new(j, "counters", counters);
    json_object_set_new(j, "peak_memory_bytes", jsonx_real_or_null(f->peak_memory_bytes));
    json_object_set_new(j, "gpu_memory_peak_bytes",
                        jsonx_real_or_null(f->gpu_memory_peak_bytes));
    json_object_set_new(j, "gpu_utilization_mean", jsonx_real_or_null(f->gpu_utilization_mean));
    json_object_set_new(j, "cost_per_run", jsonx_real_or_null(f->cost_per_run));
    return j;
}
