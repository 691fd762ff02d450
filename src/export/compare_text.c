/* compare_text.c: the terminal view of a comparison (export_compare_print, compare_text.h),
 * read through doc/comparison.h: per candidate the stage table, its unreliable verdicts, span
 * latency, the load table, cost, scaling and the pairs side by side, then the totals of every
 * candidate. Every table (stages, latency, load, pairs, resources, totals) is drawn by the
 * table renderer (table_text.c); the lines around them are written as they are. */
#include "export/compare_text.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "doc/comparison.h"
#include "export/table.h"
#include "export/text.h"
#include "util/units.h"
#include "util/xalloc.h"

#define DASH "\u2014"
#define ARROW "\u2192"

/* A stage's name in the stage table (with its indent) and a scenario's in the load table are
 * cut at this many bytes, a value side by side at VALUE_BYTES, as this view always has: a name
 * from a hostile file does not widen the table without bound. */
#define NAME_BYTES 95
#define VALUE_BYTES 255

/* ---- cells ------------------------------------------------------------------------------ */

static const char *or_q(const char *s)
{
    return s ? s : "?";
}

static const char *duration(double ns, char *buf, size_t len)
{
    if (isfinite(ns))
        return units_duration(ns, buf, len);
    snprintf(buf, len, DASH);
    return buf;
}

/* "+7.6 %", "−0.5 %" (U+2212 minus sign), or a dash. */
static const char *change(double pct, char *buf, size_t len)
{
    if (!isfinite(pct))
        snprintf(buf, len, DASH);
    else if (pct < 0)
        snprintf(buf, len, "\u2212%.1f %%", -pct);
    else
        snprintf(buf, len, "+%.1f %%", pct);
    return buf;
}

/* "[0.981, 1.199]", or nothing without an interval. */
static void set_interval(struct export_table *t, size_t row, size_t col, double lo, double hi)
{
    if (isfinite(lo) && isfinite(hi))
        export_table_set(t, row, col, "[%.3f, %.3f]", lo, hi);
}

/* "p=0.343", "p<0.001", or nothing without a test. */
static void set_p(struct export_table *t, size_t row, size_t col, double p)
{
    if (isfinite(p))
        export_table_set(t, row, col, p < 0.001 ? "p<0.001" : "p=%.3f", p);
}

/* The verdict word, toned (faster, slower, unreliable). */
static void set_verdict(struct export_table *t, size_t row, size_t col, const char *verdict)
{
    export_table_set(t, row, col, "%s", or_q(verdict));
    export_table_tone(t, row, col, export_verdict_tone(verdict));
}

/* ---- the stage table -------------------------------------------------------------------- */

enum { S_STAGE, S_BASE, S_ARROW, S_CAND, S_CHANGE, S_SPEEDUP, S_CI, S_P, S_VERDICT, S_RUNS,
       S_COLS };

/* Draws the stage or load table t, then frees it: its interval column ci headed with
 * ci_level, the figures of t->numeric right-aligned under left-aligned headers, one blank on
 * each side of the arrow column. */
static void side_table_print(FILE *out, struct export_table *t, size_t arrow, size_t ci,
                             double ci_level)
{
    char head[64];
    snprintf(head, sizeof head, "ratio %g %% CI", ci_level * 100);
    export_table_head(t, ci, head);
    struct export_text_column *col = xcalloc(t->ncols, sizeof *col);
    col[0].sep = "  ";
    col[arrow].sep = col[arrow + 1].sep = " ";
    for (size_t c = 0; c < t->ncols; c++)
        col[c].head_left = (t->numeric >> c) & 1u;
    const struct export_text_layout layout = {.col = col, .header = true};
    export_table_print(out, t, &layout);
    free(col);
    export_table_free(t);
}

#define STAGE_MAX_INDENT 8 /* deeper nesting is shown at this depth */

/* Whether a row's interval covers another share than the header says (few runs: the rank
 * test's own distribution-free interval, analysis/compare_method.h). */
static bool other_level(const struct doc_cmp_stage *s, double ci_level)
{
    return isfinite(s->ratio_ci_level) && fabs(s->ratio_ci_level - ci_level) > 1e-9;
}

