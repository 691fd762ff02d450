/* compare_load: load results in a comparison (compare.h, compare_load()): the scenario runs
 * that count on each side (the run, or find-peak's confirmation), matched by scenario and
 * target QPS; per match the p50, metric percentile and p99 of the latency and the throughput,
 * each with a bootstrap interval of the ratio: over the results when each side has two or
 * more, else a circular block bootstrap over the runs' per-second windows. An INVALID run
 * makes a verdict unreliable. The method and its limits: docs/compare.md#load-results. */
#include "analysis/compare.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/compare_method.h"
#include "analysis/compare_quality.h"
#include "analysis/significance.h"
#include "analysis/stats.h"
#include "doc/load.h"
#include "util/xalloc.h"

#define MIN_SECONDS 3  /* per-second windows a side needs for the block bootstrap */
#define MAX_MATCH 64   /* results per side that one match holds */

static json_t *jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* ---- the scenario runs that count ---- */

/* The results of one side and their load sections (doc/load.h, which says which runs count). */
struct results {
    const struct doc_result *const *doc;
    struct doc_load **load;
    size_t n;
};

/* Two runs are the same scenario when their names agree and, for the server scenario outside
 * find-peak, their target rates too (find-peak's confirmations run at each side's own peak). */
static bool same_key(const struct doc_load *la, const struct doc_load_run *a,
                     const struct doc_load *lb, const struct doc_load_run *b)
{
    if (!a->scenario || !b->scenario || strcmp(a->scenario, b->scenario) ||
        la->find_peak != lb->find_peak)
        return false;
    if (la->find_peak)
        return true;
    double qa = a->target_qps, qb = b->target_qps;
    return (isnan(qa) && isnan(qb)) || qa == qb;
}

/* The run of l that counts and matches key (a run of l_key), or NULL. */
static const struct doc_load_run *find_match(const struct doc_load *l, const struct doc_load *l_key,
                                             const struct doc_load_run *key)
{
    for (size_t i = 0; i < l->n_runs; i++)
        if (doc_load_counts(l, i) && same_key(l, &l->runs[i], l_key, key))
            return &l->runs[i];
    return NULL;
}

struct side {
    const struct doc_result *doc[MAX_MATCH];
    const struct doc_load *load[MAX_MATCH];
    const struct doc_load_run *run[MAX_MATCH];
    size_t n;
};

static void collect(struct side *s, const struct results *docs, const struct doc_load *l_key,
                    const struct doc_load_run *key)
{
    s->n = 0;
    for (size_t i = 0; i < docs->n && s->n < MAX_MATCH; i++) {
        const struct doc_load_run *r = find_match(docs->load[i], l_key, key);
        if (r) {
            s->doc[s->n] = docs->doc[i];
            s->load[s->n] = docs->load[i];
            s->run[s->n++] = r;
        }
    }
}

/* ---- figures of one run ---- */

/* A quantity: a latency percentile (p > 0) or the throughput (p 0). */
struct quantity {
    char name[24];
    double p;
    bool metric;
};

static double run_value(const struct doc_load_run *run, const struct quantity *q)
{
    return q->p > 0 ? doc_load_run_percentile(run, q->p) : run->throughput_qps;
}

/* The per-second series of a run for q, appended to v and w (weights; NULL for the
 * throughput): a latency percentile's windows that completed queries, weighted by their
 * count; for the throughput the completed count of every whole second. Returns false when the
 * windows carry no figure for q (only p50, p90 and p99 are kept per second). */
static bool run_seconds(const struct doc_load_run *run, const struct quantity *q, double *v,
                        double *w, size_t *n, size_t cap)
{
    if (q->p > 0 && q->p != 50 && q->p != 90 && q->p != 99)
        return false;
    for (size_t i = 0; i < doc_load_n_seconds(run); i++) {
        struct doc_load_second sec;
        doc_load_second(run, i, &sec);
        if (*n >= cap || !isfinite(sec.completed))
            continue;
        if (q->p > 0) {
            double x = q->p == 50 ? sec.p50_s : q->p == 90 ? sec.p90_s : sec.p99_s;
            if (sec.completed > 0 && isfinite(x)) {
                v[*n] = x;
                w[*n] = sec.completed;
                (*n)++;
            }
        } else if (isfinite(sec.t_s) && sec.t_s + 1 <= run->duration_s + 1e-6) {
            v[(*n)++] = sec.completed;
        }
    }
    return true;
}

