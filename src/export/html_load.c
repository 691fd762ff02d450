/* html_load.c: the charts of a load result in the HTML report (docs/reports.md#load-results):
 * for each scenario run that counts, its latency per second (p50 and p99 of the queries each
 * second completed), the queries completed per second, and its latency histogram (drawn by
 * html_draw.c's html_histogram_svg from load.scenarios[].histogram). The server's CPU with
 * the runs shaded, drawn after these, is html_timelines.c's. */
#include "export/html.h"
#include "export/html_draw.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/units.h"
#include "util/xalloc.h"

#define P50_COLOUR "#1d4ed8"
#define P99_COLOUR "#b91c1c"
#define BAR_COLOUR "#4e79a7"
#define TOP 14.0
#define BOTTOM 134.0
#define HEIGHT 158.0
#define MIN_BINS_PER_OCTAVE 4 /* as the span histograms */
#define MAX_BINS_PER_OCTAVE 32 /* of the load histogram's 128 */
#define WANT_BINS 40.0         /* about this many bars across the latencies */

static double x_of(double t_s, double span_s)
{
    return PLOT_X0 + (PLOT_X1 - PLOT_X0) * t_s / span_s;
}

static void svg_open(FILE *out, const char *label)
{
    fprintf(out, "<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
            "role=\"img\" aria-label=\"%s\" xmlns=\"http://www.w3.org/2000/svg\">\n", CHART_W,
            HEIGHT, CHART_W, HEIGHT, label);
}

/* Three grid lines with labels from 0 to y_max, written by fmt. */
static void y_axis(FILE *out, double y_max, bool seconds)
{
    char a[32];
    for (int k = 0; k <= 2; k++) {
        double v = y_max * k / 2, y = BOTTOM - (BOTTOM - TOP) * k / 2;
        if (seconds)
            units_duration(v * 1e9, a, sizeof a);
        else
            snprintf(a, sizeof a, "%.4g/s", v);
        fprintf(out, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                PLOT_X0, y, PLOT_X1, y, PLOT_X0 - 6, y + 4, a);
    }
    fprintf(out, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
            PLOT_X0, BOTTOM, PLOT_X1, BOTTOM);
}

/* The length the time axis spans: the run, or its windows when they reach further. */
static double span_of(const struct doc_load_run *run)
{
    struct doc_load_second last;
    doc_load_second(run, doc_load_n_seconds(run) - 1, &last);
    double span = run->duration_s, end = last.t_s + 1;
    if (!(span > 0) || (isfinite(end) && end > span))
        span = end;
    return span;
}

/* The per-second figure of a line of the latency chart. */
static double second_value(const struct doc_load_second *s, bool p99)
{
    return p99 ? s->p99_s : s->p50_s;
}

static void latency_chart(FILE *out, const struct doc_load_run *run, const char *name)
{
    size_t n = doc_load_n_seconds(run);
    double span = span_of(run), max = 0;
    for (size_t i = 0; i < n; i++) {
        struct doc_load_second s;
        doc_load_second(run, i, &s);
        max = fmax(max, s.p99_s);
    }
    if (!(span > 0) || !(max > 0))
        return;
    double y_max = html_nice_ceil(max * 1.05);
    fputs("<figure class=\"timeline\">\n<figcaption>", out);
    html_text(out, name);
    fprintf(out, ": latency of the queries completed in each second <span class=\"key\"><i "
            "style=\"background:%s\"></i>p50</span> <span class=\"key\"><i style=\"background:"
            "%s\"></i>p99</span></figcaption>\n", P50_COLOUR, P99_COLOUR);
    svg_open(out, "latency per second");
    html_time_axis(out, PLOT_X0, span * 1e9, TOP, BOTTOM);
    y_axis(out, y_max, true);
    static const struct { bool p99; const char *colour, *label; } lines[] = {
        {false, P50_COLOUR, "p50"}, {true, P99_COLOUR, "p99"}};
    for (size_t l = 0; l < 2; l++) {
        fprintf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
                lines[l].colour);
        for (size_t i = 0; i < n; i++) {
            struct doc_load_second s;
            doc_load_second(run, i, &s);
            double v = second_value(&s, lines[l].p99), t = s.t_s;
            if (isfinite(v) && isfinite(t) && s.completed > 0)
                fprintf(out, "%.1f,%.1f ", x_of(fmin(t + 0.5, span), span),
                        BOTTOM - (BOTTOM - TOP) * fmin(v / y_max, 1));
        }
        fputs("\"/>\n", out);
        for (size_t i = 0; i < n; i++) {
            struct doc_load_second s;
            doc_load_second(run, i, &s);
            double v = second_value(&s, lines[l].p99), t = s.t_s;
            char a[32];
            if (isfinite(v) && isfinite(t) && s.completed > 0)
                fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2\" fill=\"%s\"><title>second "
                        "%.0f: %s %s</title></circle>\n", x_of(fmin(t + 0.5, span), span),
                        BOTTOM - (BOTTOM - TOP) * fmin(v / y_max, 1), lines[l].colour, t,
                        lines[l].label, units_duration(v * 1e9, a, sizeof a));
        }
    }
    fputs("</svg>\n</figure>\n", out);
}