static void stage_table(FILE *out, const struct doc_cmp_candidate *c, double ci_level)
{
    struct export_table t;
    char buf[64];
    export_table_init(&t, S_COLS, "stage", "baseline", "", "candidate", "change", "speedup", "",
                      "p", "verdict", "runs", NULL);
    t.numeric = 1u << S_BASE | 1u << S_CAND | 1u << S_CHANGE | 1u << S_SPEEDUP | 1u << S_RUNS;
    for (size_t i = 0; i < c->n_stages; i++) {
        const struct doc_cmp_stage *s = &c->stages[i];
        int indent = s->depth > STAGE_MAX_INDENT ? STAGE_MAX_INDENT : s->depth;
        size_t row = export_table_row(&t, indent);
        export_table_set(&t, row, S_STAGE, "%.*s", NAME_BYTES - 2 * indent, or_q(s->name));
        export_table_set(&t, row, S_BASE, "%s", duration(s->baseline_median_ns, buf, sizeof buf));
        export_table_set(&t, row, S_ARROW, ARROW);
        export_table_set(&t, row, S_CAND, "%s", duration(s->candidate_median_ns, buf, sizeof buf));
        export_table_set(&t, row, S_CHANGE, "%s", change(s->change_pct, buf, sizeof buf));
        if (isfinite(s->speedup))
            export_table_set(&t, row, S_SPEEDUP, "%.2f\u00d7", s->speedup);
        else
            export_table_set(&t, row, S_SPEEDUP, DASH);
        if (other_level(s, ci_level) && isfinite(s->ratio_ci_low) && isfinite(s->ratio_ci_high))
            export_table_set(&t, row, S_CI, "[%.3f, %.3f]*", s->ratio_ci_low, s->ratio_ci_high);
        else
            set_interval(&t, row, S_CI, s->ratio_ci_low, s->ratio_ci_high);
        set_p(&t, row, S_P, s->p_value);
        set_verdict(&t, row, S_VERDICT, s->verdict);
        export_table_set(&t, row, S_RUNS, "%lld/%lld", s->n_baseline, s->n_candidate);
    }
    side_table_print(out, &t, S_ARROW, S_CI, ci_level);
}

/* Says when the stage rows cannot be compared: no stage in common, or one side without any. */
static void stage_note(FILE *out, const struct doc_cmp_candidate *c)
{
    if (c->common_stages > 0)
        return;
    size_t only_base = 0, only_cand = 0;
    for (size_t i = 0; i < c->n_stages; i++) {
        const char *v = c->stages[i].verdict;
        only_base += v && !strcmp(v, "missing in candidate");
        only_cand += v && !strcmp(v, "missing in baseline");
    }
    if (only_base && only_cand)
        fprintf(out, "note: the results have no stage in common: only the totals can be "
                     "compared\n");
    else if (only_base || only_cand)
        fprintf(out, "note: the %s has no stages (no markers?): only the totals can be "
                     "compared\n", only_base ? "candidate" : "baseline");
}

/* "baseline  quality: high_cv ×2, other_load" (the codes of one side's measurement quality
 * warnings, each once with how often), or nothing when the side has none. */
static void quality(FILE *out, const char *role, const struct doc_warning *w, size_t n)
{
    if (!n)
        return;
    fprintf(out, "%s quality: ", role);
    const char *sep = "";
    for (size_t i = 0; i < n; i++) {
        const char *code = w[i].code;
        int seen = 0, times = 0;
        for (size_t k = 0; k < n; k++)
            if (code && w[k].code && !strcmp(code, w[k].code))
                seen |= k < i, times++;
        if (!code || seen)
            continue;
        fprintf(out, times > 1 ? "%s%s \u00d7%d" : "%s%s", sep, code, times);
        sep = ", ";
    }
    fputc('\n', out);
}

/* Under the stage table: what the intervals marked * cover, and for each inconclusive row of
 * the top level what the runs leave open and how many runs would settle it. */
