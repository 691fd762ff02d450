/* html_sweep.c: the charts of a sweep in the HTML report (html.h): a line chart of each figure
 * of the points (total median with interval whiskers, each throughput counter, peak memory, GPU
 * memory and utilisation, cost) against each numeric parameter, one line per combination of
 * the other parameters' values (in a 2x2 matrix: one line per value of the other); the points
 * that did not run ok as red crosses on the axis; x on a log2 scale when the values are powers
 * of two or span more than 10x. For find-max, peak memory against the parameter with the fitted
 * line and the budget, and the throughput at each probe. The Pareto fronts: total median
 * against cost (priced) and against peak memory, every point a dot, the non-dominated ones
 * joined and labelled. Inline SVG, no script; a sweep from a file is bounded: the first
 * SWEEP_CHART_POINTS points are drawn. */
#include "export/html.h"
#include "export/html_draw.h"
#include "export/sweep.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/units.h"
#include "util/xalloc.h"

#define SWEEP_CHART_POINTS 1000 /* points drawn per chart */
#define MAX_LINES 10            /* lines per chart: the palette */
#define MAX_TICKS 12
#define TOP 16.0
#define BOTTOM 196.0
#define HEIGHT 240.0
#define FRONT_LABELS 20         /* Pareto points labelled by name */

static const char *const palette[MAX_LINES] = {
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
};

enum unit { U_PLAIN, U_DURATION, U_BYTES, U_RATE, U_RATIO, U_MONEY };

static void fmt_unit(double v, enum unit u, const char *currency, char *buf, size_t len)
{
    switch (u) {
    case U_DURATION: export_fmt_duration(v, buf, len); break;
    case U_BYTES: export_fmt_bytes(v, buf, len); break;
    case U_RATE: snprintf(buf, len, "%.4g/s", v); break;
    case U_RATIO: snprintf(buf, len, "%.0f %%", 100 * v); break;
    case U_MONEY: snprintf(buf, len, "%.3g %s", v, currency ? currency : ""); break;
    default: snprintf(buf, len, "%.6g", v);
    }
}

/* ---- axes ----------------------------------------------------------------------------- */

struct xaxis {
    bool log2;
    double lo, hi;  /* in axis units (log2 of the value on a log scale) */
    enum unit unit;
};

static double x_px(const struct xaxis *a, double v)
{
    double u = a->log2 ? log2(v) : v;
    return PLOT_X0 + (PLOT_X1 - PLOT_X0) * (u - a->lo) / (a->hi - a->lo);
}

static double y_px(double ymax, double v)
{
    return BOTTOM - (BOTTOM - TOP) * v / ymax;
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sorts xs and drops repeats; returns how many are left. */
static size_t distinct(double *xs, size_t n)
{
    qsort(xs, n, sizeof *xs, by_double);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || xs[i] != xs[k - 1])
            xs[k++] = xs[i];
    return k;
}

static bool power_of_two(double v)
{
    int e;
    return v > 0 && frexp(v, &e) == 0.5;
}

/* The x axis of values xs[0..n) (sorted, distinct): log2 when every value is positive and
 * they are powers of two or span more than 10x (or pow2 says so). false: nothing to draw. */
static bool x_axis(struct xaxis *a, const double *xs, size_t n, enum unit unit, bool pow2)
{
    memset(a, 0, sizeof *a);
    a->unit = unit;
    if (n == 0 || !isfinite(xs[0]) || !isfinite(xs[n - 1]))
        return false;
    bool all_pow2 = true;
    for (size_t i = 0; i < n; i++)
        all_pow2 &= power_of_two(xs[i]);
    a->log2 = xs[0] > 0 && n >= 2 && (pow2 || all_pow2 || xs[n - 1] / xs[0] > 10);
    double lo = a->log2 ? log2(xs[0]) : xs[0], hi = a->log2 ? log2(xs[n - 1]) : xs[n - 1];
    double pad = hi > lo ? (hi - lo) * 0.06 : (fabs(lo) > 0 ? fabs(lo) * 0.5 : 1);
    a->lo = lo - pad;
    a->hi = hi + pad;
    return isfinite(a->lo) && isfinite(a->hi) && a->hi > a->lo &&
           fabs(a->hi) < 1e300 && fabs(a->lo) < 1e300;
}

