/* Unit tests of src/load/judge.c: each of the validity rules of a scenario run of
 * `mlbench load` alone (too short, too few queries, failures, the bound missed by the
 * percentile, no early-stopping estimate, the estimate above the bound, a late generator, a
 * saturated one, an interrupted run), a run that meets them all, and the run's JSON form. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "load/judge.h"

#define MS 1000000LL

static struct load_run *run_new(void)
{
    struct load_run *r = calloc(1, sizeof *r);
    assert_non_null(r);
    r->scenario = LOAD_SERVER;
    r->target_qps = 100;
    r->start_ns = 1000 * MS;
    r->issue_end_ns = r->start_ns + 10000 * MS; /* issued for 10 s */
    r->end_ns = r->issue_end_ns + 5 * MS;
    return r;
}

/* n queries: latency i % 10 + 1 ms, a send lag of lag_ns each. */
static void fill(struct load_run *r, uint64_t n, int64_t lag_ns)
{
    for (uint64_t i = 0; i < n; i++) {
        hist_record(&r->latency, (int64_t)(i % 10 + 1) * MS);
        hist_record(&r->response, (int64_t)(i % 10 + 1) * MS);
        hist_record(&r->send_lag, lag_ns);
    }
    r->issued = r->completed = r->requests = n;
    r->client_busiest_ratio = 0.1;
}

static const struct load_rules RULES = {
    .min_duration_s = 10, .min_queries = 100, .percentile = 99, .latency_bound_ns = 15 * MS,
    .confidence = 0.99};

static bool has_reason(const struct load_verdict *v, const char *part)
{
    for (size_t i = 0; i < v->n_reasons; i++)
        if (strstr(v->reasons[i], part))
            return true;
    return false;
}

static void test_valid(void **state)
{
    (void)state;
    struct load_run *r = run_new();
    fill(r, 1000, 50000);
    struct load_verdict v;
    load_judge(&RULES, r, &v);
    assert_true(v.valid);
    assert_int_equal(v.n_reasons, 0);
    assert_false(v.client_bound);
    assert_true(v.early_known);
    assert_true(v.percentile_ns >= 10 * MS && v.percentile_ns <= 10 * MS + MS / 10);
    assert_true(v.early_ns >= v.percentile_ns);
    assert_int_equal(v.early_min_queries, 662);
    free(r);
}

static void test_each_rule(void **state)
{
    (void)state;
    struct load_verdict v;
    struct load_run *r = run_new();
    fill(r, 1000, 50000);
    r->issue_end_ns = r->start_ns + 9000 * MS;
    load_judge(&RULES, r, &v);
    assert_false(v.valid);
    assert_true(has_reason(&v, "too short"));
    assert_int_equal(v.n_reasons, 1);
    free(r);

    r = run_new();
    fill(r, 1000, 50000);
    struct load_rules many = RULES;
    many.min_queries = 1001;
    load_judge(&many, r, &v);
    assert_true(has_reason(&v, "too few queries: 1000 issued, the minimum is 1001"));
    free(r);

    r = run_new();
    fill(r, 1000, 50000);
    r->failed = 3;
    r->errors.status[503] = 3;
    load_judge(&RULES, r, &v);
    assert_true(has_reason(&v, "3 of 1000 queries failed"));
    free(r);

    r = run_new();
    fill(r, 1000, 50000);
    struct load_rules tight = RULES;
    tight.latency_bound_ns = 9 * MS;
    load_judge(&tight, r, &v);
    assert_true(has_reason(&v, "latency bound missed: p99"));
    free(r);

    r = run_new();
    fill(r, 500, 50000); /* fewer than the 662 the p99 estimate needs */
    load_judge(&RULES, r, &v);
    assert_false(v.early_known);
    assert_true(has_reason(&v, "too few queries for the early-stopping estimate of p99: 500, it needs 662"));
    free(r);

    /* the raw p99 meets the bound, the estimate (a higher rank) does not */
    r = run_new();
    fill(r, 995, 50000);
    for (int i = 0; i < 5; i++) {
        hist_record(&r->latency, 40 * MS);
        hist_record(&r->send_lag, 50000);
    }
    r->issued = r->completed = 1000;
    load_judge(&RULES, r, &v);
    assert_true(v.percentile_ns <= 15 * MS);
    assert_true(v.early_known);
    assert_true(v.early_ns > 15 * MS);
    assert_true(has_reason(&v, "early-stopping estimate of p99"));
    assert_int_equal(v.n_reasons, 1);
    free(r);

    r = run_new();
    fill(r, 1000, 50000);
    r->interrupted = true;
    load_judge(&RULES, r, &v);
    assert_true(has_reason(&v, "interrupted"));
    free(r);
}

