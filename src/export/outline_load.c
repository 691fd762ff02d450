/* outline_load.c: the "Load" section of a report on a load result (a "load" section, mlbench
 * load; docs/reports.md#load-results): what was driven, the table of scenario runs, the
 * figures (HTML: latency and QPS over time, the latency histogram, the server's CPU), and the
 * per-second rows of the runs that count. */
#include "export/outline_sections.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* A time in seconds as a duration ("-" when NAN). */
static char *secs(double s, char *buf, size_t len)
{
    return export_fmt_duration(s * 1e9, buf, len);
}

/* A count read as a number (doc_load_second), 0 when absent, as a whole number. */
static long long whole(double v)
{
    return v >= -9.2e18 && v <= 9.2e18 ? llround(v) : 0;
}

static void runs_table(struct outline *o, const struct doc_load *load)
{
    struct export_table t;
    export_table_init(&t, 12, "run", "target QPS", "QPS", "completed", "failed", "p50", "p90",
                      "p99", "p99.9", "max", "early", "verdict", NULL);
    t.numeric = 0x7fe; /* target .. early */
    for (size_t i = 0; i < load->n_runs; i++) {
        const struct doc_load_run *x = &load->runs[i];
        const struct doc_latency *lat = &x->latency;
        char b[6][32];
        size_t row = export_table_row(&t, 0);
        export_table_set(&t, row, 0, "%s", str_or(x->role, "?"));
        double q = x->target_qps;
        export_table_set(&t, row, 1, isfinite(q) ? "%.4g" : "-", q);
        export_table_set(&t, row, 2, "%.1f", x->throughput_qps);
        export_table_set(&t, row, 3, "%lld", x->completed);
        export_table_set(&t, row, 4, "%lld", x->failed);
        export_table_set(&t, row, 5, "%s", secs(lat->p50, b[0], 32));
        export_table_set(&t, row, 6, "%s", secs(lat->p90, b[1], 32));
        export_table_set(&t, row, 7, "%s", secs(lat->p99, b[2], 32));
        export_table_set(&t, row, 8, "%s", secs(lat->p999, b[3], 32));
        export_table_set(&t, row, 9, "%s", secs(lat->max, b[4], 32));
        export_table_set(&t, row, 10, "%s", secs(x->early_estimate_s, b[5], 32));
        export_table_set(&t, row, 11, "%s", x->valid ? "VALID" : "INVALID (below)");
        export_table_tone(&t, row, 11, x->valid ? EXPORT_TONE_NONE : EXPORT_TONE_SLOWER);
    }
    outline_table(o, &t);
    for (size_t i = 0; i < load->n_runs; i++) {
        const json_t *why = load->runs[i].invalid_reasons;
        char name[96];
        doc_load_run_name(&load->runs[i], name, sizeof name);
        for (size_t k = 0; k < json_array_size(why); k++)
            outline_para(o, "INVALID: %s: %s", name,
                         str_or(json_string_value(json_array_get(why, k)), "?"));
    }
}

/* The per-second rows of one run. */
static void seconds_table(struct outline *o, const struct doc_load_run *run)
{
    struct export_table t;
    export_table_init(&t, 7, "second", "completed", "failed", "p50", "p90", "p99", "max", NULL);
    t.numeric = 0x7f;
    for (size_t i = 0; i < doc_load_n_seconds(run); i++) {
        struct doc_load_second s;
        doc_load_second(run, i, &s);
        char b[4][32];
        size_t row = export_table_row(&t, 0);
        export_table_set(&t, row, 0, "%lld", whole(s.t_s));
        export_table_set(&t, row, 1, "%lld", whole(s.completed));
        export_table_set(&t, row, 2, "%lld", whole(s.failed));
        export_table_set(&t, row, 3, "%s", secs(s.p50_s, b[0], 32));
        export_table_set(&t, row, 4, "%s", secs(s.p90_s, b[1], 32));
        export_table_set(&t, row, 5, "%s", secs(s.p99_s, b[2], 32));
        export_table_set(&t, row, 6, "%s", secs(s.max_s, b[3], 32));
    }
    outline_table(o, &t);
}