static void x_ticks(FILE *out, const struct xaxis *a, const double *xs, size_t n,
                    const char *currency)
{
    double ticks[MAX_TICKS + 1];
    size_t nt = 0;
    if (n <= MAX_TICKS && !a->log2) {
        for (size_t i = 0; i < n; i++)
            ticks[nt++] = xs[i];
    } else if (a->log2) {
        double e0 = ceil(a->lo), e1 = floor(a->hi);
        double step = ceil((e1 - e0 + 1) / MAX_TICKS);
        for (double e = e0; e <= e1 && nt < MAX_TICKS && step >= 1; e += step)
            ticks[nt++] = exp2(e);
    } else {
        double step = html_nice_ceil((a->hi - a->lo) / 8);
        for (double v = ceil(a->lo / step) * step; v <= a->hi && nt < MAX_TICKS; v += step)
            ticks[nt++] = v;
    }
    for (size_t i = 0; i < nt; i++) {
        char b[64];
        double x = x_px(a, ticks[i]);
        fmt_unit(ticks[i], a->unit, currency, b, sizeof b);
        fprintf(out, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                x, TOP, x, BOTTOM, x, BOTTOM + 14, b);
    }
}

/* The top of the y axis for values up to max (0 at the bottom). */
static double y_top(double max)
{
    if (!(max > 0) || !isfinite(max))
        return 1;
    double top = html_nice_ceil(max * 1.08);
    return isfinite(top) ? top : NAN;
}

static void y_ticks(FILE *out, double ymax, enum unit unit, const char *currency)
{
    for (int k = 0; k <= 4; k++) {
        char b[64];
        double v = ymax * k / 4, y = y_px(ymax, v);
        fmt_unit(v, unit, currency, b, sizeof b);
        fprintf(out, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                PLOT_X0, y, PLOT_X1, y, PLOT_X0 - 6, y + 4, k ? b : "0");
    }
    fprintf(out, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
            "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
            PLOT_X0, BOTTOM, PLOT_X1, BOTTOM, PLOT_X0, TOP, PLOT_X0, BOTTOM);
}

/* The figure's start: caption, the svg with its title, and both axis labels. */
static void chart_begin(FILE *out, const char *cls, const char *title, const char *xlabel,
                        const char *ylabel)
{
    fprintf(out, "<figure class=\"%s\">\n<figcaption>", cls);
    html_text(out, title);
    fprintf(out, "</figcaption>\n<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" "
            "height=\"%.0f\" role=\"img\" aria-label=\"", CHART_W, HEIGHT, CHART_W, HEIGHT);
    html_text(out, title);
    fputs("\" xmlns=\"http://www.w3.org/2000/svg\">\n<title>", out);
    html_text(out, title);
    fputs("</title>\n", out);
    fprintf(out, "<text class=\"axislabel\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
            (PLOT_X0 + PLOT_X1) / 2, HEIGHT - 8);
    html_text(out, xlabel);
    fprintf(out, "</text>\n<text class=\"axislabel\" x=\"14\" y=\"%.1f\" text-anchor=\"middle\" "
            "transform=\"rotate(-90 14 %.1f)\">", (TOP + BOTTOM) / 2, (TOP + BOTTOM) / 2);
    html_text(out, ylabel);
    fputs("</text>\n", out);
}

/* ---- the figures of the points -------------------------------------------------------- */

/* What a chart plots of a point. */
struct figure {
    char *title;     /* "total median" */
    enum unit unit;
    int kind;        /* 0 total, 1 counter, 2 peak, 3 GPU memory, 4 GPU util, 5 cost */
    size_t counter;  /* for kind 1 */
};

