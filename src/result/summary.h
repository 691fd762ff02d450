/* summary: statistics across the measured repetitions of a result, per stage and for the whole
 * run, and the warnings about measurement quality (docs/statistics.md). */
#ifndef MLBENCH_SUMMARY_H
#define MLBENCH_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>

#include "measure/attrib.h"
#include "measure/sampler.h"
#include "analysis/stats.h"
#include "result/gpu_clock.h"
#include "result/rank_summary.h"
#include "result/span_stats.h"
#include "result/summary_warn.h"

struct result;
struct machine_facts;

#define SUMMARY_CV_WARN 0.05        /* coefficient of variation above which a series is noisy */
#define SUMMARY_WARMUP_SLOWER 0.20  /* warm-up (or first run) this much slower: first-run effects */
/* An outlier is worth a warning with at least this many runs (the modified z-score of 3 or 4
 * values is unstable) and when it lies this far from the median (a 0.3 % "outlier" of a very
 * steady series changes no conclusion). The JSON's "outliers" counts are the bare statistic. */
#define SUMMARY_OUTLIER_MIN_N 5
#define SUMMARY_OUTLIER_MIN_DEVIATION 0.02

struct stage_summary {
    char *name;
    int depth;
    size_t n;                  /* runs in which the stage appeared */
    struct stats_summary active; /* wall time with the stage open, ns */
    double busy_median_ns;     /* median over runs of the sum of its spans */
    double overlap_median_ns;  /* median over runs of stage_total.overlap_ns */
    double span_median_ns;     /* median over runs of first begin to last end */
    double count_median;       /* median spans per run */
    double share;              /* active median / median wall time of the run */
    struct metric_stat *resources; /* per series: median of the runs' means, lowest min, highest
                                    * peak, total n; NULL without samples */
    struct span_stats *spans;  /* durations of its closed spans in the ok runs, pooled; NULL
                                * without any (or when no run was ok) */
};

struct counter_summary {
    char *name;
    size_t n;                  /* runs in which it was sampled */
    struct stats_summary last; /* the last value of each run */
    double sum_median;         /* median over runs of the sum of its samples */
    double rate_median;        /* median over runs of sum / wall seconds */
    bool count;                /* a count in every run (see counter_total.count) */
    char *stage;               /* the stage every sample was sent in (innermost open on the
                                * sending thread), the same in every run; NULL otherwise */
    bool stage_mixed;          /* samples came from several stages (or some from none) */
    double stage_rate_median;  /* median over runs of sum / the stage's active seconds; NAN
                                * without a stage */
};

struct meta_summary {
    char *key, *value;         /* value from the last used run */
    bool varies;               /* the runs disagree */
};

struct summary {
    size_t n_measured;         /* repetitions that are not warm-up */
    size_t n_ok;               /* of them, with status ok */
    size_t n_used;             /* repetitions the statistics are over (without the throttled
                                * ones with --discard-throttled: gpu_clock.discarded_runs) */
    bool used_failed;          /* no run was ok: statistics are over all measured runs */
    bool valid;                /* n_used > 0 */
    struct stats_summary wall, user, sys, max_rss;
    double cpu_cores_median;   /* (user + sys) / wall, median over used runs */
    struct stage_summary *stages; /* in tree order: each stage under its parent (the stage open
                                   * on its thread when it began), siblings by first begin */
    size_t n_stages;
    double outside_median_ns;  /* time outside any stage; -1 without stages */
    struct counter_summary *counters;
    size_t n_counters;
    struct meta_summary *meta;
    size_t n_meta;
    size_t names_dropped;      /* distinct names over the runs beyond STAGES_MAX_NAMES of their
                                * kind (stages, counters, metadata keys): not summarised */
    struct warning *warnings;
    size_t n_warnings;
    /* Resource samples attributed to the whole run (as stage_summary.resources), or NULL. */
    struct metric_stat *total_resources;
    const struct series_def *series; /* their definitions (owned by the sampler's registry copy
                                      * in the first used run's table) */
    size_t n_series;
    struct rank_summary ranks; /* the stages across the ranks of a multi-rank job, or empty */
    struct gpu_clock_summary gpu_clock; /* throttled runs, clock scaling (gpu_clock.h) */
};

/* Computes r->summary from r's repetitions (replacing any previous one), and marks each
 * repetition's GPU clock (rep->gpu_clock) against the maximum SM clocks of the GPUs of facts,
 * the machine the runs ran on (result_capture_environment's answer; NULL: none known, and
 * only throttle reasons mark runs). */
void summary_compute(struct result *r, const struct machine_facts *facts);
void summary_free(struct summary *s);

#endif
