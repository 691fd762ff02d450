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

#include "util/jsonx.h"

#define SCALING_MAX_COUNTERS 1000 /* counters looked at (the file's list is not trusted) */

static json_t *jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* The ranks a result ran on: its announced world size, else the ranks it saw, else 1. */
static double ranks_of(const json_t *result)
{
    const json_t *r = json_object_get(json_object_get(result, "summary"), "ranks");
    double world = jsonx_num(r, "world_size");
    if (isfinite(world) && world >= 1)
        return world;
    size_t n = json_array_size(json_object_get(r, "ranks"));
    return n ? (double)n : 1;
}

static const json_t *counter(const json_t *result, const char *name)
{
    const json_t *cs = json_object_get(json_object_get(result, "summary"), "counters");
    for (size_t i = 0; i < json_array_size(cs) && i < SCALING_MAX_COUNTERS; i++) {
        const char *n = jsonx_str(json_array_get(cs, i), "name");
        if (n && !strcmp(n, name))
            return json_array_get(cs, i);
    }
    return NULL;
}

static double last_median(const json_t *result, const char *name)
{
    return jsonx_num(json_object_get(counter(result, name), "last"), "median");
}

/* The throughput of result by basis (see the file's comment). */
static double throughput(const json_t *result, const char *basis)
{
    if (!strcmp(basis, "train_images_per_s"))
        return last_median(result, basis);
    if (!strcmp(basis, "images"))
        return jsonx_num(counter(result, "images"), "rate_per_s_median");
    double wall = jsonx_num(json_object_get(json_object_get(result, "summary"), "wall_ns"),
                            "median");
    return wall > 0 ? 1e9 / wall : NAN;
}

static bool positive(double v)
{
    return isfinite(v) && v > 0;
}

static json_t *side(const json_t *result, double ranks, double thr)
{
    return json_pack("{s:f, s:o, s:o, s:o}", "ranks", ranks, "throughput", jnum(thr),
                     "per_rank", jnum(thr / ranks), "allreduce_share",
                     jnum(last_median(result, "allreduce_share")));
}

json_t *compare_scaling(const json_t *base, const json_t *cand)
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