static size_t sweep_figures(const struct doc_sweep_columns *c, struct figure *f)
{
    size_t n = 0;
    f[n++] = (struct figure){xstrdup("total median per run"), U_DURATION, 0, 0};
    for (size_t k = 0; k < c->ncounters; k++)
        f[n++] = (struct figure){c->counter_count[k]
                                     ? xasprintf("%s per second%s%s", c->counter[k],
                                                 c->counter_stage[k] ? " in " : "",
                                                 c->counter_stage[k] ? c->counter_stage[k] : "")
                                     : xasprintf("%s (last value)", c->counter[k]),
                                 c->counter_count[k] ? U_RATE : U_PLAIN, 1, k};
    f[n++] = (struct figure){xstrdup("peak memory (process tree)"), U_BYTES, 2, 0};
    if (c->gpu_memory)
        f[n++] = (struct figure){xstrdup("GPU memory peak"), U_BYTES, 3, 0};
    if (c->gpu_util)
        f[n++] = (struct figure){xstrdup("GPU utilisation (mean)"), U_RATIO, 4, 0};
    if (c->priced)
        f[n++] = (struct figure){xasprintf("cost per run (%s)", c->currency), U_MONEY, 5, 0};
    return n;
}

static double figure_raw(const struct doc_sweep_columns *c, const struct figure *f,
                         const struct doc_sweep_point *p, double *lo, double *hi);

/* The figure's value of a point, and the interval (NAN when it has none): NAN for a value no
 * measurement gives (not finite, or beyond 1e18: 31 years in ns, an exabyte). */
static double figure_value(const struct doc_sweep_columns *c, const struct figure *f,
                           const struct doc_sweep_point *p, double *lo, double *hi)
{
    double v = doc_sweep_plausible(figure_raw(c, f, p, lo, hi));
    *lo = doc_sweep_plausible(*lo);
    *hi = doc_sweep_plausible(*hi);
    return v;
}

static double figure_raw(const struct doc_sweep_columns *c, const struct figure *f,
                         const struct doc_sweep_point *p, double *lo, double *hi)
{
    const struct doc_sweep_figures *fig = &p->figures;
    *lo = *hi = NAN;
    switch (f->kind) {
    case 0:
        *lo = fig->total_ci_low_ns;
        *hi = fig->total_ci_high_ns;
        return fig->total_median_ns;
    case 1: {
        const struct doc_sweep_counter *k = doc_sweep_counter(fig, c->counter[f->counter]);
        return !k ? NAN : c->counter_count[f->counter] ? k->rate_per_s : k->last_median;
    }
    case 2: return fig->peak_memory_bytes;
    case 3: return fig->gpu_memory_peak_bytes;
    case 4: return fig->gpu_utilization_mean;
    default: return fig->cost_per_run;
    }
}

/* "lr=0.1, opt=adam": the values of the other varying parameters, the key of a line. */
static char *line_key(const struct doc_sweep_columns *c, const bool *varies, size_t skip,
                      const struct doc_sweep_point *p)
{
    struct strbuf b = STRBUF_INIT;
    for (size_t k = 0; k < c->nparams; k++) {
        if (k == skip || !varies[k])
            continue;
        char v[128];
        export_fmt_value(doc_sweep_parameter(p, c->param[k]), v, sizeof v);
        strbuf_printf(&b, "%s%s=%s", b.len ? ", " : "", c->param[k], v);
    }
    return strbuf_take(&b);
}

struct line {
    char *key;
    size_t n;
    size_t *pt;  /* indexes in points[] */
};

struct point_xy {
    double x, y, lo, hi;
    size_t pt;
};

static int by_x(const void *a, const void *b)
{
    const struct point_xy *p = a, *q = b;
    return p->x < q->x ? -1 : p->x > q->x ? 1 : (p->pt > q->pt) - (p->pt < q->pt);
}

