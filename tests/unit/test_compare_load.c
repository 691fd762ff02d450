/* Unit tests of the load part of a comparison: significance_block_bootstrap_ratio (the circular
 * block bootstrap of a ratio of weighted means) and compare_load() on synthetic load results
 * with known answers (matching, per-second and per-result modes, INVALID runs, find-peak, a
 * percentile from a run's histogram). */
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
#include "doc/load.h"

/* ---- the block bootstrap ---- */

static void test_block_scaled_series(void **state)
{
    (void)state;
    double b[12], c[12], w[12];
    for (int i = 0; i < 12; i++) {
        b[i] = 1 + (i % 4) * 0.1;
        c[i] = 2 * b[i];
        w[i] = 1 + i;
    }
    double lo, hi;
    /* the candidate is the baseline doubled, value by value: every resample of the same
     * blocks would give 2, but the sides are resampled independently */
    assert_int_equal(significance_block_bootstrap_ratio(b, w, 12, c, w, 12, 0, 2000, 7, 0.95,
                                                        &lo, &hi), 0);
    assert_true(lo <= 2 && hi >= 2);
    assert_true(lo > 1.6 && hi < 2.5);
    /* constant series: the interval is the ratio exactly */
    double one[5] = {1, 1, 1, 1, 1}, three[6] = {3, 3, 3, 3, 3, 3};
    assert_int_equal(significance_block_bootstrap_ratio(one, NULL, 5, three, NULL, 6, 2, 500, 1,
                                                        0.95, &lo, &hi), 0);
    assert_true(fabs(lo - 3) < 1e-12 && fabs(hi - 3) < 1e-12);
}

static void test_block_deterministic_and_errors(void **state)
{
    (void)state;
    double b[8] = {1, 2, 3, 4, 5, 6, 7, 8}, c[8] = {2, 1, 4, 3, 6, 5, 8, 7};
    double lo1, hi1, lo2, hi2, lo3, hi3;
    assert_int_equal(significance_block_bootstrap_ratio(b, NULL, 8, c, NULL, 8, 2, 1000, 42, 0.9,
                                                        &lo1, &hi1), 0);
    assert_int_equal(significance_block_bootstrap_ratio(b, NULL, 8, c, NULL, 8, 2, 1000, 42, 0.9,
                                                        &lo2, &hi2), 0);
    assert_true(lo1 == lo2 && hi1 == hi2);
    assert_int_equal(significance_block_bootstrap_ratio(b, NULL, 8, c, NULL, 8, 2, 1000, 43, 0.9,
                                                        &lo3, &hi3), 0);
    assert_true(lo1 != lo3 || hi1 != hi3);
    assert_true(lo1 < 1 && hi1 > 1);
    /* a block as long as the series: every resample is a rotation, so the mean never moves */
    assert_int_equal(significance_block_bootstrap_ratio(b, NULL, 8, c, NULL, 8, 8, 200, 1, 0.9,
                                                        &lo1, &hi1), 0);
    assert_true(fabs(lo1 - 1) < 1e-12 && fabs(hi1 - 1) < 1e-12);
    double neg[2] = {1, -1}, nan_v[2] = {1, NAN}, zero[3] = {0, 0, 0};
    assert_int_equal(significance_block_bootstrap_ratio(b, NULL, 0, c, NULL, 8, 0, 10, 1, 0.9,
                                                        &lo1, &hi1), -1);
    assert_true(isnan(lo1) && isnan(hi1));
    assert_int_equal(significance_block_bootstrap_ratio(b, neg, 2, c, NULL, 2, 0, 10, 1, 0.9,
                                                        &lo1, &hi1), -1);
    assert_int_equal(significance_block_bootstrap_ratio(nan_v, NULL, 2, c, NULL, 2, 0, 10, 1,
                                                        0.9, &lo1, &hi1), -1);
    assert_int_equal(significance_block_bootstrap_ratio(zero, NULL, 3, c, NULL, 3, 0, 10, 1, 0.9,
                                                        &lo1, &hi1), -1);
    assert_int_equal(significance_default_block(1), 1);
    assert_int_equal(significance_default_block(8), 2);
    assert_int_equal(significance_default_block(60), 4);
    assert_int_equal(significance_default_block(0), 1);
}

