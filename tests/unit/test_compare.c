/* Unit tests of src/analysis/significance.c and compare.c (`mlbench compare`): the Mann-Whitney
 * test against SciPy, the bootstrap interval, verdicts on synthetic results with known answers,
 * the side-by-side sections, environment rules, the CI gates, and the comparison document read
 * back through doc/comparison.h.
 *
 * Reference p-values were computed once with SciPy 1.10.1 (Debian 12 python3-scipy), not
 * needed to run these tests:
 *   from scipy.stats import mannwhitneyu
 *   r = mannwhitneyu(x, y, alternative="two-sided", method=M)  # M below, per case
 * and are recorded with the statistic r.statistic (U of x) next to each case. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "analysis/compare.h"
#include "analysis/significance.h"
#include "doc/comparison.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#include "assert_near.h"

/* ---- Mann-Whitney against SciPy ---- */

struct mwu_case {
    const char *name;
    const double *x;
    size_t nx;
    const double *y;
    size_t ny;
    double scipy_u, scipy_p;
    int exact; /* what significance_mann_whitney must choose */
};

static void check_mwu(const struct mwu_case *c)
{
    struct significance_mwu r;
    assert_int_equal(significance_mann_whitney(c->x, c->nx, c->y, c->ny, &r), 0);
    print_message("%s: U %g p %.17g exact %d\n", c->name, r.u, r.p, r.exact);
    assert_near(r.u, c->scipy_u, 1e-12);
    assert_near(r.p, c->scipy_p, 1e-10);
    assert_int_equal(r.exact, c->exact);
}

/* method "auto" (SciPy chose exact: no ties, a sample of at most 8). No overlap: U = 0 and
 * p = 2 / C(10, 5) = 2/252. */
static const double sep_x[] = {10.1, 12.3, 9.8, 11.0, 10.5};
static const double sep_y[] = {13.2, 12.9, 14.1, 13.7, 12.6};
/* method "auto" (exact). */
static const double ovl_x[] = {1.1, 2.3, 3.5, 4.2, 5.9, 6.1};
static const double ovl_y[] = {3.9, 5.0, 6.6, 7.2, 8.4, 9.0, 9.5};
/* method "exact": SciPy's "auto" would take the normal approximation for 12 and 15 values,
 * mlbench stays exact while C(27, 12) < 2^62. */
static const double e12_x[] = {101, 97, 103, 99, 105, 98, 102, 100, 104, 96, 106, 95.5};
static const double e12_y[] = {100.5, 103.5, 107, 108, 101.5, 109, 104.5, 110,
                               99.5, 106.5, 111, 102.5, 105.5, 112, 113};
/* method "exact": 3 against 200 values. */
static const double e3_x[] = {50.5, 60.25, 70.125};
static double e3_y[200]; /* i * 0.5 + 0.3, filled in the test */
/* method "auto" (SciPy: asymptotic, because of ties): tie and continuity corrections. */
static const double tie_x[] = {1, 2, 2, 3, 3, 3, 4};
static const double tie_y[] = {2, 3, 4, 4, 5, 5, 6};
static const double heavy_x[] = {5, 5, 5, 5, 6};
static const double heavy_y[] = {5, 6, 6, 6, 6};
static const double eq_x[] = {3, 3, 3};
static const double eq_y[] = {3, 3, 3, 3};
/* method "asymptotic": 40 + 40 values (random.gauss, seed 7), with one tie (101.182). */
static const double a40_x[] = {
    99.232, 101.534, 99.322, 99.055, 97.21,  99.36,   103.336, 101.272, 103.111, 100.747,
    101.184, 100.556, 95.002, 102.566, 101.519, 101.496, 94.926, 94.768, 97.331, 98.595,
    100.916, 99.862, 101.563, 98.073, 100.926, 101.182, 98.017, 105.153, 101.67, 103.591,
    98.139, 97.781, 98.968, 99.681, 101.896, 100.745, 98.658, 97.129, 98.438, 103.663};
static const double a40_y[] = {
    99.076, 102.234, 102.78, 97.031, 101.645, 105.419, 95.457, 100.535, 101.182, 99.048,
    102.992, 101.313, 97.106, 103.984, 103.508, 104.338, 105.822, 102.587, 101.858, 97.602,
    103.346, 99.665, 100.142, 97.706, 98.597, 99.907, 105.367, 95.405, 97.127, 102.218,
    105.83, 103.235, 95.8, 93.945, 102.572, 99.291, 98.141, 104.432, 104.805, 101.972};

static void test_mwu_scipy_references(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(e3_y); i++)
        e3_y[i] = (double)i * 0.5 + 0.3;
    const struct mwu_case cases[] = {
        {"exact separated", sep_x, 5, sep_y, 5, 0.0, 0.007936507936507936, 1},
        {"exact overlap", ovl_x, 6, ovl_y, 7, 5.0, 0.022144522144522144, 1},
        {"exact 12/15", e12_x, 12, e12_y, 15, 28.0, 0.001739429562824367, 1},
        {"exact 3/200", e3_x, 3, e3_y, 200, 361.0, 0.5686390269789422, 1},
        {"ties 7/7", tie_x, 7, tie_y, 7, 8.5, 0.043051432728945134, 0},
        {"heavy ties", heavy_x, 5, heavy_y, 5, 5.0, 0.09295731572744009, 0},
        {"all equal", eq_x, 3, eq_y, 4, 6.0, 1.0, 0},
        {"asymptotic 40/40", a40_x, 40, a40_y, 40, 638.5, 0.12132588716567975, 0},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++)
        check_mwu(&cases[i]);
}

/* Swapping the samples gives U' = nx ny - U and the same two-sided p. */
static void test_mwu_symmetric(void **state)
{
    (void)state;
    struct significance_mwu a, b;
    assert_int_equal(significance_mann_whitney(ovl_x, 6, ovl_y, 7, &a), 0);
    assert_int_equal(significance_mann_whitney(ovl_y, 7, ovl_x, 6, &b), 0);
    assert_near(b.u, 42 - a.u, 1e-12);
    assert_near(b.p, a.p, 1e-15);
}

/* Without ties and too many arrangements for 64 bits (C(80, 40) > 2^62): the approximation. */
static void test_mwu_large_without_ties_is_asymptotic(void **state)
{
    (void)state;
    double x[40], y[40];
    for (int i = 0; i < 40; i++) {
        x[i] = 2.0 * i;
        y[i] = 2.0 * i + 1;
    }
    struct significance_mwu r;
    assert_int_equal(significance_mann_whitney(x, 40, y, 40, &r), 0);
    assert_int_equal(r.exact, 0);
    assert_true(r.p > 0.5 && r.p <= 1);
}

static void test_mwu_bad_input(void **state)
{
    (void)state;
    struct significance_mwu r;
    double bad[] = {1, NAN};
    assert_int_equal(significance_mann_whitney(sep_x, 0, sep_y, 5, &r), -1);
    assert_true(isnan(r.p));
    assert_int_equal(significance_mann_whitney(bad, 2, sep_y, 5, &r), -1);
    assert_int_equal(significance_mann_whitney(sep_x, 5, bad, 2, &r), -1);
}

/* ---- bootstrap ---- */

static void test_bootstrap_deterministic(void **state)
{
    (void)state;
    double lo1, hi1, lo2, hi2, lo3, hi3;
    assert_int_equal(
        significance_bootstrap_ratio(e12_x, 12, e12_y, 15, 10000, 42, 0.95, &lo1, &hi1), 0);
    assert_int_equal(
        significance_bootstrap_ratio(e12_x, 12, e12_y, 15, 10000, 42, 0.95, &lo2, &hi2), 0);
    assert_true(lo1 == lo2 && hi1 == hi2); /* bit for bit */
    /* recorded from this implementation (xoshiro256** seeded by splitmix64, percentile with
     * linear interpolation): a change of generator or method changes stored comparisons */
    assert_near(lo1, 1.0145596060492905, 1e-15);
    assert_near(hi1, 1.1020408163265305, 1e-15);
    assert_int_equal(
        significance_bootstrap_ratio(e12_x, 12, e12_y, 15, 10000, 43, 0.95, &lo3, &hi3), 0);
    assert_true(lo3 != lo1 || hi3 != hi1); /* the seed is used */
    /* medians 100.5 and 106.5: the point estimate 1.0597 lies inside, and a different seed
     * moves the ends little */
    assert_true(lo1 < 106.5 / 100.5 && 106.5 / 100.5 < hi1);
    assert_true(lo1 > 1.0 && hi1 < 1.15);
    assert_near(lo3, lo1, 0.01);
    assert_near(hi3, hi1, 0.01);
    /* a wider level gives a wider interval */
    double lo99, hi99;
    significance_bootstrap_ratio(e12_x, 12, e12_y, 15, 10000, 42, 0.99, &lo99, &hi99);
    assert_true(lo99 <= lo1 && hi99 >= hi1);
}

