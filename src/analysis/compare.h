/* compare: compares mlbench results stage by stage (`mlbench compare`, and comparisons embedded
 * in reports): medians, change, bootstrap interval of the ratio of medians, Mann-Whitney U test,
 * verdicts, counters, metadata, resources and environment differences, and the CI gates.
 * Pure functions on JSON documents (no I/O), thread-safe. The method is in docs/compare.md. */
#ifndef MLBENCH_COMPARE_H
#define MLBENCH_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define COMPARE_SCHEMA "mlbench.comparison/1"
#define COMPARE_DEFAULT_ALPHA 0.05
#define COMPARE_DEFAULT_MIN_EFFECT_PCT 2.0
#define COMPARE_DEFAULT_RESAMPLES 10000u
#define COMPARE_DEFAULT_SEED UINT64_C(0x6d6c62656e6368) /* "mlbench" in ASCII */

struct compare_options {
    double alpha;           /* significance level, in (0, 1); the interval covers 1 - alpha */
    double min_effect_pct;  /* smallest |change| in percent that can count as a change, >= 0 */
    unsigned resamples;     /* bootstrap resamples, >= 1 */
    uint64_t seed;          /* bootstrap seed, <= INT64_MAX (JSON integers are signed): the
                             * same seed gives the same intervals */
};

/* The defaults: alpha 0.05, minimum effect 2 %, 10 000 resamples, COMPARE_DEFAULT_SEED. */
void compare_options_default(struct compare_options *opt);

/* Compares results[1..n) with results[0] (the baseline), each a result document as
 * result_load_file() returns it; paths[i] is where results[i] came from (paths, or any entry,
 * may be NULL: written as null). opt NULL means the defaults; bootstrap intervals need
 * O(resamples) memory and O(resamples * runs) time per stage. Returns a new reference to a
 * document of schema COMPARE_SCHEMA (shape in docs/compare.md), or NULL when n < 2 or an
 * option is out of range. Never fails on odd content: missing fields give nulls. */
json_t *compare_results(json_t *const *results, const char *const *paths, size_t n,
                        const struct compare_options *opt);

/* Mann-Whitney U test, two-sided, of samples x[0..nx) and y[0..ny). */
struct compare_mwu {
    double u;   /* U statistic of x: pairs (x_i, y_j) with x_i > y_j, ties counting 1/2 */
    double p;   /* two-sided p-value, in [0, 1] */
    int exact;  /* 1: exact distribution (no ties, C(nx+ny, nx) < 2^62, nx ny <= 10^7);
                 * 0: normal approximation with tie and continuity correction */
};

/* Fills *out. Returns 0, or -1 when nx or ny is 0 or a value is not finite (*out is then
 * {NAN, NAN, 0}). Uses O(nx + ny) heap scratch, and O(nx * ny) more for the exact case. */
int compare_mann_whitney(const double *x, size_t nx, const double *y, size_t ny,
                         struct compare_mwu *out);

/* Percentile bootstrap interval at level (in (0,1)) of median(cand) / median(base): both
 * samples are resampled with replacement `resamples` times from a generator seeded with
 * seed, so equal inputs give equal intervals. Returns 0 with *lo <= *hi, or -1 when a
 * sample is empty, a value is not finite, or a resampled baseline median is 0 (no ratio). */
int compare_bootstrap_ratio(const double *base, size_t nb, const double *cand, size_t nc,
                            unsigned resamples, uint64_t seed, double level, double *lo,
                            double *hi);

/* The CI gates of `mlbench compare` (docs/compare.md). A negative threshold is off. */
struct compare_gates {
    double fail_if_slower_pct;  /* fail when significantly slower by more than this */
    const char *stage;          /* the stage that gate looks at; NULL: "total" */
    double max_accuracy_drop;   /* fail when counter "accuracy" drops by more than this many
                                 * percentage points (values in 0..1 are read as fractions) */
};

#define COMPARE_GATE_PASS 0
#define COMPARE_GATE_FAIL 1

/* Checks the gates against every candidate of doc (a compare_results() document). Returns
 * COMPARE_GATE_PASS or COMPARE_GATE_FAIL; msg receives one line per failed gate and one per
 * note (a gate that could not judge, e.g. too few runs), '\n'-separated, saying why ("" when
 * there is nothing to say; truncated to msglen). */
int compare_check_gates(const json_t *doc, const struct compare_gates *gates, char *msg,
                        size_t msglen);

/* Nonzero when an environment key (a dotted path such as "gpus[0].name") describes hardware or
 * software that changes speed, so a difference makes two results not like for like. */
int compare_env_key_matters(const char *key);

/* Parse the value of --alpha (a number in (0, 1)) or --min-effect (a percentage >= 0, "5" or
 * "5%") into o, for every command that compares (compare, report). Return 0, or -1 with a
 * message in err naming the option, the value and what is expected. */
int compare_parse_alpha(const char *value, struct compare_options *o, char *err, size_t errlen);
int compare_parse_min_effect(const char *value, struct compare_options *o, char *err,
                             size_t errlen);

#endif
