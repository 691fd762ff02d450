/* history_json: the JSON document of `mlbench history` (history_json.h): every result with
 * its figures and load figures, and with --detect the step changes found. */
#include "cli/history_json.h"

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
static json_t *load_json(const struct load_figures *l)
{
    json_t *a = json_array();
    for (size_t i = 0; i < l->n; i++)
        json_array_append_new(a, json_pack("{s:s, s:s, s:o, s:o, s:b}", "key", l->run[i].key,
                                           "metric", l->run[i].metric, "metric_s",
                                           num(l->run[i].metric_s), "throughput_qps",
                                           num(l->run[i].qps), "valid", l->run[i].valid));
    return a;
}

static json_t *stats_json(const struct store_stats *t)
{
    return json_pack("{s:I, s:o, s:o, s:o, s:o, s:o}", "n", (json_int_t)t->n, "median",
                     num(t->median_ns), "ci_low", num(t->ci_low_ns), "ci_high",
                     num(t->ci_high_ns), "ci_level", num(t->ci_level), "mad", num(t->mad_ns));
}

static json_t *entry_json(const struct store_entry *e)
{
    json_t *stages = json_array();
    for (size_t k = 0; k < e->n_stages; k++) {
        json_t *s = json_pack("{s:s, s:i}", "name", e->stages[k].name, "depth",
                              e->stages[k].depth);
        json_object_update_new(s, stats_json(&e->stages[k].t));
        json_array_append_new(stages, s);
    }
    return json_pack("{s:s, s:o, s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:o, s:o}",
                     "id", e->id, "path", str(e->path), "label", str(e->label), "command",
                     e->command ? e->command : "", "host", str(e->host), "mlbench_commit",
                     str(e->mlbench_commit), "workdir_commit", str(e->workdir_commit),
                     "created", str(e->created), "status", str(e->status), "runs_measured",
                     (json_int_t)e->runs_measured, "runs_ok", (json_int_t)e->runs_ok,
                     "wall_ns", stats_json(&e->wall), "stages", stages);
}

void history_json_print(FILE *out, const struct history_options *o, const struct store_entry *e,
                        size_t n, const size_t *group, const struct changes *ch,
                        const struct load_figures *L)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "schema", json_string(HISTORY_SCHEMA));
    json_object_set_new(doc, "store", json_string(o->shown));
    json_t *results = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *x = entry_json(&e[i]);
        json_object_set_new(x, "load", L[i].n ? load_json(&L[i]) : json_null());
        json_array_append_new(results, x);
    }
    json_object_set_new(doc, "results", results);
    if (o->detect) {
        json_object_set_new(doc, "detect",
                            json_pack("{s:f, s:f}", "min_effect_pct", o->det.min_effect_pct,
                                      "z", o->det.z));
        json_t *arr = json_array();
        for (size_t i = 0; i < ch->n; i++) {
            const struct change *c = &ch->v[i];
            size_t first = 0;
            while (group[first] != c->series)
                first++;
            json_array_append_new(
                arr, json_pack("{s:o, s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:s, "
                               "s:o}", "label",
                               str(e[first].label), "command", e[first].command, "stage",
                               c->stage, "id", c->entry->id, "created", str(c->entry->created),
                               "commit", str(c->entry->workdir_commit), "previous_id",
                               str(c->before ? c->before->id : NULL), "previous_commit",
                               str(c->before ? c->before->workdir_commit : NULL),
                               "before_ns", num(c->d.before), "after_ns", num(c->d.after),
                               "change_pct", num(c->d.change_pct), "direction",
                               c->d.change_pct > 0 ? "slower" : "faster", "z", num(c->d.z)));
        }
        json_object_set_new(doc, "changes", arr);
    }
    json_dumpf(doc, out, JSON_INDENT(2) | JSON_ENSURE_ASCII);
    fputc('\n', out);
    json_decref(doc);
}
