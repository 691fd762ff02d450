/* doc/sweep.c: the reader of sweep documents (see sweep.h): each member read once with the
 * tolerant getters of util/jsonx, and the answers derived from them. */
#include "doc/sweep.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/jsonx.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* n elements of size bytes, NULL for none. */
static void *elements(size_t n, size_t size)
{
    return n ? xcalloc(n, size) : NULL;
}

/* ---- figures ---------------------------------------------------------------------------- */

void doc_sweep_figures_read(const json_t *o, struct doc_sweep_figures *f)
{
    memset(f, 0, sizeof *f);
    const json_t *total = json_object_get(o, "total");
    f->total_median_ns = jsonx_num(total, "median_ns");
    f->total_ci_low_ns = jsonx_num(total, "ci_low_ns");
    f->total_ci_high_ns = jsonx_num(total, "ci_high_ns");
    f->total_n = jsonx_num(total, "n");
    const json_t *bn = json_object_get(o, "bottleneck");
    f->bottleneck.stage = jsonx_str(bn, "stage");
    f->bottleneck.verdict = jsonx_str(bn, "verdict");
    f->bottleneck.share = jsonx_num(bn, "share");
    f->bottleneck.median_ns = jsonx_num(bn, "median_ns");
    const json_t *a = json_object_get(o, "stages");
    f->n_stages = json_array_size(a);
    f->stages = elements(f->n_stages, sizeof *f->stages);
    for (size_t i = 0; i < f->n_stages; i++) {
        const json_t *x = json_array_get(a, i);
        f->stages[i] = (struct doc_sweep_stage){
            .name = jsonx_str(x, "name"), .depth = jsonx_num(x, "depth"),
            .median_ns = jsonx_num(x, "median_ns"), .share = jsonx_num(x, "share")};
    }
    a = json_object_get(o, "counters");
    f->n_counters = json_array_size(a);
    f->counters = elements(f->n_counters, sizeof *f->counters);
    for (size_t i = 0; i < f->n_counters; i++) {
        const json_t *x = json_array_get(a, i);
        f->counters[i] = (struct doc_sweep_counter){
            .name = jsonx_str(x, "name"), .stage = jsonx_str(x, "stage"),
            .rate_per_s = jsonx_num(x, "rate_per_s"), .last_median = jsonx_num(x, "last_median"),
            .count = json_is_true(json_object_get(x, "count"))};
    }
    f->peak_memory_bytes = jsonx_num(o, "peak_memory_bytes");
    f->gpu_memory_peak_bytes = jsonx_num(o, "gpu_memory_peak_bytes");
    f->gpu_utilization_mean = jsonx_num(o, "gpu_utilization_mean");
    f->cost_per_run = jsonx_num(o, "cost_per_run");
}

void doc_sweep_figures_free(struct doc_sweep_figures *f)
{
    free(f->stages);
    free(f->counters);
    f->stages = NULL;
    f->counters = NULL;
    f->n_stages = f->n_counters = 0;
}

const struct doc_sweep_counter *doc_sweep_counter(const struct doc_sweep_figures *f,
                                                  const char *name)
{
    for (size_t i = 0; i < f->n_counters; i++)
        if (f->counters[i].name && !strcmp(f->counters[i].name, name))
            return &f->counters[i];
    return NULL;
}

const struct doc_sweep_stage *doc_sweep_stage(const struct doc_sweep_figures *f,
                                              const char *name)
{
    for (size_t i = 0; i < f->n_stages; i++)
        if (f->stages[i].name && !strcmp(f->stages[i].name, name))
            return &f->stages[i];
    return NULL;
}

/* ---- points ----------------------------------------------------------------------------- */

static void read_point(const json_t *o, size_t position, struct doc_sweep_point *p)
{
    p->position = position;
    p->index = jsonx_int(o, "index", (long long)position);
    p->name = jsonx_str(o, "name");
    p->parameters = jsonx_object(o, "parameters");
    p->command = jsonx_array(o, "command");
    p->status = jsonx_str(o, "status");
    p->status_detail = jsonx_str(o, "status_detail");
    p->result_id = jsonx_str(o, "result_id");
    p->result_path = jsonx_str(o, "result_path");
    p->runs_measured = jsonx_num(o, "runs_measured");
    p->runs_ok = jsonx_num(o, "runs_ok");
    doc_sweep_figures_read(json_object_get(o, "figures"), &p->figures);
    p->objective_value = jsonx_num(o, "objective_value");
    p->constraints_met = jsonx_bool(o, "constraints_met");
    p->constraint_failures = jsonx_array(o, "constraint_failures");
    const json_t *w = json_object_get(o, "warnings");
    p->n_warnings = json_array_size(w);
    p->warnings = elements(p->n_warnings, sizeof *p->warnings);
    for (size_t i = 0; i < p->n_warnings; i++) {
        p->warnings[i].code = jsonx_str(json_array_get(w, i), "code");
        p->warnings[i].message = jsonx_str(json_array_get(w, i), "message");
    }
}

