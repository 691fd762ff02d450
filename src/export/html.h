/* html.h: what the HTML report's files share (html.c, the page and its charts; html_curves.c,
 * the counters over time): escaping and the chart geometry. Private to src/export. */
#ifndef MLBENCH_EXPORT_HTML_H
#define MLBENCH_EXPORT_HTML_H

#include <stdio.h>

#include "export/export.h"

#define CHART_W 860.0  /* width of every chart, px */
#define PLOT_X0 78.0   /* left edge of a plot (room for the y labels) */
#define PLOT_X1 840.0  /* right edge */

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

#endif
