/* html_latency.c: the latency histograms of the HTML report (docs/reports.md): for each stage
 * of a result with at least EXPORT_LATENCY_MIN_SPANS spans, an inline SVG histogram of its
 * span durations (summary.stages[].spans.histogram, docs/result-schema.md) on a logarithmic
 * time axis, with its p50, p90, p99 and p99.9 marked and labelled (drawn by html_draw.c's
 * html_histogram_svg, as a load run's latency histogram is). */
#include "export/html.h"
#include "export/html_draw.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/xalloc.h"

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

/* One stage's histogram figure. */
static void stage_histogram(FILE *out, const json_t *st, const json_t *spans)
{
    struct hist h;
    char buf[32];
    fputs("<figure class=\"latency\">\n<figcaption>Latency of ", out);
    html_text(out, jsonx_str(st, "name") ? jsonx_str(st, "name") : "?");
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

void html_figure_latency(FILE *out, const struct export_request *req, size_t index)
{
    const json_t *stages = json_object_get(json_object_get(req->results[index], "summary"),
                                           "stages");
    bool any = false;
    for (size_t i = 0; i < json_array_size(stages); i++) {
        const json_t *st = json_array_get(stages, i);
        const json_t *spans = json_object_get(st, "spans");
        if (jsonx_int(spans, "n", 0) < EXPORT_LATENCY_MIN_SPANS)
            continue;
        stage_histogram(out, st, spans);
        any = true;
    }
    if (any)
        fputs("<p class=\"note\">Bars: spans per duration bin (4 bins per doubling, logarithmic "
              "time axis; the scale on the left is the fullest bin). Dashed lines: nearest-rank "
              "percentiles over the spans of all ok runs (docs/statistics.md).</p>\n", out);
}