char *doc_sweep_point_name(const struct doc_sweep_point *p)
{
    if (p->name && *p->name)
        return xstrdup(p->name);
    size_t n = json_array_size(p->command);
    if (n) {
        struct strbuf b = STRBUF_INIT;
        for (size_t i = 0; i < n && b.len < 4096; i++) {
            const char *w = json_string_value(json_array_get(p->command, i));
            if (i)
                strbuf_putc(&b, ' ');
            strbuf_puts(&b, w ? w : "?");
        }
        return strbuf_take(&b);
    }
    return xasprintf("point %lld", p->index);
}

double doc_sweep_plausible(double v)
{
    return isfinite(v) && fabs(v) < 1e18 ? v : NAN;
}

bool doc_sweep_is_winner(const struct doc_sweep *s, const struct doc_sweep_point *p)
{
    return s->winner.index >= 0 && p->index == s->winner.index;
}

const json_t *doc_sweep_parameter(const struct doc_sweep_point *p, const char *name)
{
    return json_object_get(p->parameters, name);
}

bool doc_sweep_parameter_number(const struct doc_sweep_point *p, const char *name, double *v)
{
    const json_t *x = doc_sweep_parameter(p, name);
    if (json_is_number(x)) {
        *v = json_number_value(x);
        return isfinite(*v);
    }
    const char *s = json_string_value(x);
    if (!s || !*s)
        return false;
    char *end;
    double d = strtod(s, &end);
    if (*end || !isfinite(d))
        return false;
    *v = d;
    return true;
}

/* ---- the sweep -------------------------------------------------------------------------- */

static void read_find_max(const json_t *o, struct doc_sweep_find_max *fm)
{
    fm->present = o != NULL;
    fm->parameter = jsonx_str(o, "parameter");
    fm->low = jsonx_num(o, "low");
    fm->high = jsonx_num(o, "high");
    fm->pow2 = json_is_true(json_object_get(o, "pow2"));
    fm->memory_budget_bytes = jsonx_num(o, "memory_budget_bytes");
    fm->largest_fit = jsonx_num(o, "largest_fit");
    fm->first_failure = jsonx_num(o, "first_failure");
    const json_t *a = json_object_get(o, "probes");
    fm->n_probes = json_array_size(a);
    fm->probes = elements(fm->n_probes, sizeof *fm->probes);
    for (size_t i = 0; i < fm->n_probes; i++) {
        const json_t *x = json_array_get(a, i);
        const json_t *tp = json_object_get(x, "throughput");
        fm->probes[i] = (struct doc_sweep_probe){
            .value = jsonx_num(x, "value"),
            .point = jsonx_count(x, "point", INT64_MAX / 2, -1),
            .fits = jsonx_bool(x, "fits"), .reason = jsonx_str(x, "reason"),
            .peak_memory_bytes = jsonx_num(x, "peak_memory_bytes"),
            .throughput_name = jsonx_str(tp, "name"),
            .throughput_rate_per_s = jsonx_num(tp, "rate_per_s")};
    }
    const json_t *fit = json_object_get(o, "memory_fit");
    fm->memory_fit = (struct doc_sweep_memory_fit){
        .slope_bytes = jsonx_num(fit, "slope_bytes"),
        .intercept_bytes = jsonx_num(fit, "intercept_bytes"), .r2 = jsonx_num(fit, "r2"),
        .predicted_max = jsonx_num(fit, "predicted_max")};
}

/* The parameters named in parameters[] (each once), and which are numbers at every point that
 * has them. */
static void find_params(struct doc_sweep *s, struct doc_sweep_columns *c)
{
    for (size_t i = 0; i < s->n_params && c->nparams < DOC_SWEEP_MAX_PARAMS; i++) {
        const char *name = s->params[i].name;
        bool dup = false;
        for (size_t k = 0; k < c->nparams && name; k++)
            dup |= !strcmp(c->param[k], name);
        if (name && !dup)
            c->param[c->nparams++] = name;
    }
    for (size_t k = 0; k < c->nparams; k++) {
        bool has_value = false, numeric = true;
        for (size_t i = 0; i < s->n_points; i++) {
            double x;
            if (!doc_sweep_parameter(&s->points[i], c->param[k]))
                continue;
            has_value = true;
            numeric &= doc_sweep_parameter_number(&s->points[i], c->param[k], &x);
        }
        c->param_numeric[k] = numeric && has_value;
    }
}

/* The counters of the points by name, first seen first: a counter sent in different stages
 * (or in none) at different points is shown over the run. */