static double median_of(const double *v, size_t n)
{
    double *t = xmalloc((n ? n : 1) * sizeof *t);
    memcpy(t, v, n * sizeof *t);
    double m = n ? stats_median(t, n) : NAN;
    free(t);
    return m;
}

/* ---- one row ---- */

/* Why the runs of a match make any verdict unreliable: every INVALID run with its first
 * reason; NULL when all are VALID. */
static char *invalid_reason(const struct side *b, const struct side *c)
{
    char *out = NULL;
    for (int pass = 0; pass < 2; pass++) {
        const struct side *s = pass ? c : b;
        for (size_t i = 0; i < s->n; i++) {
            if (s->run[i]->valid)
                continue;
            const char *why = json_string_value(json_array_get(s->run[i]->invalid_reasons, 0));
            char nth[32] = "";
            if (s->n > 1)
                snprintf(nth, sizeof nth, " (result %zu)", i + 1);
            char *part = xasprintf("the %s's run%s is INVALID: %s", pass ? "candidate" : "baseline",
                                   nth, why ? why : "no reason recorded");
            char *joined = out ? xasprintf("%s; %s", out, part) : xstrdup(part);
            free(out);
            free(part);
            out = joined;
        }
    }
    return out;
}

static bool all_valid(const struct side *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (!s->run[i]->valid)
            return false;
    return true;
}

/* The interval of a row in the per-second mode; false when a side lacks the windows. */
static double weighted_mean(const double *v, const double *w, size_t n)
{
    double sum = 0, weight = 0;
    for (size_t i = 0; i < n; i++) {
        sum += (w ? w[i] : 1) * v[i];
        weight += w ? w[i] : 1;
    }
    return weight > 0 ? sum / weight : NAN;
}

static bool seconds_interval(const struct side *b, const struct side *c, const struct quantity *q,
                             double point_ratio, const struct compare_options *opt,
                             double *lo, double *hi,
                             size_t *nwb, size_t *nwc, bool *no_figure)
{
    size_t cap = 0;
    for (size_t i = 0; i < b->n; i++)
        cap += doc_load_n_seconds(b->run[i]);
    for (size_t i = 0; i < c->n; i++)
        cap += doc_load_n_seconds(c->run[i]);
    double *vb = xmalloc((cap + 1) * sizeof *vb), *wb = xmalloc((cap + 1) * sizeof *wb);
    double *vc = xmalloc((cap + 1) * sizeof *vc), *wc = xmalloc((cap + 1) * sizeof *wc);
    *nwb = *nwc = 0;
    *no_figure = false;
    for (size_t i = 0; i < b->n; i++)
        *no_figure |= !run_seconds(b->run[i], q, vb, wb, nwb, cap);
    for (size_t i = 0; i < c->n; i++)
        *no_figure |= !run_seconds(c->run[i], q, vc, wc, nwc, cap);
    bool ok = !*no_figure && *nwb >= MIN_SECONDS && *nwc >= MIN_SECONDS &&
              significance_block_bootstrap_ratio(vb, q->p > 0 ? wb : NULL, *nwb, vc,
                                                 q->p > 0 ? wc : NULL, *nwc, 0, opt->resamples,
                                                 opt->seed, 1 - opt->alpha, lo, hi) == 0;
    /* The bootstrap is of the seconds' weighted mean, which is not the run's figure (a p99 of
     * the whole run is not the mean of the seconds' p99s): its interval, relative to the ratio
     * of the seconds' means, is placed around the ratio of the runs' figures, so that the
     * interval holds the change it is shown beside. */
    double sb = weighted_mean(vb, q->p > 0 ? wb : NULL, *nwb);
    double sc = weighted_mean(vc, q->p > 0 ? wc : NULL, *nwc);
    if (ok && sb > 0 && sc > 0 && point_ratio > 0 && isfinite(point_ratio)) {
        *lo *= point_ratio / (sc / sb);
        *hi *= point_ratio / (sc / sb);
    } else if (ok) {
        ok = false;
    }
    free(vb);
    free(wb);
    free(vc);
    free(wc);
    return ok;
}

/* The throughput is better when higher: its faster and slower are those of the time. */
static const char *flip(const char *verdict, bool higher_is_better)
{
    if (!higher_is_better)
        return verdict;
    if (!strcmp(verdict, "faster"))
        return "slower";
    if (!strcmp(verdict, "slower"))
        return "faster";
    return verdict;
}

