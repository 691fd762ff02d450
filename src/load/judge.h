/* judge: whether a scenario run of `mlbench load` counts (LoadGen's VALID / INVALID, with the
 * reasons), its early-stopping estimate, whether the generator itself held it back, and the
 * run's JSON form ("load.scenarios[]" of the result document, docs/load.md). Pure. */
#ifndef MLBENCH_LOAD_JUDGE_H
#define MLBENCH_LOAD_JUDGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "load/load.h"

#define LOAD_LAG_LIMIT_NS 1000000 /* p99 send lag above 1 ms ... */
#define LOAD_LAG_SHARE 0.05       /* ... and above this share of the metric: the generator was late */
#define LOAD_BUSY_LIMIT 0.9       /* a generator thread busier than this: saturated */
#define LOAD_MAX_REASONS 8

struct load_rules {
    double min_duration_s;
    uint64_t min_queries;
    double percentile;        /* the scenario's latency metric (single-stream 90, others 99) */
    int64_t latency_bound_ns; /* 0: none */
    double confidence;        /* of the early-stopping estimate */
};

struct load_verdict {
    bool valid;
    char reasons[LOAD_MAX_REASONS][384]; /* why not, for people */
    size_t n_reasons;
    bool client_bound;        /* the generator was late or saturated */
    int64_t percentile_ns;    /* the raw percentile of rules.percentile (0: no queries) */
    bool early_known;         /* enough queries for the early-stopping estimate */
    int64_t early_ns;         /* the estimate */
    uint64_t early_min_queries; /* the fewest queries that give one */
};

/* Judges run by rules: too short, too few queries, failed queries, the latency bound missed
 * by the percentile or by the early-stopping estimate (or no estimate with a bound), a
 * client-bound generator (p99 send lag above 1 ms and above 5 % of the metric percentile, or a
 * thread busy more than 90 % of the run), an interrupted run. */
void load_judge(const struct load_rules *rules, const struct load_run *run, struct load_verdict *v);

/* The run as "load.scenarios[]" holds it (docs/load.md): figures in seconds, the latency
 * histogram, the seconds, the errors by kind, the verdict. New reference. */
json_t *load_run_to_json(const struct load_run *run, const struct load_rules *rules,
                         const struct load_verdict *v);

#endif
