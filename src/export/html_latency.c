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

/* Whether the histogram of a stage's spans can be drawn: bins within bounds, counts numbers
 * >= 0, one of them not 0 (a document from elsewhere: bounds are checked here too). */
static bool hist_drawable(const struct doc_histogram *h)
{
    double per = h->bins_per_octave, first = h->first_bin, max_count = 0;
    if (!(per >= 1 && per <= 64) || !(first >= 0 && first < 64 * per) || h->n == 0 ||
        h->n > 64 * per - first)
        return false;
    for (size_t i = 0; i < h->n; i++) {
        double c = doc_histogram_count(h, i);
        if (!(c >= 0) || !isfinite(c))
            return false;
        if (c > max_count)
            max_count = c;
    }
    return max_count > 0;
}

/* One stage's histogram figure. */
static void stage_histogram(FILE *out, const struct doc_stage *st)
{
    const struct doc_spans *spans = &st->spans;
    const struct doc_histogram *h = &spans->histogram;
    char buf[32];
    fputs("<figure class=\"latency\">\n<figcaption>Latency of ", out);
    html_text(out, st->name ? st->name : "?");
    fprintf(out, ": %lld spans, median %s</figcaption>\n", spans->n,
            export_fmt_duration(spans->p50_ns, buf, sizeof buf));
    if (!hist_drawable(h)) {
        fputs("<p>The histogram of this stage is missing or malformed: nothing to draw.</p>\n"
              "</figure>\n", out);
        return;
    }
    double *counts = xcalloc(h->n, sizeof *counts);
    for (size_t i = 0; i < h->n; i++)
        counts[i] = doc_histogram_count(h, i);
    const struct html_hist_mark marks[] = {
        {"p50", spans->p50_ns}, {"p90", spans->p90_ns}, {"p99", spans->p99_ns},
        {"p99.9", spans->p999_ns}};
    html_histogram_svg(out, h->bins_per_octave, h->first_bin, counts, h->n, marks,
                       sizeof marks / sizeof marks[0], "spans");
    free(counts);
    fputs("</figure>\n", out);
}

void html_figure_latency(FILE *out, const struct export_request *req, size_t index)
{
    const struct doc_summary *s = &req->docs[index]->summary;
    bool any = false;
    for (size_t i = 0; i < s->n_stages; i++) {
        if (s->stages[i].spans.n < EXPORT_LATENCY_MIN_SPANS)
            continue;
        stage_histogram(out, &s->stages[i]);
        any = true;
    }
    if (any)
        fputs("<p class=\"note\">Bars: spans per duration bin (4 bins per doubling, logarithmic "
              "time axis; the scale on the left is the fullest bin). Dashed lines: nearest-rank "
              "percentiles over the spans of all ok runs (docs/statistics.md).</p>\n", out);
}
