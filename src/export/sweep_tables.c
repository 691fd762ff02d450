/* sweep_tables.c: what every view of a sweep document says (see sweep.h): the columns found
 * over its points, the sweep table, the sentences about the sweep, its winner and objective,
 * the notes under the table and the find-max answer. The terminal (sweep_text.c), the
 * Markdown and HTML reports (outline.c) render these, so they agree. */
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

/* A duration or size from a file as a measurement: NAN (shown "-") unless finite and below
 * 1e18 (31 years in ns, an exabyte), so a hostile 1e308 does not print 300 digits. */
static double plausible(double v)
{
    return isfinite(v) && fabs(v) < 1e18 ? v : NAN;
}

static double num(const json_t *o, const char *key)
{
    return plausible(jsonx_num(o, key));
}

static const json_t *figures(const json_t *point)
{
    return json_object_get(point, "figures");
}

bool export_sweep_parse_number(const char *s, double *v)
{
    if (!s || !*s)
        return false;
    char *end;
    double x = strtod(s, &end);
    if (*end || !isfinite(x))
        return false;
    *v = x;
    return true;
}

void export_lines_add(struct export_lines *l, const char *fmt, ...)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 8;
        l->v = xreallocarray(l->v, l->cap, sizeof *l->v);
    }
    va_list ap;
    va_start(ap, fmt);
    l->v[l->n] = one_line(xvasprintf(fmt, ap));
    l->n++;
    va_end(ap);
}

char *export_sweep_point_name(const json_t *point, size_t position)
{
    const char *name = jsonx_str(point, "name");
    if (name && *name)
        return xstrdup(name);
    const json_t *cmd = json_object_get(point, "command");
    if (json_array_size(cmd)) {
        struct strbuf b = {0};
        for (size_t i = 0; i < json_array_size(cmd) && b.len < 4096; i++) {
            if (i)
                strbuf_putc(&b, ' ');
            strbuf_puts(&b, str_or(json_string_value(json_array_get(cmd, i)), "?"));
        }
        return strbuf_take(&b);
    }
    return xasprintf("point %lld", jsonx_int(point, "index", (long long)position));
}

const json_t *export_sweep_counter(const json_t *point, const char *name)
{
    const json_t *counters = json_object_get(figures(point), "counters");
    for (size_t i = 0; i < json_array_size(counters); i++) {
        const char *n = jsonx_str(json_array_get(counters, i), "name");
        if (n && !strcmp(n, name))
            return json_array_get(counters, i);
    }
    return NULL;
}

bool export_sweep_is_winner(const struct export_sweep_columns *c, const json_t *point,
                            size_t position)
{
    return c->winner >= 0 && jsonx_int(point, "index", (long long)position) == c->winner;
}

char *export_sweep_status(const json_t *point)
{
    char *st = xstrdup(str_or(jsonx_str(point, "status"), "unknown"));
    for (char *p = st; *p; p++)
        if (*p == '_')
            *p = ' ';
    const char *detail = jsonx_str(point, "status_detail");
    if (!detail || !*detail)
        return st;
    char *s = xasprintf("%s: %s", st, detail);
    free(st);
    return s;
}

/* The column the objective's figure is shown in, NO_COL when none is. */
static size_t objective_column(const struct export_sweep_columns *c, const char *figure)
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
    for (size_t k = 0; k < c->nparams; k++)
        if (!strcmp(figure, c->param[k]))
            return 1; /* a parameter (find-max): the point's name holds it */
    if (!strncmp(figure, "counter:", 8)) {
        const char *name = figure + 8;
        for (size_t k = 0; k < c->ncounters; k++) {
            size_t n = strlen(c->counter[k]);
            if (!strcmp(name, c->counter[k]) ||
                (c->counter_count[k] && !strncmp(name, c->counter[k], n) &&
                 !strcmp(name + n, "_per_s")))
                return c->col_counters + k;
        }
    }
    return NO_COL;
}

