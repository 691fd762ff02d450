/* doc/comparison.c: the reader of comparison documents (see comparison.h): each member read
 * once with the tolerant getters of util/jsonx, and the answers derived from them. */
#include "doc/comparison.h"

#include <stdlib.h>
#include <string.h>

#include "util/jsonx.h"
#include "util/xalloc.h"

static bool is_true(const json_t *o, const char *key)
{
    return json_is_true(json_object_get(o, key));
}

static const json_t *object(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_object(v) ? v : NULL;
}

/* A new array of n elements of size bytes (never NULL, so that a view of nothing is valid). */
static void *elements(size_t n, size_t size)
{
    return xcalloc(n ? n : 1, size);
}

static void read_who(const json_t *o, struct doc_cmp_who *w)
{
    w->id = jsonx_str(o, "id");
    w->label = jsonx_str(o, "label");
    w->path = jsonx_str(o, "path");
}

/* ---- stages ----------------------------------------------------------------------------- */

static void read_quantile(const json_t *o, struct doc_cmp_quantile *q)
{
    q->baseline_ns = jsonx_num(o, "baseline_ns");
    q->candidate_ns = jsonx_num(o, "candidate_ns");
    q->change_pct = jsonx_num(o, "change_pct");
    q->ratio_ci_low = jsonx_num(o, "ratio_ci_low");
    q->ratio_ci_high = jsonx_num(o, "ratio_ci_high");
    q->verdict = jsonx_str(o, "verdict");
    q->statistical_verdict = jsonx_str(o, "statistical_verdict");
    q->unreliable_reason = jsonx_str(o, "unreliable_reason");
}

static void read_stage(const json_t *o, struct doc_cmp_stage *s)
{
    s->name = jsonx_str(o, "name");
    long long depth = jsonx_int(o, "depth", 0);
    s->depth = depth < 0 ? 0 : depth > DOC_MAX_DEPTH ? DOC_MAX_DEPTH : (int)depth;
    s->baseline_median_ns = jsonx_num(o, "baseline_median_ns");
    s->candidate_median_ns = jsonx_num(o, "candidate_median_ns");
    s->change_pct = jsonx_num(o, "change_pct");
    s->speedup = jsonx_num(o, "speedup");
    s->ratio_ci_low = jsonx_num(o, "ratio_ci_low");
    s->ratio_ci_high = jsonx_num(o, "ratio_ci_high");
    s->p_value = jsonx_num(o, "p_value");
    s->n_baseline = jsonx_int(o, "n_baseline", 0);
    s->n_candidate = jsonx_int(o, "n_candidate", 0);
    s->verdict = jsonx_str(o, "verdict");
    s->statistical_verdict = jsonx_str(o, "statistical_verdict");
    s->unreliable_reason = jsonx_str(o, "unreliable_reason");
    s->test = jsonx_str(o, "test");
    s->ratio_ci_level = jsonx_num(o, "ratio_ci_level");
    s->decided_by = jsonx_str(o, "decided_by");
    s->runs_needed = jsonx_int(o, "runs_needed", 0);
    s->settle_pct = jsonx_num(o, "settle_pct");
    const json_t *lat = object(o, "latency");
    s->latency.present = lat != NULL;
    s->latency.n_baseline = jsonx_int(lat, "n_baseline", 0);
    s->latency.n_candidate = jsonx_int(lat, "n_candidate", 0);
    read_quantile(json_object_get(lat, "p50"), &s->latency.p50);
    read_quantile(json_object_get(lat, "p99"), &s->latency.p99);
}

/* ---- side by side ----------------------------------------------------------------------- */

static void read_warnings(const json_t *a, struct doc_warning **out, size_t *n)
{
    *n = json_array_size(a);
    *out = elements(*n, sizeof **out);
    for (size_t i = 0; i < *n; i++) {
        (*out)[i].code = jsonx_str(json_array_get(a, i), "code");
        (*out)[i].message = jsonx_str(json_array_get(a, i), "message");
    }
}