/* ---- compare_load on synthetic results ---- */

/* A load result: one run of scenario at qps (<= 0: none) lasting `seconds` whole seconds, each
 * second's p50 p50_s (+ a small wobble), p99 twice that, `per_second` queries a second. */
static json_t *load_doc(const char *scenario, double qps, int seconds, double p50_s,
                        int per_second, bool valid, const char *role)
{
    json_t *secs = json_array();
    for (int t = 0; t < seconds; t++) {
        double wob = 1 + 0.01 * (t % 3);
        json_array_append_new(secs, json_pack("{s:i, s:i, s:i, s:f, s:f, s:f, s:f}", "t_s", t,
                                              "completed", per_second, "failed", 0, "p50_s",
                                              p50_s * wob, "p90_s", 1.5 * p50_s * wob, "p99_s",
                                              2 * p50_s * wob, "max_s", 3 * p50_s));
    }
    json_t *run = json_pack(
        "{s:s, s:o, s:f, s:i, s:f, s:f, s:b, s:[s*], s:{s:f, s:f, s:f, s:f}, s:o, s:s}",
        "scenario", scenario, "target_qps", qps > 0 ? json_real(qps) : json_null(), "duration_s",
        (double)seconds + 0.001, "completed", per_second * seconds, "throughput_qps",
        (double)per_second, "percentile", 99.0, "valid", valid, "invalid_reasons",
        valid ? NULL : "client-bound: late", "latency_s", "p50", p50_s, "p90", 1.5 * p50_s,
        "p99", 2 * p50_s, "max", 3 * p50_s, "seconds", secs, "role", role);
    return json_pack("{s:s, s:[], s:{s:s, s:s, s:[o]}}", "schema", "mlbench.result/1", "runs",
                     "load", "schema", "mlbench.load/1", "scenario", scenario, "scenarios", run);
}

/* compare_load of the result documents base[0..nb) and cand[0..nc), read through doc/result.h
 * as compare_results reads them. */
static json_t *load_cmp(json_t *const *base, size_t nb, json_t *const *cand, size_t nc,
                        const struct compare_options *opt)
{
    struct doc_result *b[8], *c[8];
    assert_true(nb <= 8 && nc <= 8);
    for (size_t i = 0; i < nb; i++)
        b[i] = doc_result_read(base[i]);
    for (size_t i = 0; i < nc; i++)
        c[i] = doc_result_read(cand[i]);
    json_t *cmp = compare_load((const struct doc_result *const *)b, nb,
                               (const struct doc_result *const *)c, nc, opt, NULL);
    for (size_t i = 0; i < nb; i++)
        doc_result_free(b[i]);
    for (size_t i = 0; i < nc; i++)
        doc_result_free(c[i]);
    return cmp;
}

static const json_t *metric(const json_t *match, const char *name)
{
    size_t i;
    const json_t *m;
    json_array_foreach(json_object_get(match, "metrics"), i, m)
        if (!strcmp(json_string_value(json_object_get(m, "name")), name))
            return m;
    return NULL;
}

static const char *verdict(const json_t *match, const char *name)
{
    return json_string_value(json_object_get(metric(match, name), "verdict"));
}