/* Constant samples: every resample has the same medians, so the interval is the point. */
static void test_bootstrap_constant(void **state)
{
    (void)state;
    double b[] = {200, 200, 200}, c[] = {150, 150, 150, 150};
    double lo, hi;
    assert_int_equal(significance_bootstrap_ratio(b, 3, c, 4, 1000, 1, 0.95, &lo, &hi), 0);
    assert_near(lo, 0.75, 1e-15);
    assert_near(hi, 0.75, 1e-15);
    double zero[] = {0, 0};
    assert_int_equal(significance_bootstrap_ratio(zero, 2, c, 4, 1000, 1, 0.95, &lo, &hi), -1);
    assert_int_equal(significance_bootstrap_ratio(b, 0, c, 4, 1000, 1, 0.95, &lo, &hi), -1);
}

/* ---- synthetic results ---- */

/* Deterministic noise, uniform in [-1, 1) (splitmix64, so that nearby seeds give unrelated
 * streams), so the tests never depend on luck. */
static double noise(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0 * 2 - 1;
}

struct stage_spec {
    const char *name;
    double ns;    /* typical time */
    double rel;   /* relative noise, uniform in [-rel, rel) */
};

/* A result with n measured ok runs (plus one warm-up and one failed run that must be
 * ignored): wall = sum of its stages (or wall_ns when no stage) with noise. */
static json_t *make_result(const char *id, const char *label, size_t n, double wall_ns,
                           double rel, const struct stage_spec *stages, size_t n_stages,
                           uint64_t seed)
{
    json_t *runs = json_array(), *summary_stages = json_array();
    for (size_t i = 0; i < n_stages; i++)
        json_array_append_new(summary_stages, json_pack("{s:s, s:i, s:[]}", "name",
                                                        stages[i].name, "depth", 0,
                                                        "resources"));
    for (size_t r = 0; r < n + 2; r++) {
        json_t *st = json_array();
        double wall = n_stages ? 0 : wall_ns * (1 + rel * noise(&seed));
        for (size_t i = 0; i < n_stages; i++) {
            double t = stages[i].ns * (1 + stages[i].rel * noise(&seed));
            wall += t;
            json_array_append_new(st, json_pack("{s:s, s:I}", "name", stages[i].name,
                                                "active_ns", (json_int_t)llround(t)));
        }
        int warmup = r == 0, failed = r == 1;
        if (warmup || failed) /* far off: would change every verdict if counted */
            wall *= 5;
        json_array_append_new(runs, json_pack("{s:i, s:b, s:s, s:I, s:o}", "index", (int)r,
                                              "warmup", warmup, "status", failed ? "failed" : "ok",
                                              "wall_ns", (json_int_t)llround(wall), "stages",
                                              st));
    }
    return json_pack("{s:s, s:s, s:o, s:{s:s, s:i}, s:o, s:{s:o, s:[], s:[], s:[]}}",
                     "schema", "mlbench.result/1", "id", id, "label",
                     label ? json_string(label) : json_null(), "environment", "hostname",
                     "host-a", "cpus_online", 8, "runs", runs, "summary", "stages",
                     summary_stages, "counters", "metadata", "resources");
}

static const json_t *candidate(const json_t *doc, size_t i)
{
    return json_array_get(json_object_get(doc, "candidates"), i);
}

static const json_t *row_named(const json_t *c, const char *section, const char *field,
                               const char *name)
{
    size_t i;
    const json_t *r;
    json_array_foreach(json_object_get(c, section), i, r)
        if (!strcmp(json_string_value(json_object_get(r, field)), name))
            return r;
    return NULL;
}

static const char *verdict(const json_t *doc, size_t cand, const char *stage)
{
    const json_t *r = row_named(candidate(doc, cand), "stages", "name", stage);
    assert_non_null(r);
    return json_string_value(json_object_get(r, "verdict"));
}

static double field(const json_t *row, const char *key)
{
    const json_t *v = json_object_get(row, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *str_of(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static json_t *compare2(json_t *a, json_t *b, const struct compare_options *opt)
{
    json_t *r[2] = {a, b};
    const char *paths[2] = {"a.json", NULL};
    return compare_results(r, paths, 2, opt);
}

/* Two samples of the same distribution (different draws): no faster or slower; "no change"
 * when the interval lies within the minimum effect (2 %) either way, else "inconclusive" with
 * the runs that would settle it (issue 35: "no change" is said only where the runs show it). */
static void test_identical_distributions(void **state)
{
    (void)state;
    const struct stage_spec st[] = {{"load", 2e9, 0.05}, {"train", 5e9, 0.05}};
    json_t *a = make_result("A", "base", 10, 0, 0, st, 2, 1);
    json_t *b = make_result("B", NULL, 10, 0, 0, st, 2, 2);
    json_t *doc = compare2(a, b, NULL);
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "schema")),
                        "mlbench.comparison/1");
    assert_near(field(doc, "alpha"), 0.05, 1e-15);
    assert_near(field(doc, "min_effect_pct"), 2.0, 1e-15);
    const json_t *c = candidate(doc, 0);
    const json_t *stages = json_object_get(c, "stages");
    assert_int_equal(json_array_size(stages), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(stages, 2), "name")),
                        "total");
    for (size_t i = 0; i < 3; i++) {
        const json_t *row = json_array_get(stages, i);
        double lo = field(row, "ratio_ci_low"), hi = field(row, "ratio_ci_high");
        bool within = lo >= 1 / 1.02 && hi <= 1.02;
        assert_string_equal(str_of(row, "verdict"), within ? "no change" : "inconclusive");
        assert_true(json_is_null(json_object_get(row, "decided_by")));
        if (!within) {
            assert_true(json_integer_value(json_object_get(row, "runs_needed")) > 10);
            assert_true(field(row, "settle_pct") >= 2);
        }
    }
    const json_t *total = json_array_get(stages, 2);
    assert_int_equal(json_integer_value(json_object_get(total, "n_baseline")), 10);
    assert_int_equal(json_integer_value(json_object_get(total, "n_candidate")), 10);
    assert_true(field(total, "ratio_ci_low") < 1 && field(total, "ratio_ci_high") > 1);
    assert_true(field(total, "p_value") > 0.05);
    assert_string_equal(json_string_value(json_object_get(total, "test")), "exact");
    /* identities */
    const json_t *base = json_object_get(doc, "baseline");
    assert_string_equal(json_string_value(json_object_get(base, "id")), "A");
    assert_string_equal(json_string_value(json_object_get(base, "label")), "base");
    assert_string_equal(json_string_value(json_object_get(base, "path")), "a.json");
    assert_true(json_is_null(json_object_get(c, "label")));
    assert_true(json_is_null(json_object_get(c, "path")));
    assert_true(json_is_true(json_object_get(c, "like_for_like")));
    json_decref(doc);
    json_decref(a);
    json_decref(b);
}

/* The candidate's train stage is 10 % faster with 0.5 % noise: faster, interval below 1 and
 * around 0.9; load unchanged. */
static void test_ten_percent_faster(void **state)
{
    (void)state;
    const struct stage_spec sa[] = {{"load", 1e9, 0.005}, {"train", 4e9, 0.005}};
    const struct stage_spec sb[] = {{"load", 1e9, 0.005}, {"train", 3.6e9, 0.005}};
    json_t *a = make_result("A", NULL, 8, 0, 0, sa, 2, 11);
    json_t *b = make_result("B", NULL, 8, 0, 0, sb, 2, 12);
    json_t *doc = compare2(a, b, NULL);
    const json_t *train = row_named(candidate(doc, 0), "stages", "name", "train");
    assert_string_equal(json_string_value(json_object_get(train, "verdict")), "faster");
    assert_near(field(train, "change_pct"), -10, 0.05); /* within half a point */
    assert_near(field(train, "speedup"), 1 / 0.9, 0.015);
    assert_true(field(train, "ratio_ci_high") < 1);
    assert_true(field(train, "ratio_ci_low") > 0.88 && field(train, "ratio_ci_high") < 0.92);
    /* 8 against 8 without overlap: exact p = 2 / C(16, 8) */
    assert_near(field(train, "p_value"), 2.0 / 12870, 1e-12);
    assert_string_equal(str_of(train, "decided_by"), "rank test");
    assert_near(field(train, "ratio_ci_level"), 0.95, 1e-12);
    assert_string_equal(verdict(doc, 0, "load"), "no change"); /* 0.5 % noise, 8 runs */
    assert_string_equal(verdict(doc, 0, "total"), "faster");
    json_decref(doc);

    /* the other way round it is slower */
    doc = compare2(b, a, NULL);
    assert_string_equal(verdict(doc, 0, "train"), "slower");
    assert_true(field(row_named(candidate(doc, 0), "stages", "name", "train"), "ratio_ci_low")
                > 1);
    json_decref(doc);
    json_decref(a);
    json_decref(b);
}