/* A value of the environment as the writer copied it: NULL for null. */
static const json_t *value(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_null(v) ? NULL : v;
}

static void read_pairs(const json_t *o, struct doc_cmp_candidate *c)
{
    const json_t *a = json_object_get(o, "counters");
    c->n_counters = json_array_size(a);
    c->counters = elements(c->n_counters, sizeof *c->counters);
    for (size_t i = 0; i < c->n_counters; i++) {
        const json_t *x = json_array_get(a, i);
        c->counters[i].name = jsonx_str(x, "name");
        c->counters[i].baseline = jsonx_num(x, "baseline");
        c->counters[i].candidate = jsonx_num(x, "candidate");
    }
    a = json_object_get(o, "metadata");
    c->n_metadata = json_array_size(a);
    c->metadata = elements(c->n_metadata, sizeof *c->metadata);
    for (size_t i = 0; i < c->n_metadata; i++) {
        const json_t *x = json_array_get(a, i);
        c->metadata[i].key = jsonx_str(x, "key");
        c->metadata[i].baseline = jsonx_str(x, "baseline");
        c->metadata[i].candidate = jsonx_str(x, "candidate");
    }
    a = json_object_get(o, "resources");
    c->n_resources = json_array_size(a);
    c->resources = elements(c->n_resources, sizeof *c->resources);
    for (size_t i = 0; i < c->n_resources; i++) {
        const json_t *x = json_array_get(a, i);
        c->resources[i].stage = jsonx_str(x, "stage");
        c->resources[i].metric = jsonx_str(x, "metric");
        c->resources[i].statistic = jsonx_str(x, "statistic");
        c->resources[i].baseline = jsonx_num(x, "baseline");
        c->resources[i].candidate = jsonx_num(x, "candidate");
    }
    a = json_object_get(o, "environment_differences");
    c->n_environment_differences = json_array_size(a);
    c->environment_differences = elements(c->n_environment_differences,
                                          sizeof *c->environment_differences);
    for (size_t i = 0; i < c->n_environment_differences; i++) {
        const json_t *x = json_array_get(a, i);
        struct doc_cmp_env *e = &c->environment_differences[i];
        e->key = jsonx_str(x, "key");
        e->baseline = value(x, "baseline");
        e->candidate = value(x, "candidate");
        e->matters = is_true(x, "matters");
    }
}

/* ---- load, cost, scaling ---------------------------------------------------------------- */

static void read_load_metric(const json_t *o, struct doc_cmp_load_metric *m)
{
    m->name = jsonx_str(o, "name");
    m->unit = jsonx_str(o, "unit");
    m->metric = is_true(o, "metric");
    m->baseline = jsonx_num(o, "baseline");
    m->candidate = jsonx_num(o, "candidate");
    m->change_pct = jsonx_num(o, "change_pct");
    m->ratio_ci_low = jsonx_num(o, "ratio_ci_low");
    m->ratio_ci_high = jsonx_num(o, "ratio_ci_high");
    m->p_value = jsonx_num(o, "p_value");
    m->test = jsonx_str(o, "test");
    m->verdict = jsonx_str(o, "verdict");
    m->statistical_verdict = jsonx_str(o, "statistical_verdict");
    m->unreliable_reason = jsonx_str(o, "unreliable_reason");
    m->seconds_baseline = jsonx_int(o, "seconds_baseline", 0);
    m->seconds_candidate = jsonx_int(o, "seconds_candidate", 0);
}

