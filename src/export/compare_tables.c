/* compare_tables: the tables of the comparison section of the Markdown and HTML reports (see
 * export.h: export_cmp_*), built from one candidate of a comparison document
 * ("mlbench.comparison/1", docs/compare.md); outline.c places them. */
#include "export/export.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

/* "1.735 .. 2.097" of a ratio interval, or "-". */
static void set_interval(struct export_table *t, size_t row, size_t col, const json_t *x)
{
    char a[32], b[32];
    if (isfinite(jsonx_num(x, "ratio_ci_low")))
        export_table_set(t, row, col, "%s .. %s",
                         export_fmt_num(jsonx_num(x, "ratio_ci_low"), "%.3f", 1, a, sizeof a),
                         export_fmt_num(jsonx_num(x, "ratio_ci_high"), "%.3f", 1, b, sizeof b));
    else
        export_table_set(t, row, col, "-");
}

/* The verdict cell: the word, toned; an unreliable one says what the statistics said. */
static void set_verdict(struct export_table *t, size_t row, size_t col, size_t change_col,
                        const json_t *x)
{
    const char *verdict = str_or(jsonx_str(x, "verdict"), "-");
    const char *statistical = jsonx_str(x, "statistical_verdict");
    if (statistical)
        export_table_set(t, row, col, "%s (statistically %s)", verdict, statistical);
    else
        export_table_set(t, row, col, "%s", verdict);
    export_table_tone(t, row, col, export_verdict_tone(verdict));
    export_table_tone(t, row, change_col, export_verdict_tone(verdict));
}

size_t export_cmp_stages(struct export_table *t, const json_t *cand, double alpha)
{
    const json_t *stages = json_object_get(cand, "stages");
    char a[32], ci[32];
    snprintf(ci, sizeof ci, "ratio %g%% CI", isfinite(alpha) ? 100 * (1 - alpha) : 95.0);
    export_table_init(t, 9, "stage", "baseline", "candidate", "change", "speedup", ci, "p",
                      "runs", "verdict");
    t->numeric = 0xfe;
    for (size_t i = 0; i < json_array_size(stages); i++) {
        const json_t *s = json_array_get(stages, i);
        size_t row = export_table_row(t, (int)jsonx_count(s, "depth", 1000, 0)); /* clamped */
        double p = jsonx_num(s, "p_value");
        export_table_set(t, row, 0, "%s", str_or(jsonx_str(s, "name"), "?"));
        export_table_set(t, row, 1, "%s", export_fmt_duration(
            jsonx_num(s, "baseline_median_ns"), a, sizeof a));
        export_table_set(t, row, 2, "%s", export_fmt_duration(
            jsonx_num(s, "candidate_median_ns"), a, sizeof a));
        export_table_set(t, row, 3, "%s", export_fmt_num(jsonx_num(s, "change_pct"),
                                                         "%+.1f %%", 1, a, sizeof a));
        export_table_set(t, row, 4, "%s", export_fmt_num(jsonx_num(s, "speedup"),
                                                         "%.3fx", 1, a, sizeof a));
        set_interval(t, row, 5, s);
        if (isfinite(p) && p < 0.001)
            export_table_set(t, row, 6, "< 0.001");
        else
            export_table_set(t, row, 6, "%s", export_fmt_num(p, "%.3f", 1, a, sizeof a));
        export_table_set(t, row, 7, "%lld / %lld", jsonx_int(s, "n_baseline", 0),
                         jsonx_int(s, "n_candidate", 0));
        set_verdict(t, row, 8, 3, s);
    }
    return t->nrows;
}