void outline_load_answer(struct outline *o, const struct doc_load *load)
{
    const char *valid = load->valid ? "VALID" : "INVALID";
    if (load->bound_kind)
        outline_para(o, "Verdict: %s; bound: %s: %s.", valid, load->bound_kind,
                     str_or(load->bound_evidence, "?"));
    else
        outline_para(o, "Verdict: %s.", valid);
    if (load->find_peak && isfinite(load->peak_qps))
        outline_para(o, "Peak: %.4g QPS within the latency bound.", load->peak_qps);
    else if (load->find_peak)
        outline_para(o, "Peak: no rate met the latency bound.");
    for (size_t i = 0; i < load->n_runs; i++) {
        if (!doc_load_counts(load, i))
            continue;
        const struct doc_load_run *x = &load->runs[i];
        char key[16], name[96], v[32];
        snprintf(key, sizeof key, "p%g", x->percentile);
        doc_load_run_name(x, name, sizeof name);
        export_fmt_duration(doc_latency_at(&x->latency, x->percentile) * 1e9, v, sizeof v);
        outline_para(o, "%c%s: %s %s (its metric), %.1f QPS, %lld completed, %lld failed: %s.",
                     toupper((unsigned char)name[0]), name + 1, key, v, x->throughput_qps,
                     x->completed, x->failed, x->valid ? "VALID" : "INVALID");
    }
}

void outline_load(struct outline *o, const struct doc_load *load, size_t index)
{
    if (!load->present)
        return;
    outline_heading(o, o->level, "Load");
    const char *cmd = load->server_cmd;
    outline_para(o, "mlbench load drove %s with the %s scenario over %lld connection(s)%s%s%s: "
                 "%s. Latency is measured from each query's scheduled time (docs/load.md).",
                 str_or(load->url, "?"), str_or(load->scenario, "?"), load->connections,
                 cmd ? ", the server started as `" : "", cmd ? cmd : "", cmd ? "`" : "",
                 load->valid ? "VALID" : "INVALID");
    if (load->bound_kind)
        outline_para(o, "Bound: %s: %s.", load->bound_kind, str_or(load->bound_evidence, "?"));
    if (load->find_peak) {
        char b[32];
        if (isfinite(load->peak_qps))
            outline_para(o, "Peak: %.4g QPS with p%g within %s (%lld probes, then a "
                         "full-length confirmation).", load->peak_qps, load->peak_percentile,
                         secs(load->peak_latency_bound_s, b, sizeof b), load->peak_probes);
        else
            outline_para(o, "Peak: no rate met the bound %s.",
                         secs(load->peak_latency_bound_s, b, sizeof b));
    }
    outline_para(o, "Scenario runs (latency percentiles from the run's histogram, LoadGen's "
                 "rank; early: early stopping's bound on the metric percentile, p%g):",
                 load->n_runs ? load->runs[0].percentile : NAN);
    runs_table(o, load);
    if (o->ops->figure)
        o->ops->figure(o->ctx, EXPORT_FIGURE_LOAD, o->req, index);
    for (size_t i = 0; i < load->n_runs; i++) {
        if (!doc_load_counts(load, i))
            continue;
        char name[96];
        doc_load_run_name(&load->runs[i], name, sizeof name);
        char title[128];
        snprintf(title, sizeof title, "Per second: %s", name);
        o->level++;
        outline_group_begin(o, EXPORT_GROUP_FOLDED, title);
        outline_para(o, "Queries completed in each second of the run and the percentiles of "
                     "their latency.");
        seconds_table(o, &load->runs[i]);
        outline_group_end(o, EXPORT_GROUP_FOLDED);
        o->level--;
    }
}
