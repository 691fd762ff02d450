/* html_curves.c: training curves in the HTML report: each counter the workload sent over time
 * (runs[].counters[].points: loss, accuracy, images) as a line chart with one line per measured
 * run, the representative run dark and the others faint. A count (images, tokens) is drawn as
 * its rate over each interval between two points, from their running sums, so it stays exact
 * when the result kept only every k-th sample; any other counter (a loss) as its value.
 * Counters with fewer than 3 points in every run are left out. */
#include "export/html.h"
#include "export/html_draw.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

#define CURVE_MIN_POINTS 3
#define CURVE_TOP 14.0
#define CURVE_BOTTOM 134.0
#define CURVE_HEIGHT 158.0

/* One run's points of the counter: [[t_ns, value, running sum], ...]. */
struct curve_run {
    const struct doc_run_counter *counter;
    long long index;   /* runs[].index */
    bool chosen;       /* the representative run: drawn dark, last */
    long long stride;  /* 1: every sample kept */
    double t0_ns;      /* the time of its first point: runs are drawn from their first sample,
                        * so a start-up that varies between runs does not shift the curves */
};

/* The i-th point of cr as time and the figure drawn (the value, or for a count the rate
 * since point *from, which then moves on). false: nothing to draw at i. */
static bool curve_point(const struct curve_run *cr, bool count, size_t i, size_t *from,
                        double *t0, double *t1, double *v)
{
    struct doc_point p, q;
    doc_counter_point(cr->counter, i, &p);
    *t1 = p.t_ns - cr->t0_ns;
    *t0 = *t1;
    if (!count) {
        *v = p.value;
        return isfinite(*t1) && isfinite(*v);
    }
    doc_counter_point(cr->counter, *from, &q);
    double tq = q.t_ns - cr->t0_ns;
    if (i == 0 || !isfinite(*t1) || !isfinite(tq) || !(*t1 > tq))
        return false; /* the same instant as the last point: its count joins the next interval */
    *t0 = tq;
    *v = (p.sum - q.sum) / ((*t1 - tq) / 1e9);
    *from = i;
    return isfinite(*v);
}

static void curve_range(const struct curve_run *runs, size_t n, bool count, double *lo,
                        double *hi, double *span_ns)
{
    double vmin = INFINITY, vmax = -INFINITY;
    *span_ns = 0;
    for (size_t k = 0; k < n; k++) {
        size_t from = 0;
        for (size_t i = 0; i < doc_counter_n_points(runs[k].counter); i++) {
            double t0, t1, v;
            if (!curve_point(&runs[k], count, i, &from, &t0, &t1, &v))
                continue;
            vmin = v < vmin ? v : vmin;
            vmax = v > vmax ? v : vmax;
            *span_ns = t1 > *span_ns ? t1 : *span_ns;
        }
    }
    *lo = vmin >= 0 ? 0 : -html_nice_ceil(-vmin * 1.05);
    *hi = vmax > 0 ? html_nice_ceil(vmax * 1.05) : 0;
    if (!(*hi > *lo))
        *hi = *lo + 1;
}

static void curve_line(FILE *out, const struct curve_run *cr, bool count, double lo, double hi,
                       double span_ns)
{
    size_t n = doc_counter_n_points(cr->counter), from = 0;
    fprintf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%s\" "
            "stroke-opacity=\"%s\" stroke-linejoin=\"round\" points=\"",
            cr->chosen ? "#1d4ed8" : "#94a3b8", cr->chosen ? "1.8" : "1", cr->chosen ? "1" : "0.7");
    for (size_t i = 0; i < n; i++) {
        double t0, t1, v;
        if (!curve_point(cr, count, i, &from, &t0, &t1, &v))
            continue;
        double y = CURVE_BOTTOM - (CURVE_BOTTOM - CURVE_TOP) * (v - lo) / (hi - lo);
        if (count) /* a step over the interval the rate is of */
            fprintf(out, "%.2f,%.2f ", PLOT_X0 + (PLOT_X1 - PLOT_X0) * t0 / span_ns, y);
        fprintf(out, "%.2f,%.2f ", PLOT_X0 + (PLOT_X1 - PLOT_X0) * t1 / span_ns, y);
    }
    fprintf(out, "\"><title>run %lld</title></polyline>\n", cr->index);
}