static void undecided(FILE *out, const struct doc_comparison *cmp,
                      const struct doc_cmp_candidate *c, double ci_level)
{
    bool any = false;
    for (size_t i = 0; i < c->n_stages; i++) {
        const struct doc_cmp_stage *s = &c->stages[i];
        if (!other_level(s, ci_level) || !isfinite(s->ratio_ci_low))
            continue;
        fprintf(out, "%s* %.0f %% intervals (%lld and %lld runs: the rank test cannot reach "
                "p < %g, so the smallest and largest ratio of the runs bound the change)\n",
                any ? "" : "\n", 100 * s->ratio_ci_level, s->n_baseline, s->n_candidate,
                cmp->alpha);
        any = true;
        break;
    }
    for (size_t i = 0; i < c->n_stages; i++) {
        const struct doc_cmp_stage *s = &c->stages[i];
        if (s->depth > 0 || !s->verdict || strcmp(s->verdict, "inconclusive") ||
            !isfinite(s->ratio_ci_low) || !isfinite(s->ratio_ci_high))
            continue;
        char lo[32], hi[32];
        fprintf(out, "%s%s: inconclusive: changes from %s to %s fit these runs",
                any ? "" : "\n", or_q(s->name), change((s->ratio_ci_low - 1) * 100, lo, sizeof lo),
                change((s->ratio_ci_high - 1) * 100, hi, sizeof hi));
        any = true;
        if (s->runs_needed > 0)
            fprintf(out, "; about %lld runs a side would settle it to \u00b1%.0f %%",
                    s->runs_needed, s->settle_pct);
        else if (s->runs_needed < 0)
            fputs("; more than 10000 runs a side would be needed at this noise", out);
        fputc('\n', out);
    }
}

/* Under the stage table: why each unreliable verdict is unreliable, and how to do better. */
static void unreliable(FILE *out, const struct doc_cmp_candidate *c)
{
    bool any = false;
    for (size_t i = 0; i < c->n_stages; i++) {
        const struct doc_cmp_stage *s = &c->stages[i];
        if (!s->unreliable_reason)
            continue;
        if (!any)
            fputc('\n', out);
        any = true;
        fprintf(out, "%s: unreliable (statistically %s): %s\n", or_q(s->name),
                or_q(s->statistical_verdict), s->unreliable_reason);
    }
    if (c->clean_answer)
        fprintf(out, "for a clean answer, %s\n", c->clean_answer);
}

/* ---- span latency ----------------------------------------------------------------------- */

enum { L_STAGE, L_Q, L_BASE, L_CAND, L_CHANGE, L_CI, L_VERDICT, L_COLS };

/* printf widths: a wider figure widens its own line only. The quantile column is as wide as
 * "p50", so that the spans line under a stage (in that column) widens nothing. */
static const struct export_text_column latency_columns[L_COLS] = {
    [L_STAGE] = {.sep = "  "},
    [L_Q] = {.width = 3},
    [L_BASE] = {.width = 10},
    [L_CAND] = {.width = 10, .sep = " " ARROW " "},
    [L_CHANGE] = {.width = 9},
    [L_CI] = {.width = 16},
};

static void quantile_row(struct export_table *t, const char *stage, const char *name,
                         const struct doc_cmp_quantile *q)
{
    char buf[64];
    size_t row = export_table_row(t, 0);
    export_table_set(t, row, L_STAGE, "%s", stage);
    export_table_set(t, row, L_Q, "%s", name);
    export_table_set(t, row, L_BASE, "%s", duration(q->baseline_ns, buf, sizeof buf));
    export_table_set(t, row, L_CAND, "%s", duration(q->candidate_ns, buf, sizeof buf));
    export_table_set(t, row, L_CHANGE, "%s", change(q->change_pct, buf, sizeof buf));
    set_interval(t, row, L_CI, q->ratio_ci_low, q->ratio_ci_high);
    set_verdict(t, row, L_VERDICT, q->verdict);
}

/* p50 and p99 of the stages that have a latency comparison (>= 20 spans on each side), and
 * the spans each side pooled. */