/* One chart: figure f against parameter param, one line per key. */
static void param_chart(FILE *out, const struct doc_sweep *s, const struct figure *f,
                        size_t param, struct line *lines, size_t nlines, size_t dropped)
{
    const struct doc_sweep_columns *c = &s->columns;
    size_t np = s->n_points < SWEEP_CHART_POINTS ? s->n_points : SWEEP_CHART_POINTS;
    double *xs = xcalloc(np + 1, sizeof *xs);
    size_t nx = 0, drawn = 0;
    double ymax = 0;
    struct point_xy *xy = xcalloc(np + 1, sizeof *xy);
    for (size_t i = 0; i < np; i++) {
        const struct doc_sweep_point *p = &s->points[i];
        double x, lo, hi, y;
        if (!doc_sweep_parameter_number(p, c->param[param], &x))
            continue;
        xs[nx++] = x;
        y = figure_value(c, f, p, &lo, &hi);
        if (!isfinite(y))
            continue;
        drawn++;
        ymax = y > ymax ? y : ymax;
        ymax = isfinite(hi) && hi > ymax ? hi : ymax;
    }
    nx = distinct(xs, nx);
    struct xaxis ax;
    double top = y_top(ymax);
    if (drawn < 2 || !x_axis(&ax, xs, nx, U_PLAIN, false) || !isfinite(top) || top > 1e300) {
        free(xs);
        free(xy);
        return;
    }
    char title[512], xlabel[256];
    snprintf(title, sizeof title, "%s against %s", f->title, c->param[param]);
    snprintf(xlabel, sizeof xlabel, "%s%s", c->param[param],
             ax.log2 ? " (log2 scale)" : "");
    chart_begin(out, "sweep-chart", title, xlabel, f->title);
    x_ticks(out, &ax, xs, nx, c->currency);
    y_ticks(out, top, f->unit, c->currency);
    for (size_t l = 0; l < nlines; l++) {
        size_t n = 0;
        for (size_t k = 0; k < lines[l].n; k++) {
            const struct doc_sweep_point *p = &s->points[lines[l].pt[k]];
            double x, lo, hi, y;
            if (!doc_sweep_parameter_number(p, c->param[param], &x))
                continue;
            y = figure_value(c, f, p, &lo, &hi);
            if (isfinite(y))
                xy[n++] = (struct point_xy){x, y, lo, hi, lines[l].pt[k]};
        }
        qsort(xy, n, sizeof *xy, by_x);
        const char *colour = palette[l % MAX_LINES];
        fprintf(out, "<g class=\"line\"><polyline class=\"series\" fill=\"none\" stroke=\"%s\" "
                "stroke-width=\"1.8\" stroke-linejoin=\"round\" points=\"", colour);
        for (size_t k = 0; k < n; k++)
            fprintf(out, "%.2f,%.2f ", x_px(&ax, xy[k].x), y_px(top, xy[k].y));
        fputs("\"><title>", out);
        html_text(out, *lines[l].key ? lines[l].key : f->title);
        fputs("</title></polyline>\n", out);
        for (size_t k = 0; k < n; k++) {
            double x = x_px(&ax, xy[k].x), y = y_px(top, xy[k].y);
            char v[64], lo[64], hi[64];
            if (isfinite(xy[k].lo) && isfinite(xy[k].hi) && xy[k].hi >= xy[k].lo) {
                double y0 = y_px(top, xy[k].lo), y1 = y_px(top, xy[k].hi);
                fprintf(out, "<path class=\"whisker\" d=\"M%.2f %.2fV%.2fM%.2f %.2fh8M%.2f "
                        "%.2fh8\" stroke=\"%s\" fill=\"none\"/>", x, y0, y1, x - 4, y0, x - 4, y1,
                        colour);
            }
            fmt_unit(xy[k].y, f->unit, c->currency, v, sizeof v);
            fprintf(out, "<circle class=\"pt\" cx=\"%.2f\" cy=\"%.2f\" r=\"3.5\" fill=\"%s\">"
                    "<title>", x, y, colour);
            char *name = doc_sweep_point_name(&s->points[xy[k].pt]);
            html_text(out, name);
            free(name);
            fprintf(out, ": %s", v);
            if (isfinite(xy[k].lo) && isfinite(xy[k].hi)) {
                fmt_unit(xy[k].lo, f->unit, c->currency, lo, sizeof lo);
                fmt_unit(xy[k].hi, f->unit, c->currency, hi, sizeof hi);
                fprintf(out, " (95%% CI %s .. %s)", lo, hi);
            }
            fputs("</title></circle>\n", out);
        }
        fputs("</g>\n", out);
    }
    /* the points that did not run ok, on the axis where their value is */
    size_t failed = 0;
    for (size_t i = 0; i < np; i++) {
        const struct doc_sweep_point *p = &s->points[i];
        double x;
        if ((p->status && !strcmp(p->status, "ok")) ||
            !doc_sweep_parameter_number(p, c->param[param], &x))
            continue;
        failed++;
        fprintf(out, "<text class=\"failed\" x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\">"
                "\u00d7<title>", x_px(&ax, x), BOTTOM + 4);
        char *name = doc_sweep_point_name(p), *status = export_sweep_status(p);
        html_text(out, name);
        fputs(": ", out);
        html_text(out, status);
        free(name);
        free(status);
        fputs("</title></text>\n", out);
    }
    fputs("</svg>\n<div class=\"legend\">", out);
    for (size_t l = 0; l < nlines && nlines > 1; l++) {
        fprintf(out, "<span><i style=\"background:%s\"></i>", palette[l % MAX_LINES]);
        html_text(out, lines[l].key);
        fputs("</span>", out);
    }
    if (failed)
        fputs("<span><b class=\"failed\">\u00d7</b> did not run ok (hover for why)</span>", out);
    fputs("</div>\n<p class=\"note\">", out);
    if (f->kind == 0)
        fputs("Dots are medians over the measured runs; whiskers their 95 % confidence "
              "interval. ", out);
    if (nlines > 1)
        fputs("One line per value of the other parameters. ", out);
    if (dropped)
        fprintf(out, "%zu more combinations of the other parameters are not drawn (at most %d "
                "lines). ", dropped, MAX_LINES);
    if (s->n_points > np)
        fprintf(out, "Only the first %zu of %zu points are drawn. ", np, s->n_points);
    fputs("Hover a dot for its point and value.</p>\n</figure>\n", out);
    free(xs);
    free(xy);
}