static void curve_chart(FILE *out, const char *name, const struct curve_run *runs, size_t n,
                        bool count)
{
    double lo, hi, span_ns;
    curve_range(runs, n, count, &lo, &hi, &span_ns);
    if (!(span_ns > 0) || !isfinite(hi - lo) || !isfinite(span_ns))
        return;
    long long stride = 1, chosen = -1;
    for (size_t k = 0; k < n; k++) {
        stride = runs[k].stride > stride ? runs[k].stride : stride;
        chosen = runs[k].chosen ? runs[k].index : chosen;
    }
    fputs("<figure class=\"curve\">\n<figcaption>", out);
    html_text(out, name);
    fputs(count ? ": rate per interval between samples (/s)" : ": value as sent", out);
    fputs("</figcaption>\n", out);
    fprintf(out, "<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
            "role=\"img\" aria-label=\"", CHART_W, CURVE_HEIGHT, CHART_W, CURVE_HEIGHT);
    html_text(out, name);
    fputs(" over time\" xmlns=\"http://www.w3.org/2000/svg\">\n", out);
    html_time_axis(out, PLOT_X0, span_ns, CURVE_TOP, CURVE_BOTTOM);
    for (int k = 0; k <= 2; k++) {
        double v = lo + (hi - lo) * k / 2, y = CURVE_BOTTOM - (CURVE_BOTTOM - CURVE_TOP) * k / 2;
        fprintf(out, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.6g</text>\n",
                PLOT_X0, y, PLOT_X1, y, PLOT_X0 - 6, y + 4, v);
    }
    fprintf(out, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
            PLOT_X0, CURVE_BOTTOM, PLOT_X1, CURVE_BOTTOM);
    for (int pass = 0; pass < 2; pass++) /* the faint runs first, the chosen one over them */
        for (size_t k = 0; k < n; k++)
            if (runs[k].chosen == (pass == 1))
                curve_line(out, &runs[k], count, lo, hi, span_ns);
    fprintf(out, "</svg>\n<p class=\"note\">One line per measured run, over the time since its "
            "first sample%s.", chosen >= 0 ? "; the dark one is the run of the timelines" : "");
    if (stride > 1)
        fprintf(out, " Only every %lld-th sample is kept (the result holds at most 1000 a run)%s.",
                stride, count ? "; rates stay exact, from the running sums" : "");
    fputs("</p>\n</figure>\n", out);
}

/* The counter named name in run, or NULL. */
static const struct doc_run_counter *run_counter(const struct doc_run *run, const char *name)
{
    for (size_t i = 0; i < run->n_counters; i++) {
        const char *n = run->counters[i].name;
        if (n && !strcmp(n, name))
            return &run->counters[i];
    }
    return NULL;
}

void html_figure_curves(FILE *out, const struct export_request *req, size_t index)
{
    const struct doc_result *r = req->docs[index];
    const struct doc_summary *s = &r->summary;
    size_t nruns = r->n_runs;
    bool measured = false; /* draw the measured runs, or all when none was */
    for (size_t k = 0; k < nruns; k++)
        measured |= !r->runs[k].warmup;
    int chosen = export_chosen_run(req, r);
    struct curve_run *cr = xcalloc(nruns + 1, sizeof *cr);
    for (size_t i = 0; i < s->n_counters; i++) {
        const struct doc_counter *c = &s->counters[i];
        const char *name = c->name;
        size_t n = 0, most = 0;
        for (size_t k = 0; name && k < nruns; k++) {
            const struct doc_run *run = &r->runs[k];
            const struct doc_run_counter *rc = run_counter(run, name);
            size_t points = rc ? doc_counter_n_points(rc) : 0;
            if (!points || (measured && run->warmup))
                continue;
            struct doc_point first;
            doc_counter_point(rc, 0, &first);
            cr[n++] = (struct curve_run){rc, run->index, (int)k == chosen, rc->points_stride,
                                         isfinite(first.t_ns) ? first.t_ns : 0};
            most = points > most ? points : most;
        }
        if (most >= CURVE_MIN_POINTS)
            curve_chart(out, name, cr, n, c->count);
    }
    free(cr);
}