static void latency(FILE *out, const struct doc_cmp_candidate *c, double ci_level)
{
    struct export_table t;
    export_table_init(&t, L_COLS, "", "", "", "", "", "", "", NULL);
    t.numeric = 1u << L_BASE | 1u << L_CAND | 1u << L_CHANGE;
    for (size_t i = 0; i < c->n_stages; i++) {
        const struct doc_cmp_stage *s = &c->stages[i];
        if (!s->latency.present)
            continue;
        quantile_row(&t, or_q(s->name), "p50", &s->latency.p50);
        quantile_row(&t, "", "p99", &s->latency.p99);
        size_t row = export_table_row(&t, 0);
        export_table_set(&t, row, L_Q, "(%lld / %lld spans)", s->latency.n_baseline,
                         s->latency.n_candidate);
    }
    if (t.nrows) {
        fprintf(out, "\nspan latency (spans of all runs pooled; ratio %g %% CI of the "
                     "quantiles)\n", ci_level * 100);
        const struct export_text_layout layout = {.col = latency_columns, .trim = true};
        export_table_print(out, &t, &layout);
    }
    export_table_free(&t);
}

/* ---- the load table --------------------------------------------------------------------- */

enum { D_SCEN, D_Q, D_BASE, D_ARROW, D_CAND, D_CHANGE, D_CI, D_P, D_VERDICT, D_N, D_COLS };

/* A figure of a load metric: a duration for latencies (seconds), else a rate. */
static const char *load_value(const struct doc_cmp_load_metric *m, double v, char *buf,
                              size_t len)
{
    if (!isfinite(v))
        snprintf(buf, len, DASH);
    else if (m->unit && !strcmp(m->unit, "s"))
        units_duration(v * 1e9, buf, len);
    else
        snprintf(buf, len, "%.1f QPS", v);
    return buf;
}

/* "server 100 QPS", "offline", "server peak 120 → 95 QPS" */
static void scenario_name(const struct doc_cmp_load_match *m, char *buf, size_t len)
{
    const char *s = or_q(m->scenario);
    if (m->peak)
        snprintf(buf, len, "%s peak %.4g " ARROW " %.4g QPS", s, m->target_qps,
                 m->candidate_target_qps);
    else if (isfinite(m->target_qps))
        snprintf(buf, len, "%s %.4g QPS", s, m->target_qps);
    else
        snprintf(buf, len, "%s", s);
}

static bool by_results(const struct doc_cmp_load_match *m)
{
    return m->resampling && !strcmp(m->resampling, "results");
}

static void load_row(struct export_table *t, const struct doc_cmp_load_match *m,
                     const struct doc_cmp_load_metric *x, bool first)
{
    char buf[NAME_BYTES + 1];
    size_t row = export_table_row(t, 0);
    if (first) {
        scenario_name(m, buf, sizeof buf);
        export_table_set(t, row, D_SCEN, "%s", buf);
    }
    const char *name = or_q(x->name);
    export_table_set(t, row, D_Q, "%s%s", !strcmp(name, "throughput_qps") ? "QPS" : name,
                     x->metric ? "*" : "");
    export_table_set(t, row, D_BASE, "%s", load_value(x, x->baseline, buf, sizeof buf));
    export_table_set(t, row, D_ARROW, ARROW);
    export_table_set(t, row, D_CAND, "%s", load_value(x, x->candidate, buf, sizeof buf));
    export_table_set(t, row, D_CHANGE, "%s", change(x->change_pct, buf, sizeof buf));
    set_interval(t, row, D_CI, x->ratio_ci_low, x->ratio_ci_high);
    set_p(t, row, D_P, x->p_value);
    set_verdict(t, row, D_VERDICT, x->verdict);
    if (by_results(m))
        export_table_set(t, row, D_N, "%lld/%lld", m->n_baseline, m->n_candidate);
    else
        export_table_set(t, row, D_N, "%lld/%lld s", x->seconds_baseline, x->seconds_candidate);
}

/* The load section of a candidate (docs/compare.md#load-results): the table of the matched
 * scenario runs, the runs one side lacks, then why each unreliable verdict is unreliable (a
 * reason repeated by the next figure is said once). */
