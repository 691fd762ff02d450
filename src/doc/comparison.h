/* doc/comparison: the one reader of comparison documents ("mlbench.comparison/1",
 * docs/compare.md, written by src/analysis/compare*.c). A document is read once into a
 * read-only typed view with the tolerant rules of doc/result.h: a member that is missing, null
 * or of the wrong type reads as absent (NULL, NAN, false, 0 or an empty array), never as a
 * crash. Every consumer of a comparison (the gates of analysis/compare.c, the terminal view,
 * the report sections, the CSV table) reads it through this view; the answers derived from it
 * (a stage's row by name, the total row, whether any candidate has a stage) are here once.
 *
 * Strings and `json` members are borrowed from the document, which must outlive the view; the
 * arrays belong to the view. A view is not modified after doc_comparison_read; reading distinct
 * documents is thread-safe. */
#ifndef MLBENCH_DOC_COMPARISON_H
#define MLBENCH_DOC_COMPARISON_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "doc/result.h" /* struct doc_warning, DOC_MAX_DEPTH */

#define DOC_COMPARISON_SCHEMA "mlbench.comparison/1"

/* baseline and candidates[]: which result a side is. */
struct doc_cmp_who {
    const char *id, *label, *path; /* NULL when absent */
};

/* stages[].latency.p50 and .p99: one quantile of a stage's spans. */
struct doc_cmp_quantile {
    double baseline_ns, candidate_ns, change_pct, ratio_ci_low, ratio_ci_high; /* NAN: null */
    const char *verdict, *statistical_verdict, *unreliable_reason;
};

/* stages[].latency: the span latency of a stage (docs/compare.md#span-latency-p50-and-p99-per-stage). */
struct doc_cmp_latency {
    bool present;                  /* an object (null: fewer than 20 spans on a side) */
    long long n_baseline, n_candidate; /* spans pooled on each side */
    struct doc_cmp_quantile p50, p99;
};

/* stages[]: one stage, or the total (the last row). */
struct doc_cmp_stage {
    const char *name;
    int depth;                     /* within [0, DOC_MAX_DEPTH] */
    double baseline_median_ns, candidate_median_ns, change_pct, speedup;
    double ratio_ci_low, ratio_ci_high, p_value; /* NAN: no interval, no test */
    long long n_baseline, n_candidate; /* values on each side */
    const char *verdict;           /* "faster", "slower", "unreliable", ... */
    const char *statistical_verdict, *unreliable_reason; /* of an unreliable row, else NULL */
    const char *test;              /* "exact", "normal approximation", or NULL */
    double ratio_ci_level;         /* the interval's real coverage; NAN: the comparison's level
                                    * (comparisons made before it was recorded) */
    const char *decided_by;        /* "rank test", "ratio interval", or NULL */
    long long runs_needed;         /* inconclusive: runs a side that would settle +-settle_pct
                                    * (-1: more than 10 000); 0: none given */
    double settle_pct;
    struct doc_cmp_latency latency;
};

/* counters[]: a counter's median per run (the sum for counts, else the last value). */
struct doc_cmp_counter {
    const char *name;
    double baseline, candidate;    /* NAN: absent on that side */
};

/* metadata[]: a key's value on each side. */
struct doc_cmp_meta {
    const char *key, *baseline, *candidate; /* NULL: absent on that side */
};

/* resources[]: a resource figure of a stage (or "total") on each side. */
struct doc_cmp_resource {
    const char *stage, *metric;    /* metric with its labels: gpu_utilization_ratio{gpu="0"} */
    const char *statistic;         /* "mean" or "peak" */
    double baseline, candidate;    /* NAN: absent on that side */
};

/* environment_differences[]: an environment key that differs. */
struct doc_cmp_env {
    const char *key;               /* dotted path: cpu.model, gpus[0].name */
    const json_t *baseline, *candidate; /* the value (a JSON scalar), NULL when absent or null */
    bool matters;                  /* a difference that makes the results not like for like */
};

/* load.scenarios[].metrics[]: one figure of a matched scenario run. */
struct doc_cmp_load_metric {
    const char *name;              /* "p50", "p99", ..., "throughput_qps" */
    const char *unit;              /* "s" or "qps" */
    bool metric;                   /* the run's metric percentile */
    double baseline, candidate, change_pct, ratio_ci_low, ratio_ci_high, p_value; /* NAN: null */
    const char *test, *verdict, *statistical_verdict, *unreliable_reason;
    long long seconds_baseline, seconds_candidate; /* windows used (resampling "seconds"), 0 */
};