static void test_per_second_slower(void **state)
{
    (void)state;
    json_t *a = load_doc("server", 100, 10, 0.002, 100, true, "run");
    json_t *b = load_doc("server", 100, 10, 0.020, 100, true, "run");
    struct compare_options opt;
    compare_options_default(&opt);
    opt.resamples = 2000;
    json_t *cmp = load_cmp(&a, 1, &b, 1, &opt);
    const json_t *m = json_array_get(json_object_get(cmp, "scenarios"), 0);
    assert_non_null(m);
    assert_string_equal(json_string_value(json_object_get(m, "resampling")), "seconds");
    assert_string_equal(verdict(m, "p50"), "slower");
    assert_string_equal(verdict(m, "p99"), "slower");
    assert_true(json_is_true(json_object_get(metric(m, "p99"), "metric")));
    assert_string_equal(verdict(m, "throughput_qps"), "no change");
    const json_t *p50 = metric(m, "p50");
    double lo = json_number_value(json_object_get(p50, "ratio_ci_low"));
    double hi = json_number_value(json_object_get(p50, "ratio_ci_high"));
    assert_true(lo <= 10 && hi >= 10 && lo > 9);   /* holds the point ratio, 10 */
    assert_int_equal(json_integer_value(json_object_get(p50, "seconds_baseline")), 10);
    assert_int_equal(json_array_size(json_object_get(cmp, "unmatched")), 0);
    json_decref(cmp);
    /* the other way round: faster */
    cmp = load_cmp(&b, 1, &a, 1, &opt);
    assert_string_equal(verdict(json_array_get(json_object_get(cmp, "scenarios"), 0), "p50"),
                        "faster");
    json_decref(cmp);
    json_decref(a);
    json_decref(b);
}

static void test_invalid_and_unmatched(void **state)
{
    (void)state;
    json_t *a = load_doc("server", 100, 10, 0.002, 100, true, "run");
    json_t *b = load_doc("server", 100, 10, 0.020, 100, false, "run");
    json_t *c = load_doc("server", 200, 10, 0.002, 200, true, "run");
    json_t *d = load_doc("offline", 0, 2, 0.002, 100, true, "run");
    json_t *cmp = load_cmp(&a, 1, &b, 1, NULL);
    const json_t *m = json_array_get(json_object_get(cmp, "scenarios"), 0);
    assert_string_equal(verdict(m, "p50"), "unreliable");
    const json_t *p50 = metric(m, "p50");
    assert_string_equal(json_string_value(json_object_get(p50, "statistical_verdict")), "slower");
    assert_non_null(strstr(json_string_value(json_object_get(p50, "unreliable_reason")),
                           "candidate's run is INVALID: client-bound: late"));
    assert_true(json_is_false(json_object_get(m, "valid_candidate")));
    json_decref(cmp);
    /* a different target rate is another scenario */
    cmp = load_cmp(&a, 1, &c, 1, NULL);
    assert_int_equal(json_array_size(json_object_get(cmp, "scenarios")), 0);
    assert_int_equal(json_array_size(json_object_get(cmp, "unmatched")), 2);
    json_decref(cmp);
    /* two seconds are too few for the block bootstrap */
    cmp = load_cmp(&d, 1, &d, 1, NULL);
    assert_string_equal(verdict(json_array_get(json_object_get(cmp, "scenarios"), 0), "p50"),
                        "too few seconds");
    json_decref(cmp);
    /* no load section: null */
    json_t *plain = json_pack("{s:[]}", "runs");
    cmp = load_cmp(&plain, 1, &a, 1, NULL);
    assert_true(json_is_null(cmp));
    json_decref(cmp);
    json_decref(plain);
    json_decref(a);
    json_decref(b);
    json_decref(c);
    json_decref(d);
}