static void load(FILE *out, const struct doc_cmp_load *l, double ci_level)
{
    if (!l->present)
        return;
    const char *how = !l->n_matches               ? "no scenario in common"
                      : by_results(&l->matches[0]) ? "the results resampled"
                                                   : "a block bootstrap over the runs' seconds";
    fprintf(out, "\nload (the scenario runs that count; * the run's metric percentile; ratio "
                 "%g %% CI: %s)\n", ci_level * 100, how);
    if (l->n_matches) {
        struct export_table t;
        export_table_init(&t, D_COLS, "scenario", "", "baseline", "", "candidate", "change", "",
                          "p", "verdict", "n", NULL);
        t.numeric = 1u << D_BASE | 1u << D_CAND | 1u << D_CHANGE | 1u << D_N;
        for (size_t i = 0; i < l->n_matches; i++)
            for (size_t k = 0; k < l->matches[i].n_metrics; k++)
                load_row(&t, &l->matches[i], &l->matches[i].metrics[k], k == 0);
        side_table_print(out, &t, D_ARROW, D_CI, ci_level);
    }
    for (size_t i = 0; i < l->n_unmatched; i++) {
        const struct doc_cmp_load_unmatched *u = &l->unmatched[i];
        char qps[48] = "";
        if (isfinite(u->target_qps))
            snprintf(qps, sizeof qps, " at %.4g QPS", u->target_qps);
        fprintf(out, "  %s run%s: only in the %s\n", or_q(u->scenario), qps, or_q(u->side));
    }
    const char *last = NULL;
    for (size_t i = 0; i < l->n_matches; i++)
        for (size_t k = 0; k < l->matches[i].n_metrics; k++) {
            const char *why = l->matches[i].metrics[k].unreliable_reason;
            if (!why || (last && !strcmp(last, why)))
                continue;
            char name[NAME_BYTES + 1];
            scenario_name(&l->matches[i], name, sizeof name);
            fprintf(out, "%s: unreliable: %s\n", name, why);
            last = why;
        }
}

/* ---- cost and scaling ------------------------------------------------------------------- */

/* A sum of money in a currency from a file: the code cut to 3 characters, no newline. */
static void money(FILE *out, double v, const char *currency)
{
    char cur[4] = "?";
    if (currency && strlen(currency) == 3 && !strpbrk(currency, "\n\r\t"))
        memcpy(cur, currency, 4);
    if (isfinite(v))
        fprintf(out, "%.4g %s", v, cur);
    else
        fprintf(out, "? %s", cur);
}

static void ratio(FILE *out, const char *what, double r)
{
    if (isfinite(r))
        fprintf(out, "%s ×%.3g", what, r);
    else
        fprintf(out, "%s -", what);
}

/* "0.003 USD at 3.6 USD/h": what a run of a side cost, at its price. */
static void run_cost(FILE *out, const struct doc_cmp_cost_side *s)
{
    money(out, s->run_median, s->currency);
    fputs(" at ", out);
    money(out, s->price_per_hour, s->currency);
    fputs("/h", out);
}

/* Cost when both sides are priced: each at its own price, the time ratio beside the cost
 * ratio (docs/compare.md#cost). */
static void cost(FILE *out, const struct doc_cmp_cost *cost)
{
    if (!cost->present)
        return;
    const struct doc_cmp_cost_side *b = &cost->baseline, *c = &cost->candidate;
    fputs("\ncost (each side at its own price per hour; candidate / baseline)\n", out);
    fputs("  a run    baseline ", out);
    run_cost(out, b);
    fputs("   candidate ", out);
    run_cost(out, c);
    fputs("\n  ratio    ", out);
    ratio(out, "time", cost->time_ratio);
    fputs("   ", out);
    ratio(out, "cost", cost->cost_ratio);
    if (!cost->same_currency)
        fputs(" (different currencies: no cost ratio)", out);
    fputc('\n', out);
    for (size_t i = 0; i < cost->n_per_unit && i < 16; i++) {
        const struct doc_cmp_cost_unit *u = &cost->per_unit[i];
        fprintf(out, "  per %.0f %s   baseline ",
                isfinite(u->per) && u->per > 0 && u->per <= 1e15 ? u->per : 1, or_q(u->counter));
        money(out, u->baseline, b->currency);
        fputs("   candidate ", out);
        money(out, u->candidate, c->currency);
        fputs("   ", out);
        ratio(out, "cost", u->ratio);
        fputc('\n', out);
    }
}

