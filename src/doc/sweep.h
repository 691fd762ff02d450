/* doc/sweep: the one reader of sweep documents ("mlbench.sweep/1", docs/sweep.md), which
 * session/sweep.c writes. A document is read once into a read-only typed view with the tolerant
 * rules of util/jsonx: a member that is missing, null or of the wrong type reads as absent
 * (NULL, NAN, -1 or an empty array), never as a crash, so an old, hand-made or hostile file
 * shows what it can; nothing read sizes a loop beyond what the file holds. The answers derived
 * from it are computed here once: the columns a table of the points needs (doc_sweep_columns),
 * a point's name, its counter by name, whether it is the winner.
 *
 * The figures of a point (struct doc_sweep_figures) are also what the writer fills from a
 * point's result before writing them, and what objectives and constraints are evaluated on
 * (session/sweep_plan.h), so the writer never reads back what it wrote.
 *
 * Strings and `json` members are borrowed from the document, which must outlive the view; the
 * arrays belong to the view. Reading distinct documents is thread-safe. */
#ifndef MLBENCH_DOC_SWEEP_H
#define MLBENCH_DOC_SWEEP_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#define DOC_SWEEP_SCHEMA "mlbench.sweep/1"
#define DOC_SWEEP_MAX_COUNTERS 8  /* counter columns, in order of first appearance */
#define DOC_SWEEP_MAX_PARAMS 16   /* parameter columns */

/* figures.counters[]: a counter of the point's result. */
struct doc_sweep_counter {
    const char *name, *stage;      /* stage: the one its samples were sent in; NULL when absent */
    double rate_per_s;             /* a count's rate per second in its stage (else over the
                                    * run); NAN for a counter that is not a count */
    double last_median;            /* the median over runs of its last value */
    bool count;                    /* whole numbers >= 0: a count with a rate */
};

/* figures.stages[]: a stage of the point's result. */
struct doc_sweep_stage {
    const char *name;
    double depth, median_ns, share; /* NAN when absent */
};

/* figures.bottleneck: the analysis' bottleneck stage. stage NULL: none. */
struct doc_sweep_bottleneck {
    const char *stage, *verdict;   /* verdict: the rule of its verdict */
    double share, median_ns;
};

/* points[].figures: what a point measured, every figure NAN (or the list empty) when unknown.
 * The arrays belong to whoever filled it: free them with doc_sweep_figures_free. */
struct doc_sweep_figures {
    double total_median_ns, total_ci_low_ns, total_ci_high_ns;
    double total_n;                /* runs the total is over */
    struct doc_sweep_bottleneck bottleneck;
    struct doc_sweep_stage *stages;
    size_t n_stages;
    struct doc_sweep_counter *counters;
    size_t n_counters;
    double peak_memory_bytes;      /* process tree resident, sampled peak (else max_rss) */
    double gpu_memory_peak_bytes;  /* the workload's GPU memory (NVML), peak */
    double gpu_utilization_mean;   /* 0..1 */
    double cost_per_run;           /* in price.currency */
};

/* points[].warnings[]: the result's warnings. */
struct doc_sweep_warning {
    const char *code, *message;    /* NULL when absent */
};

/* points[]: one point. */
struct doc_sweep_point {
    size_t position;               /* in points[] */
    long long index;               /* its index (a real rounded), or position when absent */
    const char *name;              /* NULL when absent: see doc_sweep_point_name */
    const json_t *parameters;      /* object: parameter -> value, or NULL (doc_sweep_parameter) */
    const json_t *command;         /* array of the words (strings), or NULL */
    const char *status;            /* ok, failed, timeout, out_of_memory, over_budget,
                                    * interrupted, not_run; NULL when absent */
    const char *status_detail, *result_id, *result_path;
    double runs_measured, runs_ok; /* NAN when absent */
    struct doc_sweep_figures figures;
    double objective_value;        /* NAN when absent */
    int constraints_met;           /* 1, 0, or -1 when absent */
    const json_t *constraint_failures; /* array of strings, or NULL */
    struct doc_sweep_warning *warnings;
    size_t n_warnings;
};

/* parameters[]: one swept parameter. */
struct doc_sweep_param {
    const char *name;              /* NULL when absent */
    const json_t *values;          /* array of its values, or NULL */
    size_t n_values;
    bool numeric;                  /* the document says every value is a number */
};

/* objective: what the winner has. */
struct doc_sweep_objective {
    const char *spec, *direction, *figure, *name, *description; /* NULL when absent */
};

/* price: the price per hour the points were priced at (docs/cost.md). */
struct doc_sweep_price {
    bool present;                  /* an object (null: not priced) */
    double per_hour;
    const char *currency;
};

/* winner: the point that has the objective's best value. */
struct doc_sweep_winner {
    bool present;                  /* an object (null: no point qualifies) */
    long long index;               /* the winner's points[].index, or -1 */
    const char *name, *reason;
    const char *undecided;         /* winner_undecided: why no point wins although some qualify
                                    * (the best cannot be told from the runner-up), or NULL */
};

