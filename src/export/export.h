/* export: the report formats of `mlbench report` (docs/reports.md). One exporter = one file =
 * one `struct exporter` (markdown.c, html.c, trace.c, csv.c), listed in the one table of
 * export.c; what they share is values.c, reproduce.c and request.c, the outline of the
 * documents outline.c. Exporters read result documents ("mlbench.result/1",
 * docs/result-schema.md), comparisons ("mlbench.comparison/1") and sweeps ("mlbench.sweep/1")
 * through the typed views of doc/ that export_write hands them in the request.
 *
 * The second half of this header is for the exporters themselves: formatting, the table model
 * and the document outline that the Markdown and HTML reports share, so that both say the same
 * things in the same order and only their markup differs. Not thread-safe. */
#ifndef MLBENCH_EXPORT_H
#define MLBENCH_EXPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>

#include <jansson.h>

#include "doc/comparison.h"
#include "doc/load.h"
#include "doc/result.h"
#include "doc/sweep.h"

#include "util/jsonx.h"   /* the tolerant getters every format uses */
#include "util/strbuf.h"
#include "util/strvec.h" /* the outline's lists, a sweep's sentences */
#include "export/table.h"  /* the table model every format renders */

/* What to render. results[0] is the baseline when there are several. */
struct export_request {
    json_t *const *results;    /* n result documents (borrowed) */
    struct doc_result *const *docs; /* the same n read (doc/result.h): export_write reads them */
    struct doc_load *const *loads; /* the load section of each (doc/load.h; present only in a
                                    * load result's): export_write reads them */
    const char *const *paths;  /* the file each was read from, for the reader; may be NULL */
    size_t n;
    json_t *comparison;        /* "mlbench.comparison/1" when n >= 2, else NULL (borrowed) */
    const struct doc_comparison *cmp; /* comparison read (doc/comparison.h), NULL without one:
                                * export_write reads it */
    int run;                   /* --run: index in runs[] to show, or -1 for the default */
    const char *table;         /* csv --table: stages (default, NULL), runs, samples, comparison,
                                * sweep (the default when sweep is set) */
    json_t *sweep;             /* "mlbench.sweep/1" when the results are a sweep's points (in
                                * its order, those with a result), else NULL (borrowed) */
    const struct doc_sweep *sweep_doc; /* sweep read (doc/sweep.h) when it is set, else NULL:
                                * export_write reads it */
};

/* Return values of exporter write functions. */
#define EXPORT_OK 0
#define EXPORT_EIO (-1)        /* the output could not be written */
#define EXPORT_EREQUEST (-2)   /* the request cannot be met (bad --table, --run out of range) */

/* Options an exporter reads, so the command can refuse the others. */
#define EXPORT_USES_RUN 1u     /* --run N */
#define EXPORT_USES_TABLE 2u   /* --table NAME */

struct exporter {
    const char *name;          /* --format value */
    const char *alias;         /* another accepted value, or NULL */
    const char *extension;     /* usual file name extension, without the dot */
    const char *description;   /* one line for --help */
    unsigned uses;             /* EXPORT_USES_* */
    /* Writes the report to out. Returns EXPORT_OK, or EXPORT_EIO / EXPORT_EREQUEST with a
     * message in err. Writes nothing useful on error: callers write to a temporary file. */
    int (*write)(FILE *out, const struct export_request *req, char *err, size_t errlen);
};

extern const struct exporter export_markdown;
extern const struct exporter export_html;
extern const struct exporter export_trace;
extern const struct exporter export_csv;

/* Writes the report of req in format e to out: reads the documents of req (req->docs,
 * req->loads, req->sweep_doc, req->cmp), then e->write. Returns what e->write returns. */
int export_write(const struct exporter *e, FILE *out, const struct export_request *req,
                 char *err, size_t errlen);

/* The exporter whose name or alias is name, or NULL. */
const struct exporter *export_find(const char *name);
/* The exporter whose extension ends path (".html", ".md", ...), or NULL. */
const struct exporter *export_for_path(const char *path);
/* The i-th exporter of the table (NULL past the end): for listing them in help texts. */
const struct exporter *export_at(size_t i);

/* ---- for the exporters ---------------------------------------------------------------- */

/* The end of every write function: flushes out and reports a write error on it as
 * EXPORT_EIO ("cannot write <what>: <reason>"); EXPORT_OK otherwise. */
int export_finish(FILE *out, const char *what, char *err, size_t errlen);

/* Whether s ends with suffix and has something before it. */
bool export_ends_with(const char *s, const char *suffix);
#define EXPORT_MAX_DEPTH 19 /* deeper nesting is shown at this depth */

/* req->run when it is not -1, else the representative run of result (doc_result_median_run):
 * an index in runs[], or -1 when it has none. */