static void qps_chart(FILE *out, const struct doc_load_run *run, const char *name)
{
    size_t n = doc_load_n_seconds(run);
    double span = span_of(run), max = 0, duration = run->duration_s;
    for (size_t i = 0; i < n; i++) {
        struct doc_load_second s;
        doc_load_second(run, i, &s);
        max = fmax(max, s.completed);
    }
    if (!(span > 0) || !(max > 0))
        return;
    double y_max = html_nice_ceil(max * 1.05);
    bool partial = false;
    fputs("<figure class=\"timeline\">\n<figcaption>", out);
    html_text(out, name);
    fprintf(out, ": queries completed per second (throughput %.1f QPS over the run)"
            "</figcaption>\n", run->throughput_qps);
    svg_open(out, "queries per second");
    html_time_axis(out, PLOT_X0, span * 1e9, TOP, BOTTOM);
    y_axis(out, y_max, false);
    for (size_t i = 0; i < n; i++) {
        struct doc_load_second s;
        doc_load_second(run, i, &s);
        double c = s.completed, f = s.failed, t = s.t_s;
        if (!isfinite(c) || !isfinite(t) || t >= span)
            continue;
        /* a second the run did not fill (its end, the responses after the last query was
         * sent) is drawn lighter: its count is not a rate */
        bool whole = !(isfinite(duration) && t + 1 > duration + 1e-6);
        partial |= !whole;
        double x0 = x_of(t, span), x1 = x_of(fmin(t + 1, span), span);
        double h = (BOTTOM - TOP) * fmin(c / y_max, 1);
        fprintf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\" "
                "fill-opacity=\"%s\" stroke=\"#fff\" stroke-width=\"0.5\"><title>second %.0f: "
                "%.0f completed, %.0f failed%s</title></rect>\n", x0, BOTTOM - h,
                fmax(x1 - x0, 0.5), h, BAR_COLOUR, whole ? "0.85" : "0.35", t, c,
                isfinite(f) ? f : 0, whole ? "" : " (a partial second)");
    }
    fputs("</svg>\n", out);
    if (partial)
        fputs("<p class=\"note\">The lighter bar is a second the run only partly covered (its "
              "end): its count is not a rate.</p>\n", out);
    fputs("</figure>\n", out);
}

/* The histogram of a run, its 128 buckets per octave summed into a power of two from
 * MIN_BINS_PER_OCTAVE to MAX_BINS_PER_OCTAVE, the one that gives about WANT_BINS bars from the
 * fastest query to the slowest. */
static void histogram(FILE *out, const struct doc_load_run *run, const char *name)
{
    size_t nb = doc_load_n_buckets(run);
    double lo_ns = INFINITY, hi_ns = 0;
    for (size_t i = 0; i < nb; i++) {
        struct doc_load_bucket b;
        doc_load_bucket(run, i, &b);
        if (b.low_ns >= 1 && b.low_ns < 1e18) {
            lo_ns = fmin(lo_ns, b.low_ns);
            hi_ns = fmax(hi_ns, b.low_ns);
        }
    }
    if (!(hi_ns >= lo_ns))
        return;
    double per = MIN_BINS_PER_OCTAVE;
    while (per < MAX_BINS_PER_OCTAVE && (log2(hi_ns) - log2(lo_ns)) * per * 2 <= WANT_BINS)
        per *= 2;
    long lo = (long)floor(log2(lo_ns) * per), hi = (long)floor(log2(hi_ns) * per);
    size_t n = (size_t)(hi - lo + 1);
    double *counts = xcalloc(n, sizeof *counts);
    for (size_t i = 0; i < nb; i++) {
        struct doc_load_bucket b;
        doc_load_bucket(run, i, &b);
        if (b.low_ns >= 1 && b.low_ns < 1e18 && b.count > 0)
            counts[(long)floor(log2(b.low_ns) * per) - lo] += b.count;
    }
    const struct doc_latency *lat = &run->latency;
    struct html_hist_mark marks[] = {
        {"p50", lat->p50 * 1e9}, {"p90", lat->p90 * 1e9},
        {"p99", lat->p99 * 1e9}, {"p99.9", lat->p999 * 1e9}};
    fputs("<figure class=\"latency\">\n<figcaption>", out);
    html_text(out, name);
    char a[32];
    fprintf(out, ": latency of %lld queries, median %s (%.0f bins per doubling)</figcaption>\n",
            run->histogram_total, export_fmt_duration(marks[0].ns, a, sizeof a), per);
    html_histogram_svg(out, per, (double)lo, counts, n, marks,
                       sizeof marks / sizeof marks[0], "queries");
    fputs("</figure>\n", out);
    free(counts);
}

void html_figure_load(FILE *out, const struct export_request *req, size_t index)
{
    const struct doc_load *load = req->loads[index];
    for (size_t i = 0; i < load->n_runs; i++) {
        if (!doc_load_counts(load, i))
            continue;
        const struct doc_load_run *run = &load->runs[i];
        char name[96];
        doc_load_run_name(run, name, sizeof name);
        latency_chart(out, run, name);
        qps_chart(out, run, name);
        histogram(out, run, name);
    }
    fputs("<p class=\"note\">Latency is measured from each query's scheduled time. Per-second "
          "points: the queries that completed in that second. Histogram bars: queries per "
          "duration bin (logarithmic time axis; the scale on the left is "
          "the fullest bin); dashed lines: the run's percentiles (LoadGen's rank, "
          "docs/load.md).</p>\n", out);
}