/* Scaling across ranks, when the sides ran on different numbers (docs/compare.md#scaling). */
static void scaling(FILE *out, const struct doc_cmp_scaling *sc)
{
    if (!sc->present)
        return;
    const struct doc_cmp_scaling_side *b = &sc->baseline, *c = &sc->candidate;
    bool runs = sc->basis && !strcmp(sc->basis, "runs_per_s");
    fprintf(out, "\nscaling (from %s)\n  ranks %.0f -> %.0f   ",
            runs ? "the wall time" : or_q(sc->basis), b->ranks, c->ranks);
    ratio(out, "speedup", sc->speedup);
    if (isfinite(sc->efficiency))
        fprintf(out, "   efficiency %.0f %%", 100 * sc->efficiency);
    if (!runs)
        fprintf(out, "   per rank %.4g -> %.4g/s", b->per_rank, c->per_rank);
    fputc('\n', out);
    if (isfinite(b->allreduce_share) || isfinite(c->allreduce_share)) {
        char sb[16] = "-", sc2[16] = "-";
        if (isfinite(b->allreduce_share))
            snprintf(sb, sizeof sb, "%.1f %%", 100 * b->allreduce_share);
        if (isfinite(c->allreduce_share))
            snprintf(sc2, sizeof sc2, "%.1f %%", 100 * c->allreduce_share);
        fprintf(out, "  allreduce %s -> %s of the step\n", sb, sc2);
    }
}

/* ---- side by side ----------------------------------------------------------------------- */

/* Rows "  name   a → b": the name column as wide as the widest name, the values as they are. */
static const struct export_text_column pair_columns[] = {{.sep = "  "}, {.sep = "  "},
                                                         {.sep = "  "}};

/* Writes t under its title, unless it is empty; frees it. */
static void pairs(FILE *out, const char *title, struct export_table *t)
{
    if (t->nrows) {
        fprintf(out, "\n%s\n", title);
        const struct export_text_layout layout = {.col = pair_columns, .trim = true};
        export_table_print(out, t, &layout);
    }
    export_table_free(t);
}

/* A row "name   a → b   (note)" of a table of pairs, the values cut at VALUE_BYTES. */
static void pair_line(struct export_table *t, const char *name, const char *b, const char *c,
                      const char *note)
{
    size_t row = export_table_row(t, 0);
    export_table_set(t, row, 0, "%s", or_q(name));
    export_table_set(t, row, 1, "%.*s " ARROW " %.*s%s", VALUE_BYTES, b, VALUE_BYTES, c, note);
}

#define DIFFERS "   (differs)"

static const char *number(double v, char *buf, size_t len)
{
    if (isfinite(v))
        snprintf(buf, len, "%.6g", v);
    else
        snprintf(buf, len, DASH);
    return buf;
}

/* A value of the environment as text (a dash for absent or null). */
static const char *scalar(const json_t *v, char *buf, size_t len)
{
    if (json_is_string(v))
        snprintf(buf, len, "%s", json_string_value(v));
    else if (json_is_integer(v))
        snprintf(buf, len, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, len, "%.6g", json_real_value(v));
    else if (json_is_boolean(v))
        snprintf(buf, len, "%s", json_is_true(v) ? "true" : "false");
    else
        snprintf(buf, len, DASH);
    return buf;
}

/* Counters, metadata and the environment differences side by side (resources below). */
/* all: every counter, else those that differ (the default view, issue 35) */
static void counters(FILE *out, const struct doc_cmp_candidate *c, bool all)
{
    struct export_table t;
    char b[64], v[64];
    export_table_init(&t, 2, "", "", NULL);
    for (size_t i = 0; i < c->n_counters; i++) {
        const struct doc_cmp_counter *x = &c->counters[i];
        bool same = x->baseline == x->candidate || (isnan(x->baseline) && isnan(x->candidate));
        if (same && !all)
            continue;
        pair_line(&t, x->name, number(x->baseline, b, sizeof b),
                  number(x->candidate, v, sizeof v), same ? "" : DIFFERS);
    }
    pairs(out, "counters (median per run of the sum for counts, else of the last value)", &t);
}

