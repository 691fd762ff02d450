/* compare_tables: the tables of the comparison section of the Markdown and HTML reports (see
 * export.h: export_cmp_*), built from one candidate of a comparison read through
 * doc/comparison.h ("mlbench.comparison/1", docs/compare.md); outline_compare.c places them. */
#include "export/export.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

/* "1.735 .. 2.097" of a ratio interval, or "-". */
static void set_interval(struct export_table *t, size_t row, size_t col, double lo, double hi)
{
    char a[32], b[32];
    if (isfinite(lo))
        export_table_set(t, row, col, "%s .. %s", export_fmt_num(lo, "%.3f", 1, a, sizeof a),
                         export_fmt_num(hi, "%.3f", 1, b, sizeof b));
    else
        export_table_set(t, row, col, "-");
}

/* The verdict cell: the word, toned; an unreliable one says what the statistics said. */
static void set_verdict(struct export_table *t, size_t row, size_t col, size_t change_col,
                        const char *verdict, const char *statistical)
{
    verdict = str_or(verdict, "-");
    if (statistical)
        export_table_set(t, row, col, "%s (statistically %s)", verdict, statistical);
    else
        export_table_set(t, row, col, "%s", verdict);
    export_table_tone(t, row, col, export_verdict_tone(verdict));
    export_table_tone(t, row, change_col, export_verdict_tone(verdict));
}

/* "ratio 95% CI" at the comparison's level. */
static void ci_head(char *buf, size_t len, double alpha)
{
    snprintf(buf, len, "ratio %g%% CI", isfinite(alpha) ? 100 * (1 - alpha) : 95.0);
}

size_t export_cmp_stages(struct export_table *t, const struct doc_cmp_candidate *cand,
                         double alpha)
{
    char a[32], ci[32];
    ci_head(ci, sizeof ci, alpha);
    export_table_init(t, 9, "stage", "baseline", "candidate", "change", "speedup", ci, "p",
                      "runs", "verdict");
    t->numeric = 0xfe;
    for (size_t i = 0; i < cand->n_stages; i++) {
        const struct doc_cmp_stage *s = &cand->stages[i];
        size_t row = export_table_row(t, s->depth);
        export_table_set(t, row, 0, "%s", str_or(s->name, "?"));
        export_table_set(t, row, 1, "%s", export_fmt_duration(s->baseline_median_ns, a,
                                                              sizeof a));
        export_table_set(t, row, 2, "%s", export_fmt_duration(s->candidate_median_ns, a,
                                                              sizeof a));
        export_table_set(t, row, 3, "%s", export_fmt_num(s->change_pct, "%+.1f %%", 1, a,
                                                         sizeof a));
        export_table_set(t, row, 4, "%s", export_fmt_num(s->speedup, "%.3fx", 1, a, sizeof a));
        set_interval(t, row, 5, s->ratio_ci_low, s->ratio_ci_high);
        if (isfinite(s->p_value) && s->p_value < 0.001)
            export_table_set(t, row, 6, "< 0.001");
        else
            export_table_set(t, row, 6, "%s", export_fmt_num(s->p_value, "%.3f", 1, a, sizeof a));
        export_table_set(t, row, 7, "%lld / %lld", s->n_baseline, s->n_candidate);
        set_verdict(t, row, 8, 3, s->verdict, s->statistical_verdict);
    }
    return t->nrows;
}

size_t export_cmp_latency(struct export_table *t, const struct doc_cmp_candidate *cand,
                          double alpha)
{
    char a[32], ci[32];
    ci_head(ci, sizeof ci, alpha);
    export_table_init(t, 8, "stage", "quantile", "baseline", "candidate", "change", ci, "spans",
                      "verdict");
    t->numeric = 0x5c;
    for (size_t i = 0; i < cand->n_stages; i++) {
        const struct doc_cmp_stage *s = &cand->stages[i];
        if (!s->latency.present)
            continue;
        const struct {
            const char *name;
            const struct doc_cmp_quantile *q;
        } quantiles[] = {{"p50", &s->latency.p50}, {"p99", &s->latency.p99}};
        for (size_t k = 0; k < 2; k++) {
            const struct doc_cmp_quantile *q = quantiles[k].q;
            size_t row = export_table_row(t, 0);
            export_table_set(t, row, 0, "%s", k ? "" : str_or(s->name, "?"));
            export_table_set(t, row, 1, "%s", quantiles[k].name);
            export_table_set(t, row, 2, "%s", export_fmt_duration(q->baseline_ns, a, sizeof a));
            export_table_set(t, row, 3, "%s", export_fmt_duration(q->candidate_ns, a, sizeof a));
            export_table_set(t, row, 4, "%s", export_fmt_num(q->change_pct, "%+.1f %%", 1, a,
                                                             sizeof a));
            set_interval(t, row, 5, q->ratio_ci_low, q->ratio_ci_high);
            export_table_set(t, row, 6, "%lld / %lld", s->latency.n_baseline,
                             s->latency.n_candidate);
            set_verdict(t, row, 7, 4, q->verdict, q->statistical_verdict);
        }
    }
    return t->nrows;
}

