/* html_draw.h: what every HTML page of src/export draws with (html_draw.c): the report's page
 * (html.c) and its figures (html_*.c), the history dashboard (history_html*.c). Escaping, the
 * style sheet, the chart geometry and axes, the stage colours and the latency histogram. A
 * leaf: it calls none of the files that use it. */
#ifndef MLBENCH_EXPORT_HTML_DRAW_H
#define MLBENCH_EXPORT_HTML_DRAW_H

#include <stdio.h>

#include "export/export.h"

#define CHART_W 860.0  /* width of every chart, px */
#define PLOT_X0 78.0   /* left edge of a plot (room for the y labels) */
#define PLOT_X1 840.0  /* right edge */

/* The style sheet of the pages: the report's, and the history dashboard's under its own
 * rules (history_html.c). */
extern const char html_style[];

/* raw escaped for HTML text and attributes, cleaned of terminal controls (export_clean). */
void html_text(FILE *out, const char *raw);
/* s cut to at most max characters (UTF-8 aware, max >= 1), with an ellipsis when cut, escaped
 * as html_text does: labels inside charts. */
void html_short_text(FILE *out, const char *s, size_t max);
/* The smallest 1, 2, 2.5 or 5 times a power of ten that is >= v (v > 0). */
double html_nice_ceil(double v);
/* Ticks along the time axis of a plot from x0 to PLOT_X1 spanning [0, span_ns], with grid
 * lines from y_top to y_bottom; nothing unless span_ns is finite and positive. */
void html_time_axis(FILE *out, double x0, double span_ns, double y_top, double y_bottom);

/* The colour of a stage in every chart of the page (export_stage_colour's index in the
 * palette). */
const char *html_stage_colour(const struct export_request *req, const char *name);

/* A percentile marked on a histogram: its label ("p99") and value, ns (NaN: not drawn). */
struct html_hist_mark {
    const char *label;
    double ns;
};
/* The SVG of a latency histogram on a log time axis: counts[0..n) of bins `per` to an octave,
 * the first bin `first` (bin i covers 2^((first+i)/per) ns up to the next), marks in
 * increasing order labelled on top; what names the counted things in the tooltips ("spans",
 * "queries"). */
void html_histogram_svg(FILE *out, double per, double first, const double *counts, size_t n,
                        const struct html_hist_mark *marks, size_t n_marks, const char *what);

#endif
