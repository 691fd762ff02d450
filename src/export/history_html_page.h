/* history_html_page.h: the page of the HTML history dashboard as its two writers see it: the
 * page (history_html.c: the filters by label and host, the list of changes, the document
 * around them) and its charts (history_html_chart.c). What it filters on (struct
 * history_page), and what both write the same way (history_html_page.c): a host's name and
 * colour, a series' classes, the sentence of a change. Not thread-safe. */
#ifndef MLBENCH_EXPORT_HISTORY_HTML_PAGE_H
#define MLBENCH_EXPORT_HISTORY_HTML_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "export/history.h"

#define PILL_CHARS 40     /* of a name on a filter button */
#define N_PALETTE 10

/* Tableau 10, as the report's charts: one colour per host. */
extern const char *const history_html_palette[N_PALETTE];

/* The page being written and what it filters on (history_html.c fills it). */
struct history_page {
    FILE *out;
    const struct doc_history *d;
    const char **hosts;     /* distinct hosts of the results */
    size_t n_hosts;
    size_t *host_of;        /* per result: index in hosts */
    size_t *name_of;        /* per series: index of its name among the distinct names */
    size_t *name_first;     /* per name: its first series */
    size_t n_names;
};

/* host, or "(unknown host)" for NULL (a result without one). Borrowed or static. */
const char *history_html_host_name(const char *host);
/* Whether series k of pg->d has a point measured on host h (an index in pg->hosts). */
bool history_html_series_on_host(const struct history_page *pg, size_t k, size_t h);
/* Writes to pg->out the classes the filters' rules hide series k by: "s l<name>" and
 * " h<host>" for each host it has points of. */
void history_html_series_classes(const struct history_page *pg, size_t k);
/* Writes to out the sentence of change c of series s of d, as HTML: "<b>slower by 98.3 %</b>
 * from commit C (result ID): 20.1 ms -> 40.3 ms; the result before: commit B (ID)." */
void history_html_change(FILE *out, const struct doc_history *d, const struct doc_history_series *s,
                         const struct doc_history_change *c);

#endif
