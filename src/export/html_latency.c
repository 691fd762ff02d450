/* html_latency.c: the latency histograms of the HTML report (docs/reports.md): for each stage
 * of a result with at least EXPORT_LATENCY_MIN_SPANS spans, an inline SVG histogram of its
 * span durations (summary.stages[].spans.histogram, docs/result-schema.md) on a logarithmic
 * time axis, with its p50, p90, p99 and p99.9 marked and labelled; the drawing itself,
 * html_histogram_svg, also draws a load run's latency histogram (html_load.c). */
#include "export/html.h"

#include <math.h>
#include <string.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/units.h"
#include "util/xalloc.h"

#define W 860.0
#define X0 60.0
#define X1 840.0
#define TOP 34.0    /* room for the percentile labels */
#define BOTTOM 150.0
#define HEIGHT 172.0
#define BAR_COLOUR "#4e79a7"
#define MARK_COLOUR "#b91c1c"

/* The histogram of a spans object: bins per octave, first bin, counts. false when it is not
 * one that can be drawn (a document from elsewhere: bounds are checked here too). */
struct hist {
    double per, first;
    const json_t *counts;
    size_t n;
    double max_count;
};

static bool hist_read(const json_t *spans, struct hist *h)
{
    const json_t *j = json_object_get(spans, "histogram");
    h->per = jsonx_num(j, "bins_per_octave");
    h->first = jsonx_num(j, "first_bin");
    h->counts = json_object_get(j, "counts");
    h->n = json_array_size(h->counts);
    h->max_count = 0;
    if (!(h->per >= 1 && h->per <= 64) || !(h->first >= 0 && h->first < 64 * h->per) || h->n == 0 ||
        h->n > 64 * h->per - h->first)
        return false;
    for (size_t i = 0; i < h->n; i++) {
        double c = json_number_value(json_array_get(h->counts, i));
        if (!(c >= 0) || !isfinite(c))
            return false;
        if (c > h->max_count)
            h->max_count = c;
    }
    return h->max_count > 0;
}

/* x of a duration in ns on the axis from bin lo to bin hi (in octaves: log2 ns). */
static double x_of(double ns, double lo, double hi)
{
    double l = ns >= 1 ? log2(ns) : 0;
    double x = X0 + (X1 - X0) * (l - lo) / (hi - lo);
    return x < X0 ? X0 : x > X1 ? X1 : x;
}

/* Ticks at 1, 2 and 5 times the powers of ten between lo and hi (octaves); only the powers of
 * ten when the axis spans more than two decades. */