/* A 1 % change measured precisely is significant by the test but below the minimum effect. */
static void test_min_effect(void **state)
{
    (void)state;
    json_t *a = make_result("A", NULL, 10, 1e9, 0.001, NULL, 0, 21);
    json_t *b = make_result("B", NULL, 10, 1.01e9, 0.001, NULL, 0, 22);
    json_t *doc = compare2(a, b, NULL);
    const json_t *total = row_named(candidate(doc, 0), "stages", "name", "total");
    assert_true(field(total, "p_value") < 0.001);
    assert_true(field(total, "ratio_ci_low") > 1);
    assert_string_equal(json_string_value(json_object_get(total, "verdict")), "no change");
    json_decref(doc);
    struct compare_options opt;
    compare_options_default(&opt);
    opt.min_effect_pct = 0.5;
    doc = compare2(a, b, &opt);
    assert_string_equal(verdict(doc, 0, "total"), "slower");
    assert_near(field(doc, "min_effect_pct"), 0.5, 1e-15);
    json_decref(doc);
    /* a stricter alpha than the best p of 10 against 10 (2/184756 ~ 1.1e-5): the rank test
     * cannot reach it, and the distribution-free interval decides, at its real coverage */
    opt.alpha = 1e-6;
    doc = compare2(a, b, &opt);
    total = row_named(candidate(doc, 0), "stages", "name", "total");
    assert_string_equal(str_of(total, "verdict"), "slower");
    assert_string_equal(str_of(total, "decided_by"), "ratio interval");
    assert_near(field(total, "ratio_ci_level"), 1 - 2.0 / 184756, 1e-12);
    json_decref(doc);
    json_decref(a);
    json_decref(b);
}

/* Issue 35: the README's 3 runs a side. The rank test's smallest p is 2 / C(6, 3) = 0.1, so it
 * can never reach 0.05: a 2x slowdown was "no significant change". The interval of the ratio
 * (the smallest and largest of the 9 ratios, exact coverage 90 %) decides it; an A/A pair is
 * not called faster or slower, and says how many runs would settle it. 2 runs a side (a 67 %
 * interval) decide nothing. */
static void test_three_runs_decide(void **state)
{
    (void)state;
    assert_near(compare_rank_p_min(3, 3), 0.1, 1e-15);
    assert_near(compare_rank_p_min(10, 10), 2.0 / 184756, 1e-18);
    assert_near(compare_rank_p_min(1, 1), 1, 0);
    json_t *a = make_result("A", NULL, 3, 1e9, 0.01, NULL, 0, 41);
    json_t *b = make_result("B", NULL, 3, 2e9, 0.01, NULL, 0, 42);
    json_t *doc = compare2(a, b, NULL);
    const json_t *total = row_named(candidate(doc, 0), "stages", "name", "total");
    assert_string_equal(str_of(total, "verdict"), "slower");
    assert_string_equal(str_of(total, "decided_by"), "ratio interval");
    assert_near(field(total, "ratio_ci_level"), 0.9, 1e-12);
    assert_true(field(total, "ratio_ci_low") > 1.9 && field(total, "ratio_ci_high") < 2.1);
    assert_near(field(total, "p_value"), 0.1, 1e-12);
    json_decref(doc);
    json_decref(b);
    /* A/A: the same distribution, 1 % noise */
    b = make_result("B", NULL, 3, 1e9, 0.01, NULL, 0, 43);
    doc = compare2(a, b, NULL);
    total = row_named(candidate(doc, 0), "stages", "name", "total");
    const char *v = str_of(total, "verdict");
    assert_true(!strcmp(v, "inconclusive") || !strcmp(v, "no change"));
    if (!strcmp(v, "inconclusive"))
        assert_true(json_integer_value(json_object_get(total, "runs_needed")) > 3);
    json_decref(doc);
    json_decref(a);
    json_decref(b);
    /* 2 against 2, a 2x slowdown: a 67 % interval decides nothing */
    a = make_result("A", NULL, 2, 1e9, 0.01, NULL, 0, 44);
    b = make_result("B", NULL, 2, 2e9, 0.01, NULL, 0, 45);
    doc = compare2(a, b, NULL);
    total = row_named(candidate(doc, 0), "stages", "name", "total");
    assert_string_equal(str_of(total, "verdict"), "inconclusive");
    assert_near(field(total, "ratio_ci_level"), 1 - 2.0 / 6, 1e-12);
    assert_true(json_integer_value(json_object_get(total, "runs_needed")) >= 3);
    json_decref(doc);
    json_decref(a);
    json_decref(b);
}

static void test_too_few_runs(void **state)
{
    (void)state;
    json_t *a = make_result("A", NULL, 1, 1e9, 0.001, NULL, 0, 31);
    json_t *b = make_result("B", NULL, 5, 2e9, 0.001, NULL, 0, 32);
    json_t *doc = compare2(a, b, NULL);
    const json_t *total = row_named(candidate(doc, 0), "stages", "name", "total");
    assert_string_equal(json_string_value(json_object_get(total, "verdict")), "too few runs");
    assert_true(json_is_null(json_object_get(total, "p_value")));
    assert_true(json_is_null(json_object_get(total, "ratio_ci_low")));
    assert_near(field(total, "change_pct"), 100, 0.01); /* still shown */
    assert_int_equal(json_integer_value(json_object_get(total, "n_baseline")), 1);
    json_decref(doc);
    json_decref(a);
    json_decref(b);
}

/* Stages on one side only are listed as missing; the total is always compared. */
static void test_missing_stages(void **state)
{
    (void)state;
    const struct stage_spec sa[] = {{"load", 1e9, 0.01}, {"augment", 1e9, 0.01}};
    const struct stage_spec sb[] = {{"load", 1e9, 0.01}, {"cache", 1e8, 0.01}};
    json_t *a = make_result("A", NULL, 5, 0, 0, sa, 2, 41);
    json_t *b = make_result("B", NULL, 5, 0, 0, sb, 2, 42);
    json_t *doc = compare2(a, b, NULL);
    const json_t *stages = json_object_get(candidate(doc, 0), "stages");
    const char *order[] = {"load", "augment", "cache", "total"};
    assert_int_equal(json_array_size(stages), 4);
    for (size_t i = 0; i < 4; i++)
        assert_string_equal(json_string_value(json_object_get(json_array_get(stages, i), "name")),
                            order[i]);
    assert_string_equal(verdict(doc, 0, "augment"), "missing in candidate");
    assert_string_equal(verdict(doc, 0, "cache"), "missing in baseline");
    const json_t *cache = json_array_get(stages, 2);
    assert_true(json_is_null(json_object_get(cache, "baseline_median_ns")));
    assert_near(field(cache, "candidate_median_ns"), 1e8, 0.02);
    assert_string_equal(verdict(doc, 0, "total"), "faster");
    assert_int_equal(json_integer_value(json_object_get(candidate(doc, 0), "common_stages")), 1);
    json_decref(doc);
    json_decref(a);
    json_decref(b);
}

/* Warm-up and failed runs (5x slower in make_result) are not counted. */
static void test_only_measured_ok_runs(void **state)
{
    (void)state;
    json_t *a = make_result("A", NULL, 4, 1e9, 0.0, NULL, 0, 51);
    json_t *b = make_result("B", NULL, 4, 1e9, 0.0, NULL, 0, 52);
    json_t *doc = compare2(a, b, NULL);
    const json_t *total = row_named(candidate(doc, 0), "stages", "name", "total");
    assert_int_equal(json_integer_value(json_object_get(total, "n_baseline")), 4);
    assert_near(field(total, "baseline_median_ns"), 1e9, 1e-12);
    assert_near(field(total, "p_value"), 1.0, 1e-15); /* all tied */
    assert_string_equal(json_string_value(json_object_get(total, "test")),
                        "normal approximation");
    json_decref(doc);
    json_decref(a);
    json_decref(b);
}

