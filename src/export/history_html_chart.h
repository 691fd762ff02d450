/* history_html_chart.h: the chart of one series of the HTML history dashboard
 * (history_html_chart.c), which the page (history_html.c) writes one of per series. */
#ifndef MLBENCH_EXPORT_HISTORY_HTML_CHART_H
#define MLBENCH_EXPORT_HISTORY_HTML_CHART_H

#include <stddef.h>

#include "export/history_html_page.h"

/* Writes to pg->out the chart of series k: a <figure> with its caption, an SVG of the medians
 * per host with the step changes marked, a legend of the hosts and the list of its changes; a
 * sentence instead of the SVG when nothing of it can be drawn. */
void history_html_chart(const struct history_page *pg, size_t k);

#endif