/* A figure of a resource in its unit: counters as rates (CPU seconds as cores), bytes in
 * binary units, ratios in percent; any other metric (or none) with %.6g. */
static char *metric_value(const char *metric, double x, char *buf, size_t len)
{
    if (!metric || !isfinite(x))
        return export_fmt_num(x, "%.6g", 1, buf, len);
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

/* A row "name | baseline | candidate | yes/no", toned DIFFERS over the row when it differs. */
static void pair_row(struct export_table *t, const char *name, const char *b, const char *c,
                     bool differs)
{
    size_t row = export_table_row(t, 0);
    export_table_set(t, row, 0, "%s", str_or(name, "-"));
    export_table_set(t, row, 1, "%s", b);
    export_table_set(t, row, 2, "%s", c);
    export_table_set(t, row, 3, "%s", differs ? "yes" : "no");
    for (size_t k = 0; differs && k <= 3; k++)
        export_table_tone(t, row, k, EXPORT_TONE_DIFFERS);
}

static bool same_number(double a, double b)
{
    return a == b || (isnan(a) && isnan(b));
}

size_t export_cmp_pairs(struct export_table *t, const struct doc_cmp_candidate *cand,
                        enum export_cmp_pairs what)
{
    char b[512], c[512];
    switch (what) {
    case EXPORT_CMP_COUNTERS:
        export_table_init(t, 4, "counter", "baseline", "candidate", "differs");
        for (size_t i = 0; i < cand->n_counters; i++) {
            const struct doc_cmp_counter *x = &cand->counters[i];
            pair_row(t, x->name, metric_value(NULL, x->baseline, b, sizeof b),
                     metric_value(NULL, x->candidate, c, sizeof c),
                     !same_number(x->baseline, x->candidate));
        }
        break;
    case EXPORT_CMP_METADATA:
        export_table_init(t, 4, "key", "baseline", "candidate", "differs");
        for (size_t i = 0; i < cand->n_metadata; i++) {
            const struct doc_cmp_meta *x = &cand->metadata[i];
            pair_row(t, x->key, str_or(x->baseline, "-"), str_or(x->candidate, "-"),
                     x->baseline && x->candidate ? strcmp(x->baseline, x->candidate) != 0
                                                 : x->baseline != x->candidate);
        }
        break;
    case EXPORT_CMP_RESOURCES:
        /* resource figures always differ a little: no column for that */
        export_table_init(t, 4, "stage", "metric", "baseline", "candidate", NULL);
        for (size_t i = 0; i < cand->n_resources; i++) {
            const struct doc_cmp_resource *x = &cand->resources[i];
            size_t row = export_table_row(t, 0);
            export_table_set(t, row, 0, "%s", str_or(x->stage, "-"));
            export_table_set(t, row, 1, "%s", str_or(x->metric, "-"));
            export_table_set(t, row, 2, "%s", metric_value(x->metric, x->baseline, b, sizeof b));
            export_table_set(t, row, 3, "%s", metric_value(x->metric, x->candidate, c, sizeof c));
        }
        break;
    case EXPORT_CMP_ENVIRONMENT:
        /* environment rows differ by construction: what matters is whether it matters */
        export_table_init(t, 4, "property", "baseline", "candidate", "matters");
        for (size_t i = 0; i < cand->n_environment_differences; i++) {
            const struct doc_cmp_env *x = &cand->environment_differences[i];
            pair_row(t, x->key, export_fmt_value(x->baseline, b, sizeof b),
                     export_fmt_value(x->candidate, c, sizeof c), x->matters);
        }
        break;
    }
    return t->nrows;
}