void export_sweep_columns(const json_t *sweep, struct export_sweep_columns *c)
{
    memset(c, 0, sizeof *c);
    const json_t *points = json_object_get(sweep, "points");
    c->npoints = json_array_size(points);
    c->winner = json_is_object(json_object_get(sweep, "winner"))
                    ? jsonx_count(json_object_get(sweep, "winner"), "index", INT64_MAX / 2, -1)
                    : -1;
    const json_t *price = json_object_get(sweep, "price");
    c->priced = json_is_object(price);
    c->currency = str_or(jsonx_str(price, "currency"), "USD");
    bool mixed[EXPORT_SWEEP_MAX_COUNTERS] = {false};

    const json_t *params = json_object_get(sweep, "parameters");
    for (size_t i = 0; i < json_array_size(params) && c->nparams < EXPORT_SWEEP_MAX_PARAMS; i++) {
        const char *name = jsonx_str(json_array_get(params, i), "name");
        bool dup = false;
        for (size_t k = 0; k < c->nparams && name; k++)
            dup |= !strcmp(c->param[k], name);
        if (name && !dup)
            c->param[c->nparams++] = name;
    }
    bool has_value[EXPORT_SWEEP_MAX_PARAMS] = {false};
    for (size_t k = 0; k < c->nparams; k++)
        c->param_numeric[k] = true;

    for (size_t i = 0; i < c->npoints; i++) {
        const json_t *p = json_array_get(points, i);
        const json_t *f = figures(p);
        c->gpu_memory |= isfinite(num(f, "gpu_memory_peak_bytes"));
        c->gpu_util |= isfinite(jsonx_num(f, "gpu_utilization_mean"));
        c->priced |= isfinite(jsonx_num(f, "cost_per_run"));
        const json_t *pv = json_object_get(p, "parameters");
        for (size_t k = 0; k < c->nparams; k++) {
            const json_t *v = json_object_get(pv, c->param[k]);
            double x;
            if (!v)
                continue;
            has_value[k] = true;
            if (!export_sweep_parse_number(json_string_value(v), &x) && !json_is_number(v))
                c->param_numeric[k] = false;
        }
        const json_t *counters = json_object_get(f, "counters");
        for (size_t j = 0; j < json_array_size(counters); j++) {
            const json_t *k = json_array_get(counters, j);
            const char *name = jsonx_str(k, "name"), *stage = jsonx_str(k, "stage");
            if (!name)
                continue;
            size_t at = 0;
            while (at < c->ncounters && strcmp(c->counter[at], name))
                at++;
            if (at == c->ncounters) {
                if (c->ncounters == EXPORT_SWEEP_MAX_COUNTERS)
                    continue;
                c->counter[at] = name;
                c->counter_stage[at] = stage;
                c->counter_count[at] = json_is_true(json_object_get(k, "count"));
                c->ncounters++;
            } else if (!mixed[at] && (!stage || !c->counter_stage[at] ||
                                      strcmp(stage, c->counter_stage[at]))) {
                mixed[at] = true;
            }
        }
    }
    for (size_t k = 0; k < c->nparams; k++)
        c->param_numeric[k] &= has_value[k];
    for (size_t k = 0; k < c->ncounters; k++)
        if (mixed[k])
            c->counter_stage[k] = NULL;

    size_t col = 7;
    c->col_counters = col;
    col += c->ncounters;
    c->col_peak = 5;
    c->col_gpu_memory = c->gpu_memory ? col++ : NO_COL;
    c->col_gpu_util = c->gpu_util ? col++ : NO_COL;
    c->col_cost = c->priced ? col++ : NO_COL;
    const char *figure = jsonx_str(json_object_get(sweep, "objective"), "figure");
    c->col_objective_mark = objective_column(c, figure);
    c->col_objective = NO_COL;
    if (c->col_objective_mark == NO_COL && figure) {
        c->col_objective = col++;
        c->col_objective_mark = c->col_objective;
    }
    c->ncols = col;
}

/* The objective's value as its figure reads: a duration for a stage or the total. */
static void objective_cell(char *buf, size_t len, const json_t *sweep, const json_t *point)
{
    const char *figure = str_or(jsonx_str(json_object_get(sweep, "objective"), "figure"), "");
    double v = jsonx_num(point, "objective_value");
    if (!strncmp(figure, "stage:", 6) || !strcmp(figure, "total"))
        export_fmt_duration(plausible(v), buf, len);
    else if (!strncmp(figure, "memory", 6) || !strncmp(figure, "gpu_memory", 10))
        export_fmt_bytes(plausible(v), buf, len);
    else
        export_fmt_num(v, "%.4g", 1, buf, len);
}