/* find_max.probes[]: one probe of --find-max, in the order probed. */
struct doc_sweep_probe {
    double value;                  /* the parameter's value probed */
    long long point;               /* its index in points[], or -1 */
    int fits;                      /* 1, 0, or -1 when absent */
    const char *reason;            /* why it does not fit, or NULL */
    double peak_memory_bytes;
    const char *throughput_name;   /* the first throughput counter, NULL without one */
    double throughput_rate_per_s;  /* its rate, NAN without one */
};

/* find_max.memory_fit: peak memory against the value, least squares over the probes that
 * fit; every member NAN when absent. */
struct doc_sweep_memory_fit {
    double slope_bytes, intercept_bytes, r2;
    double predicted_max;          /* where the line meets the budget */
};

/* find_max: the largest value that fits (mode find-max). */
struct doc_sweep_find_max {
    bool present;                  /* an object (null outside find-max mode) */
    const char *parameter;
    double low, high;
    bool pow2;
    double memory_budget_bytes, largest_fit, first_failure; /* NAN when absent */
    struct doc_sweep_probe *probes;
    size_t n_probes;
    struct doc_sweep_memory_fit memory_fit;
};

/* What the points have, found once over them: the columns a table of the sweep shows. */
struct doc_sweep_columns {
    size_t ncounters;              /* counters of the points, by name, first seen first */
    const char *counter[DOC_SWEEP_MAX_COUNTERS];
    const char *counter_stage[DOC_SWEEP_MAX_COUNTERS]; /* NULL: over the run or mixed */
    bool counter_count[DOC_SWEEP_MAX_COUNTERS]; /* a count: its rate is shown, else its value */
    size_t nparams;                /* parameters named in parameters[], each once */
    const char *param[DOC_SWEEP_MAX_PARAMS];
    bool param_numeric[DOC_SWEEP_MAX_PARAMS]; /* some point has it and every value is a number
                                               * (doc_sweep_parameter_number) */
    bool gpu_memory, gpu_util;     /* some point has the figure */
    bool priced;                   /* price is an object or some point has a cost */
    const char *currency;          /* price.currency, "USD" when it has none */
};

struct doc_sweep {
    const char *schema, *id, *created, *status, *mode; /* NULL when absent */
    const json_t *command;         /* the template: array of strings, or NULL */
    struct doc_sweep_param *params;
    size_t n_params;
    int interleave;                /* 1, 0, or -1 when absent */
    bool has_seed;                 /* seed is an integer */
    long long seed;
    size_t n_rounds;               /* measured rounds (rounds[]) */
    struct doc_sweep_objective objective;
    const char **constraints;      /* each constraint's spec, NULL for one without */
    size_t n_constraints;
    struct doc_sweep_price price;
    bool has_points;               /* points is an array (possibly empty) */
    struct doc_sweep_point *points;
    size_t n_points;
    struct doc_sweep_winner winner;
    struct doc_sweep_find_max find_max;
    struct doc_sweep_columns columns;
    const json_t *json;            /* the document when it is an object, else NULL */
};

/* Reads the document j (may be NULL or not an object: an empty view). Never NULL; free with
 * doc_sweep_free. j must outlive the view. */
struct doc_sweep *doc_sweep_read(const json_t *j);
void doc_sweep_free(struct doc_sweep *s);

/* Reads a point's figures object o (NULL or not an object: every figure unknown) into f;
 * free its arrays with doc_sweep_figures_free. o must outlive f. */
void doc_sweep_figures_read(const json_t *o, struct doc_sweep_figures *f);
/* Frees the arrays of f and empties them (the figures stay readable, with no stage or
 * counter). */
void doc_sweep_figures_free(struct doc_sweep_figures *f);

/* The name of a point: its name, else its command joined, else "point N" (never NULL; a new
 * string owned by the caller). */
char *doc_sweep_point_name(const struct doc_sweep_point *p);
/* A figure read as a measurement: v, or NAN unless it is finite and below 1e18 (31 years in
 * ns, an exabyte), so that a hostile 1e308 neither counts as measured nor prints 300 digits. */
double doc_sweep_plausible(double v);
/* Whether the point is the sweep's winner (its index is winner.index). */
bool doc_sweep_is_winner(const struct doc_sweep *s, const struct doc_sweep_point *p);
/* The first counter (stage) of f named name, or NULL. */
const struct doc_sweep_counter *doc_sweep_counter(const struct doc_sweep_figures *f,
                                                  const char *name);
const struct doc_sweep_stage *doc_sweep_stage(const struct doc_sweep_figures *f,
                                              const char *name);
/* The value of parameter name at the point (a string as written, or any JSON value of a
 * hand-made file), or NULL. */
const json_t *doc_sweep_parameter(const struct doc_sweep_point *p, const char *name);
/* The value of parameter name at the point as a number: a JSON number, or a string that is one
 * whole (strtod, nothing after, finite). false when it has none or it is not a number. */
bool doc_sweep_parameter_number(const struct doc_sweep_point *p, const char *name, double *v);

#endif