size_t export_cmp_latency(struct export_table *t, const json_t *cand, double alpha)
{
    const json_t *stages = json_object_get(cand, "stages");
    char a[32], ci[32];
    snprintf(ci, sizeof ci, "ratio %g%% CI", isfinite(alpha) ? 100 * (1 - alpha) : 95.0);
    export_table_init(t, 8, "stage", "quantile", "baseline", "candidate", "change", ci, "spans",
                      "verdict");
    t->numeric = 0x5c;
    static const char *const quantiles[] = {"p50", "p99"};
    for (size_t i = 0; i < json_array_size(stages); i++) {
        const json_t *s = json_array_get(stages, i);
        const json_t *lat = json_object_get(s, "latency");
        if (!json_is_object(lat))
            continue;
        for (size_t k = 0; k < 2; k++) {
            const json_t *q = json_object_get(lat, quantiles[k]);
            size_t row = export_table_row(t, 0);
            export_table_set(t, row, 0, "%s", k ? "" : str_or(jsonx_str(s, "name"), "?"));
            export_table_set(t, row, 1, "%s", quantiles[k]);
            export_table_set(t, row, 2, "%s", export_fmt_duration(jsonx_num(q, "baseline_ns"),
                                                                  a, sizeof a));
            export_table_set(t, row, 3, "%s", export_fmt_duration(jsonx_num(q, "candidate_ns"),
                                                                  a, sizeof a));
            export_table_set(t, row, 4, "%s", export_fmt_num(jsonx_num(q, "change_pct"),
                                                             "%+.1f %%", 1, a, sizeof a));
            set_interval(t, row, 5, q);
            export_table_set(t, row, 6, "%lld / %lld", jsonx_int(lat, "n_baseline", 0),
                             jsonx_int(lat, "n_candidate", 0));
            set_verdict(t, row, 7, 4, q);
        }
    }
    return t->nrows;
}

/* A figure of a metric in its unit: counters as rates (CPU seconds as cores), bytes in binary
 * units, ratios in percent; anything else (metric NULL: not a resource) as it is. */
static char *metric_value(const char *metric, const json_t *v, char *buf, size_t len)
{
    double x = jsonx_number(v);
    if (!metric || !isfinite(x))
        return export_fmt_value(v, buf, len);
    if (!strcmp(metric, "process_cpu_seconds_total"))
        return export_fmt_num(x, "%.2f cores", 1, buf, len);
    if (export_ends_with(metric, "_bytes_total")) {
        export_fmt_bytes(x, buf, len);
        strncat(buf, "/s", len - strlen(buf) - 1);
        return buf;
    }
    if (export_ends_with(metric, "_bytes"))
        return export_fmt_bytes(x, buf, len);
    if (export_ends_with(metric, "_ratio"))
        return export_fmt_num(x, "%.1f %%", 100, buf, len);
    return export_fmt_num(x, "%.4g", 1, buf, len);
}

size_t export_cmp_pairs(struct export_table *t, const json_t *cand, const char *member,
                        const char *k1, const char *k2, const char *h1, const char *h2)
{
    const json_t *items = json_object_get(cand, member);
    bool env = !strcmp(member, "environment_differences");
    /* resource figures always differ a little: no column for that */
    bool marked = strcmp(member, "resources") != 0;
    const char *last = env ? "matters" : marked ? "differs" : NULL;
    char buf[512];
    size_t ncols = (k2 ? 4 : 3) + marked;
    if (k2)
        export_table_init(t, ncols, h1, h2, "baseline", "candidate", last);
    else
        export_table_init(t, ncols, h1, "baseline", "candidate", last);
    for (size_t i = 0; i < json_array_size(items); i++) {
        const json_t *x = json_array_get(items, i);
        size_t row = export_table_row(t, 0), c = 0;
        export_table_set(t, row, c++, "%s", export_fmt_value(json_object_get(x, k1), buf,
                                                             sizeof buf));
        if (k2)
            export_table_set(t, row, c++, "%s", export_fmt_value(json_object_get(x, k2), buf,
                                                                 sizeof buf));
        const char *metric = jsonx_str(x, "metric");
        const json_t *vb = json_object_get(x, "baseline"), *vc = json_object_get(x, "candidate");
        export_table_set(t, row, c++, "%s", metric_value(metric, vb, buf, sizeof buf));
        export_table_set(t, row, c++, "%s", metric_value(metric, vc, buf, sizeof buf));
        /* environment rows differ by construction: what matters is whether it matters */
        bool mark = env ? json_is_true(json_object_get(x, "matters"))
                        : !json_equal((json_t *)vb, (json_t *)vc);
        if (!marked)
            continue;
        export_table_set(t, row, c, "%s", mark ? "yes" : "no");
        for (size_t k = 0; mark && k <= c; k++)
            export_table_tone(t, row, k, EXPORT_TONE_DIFFERS);
    }
    return t->nrows;
}