/* Counters, metadata and resources side by side; more than two results against the first. */
static void test_side_by_side_and_many(void **state)
{
    (void)state;
    const struct stage_spec st[] = {{"train", 1e9, 0.01}};
    json_t *r[3];
    for (int i = 0; i < 3; i++) {
        r[i] = make_result(i == 0 ? "A" : i == 1 ? "B" : "C", NULL, 5, 0, 0, st, 1,
                           (uint64_t)(60 + i));
        json_t *summary = json_object_get(r[i], "summary");
        json_array_append_new(json_object_get(summary, "counters"),
                              json_pack("{s:s, s:{s:f}}", "name", "accuracy", "last", "median",
                                        0.9 - 0.01 * i));
        if (i == 0)
            json_array_append_new(json_object_get(summary, "counters"),
                                  json_pack("{s:s, s:{s:n}}", "name", "loss", "last", "median"));
        json_array_append_new(json_object_get(summary, "metadata"),
                              json_pack("{s:s, s:s, s:b}", "key", "batch_size", "value",
                                        i ? "64" : "32", "varies", 0));
        json_t *res = json_pack("[{s:s, s:s, s:s, s:f, s:f, s:f, s:i}, "
                                "{s:s, s:s, s:s, s:f, s:f, s:f, s:i}]",
                                "metric", "process_cpu_seconds_total", "labels", "", "kind",
                                "rate", "mean", 1.0 + i, "min", 0.5, "peak", 4.0, "n", 10,
                                "metric", "gpu_utilization_ratio", "labels", "gpu=\"0\"", "kind",
                                "gauge", "mean", 0.3 + 0.2 * i, "min", 0.0, "peak", 1.0, "n", 10);
        json_object_set_new(json_array_get(json_object_get(summary, "stages"), 0), "resources",
                            res);
    }
    const char *paths[3] = {"a.json", "b.json", "c.json"};
    json_t *doc = compare_results(r, paths, 3, NULL);
    assert_int_equal(json_array_size(json_object_get(doc, "candidates")), 2);
    const json_t *c = candidate(doc, 1);
    assert_string_equal(json_string_value(json_object_get(c, "id")), "C");
    assert_string_equal(json_string_value(json_object_get(c, "path")), "c.json");
    const json_t *acc = row_named(c, "counters", "name", "accuracy");
    assert_near(field(acc, "baseline"), 0.9, 1e-12);
    assert_near(field(acc, "candidate"), 0.88, 1e-12);
    const json_t *loss = row_named(c, "counters", "name", "loss");
    assert_true(json_is_null(json_object_get(loss, "baseline")));
    assert_true(json_is_null(json_object_get(loss, "candidate")));
    const json_t *bs = row_named(c, "metadata", "key", "batch_size");
    assert_string_equal(json_string_value(json_object_get(bs, "baseline")), "32");
    assert_string_equal(json_string_value(json_object_get(bs, "candidate")), "64");
    const json_t *cores = row_named(c, "resources", "metric", "process_cpu_seconds_total");
    assert_string_equal(json_string_value(json_object_get(cores, "stage")), "train");
    assert_string_equal(json_string_value(json_object_get(cores, "statistic")), "mean");
    assert_near(field(cores, "baseline"), 1.0, 1e-12);
    assert_near(field(cores, "candidate"), 3.0, 1e-12);
    const json_t *gpu = row_named(c, "resources", "metric", "gpu_utilization_ratio{gpu=\"0\"}");
    assert_non_null(gpu);
    assert_near(field(gpu, "candidate"), 0.7, 1e-12);
    json_decref(doc);
    for (int i = 0; i < 3; i++)
        json_decref(r[i]);
}

/* ---- environment ---- */

static void test_env_key_rules(void **state)
{
    (void)state;
    const char *matter[] = {"cpu.model", "cpus_online", "kernel", "machine", "gpus[0].name",
                            "gpus[1].driver_version", "gpus[0].memory_total_bytes",
                            "gpus[0].power_limit_watts", "variables.OMP_NUM_THREADS",
                            "variables.LD_LIBRARY_PATH", "blas.threads", "os.version_id",
                            "cpu.frequency.governor", "cuda_runtime_version"};
    const char *info[] = {"hostname", "gpus[0].uuid", "gpus[0].pci_bus_id", "git.commit",
                          "git.dirty", "memory.available_bytes", "cpu.mhz", "boot_time",
                          "gpus[0].temperature_celsius", "unknown_thing", "mlbench.version"};
    for (size_t i = 0; i < ARRAY_LEN(matter); i++)
        if (!compare_env_key_matters(matter[i]))
            fail_msg("%s should matter", matter[i]);
    for (size_t i = 0; i < ARRAY_LEN(info); i++)
        if (compare_env_key_matters(info[i]))
            fail_msg("%s should be informational", info[i]);
}

static void test_env_differences(void **state)
{
    (void)state;
    json_t *a = make_result("A", NULL, 3, 1e9, 0.01, NULL, 0, 71);
    json_t *b = make_result("B", NULL, 3, 1e9, 0.01, NULL, 0, 72);
    /* hostname only: informational, still like for like */
    json_object_set_new(json_object_get(b, "environment"), "hostname", json_string("host-b"));
    json_t *doc = compare2(a, b, NULL);
    const json_t *c = candidate(doc, 0);
    assert_true(json_is_true(json_object_get(c, "like_for_like")));
    assert_int_equal(json_array_size(json_object_get(c, "environment_differences")), 1);
    const json_t *h = row_named(c, "environment_differences", "key", "hostname");
    assert_string_equal(json_string_value(json_object_get(h, "baseline")), "host-a");
    assert_string_equal(json_string_value(json_object_get(h, "candidate")), "host-b");
    assert_true(json_is_false(json_object_get(h, "matters")));
    json_decref(doc);

    /* nested GPU name, a thread variable added (variables keyed by name), a key only in the
     * baseline */
    json_object_set_new(json_object_get(a, "environment"), "gpus",
                        json_pack("[{s:s, s:s}]", "name", "NVIDIA A100", "uuid", "GPU-1"));
    json_object_set_new(json_object_get(b, "environment"), "gpus",
                        json_pack("[{s:s, s:s}]", "name", "NVIDIA H200", "uuid", "GPU-2"));
    json_object_set_new(json_object_get(a, "environment"), "variables",
                        json_pack("[{s:s, s:s}]", "name", "PYTORCH_CUDA_ALLOC_CONF", "value",
                                  "x"));
    json_object_set_new(json_object_get(b, "environment"), "variables",
                        json_pack("[{s:s, s:s}, {s:s, s:s}]", "name", "OMP_NUM_THREADS",
                                  "value", "4", "name", "PYTORCH_CUDA_ALLOC_CONF", "value", "x"));
    json_object_set_new(json_object_get(a, "environment"), "kernel", json_string("Linux 6.1"));
    doc = compare2(a, b, NULL);
    c = candidate(doc, 0);
    assert_true(json_is_false(json_object_get(c, "like_for_like")));
    const json_t *g = row_named(c, "environment_differences", "key", "gpus[0].name");
    assert_non_null(g);
    assert_true(json_is_true(json_object_get(g, "matters")));
    const json_t *u = row_named(c, "environment_differences", "key", "gpus[0].uuid");
    assert_true(json_is_false(json_object_get(u, "matters")));
    const json_t *omp = row_named(c, "environment_differences", "key",
                                  "variables.OMP_NUM_THREADS");
    assert_non_null(omp);
    assert_true(json_is_null(json_object_get(omp, "baseline")));
    assert_string_equal(json_string_value(json_object_get(omp, "candidate")), "4");
    assert_null(row_named(c, "environment_differences", "key",
                          "variables.PYTORCH_CUDA_ALLOC_CONF"));
    const json_t *k = row_named(c, "environment_differences", "key", "kernel");
    assert_true(json_is_null(json_object_get(k, "candidate")));
    assert_true(json_is_true(json_object_get(k, "matters")));
    json_decref(doc);
    json_decref(a);
    json_decref(b);
}

/* ---- measurement quality (issue 13, point 1) ---- */

/* Sets what a side's resources say over the whole run (stage NULL) or one stage: the
 * workload's own cores, other processes' cores (on the 8 CPUs of make_result) and the CPU
 * pressure. */