static json_t *quantity_row(const struct side *b, const struct side *c, const struct quantity *q,
                            bool by_results, const struct compare_options *opt, unsigned *hits)
{
    double xb[MAX_MATCH], xc[MAX_MATCH];
    size_t nb = 0, nc = 0;
    for (size_t i = 0; i < b->n; i++)
        if (isfinite(xb[nb] = run_value(b->run[i], q)))
            nb++;
    for (size_t i = 0; i < c->n; i++)
        if (isfinite(xc[nc] = run_value(c->run[i], q)))
            nc++;
    double mb = median_of(xb, nb), mc = median_of(xc, nc);
    double change = mb > 0 && isfinite(mc) ? (mc - mb) / mb * 100 : NAN;
    double lo = NAN, hi = NAN, level = 1 - opt->alpha;
    struct significance_mwu mwu = {NAN, NAN, 0};
    const char *verdict;
    size_t nwb = 0, nwc = 0;
    if (by_results) {
        if (nb >= 2 && nc >= 2) {
            significance_mann_whitney(xb, nb, xc, nc, &mwu);
            significance_bootstrap_ratio(xb, nb, xc, nc, opt->resamples, opt->seed,
                                         1 - opt->alpha, &lo, &hi);
        }
        struct compare_decision d;
        compare_decide(opt, xb, nb, xc, nc, change, mwu.p, lo, hi, &d);
        verdict = d.verdict;
        lo = d.lo;
        hi = d.hi;
        level = d.level;
    } else {
        bool no_figure;
        if (!seconds_interval(b, c, q, mc / mb, opt, &lo, &hi, &nwb, &nwc, &no_figure)) {
            verdict = no_figure ? "not tested" : "too few seconds";
            lo = hi = NAN;
        } else {
            /* as span latency: no test, the interval alone decides */
            verdict = compare_interval_verdict(opt, change, lo, hi);
        }
    }
    verdict = flip(verdict, q->p == 0);
    const char *statistical = NULL;
    char *why = NULL;
    bool judged = strcmp(verdict, "too few runs") && strcmp(verdict, "too few seconds") &&
                  strcmp(verdict, "not tested");
    if (judged && (why = invalid_reason(b, c)) != NULL) {
        statistical = verdict;
        verdict = "unreliable";
    } else if ((!strcmp(verdict, "faster") || !strcmp(verdict, "slower")) &&
               (why = compare_explain(b->doc[0], c->doc[0], NULL,
                                      !strcmp(verdict, q->p == 0 ? "faster" : "slower") ==
                                          (q->p != 0), hits)) != NULL) {
        statistical = verdict;
        verdict = "unreliable";
    }
    json_t *row = json_pack("{s:s, s:s, s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:s, s:o, s:o}",
                            "name", q->name, "unit", q->p > 0 ? "s" : "qps", "metric", q->metric,
                            "baseline", jnum(mb), "candidate", jnum(mc), "change_pct",
                            jnum(change), "ratio_ci_low", jnum(lo), "ratio_ci_high", jnum(hi),
                            "p_value", jnum(mwu.p), "test",
                            isfinite(mwu.p) ? json_string(mwu.exact ? "exact"
                                                                    : "normal approximation")
                                            : json_null(),
                            "verdict", verdict, "statistical_verdict",
                            statistical ? json_string(statistical) : json_null(),
                            "unreliable_reason", why ? json_string(why) : json_null());
    json_object_set_new(row, "ratio_ci_level", jnum(isfinite(lo) ? level : NAN));
    if (!by_results) {
        json_object_set_new(row, "seconds_baseline", json_integer((json_int_t)nwb));
        json_object_set_new(row, "seconds_candidate", json_integer((json_int_t)nwc));
    }
    free(why);
    return row;
}

/* ---- one match ---- */

static size_t quantities(double metric_p, struct quantity *q)
{
    double ps[3] = {50, isfinite(metric_p) && metric_p > 0 && metric_p < 100 ? metric_p : 99, 99};
    size_t n = 0;
    for (int i = 0; i < 3; i++) {
        if (n && q[n - 1].p == ps[i])
            continue;
        q[n].p = ps[i];
        q[n].metric = ps[i] == ps[1];
        snprintf(q[n].name, sizeof q[n].name, "p%g", ps[i]);
        n++;
    }
    q[n].p = 0;
    q[n].metric = false;
    snprintf(q[n].name, sizeof q[n].name, "throughput_qps");
    return n + 1;
}