static void find_counters(const struct doc_sweep_figures *f, struct doc_sweep_columns *c,
                          bool *mixed)
{
    for (size_t j = 0; j < f->n_counters; j++) {
        const struct doc_sweep_counter *k = &f->counters[j];
        if (!k->name)
            continue;
        size_t at = 0;
        while (at < c->ncounters && strcmp(c->counter[at], k->name))
            at++;
        if (at == c->ncounters) {
            if (c->ncounters == DOC_SWEEP_MAX_COUNTERS)
                continue;
            c->counter[at] = k->name;
            c->counter_stage[at] = k->stage;
            c->counter_count[at] = k->count;
            c->ncounters++;
        } else if (!mixed[at] && (!k->stage || !c->counter_stage[at] ||
                                  strcmp(k->stage, c->counter_stage[at]))) {
            mixed[at] = true;
        }
    }
}

static void find_columns(struct doc_sweep *s)
{
    struct doc_sweep_columns *c = &s->columns;
    c->priced = s->price.present;
    c->currency = s->price.currency ? s->price.currency : "USD";
    find_params(s, c);
    bool mixed[DOC_SWEEP_MAX_COUNTERS] = {false};
    for (size_t i = 0; i < s->n_points; i++) {
        const struct doc_sweep_figures *f = &s->points[i].figures;
        c->gpu_memory |= isfinite(doc_sweep_plausible(f->gpu_memory_peak_bytes));
        c->gpu_util |= isfinite(f->gpu_utilization_mean);
        c->priced |= isfinite(f->cost_per_run);
        find_counters(f, c, mixed);
    }
    for (size_t k = 0; k < c->ncounters; k++)
        if (mixed[k])
            c->counter_stage[k] = NULL;
}

struct doc_sweep *doc_sweep_read(const json_t *j)
{
    struct doc_sweep *s = xcalloc(1, sizeof *s);
    s->json = json_is_object(j) ? j : NULL;
    j = s->json;
    s->schema = jsonx_str(j, "schema");
    s->id = jsonx_str(j, "id");
    s->created = jsonx_str(j, "created");
    s->status = jsonx_str(j, "status");
    s->mode = jsonx_str(j, "mode");
    s->command = jsonx_array(j, "command");
    const json_t *a = json_object_get(j, "parameters");
    s->n_params = json_array_size(a);
    s->params = elements(s->n_params, sizeof *s->params);
    for (size_t i = 0; i < s->n_params; i++) {
        const json_t *x = json_array_get(a, i);
        s->params[i].name = jsonx_str(x, "name");
        s->params[i].values = jsonx_array(x, "values");
        s->params[i].n_values = json_array_size(s->params[i].values);
        s->params[i].numeric = json_is_true(json_object_get(x, "numeric"));
    }
    s->interleave = jsonx_bool(j, "interleave");
    s->has_seed = json_is_integer(json_object_get(j, "seed"));
    s->seed = jsonx_int(j, "seed", 0);
    s->n_rounds = json_array_size(json_object_get(j, "rounds"));
    const json_t *o = json_object_get(j, "objective");
    s->objective = (struct doc_sweep_objective){
        .spec = jsonx_str(o, "spec"), .direction = jsonx_str(o, "direction"),
        .figure = jsonx_str(o, "figure"), .name = jsonx_str(o, "name"),
        .description = jsonx_str(o, "description")};
    a = json_object_get(j, "constraints");
    s->n_constraints = json_array_size(a);
    s->constraints = elements(s->n_constraints, sizeof *s->constraints);
    for (size_t i = 0; i < s->n_constraints; i++) {
        const json_t *x = json_array_get(a, i);
        s->constraints[i] = json_is_string(x) ? json_string_value(x) : jsonx_str(x, "spec");
    }
    o = jsonx_object(j, "price");
    s->price = (struct doc_sweep_price){.present = o != NULL,
                                        .per_hour = jsonx_num(o, "per_hour"),
                                        .currency = jsonx_str(o, "currency")};
    a = json_object_get(j, "points");
    s->has_points = json_is_array(a);
    s->n_points = json_array_size(a);
    s->points = elements(s->n_points, sizeof *s->points);
    for (size_t i = 0; i < s->n_points; i++)
        read_point(json_array_get(a, i), i, &s->points[i]);
    o = jsonx_object(j, "winner");
    s->winner = (struct doc_sweep_winner){
        .present = o != NULL, .index = o ? jsonx_count(o, "index", INT64_MAX / 2, -1) : -1,
        .name = jsonx_str(o, "name"), .reason = jsonx_str(o, "reason"),
        .undecided = jsonx_str(j, "winner_undecided")};
    read_find_max(jsonx_object(j, "find_max"), &s->find_max);
    find_columns(s);
    return s;
}

void doc_sweep_free(struct doc_sweep *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_points; i++) {
        doc_sweep_figures_free(&s->points[i].figures);
        free(s->points[i].warnings);
    }
    free(s->points);
    free(s->params);
    free(s->constraints);
    free(s->find_max.probes);
    free(s);
}
