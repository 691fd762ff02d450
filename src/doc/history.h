/* doc/history: the history of a store, what `mlbench history` shows (docs/store.md): the
 * stored results, oldest first, with the figures the store's index holds of each, grouped
 * into benchmarks (the results of one label, or of one command without a label) and series (a
 * benchmark's figure of one stage over time) with the step changes found in each. The model is
 * filled in two steps, the results by the store (store/history.c) and the benchmarks, the
 * stages shown and the series by the analysis (analysis/history.c), and every view draws it
 * (export/history*.c: the text table, the JSON document mlbench.history/1 and the
 * dashboards), so that the views stay on doc/ and util/. The answer every part needs, a
 * result's figure by stage name, is given here once.
 *
 * Strings are borrowed from whoever filled the model; optional ones are NULL. A model is not
 * modified by its views; reading distinct models is thread-safe. */
#ifndef MLBENCH_DOC_HISTORY_H
#define MLBENCH_DOC_HISTORY_H

#include <stdbool.h>
#include <stddef.h>

#define DOC_HISTORY_TOTAL "total" /* the whole run, named as a stage */
#define DOC_HISTORY_LOADS_MAX 8   /* scenario runs kept per load result */

/* Statistics of one figure of a result, as its summary gives them; NAN where null. */
struct doc_history_stats {
    long n;              /* runs the figure is over (0: unknown) */
    double median_ns;
    double ci_low_ns, ci_high_ns; /* interval of the median */
    double ci_level;     /* coverage of that interval, 0..1 */
    double mad_ns;       /* raw median absolute deviation */
};

/* A stage of a result's summary. */
struct doc_history_stage {
    const char *name;
    int depth;           /* nesting depth, 0 = outermost */
    struct doc_history_stats t;
};

/* One scenario run that counts of a load result (doc_load_counts: not find-peak's probes). */
struct doc_history_load {
    char key[64];        /* "single-stream", "server 40 QPS", "server peak" */
    char metric[16];     /* "p90" */
    double metric_s;     /* the metric percentile of its latency, seconds; NAN when absent */
    double qps;          /* its throughput; NAN when absent */
    bool valid;
};

/* The runs that count of one load result, in order; n 0: not a load result. */
struct doc_history_loads {
    size_t n;
    struct doc_history_load run[DOC_HISTORY_LOADS_MAX];
};

/* One stored result. */
struct doc_history_result {
    const char *id;
    const char *path;           /* its file, relative to the store directory when inside it */
    const char *created;        /* ISO 8601 UTC ("2026-05-01T10:00:00.123Z"); optional */
    const char *label;          /* optional */
    const char *command;        /* argv joined by spaces; "" or NULL for none (a load result) */
    const char *host;           /* optional */
    const char *mlbench_commit; /* optional */
    const char *commit;         /* git commit of the working directory it was measured in;
                                 * optional */
    const char *status;         /* "complete" or "interrupted"; optional */
    long runs_measured, runs_ok;
    struct doc_history_stats wall;            /* the whole run */
    const struct doc_history_stage *stages;   /* summary stages in their order */
    size_t n_stages;
    struct doc_history_loads load;
};

/* One result's figure in a series: its median with the interval of the median. */
struct doc_history_point {
    size_t result;                 /* index in doc_history.results */
    long n;                        /* runs the median is over (0: unknown) */
    double median_ns;              /* finite, > 0 */
    double ci_low_ns, ci_high_ns;  /* NAN when unknown */
    double ci_level;               /* coverage of that interval, 0..1; NAN when unknown */
};

/* A step change detected in a series (analysis/detect.h). */
struct doc_history_change {
    size_t point;                  /* the first point after the change (>= 1) */
    double before_ns, after_ns;    /* levels of the segments either side */
    double change_pct;             /* 100 (after / before - 1): > 0 slower */
    double z;                      /* strength, in standard errors */
};

/* One benchmark and stage over time: the results of one label (or, without a label, one
 * command) that have the figure from runs that succeeded, oldest first. */
struct doc_history_series {
    size_t benchmark;              /* index of its benchmark (doc_history.benchmark) */
    const char *label;             /* NULL: results without a label, named by command */
    const char *command;           /* of the first result of the series */
    const char *stage;             /* DOC_HISTORY_TOTAL (the whole run) or a stage name */
    const struct doc_history_point *points;
    size_t n_points;               /* may be 0: no result of the series succeeded */
    const struct doc_history_change *changes; /* in order */
    size_t n_changes;
};

/* The history as asked for, read and analysed. */
struct doc_history {
    /* what was asked (the command's options) */
    const char *label, *host, *stage; /* filters given, or NULL */
    size_t last;                   /* --last, or 0 */
    const char *commit_url;        /* template with "{}" for the commit, or NULL */
    bool detect;                   /* the step changes were asked for (--detect) */
    double min_effect_pct, z;      /* the smallest change and strength detection reports */
    /* the store's (store/history.c) */
    const char *store;             /* as messages name it */
    bool hosts;                    /* results of several hosts, or a shared store */
    const struct doc_history_result *results; /* oldest first */
    size_t n_results;
    /* the analysis's (analysis/history.c) */
    const char *const *stages;     /* the figures shown: DOC_HISTORY_TOTAL first, then the
                                    * stages in order of first appearance; the one asked for */
    size_t n_stages;
    const size_t *benchmark;       /* per result: its benchmark, numbered in order of their
                                    * first result */
    size_t n_benchmarks;
    const struct doc_history_series *series; /* per benchmark, then stage (empty unless
                                    * the series were found) */
    size_t n_series;
};

/* The figure of r named stage: the whole run for DOC_HISTORY_TOTAL, else the stage of that
 * name; NULL when r has none. */
const struct doc_history_stats *doc_history_figure(const struct doc_history_result *r,
                                                   const char *stage);
/* The same when it can be a point of a trend: r had runs that succeeded and the median is
 * finite and positive; else NULL. */
const struct doc_history_stats *doc_history_trend_figure(const struct doc_history_result *r,
                                                         const char *stage);

#endif
