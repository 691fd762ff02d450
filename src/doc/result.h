/* doc/result: the one reader of result documents ("mlbench.result/1", docs/result-schema.md).
 * A document is read once into a read-only typed view, with the tolerant rules of util/jsonx:
 * a member that is missing, null or of the wrong type reads as absent (NULL, NAN, false, 0 or
 * an empty array), never as a crash, so an old, edited or hostile file shows what it can.
 * Every consumer reads the schema through this view; the answers derived from it (which run
 * represents the result, a stage by name, a stage's share, what a stage used of the machine)
 * are computed here once.
 *
 * Strings and the `json` members are borrowed from the document, which must outlive the view;
 * the arrays belong to the view. Parts of the schema no consumer needs typed (the environment,
 * the samples, the load section, which doc/load.h reads) are handed over as `const json_t *`.
 * A view is not modified after doc_result_read; reading distinct documents is thread-safe. */
#ifndef MLBENCH_DOC_RESULT_H
#define MLBENCH_DOC_RESULT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#define DOC_RESULT_SCHEMA "mlbench.result/1"
#define DOC_MAX_DEPTH 1000 /* a stage nested deeper reads as nested this deep */
/* The most stage, counter or metadata names a run or summary holds (what one run aggregates,
 * measure/stages.h): a file with more is refused (doc_result_load_file). */
#define DOC_MAX_NAMES 1000

/* Statistics of one figure over the runs (docs/statistics.md). NAN where absent; n 0. */
struct doc_stats {
    bool present;                  /* the object is there */
    long long n, outliers;
    double median, mad, mean, stddev, min, max, cv;
    double ci_low, ci_high, ci_level; /* interval of the median, its coverage 0..1 */
};

/* One metric's samples in a run, a stage or the summary ({metric, labels, kind, mean, peak,
 * min, n}). */
struct doc_resource {
    const char *metric, *labels, *kind; /* NULL when absent */
    double mean, peak, min;
    long long n;
};
struct doc_resources {
    struct doc_resource *v;
    size_t n;
    const json_t *json;            /* the array */
};

/* What a stage (or the whole run) used of the machine, from its resources: NAN for what was
 * not measured. GPU figures cover the GPUs listed (analysis.gpus): mean utilisation averaged,
 * memory peak of the busiest, power added up. */
struct doc_figures {
    double cpu_cores;              /* mean rate of process CPU time */
    double rss_peak_bytes;
    double read_bps, write_bps;    /* storage bytes per second of the process tree */
    double iowait;                 /* ratio, the machine's */
    double io_blocked;             /* ratio of time the workload's own processes were blocked on
                                    * I/O (delay accounting, else state D samples), NAN in results
                                    * made before it was sampled */
    double gpu_util;               /* ratio */
    double gpu_sm_active;          /* ratio (NVML GPM), NAN without GPM */
    double gpu_mem_peak_bytes;
    double gpu_power_watts;
    size_t samples;                /* the most samples of any series (0: none in the stage) */
};

/* The histogram of a stage's span durations (summary.stages[].spans.histogram), on a log time
 * axis: bin i covers 2^((first_bin + i) / bins_per_octave) ns up to the next. NAN where absent;
 * its counts are read one at a time (doc_histogram_count). */
struct doc_histogram {
    double bins_per_octave, first_bin;
    size_t n;                      /* bins */
    const json_t *counts;          /* array, or NULL */
};

/* Span latencies of a stage over the spans of every ok run (summary.stages[].spans). */
struct doc_spans {
    long long n;
    double p50_ns, p90_ns, p99_ns, p999_ns, max_ns;
    struct doc_histogram histogram;
};

/* summary.stages[]: one stage over the runs. */
struct doc_stage {
    const char *name;              /* NULL when absent */
    int depth;                     /* nesting, 0 outermost; within [0, DOC_MAX_DEPTH] */
    long long n;                   /* runs the stage appeared in */
    struct doc_stats active;       /* active_ns */
    double share;                  /* of the run, 0..1 */
    double busy_ns_median, overlap_ns_median, span_ns_median, count_median;
    struct doc_spans spans;
    struct doc_resources resources;
    const json_t *json;
};

