/* outline_compare.c: the comparison part of a report's outline (docs/reports.md): the
 * verdict of each candidate first, then per candidate its stage table with the reasons for
 * unreliable changes, its load table, the measurement quality of both sides, and the
 * counters, metadata, resources and environment side by side. */
#include "export/outline_sections.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void cmp_stages(struct outline *o, const json_t *cand, double alpha)
{
    struct export_table t;
    if (export_cmp_stages(&t, cand, alpha))
        outline_table(o, &t);
    else
        export_table_free(&t);
    struct export_lines why = {0};
    const json_t *stages = json_object_get(cand, "stages");
    for (size_t i = 0; i < json_array_size(stages); i++) {
        const json_t *s = json_array_get(stages, i);
        if (jsonx_str(s, "unreliable_reason"))
            sl_add(&why, "%s: unreliable (statistically %s): %s", str_or(jsonx_str(s, "name"), "?"),
                   str_or(jsonx_str(s, "statistical_verdict"), "?"),
                   jsonx_str(s, "unreliable_reason"));
    }
    o_list(o, &why);
    if (jsonx_str(cand, "clean_answer"))
        outline_para(o, "For a clean answer, %s.", jsonx_str(cand, "clean_answer"));
    if (export_cmp_latency(&t, cand, alpha)) {
        outline_para(o, "Span latency: p50 and p99 of the stages with at least 20 spans on each side, "
               "the spans of all runs pooled; the interval is a bootstrap of the ratio of the "
               "quantiles.");
        outline_table(o, &t);
    } else {
        export_table_free(&t);
    }
}

/* Why a scenario's figures are unreliable, once per distinct reason (an INVALID run makes all
 * of them so, for the same reason), below the table rather than in each of its rows. */
static void unreliable_reasons(struct outline *o, const json_t *m)
{
    const json_t *rows = json_object_get(m, "metrics");
    size_t n = json_array_size(rows);
    for (size_t k = 0; k < n; k++) {
        const char *why = jsonx_str(json_array_get(rows, k), "unreliable_reason");
        bool said = false;
        for (size_t j = 0; why && j < k && !said; j++) {
            const char *before = jsonx_str(json_array_get(rows, j), "unreliable_reason");
            said = before && !strcmp(before, why);
        }
        if (!why || said)
            continue;
        char names[128] = "";
        size_t len = 0;
        for (size_t j = k; j < n && len < sizeof names; j++) {
            const json_t *x = json_array_get(rows, j);
            const char *w = jsonx_str(x, "unreliable_reason");
            if (w && !strcmp(w, why))
                len += (size_t)snprintf(names + len, sizeof names - len, "%s%s",
                                        len ? ", " : "",
                                        !strcmp(str_or(jsonx_str(x, "unit"), "s"), "qps")
                                            ? "QPS"
                                            : str_or(jsonx_str(x, "name"), "?"));
        }
        double q = jsonx_num(m, "target_qps");
        char at[48] = "";
        if (isfinite(q))
            snprintf(at, sizeof at, " at %.4g QPS", q);
        outline_para(o, "Why the %s run%s is unreliable (%s): %s.",
                     str_or(jsonx_str(m, "scenario"), "?"), at, names, why);
    }
}

/* The load table of one candidate (its "load" object, compare_load(),
 * docs/compare.md#load-results), if any. */
