/* compare_private: what the files of the comparison (compare.c, compare_quality.c,
 * compare_latency.c) share; not for other modules (they use compare.h). Pure functions on
 * result documents, thread-safe. The rules are in docs/compare.md. */
#ifndef MLBENCH_COMPARE_PRIVATE_H
#define MLBENCH_COMPARE_PRIVATE_H

#include <stdbool.h>

#include <jansson.h>

#include "analysis/compare.h"

/* Nonzero for a measured run that succeeded: not a warm-up, status "ok". */
int compare_run_counts(const json_t *run);

/* {"baseline": [W...], "candidate": [W...]}: copies ({code, message}) of the warnings of each
 * side that are about measurement quality (the codes docs/compare.md lists). New reference. */
json_t *compare_quality(const json_t *base, const json_t *cand);

/* Why a difference of stage (NULL: the whole run) could come from a disturbance of the side
 * that came out slower (the candidate when cand_slower): a new string (free it), or NULL when
 * no disturbance explains it. *hits gains a bit per kind of disturbance named, for
 * compare_clean_answer(). */
char *compare_explain(const json_t *base, const json_t *cand, const char *stage,
                      bool cand_slower, unsigned *hits);

/* How to get a clean answer after the disturbances in hits (compare_explain's bits): a new
 * string, or NULL when hits is 0. */
char *compare_clean_answer(unsigned hits);

/* The per-stage latency comparison of stage
 * (docs/compare.md#span-latency-p50-and-p99-per-stage): a new object, or a JSON null when either side has fewer than COMPARE_LATENCY_MIN_SPANS closed spans. */
#define COMPARE_LATENCY_MIN_SPANS 20
json_t *compare_latency(const json_t *base, const json_t *cand, const char *stage,
                        const struct compare_options *opt, unsigned *hits);

/* The verdict of a quantity measured nb and nc times (docs/compare.md#verdict): "too few
 * runs" below 2 on a side, "faster" or "slower" when p < alpha, |change_pct| >= the minimum
 * effect and the ratio interval [ci_lo, ci_hi] excludes 1, else "no significant change". A
 * static string. */
const char *compare_verdict(const struct compare_options *opt, size_t nb, size_t nc,
                            double change_pct, double p, double ci_lo, double ci_hi);

/* The cost comparison (docs/compare.md#cost): a new object when both results carry a `cost`,
 * else a JSON null. */
json_t *compare_cost(const json_t *base, const json_t *cand);

/* The scaling across ranks (docs/compare.md#scaling): a new object when the two results ran on
 * different numbers of ranks and a throughput is known on both, else a JSON null. */
json_t *compare_scaling(const json_t *base, const json_t *cand);

#endif