/* summary.counters[]: one counter over the runs. */
struct doc_counter {
    const char *name, *values, *stage; /* stage: the one its samples were sent in, or NULL */
    bool count;                    /* whole numbers >= 0: a count with a sum and a rate */
    bool stage_mixed;              /* sent in several stages */
    long long n;
    struct doc_stats last;         /* the last value of each run */
    double sum_median, rate_per_s_median, stage_rate_per_s_median;
    const json_t *json;
};

/* summary.metadata[]: one key. */
struct doc_meta {
    const char *key, *value;
    bool varies;                   /* the runs sent different values */
};

/* runs[].stages[]: one stage in one run. */
struct doc_run_stage {
    const char *name;
    int depth;                     /* as doc_stage's */
    double active_ns, busy_ns, overlap_ns, first_begin_ns, last_end_ns;
    long long count, unclosed;
    struct doc_resources resources;
    const json_t *json;
};

/* summary.ranks.stages[]: a stage across the ranks of a multi-rank job (docs/ranks.md). */
struct doc_rank_stage {
    const char *name;
    double critical_path_ns, median_ns, min_ns, skew;
    long long slowest_rank, fastest_rank; /* -1 when absent or not an integer */
    long long ranks;
    const json_t *per_rank;        /* array, or NULL */
};

/* summary.ranks. */
struct doc_ranks {
    bool present;
    long long world_size, ranks_dropped;
    const json_t *ranks;           /* array of the ranks seen, or NULL */
    size_t n_ranks;                /* its size */
    const json_t *hosts;           /* object: host name -> array of ranks, or NULL */
    struct doc_rank_stage *stages;
    size_t n_stages;
};

/* runs[].hosts[]: another host of a multi-rank job, sampled there by its rank-exec. */
struct doc_run_host {
    const char *host;
    const json_t *ranks;           /* array of its ranks, or NULL */
    struct doc_resources resources;
    const json_t *stages, *samples;
};

/* runs[].counters[]: one counter in one run. */
struct doc_run_counter {
    const char *name;
    bool count;
    long long n;
    double sum, min, max, last, last_ns;
    const json_t *points;          /* [[t_ns, value, sum], ...], or NULL (older results): read
                                    * with doc_counter_point */
    long long points_stride;       /* every points_stride-th sample kept (1: every one) */
    const json_t *json;
};

/* runs[]: one repetition. */
struct doc_run {
    size_t position;               /* its index in runs[] */
    long long index;               /* runs[].index as written, position when absent */
    bool warmup;
    const char *status;            /* "ok", "failed", "timeout"...; NULL when absent */
    bool ok;                       /* status is "ok" */
    double exit_code;              /* NAN when absent (killed by a signal) */
    const char *signal, *error, *prepare_error, *stderr_tail, *start;
    double wall_ns, user_ns, sys_ns, max_rss_bytes, outside_ns, round_ns;
    struct doc_run_stage *stages;
    size_t n_stages;
    struct doc_resources resources;
    struct doc_run_counter *counters;
    size_t n_counters;
    const json_t *metadata;        /* object, or NULL */
    const json_t *samples;         /* {t_ns, series}, or NULL */
    struct doc_run_host *hosts;
    size_t n_hosts;
    const json_t *spans, *instants, *markers, *ranks, *gpu_clock;
    const json_t *json;
};

/* analysis.verdicts[] and analysis.findings[]. */
struct doc_verdict {
    const char *stage, *rule, *evidence;
};
struct doc_finding {
    const char *rule, *stage, *evidence, *recommendation;
    double saving_ns;              /* NAN when absent; 0: cannot be said */
};

/* warnings[]. */
struct doc_warning {
    const char *code, *message;
};

/* summary.gpu_clock: the GPU's clock over the runs, when it was measured. */
struct doc_gpu_clock {
    bool present;
    long long runs, throttled_runs, discarded_runs;
    double scaling_median, scaling_min, threshold;
    const json_t *reasons;         /* array of strings, or NULL */
};

struct doc_summary {
    long long runs_measured, runs_ok, runs_used;
    bool used_failed_runs;         /* no run succeeded: figures of failed runs */
    struct doc_stats wall, user, sys, max_rss; /* wall_ns, user_ns, sys_ns, max_rss_bytes */
    double cpu_cores, outside_ns;
    struct doc_stage *stages;
    size_t n_stages;
    struct doc_counter *counters;
    size_t n_counters;
    struct doc_meta *metadata;
    size_t n_metadata;
    struct doc_resources resources;
    struct doc_gpu_clock gpu_clock;
    struct doc_ranks ranks;        /* summary.ranks (docs/ranks.md) */
    const json_t *json;
};

