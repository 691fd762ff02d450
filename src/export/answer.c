/* answer.c: the sentences a report opens with (docs/reports.md, "The report"): the verdict
 * (the bottleneck, its verdict and evidence), the total with its interval, the top findings in
 * the analysis's own order, and for a comparison the verdict of the total per candidate (of
 * each scenario run's latency percentile and throughput, for load results). Pure
 * functions of the documents (a result read through doc/result.h; the comparison document),
 * shared by the Markdown and HTML outline (outline.c) so that both lead with the same answer. */
#include "export/export.h"

#include <math.h>
#include <string.h>

#include "util/xalloc.h"
#include "util/strbuf.h"

/* The verdict of stage in the analysis, or NULL. */
static const struct doc_verdict *verdict_of(const struct doc_result *r, const char *stage)
{
    for (size_t i = 0; i < r->analysis.n_verdicts; i++) {
        const char *s = r->analysis.verdicts[i].stage;
        if (s && !strcmp(s, stage))
            return &r->analysis.verdicts[i];
    }
    return NULL;
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    char *s = xvasprintf(f, ap);
    va_end(ap);
    return s;
}

char *export_answer_verdict(const struct doc_result *r)
{
    const char *bottleneck = r->analysis.bottleneck;
    char share[32];
    if (!r->summary.wall.present)
        return fmt("No verdict: no run was measured to the end, so there is nothing to "
                   "analyse (Runs, below, says what happened to each).");
    if (!r->analysis.present)
        return fmt("No verdict: the result has no analysis (no resource samples or no usable "
                   "run).");
    if (!bottleneck)
        return fmt("No bottleneck: no stage stands out (Analysis, below, has a verdict per "
                   "stage).");
    const struct doc_verdict *v = verdict_of(r, bottleneck);
    export_fmt_num(doc_result_stage_share(r, bottleneck), "%.1f %%", 100, share, sizeof share);
    const char *evidence = v ? v->evidence : NULL;
    return fmt("Verdict: %s is the bottleneck (%s of the total), %s%s%s.", bottleneck, share,
               str_or(v ? v->rule : NULL, "no verdict"), evidence && *evidence ? ": " : "",
               evidence ? evidence : "");
}

char *export_answer_total(const struct doc_result *r)
{
    const struct doc_summary *s = &r->summary;
    const struct doc_stats *wall = &s->wall;
    long long measured = s->runs_measured, ok = s->runs_ok;
    char a[32], b[32], c[32];
    if (!wall->present)
        return fmt("No run completed (%lld measured).", measured);
    export_fmt_duration(wall->median, a, sizeof a);
    /* a bottleneck among the stages means little when most of the run is in none of them */
    double outside = s->outside_ns / wall->median;
    char tail[160] = "";
    if (s->n_stages && isfinite(outside) && outside >= 0.1)
        snprintf(tail, sizeof tail, " %.1f %% of it is outside any stage (start-up, imports, or "
                 "code without markers).", 100 * outside);
    if (wall->n >= 2 && isfinite(wall->ci_low)) {
        double level = wall->ci_level;
        return fmt("Total: %s median, %.0f %% interval %s .. %s, over %lld run%s (%lld ok).%s",
                   a, isfinite(level) ? 100 * level : 95.0,
                   export_fmt_duration(wall->ci_low, b, sizeof b),
                   export_fmt_duration(wall->ci_high, c, sizeof c), measured,
                   measured == 1 ? "" : "s", ok, tail);
    }
    return fmt("Total: %s over %lld run%s (%lld ok): too few for an interval.%s", a, measured,
               measured == 1 ? "" : "s", ok, tail);
}

size_t export_answer_findings(const struct doc_result *r, size_t max, char **out)
{
    size_t n = 0;
    for (size_t i = 0; i < r->analysis.n_findings && n < max; i++) {
        const struct doc_finding *f = &r->analysis.findings[i];
        char b[32] = "";
        if (f->saving_ns > 0)
            export_fmt_duration(f->saving_ns, b, sizeof b);
        out[n++] = fmt("%s (%s): %s%s%s%s", str_or(f->stage, "?"), str_or(f->rule, "?"),
                       str_or(f->recommendation, ""), *b ? " (could save " : "", b,
                       *b ? " per run)" : "");
    }
    return n;
}