int export_chosen_run(const struct export_request *req, const struct doc_result *result);
/* Checks that req->run, when given, names a run of every result. Returns 0, or
 * EXPORT_EREQUEST with a message. */
int export_check_run(const struct export_request *req, char *err, size_t errlen);

/* The shell command that makes the measurement again: "mlbench run" with the options kept
 * in the result's config and label, then "--" and the command, each word shell-quoted; for a
 * load result (load present: its load section) the mlbench load command it recorded; for one
 * timed in-process (mlbench record) the command that ran the timer. New string owned by the
 * caller. */
char *export_reproduce_command(const struct doc_result *result, const struct doc_load *load);
/* s quoted for a POSIX shell when it needs it ('it'\''s'). New string owned by the caller. */
char *export_shell_quote(const char *s);
/* The n words, each quoted as export_shell_quote does (NULL as ''), joined by spaces (a new
 * string; "" for none). */
char *export_shell_join(const char *const *words, size_t n);
/* s with what could drive a terminal replaced by '?' (term_clean's rule: C0 controls but
 * newline, DEL, C1 controls, bidi overrides, bytes that are not UTF-8); a new string. Markdown
 * and CSV write names, labels and metadata through it, since those files are read with cat
 * too; HTML escapes by its own rules and JSON by jansson's. */
char *export_clean(const char *s);
/* Markdown inline text (markdown.c): text cleaned (export_clean) and escaped so that it renders
 * as written; in_table: in a table cell or heading ('|' escaped, line breaks as spaces). */
void export_md_text(FILE *out, const char *text, int in_table);
/* A CSV field (csv.c), RFC 4180: quoted when it holds a comma, a quote or a line break,
 * cleaned (export_clean), and text a spreadsheet would take for a formula (starting with
 * = + - @, a tab or a carriage return) kept text by a leading ' inside quotes. NULL: empty. */
void export_csv_field(FILE *out, const char *text);
/* A CSV number field: digits that read back the same double; empty when v is not finite. */
void export_csv_num(FILE *out, double v);

/* Formatting into buf (returned): "-" for a value that is NAN (not measured). */
char *export_fmt_duration(double ns, char *buf, size_t len);  /* "50.11 ms" */
char *export_fmt_bytes(double bytes, char *buf, size_t len);  /* "2.4 MiB" */
char *export_fmt_num(double v, const char *fmt, double scale, char *buf, size_t len);
/* Any JSON value as text: strings as they are, numbers with %.6g, null as "-", containers
 * as compact JSON. */
char *export_fmt_value(const json_t *v, char *buf, size_t len);
/* A counter's rate ("3070/s in train, 718.8/s over the run"): over the stage its samples were
 * sent in (summary.counters[].stage) when it has one, and over the whole run. Names are not
 * cleaned: the caller's output rules apply. */
char *export_fmt_counter_rate(const struct doc_counter *counter, char *buf, size_t len);
/* A number with enough digits to read back the same double (CSV, trace arguments). */
char *export_fmt_exact(double v, char *buf, size_t len);

/* The colour index of a stage: its position among the stage names of all results
 * (summary.stages order of req->docs, baseline first), so a stage keeps its colour in every
 * chart. */
size_t export_stage_colour(const struct export_request *req, const char *name);

/* What export_cmp_pairs shows of a candidate side by side. */
enum export_cmp_pairs {
    EXPORT_CMP_COUNTERS,
    EXPORT_CMP_METADATA,
    EXPORT_CMP_RESOURCES,
    EXPORT_CMP_ENVIRONMENT, /* the environment differences */
};

/* The comparison tables of one candidate of a comparison (compare_tables.c, doc/comparison.h),
 * for the outline: each starts t (the caller frees it) and returns its number of rows (0:
 * nothing to show). Stages: indented by depth, change and verdict toned; alpha gives the
 * interval's level. Latency: p50 and p99 of the stages that have them. Pairs: the
 * baseline/candidate rows of what; counters and metadata whose values differ, and environment
 * differences that matter, are toned DIFFERS and say so in a last column (resources have
 * none: their figures always differ a little). */
size_t export_cmp_stages(struct export_table *t, const struct doc_cmp_candidate *cand,
                         double alpha);
size_t export_cmp_latency(struct export_table *t, const struct doc_cmp_candidate *cand,
                          double alpha);
size_t export_cmp_pairs(struct export_table *t, const struct doc_cmp_candidate *cand,
                        enum export_cmp_pairs what);

/* Starts t as the two-column (property, value) table of a result's environment object env
 * (env_table.c); the caller frees it. */
void export_env_table(struct export_table *t, const json_t *env);