static void cmp_load(struct outline *o, const json_t *cand)
{
    const json_t *load = json_object_get(cand, "load");
    const json_t *matches = json_object_get(load, "scenarios");
    if (!json_is_object(load))
        return;
    struct export_table t;
    export_table_init(&t, 8, "scenario", "figure", "baseline", "candidate", "change",
                      "ratio interval", "p", "verdict", NULL);
    t.numeric = 0x1c;
    const char *how = "seconds";
    for (size_t i = 0; i < json_array_size(matches); i++) {
        const json_t *m = json_array_get(matches, i), *rows = json_object_get(m, "metrics");
        how = str_or(jsonx_str(m, "resampling"), how);
        for (size_t k = 0; k < json_array_size(rows); k++) {
            const json_t *x = json_array_get(rows, k);
            bool qps = !strcmp(str_or(jsonx_str(x, "unit"), "s"), "qps");
            char b[32], c[32];
            size_t row = export_table_row(&t, 0);
            if (k == 0) {
                double q = jsonx_num(m, "target_qps");
                if (json_is_true(json_object_get(m, "peak")))
                    export_table_set(&t, row, 0, "%s peak", str_or(jsonx_str(m, "scenario"), "?"));
                else
                    export_table_set(&t, row, 0, isfinite(q) ? "%s %.4g QPS" : "%s",
                                     str_or(jsonx_str(m, "scenario"), "?"), q);
            }
            export_table_set(&t, row, 1, "%s%s", qps ? "QPS" : str_or(jsonx_str(x, "name"), "?"),
                             json_is_true(json_object_get(x, "metric")) ? " (metric)" : "");
            if (qps) {
                export_table_set(&t, row, 2, "%.1f", jsonx_num(x, "baseline"));
                export_table_set(&t, row, 3, "%.1f", jsonx_num(x, "candidate"));
            } else {
                export_table_set(&t, row, 2, "%s",
                                 export_fmt_duration(jsonx_num(x, "baseline") * 1e9, b, sizeof b));
                export_table_set(&t, row, 3, "%s",
                                 export_fmt_duration(jsonx_num(x, "candidate") * 1e9, c, sizeof c));
            }
            double ch = jsonx_num(x, "change_pct"), lo = jsonx_num(x, "ratio_ci_low"),
                   hi = jsonx_num(x, "ratio_ci_high"), p = jsonx_num(x, "p_value");
            export_table_set(&t, row, 4, isfinite(ch) ? "%+.1f %%" : "-", ch);
            if (isfinite(lo) && isfinite(hi))
                export_table_set(&t, row, 5, "[%.3f, %.3f]", lo, hi);
            if (isfinite(p))
                export_table_set(&t, row, 6, "%.3g", p);
            const char *v = str_or(jsonx_str(x, "verdict"), "?");
            export_table_set(&t, row, 7, "%s", v);
            export_table_tone(&t, row, 7, export_verdict_tone(v));
        }
    }
    outline_para(o, "Load: the scenario runs that count (find-peak's confirmation, not its "
                 "probes), matched by scenario and target QPS; the ratio interval is a %s "
                 "(docs/compare.md#load-results).",
                 !strcmp(how, "results") ? "bootstrap over the repeated results, p a "
                                           "Mann-Whitney test over them"
                                         : "circular block bootstrap over the runs' seconds");
    if (t.nrows)
        outline_table(o, &t);
    else
        export_table_free(&t);
    for (size_t i = 0; i < json_array_size(matches); i++)
        unreliable_reasons(o, json_array_get(matches, i));
    const json_t *un = json_object_get(load, "unmatched");
    for (size_t i = 0; i < json_array_size(un); i++) {
        const json_t *u = json_array_get(un, i);
        double q = jsonx_num(u, "target_qps");
        char at[48] = "";
        if (isfinite(q))
            snprintf(at, sizeof at, " at %.4g QPS", q);
        outline_para(o, "The %s run%s is only in the %s.", str_or(jsonx_str(u, "scenario"), "?"),
                     at, str_or(jsonx_str(u, "side"), "?"));
    }
}
/* The measurement-quality warnings of each side, one list item per warning. */
static void cmp_quality(struct outline *o, const json_t *cand)
{
    const json_t *q = json_object_get(cand, "quality");
    static const char *const sides[] = {"baseline", "candidate"};
    for (size_t k = 0; k < 2; k++) {
        const json_t *w = json_object_get(q, sides[k]);
        if (!json_array_size(w)) {
            outline_para(o, "Measurement quality of the %s: no warnings.", sides[k]);
            continue;
        }
        struct export_lines l = {0};
        for (size_t i = 0; i < json_array_size(w); i++)
            sl_add(&l, "%s: %s", str_or(jsonx_str(json_array_get(w, i), "code"), "?"),
                   str_or(jsonx_str(json_array_get(w, i), "message"), ""));
        outline_para(o, "Measurement quality of the %s:", sides[k]);
        o_list(o, &l);
    }
}

