/* history.h: the views of `mlbench history` (docs/store.md), drawn from the model of
 * doc/history.h, which the store (store/history.c) and the analysis (analysis/history.c) fill:
 * the text table with its trend lines and changes (history_text.c), the JSON document
 * (history_json.c), and the dashboards of --format md|csv|html, one format = one file
 * (history_md.c, history_csv.c, history_html.c), listed in the table of history_format.c. What
 * the dashboards share is history.c's. Not thread-safe. */
#ifndef MLBENCH_EXPORT_HISTORY_H
#define MLBENCH_EXPORT_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "doc/history.h"

/* A dashboard format: one file each, listed in history_format.c. */
struct history_format {
    const char *name;              /* --format value */
    const char *extension;         /* of -o files that choose it, without the dot */
    /* Writes the dashboard to out. Returns EXPORT_OK, or EXPORT_EIO with a message in err;
     * writes nothing useful on error (the caller writes to a temporary file). */
    int (*write)(FILE *out, const struct doc_history *d, char *err, size_t errlen);
};

extern const struct history_format history_md;
extern const struct history_format history_csv;
extern const struct history_format history_html;

/* The format named name, or NULL. */
const struct history_format *history_format_find(const char *name);
/* The format whose extension ends path ("dash.html"), or NULL. */
const struct history_format *history_format_for_path(const char *path);

/* The text of `mlbench history`, as a terminal shows it: the results as a table (the first
 * figures, the load column), a trend line per benchmark and figure, and with h->detect the
 * changes found, with the commits either side. Composed in memory and written through
 * term_clean (a canvas, util/term.h). Returns 0, or -1 when out cannot be written. */
int history_text_print(FILE *out, const struct doc_history *h);

/* The JSON document of the history (schema mlbench.history/1, docs/store.md): every result
 * with its figures and load figures, and with h->detect the step changes found; indented, ASCII,
 * then a newline. Write errors are left to the caller (ferror). */
void history_json_print(FILE *out, const struct doc_history *h);

/* ---- for the renderers (history.c) ---------------------------------------------------- */

/* Whether tmpl can make a link: it holds "{}". */
bool history_commit_url_ok(const char *tmpl);
/* tmpl with every "{}" replaced by commit, each byte of which but [0-9A-Za-z._~-] written as
 * %XX (commits are hex; a hostile result file's need not be). New string owned by the caller;
 * NULL when tmpl or commit is NULL. The template is the user's and is kept as given: the
 * caller escapes the whole for its format. */
char *history_commit_url(const char *tmpl, const char *commit);
/* The first 12 characters of commit into buf (13 bytes), or "" for none. Returns buf. */
char *history_short_commit(const char *commit, char *buf);
/* How a series is named: its label, "command <command>", or a sentence for results with
 * neither. New string owned by the caller; not escaped. */
char *history_series_name(const struct doc_history_series *s);
/* The time of an ISO 8601 UTC string, in seconds since 1970; NAN when it is not one. */
double history_time(const char *created);
/* created as "2026-05-01 10:00:03" (seconds, no zone) into buf; "-" when NULL. Returns buf. */
char *history_created(const char *created, char *buf, size_t len);
/* The unit of an axis whose largest value is max_ns: ns, µs, ms or s, and its size in ns. */
const char *history_unit(double max_ns, double *scale);
/* "slower by 98.3 %" / "faster by 12.0 %" (no commit): the size of a change. */
char *history_change_size(const struct doc_history_change *c, char *buf, size_t len);
/* The hosts of the results, in order of first appearance (a NULL host is one of them). Returns
 * their count and in *hosts an array the caller frees; in *host_of (optional; freed by the
 * caller) the index of each result's host. */
size_t history_hosts(const struct doc_history *d, const char ***hosts, size_t **host_of);
/* Says that nothing matched: "No results with label 'x' from host 'y' in the store S." New
 * string owned by the caller; not escaped. */
char *history_nothing(const struct doc_history *d);
/* The filters given, as a sentence ("Only results with label 'x' from host 'y', the newest
 * 20."), or NULL when none was. New string owned by the caller; not escaped. */
char *history_filters(const struct doc_history *d);

#endif
