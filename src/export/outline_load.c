/* outline_load.c: the "Load" section of a report on a load result (a "load" section, mlbench
 * load; docs/reports.md#load-results): what was driven, the table of scenario runs, the
 * figures (HTML: latency and QPS over time, the latency histogram, the server's CPU), and the
 * per-second rows of the runs that count. */
#include "export/outline_sections.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static char *secs(const json_t *o, const char *key, char *buf, size_t len)
{
    return export_fmt_duration(jsonx_num(o, key) * 1e9, buf, len);
}

static void runs_table(struct outline *o, const json_t *load)
{
    struct export_table t;
    export_table_init(&t, 12, "run", "target QPS", "QPS", "completed", "failed", "p50", "p90",
                      "p99", "p99.9", "max", "early", "verdict", NULL);
    t.numeric = 0x7fe; /* target .. early */
    const json_t *runs = json_object_get(load, "scenarios");
    for (size_t i = 0; i < json_array_size(runs); i++) {
        const json_t *x = json_array_get(runs, i), *lat = json_object_get(x, "latency_s");
        char b[6][32];
        size_t row = export_table_row(&t, 0);
        export_table_set(&t, row, 0, "%s", str_or(jsonx_str(x, "role"), "?"));
        double q = jsonx_num(x, "target_qps");
        export_table_set(&t, row, 1, isfinite(q) ? "%.4g" : "-", q);
        export_table_set(&t, row, 2, "%.1f", jsonx_num(x, "throughput_qps"));
        export_table_set(&t, row, 3, "%lld", jsonx_int(x, "completed", 0));
        export_table_set(&t, row, 4, "%lld", jsonx_int(x, "failed", 0));
        export_table_set(&t, row, 5, "%s", secs(lat, "p50", b[0], 32));
        export_table_set(&t, row, 6, "%s", secs(lat, "p90", b[1], 32));
        export_table_set(&t, row, 7, "%s", secs(lat, "p99", b[2], 32));
        export_table_set(&t, row, 8, "%s", secs(lat, "p99.9", b[3], 32));
        export_table_set(&t, row, 9, "%s", secs(lat, "max", b[4], 32));
        export_table_set(&t, row, 10, "%s",
                         secs(json_object_get(x, "early_stopping"), "estimate_s", b[5], 32));
        bool valid = json_is_true(json_object_get(x, "valid"));
        export_table_set(&t, row, 11, "%s", valid ? "VALID" : "INVALID (below)");
        export_table_tone(&t, row, 11, valid ? EXPORT_TONE_NONE : EXPORT_TONE_SLOWER);
    }
    outline_table(o, &t);
    for (size_t i = 0; i < json_array_size(runs); i++) {
        const json_t *x = json_array_get(runs, i), *why = json_object_get(x, "invalid_reasons");
        char name[96];
        export_load_run_name(x, name, sizeof name);
        for (size_t k = 0; k < json_array_size(why); k++)
            outline_para(o, "INVALID: %s: %s", name,
                         str_or(json_string_value(json_array_get(why, k)), "?"));
    }
}

/* The per-second rows of one run. */
static void seconds_table(struct outline *o, const json_t *run)
{
    struct export_table t;
    export_table_init(&t, 7, "second", "completed", "failed", "p50", "p90", "p99", "max", NULL);
    t.numeric = 0x7f;
    const json_t *secs_a = json_object_get(run, "seconds");
    for (size_t i = 0; i < json_array_size(secs_a); i++) {
        const json_t *s = json_array_get(secs_a, i);
        char b[4][32];
        size_t row = export_table_row(&t, 0);
        export_table_set(&t, row, 0, "%lld", jsonx_int(s, "t_s", 0));
        export_table_set(&t, row, 1, "%lld", jsonx_int(s, "completed", 0));
        export_table_set(&t, row, 2, "%lld", jsonx_int(s, "failed", 0));
        export_table_set(&t, row, 3, "%s", secs(s, "p50_s", b[0], 32));
        export_table_set(&t, row, 4, "%s", secs(s, "p90_s", b[1], 32));
        export_table_set(&t, row, 5, "%s", secs(s, "p99_s", b[2], 32));
        export_table_set(&t, row, 6, "%s", secs(s, "max_s", b[3], 32));
    }
    outline_table(o, &t);
}