static void log_axis(FILE *out, double lo, double hi)
{
    char buf[32];
    bool minor = (hi - lo) * log10(2) <= 2;
    fprintf(out, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", X0,
            BOTTOM, X1, BOTTOM);
    for (int e = 0; e <= 19; e++) {
        for (int m = 1; m <= 5; m += m == 1 ? 1 : 3) {
            double ns = m * pow(10, e), l = log2(ns);
            if (l < lo - 1e-9 || l > hi + 1e-9 || (m > 1 && !minor))
                continue;
            double x = x_of(ns, lo, hi);
            fprintf(out, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                    "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                    x, TOP, x, BOTTOM, x, BOTTOM + 14, units_duration(ns, buf, sizeof buf));
        }
    }
}

/* The percentile lines with their labels, alternating between two rows so that close ones
 * stay readable. Percentiles of the same value (p99 and p99.9 of few spans are the slowest one)
 * share one line and one label, "p99, p99.9 38.16 ms"; a label near an edge of the plot is
 * anchored inside it. */
static void percentile_marks(FILE *out, const struct html_hist_mark *marks, size_t n_marks,
                             double lo, double hi)
{
    char buf[32];
    int row = 0;
    for (size_t k = 0; k < n_marks; k++) {
        double ns = marks[k].ns;
        if (!isfinite(ns) || (k > 0 && marks[k - 1].ns == ns))
            continue; /* drawn with the one before */
        char names[48] = "";
        for (size_t j = k; j < n_marks && marks[j].ns == ns; j++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     j > k ? ", " : "", marks[j].label);
        double x = x_of(ns, lo, hi), y = row++ % 2 ? 26 : 13;
        const char *anchor = x > X1 - 70 ? "end" : x < X0 + 50 ? "start" : "middle";
        fprintf(out, "<g class=\"pct\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                "stroke=\"%s\" stroke-dasharray=\"3 2\"/><text x=\"%.1f\" y=\"%.1f\" "
                "text-anchor=\"%s\" fill=\"%s\">%s %s</text></g>\n", x, y + 3, x, BOTTOM,
                MARK_COLOUR, x, y, anchor, MARK_COLOUR, names,
                units_duration(ns, buf, sizeof buf));
    }
}

void html_histogram_svg(FILE *out, double per, double first, const double *counts, size_t n,
                        const struct html_hist_mark *marks, size_t n_marks, const char *what)
{
    double max_count = 0;
    for (size_t i = 0; i < n; i++)
        max_count = fmax(max_count, counts[i]);
    double lo = first / per, hi = (first + (double)n) / per;
    fprintf(out, "<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
            "role=\"img\" aria-label=\"latency histogram\" xmlns=\"http://www.w3.org/2000/svg\">\n",
            W, HEIGHT, W, HEIGHT);
    log_axis(out, lo, hi);
    for (size_t i = 0; i < n; i++) {
        double c = counts[i];
        if (c <= 0)
            continue;
        double b0 = (first + (double)i) / per, b1 = b0 + 1 / per;
        double x = X0 + (X1 - X0) * (b0 - lo) / (hi - lo);
        double w = (X1 - X0) * (b1 - b0) / (hi - lo), bh = (BOTTOM - TOP) * c / max_count;
        char from[32], to[32];
        fprintf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\" "
                "stroke=\"#fff\" stroke-width=\"0.5\"><title>%.0f %s of %s .. %s</title>"
                "</rect>\n", x, BOTTOM - bh, w, bh, BAR_COLOUR, c, what,
                units_duration(exp2(b0), from, sizeof from),
                units_duration(exp2(b1), to, sizeof to));
    }
    percentile_marks(out, marks, n_marks, lo, hi);
    fprintf(out, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.0f</text>\n",
            X0 - 4, TOP + 4, max_count);
    fputs("</svg>\n", out);
}

/* One stage's histogram figure. */
static void stage_histogram(FILE *out, const json_t *st, const json_t *spans,
                            void (*text)(FILE *out, const char *s))
{
    struct hist h;
    char buf[32];
    fputs("<figure class=\"latency\">\n<figcaption>Latency of ", out);
    text(out, jsonx_str(st, "name") ? jsonx_str(st, "name") : "?");
    fprintf(out, ": %lld spans, median %s</figcaption>\n", jsonx_int(spans, "n", 0),
            export_fmt_duration(jsonx_num(spans, "p50_ns"), buf, sizeof buf));
    if (!hist_read(spans, &h)) {
        fputs("<p>The histogram of this stage is missing or malformed: nothing to draw.</p>\n"
              "</figure>\n", out);
        return;
    }
    double *counts = xcalloc(h.n, sizeof *counts);
    for (size_t i = 0; i < h.n; i++)
        counts[i] = json_number_value(json_array_get(h.counts, i));
    const struct html_hist_mark marks[] = {
        {"p50", jsonx_num(spans, "p50_ns")}, {"p90", jsonx_num(spans, "p90_ns")},
        {"p99", jsonx_num(spans, "p99_ns")}, {"p99.9", jsonx_num(spans, "p999_ns")}};
    html_histogram_svg(out, h.per, h.first, counts, h.n, marks, sizeof marks / sizeof marks[0],
                       "spans");
    free(counts);
    fputs("</figure>\n", out);
}

void export_html_latency(FILE *out, const json_t *result, void (*text)(FILE *out, const char *s))
{
    const json_t *stages = json_object_get(json_object_get(result, "summary"), "stages");
    bool any = false;
    for (size_t i = 0; i < json_array_size(stages); i++) {
        const json_t *st = json_array_get(stages, i);
        const json_t *spans = json_object_get(st, "spans");
        if (jsonx_int(spans, "n", 0) < EXPORT_LATENCY_MIN_SPANS)
            continue;
        stage_histogram(out, st, spans, text);
        any = true;
    }
    if (any)
        fputs("<p class=\"note\">Bars: spans per duration bin (4 bins per doubling, logarithmic "
              "time axis; the scale on the left is the fullest bin). Dashed lines: nearest-rank "
              "percentiles over the spans of all ok runs (docs/statistics.md).</p>\n", out);
}
