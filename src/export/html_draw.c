/* html_draw.c: what every HTML page of src/export draws with (html_draw.h): escaping, the
 * style sheet, the chart geometry (nice axis ends, the time axis, the stage colours) and the
 * latency histogram (a stage's spans in the report, a load run's queries). Calls none of the
 * pages or figures that use it. */
#include "export/html_draw.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/units.h"
#include "util/xalloc.h"

/* Tableau 10: distinct, readable on white, kind to colour-blind readers. */
static const char *const palette[] = {
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
};
#define N_PALETTE (sizeof palette / sizeof palette[0])

const char *html_stage_colour(const struct export_request *req, const char *name)
{
    return palette[export_stage_colour(req, name) % N_PALETTE];
}

/* Cleaned of terminal controls too: a browser ignores them, `cat report.html` would not. */
void html_text(FILE *out, const char *raw)
{
    char *s = export_clean(raw);
    for (const char *p = s; *p; p++) {
        switch (*p) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&#39;", out); break;
        default: fputc(*p, out);
        }
    }
    free(s);
}

void html_short_text(FILE *out, const char *s, size_t max)
{
    size_t chars = 0, cut = 0;
    for (const char *p = s; *p; p++)
        if (((unsigned char)*p & 0xC0) != 0x80 && chars++ == max - 1)
            cut = (size_t)(p - s);
    if (chars <= max) {
        html_text(out, s);
        return;
    }
    char *head = xstrndup(s, cut);
    html_text(out, head);
    fputs("\u2026", out);
    free(head);
}

/* ---- charts --------------------------------------------------------------------------- */

double html_nice_ceil(double v)
{
    double p = pow(10, floor(log10(v)));
    static const double steps[] = {1, 2, 2.5, 5, 10};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if (steps[i] * p >= v * (1 - 1e-12))
            return steps[i] * p;
    return 10 * p;
}

void html_time_axis(FILE *out, double x0, double span_ns, double y_top, double y_bottom)
{
    double step = html_nice_ceil(span_ns / 6);
    char buf[32];
    /* A span from a file may be anything (1e308 ns made step infinite and this loop endless,
     * filling the disk): no axis unless both are finite, and never more than a dozen ticks. */
    if (!isfinite(span_ns) || !(span_ns > 0) || !isfinite(step) || !(step > 0))
        return;
    for (int i = 0; i <= 12; i++) {
        double t = i * step;
        if (t > span_ns * (1 + 1e-9))
            break;
        double x = x0 + (PLOT_X1 - x0) * t / span_ns;
        fprintf(out, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
                x, y_top, x, y_bottom);
        fprintf(out, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s"
                "</text>\n", x, y_bottom + 14, t == 0 ? "0" : units_duration(t, buf, sizeof buf));
    }
}

/* ---- the style sheet ------------------------------------------------------------------ */