static void test_client_bound(void **state)
{
    (void)state;
    struct load_verdict v;
    struct load_run *r = run_new();
    fill(r, 1000, 2 * MS); /* late, while mostly idle: it waited for a CPU */
    load_judge(&RULES, r, &v);
    assert_true(v.client_bound);
    assert_int_equal(v.n_reasons, 1);
    assert_true(has_reason(&v, "not running when they were due"));
    r->client_busiest_ratio = 0.7; /* late and busy */
    load_judge(&RULES, r, &v);
    assert_true(has_reason(&v, "use --threads"));
    free(r);

    r = run_new();
    for (int i = 0; i < 1000; i++) { /* 2 ms late, but latencies of about a second */
        hist_record(&r->latency, (int64_t)(900 + i % 100) * MS);
        hist_record(&r->send_lag, 2 * MS);
    }
    r->issued = r->completed = 1000;
    r->client_busiest_ratio = 0.1;
    load_judge(&RULES, r, &v);
    assert_false(v.client_bound);
    free(r);

    r = run_new();
    fill(r, 1000, MS); /* exactly the limit: not late */
    load_judge(&RULES, r, &v);
    assert_false(v.client_bound);
    r->client_busiest_ratio = 0.95;
    load_judge(&RULES, r, &v);
    assert_true(v.client_bound);
    assert_true(has_reason(&v, "busy 95% of the time"));
    free(r);
}

static void test_offline_has_no_bound(void **state)
{
    (void)state;
    struct load_run *r = run_new();
    r->scenario = LOAD_OFFLINE;
    fill(r, 200, 1000);
    struct load_verdict v;
    load_judge(&RULES, r, &v);
    assert_true(v.valid); /* 200 queries, no estimate, yet no bound applies offline */
    free(r);
}

static void test_json(void **state)
{
    (void)state;
    struct load_run *r = run_new();
    fill(r, 1000, 2 * MS);
    r->failed = 2;
    r->errors.status[503] = 1;
    r->errors.timeout = 1;
    struct load_verdict v;
    load_judge(&RULES, r, &v);
    json_t *j = load_run_to_json(r, &RULES, &v);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "scenario")), "server");
    assert_true(json_is_false(json_object_get(j, "valid")));
    assert_int_equal(json_array_size(json_object_get(j, "invalid_reasons")), v.n_reasons);
    json_t *err = json_object_get(j, "errors");
    assert_int_equal(json_integer_value(json_object_get(err, "http_503")), 1);
    assert_int_equal(json_integer_value(json_object_get(err, "timeout")), 1);
    assert_null(json_object_get(err, "reset"));
    json_t *lat = json_object_get(j, "latency_s");
    assert_int_equal(json_integer_value(json_object_get(lat, "count")), 1000);
    double p50 = json_real_value(json_object_get(lat, "p50"));
    assert_true(p50 >= 0.006 && p50 <= 0.00606); /* rank 501 of 1 .. 10 ms, 100 each */
    json_t *cl = json_object_get(j, "client");
    assert_true(json_is_true(json_object_get(cl, "client_bound")));
    json_decref(j);
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_each_rule),
        cmocka_unit_test(test_client_bound),
        cmocka_unit_test(test_offline_has_no_bound),
        cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