/* The lines of parameter param's charts: points grouped by the other varying parameters. */
static size_t group_lines(const struct doc_sweep *s, size_t param, struct line *lines,
                          size_t *dropped)
{
    const struct doc_sweep_columns *c = &s->columns;
    size_t np = s->n_points < SWEEP_CHART_POINTS ? s->n_points : SWEEP_CHART_POINTS;
    bool varies[DOC_SWEEP_MAX_PARAMS] = {false};
    for (size_t k = 0; k < c->nparams; k++) {
        const json_t *first = NULL;
        for (size_t i = 0; i < np && !varies[k]; i++) {
            const json_t *v = doc_sweep_parameter(&s->points[i], c->param[k]);
            if (!first)
                first = v;
            else if (!json_equal(first, v))
                varies[k] = true;
        }
    }
    size_t n = 0;
    *dropped = 0;
    for (size_t i = 0; i < np; i++) {
        char *key = line_key(c, varies, param, &s->points[i]);
        size_t l = 0;
        while (l < n && strcmp(lines[l].key, key))
            l++;
        if (l == n) {
            if (n == MAX_LINES) {
                bool seen = false; /* count each combination left out once */
                for (size_t j = 0; j < i && !seen; j++) {
                    char *other = line_key(c, varies, param, &s->points[j]);
                    seen = !strcmp(other, key);
                    free(other);
                    if (j > 64)
                        break; /* bounded: the count is then a lower bound */
                }
                *dropped += !seen;
                free(key);
                continue;
            }
            lines[n++] = (struct line){key, 0, xcalloc(np, sizeof(size_t))};
        } else {
            free(key);
        }
        lines[l].pt[lines[l].n++] = i;
    }
    return n;
}

/* ---- Pareto fronts -------------------------------------------------------------------- */

/* Time against a second figure to minimise (both from 0), every point a dot, the
 * non-dominated ones (no other point is as good on both and better on one) joined in order
 * of time and labelled. */
