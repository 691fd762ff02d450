/* compare_scaling: scaling across ranks in a comparison (docs/compare.md#scaling): when the two
 * results ran on different numbers of ranks (a result without ranks is one), the speedup of the
 * candidate's throughput over the baseline's, the scaling efficiency (speedup / ratio of the
 * ranks: 1 is linear), the throughput per rank, and the share of the step the allreduce took
 * on each side where the workload reports it. Throughput is, in this order of preference, the
 * counter train_images_per_s (imgclf's; last value, median over the runs), the rate of the
 * counter images, or the inverse of the median wall time (the same work done faster). Pure,
 * thread-safe. */
#include "analysis/compare_scaling.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>


#define SCALING_MAX_COUNTERS 1000 /* counters looked at (the file's list is not trusted) */

static json_t *jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* The ranks a result ran on: its announced world size, else the ranks it saw, else 1. */
static double ranks_of(const struct doc_result *result)
{
    const struct doc_ranks *r = &result->summary.ranks;
    if (r->world_size >= 1)
        return (double)r->world_size;
    return r->n_ranks ? (double)r->n_ranks : 1;
}

static const struct doc_counter *counter(const struct doc_result *result, const char *name)
{
    const struct doc_summary *s = &result->summary;
    for (size_t i = 0; i < s->n_counters && i < SCALING_MAX_COUNTERS; i++)
        if (s->counters[i].name && !strcmp(s->counters[i].name, name))
            return &s->counters[i];
    return NULL;
}

static double last_median(const struct doc_result *result, const char *name)
{
    const struct doc_counter *c = counter(result, name);
    return c ? c->last.median : NAN;
}

/* The throughput of result by basis (see the file's comment). */
static double throughput(const struct doc_result *result, const char *basis)
{
    if (!strcmp(basis, "train_images_per_s"))
        return last_median(result, basis);
    if (!strcmp(basis, "images")) {
        const struct doc_counter *c = counter(result, "images");
        return c ? c->rate_per_s_median : NAN;
    }
    double wall = result->summary.wall.median;
    return wall > 0 ? 1e9 / wall : NAN;
}

static bool positive(double v)
{
    return isfinite(v) && v > 0;
}

static json_t *side(const struct doc_result *result, double ranks, double thr)
{
    return json_pack("{s:f, s:o, s:o, s:o}", "ranks", ranks, "throughput", jnum(thr),
                     "per_rank", jnum(thr / ranks), "allreduce_share",
                     jnum(last_median(result, "allreduce_share")));
}

json_t *compare_scaling(const struct doc_result *base, const struct doc_result *cand)
{
    double rb = ranks_of(base), rc = ranks_of(cand);
    if (rb == rc)
        return json_null();
    const char *bases[] = {"train_images_per_s", "images", "runs_per_s"}, *basis = NULL;
    double tb = NAN, tc = NAN;
    for (size_t i = 0; i < 3 && !basis; i++) {
        tb = throughput(base, bases[i]);
        tc = throughput(cand, bases[i]);
        if (positive(tb) && positive(tc))
            basis = bases[i];
    }
    if (!basis)
        return json_null();
    double speedup = tc / tb;
    return json_pack("{s:s, s:o, s:o, s:o, s:o}", "basis", basis, "baseline",
                     side(base, rb, tb), "candidate", side(cand, rc, tc), "speedup",
                     jnum(speedup), "efficiency", jnum(speedup / (rc / rb)));
}
