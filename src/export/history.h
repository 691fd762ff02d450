/* history.h: the dashboards of `mlbench history --format md|csv|html` (docs/store.md). The
 * command (cli/cmd_history.c) reads the store, groups the results into series (one benchmark:
 * a label, or a command without one, and one stage), runs the step detection of
 * analysis/detect.h on each, and fills the plain model below; the renderers here only draw it,
 * so src/export stays on util alone. One format = one file (history_md.c, history_csv.c,
 * history_html.c), listed in the table of history_format.c; the helpers they share are
 * history.c's. The text and JSON views stay in the command (they show what the model leaves
 * out: failed results, load figures). Not thread-safe. */
#ifndef MLBENCH_EXPORT_HISTORY_H
#define MLBENCH_EXPORT_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* One stored result. Strings are borrowed from the caller; optional ones are NULL. */
struct history_result {
    const char *id;
    const char *created;  /* ISO 8601 UTC ("2026-05-01T10:00:00.123Z"); optional */
    const char *label;    /* optional */
    const char *command;  /* argv joined by spaces; "" or NULL for none (a load result) */
    const char *host;     /* optional */
    const char *commit;   /* git commit of the working directory it was measured in; optional */
};

/* One result's figure in a series: its median with the interval of the median. */
struct history_point {
    size_t result;                 /* index in history_doc.results */
    long n;                        /* runs the median is over (0: unknown) */
    double median_ns;              /* finite, > 0 */
    double ci_low_ns, ci_high_ns;  /* NAN when unknown */
    double ci_level;               /* coverage of that interval, 0..1; NAN when unknown */
};

/* A step change detected in a series (analysis/detect.h). */
struct history_change {
    size_t point;                  /* the first point after the change (>= 1) */
    double before_ns, after_ns;    /* levels of the segments either side */
    double change_pct;             /* 100 (after / before - 1): > 0 slower */
    double z;                      /* strength, in standard errors */
};

/* One benchmark and stage over time: the results of one label (or, without a label, one
 * command) that have the figure from runs that succeeded, oldest first. */
struct history_series {
    const char *label;             /* NULL: results without a label, named by command */
    const char *command;           /* of the first result of the series */
    const char *stage;             /* "total" (the whole run) or a stage name */
    const struct history_point *points;
    size_t n_points;               /* may be 0: no result of the series succeeded */
    const struct history_change *changes; /* in order */
    size_t n_changes;
};

/* What a dashboard shows: the results, oldest first, and their series. */
struct history_doc {
    const char *store;             /* as messages name it */
    const char *label, *host, *stage; /* filters given, or NULL */
    size_t last;                   /* --last, or 0 */
    const char *commit_url;        /* template with "{}" for the commit, or NULL */
    double min_effect_pct;         /* smallest change detection reports */
    const struct history_result *results;
    size_t n_results;
    const struct history_series *series;
    size_t n_series;
};

/* A dashboard format: one file each, listed in history_format.c. */
struct history_format {
    const char *name;              /* --format value */
    const char *extension;         /* of -o files that choose it, without the dot */
    /* Writes the dashboard to out. Returns EXPORT_OK, or EXPORT_EIO with a message in err;
     * writes nothing useful on error (the caller writes to a temporary file). */
    int (*write)(FILE *out, const struct history_doc *d, char *err, size_t errlen);
};

extern const struct history_format history_md;
extern const struct history_format history_csv;
extern const struct history_format history_html;

/* The format named name, or NULL. */
const struct history_format *history_format_find(const char *name);
/* The format whose extension ends path ("dash.html"), or NULL. */
const struct history_format *history_format_for_path(const char *path);

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
char *history_series_name(const struct history_series *s);
/* The time of an ISO 8601 UTC string, in seconds since 1970; NAN when it is not one. */
double history_time(const char *created);
/* created as "2026-05-01 10:00:03" (seconds, no zone) into buf; "-" when NULL. Returns buf. */
char *history_created(const char *created, char *buf, size_t len);
/* The unit of an axis whose largest value is max_ns: ns, µs, ms or s, and its size in ns. */
const char *history_unit(double max_ns, double *scale);
/* "slower by 98.3 %" / "faster by 12.0 %" (no commit): the size of a change. */
char *history_change_size(const struct history_change *c, char *buf, size_t len);
/* The hosts of the results, in order of first appearance (a NULL host is one of them). Returns
 * their count and in *hosts an array the caller frees; in *host_of (optional; freed by the
 * caller) the index of each result's host. */
size_t history_hosts(const struct history_doc *d, const char ***hosts, size_t **host_of);
/* Says that nothing matched: "No results with label 'x' from host 'y' in the store S." New
 * string owned by the caller; not escaped. */
char *history_nothing(const struct history_doc *d);
/* The filters given, as a sentence ("Only results with label 'x' from host 'y', the newest
 * 20."), or NULL when none was. New string owned by the caller; not escaped. */
char *history_filters(const struct history_doc *d);

#endif