void outline_load_answer(struct outline *o, const json_t *r)
{
    const json_t *load = json_object_get(r, "load");
    const json_t *bound = json_object_get(load, "bound");
    bool valid = json_is_true(json_object_get(load, "valid"));
    if (jsonx_str(bound, "kind"))
        outline_para(o, "Verdict: %s; bound: %s: %s.", valid ? "VALID" : "INVALID",
                     jsonx_str(bound, "kind"), str_or(jsonx_str(bound, "evidence"), "?"));
    else
        outline_para(o, "Verdict: %s.", valid ? "VALID" : "INVALID");
    const json_t *peak = json_object_get(load, "find_peak");
    double peak_qps = jsonx_num(peak, "peak_qps");
    if (json_is_object(peak) && isfinite(peak_qps))
        outline_para(o, "Peak: %.4g QPS within the latency bound.", peak_qps);
    else if (json_is_object(peak))
        outline_para(o, "Peak: no rate met the latency bound.");
    const json_t *runs = json_object_get(load, "scenarios");
    for (size_t i = 0; i < json_array_size(runs); i++) {
        if (!export_load_counts(load, i))
            continue;
        const json_t *x = json_array_get(runs, i);
        double p = jsonx_num(x, "percentile");
        char key[16], name[96], v[32];
        snprintf(key, sizeof key, "p%g", p);
        export_load_run_name(x, name, sizeof name);
        export_fmt_duration(jsonx_num(json_object_get(x, "latency_s"), key) * 1e9, v, sizeof v);
        outline_para(o, "%c%s: %s %s (its metric), %.1f QPS, %lld completed, %lld failed: %s.",
                     toupper((unsigned char)name[0]), name + 1, key, v,
                     jsonx_num(x, "throughput_qps"), jsonx_int(x, "completed", 0),
                     jsonx_int(x, "failed", 0),
                     json_is_true(json_object_get(x, "valid")) ? "VALID" : "INVALID");
    }
}

void outline_load(struct outline *o, const json_t *r, size_t index)
{
    const json_t *load = json_object_get(r, "load");
    if (!json_is_object(load))
        return;
    outline_heading(o, o->level, "Load");
    const char *cmd = jsonx_str(load, "server_cmd");
    outline_para(o, "mlbench load drove %s with the %s scenario over %lld connection(s)%s%s%s: "
                 "%s. Latency is measured from each query's scheduled time (docs/load.md).",
                 str_or(jsonx_str(load, "url"), "?"), str_or(jsonx_str(load, "scenario"), "?"),
                 jsonx_int(load, "connections", 0), cmd ? ", the server started as `" : "",
                 cmd ? cmd : "", cmd ? "`" : "",
                 json_is_true(json_object_get(load, "valid")) ? "VALID" : "INVALID");
    const json_t *bound = json_object_get(load, "bound");
    if (jsonx_str(bound, "kind"))
        outline_para(o, "Bound: %s: %s.", jsonx_str(bound, "kind"),
                     str_or(jsonx_str(bound, "evidence"), "?"));
    const json_t *peak = json_object_get(load, "find_peak");
    if (json_is_object(peak)) {
        double q = jsonx_num(peak, "peak_qps");
        char b[32];
        if (isfinite(q))
            outline_para(o, "Peak: %.4g QPS with p%g within %s (%lld probes, then a "
                         "full-length confirmation).", q, jsonx_num(peak, "percentile"),
                         secs(peak, "latency_bound_s", b, sizeof b),
                         jsonx_int(peak, "probes", 0));
        else
            outline_para(o, "Peak: no rate met the bound %s.",
                         secs(peak, "latency_bound_s", b, sizeof b));
    }
    outline_para(o, "Scenario runs (latency percentiles from the run's histogram, LoadGen's "
                 "rank; early: early stopping's bound on the metric percentile, p%g):",
                 jsonx_num(json_array_get(json_object_get(load, "scenarios"), 0), "percentile"));
    runs_table(o, load);
    if (o->ops->figure)
        o->ops->figure(o->ctx, EXPORT_FIGURE_LOAD, o->req, index);
    const json_t *runs = json_object_get(load, "scenarios");
    for (size_t i = 0; i < json_array_size(runs); i++) {
        if (!export_load_counts(load, i))
            continue;
        char name[96];
        export_load_run_name(json_array_get(runs, i), name, sizeof name);
        char title[128];
        snprintf(title, sizeof title, "Per second: %s", name);
        o->level++;
        outline_group_begin(o, EXPORT_GROUP_FOLDED, title);
        outline_para(o, "Queries completed in each second of the run and the percentiles of "
                     "their latency.");
        seconds_table(o, json_array_get(runs, i));
        outline_group_end(o, EXPORT_GROUP_FOLDED);
        o->level--;
    }
}
