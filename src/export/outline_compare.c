/* outline_compare.c: the comparison part of a report's outline (docs/reports.md), read through
 * doc/comparison.h (o->req->cmp): the verdict of each candidate first, then per candidate its
 * stage table with the reasons for unreliable changes, its load table, the measurement quality
 * of both sides, and the counters, metadata, resources and environment side by side. */
#include "export/outline_sections.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void cmp_stages(struct outline *o, const struct doc_cmp_candidate *cand, double alpha)
{
    struct export_table t;
    if (export_cmp_stages(&t, cand, alpha))
        outline_table(o, &t);
    else
        export_table_free(&t);
    struct strvec why = STRVEC_INIT;
    for (size_t i = 0; i < cand->n_stages; i++) {
        const struct doc_cmp_stage *s = &cand->stages[i];
        if (s->unreliable_reason)
            strvec_pushf(&why, "%s: unreliable (statistically %s): %s", str_or(s->name, "?"),
                   str_or(s->statistical_verdict, "?"), s->unreliable_reason);
    }
    o_list(o, &why);
    if (cand->clean_answer)
        outline_para(o, "For a clean answer, %s.", cand->clean_answer);
    if (export_cmp_latency(&t, cand, alpha)) {
        outline_para(o, "Span latency: p50 and p99 of the stages with at least 20 spans on each side, "
               "the spans of all runs pooled; the interval is a bootstrap of the ratio of the "
               "quantiles.");
        outline_table(o, &t);
    } else {
        export_table_free(&t);
    }
}

static const char *metric_name(const struct doc_cmp_load_metric *x)
{
    return !strcmp(str_or(x->unit, "s"), "qps") ? "QPS" : str_or(x->name, "?");
}

/* Why a scenario's figures are unreliable, once per distinct reason (an INVALID run makes all
 * of them so, for the same reason), below the table rather than in each of its rows. */
static void unreliable_reasons(struct outline *o, const struct doc_cmp_load_match *m)
{
    size_t n = m->n_metrics;
    for (size_t k = 0; k < n; k++) {
        const char *why = m->metrics[k].unreliable_reason;
        bool said = false;
        for (size_t j = 0; why && j < k && !said; j++) {
            const char *before = m->metrics[j].unreliable_reason;
            said = before && !strcmp(before, why);
        }
        if (!why || said)
            continue;
        char names[128] = "";
        size_t len = 0;
        for (size_t j = k; j < n && len < sizeof names; j++) {
            const char *w = m->metrics[j].unreliable_reason;
            if (w && !strcmp(w, why))
                len += (size_t)snprintf(names + len, sizeof names - len, "%s%s",
                                        len ? ", " : "", metric_name(&m->metrics[j]));
        }
        char at[48] = "";
        if (isfinite(m->target_qps))
            snprintf(at, sizeof at, " at %.4g QPS", m->target_qps);
        outline_para(o, "Why the %s run%s is unreliable (%s): %s.", str_or(m->scenario, "?"), at,
                     names, why);
    }
}

/* The load table of one candidate (its load comparison, docs/compare.md#load-results), if
 * any. */