static void metadata(FILE *out, const struct doc_cmp_candidate *c, bool all)
{
    struct export_table t;
    export_table_init(&t, 2, "", "", NULL);
    for (size_t i = 0; i < c->n_metadata; i++) {
        const struct doc_cmp_meta *x = &c->metadata[i];
        bool same = x->baseline && x->candidate ? !strcmp(x->baseline, x->candidate)
                                                : x->baseline == x->candidate;
        if (same && !all)
            continue;
        pair_line(&t, x->key, x->baseline ? x->baseline : DASH,
                  x->candidate ? x->candidate : DASH, same ? "" : DIFFERS);
    }
    pairs(out, "metadata", &t);
}

static void environment(FILE *out, const struct doc_cmp_candidate *c)
{
    struct export_table t;
    char b[VALUE_BYTES + 1], v[VALUE_BYTES + 1];
    export_table_init(&t, 2, "", "", NULL);
    for (size_t i = 0; i < c->n_environment_differences; i++) {
        const struct doc_cmp_env *x = &c->environment_differences[i];
        pair_line(&t, x->key, scalar(x->baseline, b, sizeof b), scalar(x->candidate, v, sizeof v),
                  x->matters ? "   (matters)" : "");
    }
    pairs(out, "environment differences", &t);
}

static const char *resource_value(const char *metric, double v, char *buf, size_t len)
{
    if (!isfinite(v))
        snprintf(buf, len, DASH);
    else if (!strncmp(metric, "process_cpu_seconds_total", 25))
        snprintf(buf, len, "%.2f cores", v);
    else if (strstr(metric, "_ratio"))
        snprintf(buf, len, "%.0f %%", v * 100);
    else if (strstr(metric, "_bytes"))
        units_bytes(v, buf, len);
    else
        snprintf(buf, len, "%.4g", v);
    return buf;
}

static const char *resource_title(const char *metric)
{
    if (!strncmp(metric, "process_cpu_seconds_total", 25))
        return "cores busy (mean)";
    if (!strncmp(metric, "process_resident_bytes", 22))
        return "memory (peak)";
    if (!strncmp(metric, "gpu_utilization_ratio", 21))
        return "GPU busy (mean)";
    if (!strncmp(metric, "gpu_memory_used_bytes", 21))
        return "GPU memory (peak)";
    return metric;
}

/* Rows "  stage  what  a → b   {labels}", the stage named on its first row only. */
static void resources(FILE *out, const struct doc_cmp_candidate *c)
{
    struct export_table t;
    export_table_init(&t, 3, "", "", "", NULL);
    const char *last_stage = "";
    for (size_t i = 0; i < c->n_resources; i++) {
        const struct doc_cmp_resource *x = &c->resources[i];
        if (!x->stage || !x->metric)
            continue;
        char b[64], v[64];
        const char *labels = strchr(x->metric, '{');
        size_t row = export_table_row(&t, 0);
        export_table_set(&t, row, 0, "%s", strcmp(x->stage, last_stage) ? x->stage : "");
        export_table_set(&t, row, 1, "%s", resource_title(x->metric));
        export_table_set(&t, row, 2, "%s " ARROW " %s%s%s",
                         resource_value(x->metric, x->baseline, b, sizeof b),
                         resource_value(x->metric, x->candidate, v, sizeof v),
                         labels ? "   " : "", labels ? labels : "");
        last_stage = x->stage;
    }
    pairs(out, "resources", &t);
}

/* ---- the view --------------------------------------------------------------------------- */

static const char *display_name(const struct doc_cmp_who *who)
{
    return who->label ? who->label : or_q(who->id);
}

static void who(FILE *out, const char *role, const struct doc_cmp_who *w)
{
    fprintf(out, "%s %s", role, display_name(w));
    if (w->label && w->id)
        fprintf(out, " (%s)", w->id);
    if (w->path)
        fprintf(out, "  %s", w->path);
    fputc('\n', out);
}

/* "warning: not like for like: cpu.model, kernel differ: ..." */
static void not_like_for_like(FILE *out, const struct doc_cmp_candidate *c)
{
    if (c->like_for_like)
        return;
    fprintf(out, "warning: not like for like: ");
    size_t shown = 0;
    for (size_t i = 0; i < c->n_environment_differences; i++)
        if (c->environment_differences[i].matters)
            fprintf(out, "%s%s", shown++ ? ", " : "", or_q(c->environment_differences[i].key));
    fprintf(out, " differ%s: differences may come from the machine, not the change\n",
            shown == 1 ? "s" : "");
}