static void set_load(json_t *result, const char *stage, double own, double other, double psi)
{
    json_t *summary = json_object_get(result, "summary"), *res = json_array();
    json_array_append_new(res, json_pack("{s:s, s:s, s:f, s:i}", "metric",
                                         "process_cpu_seconds_total", "kind", "rate", "mean",
                                         own, "n", 10));
    json_array_append_new(res, json_pack("{s:s, s:s, s:f, s:i}", "metric",
                                         "system_cpu_busy_ratio", "kind", "gauge", "mean",
                                         (own + other) / 8, "n", 10));
    json_array_append_new(res, json_pack("{s:s, s:s, s:f, s:i}", "metric",
                                         "system_pressure_cpu_some_seconds_total", "kind",
                                         "rate", "mean", psi, "n", 10));
    if (!stage) {
        json_object_set_new(summary, "resources", res);
        return;
    }
    size_t i;
    json_t *st;
    json_array_foreach(json_object_get(summary, "stages"), i, st)
        if (!strcmp(json_string_value(json_object_get(st, "name")), stage))
            json_object_set(st, "resources", res);
    json_decref(res);
}

/* Adds the mean of metric over the whole runs to result's summary.resources. */
static void add_resource(json_t *result, const char *metric, double mean)
{
    json_array_append_new(json_object_get(json_object_get(result, "summary"), "resources"),
                          json_pack("{s:s, s:f, s:i}", "metric", metric, "mean", mean, "n", 10));
}

static void add_warning(json_t *result, const char *code)
{
    json_t *w = json_object_get(result, "warnings");
    if (!w)
        json_object_set_new(result, "warnings", w = json_array());
    json_array_append_new(w, json_pack("{s:s, s:s}", "code", code, "message", "seen"));
}

/* train 10 % slower in the candidate, load unchanged (0.5 % noise, 8 runs each). */
static void slower_pair(json_t **a, json_t **b)
{
    const struct stage_spec sa[] = {{"load", 1e9, 0.005}, {"train", 4e9, 0.005}};
    const struct stage_spec sb[] = {{"load", 1e9, 0.005}, {"train", 4.4e9, 0.005}};
    *a = make_result("A", NULL, 8, 0, 0, sa, 2, 31);
    *b = make_result("B", NULL, 8, 0, 0, sb, 2, 32);
}

/* The observed case: the slower side ran beside other processes' load. */
static void test_disturbed_slower_side_is_unreliable(void **state)
{
    (void)state;
    json_t *a, *b;
    slower_pair(&a, &b);
    set_load(a, NULL, 1.0, 0.0, 0.01);
    set_load(b, NULL, 1.0, 1.2, 0.05);
    add_warning(b, "other_load");
    add_warning(b, "malformed_markers"); /* not about measurement quality */
    add_warning(a, "high_cv");
    json_t *doc = compare2(a, b, NULL);
    const json_t *c = candidate(doc, 0);
    const json_t *train = row_named(c, "stages", "name", "train");
    assert_string_equal(str_of(train, "verdict"), "unreliable");
    assert_string_equal(str_of(train, "statistical_verdict"), "slower");
    const char *why = str_of(train, "unreliable_reason");
    print_message("reason: %s\n", why);
    assert_non_null(strstr(why, "candidate"));
    assert_non_null(strstr(why, "1.2 CPU cores"));
    assert_non_null(strstr(why, "(the other side 0.0)"));
    assert_non_null(strstr(why, "over the runs"));
    assert_non_null(strstr(why, "other_load"));
    assert_null(strstr(why, "cpu_contention")); /* 5 % pressure is below the limit */
    assert_string_equal(verdict(doc, 0, "total"), "unreliable");
    /* an unchanged stage stays what it was, with both fields null */
    const json_t *load = row_named(c, "stages", "name", "load");
    assert_string_equal(str_of(load, "verdict"), "no change");
    assert_true(json_is_null(json_object_get(load, "statistical_verdict")));
    assert_true(json_is_null(json_object_get(load, "unreliable_reason")));
    /* the quality warnings of each side, and only those */
    const json_t *q = json_object_get(c, "quality");
    assert_int_equal(json_array_size(json_object_get(q, "candidate")), 1);
    assert_string_equal(str_of(json_array_get(json_object_get(q, "candidate"), 0), "code"),
                        "other_load");
    assert_string_equal(str_of(json_array_get(json_object_get(q, "baseline"), 0), "code"),
                        "high_cv");
    const char *clean = str_of(c, "clean_answer");
    assert_non_null(clean);
    assert_non_null(strstr(clean, "no other processes"));
    assert_non_null(strstr(clean, "-r 10"));
    json_decref(doc);
    json_decref(a);
    json_decref(b);
}

/* A disturbance can only slow a side down: on the faster side it leaves the verdict alone;
 * the other way round (the baseline disturbed and slower) it makes a "faster" unreliable. */
static void test_disturbed_faster_side_keeps_verdict(void **state)
{
    (void)state;
    json_t *a, *b;
    slower_pair(&a, &b);
    set_load(a, NULL, 1.0, 1.2, 0.6);
    set_load(b, NULL, 1.0, 0.0, 0.01);
    json_t *doc = compare2(a, b, NULL);
    const json_t *c = candidate(doc, 0);
    assert_string_equal(verdict(doc, 0, "train"), "slower");
    assert_true(json_is_null(json_object_get(row_named(c, "stages", "name", "train"),
                                             "unreliable_reason")));
    assert_true(json_is_null(json_object_get(c, "clean_answer")));
    json_decref(doc);
    json_decref(a);
    json_decref(b);
    /* the roles swapped: the baseline (b) is slower and disturbed, the candidate (a) quiet */
    slower_pair(&a, &b);
    set_load(a, NULL, 1.0, 0.0, 0.01);
    set_load(b, NULL, 1.0, 1.2, 0.6);
    doc = compare2(b, a, NULL);
    const json_t *train = row_named(candidate(doc, 0), "stages", "name", "train");
    assert_string_equal(str_of(train, "verdict"), "unreliable");
    assert_string_equal(str_of(train, "statistical_verdict"), "faster");
    assert_non_null(strstr(str_of(train, "unreliable_reason"), "the baseline, which came out"));
    /* 60 % CPU pressure beside 1.2 other cores: both kinds are named */
    assert_non_null(strstr(str_of(train, "unreliable_reason"), "cpu_contention"));
    json_decref(doc);
    json_decref(a);
    json_decref(b);
}

/* Both sides disturbed: unreliable only where the slower side was clearly (by half a
 * threshold) more disturbed (issue 35: two sides disturbed alike, as interleaved runs are, were
 * unreliable); and a stage that used no CPU cannot be slowed by other processes' CPU use. */
static void test_disturbance_margin_and_cpu_use(void **state)
{
    (void)state;
    json_t *a, *b;
    slower_pair(&a, &b);
    set_load(a, NULL, 1.0, 1.0, 0.0);
    set_load(b, NULL, 1.0, 1.1, 0.0);
    json_t *doc = compare2(a, b, NULL);
    assert_string_equal(verdict(doc, 0, "train"), "slower"); /* as disturbed as the other */
    json_decref(doc);
    set_load(b, NULL, 1.0, 1.25, 0.0); /* clearly more: by half the 0.5-core limit */
    doc = compare2(a, b, NULL);
    assert_string_equal(verdict(doc, 0, "train"), "unreliable");
    json_decref(doc);
    set_load(b, NULL, 1.0, 1.1, 0.0);
    set_load(a, NULL, 1.0, 1.7, 0.0); /* the faster side had 0.6 cores more */
    doc = compare2(a, b, NULL);
    assert_string_equal(verdict(doc, 0, "train"), "slower");
    json_decref(doc);
    set_load(a, NULL, 0.01, 0.0, 0.0);
    set_load(b, NULL, 0.01, 3.0, 0.9); /* sleeping: 0.01 cores of its own */
    doc = compare2(a, b, NULL);
    assert_string_equal(verdict(doc, 0, "train"), "slower");
    json_decref(doc);
    /* CPU pressure alone, with no other process busy, is the workload's own: not noise */
    set_load(a, NULL, 8.0, 0.0, 0.0);
    set_load(b, NULL, 8.0, 0.0, 0.7);
    doc = compare2(a, b, NULL);
    assert_string_equal(verdict(doc, 0, "train"), "slower");
    json_decref(doc);
    json_decref(a);
    json_decref(b);
}

/* A stage's own samples decide for that stage when both sides have them: train was quiet on
 * both sides even though the candidate's run as a whole was disturbed (during load). */
static void test_disturbance_per_stage(void **state)
{
    (void)state;
    json_t *a, *b;
    slower_pair(&a, &b);
    set_load(a, NULL, 1.0, 0.0, 0.0);
    set_load(b, NULL, 1.0, 1.0, 0.0);
    set_load(a, "train", 1.0, 0.0, 0.0);
    set_load(b, "train", 1.0, 0.1, 0.0);
    json_t *doc = compare2(a, b, NULL);
    assert_string_equal(verdict(doc, 0, "train"), "slower");
    assert_string_equal(verdict(doc, 0, "total"), "unreliable");
    json_decref(doc);
    set_load(b, "train", 1.0, 0.9, 0.0);
    doc = compare2(a, b, NULL);
    const json_t *train = row_named(candidate(doc, 0), "stages", "name", "train");
    assert_string_equal(str_of(train, "verdict"), "unreliable");
    assert_non_null(strstr(str_of(train, "unreliable_reason"), "during the stage"));
    json_decref(doc);
    json_decref(a);
    json_decref(b);
}

