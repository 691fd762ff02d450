/* history_load: load results' figures for `mlbench history` (history_load.h). */
#include "cli/history_load.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/jsonx.h"
#include "util/xalloc.h"

/* Fills l from a result document's load section (the runs that count, as in compare). */
static void from_doc(const json_t *doc, struct history_load *l)
{
    const json_t *load = json_object_get(doc, "load");
    const json_t *runs = json_object_get(load, "scenarios");
    bool peak = json_is_object(json_object_get(load, "find_peak"));
    l->n = 0;
    size_t last = json_array_size(runs);
    for (size_t i = 0; i < json_array_size(runs); i++) {
        const char *role = jsonx_str(json_array_get(runs, i), "role");
        if (!role || strcmp(role, "probe"))
            last = i;
    }
    for (size_t i = 0; i < json_array_size(runs) && l->n < HISTORY_LOAD_MAX; i++) {
        const json_t *r = json_array_get(runs, i);
        const char *role = jsonx_str(r, "role");
        if ((role && !strcmp(role, "probe")) || (peak && i != last))
            continue;
        struct history_load_run *x = &l->run[l->n++];
        const char *scen = jsonx_str(r, "scenario") ? jsonx_str(r, "scenario") : "?";
        double q = jsonx_num(r, "target_qps"), p = jsonx_num(r, "percentile");
        if (peak)
            snprintf(x->key, sizeof x->key, "%.40s peak", scen);
        else if (isfinite(q))
            snprintf(x->key, sizeof x->key, "%.40s %.4g QPS", scen, q);
        else
            snprintf(x->key, sizeof x->key, "%.40s", scen);
        snprintf(x->metric, sizeof x->metric, "p%g", isfinite(p) ? p : 99);
        x->metric_s = jsonx_num(json_object_get(r, "latency_s"), x->metric);
        x->qps = jsonx_num(r, "throughput_qps");
        x->valid = json_is_true(json_object_get(r, "valid"));
    }
}

struct history_load *history_load_read(struct store *s, const struct store_entry *e, size_t n)
{
    struct history_load *out = xcalloc(n + 1, sizeof *out);
    for (size_t i = 0; i < n; i++) {
        if (e[i].command && *e[i].command)
            continue;
        char err[256];
        json_t *doc = store_get(s, &e[i], err, sizeof err);
        if (doc && json_is_object(json_object_get(doc, "load")))
            from_doc(doc, &out[i]);
        json_decref(doc);
    }
    return out;
}

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *history_load_json(const struct history_load *l)
{
    json_t *a = json_array();
    for (size_t i = 0; i < l->n; i++)
        json_array_append_new(a, json_pack("{s:s, s:s, s:o, s:o, s:b}", "key", l->run[i].key,
                                           "metric", l->run[i].metric, "metric_s",
                                           num(l->run[i].metric_s), "throughput_qps",
                                           num(l->run[i].qps), "valid", l->run[i].valid));
    return a;
}