/* verbose: every counter and metadata key, the resources and the environment's differences
 * too; else only the counters and keys that differ (the machine's differences that matter are
 * in the not-like-for-like line). */
static void candidate(FILE *out, const struct doc_comparison *cmp,
                      const struct doc_cmp_candidate *c, double ci_level, bool verbose)
{
    who(out, "baseline: ", &cmp->baseline);
    who(out, "candidate:", &c->who);
    not_like_for_like(out, c);
    quality(out, "baseline ", c->quality_baseline, c->n_quality_baseline);
    quality(out, "candidate", c->quality_candidate, c->n_quality_candidate);
    stage_note(out, c);
    fputc('\n', out);
    stage_table(out, c, ci_level);
    undecided(out, cmp, c, ci_level);
    unreliable(out, c);
    latency(out, c, ci_level);
    load(out, &c->load, ci_level);
    cost(out, &c->cost);
    scaling(out, &c->scaling);
    counters(out, c, verbose);
    metadata(out, c, verbose);
    if (verbose) {
        resources(out, c);
        environment(out, c);
    }
}

/* With several candidates: the total of each against the baseline. */
static const struct export_text_column total_columns[] = {
    {.sep = "  "}, {.width = 10}, {.width = 9}, {.sep = "  "},
};

static void totals(FILE *out, const struct doc_comparison *cmp)
{
    struct export_table t;
    export_table_init(&t, 4, "", "", "", "", NULL);
    t.numeric = 1u << 1 | 1u << 2;
    for (size_t i = 0; i < cmp->n_candidates; i++) {
        const struct doc_cmp_candidate *c = &cmp->candidates[i];
        const struct doc_cmp_stage *total = doc_cmp_total(c);
        char buf[64];
        size_t row = export_table_row(&t, 0);
        export_table_set(&t, row, 0, "%s", display_name(&c->who));
        export_table_set(&t, row, 1, "%s",
                         duration(total ? total->candidate_median_ns : NAN, buf, sizeof buf));
        export_table_set(&t, row, 2, "%s", change(total ? total->change_pct : NAN, buf,
                                                  sizeof buf));
        set_verdict(&t, row, 3, total ? total->verdict : NULL);
    }
    fprintf(out, "\n\ntotal against %s:\n", display_name(&cmp->baseline));
    const struct export_text_layout layout = {.col = total_columns, .trim = true};
    export_table_print(out, &t, &layout);
    export_table_free(&t);
}

static void compare_text_as(FILE *out, const json_t *doc, bool verbose)
{
    struct doc_comparison *cmp = doc_comparison_read(doc);
    double level = isfinite(cmp->ci_level) ? cmp->ci_level : 0.95;
    for (size_t i = 0; i < cmp->n_candidates; i++) {
        if (i)
            fputs("\n\n", out);
        candidate(out, cmp, &cmp->candidates[i], level, verbose);
    }
    if (cmp->n_candidates > 1)
        totals(out, cmp);
    fprintf(out, "\nverdict: faster or slower when p < %g (or, with too few runs for that, "
                 "the interval alone), |change| >= %g %% and the interval excludes 1; no change "
                 "when the interval lies within \u00b1%g %%, else inconclusive; unreliable when "
                 "a disturbance of the slower side could explain it (docs/compare.md)\n",
            cmp->alpha, cmp->min_effect_pct, cmp->min_effect_pct);
    doc_comparison_free(cmp);
}

static void compare_text(FILE *out, const json_t *doc, const char *path)
{
    (void)path;
    compare_text_as(out, doc, false);
}

static void compare_text_verbose(FILE *out, const json_t *doc, const char *path)
{
    (void)path;
    compare_text_as(out, doc, true);
}

int export_compare_print(FILE *out, const json_t *comparison, bool verbose)
{
    return export_text_compose(out, verbose ? compare_text_verbose : compare_text, comparison,
                               NULL);
}