/* GPU throttling is known per result (summary.gpu_clock, else its warning); swapping from the
 * swap rates. */
static void test_throttling_and_swapping(void **state)
{
    (void)state;
    json_t *a, *b;
    slower_pair(&a, &b);
    add_warning(b, "gpu_throttling");
    json_t *doc = compare2(a, b, NULL);
    const json_t *train = row_named(candidate(doc, 0), "stages", "name", "train");
    assert_string_equal(str_of(train, "verdict"), "unreliable");
    assert_non_null(strstr(str_of(train, "unreliable_reason"), "gpu_throttling"));
    assert_non_null(strstr(str_of(candidate(doc, 0), "clean_answer"), "GPU"));
    json_decref(doc);
    add_warning(a, "gpu_throttling"); /* both throttled alike: the verdict stands */
    doc = compare2(a, b, NULL);
    assert_string_equal(verdict(doc, 0, "train"), "slower");
    json_decref(doc);
    json_decref(a);
    json_decref(b);
    /* with summary.gpu_clock, the runs --discard-throttled left out do not count: the slower
     * side's statistics are over unthrottled runs, and its warning stays only as a note */
    slower_pair(&a, &b);
    add_warning(b, "gpu_throttling");
    json_t *gc = json_pack("{s:i, s:i}", "throttled_runs", 2, "discarded_runs", 2);
    json_object_set_new(json_object_get(b, "summary"), "gpu_clock", gc);
    doc = compare2(a, b, NULL);
    assert_string_equal(verdict(doc, 0, "train"), "slower");
    json_decref(doc);
    json_object_set_new(gc, "discarded_runs", json_integer(1)); /* one throttled run is kept */
    doc = compare2(a, b, NULL);
    assert_string_equal(verdict(doc, 0, "train"), "unreliable");
    json_decref(doc);
    json_decref(a);
    json_decref(b);
    slower_pair(&a, &b);
    add_resource(b, "system_swap_in_bytes_total", 1e6);
    add_resource(a, "system_swap_in_bytes_total", 0.0);
    doc = compare2(a, b, NULL);
    train = row_named(candidate(doc, 0), "stages", "name", "train");
    assert_string_equal(str_of(train, "verdict"), "unreliable");
    assert_non_null(strstr(str_of(train, "unreliable_reason"), "swapping"));
    json_decref(doc);
    json_decref(a);
    json_decref(b);
}

/* Steal time: the hypervisor's share of the CPUs is no other process's load (no other_load),
 * but a disturbance of its own (cpu_steal), with its own advice in the clean answer. */
static void test_steal(void **state)
{
    (void)state;
    json_t *a, *b;
    slower_pair(&a, &b);
    set_load(a, NULL, 1.0, 0.0, 0.0);
    set_load(b, NULL, 1.0, 1.6, 0.0); /* 8 CPUs: 0.2 of them stolen, all of the "other" */
    add_resource(a, "system_cpu_steal_ratio", 0.01);
    add_resource(b, "system_cpu_steal_ratio", 0.2);
    json_t *doc = compare2(a, b, NULL);
    const json_t *total = row_named(candidate(doc, 0), "stages", "name", "total");
    assert_string_equal(str_of(total, "verdict"), "unreliable");
    const char *why = str_of(total, "unreliable_reason");
    print_message("reason: %s\n", why);
    assert_non_null(strstr(why, "cpu_steal"));
    assert_non_null(strstr(why, "20 %"));
    assert_null(strstr(why, "other_load"));
    const char *clean = str_of(candidate(doc, 0), "clean_answer");
    assert_non_null(strstr(clean, "dedicated"));
    assert_null(strstr(clean, "taskset"));
    json_decref(doc);
    json_decref(a);
    json_decref(b);
}

/* An unreliable "slower" is no evidence of a regression: a note, and the gate passes. */
static void test_gate_unreliable(void **state)
{
    (void)state;
    json_t *a, *b;
    slower_pair(&a, &b);
    set_load(a, NULL, 1.0, 0.0, 0.0);
    set_load(b, NULL, 1.0, 1.5, 0.0);
    json_t *doc = compare2(a, b, NULL);
    char msg[2048];
    struct compare_gates g = {5, "train", -1, false};
    assert_int_equal(compare_check_gates(doc, &g, msg, sizeof msg), COMPARE_GATE_PASS);
    print_message("%s\n", msg);
    assert_true(!strncmp(msg, "note: ", 6));
    assert_non_null(strstr(msg, "train came out 10."));
    assert_non_null(strstr(msg, "unreliable"));
    assert_non_null(strstr(msg, "not applied"));
    assert_non_null(strstr(msg, "for a clean answer"));
    g.fail_if_slower_pct = 20; /* allowed anyway: nothing to say */
    assert_int_equal(compare_check_gates(doc, &g, msg, sizeof msg), COMPARE_GATE_PASS);
    assert_string_equal(msg, "");
    json_decref(doc);
    json_decref(a);
    json_decref(b);
}

/* ---- span latency ---- */

/* Adds per_run closed spans of stage to every run (warm-up and failed runs too, 100 times
 * longer: they must not count), durations ns with relative noise rel, plus one unclosed span
 * per run that must not count either. */
static void add_spans(json_t *result, const char *stage, size_t per_run, double ns, double rel,
                      uint64_t seed)
{
    size_t i;
    json_t *run;
    json_array_foreach(json_object_get(result, "runs"), i, run) {
        bool counted = !json_is_true(json_object_get(run, "warmup")) &&
                       !strcmp(json_string_value(json_object_get(run, "status")), "ok");
        json_t *spans = json_object_get(run, "spans");
        if (!spans)
            json_object_set_new(run, "spans", spans = json_array());
        double t = 0;
        for (size_t k = 0; k <= per_run; k++) {
            double d = ns * (1 + rel * noise(&seed)) * (counted ? 1 : 100);
            json_array_append_new(spans, json_pack("{s:s, s:I, s:I, s:b}", "name", stage,
                                                   "start_ns", (json_int_t)llround(t), "end_ns",
                                                   (json_int_t)llround(t + d), "closed",
                                                   k < per_run));
            t += d;
        }
    }
}

static void test_latency_rows(void **state)
{
    (void)state;
    json_t *a, *b;
    slower_pair(&a, &b);
    add_spans(a, "train", 30, 1e6, 0.05, 5);
    add_spans(b, "train", 30, 1.2e6, 0.05, 6); /* every step 20 % slower */
    add_spans(a, "load", 2, 1e6, 0.05, 7);     /* 16 spans: too few for a latency row */
    add_spans(b, "load", 30, 1e6, 0.05, 8);
    json_t *doc = compare2(a, b, NULL);
    const json_t *c = candidate(doc, 0);
    const json_t *lat = json_object_get(row_named(c, "stages", "name", "train"), "latency");
    assert_true(json_is_object(lat));
    assert_int_equal(json_integer_value(json_object_get(lat, "n_baseline")), 8 * 30);
    assert_int_equal(json_integer_value(json_object_get(lat, "n_candidate")), 8 * 30);
    const json_t *p50 = json_object_get(lat, "p50"), *p99 = json_object_get(lat, "p99");
    assert_string_equal(str_of(p50, "verdict"), "slower");
    assert_true(field(p50, "ratio_ci_low") > 1.1 && field(p50, "ratio_ci_high") < 1.3);
    assert_near(field(p50, "change_pct"), 20, 3);
    assert_true(field(p50, "baseline_ns") > 0.95e6 && field(p50, "baseline_ns") < 1.05e6);
    assert_true(field(p99, "baseline_ns") >= field(p50, "baseline_ns"));
    assert_true(field(p99, "baseline_ns") <= 1.05e6); /* the 100-times-longer spans are out */
    assert_true(field(p99, "ratio_ci_low") <= field(p99, "ratio_ci_high"));
    assert_true(json_is_null(json_object_get(p50, "unreliable_reason")));
    assert_true(json_is_null(json_object_get(row_named(c, "stages", "name", "load"),
                                             "latency")));
    assert_true(json_is_null(json_object_get(row_named(c, "stages", "name", "total"),
                                             "latency")));
    json_decref(doc);
    /* the same disturbance rule applies to the quantiles */
    set_load(a, NULL, 1.0, 0.0, 0.0);
    set_load(b, NULL, 1.0, 2.0, 0.0);
    doc = compare2(a, b, NULL);
    lat = json_object_get(row_named(candidate(doc, 0), "stages", "name", "train"), "latency");
    p50 = json_object_get(lat, "p50");
    assert_string_equal(str_of(p50, "verdict"), "unreliable");
    assert_string_equal(str_of(p50, "statistical_verdict"), "slower");
    json_decref(doc);
    json_decref(a);
    json_decref(b);
}