size_t export_sweep_table(struct export_table *t, const json_t *sweep,
                          const struct export_sweep_columns *c)
{
    const char **head = xcalloc(c->ncols, sizeof *head);
    char **owned = xcalloc(c->ncols, sizeof *owned);
    static const char *const fixed[] = {"", "point", "status", "total median",
                                        "95% CI of median", "peak memory", "bottleneck"};
    for (size_t i = 0; i < 7; i++)
        head[i] = fixed[i];
    for (size_t k = 0; k < c->ncounters; k++)
        head[c->col_counters + k] = owned[c->col_counters + k] =
            xasprintf("%s%s", c->counter[k], c->counter_count[k] ? "/s" : "");
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

    const json_t *points = json_object_get(sweep, "points");
    char a[64], b[64];
    for (size_t i = 0; i < c->npoints; i++) {
        const json_t *p = json_array_get(points, i);
        const json_t *f = figures(p);
        size_t row = export_table_row(t, 0);
        bool winner = export_sweep_is_winner(c, p, i);
        bool unmet = json_is_false(json_object_get(p, "constraints_met"));
        export_table_set(t, row, 0, "%s", winner ? "\u2605" : unmet ? "\u2717" : "");
        char *name = export_sweep_point_name(p, i);
        export_table_set(t, row, 1, "%s", name);
        free(name);
        char *status = export_sweep_status(p);
        export_table_set(t, row, 2, "%s", status);
        free(status);
        const char *st = jsonx_str(p, "status");
        if (st && strcmp(st, "ok"))
            export_table_tone(t, row, 2, EXPORT_TONE_SLOWER);
        if (winner)
            export_table_tone(t, row, 1, EXPORT_TONE_FASTER);
        const json_t *total = json_object_get(f, "total");
        export_table_set(t, row, 3, "%s",
                         export_fmt_duration(num(total, "median_ns"), a, sizeof a));
        double lo = num(total, "ci_low_ns"), hi = num(total, "ci_high_ns");
        if (isfinite(lo) && isfinite(hi))
            export_table_set(t, row, 4, "%s .. %s", export_fmt_duration(lo, a, sizeof a),
                             export_fmt_duration(hi, b, sizeof b));
        else
            export_table_set(t, row, 4, "-");
        export_table_set(t, row, 5, "%s",
                         export_fmt_bytes(num(f, "peak_memory_bytes"), a, sizeof a));
        const json_t *bn = json_object_get(f, "bottleneck");
        if (jsonx_str(bn, "stage"))
            export_table_set(t, row, 6, "%s: %s, %s", jsonx_str(bn, "stage"),
                             str_or(jsonx_str(bn, "verdict"), "?"),
                             export_fmt_duration(num(bn, "median_ns"), a, sizeof a));
        else
            export_table_set(t, row, 6, "-");
        for (size_t k = 0; k < c->ncounters; k++) {
            const json_t *kc = export_sweep_counter(p, c->counter[k]);
            double v = jsonx_num(kc, c->counter_count[k] ? "rate_per_s" : "last_median");
            export_table_set(t, row, c->col_counters + k, "%s",
                             export_fmt_num(v, "%.4g", 1, a, sizeof a));
        }
        if (c->col_gpu_memory != NO_COL)
            export_table_set(t, row, c->col_gpu_memory, "%s",
                             export_fmt_bytes(num(f, "gpu_memory_peak_bytes"), a,
                                              sizeof a));
        if (c->col_gpu_util != NO_COL)
            export_table_set(t, row, c->col_gpu_util, "%s",
                             export_fmt_num(jsonx_num(f, "gpu_utilization_mean"), "%.0f %%", 100,
                                            a, sizeof a));
        if (c->col_cost != NO_COL) {
            double cost = jsonx_num(f, "cost_per_run");
            if (isfinite(cost))
                export_table_set(t, row, c->col_cost, "%.4g %s", cost, c->currency);
            else
                export_table_set(t, row, c->col_cost, "-");
        }
        if (c->col_objective != NO_COL) {
            objective_cell(a, sizeof a, sweep, p);
            export_table_set(t, row, c->col_objective, "%s", a);
        }
    }
    return t->nrows;
}

/* ---- sentences ------------------------------------------------------------------------ */