static void read_load_match(const json_t *o, struct doc_cmp_load_match *m)
{
    m->scenario = jsonx_str(o, "scenario");
    m->target_qps = jsonx_num(o, "target_qps");
    m->candidate_target_qps = jsonx_num(o, "candidate_target_qps");
    m->peak = is_true(o, "peak");
    m->percentile = jsonx_num(o, "percentile");
    m->resampling = jsonx_str(o, "resampling");
    m->block_seconds = jsonx_int(o, "block_seconds", -1);
    m->n_baseline = jsonx_int(o, "n_baseline", 0);
    m->n_candidate = jsonx_int(o, "n_candidate", 0);
    m->valid_baseline = is_true(o, "valid_baseline");
    m->valid_candidate = is_true(o, "valid_candidate");
    const json_t *a = json_object_get(o, "metrics");
    m->n_metrics = json_array_size(a);
    m->metrics = elements(m->n_metrics, sizeof *m->metrics);
    for (size_t i = 0; i < m->n_metrics; i++)
        read_load_metric(json_array_get(a, i), &m->metrics[i]);
}

static void read_load(const json_t *o, struct doc_cmp_load *l)
{
    l->present = o != NULL;
    const json_t *a = json_object_get(o, "scenarios");
    l->n_matches = json_array_size(a);
    l->matches = elements(l->n_matches, sizeof *l->matches);
    for (size_t i = 0; i < l->n_matches; i++)
        read_load_match(json_array_get(a, i), &l->matches[i]);
    a = json_object_get(o, "unmatched");
    l->n_unmatched = json_array_size(a);
    l->unmatched = elements(l->n_unmatched, sizeof *l->unmatched);
    for (size_t i = 0; i < l->n_unmatched; i++) {
        const json_t *x = json_array_get(a, i);
        l->unmatched[i].side = jsonx_str(x, "side");
        l->unmatched[i].scenario = jsonx_str(x, "scenario");
        l->unmatched[i].target_qps = jsonx_num(x, "target_qps");
    }
}

static void free_load(struct doc_cmp_load *l)
{
    for (size_t i = 0; i < l->n_matches; i++)
        free(l->matches[i].metrics);
    free(l->matches);
    free(l->unmatched);
}

static void read_cost_side(const json_t *o, struct doc_cmp_cost_side *s)
{
    s->price_per_hour = jsonx_num(o, "price_per_hour");
    s->currency = jsonx_str(o, "currency");
    s->run_median = jsonx_num(o, "run_median");
    s->total_median_ns = jsonx_num(o, "total_median_ns");
}

static void read_cost(const json_t *o, struct doc_cmp_cost *c)
{
    c->present = o != NULL;
    read_cost_side(json_object_get(o, "baseline"), &c->baseline);
    read_cost_side(json_object_get(o, "candidate"), &c->candidate);
    c->same_currency = is_true(o, "same_currency");
    c->time_ratio = jsonx_num(o, "time_ratio");
    c->cost_ratio = jsonx_num(o, "cost_ratio");
    const json_t *a = json_object_get(o, "per_unit");
    c->n_per_unit = json_array_size(a);
    c->per_unit = elements(c->n_per_unit, sizeof *c->per_unit);
    for (size_t i = 0; i < c->n_per_unit; i++) {
        const json_t *x = json_array_get(a, i);
        c->per_unit[i].counter = jsonx_str(x, "counter");
        c->per_unit[i].per = jsonx_num(x, "per");
        c->per_unit[i].baseline = jsonx_num(x, "baseline");
        c->per_unit[i].candidate = jsonx_num(x, "candidate");
        c->per_unit[i].ratio = jsonx_num(x, "ratio");
    }
}

static void read_scaling_side(const json_t *o, struct doc_cmp_scaling_side *s)
{
    s->ranks = jsonx_num(o, "ranks");
    s->throughput = jsonx_num(o, "throughput");
    s->per_rank = jsonx_num(o, "per_rank");
    s->allreduce_share = jsonx_num(o, "allreduce_share");
}