/* The quantile bootstrap draws a resample's quantile from its exact distribution: for an odd
 * sample its p50 is the resample's median, so its interval must agree with the median
 * bootstrap's (drawn by counting), up to the resampling error. */
static void test_bootstrap_quantile(void **state)
{
    (void)state;
    double b[101], c[101], lo1, hi1, lo2, hi2, lo3, hi3;
    uint64_t seed = 3;
    for (size_t i = 0; i < 101; i++) {
        b[i] = 100 + 10 * noise(&seed);
        c[i] = 1.1 * (100 + 10 * noise(&seed));
    }
    assert_int_equal(significance_bootstrap_ratio(b, 101, c, 101, 10000, 9, 0.95, &lo1, &hi1),
                     0);
    assert_int_equal(significance_bootstrap_quantile_ratio(b, 101, c, 101, 0.5, 10000, 9, 0.95,
                                                           &lo2, &hi2), 0);
    print_message("median %g..%g, p50 %g..%g\n", lo1, hi1, lo2, hi2);
    assert_near(lo2, lo1, 0.01);
    assert_near(hi2, hi1, 0.01);
    assert_true(lo2 > 1.0 && hi2 < 1.25);
    /* deterministic, and the seed is used */
    assert_int_equal(significance_bootstrap_quantile_ratio(b, 101, c, 101, 0.5, 10000, 9, 0.95,
                                                           &lo3, &hi3), 0);
    assert_true(lo3 == lo2 && hi3 == hi2);
    significance_bootstrap_quantile_ratio(b, 101, c, 101, 0.5, 10000, 10, 0.95, &lo3, &hi3);
    assert_true(lo3 != lo2 || hi3 != hi2);
    /* p99 of 101 values is the 100th smallest: the interval lies within the sample's range */
    assert_int_equal(significance_bootstrap_quantile_ratio(b, 101, c, 101, 0.99, 10000, 9,
                                                           0.95, &lo3, &hi3), 0);
    assert_true(lo3 <= hi3 && lo3 > 0.8 && hi3 < 1.5);
    /* constant samples: the ratio exactly; q outside [0, 1]: refused */
    double k1[] = {200, 200, 200}, k2[] = {150, 150, 150, 150};
    assert_int_equal(significance_bootstrap_quantile_ratio(k1, 3, k2, 4, 0.99, 1000, 1, 0.95,
                                                           &lo3, &hi3), 0);
    assert_near(lo3, 0.75, 1e-15);
    assert_near(hi3, 0.75, 1e-15);
    assert_int_equal(significance_bootstrap_quantile_ratio(k1, 3, k2, 4, 1.5, 1000, 1, 0.95,
                                                           &lo3, &hi3), -1);
    assert_true(isnan(lo3) && isnan(hi3));
}

/* ---- gates ---- */

static json_t *doc_for_gates(double base_ns, double cand_ns, double acc_b, double acc_c)
{
    const struct stage_spec sa[] = {{"train", base_ns, 0.002}};
    const struct stage_spec sb[] = {{"train", cand_ns, 0.002}};
    json_t *a = make_result("A", NULL, 6, 0, 0, sa, 1, 81);
    json_t *b = make_result("B", "new", 6, 0, 0, sb, 1, 82);
    json_t *r[2] = {a, b};
    double acc[2] = {acc_b, acc_c};
    for (int i = 0; i < 2; i++)
        if (!isnan(acc[i]))
            json_array_append_new(json_object_get(json_object_get(r[i], "summary"), "counters"),
                                  json_pack("{s:s, s:{s:f}}", "name", "accuracy", "last",
                                            "median", acc[i]));
    json_t *doc = compare_results(r, NULL, 2, NULL);
    json_decref(a);
    json_decref(b);
    return doc;
}

/* doc/comparison.h reads back what compare_results wrote, and answers the total row and a
 * stage's row; a document of the wrong shape reads as absent, never as a crash. */
static void test_comparison_reader(void **state)
{
    (void)state;
    const struct stage_spec st[] = {{"train", 1e9, 0.01}};
    json_t *r[3];
    for (int i = 0; i < 3; i++) {
        r[i] = make_result(i == 0 ? "A" : i == 1 ? "B" : "C", i ? NULL : "base", 5, 0, 0, st, 1,
                           (uint64_t)(70 + i));
        json_array_append_new(json_object_get(json_object_get(r[i], "summary"), "metadata"),
                              json_pack("{s:s, s:s}", "key", "batch_size", "value",
                                        i ? "64" : "32"));
    }
    const char *paths[3] = {"a.json", "b.json", "c.json"};
    json_t *doc = compare_results(r, paths, 3, NULL);
    struct doc_comparison *c = doc_comparison_read(doc);
    assert_string_equal(c->schema, DOC_COMPARISON_SCHEMA);
    assert_near(c->alpha, 0.05, 1e-15);
    assert_near(c->ci_level, 0.95, 1e-15);
    assert_int_equal(c->resamples, COMPARE_DEFAULT_RESAMPLES);
    assert_int_equal((uint64_t)c->seed, COMPARE_DEFAULT_SEED);
    assert_string_equal(c->baseline.label, "base");
    assert_string_equal(c->baseline.path, "a.json");
    assert_int_equal(c->n_candidates, 2);
    const struct doc_cmp_candidate *cand = &c->candidates[1];
    assert_string_equal(cand->who.id, "C");
    assert_null(cand->who.label);
    assert_int_equal(cand->n_stages, 2);
    assert_int_equal(cand->common_stages, 1);
    const struct doc_cmp_stage *total = doc_cmp_total(cand);
    assert_ptr_equal(total, &cand->stages[1]);
    assert_ptr_equal(doc_cmp_stage(cand, "total"), total);
    assert_ptr_equal(doc_cmp_stage(cand, "train"), &cand->stages[0]);
    assert_null(doc_cmp_stage(cand, "nope"));
    assert_true(doc_comparison_has_stage(c, "train"));
    assert_false(doc_comparison_has_stage(c, "nope"));
    const json_t *row = json_array_get(json_object_get(candidate(doc, 1), "stages"), 1);
    assert_near(total->candidate_median_ns, field(row, "candidate_median_ns"), 0);
    assert_near(total->change_pct, field(row, "change_pct"), 0);
    assert_int_equal(total->n_baseline, 5);
    assert_string_equal(total->verdict, json_string_value(json_object_get(row, "verdict")));
    assert_false(total->latency.present);
    assert_true(isnan(total->latency.p50.baseline_ns));
    assert_int_equal(cand->n_metadata, 1);
    assert_string_equal(cand->metadata[0].baseline, "32");
    assert_string_equal(cand->metadata[0].candidate, "64");
    assert_false(cand->load.present);
    assert_false(cand->cost.present);
    assert_false(cand->scaling.present);
    assert_true(cand->like_for_like);
    doc_comparison_free(c);
    json_decref(doc);
    for (int i = 0; i < 3; i++)
        json_decref(r[i]);

    /* wrong types and shapes: absent */
    json_t *odd = json_loads("{\"alpha\": \"a\", \"baseline\": \"x\", \"candidates\": [7, "
                             "{\"id\": 3, \"stages\": [{\"name\": [], \"verdict\": 5, "
                             "\"depth\": -4}], \"load\": \"no\", \"counters\": {\"a\": 1}}]}",
                             0, NULL);
    assert_non_null(odd);
    c = doc_comparison_read(odd);
    assert_true(isnan(c->alpha));
    assert_null(c->baseline.id);
    assert_int_equal(c->n_candidates, 2);
    assert_null(c->candidates[0].who.id);
    assert_null(c->candidates[1].who.id);
    assert_int_equal(c->candidates[1].n_stages, 1);
    assert_null(c->candidates[1].stages[0].name);
    assert_null(c->candidates[1].stages[0].verdict);
    assert_int_equal(c->candidates[1].stages[0].depth, 0);
    assert_null(doc_cmp_total(&c->candidates[1]));
    assert_false(c->candidates[1].load.present);
    assert_int_equal(c->candidates[1].n_counters, 0);
    doc_comparison_free(c);
    json_decref(odd);
    c = doc_comparison_read(NULL);
    assert_int_equal(c->n_candidates, 0);
    assert_false(doc_comparison_has_stage(c, "train"));
    assert_true(doc_comparison_has_stage(c, "total"));
    doc_comparison_free(c);
}