/* One scenario run of a load comparison: "server at 200 QPS: p99 slower (+12.3 %, ratio
 * interval 1.05 .. 1.20), throughput no significant change (-0.4 %, ...)". */
static void load_match_answer(struct strbuf *b, const struct doc_cmp_load_match *m)
{
    strbuf_puts(b, str_or(m->scenario, "?"));
    if (m->peak)
        strbuf_puts(b, " (the peak found)");
    if (isfinite(m->target_qps))
        strbuf_printf(b, " at %g QPS", m->target_qps);
    strbuf_puts(b, ": ");
    bool first = true;
    for (size_t i = 0; i < m->n_metrics; i++) {
        const struct doc_cmp_load_metric *q = &m->metrics[i];
        bool throughput = q->name && !strcmp(q->name, "throughput_qps");
        if (!q->metric && !throughput)
            continue;
        char change[32], lo[32], hi[32];
        export_fmt_num(q->change_pct, "%+.1f %%", 1, change, sizeof change);
        export_fmt_num(q->ratio_ci_low, "%.3f", 1, lo, sizeof lo);
        export_fmt_num(q->ratio_ci_high, "%.3f", 1, hi, sizeof hi);
        strbuf_printf(b, "%s%s %s (%s", first ? "" : ", ", throughput ? "throughput" : q->name,
                      str_or(q->verdict, "no verdict"), change);
        if (isfinite(q->ratio_ci_low))
            strbuf_printf(b, ", ratio interval %s .. %s", lo, hi);
        strbuf_putc(b, ')');
        first = false;
    }
    if (first)
        strbuf_puts(b, "not compared");
}

/* A comparison of load results answers per scenario run: the latency percentile LoadGen
 * judges it by, and the throughput (docs/compare.md#load-results), not the wall time of the
 * whole command. */
static char *load_answer(const struct doc_cmp_load *load, const char *who, const char *baseline)
{
    if (!load->n_matches)
        return fmt("%s against %s: no scenario run of one was made in the other (Load, below, "
                   "lists them).", who, baseline);
    struct strbuf b = STRBUF_INIT;
    strbuf_printf(&b, "%s against %s, ", who, baseline);
    for (size_t i = 0; i < load->n_matches; i++) {
        if (i)
            strbuf_puts(&b, "; ");
        load_match_answer(&b, &load->matches[i]);
    }
    size_t missing = load->n_unmatched;
    if (missing)
        strbuf_printf(&b, "; %zu scenario run%s without a match", missing,
                      missing == 1 ? "" : "s");
    strbuf_putc(&b, '.');
    return strbuf_take(&b);
}

char *export_answer_comparison(const struct doc_cmp_candidate *cand, const char *baseline)
{
    const char *who = str_or(cand->who.label, str_or(cand->who.id, "?"));
    if (cand->load.present)
        return load_answer(&cand->load, who, baseline);
    const struct doc_cmp_stage *total = doc_cmp_total(cand);
    if (!total)
        return fmt("%s against %s: the total was not compared.", who, baseline);
    char change[32], speedup[32], lo[32], hi[32], p[32];
    double pv = total->p_value;
    export_fmt_num(total->change_pct, "%+.1f %%", 1, change, sizeof change);
    export_fmt_num(total->speedup, "%.3fx", 1, speedup, sizeof speedup);
    export_fmt_num(total->ratio_ci_low, "%.3f", 1, lo, sizeof lo);
    export_fmt_num(total->ratio_ci_high, "%.3f", 1, hi, sizeof hi);
    if (isfinite(pv) && pv < 0.001)
        snprintf(p, sizeof p, "< 0.001");
    else
        export_fmt_num(pv, "%.3f", 1, p, sizeof p);
    return fmt("%s against %s, total: %s (%s, speedup %s, ratio interval %s .. %s, p %s%s)%s.",
               who, baseline, str_or(total->verdict, "no verdict"), change, speedup, lo, hi,
               isfinite(pv) && pv < 0.001 ? "" : "= ", p,
               cand->like_for_like ? "" : "; not like for like");
}
