/* rank_summary: a multi-rank job's stages across its ranks (docs/ranks.md): per stage, the
 * critical path (the slowest rank: what the job waits for), the fastest, median and slowest
 * rank, the skew, and per rank a straggler score. Over the repetitions the summary uses. */
#ifndef MLBENCH_RANK_SUMMARY_H
#define MLBENCH_RANK_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "measure/event_log.h"
#include "measure/stages.h"

struct result;
struct repetition;
struct stage_summary;
struct summary;

/* A stage of the ranks. Times are medians over the runs, ns; the fastest, median and slowest
 * rank and the skew are taken per run, then their medians over the runs. */
struct rank_stage_summary {
    char *name;
    size_t n_ranks;          /* ranks with the stage in some run */
    double critical_ns;      /* the slowest rank's active time: the stage's critical path */
    double min_ns, median_ns;
    double skew;             /* slowest / fastest rank (1 = balanced); NAN when the fastest is 0 */
    int32_t slowest_rank;    /* the rank whose median over the runs is the largest */
    int32_t fastest_rank;    /* ...the smallest */
    double *rank_ns;         /* per rank of rank_summary.ranks: the median over the runs of its
                              * active time; NAN where the rank never had the stage */
    double *score;           /* fastest rank's rank_ns / this rank's, 0..1: 1 for the fastest,
                              * lower for a straggler (the "relative" score of NVIDIA's
                              * resiliency-ext straggler detection); NAN where rank_ns is */
};

struct rank_summary {
    int32_t *ranks;          /* every rank seen in the runs, ascending; NULL when none */
    size_t n_ranks;
    char **hosts;            /* parallel to ranks: the host a rank's rank-exec named in the
                              * first run that names one (owned), NULL where none did */
    int32_t world_size;      /* the largest announced, 0 when none was */
    uint64_t ranks_dropped;  /* over all runs (stages.h) */
    struct rank_stage_summary *stages; /* in the summary's stage order */
    size_t n_stages;
};

/* Fills out from the runs reps[0..n); stages[0..n_stages) are the summary's, in its order. */
void rank_summary_compute(struct rank_summary *out, const struct repetition *const *reps,
                          size_t n, const struct stage_summary *stages, size_t n_stages);
void rank_summary_free(struct rank_summary *s);
/* Warns in s of the ranks whose rank-exec reported a failure in r's runs ("rank_failed"), and
 * of a run --ranks in which no process announced a rank ("no_ranks"). */
void rank_warnings(struct summary *s, const struct result *r);

/* The summary's "ranks" object, or null without ranks. */
json_t *rank_summary_json(const struct rank_summary *s);
/* A run's "ranks" array (per rank its stages), or null without ranks. */
json_t *rank_run_json(const struct stage_data *d, const struct event_log *log);

#endif