struct doc_analysis {
    bool present;                  /* an object (null: no samples or no run succeeded) */
    const char *bottleneck;        /* NULL: none */
    const json_t *gpus;            /* array of GPU indices in the figures, or NULL */
    struct doc_verdict *verdicts;
    size_t n_verdicts;
    struct doc_finding *findings;
    size_t n_findings;
};

/* config: the options that shaped the measurement. */
struct doc_config {
    long long runs;                /* -r; -1: automatic (null) or absent */
    bool runs_automatic;           /* runs is null: chosen automatically */
    long long warmup;              /* 0 when absent */
    double timeout_s, grace_s, throttle_threshold; /* NAN when absent */
    long long interval_ns;         /* 100 ms when absent (the default before adaptive) */
    int interval_adaptive;         /* 1, 0, or -1 when absent (older results) */
    const char *prepare, *cleanup;
    bool fail_fast, show_output, all_gpus, discard_throttled, nvtx, ranks;
    const json_t *timings;         /* config.timings of `mlbench record`, or NULL */
    const char *timings_name;      /* config.timings.name: what was timed */
    const json_t *json;            /* the object, for a view listing every option as written */
};

/* sampling: how resources were sampled. */
struct doc_sampling {
    bool present;                  /* the member is there */
    double interval_ns, first_interval_ns, cpu_ns, cpu_ratio, errors; /* NAN when absent */
    int adaptive;                  /* 1, 0, or -1 when absent */
    const json_t *sources, *not_measured; /* arrays of strings, or NULL */
};

/* sweep: the sweep a result is a point of. */
struct doc_result_sweep {
    bool present;
    const char *id, *name;
    long long point;               /* -1 when absent */
    const json_t *parameters;      /* object of strings, or NULL */
};

struct doc_result {
    const char *schema, *id, *label, *created, *status, *interrupted_by;
    const char *mlbench_version, *mlbench_commit;
    const char **argv;             /* command.argv: n_argv words, NULL for one not a string */
    size_t n_argv;
    bool shell;                    /* command.shell */
    struct doc_config config;
    const json_t *environment;     /* object, or NULL (docs/environment.md) */
    const char *hostname, *kernel, *machine; /* environment's, NULL when absent */
    double cpus_online;            /* environment.cpus_online, NAN when absent */
    struct doc_run *runs;
    size_t n_runs;
    struct doc_summary summary;
    struct doc_analysis analysis;
    struct doc_warning *warnings;
    size_t n_warnings;
    struct doc_sampling sampling;
    long long markers_outside_runs;
    const json_t *cost;            /* object when priced, else NULL (docs/cost.md) */
    const json_t *load;            /* a load result's section (doc/load.h), or NULL */
    struct doc_result_sweep sweep;
    const json_t *json;            /* the document */
};

/* cost: what a priced result cost (docs/cost.md). */
struct doc_cost_unit {
    const char *counter, *description;
    double per, median;
};
struct doc_cost_target {
    const char *counter;
    double median, ci_low, ci_high;
};
struct doc_cost {
    const char *currency, *source;
    double price_per_hour;
    bool price_file;               /* priced by --price-file */
    const char *price_file_path, *price_file_entry, *price_file_rule;
    double run_median, run_ci_low, run_ci_high;
    struct doc_cost_unit *per_unit;
    size_t n_per_unit;
    struct doc_cost_target *to_target;
    size_t n_to_target;
};

/* Reads the cost object of a result (r->cost) into c. Returns false, with c empty, when there
 * is none (not priced); else true, and c is freed with doc_cost_free. */
bool doc_cost_read(const json_t *cost, struct doc_cost *c);
void doc_cost_free(struct doc_cost *c);

/* Reads the document j (may be NULL or not an object: an empty view). Never NULL; free with
 * doc_result_free. j must outlive the view. */
struct doc_result *doc_result_read(const json_t *j);
void doc_result_free(struct doc_result *r);

/* Reads a statistics object, a resources array (into r; free with doc_resources_free). */
void doc_stats_read(const json_t *o, struct doc_stats *s);
void doc_resources_read(const json_t *a, struct doc_resources *r);
void doc_resources_free(struct doc_resources *r);

