/* Unit tests of summary_compute: which runs count, per-stage statistics across runs, and each
 * measurement-quality warning (raised when it should be, and only then). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "result/result.h"

#define MS 1000000LL

static struct run_config cfg;
static struct result res;

static void start(int warmup)
{
    memset(&cfg, 0, sizeof cfg);
    cfg.warmup = warmup;
    result_init(&res, &cfg);
}

/* A run of wall_ms with one stage "train" lasting train_ms (none when 0). */
static struct repetition *run(bool warmup, double wall_ms, double train_ms, enum run_status st)
{
    struct repetition *rep = result_add_rep(&res, warmup);
    rep->outcome.status = st;
    rep->outcome.wall_ns = (int64_t)(wall_ms * MS);
    rep->outcome.user_ns = rep->outcome.wall_ns / 2;
    if (train_ms > 0) {
        char buf[64];
        struct marker_token t;
        snprintf(buf, sizeof buf, "B %lld 1 1 train", 1000 * MS);
        marker_parse(buf, strlen(buf), &t);
        event_log_add(&rep->log, &t);
        snprintf(buf, sizeof buf, "E %lld 1 1 train", 1000 * MS + (long long)(train_ms * MS));
        marker_parse(buf, strlen(buf), &t);
        event_log_add(&rep->log, &t);
    }
    stages_aggregate(&rep->log, 1000 * MS, rep->outcome.wall_ns, &rep->stages);
    return rep;
}

static int has_warning(const char *code)
{
    for (size_t i = 0; i < res.summary.n_warnings; i++)
        if (!strcmp(res.summary.warnings[i].code, code))
            return 1;
    return 0;
}

static void test_stage_statistics(void **state)
{
    (void)state;
    start(0);
    const double wall[] = {200, 202, 201, 199, 200, 203};
    for (int i = 0; i < 6; i++)
        run(false, wall[i], wall[i] / 2, RUN_OK);
    summary_compute(&res, NULL); /* no environment captured */
    const struct summary *s = &res.summary;
    assert_int_equal(s->n_measured, 6);
    assert_int_equal(s->n_used, 6);
    assert_true(s->wall.median == 200.5 * MS);
    assert_true(s->wall.ci_level >= 0.95);
    assert_int_equal(s->n_stages, 1);
    assert_string_equal(s->stages[0].name, "train");
    assert_true(s->stages[0].active.median == 100.25 * MS);
    assert_true(s->stages[0].share == 0.5);
    assert_true(s->cpu_cores_median == 0.5);
    assert_int_equal(s->n_warnings, 0);
    result_free(&res);
}

static void test_warmup_and_first_run(void **state)
{
    (void)state;
    start(1);
    run(true, 300, 0, RUN_OK); /* 50 % slower warm-up */
    for (int i = 0; i < 5; i++)
        run(false, 200, 0, RUN_OK);
    summary_compute(&res, NULL); /* no environment captured */
    assert_true(has_warning("slow_warmup"));
    assert_false(has_warning("slow_first_run"));
    assert_true(has_warning("low_ci_coverage")); /* 5 runs */
    assert_int_equal(res.summary.n_used, 5);
    result_free(&res);

    start(0);
    run(false, 300, 0, RUN_OK);
    for (int i = 0; i < 5; i++)
        run(false, 200, 0, RUN_OK);
    summary_compute(&res, NULL); /* no environment captured */
    assert_true(has_warning("slow_first_run"));
    assert_false(has_warning("slow_warmup"));
    result_free(&res);
}

static void test_noise_and_outliers(void **state)
{
    (void)state;
    start(0);
    const double wall[] = {100, 101, 99, 100, 100, 160, 101};
    for (int i = 0; i < 7; i++)
        run(false, wall[i], 0, RUN_OK);
    summary_compute(&res, NULL); /* no environment captured */
    assert_true(has_warning("high_cv"));
    assert_true(has_warning("outliers"));
    int named = 0;
    for (size_t i = 0; i < res.summary.n_warnings; i++)
        if (!strcmp(res.summary.warnings[i].code, "outliers"))
            named = strstr(res.summary.warnings[i].message, "run 6 (160.0 ms)") != NULL;
    assert_true(named);
    result_free(&res);

    /* a steady series: a tiny deviation is no outlier worth a warning */
    start(0);
    const double steady[] = {100, 100, 100, 100, 100.5, 100};
    for (int i = 0; i < 6; i++)
        run(false, steady[i], 0, RUN_OK);
    summary_compute(&res, NULL); /* no environment captured */
    assert_int_equal(res.summary.n_warnings, 0);
    result_free(&res);
}

static void test_failures(void **state)
{
    (void)state;
    start(0);
    run(false, 100, 50, RUN_OK);
    run(false, 10, 5, RUN_FAILED);
    run(false, 100, 50, RUN_OK);
    summary_compute(&res, NULL); /* no environment captured */
    assert_int_equal(res.summary.n_measured, 3);
    assert_int_equal(res.summary.n_used, 2);
    assert_true(res.summary.wall.median == 100 * MS); /* the failed run is not in it */
    assert_true(has_warning("failed_runs"));
    assert_true(has_warning("few_runs"));
    result_free(&res);

    start(0);
    run(false, 10, 5, RUN_SIGNALED);
    summary_compute(&res, NULL); /* no environment captured */
    assert_true(res.summary.used_failed);
    assert_true(res.summary.valid);
    assert_true(has_warning("no_successful_run"));
    result_free(&res);

    start(0); /* nothing ran at all */
    summary_compute(&res, NULL); /* no environment captured */
    assert_false(res.summary.valid);
    json_t *j = result_to_json(&res);
    assert_non_null(j);
    json_decref(j);
    result_free(&res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stage_statistics),
        cmocka_unit_test(test_warmup_and_first_run),
        cmocka_unit_test(test_noise_and_outliers),
        cmocka_unit_test(test_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
