/* html.h: the figures of the HTML report, one file each, drawn with html_draw.h; the page
 * (html.c) lists them in its table of figures and draws them where the outline places them
 * (enum export_figure). Each writes to out its figure of req->results[index] (the sweep's, of
 * req->sweep, ignore index). */
#ifndef MLBENCH_EXPORT_HTML_H
#define MLBENCH_EXPORT_HTML_H

#include <stdio.h>

#include "export/export.h"

/* The resource timelines of the result's chosen run (html_timelines.c). */
void html_figure_timelines(FILE *out, const struct export_request *req, size_t index);

/* The latency histograms of the result (html_latency.c): one per stage with at least
 * EXPORT_LATENCY_MIN_SPANS spans; nothing when there is none. */
void html_figure_latency(FILE *out, const struct export_request *req, size_t index);

/* The training curves of the result (html_curves.c): one chart per counter the workload sent
 * over time (runs[].counters[].points), one line per measured run. */
void html_figure_curves(FILE *out, const struct export_request *req, size_t index);

/* The charts of req->sweep (html_sweep.c): each figure of the points (total median with its
 * interval, throughput counters, peak memory, GPU memory and utilisation, cost) against each
 * numeric parameter, and the Pareto fronts (time against cost when priced, against peak
 * memory); html_figure_find_max: peak memory against the parameter with the fitted line and
 * the budget, and the throughput of each probe. Nothing without a sweep. */
void html_figure_sweep(FILE *out, const struct export_request *req, size_t index);
void html_figure_find_max(FILE *out, const struct export_request *req, size_t index);

/* The figures of a load result (html_load.c): per run that counts, latency (p50, p99) and
 * queries completed per second, the latency histogram. */
void html_figure_load(FILE *out, const struct export_request *req, size_t index);
/* The server's CPU timeline of a load result's run with its scenario runs shaded
 * (html_timelines.c); nothing when the server was not sampled. */
void html_figure_load_cpu(FILE *out, const struct export_request *req, size_t index);

#endif