static void read_scaling(const json_t *o, struct doc_cmp_scaling *s)
{
    s->present = o != NULL;
    s->basis = jsonx_str(o, "basis");
    read_scaling_side(json_object_get(o, "baseline"), &s->baseline);
    read_scaling_side(json_object_get(o, "candidate"), &s->candidate);
    s->speedup = jsonx_num(o, "speedup");
    s->efficiency = jsonx_num(o, "efficiency");
}

/* ---- the document ----------------------------------------------------------------------- */

static void read_candidate(const json_t *o, struct doc_cmp_candidate *c)
{
    c->json = o;
    read_who(o, &c->who);
    c->like_for_like = is_true(o, "like_for_like");
    c->common_stages = jsonx_int(o, "common_stages", 0);
    const json_t *a = json_object_get(o, "stages");
    c->n_stages = json_array_size(a);
    c->stages = elements(c->n_stages, sizeof *c->stages);
    for (size_t i = 0; i < c->n_stages; i++)
        read_stage(json_array_get(a, i), &c->stages[i]);
    const json_t *q = json_object_get(o, "quality");
    read_warnings(json_object_get(q, "baseline"), &c->quality_baseline, &c->n_quality_baseline);
    read_warnings(json_object_get(q, "candidate"), &c->quality_candidate,
                  &c->n_quality_candidate);
    c->clean_answer = jsonx_str(o, "clean_answer");
    read_pairs(o, c);
    read_load(object(o, "load"), &c->load);
    read_cost(object(o, "cost"), &c->cost);
    read_scaling(object(o, "scaling"), &c->scaling);
}

struct doc_comparison *doc_comparison_read(const json_t *j)
{
    struct doc_comparison *c = xcalloc(1, sizeof *c);
    c->json = json_is_object(j) ? j : NULL;
    j = c->json;
    c->schema = jsonx_str(j, "schema");
    c->alpha = jsonx_num(j, "alpha");
    c->min_effect_pct = jsonx_num(j, "min_effect_pct");
    c->ci_level = jsonx_num(j, "ci_level");
    c->resamples = jsonx_int(j, "bootstrap_resamples", 0);
    c->seed = jsonx_int(j, "bootstrap_seed", 0);
    read_who(json_object_get(j, "baseline"), &c->baseline);
    const json_t *a = json_object_get(j, "candidates");
    c->n_candidates = json_array_size(a);
    c->candidates = elements(c->n_candidates, sizeof *c->candidates);
    for (size_t i = 0; i < c->n_candidates; i++)
        read_candidate(json_array_get(a, i), &c->candidates[i]);
    return c;
}

void doc_comparison_free(struct doc_comparison *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_candidates; i++) {
        struct doc_cmp_candidate *x = &c->candidates[i];
        free(x->stages);
        free(x->quality_baseline);
        free(x->quality_candidate);
        free(x->counters);
        free(x->metadata);
        free(x->resources);
        free(x->environment_differences);
        free_load(&x->load);
        free(x->cost.per_unit);
    }
    free(c->candidates);
    free(c);
}

/* ---- derived answers -------------------------------------------------------------------- */

const struct doc_cmp_stage *doc_cmp_total(const struct doc_cmp_candidate *c)
{
    if (!c->n_stages)
        return NULL;
    const struct doc_cmp_stage *last = &c->stages[c->n_stages - 1];
    return last->name && !strcmp(last->name, "total") ? last : NULL;
}

const struct doc_cmp_stage *doc_cmp_stage(const struct doc_cmp_candidate *c, const char *name)
{
    if (!strcmp(name, "total"))
        return doc_cmp_total(c);
    for (size_t i = 0; i < c->n_stages; i++)
        if (c->stages[i].name && !strcmp(c->stages[i].name, name))
            return &c->stages[i];
    return NULL;
}

bool doc_comparison_has_stage(const struct doc_comparison *c, const char *name)
{
    if (!strcmp(name, "total"))
        return true;
    for (size_t i = 0; i < c->n_candidates; i++)
        if (doc_cmp_stage(&c->candidates[i], name))
            return true;
    return false;
}