/* load.scenarios[]: a scenario run matched on both sides. */
struct doc_cmp_load_match {
    const char *scenario;
    double target_qps, candidate_target_qps; /* NAN outside the server scenario */
    bool peak;                     /* find-peak's confirmations */
    double percentile;             /* the metric percentile */
    const char *resampling;        /* "seconds" or "results" */
    long long block_seconds;       /* -1 when null (resampling "results") */
    long long n_baseline, n_candidate; /* results on each side */
    bool valid_baseline, valid_candidate;
    struct doc_cmp_load_metric *metrics;
    size_t n_metrics;
};

/* load.unmatched[]: a run that counts on one side only. */
struct doc_cmp_load_unmatched {
    const char *side, *scenario;
    double target_qps;             /* NAN when null */
};

/* candidates[].load (docs/compare.md#load-results). */
struct doc_cmp_load {
    bool present;                  /* an object (null: a side has no load section) */
    struct doc_cmp_load_match *matches;
    size_t n_matches;
    struct doc_cmp_load_unmatched *unmatched;
    size_t n_unmatched;
};

/* candidates[].cost (docs/compare.md#cost). */
struct doc_cmp_cost_side {
    double price_per_hour, run_median, total_median_ns; /* NAN: null */
    const char *currency;
};
struct doc_cmp_cost_unit {
    const char *counter;
    double per, baseline, candidate, ratio; /* both at the baseline's per */
};
struct doc_cmp_cost {
    bool present;                  /* both results were priced */
    struct doc_cmp_cost_side baseline, candidate;
    bool same_currency;
    double time_ratio, cost_ratio; /* candidate / baseline; NAN: null */
    struct doc_cmp_cost_unit *per_unit;
    size_t n_per_unit;
};

/* candidates[].scaling (docs/compare.md#scaling). */
struct doc_cmp_scaling_side {
    double ranks, throughput, per_rank, allreduce_share; /* NAN: null */
};
struct doc_cmp_scaling {
    bool present;                  /* the sides ran on different numbers of ranks */
    const char *basis;             /* "train_images_per_s", "images", "runs_per_s" */
    struct doc_cmp_scaling_side baseline, candidate;
    double speedup, efficiency;
};

/* candidates[]: one candidate against the baseline. */
struct doc_cmp_candidate {
    struct doc_cmp_who who;
    bool like_for_like;            /* true only when it says so */
    long long common_stages;       /* stages both results have */
    struct doc_cmp_stage *stages;  /* in the document's order, the total last */
    size_t n_stages;
    struct doc_warning *quality_baseline, *quality_candidate; /* quality.baseline, .candidate */
    size_t n_quality_baseline, n_quality_candidate;
    const char *clean_answer;
    struct doc_cmp_counter *counters;
    size_t n_counters;
    struct doc_cmp_meta *metadata;
    size_t n_metadata;
    struct doc_cmp_resource *resources;
    size_t n_resources;
    struct doc_cmp_env *environment_differences;
    size_t n_environment_differences;
    struct doc_cmp_load load;
    struct doc_cmp_cost cost;
    struct doc_cmp_scaling scaling;
    const json_t *json;
};

struct doc_comparison {
    const char *schema;
    double alpha, min_effect_pct, ci_level; /* the verdict rule's settings; NAN when absent */
    long long resamples;           /* bootstrap_resamples, 0 when absent */
    long long seed;                /* bootstrap_seed, 0 when absent */
    struct doc_cmp_who baseline;
    struct doc_cmp_candidate *candidates;
    size_t n_candidates;
    const json_t *json;            /* the document */
};

/* Reads the document j (may be NULL or not an object: an empty view). Never NULL; free with
 * doc_comparison_free. j must outlive the view. */
struct doc_comparison *doc_comparison_read(const json_t *j);
void doc_comparison_free(struct doc_comparison *c);

/* The total row of a candidate: the last row, which compare_results writes as "total"; NULL
 * when there are no rows or the last is not named "total". */
const struct doc_cmp_stage *doc_cmp_total(const struct doc_cmp_candidate *c);
/* The row of the stage named name: the total row for "total" (a stage a workload named "total"
 * is not it), else the first row of that name; NULL when there is none. */
const struct doc_cmp_stage *doc_cmp_stage(const struct doc_cmp_candidate *c, const char *name);
/* Whether some candidate has a row named name ("total" always counts). */
bool doc_comparison_has_stage(const struct doc_comparison *c, const char *name);

#endif