static void test_per_result_mode(void **state)
{
    (void)state;
    json_t *base[5], *cand[5];
    for (int i = 0; i < 5; i++) {
        base[i] = load_doc("single-stream", 0, 4, 0.010 + 0.0001 * i, 90, true, "run");
        cand[i] = load_doc("single-stream", 0, 4, 0.012 + 0.0001 * i, 80, true, "run");
    }
    json_t *cmp = load_cmp(base, 5, cand, 5, NULL);
    const json_t *m = json_array_get(json_object_get(cmp, "scenarios"), 0);
    assert_string_equal(json_string_value(json_object_get(m, "resampling")), "results");
    assert_int_equal(json_integer_value(json_object_get(m, "n_baseline")), 5);
    assert_string_equal(verdict(m, "p50"), "slower");
    assert_string_equal(verdict(m, "throughput_qps"), "slower");
    const json_t *p50 = metric(m, "p50");
    assert_true(fabs(json_number_value(json_object_get(p50, "p_value")) - 2.0 / 252) < 1e-9);
    assert_true(fabs(json_number_value(json_object_get(p50, "baseline")) - 0.0102) < 1e-12);
    json_decref(cmp);
    /* two against one: no test, so the per-second mode over the pooled seconds */
    cmp = load_cmp(base, 2, cand, 1, NULL);
    m = json_array_get(json_object_get(cmp, "scenarios"), 0);
    assert_string_equal(json_string_value(json_object_get(m, "resampling")), "seconds");
    assert_int_equal(json_integer_value(json_object_get(metric(m, "p50"), "seconds_baseline")), 8);
    json_decref(cmp);
    for (int i = 0; i < 5; i++) {
        json_decref(base[i]);
        json_decref(cand[i]);
    }
}

static void test_find_peak_confirmations(void **state)
{
    (void)state;
    json_t *a = load_doc("server", 120, 6, 0.004, 120, true, "confirm");
    json_t *b = load_doc("server", 80, 6, 0.004, 80, true, "confirm");
    json_t *probe = json_deep_copy(json_array_get(
        json_object_get(json_object_get(a, "load"), "scenarios"), 0));
    json_object_set_new(probe, "role", json_string("probe"));
    json_object_set_new(probe, "target_qps", json_real(240));
    json_array_insert_new(json_object_get(json_object_get(a, "load"), "scenarios"), 0, probe);
    json_object_set_new(json_object_get(a, "load"), "find_peak",
                        json_pack("{s:f}", "peak_qps", 120.0));
    json_object_set_new(json_object_get(b, "load"), "find_peak",
                        json_pack("{s:f}", "peak_qps", 80.0));
    json_t *cmp = load_cmp(&a, 1, &b, 1, NULL);
    json_t *ms = json_object_get(cmp, "scenarios");
    assert_int_equal(json_array_size(ms), 1);
    const json_t *m = json_array_get(ms, 0);
    assert_true(json_is_true(json_object_get(m, "peak")));
    assert_true(json_number_value(json_object_get(m, "target_qps")) == 120);
    assert_true(json_number_value(json_object_get(m, "candidate_target_qps")) == 80);
    assert_string_equal(verdict(m, "throughput_qps"), "slower");
    json_decref(cmp);
    json_decref(a);
    json_decref(b);
}

/* A percentile latency_s does not list is read from the run's histogram with LoadGen's rank,
 * the high end of its bucket, never above the maximum (doc_load_run_percentile). */
static void test_percentile_from_histogram(void **state)
{
    (void)state;
    json_t *load = json_loads(
        "{\"scenarios\": [{\"latency_s\": {\"p50\": 0.1}, \"histogram\": {\"total\": 10, "
        "\"max\": 5e6, \"buckets\": [[0, 1e6, 5], [1e6, 2e6, 4], [2e6, 9e6, 1]]}}, {}]}",
        0, NULL);
    assert_non_null(load);
    struct doc_load *l = doc_load_read(load);
    assert_true(fabs(doc_load_run_percentile(&l->runs[0], 50) - 0.1) < 1e-15);
    assert_true(fabs(doc_load_run_percentile(&l->runs[0], 70) - 0.002) < 1e-15);
    assert_true(fabs(doc_load_run_percentile(&l->runs[0], 97) - 0.005) < 1e-15);
    assert_true(isnan(doc_load_run_percentile(&l->runs[1], 97)));
    doc_load_free(l);
    json_decref(load);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_block_scaled_series),
        cmocka_unit_test(test_block_deterministic_and_errors),
        cmocka_unit_test(test_per_second_slower),
        cmocka_unit_test(test_invalid_and_unmatched),
        cmocka_unit_test(test_per_result_mode),
        cmocka_unit_test(test_find_peak_confirmations),
        cmocka_unit_test(test_percentile_from_histogram),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