/* "batch (32, 64, ...)" of parameters[i]. */
static void about_parameter(struct strbuf *b, const json_t *param)
{
    const json_t *values = json_object_get(param, "values");
    strbuf_puts(b, str_or(jsonx_str(param, "name"), "?"));
    strbuf_puts(b, " (");
    size_t n = json_array_size(values);
    for (size_t i = 0; i < n && i < ABOUT_VALUES; i++) {
        char v[64];
        if (i)
            strbuf_puts(b, ", ");
        strbuf_puts(b, export_fmt_value(json_array_get(values, i), v, sizeof v));
    }
    if (n > ABOUT_VALUES)
        strbuf_printf(b, ", ... %zu values", n);
    strbuf_putc(b, ')');
}

char *export_sweep_about(const json_t *sweep)
{
    struct strbuf b = {0};
    const char *mode = str_or(jsonx_str(sweep, "mode"), "matrix");
    size_t n = json_array_size(json_object_get(sweep, "points"));
    const json_t *fm = json_object_get(sweep, "find_max");
    if (!strcmp(mode, "find-max") && json_is_object(fm)) {
        char lo[64], hi[64];
        strbuf_printf(&b, "Find-max sweep of %s from %s to %s%s: %zu probe%s",
                      str_or(jsonx_str(fm, "parameter"), "?"),
                      export_fmt_num(jsonx_num(fm, "low"), "%.6g", 1, lo, sizeof lo),
                      export_fmt_num(jsonx_num(fm, "high"), "%.6g", 1, hi, sizeof hi),
                      json_is_true(json_object_get(fm, "pow2")) ? " (powers of two)" : "", n,
                      n == 1 ? "" : "s");
    } else if (!strcmp(mode, "commands")) {
        strbuf_printf(&b, "Sweep of %zu command%s", n, n == 1 ? "" : "s");
    } else {
        const json_t *params = json_object_get(sweep, "parameters");
        strbuf_printf(&b, "%s sweep of %zu point%s", !strcmp(mode, "matrix") ? "Matrix" : mode,
                      n, n == 1 ? "" : "s");
        for (size_t i = 0; i < json_array_size(params) && i < EXPORT_SWEEP_MAX_PARAMS; i++) {
            strbuf_puts(&b, i == 0 ? " over " : " \u00d7 ");
            about_parameter(&b, json_array_get(params, i));
        }
    }
    const json_t *rounds = json_object_get(sweep, "rounds");
    if (json_is_true(json_object_get(sweep, "interleave"))) {
        strbuf_puts(&b, ", interleaved");
        if (json_array_size(rounds))
            strbuf_printf(&b, " over %zu round%s", json_array_size(rounds),
                          json_array_size(rounds) == 1 ? "" : "s");
        if (json_is_integer(json_object_get(sweep, "seed")))
            strbuf_printf(&b, " (seed %lld)", jsonx_int(sweep, "seed", 0));
    } else if (json_is_false(json_object_get(sweep, "interleave"))) {
        strbuf_puts(&b, ", one point after another");
    }
    const char *status = str_or(jsonx_str(sweep, "status"), "unknown");
    if (!strcmp(status, "failed"))
        strbuf_puts(&b, "; failed: no point gave a result.");
    else if (!strcmp(status, "interrupted"))
        strbuf_puts(&b, "; interrupted: the points not run are listed as such.");
    else
        strbuf_printf(&b, "; %s.", status);
    return one_line(strbuf_take(&b));
}

char *export_sweep_winner(const json_t *sweep)
{
    const json_t *w = json_object_get(sweep, "winner");
    if (json_is_object(w)) {
        const char *reason = jsonx_str(w, "reason");
        return one_line(xasprintf("winner: %s%s%s", str_or(jsonx_str(w, "name"), "?"),
                                  reason ? ": " : "", reason ? reason : ""));
    }
    const json_t *points = json_object_get(sweep, "points");
    size_t ok = 0, met = 0;
    for (size_t i = 0; i < json_array_size(points); i++) {
        const json_t *p = json_array_get(points, i);
        const char *st = jsonx_str(p, "status");
        if (st && !strcmp(st, "ok")) {
            ok++;
            met += !json_is_false(json_object_get(p, "constraints_met"));
        }
    }
    if (!ok)
        return xstrdup("no winner: no point ran ok");
    if (!met)
        return xstrdup("no winner: no point that ran meets the constraints");
    return xstrdup("no winner: no point has a value of the objective");
}

