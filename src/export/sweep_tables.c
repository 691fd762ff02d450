/* sweep_tables.c: what every view of a sweep document says (see sweep.h), from its view
 * (doc/sweep.h): the columns of the table laid out, the sweep table, the sentences about the
 * sweep, its winner and objective, the notes under the table and the find-max answer. The
 * terminal (sweep_text.c), the Markdown and HTML reports (outline.c) render these, so they
 * agree. */
#include "export/sweep.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

#define NO_COL SIZE_MAX
#define ABOUT_VALUES 6 /* values of a parameter named in the sentence about the sweep */

/* s on one line: a line break or tab from the document becomes a space (returned). */
static char *one_line(char *s)
{
    for (char *p = s; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
            *p = ' ';
    return s;
}

void export_lines_add(struct strvec *l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    strvec_push_owned(l, one_line(xvasprintf(fmt, ap)));
    va_end(ap);
}

char *export_sweep_status(const struct doc_sweep_point *point)
{
    char *st = xstrdup(str_or(point->status, "unknown"));
    for (char *p = st; *p; p++)
        if (*p == '_')
            *p = ' ';
    const char *detail = point->status_detail;
    if (!detail || !*detail)
        return st;
    char *s = xasprintf("%s: %s", st, detail);
    free(st);
    return s;
}

/* The column the objective's figure is shown in, NO_COL when none is. */
static size_t objective_column(const struct export_sweep_columns *c,
                               const struct doc_sweep_columns *have, const char *figure)
{
    if (!figure)
        return NO_COL;
    if (!strcmp(figure, "total"))
        return 3;
    if (!strcmp(figure, "cost"))
        return c->col_cost;
    if (!strcmp(figure, "memory") || !strcmp(figure, "peak_memory"))
        return c->col_peak;
    if (!strcmp(figure, "gpu_memory"))
        return c->col_gpu_memory;
    for (size_t k = 0; k < have->nparams; k++)
        if (!strcmp(figure, have->param[k]))
            return 1; /* a parameter (find-max): the point's name holds it */
    if (!strncmp(figure, "counter:", 8)) {
        const char *name = figure + 8;
        for (size_t k = 0; k < have->ncounters; k++) {
            size_t n = strlen(have->counter[k]);
            if (!strcmp(name, have->counter[k]) ||
                (have->counter_count[k] && !strncmp(name, have->counter[k], n) &&
                 !strcmp(name + n, "_per_s")))
                return c->col_counters + k;
        }
    }
    return NO_COL;
}

void export_sweep_columns(const struct doc_sweep *s, struct export_sweep_columns *c)
{
    const struct doc_sweep_columns *have = &s->columns;
    memset(c, 0, sizeof *c);
    size_t col = 7;
    c->col_counters = col;
    col += have->ncounters;
    c->col_peak = 5;
    c->col_gpu_memory = have->gpu_memory ? col++ : NO_COL;
    c->col_gpu_util = have->gpu_util ? col++ : NO_COL;
    c->col_cost = have->priced ? col++ : NO_COL;
    const char *figure = s->objective.figure;
    c->col_objective_mark = objective_column(c, have, figure);
    c->col_objective = NO_COL;
    if (c->col_objective_mark == NO_COL && figure) {
        c->col_objective = col++;
        c->col_objective_mark = c->col_objective;
    }
    c->ncols = col;
}

/* The objective's value as its figure reads: a duration for a stage or the total. */
static void objective_cell(char *buf, size_t len, const struct doc_sweep *s,
                           const struct doc_sweep_point *point)
{
    const char *figure = str_or(s->objective.figure, "");
    double v = point->objective_value;
    if (!strncmp(figure, "stage:", 6) || !strcmp(figure, "total"))
        export_fmt_duration(doc_sweep_plausible(v), buf, len);
    else if (!strncmp(figure, "memory", 6) || !strncmp(figure, "gpu_memory", 10))
        export_fmt_bytes(doc_sweep_plausible(v), buf, len);
    else
        export_fmt_num(v, "%.4g", 1, buf, len);
}

size_t export_sweep_table(struct export_table *t, const struct doc_sweep *s,
                          const struct export_sweep_columns *c)
{
    const struct doc_sweep_columns *have = &s->columns;
    const char **head = xcalloc(c->ncols, sizeof *head);
    char **owned = xcalloc(c->ncols, sizeof *owned);
    static const char *const fixed[] = {"", "point", "status", "total median",
                                        "95% CI of median", "peak memory", "bottleneck"};
    for (size_t i = 0; i < 7; i++)
        head[i] = fixed[i];
    for (size_t k = 0; k < have->ncounters; k++)
        head[c->col_counters + k] = owned[c->col_counters + k] =
            xasprintf("%s%s", have->counter[k], have->counter_count[k] ? "/s" : "");
    if (c->col_gpu_memory != NO_COL)
        head[c->col_gpu_memory] = "GPU memory";
    if (c->col_gpu_util != NO_COL)
        head[c->col_gpu_util] = "GPU util";
    if (c->col_cost != NO_COL)
        head[c->col_cost] = owned[c->col_cost] = xasprintf("cost per run");
    if (c->col_objective != NO_COL)
        head[c->col_objective] = "objective";
    if (c->col_objective_mark != NO_COL) {
        char *h = xasprintf("%s *", head[c->col_objective_mark]);
        free(owned[c->col_objective_mark]);
        head[c->col_objective_mark] = owned[c->col_objective_mark] = h;
    }
    export_table_init_list(t, c->ncols, head);
    for (size_t i = 0; i < c->ncols; i++)
        free(owned[i]);
    free(owned);
    free(head);
    t->numeric = (1u << 3) | (1u << 5);
    for (size_t col = 7; col < c->ncols && col < 32; col++)
        t->numeric |= 1u << col;

    char a[64], b[64];
    for (size_t i = 0; i < s->n_points; i++) {
        const struct doc_sweep_point *p = &s->points[i];
        const struct doc_sweep_figures *f = &p->figures;
        size_t row = export_table_row(t, 0);
        bool winner = doc_sweep_is_winner(s, p);
        bool unmet = p->constraints_met == 0;
        export_table_set(t, row, 0, "%s", winner ? "\u2605" : unmet ? "\u2717" : "");
        char *name = doc_sweep_point_name(p);
        export_table_set(t, row, 1, "%s", name);
        free(name);
        char *status = export_sweep_status(p);
        export_table_set(t, row, 2, "%s", status);
        free(status);
        if (p->status && strcmp(p->status, "ok"))
            export_table_tone(t, row, 2, EXPORT_TONE_SLOWER);
        if (winner)
            export_table_tone(t, row, 1, EXPORT_TONE_FASTER);
        export_table_set(t, row, 3, "%s",
                         export_fmt_duration(doc_sweep_plausible(f->total_median_ns), a, sizeof a));
        double lo = doc_sweep_plausible(f->total_ci_low_ns);
        double hi = doc_sweep_plausible(f->total_ci_high_ns);
        if (isfinite(lo) && isfinite(hi))
            export_table_set(t, row, 4, "%s .. %s", export_fmt_duration(lo, a, sizeof a),
                             export_fmt_duration(hi, b, sizeof b));
        else
            export_table_set(t, row, 4, "-");
        export_table_set(t, row, 5, "%s",
                         export_fmt_bytes(doc_sweep_plausible(f->peak_memory_bytes), a, sizeof a));
        const struct doc_sweep_bottleneck *bn = &f->bottleneck;
        if (bn->stage)
            export_table_set(t, row, 6, "%s: %s, %s", bn->stage, str_or(bn->verdict, "?"),
                             export_fmt_duration(doc_sweep_plausible(bn->median_ns), a, sizeof a));
        else
            export_table_set(t, row, 6, "-");
        for (size_t k = 0; k < have->ncounters; k++) {
            const struct doc_sweep_counter *kc = doc_sweep_counter(f, have->counter[k]);
            double v = !kc ? NAN : have->counter_count[k] ? kc->rate_per_s : kc->last_median;
            export_table_set(t, row, c->col_counters + k, "%s",
                             export_fmt_num(v, "%.4g", 1, a, sizeof a));
        }
        if (c->col_gpu_memory != NO_COL)
            export_table_set(t, row, c->col_gpu_memory, "%s",
                             export_fmt_bytes(doc_sweep_plausible(f->gpu_memory_peak_bytes), a,
                                              sizeof a));
        if (c->col_gpu_util != NO_COL)
            export_table_set(t, row, c->col_gpu_util, "%s",
                             export_fmt_num(f->gpu_utilization_mean, "%.0f %%", 100, a,
                                            sizeof a));
        if (c->col_cost != NO_COL) {
            double cost = f->cost_per_run;
            if (isfinite(cost))
                export_table_set(t, row, c->col_cost, "%.4g %s", cost, have->currency);
            else
                export_table_set(t, row, c->col_cost, "-");
        }
        if (c->col_objective != NO_COL) {
            objective_cell(a, sizeof a, s, p);
            export_table_set(t, row, c->col_objective, "%s", a);
        }
    }
    return t->nrows;
}

/* ---- sentences ------------------------------------------------------------------------ */

/* "batch (32, 64, ...)" of parameters[i]. */
static void about_parameter(struct strbuf *b, const struct doc_sweep_param *param)
{
    strbuf_puts(b, str_or(param->name, "?"));
    strbuf_puts(b, " (");
    size_t n = param->n_values;
    for (size_t i = 0; i < n && i < ABOUT_VALUES; i++) {
        char v[64];
        if (i)
            strbuf_puts(b, ", ");
        strbuf_puts(b, export_fmt_value(json_array_get(param->values, i), v, sizeof v));
    }
    if (n > ABOUT_VALUES)
        strbuf_printf(b, ", ... %zu values", n);
    strbuf_putc(b, ')');
}

char *export_sweep_about(const struct doc_sweep *s)
{
    struct strbuf b = STRBUF_INIT;
    const char *mode = str_or(s->mode, "matrix");
    size_t n = s->n_points;
    const struct doc_sweep_find_max *fm = &s->find_max;
    if (!strcmp(mode, "find-max") && fm->present) {
        char lo[64], hi[64];
        strbuf_printf(&b, "Find-max sweep of %s from %s to %s%s: %zu probe%s",
                      str_or(fm->parameter, "?"),
                      export_fmt_num(fm->low, "%.6g", 1, lo, sizeof lo),
                      export_fmt_num(fm->high, "%.6g", 1, hi, sizeof hi),
                      fm->pow2 ? " (powers of two)" : "", n, n == 1 ? "" : "s");
    } else if (!strcmp(mode, "commands")) {
        strbuf_printf(&b, "Sweep of %zu command%s", n, n == 1 ? "" : "s");
    } else {
        strbuf_printf(&b, "%s sweep of %zu point%s", !strcmp(mode, "matrix") ? "Matrix" : mode,
                      n, n == 1 ? "" : "s");
        for (size_t i = 0; i < s->n_params && i < DOC_SWEEP_MAX_PARAMS; i++) {
            strbuf_puts(&b, i == 0 ? " over " : " \u00d7 ");
            about_parameter(&b, &s->params[i]);
        }
    }
    if (s->interleave == 1) {
        strbuf_puts(&b, ", interleaved");
        if (s->n_rounds)
            strbuf_printf(&b, " over %zu round%s", s->n_rounds, s->n_rounds == 1 ? "" : "s");
        if (s->has_seed)
            strbuf_printf(&b, " (seed %lld)", s->seed);
    } else if (s->interleave == 0) {
        strbuf_puts(&b, ", one point after another");
    }
    const char *status = str_or(s->status, "unknown");
    if (!strcmp(status, "failed"))
        strbuf_puts(&b, "; failed: no point gave a result.");
    else if (!strcmp(status, "interrupted"))
        strbuf_puts(&b, "; interrupted: the points not run are listed as such.");
    else
        strbuf_printf(&b, "; %s.", status);
    return one_line(strbuf_take(&b));
}

char *export_sweep_winner(const struct doc_sweep *s)
{
    const struct doc_sweep_winner *w = &s->winner;
    if (w->present) {
        const char *reason = w->reason;
        return one_line(xasprintf("winner: %s%s%s", str_or(w->name, "?"), reason ? ": " : "",
                                  reason ? reason : ""));
    }
    size_t ok = 0, met = 0;
    for (size_t i = 0; i < s->n_points; i++) {
        const struct doc_sweep_point *p = &s->points[i];
        if (p->status && !strcmp(p->status, "ok")) {
            ok++;
            met += p->constraints_met != 0;
        }
    }
    if (w->undecided)
        return one_line(xasprintf("no winner: %s", w->undecided));
    if (!ok)
        return xstrdup("no winner: no point ran ok");
    if (!met)
        return xstrdup("no winner: no point that ran meets the constraints");
    return xstrdup("no winner: no point has a value of the objective");
}

char *export_sweep_objective(const struct doc_sweep *s)
{
    struct strbuf b = STRBUF_INIT;
    const char *spec = s->objective.spec, *desc = s->objective.description;
    if (spec || desc)
        strbuf_printf(&b, "* the objective: %s%s%s", str_or(spec, "?"), desc ? ", " : "",
                      desc ? desc : "");
    else
        strbuf_puts(&b, "* no objective recorded");
    for (size_t i = 0; i < s->n_constraints; i++)
        strbuf_printf(&b, "%s%s", i ? ", " : "; constraints: ", str_or(s->constraints[i], "?"));
    if (s->n_constraints)
        strbuf_puts(&b, " (\u2717: not met)");
    if (s->price.present && isfinite(s->price.per_hour))
        strbuf_printf(&b, "; price %.6g %s per hour (the user's figure)", s->price.per_hour,
                      str_or(s->price.currency, "USD"));
    strbuf_puts(&b, ". Counters: rates per second (name/s) over the stage they were sent in, "
                "other counters their last value.");
    return one_line(strbuf_take(&b));
}

/* A count of runs as a whole number (rounded), -1 when unknown. */
static long long runs(double v)
{
    return v >= -9.2e18 && v <= 9.2e18 ? llround(v) : -1; /* false for NaN too */
}

#define SWEEP_NAMES_SHOWN 4 /* points a warning line names, then "and N more" */

void export_sweep_notes(const struct doc_sweep *s, struct strvec *not_ok,
                        struct strvec *constraints, struct strvec *warnings)
{
    for (size_t i = 0; i < s->n_points; i++) {
        const struct doc_sweep_point *p = &s->points[i];
        char *name = doc_sweep_point_name(p);
        if (!p->status || strcmp(p->status, "ok")) {
            char *status = export_sweep_status(p);
            export_lines_add(not_ok, "%s: %s", name, status);
            free(status);
        } else {
            long long measured = runs(p->runs_measured), okr = runs(p->runs_ok);
            if (measured > 0 && okr >= 0 && okr < measured)
                export_lines_add(not_ok, "%s: %lld of %lld runs ok", name, okr, measured);
        }
        if (p->constraints_met == 0) {
            const json_t *why = p->constraint_failures;
            struct strbuf b = STRBUF_INIT;
            for (size_t k = 0; k < json_array_size(why) && b.len < 65536; k++)
                strbuf_printf(&b, "%s%s", k ? "; " : "",
                              str_or(json_string_value(json_array_get(why, k)), "?"));
            export_lines_add(constraints, "%s: %s", name,
                             b.len ? b.s : "does not meet the constraints");
            strbuf_free(&b);
        }
        free(name);
    }
    /* Each warning code once (issue 35: one line per point repeated the same codes), with the
     * points it touches and what it says, from its first occurrence (at most 32 codes). */
    const char *done[32];
    size_t n_done = 0;
    for (size_t i = 0; i < s->n_points && n_done < 32; i++) {
        const struct doc_sweep_point *p = &s->points[i];
        for (size_t k = 0; k < p->n_warnings && n_done < 32; k++) {
            const struct doc_sweep_warning *x = &p->warnings[k];
            const char *code = str_or(x->code, "?");
            bool again = false;
            for (size_t j = 0; j < n_done && !again; j++)
                again = !strcmp(done[j], code);
            if (again)
                continue;
            done[n_done++] = code;
            struct strbuf who = STRBUF_INIT;
            size_t touched = 0;
            for (size_t q = i; q < s->n_points; q++) {
                const struct doc_sweep_point *o = &s->points[q];
                bool has = false;
                for (size_t j = 0; j < o->n_warnings && !has; j++)
                    has = !strcmp(str_or(o->warnings[j].code, "?"), code);
                if (!has)
                    continue;
                if (touched++ < SWEEP_NAMES_SHOWN) {
                    char *name = doc_sweep_point_name(o);
                    strbuf_printf(&who, "%s%s", who.len ? ", " : "", name);
                    free(name);
                }
            }
            if (touched > SWEEP_NAMES_SHOWN)
                strbuf_printf(&who, " and %zu more", touched - SWEEP_NAMES_SHOWN);
            export_lines_add(warnings, "%s (%s): %s", code, who.s ? who.s : "?",
                             str_or(x->message, ""));
            strbuf_free(&who);
        }
    }
}

/* ---- find-max ------------------------------------------------------------------------- */

size_t export_sweep_probes(struct export_table *t, const struct doc_sweep *s)
{
    const struct doc_sweep_find_max *fm = &s->find_max;
    const char *param = str_or(fm->parameter, "value");
    export_table_init(t, 5, param, "fits", "peak memory", "throughput", "point");
    t->numeric = 0x5;
    char a[64];
    for (size_t i = 0; i < fm->n_probes; i++) {
        const struct doc_sweep_probe *pr = &fm->probes[i];
        size_t row = export_table_row(t, 0);
        export_table_set(t, row, 0, "%s", export_fmt_num(pr->value, "%.6g", 1, a, sizeof a));
        const char *reason = pr->reason;
        if (pr->fits == 1) {
            export_table_set(t, row, 1, "yes");
        } else {
            export_table_set(t, row, 1, "%s%s%s", pr->fits == 0 ? "no" : "?",
                             reason ? ": " : "", reason ? reason : "");
            export_table_tone(t, row, 1, EXPORT_TONE_SLOWER);
        }
        export_table_set(t, row, 2, "%s",
                         export_fmt_bytes(doc_sweep_plausible(pr->peak_memory_bytes), a, sizeof a));
        double rate = pr->throughput_rate_per_s;
        if (isfinite(rate))
            export_table_set(t, row, 3, "%.4g/s %s", rate, str_or(pr->throughput_name, ""));
        else
            export_table_set(t, row, 3, "-");
        if (pr->point >= 0 && (size_t)pr->point < s->n_points) {
            char *name = doc_sweep_point_name(&s->points[pr->point]);
            export_table_set(t, row, 4, "%s", name);
            free(name);
        } else {
            export_table_set(t, row, 4, "-");
        }
    }
    return t->nrows;
}

void export_sweep_find_max(const struct doc_sweep *s, struct strvec *l)
{
    const struct doc_sweep_find_max *fm = &s->find_max;
    if (!fm->present)
        return;
    const char *param = str_or(fm->parameter, "the parameter");
    double lf = fm->largest_fit, ff = fm->first_failure;
    double high = fm->high, budget = doc_sweep_plausible(fm->memory_budget_bytes);
    char a[64], b[64];
    if (isfinite(lf) && isfinite(ff))
        export_lines_add(l, "The largest %s that fits: %.6g (the first failure: %.6g).", param,
                         lf, ff);
    else if (isfinite(lf) && isfinite(high) && lf >= high)
        export_lines_add(l, "The largest %s that fits: %.6g, the top of the range: every probe "
                         "fits.", param, lf);
    else if (isfinite(lf))
        export_lines_add(l, "The largest %s that fits: %.6g.", param, lf);
    else if (isfinite(ff))
        export_lines_add(l, "No %s fits: the first failure is at %.6g.", param, ff);
    else
        export_lines_add(l, "No answer: no probe finished (the sweep may have been "
                         "interrupted).");
    if (isfinite(budget))
        export_lines_add(l, "Memory budget: %s; a point fits when it does not run out of memory "
                         "and its peak memory stays within the budget.",
                         export_fmt_bytes(budget, a, sizeof a));
    else
        export_lines_add(l, "No memory budget: a point fails only by running out of memory.");
    const struct doc_sweep_memory_fit *fit = &fm->memory_fit;
    double slope = doc_sweep_plausible(fit->slope_bytes);
    double icpt = doc_sweep_plausible(fit->intercept_bytes);
    if (isfinite(slope) && isfinite(icpt)) {
        double r2 = fit->r2, pred = fit->predicted_max;
        char r2s[32] = "";
        if (isfinite(r2))
            snprintf(r2s, sizeof r2s, ", r\u00b2 = %.3f", r2);
        char predicted[160] = "";
        if (isfinite(pred))
            snprintf(predicted, sizeof predicted, "; the line meets the budget at %s \u2248 %.6g",
                     param, pred);
        export_lines_add(l, "Peak memory \u2248 %s %s %s per %s (a line fitted over the probes%s)"
                         "%s.", export_fmt_bytes(icpt, a, sizeof a), slope < 0 ? "-" : "+",
                         export_fmt_bytes(fabs(slope), b, sizeof b), param, r2s, predicted);
    }
    /* whether the largest batch is also the fastest */
    double best = -INFINITY, best_value = NAN, at_lf = NAN;
    const char *best_name = NULL;
    for (size_t i = 0; i < fm->n_probes; i++) {
        const struct doc_sweep_probe *pr = &fm->probes[i];
        double rate = pr->throughput_rate_per_s, v = pr->value;
        if (pr->fits != 1 || !isfinite(rate))
            continue;
        if (rate > best) {
            best = rate;
            best_value = v;
            best_name = pr->throughput_name;
        }
        if (v == lf)
            at_lf = rate;
    }
    if (isfinite(best) && isfinite(at_lf) && best_value != lf)
        export_lines_add(l, "The highest throughput is at %s = %.6g (%.4g/s %s), not at the "
                         "largest fit (%.4g/s).", param, best_value, best, str_or(best_name, ""),
                         at_lf);
    else if (isfinite(best) && best_value == lf)
        export_lines_add(l, "The largest fit is also the fastest probe (%.4g/s %s).", best,
                         str_or(best_name, ""));
}
