/* html.h: what the HTML report's files share (html.c, the page and its charts; html_curves.c,
 * the counters over time): escaping and the chart geometry. Private to src/export. */
#ifndef MLBENCH_EXPORT_HTML_H
#define MLBENCH_EXPORT_HTML_H

#include <stdio.h>

#include "export/export.h"

#define CHART_W 860.0  /* width of every chart, px */
#define PLOT_X0 78.0   /* left edge of a plot (room for the y labels) */
#define PLOT_X1 840.0  /* right edge */

/* The style sheet of the pages (html.c): the report's, and the history dashboard's under its
 * own rules (history_html.c). */
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

/* The colour of a stage in every chart of the page (html.c). */
const char *html_stage_colour(const struct export_request *req, const char *name);
/* The resource timelines of result index's chosen run (html_timelines.c). */
void html_figure_timelines(FILE *out, const struct export_request *req, size_t index);

/* The training curves of result index (html_curves.c): one chart per counter the workload
 * sent over time (runs[].counters[].points), one line per measured run. */
void html_figure_curves(FILE *out, const struct export_request *req, size_t index);

/* The charts of req->sweep (html_sweep.c): each figure of the points (total median with its
 * interval, throughput counters, peak memory, GPU memory and utilisation, cost) against each
 * numeric parameter, and the Pareto fronts (time against cost when priced, against peak
 * memory); html_figure_find_max: peak memory against the parameter with the fitted line and
 * the budget, and the throughput of each probe. Nothing without a sweep. */
void html_figure_sweep(FILE *out, const struct export_request *req);
void html_figure_find_max(FILE *out, const struct export_request *req);

/* A percentile marked on a histogram: its label ("p99") and value, ns (NaN: not drawn). */
struct html_hist_mark {
    const char *label;
    double ns;
};
/* The SVG of a latency histogram (html_latency.c) on a log time axis: counts[0..n) of bins
 * `per` to an octave, the first bin `first` (bin i covers 2^((first+i)/per) ns up to the next),
 * marks in increasing order labelled on top; what names the counted things in the tooltips
 * ("spans", "queries"). */
void html_histogram_svg(FILE *out, double per, double first, const double *counts, size_t n,
                        const struct html_hist_mark *marks, size_t n_marks, const char *what);

/* The figures of a load result (html_load.c): per run that counts, latency (p50, p99) and
 * queries completed per second, the latency histogram; with --server-cmd the server's CPU
 * with the scenario runs shaded. */
void html_figure_load(FILE *out, const struct export_request *req, size_t index);
/* The server's CPU timeline of a load result's run with its scenario runs shaded
 * (html_timelines.c); nothing when the server was not sampled. */
void html_figure_load_cpu(FILE *out, const struct export_request *req, size_t index);

#endif