char *export_sweep_objective(const json_t *sweep)
{
    const json_t *obj = json_object_get(sweep, "objective");
    struct strbuf b = {0};
    const char *spec = jsonx_str(obj, "spec"), *desc = jsonx_str(obj, "description");
    if (spec || desc)
        strbuf_printf(&b, "* the objective: %s%s%s", str_or(spec, "?"), desc ? ", " : "",
                      desc ? desc : "");
    else
        strbuf_puts(&b, "* no objective recorded");
    const json_t *cons = json_object_get(sweep, "constraints");
    for (size_t i = 0; i < json_array_size(cons); i++) {
        const json_t *x = json_array_get(cons, i);
        const char *s = json_is_string(x) ? json_string_value(x) : jsonx_str(x, "spec");
        strbuf_printf(&b, "%s%s", i ? ", " : "; constraints: ", str_or(s, "?"));
    }
    if (json_array_size(cons))
        strbuf_puts(&b, " (\u2717: not met)");
    const json_t *price = json_object_get(sweep, "price");
    if (json_is_object(price) && isfinite(jsonx_num(price, "per_hour")))
        strbuf_printf(&b, "; price %.6g %s per hour (the user's figure)",
                      jsonx_num(price, "per_hour"), str_or(jsonx_str(price, "currency"), "USD"));
    strbuf_puts(&b, ". Counters: rates per second (name/s) over the stage they were sent in, "
                "other counters their last value.");
    return one_line(strbuf_take(&b));
}

void export_sweep_notes(const json_t *sweep, struct export_lines *not_ok,
                        struct export_lines *constraints, struct export_lines *warnings)
{
    const json_t *points = json_object_get(sweep, "points");
    for (size_t i = 0; i < json_array_size(points); i++) {
        const json_t *p = json_array_get(points, i);
        char *name = export_sweep_point_name(p, i);
        const char *st = jsonx_str(p, "status");
        if (!st || strcmp(st, "ok")) {
            char *status = export_sweep_status(p);
            export_lines_add(not_ok, "%s: %s", name, status);
            free(status);
        } else {
            long long measured = jsonx_int(p, "runs_measured", -1);
            long long okr = jsonx_int(p, "runs_ok", -1);
            if (measured > 0 && okr >= 0 && okr < measured)
                export_lines_add(not_ok, "%s: %lld of %lld runs ok", name, okr, measured);
        }
        if (json_is_false(json_object_get(p, "constraints_met"))) {
            const json_t *why = json_object_get(p, "constraint_failures");
            struct strbuf b = {0};
            for (size_t k = 0; k < json_array_size(why) && b.len < 65536; k++)
                strbuf_printf(&b, "%s%s", k ? "; " : "",
                              str_or(json_string_value(json_array_get(why, k)), "?"));
            export_lines_add(constraints, "%s: %s", name,
                             b.len ? b.s : "does not meet the constraints");
            free(b.s);
        }
        /* One line per point: its warnings' codes, each with how often (a result warns per
         * stage); what each code means follows once, below. */
        const json_t *w = json_object_get(p, "warnings");
        struct strbuf codes = {0};
        for (size_t k = 0; k < json_array_size(w) && codes.len < 4096; k++) {
            const char *code = str_or(jsonx_str(json_array_get(w, k), "code"), "?");
            size_t times = 0, seen = 0;
            for (size_t j = 0; j < json_array_size(w); j++) {
                const char *other = str_or(jsonx_str(json_array_get(w, j), "code"), "?");
                if (!strcmp(other, code)) {
                    times++;
                    seen += j < k;
                }
            }
            if (seen)
                continue;
            strbuf_printf(&codes, "%s%s", codes.len ? ", " : "", code);
            if (times > 1)
                strbuf_printf(&codes, " ×%zu", times);
        }
        if (codes.len)
            export_lines_add(warnings, "%s: %s", name, codes.s);
        strbuf_free(&codes);
        free(name);
    }
    /* What each code says, from its first occurrence (at most 32 codes). */
    const char *done[32];
    size_t n_done = 0;
    for (size_t i = 0; i < json_array_size(points) && n_done < 32; i++) {
        const json_t *w = json_object_get(json_array_get(points, i), "warnings");
        for (size_t k = 0; k < json_array_size(w) && n_done < 32; k++) {
            const json_t *x = json_array_get(w, k);
            const char *code = str_or(jsonx_str(x, "code"), "?");
            bool again = false;
            for (size_t j = 0; j < n_done && !again; j++)
                again = !strcmp(done[j], code);
            if (again)
                continue;
            done[n_done++] = code;
            char *name = export_sweep_point_name(json_array_get(points, i), i);
            export_lines_add(warnings, "%s (e.g. %s): %s", code, name,
                             str_or(jsonx_str(x, "message"), ""));
            free(name);
        }
    }
}