/* The result's label, or its id when it has none, or "(no id)" (never NULL). */
const char *doc_result_name(const struct doc_result *r);
/* The representative run: among measured runs with status ok (else measured runs, else all
 * runs) the one with the median wall time (the lower one for an even count). Its index in
 * runs[], or -1 when there is no run. */
int doc_result_median_run(const struct doc_result *r);
/* The summary stage named name, or NULL. */
const struct doc_stage *doc_result_stage(const struct doc_result *r, const char *name);
/* The summary counter named name, or NULL. */
const struct doc_counter *doc_result_counter(const struct doc_result *r, const char *name);
/* The share of the run of the stage named name (1 for "total"), or NAN. */
double doc_result_stage_share(const struct doc_result *r, const char *name);
/* The median, over the measured runs that succeeded, of the time from a run's start to the
 * first begin of any of its stages (the program starting: a script's interpreter and imports);
 * NAN when no such run has a stage. */
double doc_result_before_first_stage(const struct doc_result *r);
/* The git commit of the working directory the result was measured in, where its environment
 * records one (environment.git.commit; older shapes: environment.git_commit,
 * environment.workdir.git_commit), or NULL. */
const char *doc_result_workdir_commit(const struct doc_result *r);
/* Whether the result was timed in-process (mlbench record: config.timings). */
bool doc_result_recorded(const struct doc_result *r);

/* The member of resources with this metric and labels (NULL labels: the first with the
 * metric), or NULL. */
const struct doc_resource *doc_resource_find(const struct doc_resources *r, const char *metric,
                                             const char *labels);
/* What a stage used of the machine (see struct doc_figures); gpus: analysis.gpus. */
void doc_figures(const struct doc_resources *r, const json_t *gpus, struct doc_figures *f);
/* A sampled series of a run: samples.series[] with this metric and labels (NULL labels: the
 * first of the metric), or NULL. */
const json_t *doc_run_series(const struct doc_run *run, const char *metric, const char *labels);

/* The long lists of a run (spans, instants, samples: thousands of elements) are read one
 * element at a time, when a view walks them, rather than all at once with the document. */

/* runs[].spans[]: one span. */
struct doc_span {
    const char *name;              /* NULL when absent */
    long long pid, tid, depth;     /* 0 when absent */
    double start_ns, end_ns;       /* NAN when absent */
    bool closed;                   /* false only when it says false */
};
size_t doc_run_n_spans(const struct doc_run *run);
void doc_run_span(const struct doc_run *run, size_t i, struct doc_span *s);

/* runs[].instants[]: one instant event. */
struct doc_instant {
    const char *name;
    long long pid, tid;
    double t_ns;
};
size_t doc_run_n_instants(const struct doc_run *run);
void doc_run_instant(const struct doc_run *run, size_t i, struct doc_instant *e);

/* runs[].samples: the times of the samples and one series per metric and label set. */
struct doc_series {
    const char *metric, *labels, *kind, *source; /* NULL when absent */
    double max_rate;               /* a counter's highest rate per second (the CPUs online for
                                    * CPU time): rates above it are its granularity; NAN when
                                    * absent (unbounded) */
    const json_t *values;          /* array, one value per sample time (null: not read) */
};
size_t doc_run_n_samples(const struct doc_run *run);
/* The time of sample i (ns from the run's start; NAN when absent). */
double doc_run_sample_t(const struct doc_run *run, size_t i);
size_t doc_run_n_series(const struct doc_run *run);
void doc_run_series_at(const struct doc_run *run, size_t i, struct doc_series *s);
/* Value i of a series, NAN when absent or null. */
double doc_series_value(const struct doc_series *s, size_t i);
/* The same of a series found with doc_run_series (NULL: a series of nothing). */
void doc_series_read(const json_t *series, struct doc_series *s);

/* runs[].counters[].points: one point of a counter in a run (NAN where absent). */
struct doc_point {
    double t_ns, value, sum;       /* time from the run's start, the value sent, running sum */
};
size_t doc_counter_n_points(const struct doc_run_counter *c);
void doc_counter_point(const struct doc_run_counter *c, size_t i, struct doc_point *p);

/* Count i of a span histogram, NAN when absent or not a number. */
double doc_histogram_count(const struct doc_histogram *h, size_t i);

#endif