static void pareto_chart(FILE *out, const struct doc_sweep *s, const struct figure *fy,
                         const char *what)
{
    const struct doc_sweep_columns *c = &s->columns;
    size_t np = s->n_points < SWEEP_CHART_POINTS ? s->n_points : SWEEP_CHART_POINTS;
    struct figure ft = {"total median per run", U_DURATION, 0, 0};
    struct point_xy *xy = xcalloc(np + 1, sizeof *xy);
    size_t n = 0;
    double xmax = 0, ymax = 0;
    for (size_t i = 0; i < np; i++) {
        const struct doc_sweep_point *p = &s->points[i];
        double lo, hi;
        double x = figure_value(c, &ft, p, &lo, &hi), y = figure_value(c, fy, p, &lo, &hi);
        if (!isfinite(x) || !isfinite(y) || x < 0 || y < 0)
            continue;
        xy[n++] = (struct point_xy){x, y, NAN, NAN, i};
        xmax = x > xmax ? x : xmax;
        ymax = y > ymax ? y : ymax;
    }
    double xtop = y_top(xmax), ytop = y_top(ymax);
    if (n < 2 || !isfinite(xtop) || !isfinite(ytop) || xtop > 1e300 || ytop > 1e300) {
        free(xy);
        return;
    }
    qsort(xy, n, sizeof *xy, by_x);
    bool *front = xcalloc(n, sizeof *front);
    double best = INFINITY;
    for (size_t i = 0; i < n; i++)
        if (xy[i].y < best) { /* sorted by time: a lower second figure than all faster ones */
            front[i] = true;
            best = xy[i].y;
        }
    char title[256];
    snprintf(title, sizeof title, "Pareto front: total median against %s", what);
    chart_begin(out, "pareto", title, "total median per run (lower is better)",
                fy->title);
    struct xaxis ax = {false, 0, xtop, U_DURATION};
    x_ticks(out, &ax, NULL, SIZE_MAX, c->currency); /* nice steps from 0 */
    y_ticks(out, ytop, fy->unit, c->currency);
    fputs("<polyline class=\"front-line\" fill=\"none\" stroke=\"#e15759\" stroke-width=\"1.5\" "
          "points=\"", out);
    for (size_t i = 0; i < n; i++)
        if (front[i])
            fprintf(out, "%.2f,%.2f ", x_px(&ax, xy[i].x), y_px(ytop, xy[i].y));
    fputs("\"/>\n", out);
    size_t labelled = 0;
    for (size_t i = 0; i < n; i++) {
        char a[64], b[64];
        double x = x_px(&ax, xy[i].x), y = y_px(ytop, xy[i].y);
        char *name = doc_sweep_point_name(&s->points[xy[i].pt]);
        fmt_unit(xy[i].x, U_DURATION, NULL, a, sizeof a);
        fmt_unit(xy[i].y, fy->unit, c->currency, b, sizeof b);
        fprintf(out, "<circle class=\"%s\" data-point=\"%zu\" cx=\"%.2f\" cy=\"%.2f\" r=\"%s\" "
                "fill=\"%s\"><title>", front[i] ? "front" : "dominated", xy[i].pt, x, y,
                front[i] ? "4.5" : "3.5", front[i] ? "#e15759" : "#9ca3af");
        html_text(out, name);
        fprintf(out, ": %s, %s%s</title></circle>\n", a, b,
                front[i] ? " (on the front)" : " (dominated)");
        if (front[i] && labelled++ < FRONT_LABELS) {
            bool right = x > PLOT_X1 - 160;
            fprintf(out, "<text class=\"ptlabel\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"%s\">",
                    right ? x - 7 : x + 7, y - 6, right ? "end" : "start");
            html_short_text(out, name, 24);
            fputs("</text>\n", out);
        }
        free(name);
    }
    fputs("</svg>\n<div class=\"legend\"><span><i style=\"background:#e15759\"></i>on the front "
          "(no point is better on both)</span><span><i style=\"background:#9ca3af\"></i>"
          "dominated</span></div>\n<p class=\"note\">Both figures are better lower: a point on "
          "the front is the fastest for its ", out);
    html_text(out, what);
    fputs(" or the cheapest for its time; a dominated point has another at least as good on "
          "both.", out);
    if (s->n_points > np)
        fprintf(out, " Only the first %zu of %zu points are drawn.", np, s->n_points);
    fputs("</p>\n</figure>\n", out);
    free(front);
    free(xy);
}

void html_figure_sweep(FILE *out, const struct export_request *req, size_t index)
{
    (void)index; /* the sweep's figure, not a result's */
    const struct doc_sweep *s = req->sweep_doc;
    if (!s || !s->json)
        return;
    const struct doc_sweep_columns *c = &s->columns;
    struct figure figs[DOC_SWEEP_MAX_COUNTERS + 5];
    size_t nf = sweep_figures(c, figs);
    for (size_t k = 0; k < c->nparams && !s->find_max.present; k++) {
        if (!c->param_numeric[k])
            continue;
        struct line lines[MAX_LINES];
        size_t dropped, nl = group_lines(s, k, lines, &dropped);
        for (size_t f = 0; f < nf; f++)
            param_chart(out, s, &figs[f], k, lines, nl, dropped);
        for (size_t l = 0; l < nl; l++) {
            free(lines[l].key);
            free(lines[l].pt);
        }
    }
    for (size_t f = 0; f < nf; f++) {
        if (figs[f].kind == 5)
            pareto_chart(out, s, &figs[f], "cost per run");
        if (figs[f].kind == 2)
            pareto_chart(out, s, &figs[f], "peak memory");
    }
    for (size_t f = 0; f < nf; f++)
        free(figs[f].title);
}