const char html_style[] =
    "body{margin:0;background:#fafafa;color:#1f2937;font:15px/1.5 system-ui,-apple-system,"
    "'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif}\n"
    "main{max-width:940px;margin:0 auto;padding:24px 28px 48px;background:#fff;"
    "box-shadow:0 0 0 1px #e5e7eb}\n"
    "h1{font-size:1.6em;margin:.2em 0 .6em}h2{font-size:1.3em;margin-top:1.8em;"
    "border-bottom:1px solid #e5e7eb;padding-bottom:.2em}h3{font-size:1.1em;margin-top:1.4em}\n"
    ".scroll{overflow-x:auto}table{border-collapse:collapse;margin:.6em 0 1em;font-size:.9em}\n"
    "th,td{padding:.25em .7em;border-bottom:1px solid #e5e7eb;text-align:left;"
    "vertical-align:top}th{background:#f3f4f6;font-weight:600}\n"
    "td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    "td.faster{color:#15803d;font-weight:600}td.slower{color:#b91c1c;font-weight:600}"
    "td.unreliable{color:#6b7280;font-style:italic}td.differs{background:#fef9c3}\n"
    "pre{background:#f3f4f6;padding:.7em 1em;overflow-x:auto;border-radius:4px}"
    "code{font:13px/1.4 ui-monospace,'SFMono-Regular',Menlo,Consolas,monospace}\n"
    "figure{margin:1em 0}figcaption{font-weight:600;font-size:.9em;margin-bottom:.2em}\n"
    "svg.chart{max-width:100%;height:auto;font:11px system-ui,sans-serif}\n"
    "svg .grid{stroke:#eceef1}svg .axis{stroke:#9ca3af}svg .tick{fill:#6b7280}"
    "svg .rowlabel{fill:#1f2937;font-size:12px}svg .seglabel{fill:#fff;font-size:11px;"
    "font-weight:600;pointer-events:none}\n"
    ".legend span,.key{display:inline-block;margin:0 1em .3em 0;font-size:.85em;"
    "font-weight:400}.legend i,.key i{display:inline-block;width:.9em;height:.9em;"
    "margin-right:.35em;vertical-align:-.1em;border-radius:2px}\n"
    ".note,footer{color:#6b7280;font-size:.85em}\n"
    "svg .axislabel{fill:#374151;font-size:12px}svg .ptlabel{fill:#1f2937;font-size:11px}"
    "svg .failed{fill:#b91c1c;font-size:15px;font-weight:700}.legend b.failed{color:#b91c1c;"
    "margin-right:.35em}\n"
    "section.answer{border-left:4px solid #4e79a7;padding:.1em 0 .1em 1em;margin:.4em 0 1em}\n"
    "section.answer>p:first-child{font-size:1.1em;font-weight:600}\n"
    "details.folded>summary{cursor:pointer}details.folded>summary>h2,"
    "details.folded>summary>h3{display:inline-block;margin:1.2em 0 .4em}\n"
    /* changes in a comparison (the class of a table cell): the text says the same */
    ".faster{color:#15803d;font-weight:600}.slower{color:#b91c1c;font-weight:600}"
    ".unreliable{color:#6b7280;font-style:italic}\n"
    "@media print{.faster{color:#166534}.slower{color:#991b1b}.unreliable{color:#4b5563}"
    "main{box-shadow:none}}\n";

/* ---- the latency histogram ------------------------------------------------------------ */

#define HIST_W 860.0
#define HIST_X0 60.0
#define HIST_X1 840.0
#define HIST_TOP 34.0    /* room for the percentile labels */
#define HIST_BOTTOM 150.0
#define HIST_HEIGHT 172.0
#define HIST_BAR_COLOUR "#4e79a7"
#define HIST_MARK_COLOUR "#b91c1c"

/* x of a duration in ns on the axis from bin lo to bin hi (in octaves: log2 ns). */
static double x_of(double ns, double lo, double hi)
{
    double l = ns >= 1 ? log2(ns) : 0;
    double x = HIST_X0 + (HIST_X1 - HIST_X0) * (l - lo) / (hi - lo);
    return x < HIST_X0 ? HIST_X0 : x > HIST_X1 ? HIST_X1 : x;
}

/* Ticks at 1, 2 and 5 times the powers of ten between lo and hi (octaves); only the powers of
 * ten when the axis spans more than two decades. */
static void log_axis(FILE *out, double lo, double hi)
{
    char buf[32];
    bool minor = (hi - lo) * log10(2) <= 2;
    fprintf(out, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
            HIST_X0, HIST_BOTTOM, HIST_X1, HIST_BOTTOM);
    for (int e = 0; e <= 19; e++) {
        for (int m = 1; m <= 5; m += m == 1 ? 1 : 3) {
            double ns = m * pow(10, e), l = log2(ns);
            if (l < lo - 1e-9 || l > hi + 1e-9 || (m > 1 && !minor))
                continue;
            double x = x_of(ns, lo, hi);
            fprintf(out, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                    "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                    x, HIST_TOP, x, HIST_BOTTOM, x, HIST_BOTTOM + 14,
                    units_duration(ns, buf, sizeof buf));
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
        const char *anchor = x > HIST_X1 - 70 ? "end" : x < HIST_X0 + 50 ? "start" : "middle";
        fprintf(out, "<g class=\"pct\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                "stroke=\"%s\" stroke-dasharray=\"3 2\"/><text x=\"%.1f\" y=\"%.1f\" "
                "text-anchor=\"%s\" fill=\"%s\">%s %s</text></g>\n", x, y + 3, x, HIST_BOTTOM,
                HIST_MARK_COLOUR, x, y, anchor, HIST_MARK_COLOUR, names,
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
            HIST_W, HIST_HEIGHT, HIST_W, HIST_HEIGHT);
    log_axis(out, lo, hi);
    for (size_t i = 0; i < n; i++) {
        double c = counts[i];
        if (c <= 0)
            continue;
        double b0 = (first + (double)i) / per, b1 = b0 + 1 / per;
        double x = HIST_X0 + (HIST_X1 - HIST_X0) * (b0 - lo) / (hi - lo);
        double w = (HIST_X1 - HIST_X0) * (b1 - b0) / (hi - lo);
        double bh = (HIST_BOTTOM - HIST_TOP) * c / max_count;
        char from[32], to[32];
        fprintf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\" "
                "stroke=\"#fff\" stroke-width=\"0.5\"><title>%.0f %s of %s .. %s</title>"
                "</rect>\n", x, HIST_BOTTOM - bh, w, bh, HIST_BAR_COLOUR, c, what,
                units_duration(exp2(b0), from, sizeof from),
                units_duration(exp2(b1), to, sizeof to));
    }
    percentile_marks(out, marks, n_marks, lo, hi);
    fprintf(out, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.0f</text>\n",
            HIST_X0 - 4, HIST_TOP + 4, max_count);
    fputs("</svg>\n", out);
}
