/* compare_latency: per-stage span latency in a comparison: the p50 and p99 of a stage's spans
 * (each step, each request), pooled over the measured ok runs of each side, with a bootstrap
 * interval of the ratio of the quantiles (significance.h). The method and its limits are in
 * docs/compare.md#span-latency-p50-and-p99-per-stage. */
#include "analysis/compare_latency.h"
#include "analysis/compare_method.h"
#include "analysis/compare_quality.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/significance.h"
#include "analysis/stats.h"
#include "util/xalloc.h"

struct spans {
    double *v; /* durations in ns, sorted */
    size_t n;
};

/* The durations of the closed spans of stage over the measured ok runs of result, sorted. */
static struct spans stage_spans(const struct doc_result *result, const char *stage)
{
    struct spans s = {NULL, 0};
    size_t cap = 0;
    for (size_t i = 0; i < result->n_runs; i++) {
        const struct doc_run *run = &result->runs[i];
        if (!compare_run_counts(run))
            continue;
        for (size_t k = 0; k < doc_run_n_spans(run); k++) {
            struct doc_span sp;
            doc_run_span(run, k, &sp);
            double d = sp.end_ns - sp.start_ns;
            if (!sp.name || strcmp(sp.name, stage) || !sp.closed || !(d >= 0) || !isfinite(d))
                continue;
            s.v = xgrow(s.v, &cap, s.n + 1, sizeof *s.v);
            s.v[s.n++] = d;
        }
    }
    stats_sort(s.v, s.n);
    return s;
}

/* One quantile: both figures, the change, the interval of the ratio and a verdict (as a
 * stage's, without a test: the interval alone decides). */
static json_t *quantile_row(const struct doc_result *base, const struct doc_result *cand,
                            const char *stage, const struct spans *b, const struct spans *c, double q,
                            const struct compare_options *opt, unsigned *hits)
{
    double qb = stats_quantile_sorted(b->v, b->n, q), qc = stats_quantile_sorted(c->v, c->n, q);
    double change = qb > 0 ? (qc - qb) / qb * 100 : NAN;
    double lo = NAN, hi = NAN;
    significance_bootstrap_quantile_ratio(b->v, b->n, c->v, c->n, q, opt->resamples, opt->seed,
                                          1 - opt->alpha, &lo, &hi);
    const char *verdict = compare_interval_verdict(opt, change, lo, hi);
    char *why = NULL;
    const char *statistical = NULL;
    if ((!strcmp(verdict, "faster") || !strcmp(verdict, "slower")) &&
        (why = compare_explain(base, cand, stage, lo > 1, hits)) != NULL) {
        statistical = verdict;
        verdict = "unreliable";
    }
    json_t *row = json_pack("{s:f, s:f, s:o, s:o, s:o, s:s, s:o, s:o}", "baseline_ns", qb,
                            "candidate_ns", qc, "change_pct",
                            isfinite(change) ? json_real(change) : json_null(), "ratio_ci_low",
                            isfinite(lo) ? json_real(lo) : json_null(), "ratio_ci_high",
                            isfinite(hi) ? json_real(hi) : json_null(), "verdict", verdict,
                            "statistical_verdict",
                            statistical ? json_string(statistical) : json_null(),
                            "unreliable_reason", why ? json_string(why) : json_null());
    free(why);
    return row;
}

json_t *compare_latency(const struct doc_result *base, const struct doc_result *cand,
                        const char *stage, const struct compare_options *opt, unsigned *hits)
{
    struct spans b = stage_spans(base, stage), c = stage_spans(cand, stage);
    json_t *out;
    if (b.n < COMPARE_LATENCY_MIN_SPANS || c.n < COMPARE_LATENCY_MIN_SPANS)
        out = json_null();
    else
        out = json_pack("{s:I, s:I, s:o, s:o}", "n_baseline", (json_int_t)b.n, "n_candidate",
                        (json_int_t)c.n, "p50",
                        quantile_row(base, cand, stage, &b, &c, 0.50, opt, hits), "p99",
                        quantile_row(base, cand, stage, &b, &c, 0.99, opt, hits));
    free(b.v);
    free(c.v);
    return out;
}