/* ---- find-max ------------------------------------------------------------------------- */

void html_figure_find_max(FILE *out, const struct export_request *req, size_t index)
{
    (void)index; /* the sweep's figure, not a result's */
    const struct doc_sweep_find_max *fm = req->sweep_doc ? &req->sweep_doc->find_max : NULL;
    if (!fm || !fm->present)
        return;
    const struct doc_sweep_probe *probes = fm->probes;
    size_t n = fm->n_probes < SWEEP_CHART_POINTS ? fm->n_probes : SWEEP_CHART_POINTS;
    const char *param = fm->parameter ? fm->parameter : "value";
    double *xs = xcalloc(n + 1, sizeof *xs);
    size_t nx = 0;
    double mem_max = 0, rate_max = 0;
    const char *rate_name = NULL;
    for (size_t i = 0; i < n; i++) {
        double v = probes[i].value, m = probes[i].peak_memory_bytes;
        double r = probes[i].throughput_rate_per_s;
        if (!isfinite(v))
            continue;
        xs[nx++] = v;
        mem_max = isfinite(m) && m > mem_max ? m : mem_max;
        rate_max = isfinite(r) && r > rate_max ? r : rate_max;
        if (isfinite(r) && !rate_name)
            rate_name = probes[i].throughput_name;
    }
    double budget = fm->memory_budget_bytes;
    double slope = fm->memory_fit.slope_bytes, icpt = fm->memory_fit.intercept_bytes;
    double pred = fm->memory_fit.predicted_max;
    if (isfinite(budget) && budget > mem_max && budget < 4 * mem_max)
        mem_max = budget; /* the budget in view unless it dwarfs every probe */
    nx = distinct(xs, nx);
    struct xaxis ax;
    if (!x_axis(&ax, xs, nx, U_PLAIN, fm->pow2)) {
        free(xs);
        return;
    }
    char xlabel[256];
    snprintf(xlabel, sizeof xlabel, "%s%s", param, ax.log2 ? " (log2 scale)" : "");
    for (int chart = 0; chart < 2; chart++) {
        double top = y_top(chart == 0 ? mem_max : rate_max);
        if (!isfinite(top) || top > 1e300 || (chart == 1 && !(rate_max > 0)))
            continue;
        char title[256], ylabel[256];
        if (chart == 0) {
            snprintf(title, sizeof title, "Peak memory of each probe against %s", param);
            snprintf(ylabel, sizeof ylabel, "peak memory (bytes)");
        } else {
            snprintf(title, sizeof title, "Throughput of each probe against %s", param);
            snprintf(ylabel, sizeof ylabel, "%s per second", rate_name ? rate_name : "throughput");
        }
        chart_begin(out, chart == 0 ? "findmax-memory" : "findmax-throughput", title, xlabel,
                    ylabel);
        x_ticks(out, &ax, xs, nx, NULL);
        y_ticks(out, top, chart == 0 ? U_BYTES : U_RATE, NULL);
        if (chart == 0 && isfinite(slope) && isfinite(icpt)) {
            fputs("<polyline class=\"fit\" fill=\"none\" stroke=\"#6b7280\" "
                  "stroke-dasharray=\"5 4\" stroke-width=\"1.4\" points=\"", out);
            for (int k = 0; k <= 40; k++) {
                double u = ax.lo + (ax.hi - ax.lo) * k / 40, x = ax.log2 ? exp2(u) : u;
                double y = icpt + slope * x;
                if (y >= 0 && y <= top)
                    fprintf(out, "%.2f,%.2f ", x_px(&ax, x), y_px(top, y));
            }
            fputs("\"><title>fitted line of peak memory</title></polyline>\n", out);
        }
        if (chart == 0 && isfinite(budget) && budget <= top) {
            char b[64];
            double y = y_px(top, budget);
            fprintf(out, "<line class=\"budget\" x1=\"%.1f\" y1=\"%.2f\" x2=\"%.1f\" y2=\"%.2f\" "
                    "stroke=\"#b91c1c\" stroke-dasharray=\"6 3\"/><text class=\"tick\" "
                    "x=\"%.1f\" y=\"%.2f\" text-anchor=\"end\">budget %s</text>\n", PLOT_X0, y,
                    PLOT_X1, y, PLOT_X1 - 4, y - 4, export_fmt_bytes(budget, b, sizeof b));
        }
        if (chart == 0 && isfinite(pred) && pred > 0 && (!ax.log2 || pred > 0)) {
            double x = x_px(&ax, pred);
            if (x >= PLOT_X0 && x <= PLOT_X1)
                fprintf(out, "<line class=\"predicted\" x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" "
                        "y2=\"%.1f\" stroke=\"#6b7280\" stroke-dasharray=\"2 3\"/><text "
                        "class=\"tick\" x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\">predicted "
                        "%.6g</text>\n", x, TOP, x, BOTTOM, x, TOP - 4, pred);
        }
        fputs("<polyline class=\"series\" fill=\"none\" stroke=\"#4e79a7\" stroke-width=\"1.8\" "
              "points=\"", out);
        struct point_xy *xy = xcalloc(n + 1, sizeof *xy);
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            const struct doc_sweep_probe *pr = &probes[i];
            double v = pr->value;
            double y = chart == 0 ? pr->peak_memory_bytes : pr->throughput_rate_per_s;
            if (isfinite(v) && isfinite(y) && pr->fits == 1 && (!ax.log2 || v > 0))
                xy[m++] = (struct point_xy){v, y, NAN, NAN, i};
        }
        qsort(xy, m, sizeof *xy, by_x);
        for (size_t i = 0; i < m; i++)
            fprintf(out, "%.2f,%.2f ", x_px(&ax, xy[i].x), y_px(top, xy[i].y));
        fputs("\"><title>probes that fit</title></polyline>\n", out);
        free(xy);
        for (size_t i = 0; i < n; i++) {
            const struct doc_sweep_probe *pr = &probes[i];
            double v = pr->value;
            double y = chart == 0 ? pr->peak_memory_bytes : pr->throughput_rate_per_s;
            bool fits = pr->fits == 1;
            if (!isfinite(v) || (ax.log2 && !(v > 0)))
                continue;
            double x = x_px(&ax, v);
            char b[64];
            if (fits && isfinite(y)) {
                fmt_unit(y, chart == 0 ? U_BYTES : U_RATE, NULL, b, sizeof b);
                fprintf(out, "<circle class=\"probe\" cx=\"%.2f\" cy=\"%.2f\" r=\"3.5\" "
                        "fill=\"#4e79a7\"><title>%s = %.6g: fits, %s</title></circle>\n", x,
                        y_px(top, y), param, v, b);
            } else if (!fits) {
                double yy = isfinite(y) && y <= top ? y_px(top, y) : BOTTOM + 4;
                fprintf(out, "<text class=\"failed\" x=\"%.2f\" y=\"%.2f\" "
                        "text-anchor=\"middle\">\u00d7<title>%s = %.6g: does not fit", x,
                        yy + 4, param, v);
                if (pr->reason) {
                    fputs(": ", out);
                    html_text(out, pr->reason);
                }
                fputs("</title></text>\n", out);
            }
        }
        fputs("</svg>\n<div class=\"legend\"><span><i style=\"background:#4e79a7\"></i>probes "
              "that fit</span><span><b class=\"failed\">\u00d7</b> does not fit</span>", out);
        if (chart == 0)
            fputs("<span><i style=\"background:#6b7280\"></i>fitted line (dashed)</span>"
                  "<span><i style=\"background:#b91c1c\"></i>memory budget (dashed)</span>",
                  out);
        fputs("</div>\n", out);
        if (chart == 1)
            fputs("<p class=\"note\">Whether the largest value that fits is also the fastest: "
                  "the throughput each probe measured (a short run).</p>\n", out);
        fputs("</figure>\n", out);
    }
    free(xs);
}