/* ---- find-max ------------------------------------------------------------------------- */

static const json_t *find_max(const json_t *sweep)
{
    const json_t *fm = json_object_get(sweep, "find_max");
    return json_is_object(fm) ? fm : NULL;
}

size_t export_sweep_probes(struct export_table *t, const json_t *sweep)
{
    const json_t *fm = find_max(sweep);
    const char *param = str_or(jsonx_str(fm, "parameter"), "value");
    export_table_init(t, 5, param, "fits", "peak memory", "throughput", "point");
    t->numeric = 0x5;
    const json_t *probes = json_object_get(fm, "probes");
    const json_t *points = json_object_get(sweep, "points");
    char a[64];
    for (size_t i = 0; i < json_array_size(probes); i++) {
        const json_t *pr = json_array_get(probes, i);
        size_t row = export_table_row(t, 0);
        export_table_set(t, row, 0, "%s",
                         export_fmt_num(jsonx_num(pr, "value"), "%.6g", 1, a, sizeof a));
        const json_t *fits = json_object_get(pr, "fits");
        const char *reason = jsonx_str(pr, "reason");
        if (json_is_true(fits)) {
            export_table_set(t, row, 1, "yes");
        } else {
            export_table_set(t, row, 1, "%s%s%s", json_is_false(fits) ? "no" : "?",
                             reason ? ": " : "", reason ? reason : "");
            export_table_tone(t, row, 1, EXPORT_TONE_SLOWER);
        }
        export_table_set(t, row, 2, "%s",
                         export_fmt_bytes(num(pr, "peak_memory_bytes"), a, sizeof a));
        const json_t *tp = json_object_get(pr, "throughput");
        double rate = jsonx_num(tp, "rate_per_s");
        if (isfinite(rate))
            export_table_set(t, row, 3, "%.4g/s %s", rate, str_or(jsonx_str(tp, "name"), ""));
        else
            export_table_set(t, row, 3, "-");
        long long pt = jsonx_count(pr, "point", INT64_MAX / 2, -1);
        const json_t *p = pt >= 0 ? json_array_get(points, (size_t)pt) : NULL;
        if (p) {
            char *name = export_sweep_point_name(p, (size_t)pt);
            export_table_set(t, row, 4, "%s", name);
            free(name);
        } else {
            export_table_set(t, row, 4, "-");
        }
    }
    return t->nrows;
}

void export_sweep_find_max(const json_t *sweep, struct export_lines *l)
{
    const json_t *fm = find_max(sweep);
    if (!fm)
        return;
    const char *param = str_or(jsonx_str(fm, "parameter"), "the parameter");
    double lf = jsonx_num(fm, "largest_fit"), ff = jsonx_num(fm, "first_failure");
    double high = jsonx_num(fm, "high"), budget = num(fm, "memory_budget_bytes");
    const json_t *probes = json_object_get(fm, "probes");
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
    const json_t *fit = json_object_get(fm, "memory_fit");
    double slope = num(fit, "slope_bytes"), icpt = num(fit, "intercept_bytes");
    if (isfinite(slope) && isfinite(icpt)) {
        double r2 = jsonx_num(fit, "r2"), pred = jsonx_num(fit, "predicted_max");
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
    for (size_t i = 0; i < json_array_size(probes); i++) {
        const json_t *pr = json_array_get(probes, i);
        const json_t *tp = json_object_get(pr, "throughput");
        double rate = jsonx_num(tp, "rate_per_s"), v = jsonx_num(pr, "value");
        if (!json_is_true(json_object_get(pr, "fits")) || !isfinite(rate))
            continue;
        if (rate > best) {
            best = rate;
            best_value = v;
            best_name = jsonx_str(tp, "name");
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
