/* history_json.c: the JSON document of `mlbench history` (history.h; schema mlbench.history/1,
 * docs/store.md): every result with its figures and load figures, and with --detect the step
 * changes found. */
#include "export/history.h"

#include <math.h>

#include <jansson.h>

#define HISTORY_SCHEMA "mlbench.history/1"

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *str(const char *s)
{
    return s ? json_string(s) : json_null();
}

/* The figures of one load result as an array of {key, metric, metric_s, throughput_qps, valid}. */
static json_t *load_json(const struct doc_history_loads *l)
{
    json_t *a = json_array();
    for (size_t i = 0; i < l->n; i++)
        json_array_append_new(a, json_pack("{s:s, s:s, s:o, s:o, s:b}", "key", l->run[i].key,
                                           "metric", l->run[i].metric, "metric_s",
                                           num(l->run[i].metric_s), "throughput_qps",
                                           num(l->run[i].qps), "valid", l->run[i].valid));
    return a;
}

static json_t *stats_json(const struct doc_history_stats *t)
{
    return json_pack("{s:I, s:o, s:o, s:o, s:o, s:o}", "n", (json_int_t)t->n, "median",
                     num(t->median_ns), "ci_low", num(t->ci_low_ns), "ci_high",
                     num(t->ci_high_ns), "ci_level", num(t->ci_level), "mad", num(t->mad_ns));
}

static json_t *result_json(const struct doc_history_result *r)
{
    json_t *stages = json_array();
    for (size_t k = 0; k < r->n_stages; k++) {
        json_t *s = json_pack("{s:s, s:i}", "name", r->stages[k].name, "depth",
                              r->stages[k].depth);
        json_object_update_new(s, stats_json(&r->stages[k].t));
        json_array_append_new(stages, s);
    }
    json_t *x = json_pack("{s:s, s:o, s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:o, s:o}",
                          "id", r->id, "path", str(r->path), "label", str(r->label), "command",
                          r->command ? r->command : "", "host", str(r->host), "mlbench_commit",
                          str(r->mlbench_commit), "workdir_commit", str(r->commit), "created",
                          str(r->created), "status", str(r->status), "runs_measured",
                          (json_int_t)r->runs_measured, "runs_ok", (json_int_t)r->runs_ok,
                          "wall_ns", stats_json(&r->wall), "stages", stages);
    json_object_set_new(x, "load", r->load.n ? load_json(&r->load) : json_null());
    return x;
}

/* A change of series s as an element of "changes". */
static json_t *change_json(const struct doc_history *h, const struct doc_history_series *s,
                           const struct doc_history_change *c)
{
    const struct doc_history_result *r = &h->results[s->points[c->point].result];
    const struct doc_history_result *b =
        c->point ? &h->results[s->points[c->point - 1].result] : NULL;
    return json_pack("{s:o, s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:s, s:o}",
                     "label", str(s->label), "command", s->command, "stage", s->stage, "id",
                     r->id, "created", str(r->created), "commit", str(r->commit),
                     "previous_id", str(b ? b->id : NULL), "previous_commit",
                     str(b ? b->commit : NULL), "before_ns", num(c->before_ns), "after_ns",
                     num(c->after_ns), "change_pct", num(c->change_pct), "direction",
                     c->change_pct > 0 ? "slower" : "faster", "z", num(c->z));
}

void history_json_print(FILE *out, const struct doc_history *h)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "schema", json_string(HISTORY_SCHEMA));
    json_object_set_new(doc, "store", json_string(h->store));
    json_t *results = json_array();
    for (size_t i = 0; i < h->n_results; i++)
        json_array_append_new(results, result_json(&h->results[i]));
    json_object_set_new(doc, "results", results);
    if (h->detect) {
        json_object_set_new(doc, "detect", json_pack("{s:f, s:f}", "min_effect_pct",
                                                     h->min_effect_pct, "z", h->z));
        json_t *arr = json_array();
        for (size_t k = 0; k < h->n_series; k++)
            for (size_t j = 0; j < h->series[k].n_changes; j++)
                json_array_append_new(arr, change_json(h, &h->series[k],
                                                       &h->series[k].changes[j]));
        json_object_set_new(doc, "changes", arr);
    }
    json_dumpf(doc, out, JSON_INDENT(2) | JSON_ENSURE_ASCII);
    fputc('\n', out);
    json_decref(doc);
}