/* The answer a report opens with (answer.c); new strings owned by the caller, plain text.
 * export_answer_verdict: "Verdict: <bottleneck> is the bottleneck (<share>), <rule>: <evidence>."
 * or why there is none (no measured run, no analysis, no bottleneck). */
char *export_answer_verdict(const struct doc_result *result);
/* "Total: <median> median, <level> interval <lo> .. <hi>, over <n> runs (<ok> ok)." */
char *export_answer_total(const struct doc_result *result);
/* The first max findings of analysis.findings, in its order (the one the analysis gives, which
 * agrees with the bottleneck), one line each, into out[0..max). Returns how many. */
size_t export_answer_findings(const struct doc_result *result, size_t max, char **out);
/* The verdict of the total of one candidate of a comparison against baseline (its name):
 * verdict, change, speedup, ratio interval, p; for load results, per scenario run its metric
 * percentile and throughput. */
char *export_answer_comparison(const struct doc_cmp_candidate *candidate, const char *baseline);

/* Figures a format may draw where the outline places them (the Markdown report has none). */
enum export_figure {
    EXPORT_FIGURE_BREAKDOWN, /* stage breakdown of every result: stacked bars */
    EXPORT_FIGURE_TIMELINES, /* resource timelines of one result's representative run */
    EXPORT_FIGURE_LATENCY,   /* latency histograms of one result's repeating stages */
    EXPORT_FIGURE_CURVES,    /* counters over time (loss, images/s) of one result, all runs */
    EXPORT_FIGURE_SWEEP,     /* req->sweep: each figure against each numeric parameter, Pareto */
    EXPORT_FIGURE_FIND_MAX,  /* req->sweep in find-max mode: memory and throughput per probe */
    EXPORT_FIGURE_LOAD,      /* a load result's runs: latency and QPS per second, histogram,
                              * the server's CPU with the runs shaded (html_load.c,
                              * html_timelines.c) */
};

/* Parts of a report a format may mark up as a whole. */
enum export_group {
    EXPORT_GROUP_ANSWER, /* the verdict, chart and top findings a report opens with */
    EXPORT_GROUP_FOLDED, /* a section shown folded (HTML <details>), its heading the title */
};

/* Stages with at least this many spans (summary.stages[].spans.n) get latency percentiles in
 * the terminal summary and the reports, and a histogram in the HTML report. */
#define EXPORT_LATENCY_MIN_SPANS 20

/* Starts t as the latency table of a result's summary.stages: a row (indented by depth) per
 * stage with at least EXPORT_LATENCY_MIN_SPANS spans: stage, spans, p50, p90, p99, p99.9,
 * max. The caller frees it; nrows == 0 when no stage qualifies. */
void export_latency_table(struct export_table *t, const struct doc_summary *s);

/* result_tables.c: a multi-rank job's stages across its ranks (summary.ranks): per stage the
 * slowest, median and fastest rank's time, the skew and the slowest rank with its excess over
 * the median; nrows == 0 with fewer than 2 ranks. And the other hosts of a job across hosts
 * (runs[].hosts of result, means over the measured runs): host, its ranks, the CPU cores its
 * ranks' processes used, how busy the host was, their peak memory; nrows == 0 without any.
 * The caller frees them. */
void export_ranks_table(struct export_table *t, const struct doc_ranks *ranks);
void export_hosts_table(struct export_table *t, const struct doc_result *result);

/* The primitives a document format provides to export_outline. text is plain UTF-8: the
 * format escapes it. */
struct export_outline_ops {
    void (*heading)(void *ctx, int level, const char *text);
    void (*paragraph)(void *ctx, const char *text);
    void (*list)(void *ctx, const char *const *items, size_t n);
    void (*table)(void *ctx, const struct export_table *t);
    void (*code)(void *ctx, const char *text);   /* a shell command, shown as is */
    /* Optional (NULL: figures are left out). result: index in req->results. */
    void (*figure)(void *ctx, enum export_figure fig, const struct export_request *req,
                   size_t result);
    /* Optional: the start of a group (title and level: the heading of a FOLDED one) and its
     * end. Without them an ANSWER is just its content and a FOLDED section a heading. */
    void (*group_begin)(void *ctx, enum export_group g, int level, const char *title);
    void (*group_end)(void *ctx, enum export_group g);
};

/* Walks the report in reading order (title; with several results the answer of the comparison
 * and the comparison; then for each result: summary (the answer: verdict, total, stage chart,
 * top findings), results, analysis, resource use, warnings, workload and configuration,
 * methodology, environment (folded), runs, how to reproduce) calling ops. */
void export_outline(const struct export_request *req, const struct export_outline_ops *ops,
                    void *ctx);

/* s, or fallback where s is NULL (a member the document lacks). */
static inline const char *str_or(const char *s, const char *fallback)
{
    return s ? s : fallback;
}

#endif