static json_t *match_json(const struct side *b, const struct side *c,
                          const struct compare_options *opt, unsigned *hits)
{
    bool by_results = b->n >= 2 && c->n >= 2;
    const struct doc_load_run *rb = b->run[0], *rc = c->run[0];
    double p = rb->percentile;
    json_t *o = json_pack("{s:s, s:o, s:o, s:b, s:o, s:s, s:I, s:I}", "scenario", rb->scenario,
                          "target_qps", jnum(rb->target_qps), "candidate_target_qps",
                          jnum(rc->target_qps), "peak", b->load[0]->find_peak, "percentile",
                          jnum(p), "resampling", by_results ? "results" : "seconds",
                          "n_baseline", (json_int_t)b->n, "n_candidate", (json_int_t)c->n);
    size_t windows = 0;
    for (size_t i = 0; i < b->n; i++)
        windows += doc_load_n_seconds(b->run[i]);
    json_object_set_new(o, "block_seconds",
                        by_results ? json_null()
                                   : json_integer((json_int_t)significance_default_block(windows)));
    json_object_set_new(o, "valid_baseline", json_boolean(all_valid(b)));
    json_object_set_new(o, "valid_candidate", json_boolean(all_valid(c)));
    struct quantity q[5];
    size_t nq = quantities(p, q);
    json_t *rows = json_array();
    for (size_t i = 0; i < nq; i++)
        json_array_append_new(rows, quantity_row(b, c, &q[i], by_results, opt, hits));
    json_object_set_new(o, "metrics", rows);
    return o;
}

/* The runs that count of the first of docs that the other side lacks, as {side, scenario,
 * target_qps}. */
static void unmatched(json_t *out, const char *side, const struct results *docs,
                      const struct results *other)
{
    const struct doc_load *l = docs->load[0];
    for (size_t i = 0; i < l->n_runs; i++) {
        const struct doc_load_run *r = &l->runs[i];
        if (!doc_load_counts(l, i))
            continue;
        struct side s;
        collect(&s, other, l, r);
        if (!s.n)
            json_array_append_new(out, json_pack("{s:s, s:o, s:o}", "side", side, "scenario",
                                                 r->scenario ? json_string(r->scenario)
                                                             : json_null(),
                                                 "target_qps", jnum(r->target_qps)));
    }
}

static void read_loads(struct results *s, const struct doc_result *const *docs, size_t n)
{
    s->doc = docs;
    s->n = n;
    s->load = xcalloc(n ? n : 1, sizeof *s->load);
    for (size_t i = 0; i < n; i++)
        s->load[i] = doc_load_read(docs[i]->load);
}

static void free_loads(struct results *s)
{
    for (size_t i = 0; i < s->n; i++)
        doc_load_free(s->load[i]);
    free(s->load);
}

json_t *compare_load(const struct doc_result *const *base, size_t nb,
                     const struct doc_result *const *cand, size_t nc,
                     const struct compare_options *opt, unsigned *hits)
{
    unsigned scratch = 0;
    struct compare_options defaults;
    if (!hits)
        hits = &scratch;
    if (!opt) {
        compare_options_default(&defaults);
        opt = &defaults;
    }
    if (!nb || !nc || !base[0]->load || !cand[0]->load)
        return json_null();
    struct results b, c;
    read_loads(&b, base, nb);
    read_loads(&c, cand, nc);
    json_t *matches = json_array(), *missing = json_array();
    const struct doc_load *l = b.load[0];
    for (size_t i = 0; i < l->n_runs; i++) {
        if (!doc_load_counts(l, i))
            continue;
        struct side sb, sc;
        collect(&sb, &b, l, &l->runs[i]);
        collect(&sc, &c, l, &l->runs[i]);
        if (sb.n && sc.n)
            json_array_append_new(matches, match_json(&sb, &sc, opt, hits));
    }
    unmatched(missing, "baseline", &b, &c);
    unmatched(missing, "candidate", &c, &b);
    free_loads(&b);
    free_loads(&c);
    return json_pack("{s:o, s:o}", "scenarios", matches, "unmatched", missing);
}