static void cmp_load(struct outline *o, const struct doc_cmp_load *load)
{
    if (!load->present)
        return;
    struct export_table t;
    export_table_init(&t, 8, "scenario", "figure", "baseline", "candidate", "change",
                      "ratio interval", "p", "verdict", NULL);
    t.numeric = 0x1c;
    const char *how = "seconds";
    for (size_t i = 0; i < load->n_matches; i++) {
        const struct doc_cmp_load_match *m = &load->matches[i];
        how = str_or(m->resampling, how);
        for (size_t k = 0; k < m->n_metrics; k++) {
            const struct doc_cmp_load_metric *x = &m->metrics[k];
            bool qps = !strcmp(str_or(x->unit, "s"), "qps");
            char b[32], c[32];
            size_t row = export_table_row(&t, 0);
            if (k == 0) {
                if (m->peak)
                    export_table_set(&t, row, 0, "%s peak", str_or(m->scenario, "?"));
                else
                    export_table_set(&t, row, 0, isfinite(m->target_qps) ? "%s %.4g QPS" : "%s",
                                     str_or(m->scenario, "?"), m->target_qps);
            }
            export_table_set(&t, row, 1, "%s%s", metric_name(x), x->metric ? " (metric)" : "");
            if (qps) {
                export_table_set(&t, row, 2, "%.1f", x->baseline);
                export_table_set(&t, row, 3, "%.1f", x->candidate);
            } else {
                export_table_set(&t, row, 2, "%s",
                                 export_fmt_duration(x->baseline * 1e9, b, sizeof b));
                export_table_set(&t, row, 3, "%s",
                                 export_fmt_duration(x->candidate * 1e9, c, sizeof c));
            }
            export_table_set(&t, row, 4, isfinite(x->change_pct) ? "%+.1f %%" : "-",
                             x->change_pct);
            if (isfinite(x->ratio_ci_low) && isfinite(x->ratio_ci_high))
                export_table_set(&t, row, 5, "[%.3f, %.3f]", x->ratio_ci_low, x->ratio_ci_high);
            if (isfinite(x->p_value))
                export_table_set(&t, row, 6, "%.3g", x->p_value);
            const char *v = str_or(x->verdict, "?");
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
    for (size_t i = 0; i < load->n_matches; i++)
        unreliable_reasons(o, &load->matches[i]);
    for (size_t i = 0; i < load->n_unmatched; i++) {
        const struct doc_cmp_load_unmatched *u = &load->unmatched[i];
        char at[48] = "";
        if (isfinite(u->target_qps))
            snprintf(at, sizeof at, " at %.4g QPS", u->target_qps);
        outline_para(o, "The %s run%s is only in the %s.", str_or(u->scenario, "?"), at,
                     str_or(u->side, "?"));
    }
}

/* The measurement-quality warnings of one side, one list item per warning. */
static void cmp_quality(struct outline *o, const char *side, const struct doc_warning *w,
                        size_t n)
{
    if (!n) {
        outline_para(o, "Measurement quality of the %s: no warnings.", side);
        return;
    }
    struct strvec l = STRVEC_INIT;
    for (size_t i = 0; i < n; i++)
        strvec_pushf(&l, "%s: %s", str_or(w[i].code, "?"), str_or(w[i].message, ""));
    outline_para(o, "Measurement quality of the %s:", side);
    o_list(o, &l);
}

/* A baseline/candidate table of the candidate (export_cmp_pairs), after its intro. */
static void cmp_pairs(struct outline *o, const struct doc_cmp_candidate *cand,
                      enum export_cmp_pairs what, const char *intro)
{
    struct export_table t;
    if (!export_cmp_pairs(&t, cand, what)) {
        export_table_free(&t);
        return;
    }
    outline_para(o, "%s", intro);
    outline_table(o, &t);
}

/* The name of a side: its label, else its id. */
static const char *side_name(const struct doc_cmp_who *w)
{
    return str_or(w->label, str_or(w->id, "?"));
}

void outline_comparison(struct outline *o)
{
    const struct doc_comparison *c = o->req->cmp;
    outline_heading(o, 2, "Comparison");
    if (o->ops->figure)
        o->ops->figure(o->ctx, EXPORT_FIGURE_BREAKDOWN, o->req, 0);
    if (!c) {
        outline_para(o, "No comparison was made.");
        return;
    }
    const struct doc_cmp_who *base = &c->baseline;
    char a[32], e[32];
    outline_para(o, "Baseline: %s%s%s%s. A change counts when p < %s and it is larger than %s; the "
           "ratio is the candidate's median over the baseline's, with its bootstrap confidence "
           "interval; p is from a Mann-Whitney test over the runs. A change that a disturbance of "
           "the side that came out slower could explain (other processes' CPU use, CPU "
           "pressure, swapping, GPU throttling) is called unreliable, not faster or slower.",
           base->label ? base->label : "", base->label ? " (" : "", str_or(base->id, "?"),
           base->label ? ")" : "", export_fmt_num(c->alpha, "%g", 1, a, sizeof a),
           isfinite(c->min_effect_pct) ? export_fmt_num(c->min_effect_pct, "%g %%", 1, e, sizeof e)
                                       : "zero");
    for (size_t i = 0; i < c->n_candidates; i++) {
        const struct doc_cmp_candidate *cand = &c->candidates[i];
        outline_heading(o, 3, "%s against %s", side_name(&cand->who), side_name(base));
        if (!cand->like_for_like)
            outline_para(o, "Not like for like: the environments differ in ways that matter (below); "
                   "the changes may not be caused by the workload.");
        /* load results: the scenario runs are compared, not the generator's wall time */
        if (!cand->load.present)
            cmp_stages(o, cand, c->alpha);
        cmp_load(o, &cand->load);
        cmp_quality(o, "baseline", cand->quality_baseline, cand->n_quality_baseline);
        cmp_quality(o, "candidate", cand->quality_candidate, cand->n_quality_candidate);
        cmp_pairs(o, cand, EXPORT_CMP_COUNTERS, "Counters:");
        cmp_pairs(o, cand, EXPORT_CMP_METADATA, "Metadata:");
        cmp_pairs(o, cand, EXPORT_CMP_RESOURCES, "Resources:");
        cmp_pairs(o, cand, EXPORT_CMP_ENVIRONMENT, "Environment differences:");
    }
}

/* The answer of a comparison: the verdict of the total of each candidate, before the
 * comparison's chart and tables. */
void outline_comparison_answer(struct outline *o)
{
    const struct doc_comparison *c = o->req->cmp;
    if (!c || !c->n_candidates)
        return;
    const char *base_name = side_name(&c->baseline);
    struct strvec l = STRVEC_INIT;
    outline_group_begin(o, EXPORT_GROUP_ANSWER, NULL);
    for (size_t i = 0; i < c->n_candidates; i++) {
        char *v = export_answer_comparison(&c->candidates[i], base_name);
        strvec_pushf(&l, "%s", v);
        free(v);
    }
    outline_para(o, "Verdict:");
    o_list(o, &l);
    outline_group_end(o, EXPORT_GROUP_ANSWER);
}