/* A baseline/candidate table of the comparison member `member`: columns named by keys. */
static void cmp_pairs(struct outline *o, const json_t *cand, const char *member,
                      const char *intro, const char *k1, const char *k2, const char *h1,
                      const char *h2)
{
    struct export_table t;
    if (!export_cmp_pairs(&t, cand, member, k1, k2, h1, h2)) {
        export_table_free(&t);
        return;
    }
    outline_para(o, "%s", intro);
    outline_table(o, &t);
}

void outline_comparison(struct outline *o)
{
    const json_t *c = o->req->comparison;
    outline_heading(o, 2, "Comparison");
    if (o->ops->figure)
        o->ops->figure(o->ctx, EXPORT_FIGURE_BREAKDOWN, o->req, 0);
    if (!json_is_object(c)) {
        outline_para(o, "No comparison was made.");
        return;
    }
    const json_t *base = json_object_get(c, "baseline");
    double alpha = jsonx_num(c, "alpha"), effect = jsonx_num(c, "min_effect_pct");
    char a[32], e[32];
    const char *base_label = jsonx_str(base, "label");
    outline_para(o, "Baseline: %s%s%s%s. A change counts when p < %s and it is larger than %s; the "
           "ratio is the candidate's median over the baseline's, with its bootstrap confidence "
           "interval; p is from a Mann-Whitney test over the runs. A change that a disturbance of "
           "the side that came out slower could explain (other processes' CPU use, CPU "
           "pressure, swapping, GPU throttling) is called unreliable, not faster or slower.",
           base_label ? base_label : "", base_label ? " (" : "",
           str_or(jsonx_str(base, "id"), "?"), base_label ? ")" : "",
           export_fmt_num(alpha, "%g", 1, a, sizeof a),
           isfinite(effect) ? export_fmt_num(effect, "%g %%", 1, e, sizeof e) : "zero");
    const json_t *cands = json_object_get(c, "candidates");
    for (size_t i = 0; i < json_array_size(cands); i++) {
        const json_t *cand = json_array_get(cands, i);
        outline_heading(o, 3, "%s against %s",
                  str_or(jsonx_str(cand, "label"), str_or(jsonx_str(cand, "id"), "?")),
                  str_or(jsonx_str(base, "label"), str_or(jsonx_str(base, "id"), "?")));
        if (json_is_false(json_object_get(cand, "like_for_like")))
            outline_para(o, "Not like for like: the environments differ in ways that matter (below); "
                   "the changes may not be caused by the workload.");
        /* load results: the scenario runs are compared, not the generator's wall time */
        if (!json_is_object(json_object_get(cand, "load")))
            cmp_stages(o, cand, alpha);
        cmp_load(o, cand);
        cmp_quality(o, cand);
        cmp_pairs(o, cand, "counters", "Counters:", "name", NULL, "counter", NULL);
        cmp_pairs(o, cand, "metadata", "Metadata:", "key", NULL, "key", NULL);
        cmp_pairs(o, cand, "resources", "Resources:", "stage", "metric", "stage", "metric");
        cmp_pairs(o, cand, "environment_differences", "Environment differences:", "key", NULL,
                  "property", NULL);
    }
}

/* The answer of a comparison: the verdict of the total of each candidate, before the
 * comparison's chart and tables. */
void outline_comparison_answer(struct outline *o)
{
    const json_t *c = o->req->comparison;
    const json_t *cands = json_object_get(c, "candidates");
    if (!json_array_size(cands))
        return;
    const json_t *base = json_object_get(c, "baseline");
    const char *base_name = str_or(jsonx_str(base, "label"), str_or(jsonx_str(base, "id"), "?"));
    struct export_lines l = {0};
    outline_group_begin(o, EXPORT_GROUP_ANSWER, NULL);
    for (size_t i = 0; i < json_array_size(cands); i++) {
        char *v = export_answer_comparison(json_array_get(cands, i), base_name);
        sl_add(&l, "%s", v);
        free(v);
    }
    outline_para(o, "Verdict:");
    o_list(o, &l);
    outline_group_end(o, EXPORT_GROUP_ANSWER);
}