static void test_gate_slower(void **state)
{
    (void)state;
    char msg[1024];
    json_t *doc = doc_for_gates(1e9, 1.1e9, NAN, NAN); /* 10 % slower */
    struct compare_gates g = {5, NULL, -1, false};
    assert_int_equal(compare_check_gates(doc, &g, msg, sizeof msg), COMPARE_GATE_FAIL);
    assert_non_null(strstr(msg, "new: total is 10."));
    assert_non_null(strstr(msg, "slower"));
    g.fail_if_slower_pct = 15; /* allowed */
    assert_int_equal(compare_check_gates(doc, &g, msg, sizeof msg), COMPARE_GATE_PASS);
    assert_string_equal(msg, "");
    g.fail_if_slower_pct = 5;
    g.stage = "train";
    assert_int_equal(compare_check_gates(doc, &g, msg, sizeof msg), COMPARE_GATE_FAIL);
    assert_non_null(strstr(msg, "train is 10."));
    g.stage = "nope";
    assert_int_equal(compare_check_gates(doc, &g, msg, sizeof msg), COMPARE_GATE_FAIL);
    assert_non_null(strstr(msg, "no stage 'nope'"));
    json_decref(doc);

    doc = doc_for_gates(1e9, 0.8e9, NAN, NAN); /* faster: passes */
    g.stage = NULL;
    g.fail_if_slower_pct = 0;
    assert_int_equal(compare_check_gates(doc, &g, msg, sizeof msg), COMPARE_GATE_PASS);
    json_decref(doc);

    doc = doc_for_gates(1e9, 1.01e9, NAN, NAN); /* 1 %: below the minimum effect */
    assert_int_equal(compare_check_gates(doc, &g, msg, sizeof msg), COMPARE_GATE_PASS);
    json_decref(doc);

    /* too few runs: the gate cannot decide, and says so (issue 35: it passed with a note);
     * --allow-undecided makes it a note */
    json_t *a = make_result("A", NULL, 1, 1e9, 0, NULL, 0, 91);
    json_t *b = make_result("B", NULL, 1, 2e9, 0, NULL, 0, 92);
    doc = compare2(a, b, NULL);
    assert_int_equal(compare_check_gates(doc, &g, msg, sizeof msg), COMPARE_GATE_UNDECIDED);
    assert_non_null(strstr(msg, "undecided: "));
    assert_non_null(strstr(msg, "too few runs"));
    g.allow_undecided = true;
    assert_int_equal(compare_check_gates(doc, &g, msg, sizeof msg), COMPARE_GATE_PASS);
    assert_non_null(strstr(msg, "note: "));
    g.allow_undecided = false;
    json_decref(doc);
    json_decref(a);
    json_decref(b);

    /* issue 35: 3 runs a side, 94 % slower: the gate fails (it passed without a word) */
    a = make_result("A", NULL, 3, 1e9, 0.01, NULL, 0, 93);
    b = make_result("B", NULL, 3, 1.94e9, 0.01, NULL, 0, 94);
    doc = compare2(a, b, NULL);
    g.fail_if_slower_pct = 5;
    assert_int_equal(compare_check_gates(doc, &g, msg, sizeof msg), COMPARE_GATE_FAIL);
    assert_non_null(strstr(msg, "ratio interval"));
    json_decref(doc);
    json_decref(b);
    /* 3 runs a side of 10 % noise, +8 % apart (these draws: +3.3 %, [0.965, 1.071]): a
     * slowdown beyond 5 % fits and none is shown:
     * undecided, with the changes that fit and the runs that would settle it */
    const struct stage_spec noisy[] = {{"train", 1e9, 0.10}};
    json_decref(a);
    a = make_result("A", NULL, 3, 0, 0, noisy, 1, 95);
    const struct stage_spec noisy_b[] = {{"train", 1.08e9, 0.10}};
    b = make_result("B", NULL, 3, 0, 0, noisy_b, 1, 96);
    doc = compare2(a, b, NULL);
    assert_string_equal(verdict(doc, 0, "total"), "inconclusive");
    assert_int_equal(compare_check_gates(doc, &g, msg, sizeof msg), COMPARE_GATE_UNDECIDED);
    print_message("%s\n", msg);
    assert_non_null(strstr(msg, "are compatible with these runs (3 and 3 runs, a 90 % interval)"));
    assert_non_null(strstr(msg, "runs a side would settle it"));
    json_decref(doc);
    json_decref(a);
    json_decref(b);
}

static void test_gate_accuracy(void **state)
{
    (void)state;
    char msg[1024];
    struct compare_gates g = {-1, NULL, 1.0, false};
    /* fractions: 0.91 -> 0.895 is 1.5 points */
    json_t *doc = doc_for_gates(1e9, 1e9, 0.91, 0.895);
    assert_int_equal(compare_check_gates(doc, &g, msg, sizeof msg), COMPARE_GATE_FAIL);
    assert_non_null(strstr(msg, "accuracy dropped by 1.50 points"));
    g.max_accuracy_drop = 2;
    assert_int_equal(compare_check_gates(doc, &g, msg, sizeof msg), COMPARE_GATE_PASS);
    json_decref(doc);
    /* percentages: 91 -> 89.5 is 1.5 points too */
    doc = doc_for_gates(1e9, 1e9, 91, 89.5);
    g.max_accuracy_drop = 1;
    assert_int_equal(compare_check_gates(doc, &g, msg, sizeof msg), COMPARE_GATE_FAIL);
    assert_non_null(strstr(msg, "1.50 points"));
    json_decref(doc);
    /* an improvement passes */
    doc = doc_for_gates(1e9, 1e9, 0.80, 0.95);
    g.max_accuracy_drop = 0;
    assert_int_equal(compare_check_gates(doc, &g, msg, sizeof msg), COMPARE_GATE_PASS);
    json_decref(doc);
    /* missing: cannot check, fails with the reason */
    doc = doc_for_gates(1e9, 1e9, 0.9, NAN);
    assert_int_equal(compare_check_gates(doc, &g, msg, sizeof msg), COMPARE_GATE_FAIL);
    assert_non_null(strstr(msg, "missing in the candidate"));
    json_decref(doc);
}

static void test_bad_options(void **state)
{
    (void)state;
    json_t *a = make_result("A", NULL, 3, 1e9, 0.01, NULL, 0, 1);
    json_t *r[1] = {a};
    assert_null(compare_results(r, NULL, 1, NULL));
    struct compare_options opt;
    compare_options_default(&opt);
    opt.alpha = 1;
    json_t *r2[2] = {a, a};
    assert_null(compare_results(r2, NULL, 2, &opt));
    opt.alpha = 0.05;
    opt.min_effect_pct = -1;
    assert_null(compare_results(r2, NULL, 2, &opt));
    json_decref(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mwu_scipy_references),
        cmocka_unit_test(test_mwu_symmetric),
        cmocka_unit_test(test_mwu_large_without_ties_is_asymptotic),
        cmocka_unit_test(test_mwu_bad_input),
        cmocka_unit_test(test_bootstrap_deterministic),
        cmocka_unit_test(test_bootstrap_constant),
        cmocka_unit_test(test_identical_distributions),
        cmocka_unit_test(test_ten_percent_faster),
        cmocka_unit_test(test_min_effect),
        cmocka_unit_test(test_three_runs_decide),
        cmocka_unit_test(test_too_few_runs),
        cmocka_unit_test(test_missing_stages),
        cmocka_unit_test(test_only_measured_ok_runs),
        cmocka_unit_test(test_side_by_side_and_many),
        cmocka_unit_test(test_env_key_rules),
        cmocka_unit_test(test_env_differences),
        cmocka_unit_test(test_comparison_reader),
        cmocka_unit_test(test_gate_slower),
        cmocka_unit_test(test_gate_accuracy),
        cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_disturbed_slower_side_is_unreliable),
        cmocka_unit_test(test_disturbed_faster_side_keeps_verdict),
        cmocka_unit_test(test_disturbance_margin_and_cpu_use),
        cmocka_unit_test(test_disturbance_per_stage),
        cmocka_unit_test(test_throttling_and_swapping),
        cmocka_unit_test(test_steal),
        cmocka_unit_test(test_gate_unreliable),
        cmocka_unit_test(test_latency_rows),
        cmocka_unit_test(test_bootstrap_quantile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
