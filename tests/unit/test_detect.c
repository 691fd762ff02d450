/* Unit tests of src/analysis/detect.c (step changes in a series of results): synthetic series with
 * and without steps, noise between results and within them, odd results, and the false-alarm
 * rate on pure noise. Noise comes from a fixed-seed generator, so every run sees the same
 * series. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>

#include "analysis/detect.h"

/* xorshift64* and Box-Muller: a reproducible standard normal. */
static uint64_t rng_state;

static double uniform(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return ((rng_state * UINT64_C(2685821657736338717)) >> 11) * (1.0 / 9007199254740992.0);
}

static double normal(void)
{
    double u = uniform(), v = uniform();
    return sqrt(-2 * log(u > 0 ? u : 1e-300)) * cos(2 * M_PI * v);
}

/* A result of median m whose own runs give a 95 % interval of +-within (relative). */
static struct detect_point point(double m, double within)
{
    return (struct detect_point){m, m * (1 - 1.96 * within), m * (1 + 1.96 * within), 0.95, NAN,
                                 10};
}

/* n points around base with relative noise `between` from one result to the next, `within`
 * inside each; from index `at` on (n for none) the level is multiplied by 1 + step. */
static void series(struct detect_point *p, size_t n, double base, double between, double within,
                   size_t at, double step)
{
    for (size_t i = 0; i < n; i++) {
        double m = base * exp(between * normal() + within * normal());
        if (i >= at)
            m *= 1 + step;
        p[i] = point(m, within);
    }
}

static void test_flat_series(void **state)
{
    (void)state;
    struct detect_point p[12];
    for (size_t i = 0; i < 12; i++)
        p[i] = point(100e6, 0.001);
    struct detect_change *c;
    assert_int_equal(detect_changes(p, 12, NULL, &c), 0);
    assert_null(c);
}

static void test_clean_step(void **state)
{
    (void)state;
    rng_state = 1;
    struct detect_point p[20];
    series(p, 20, 100e6, 0.01, 0.003, 10, 0.20);
    struct detect_change *c;
    size_t n = detect_changes(p, 20, NULL, &c);
    assert_int_equal(n, 1);
    assert_int_equal(c[0].index, 10);
    assert_true(c[0].change_pct > 17 && c[0].change_pct < 23);
    assert_true(c[0].before > 97e6 && c[0].before < 103e6);
    assert_true(c[0].after > 116e6 && c[0].after < 124e6);
    assert_true(c[0].z >= DETECT_DEFAULT_Z);
    free(c);
}

static void test_improvement_and_regression(void **state)
{
    (void)state;
    rng_state = 2;
    struct detect_point p[30];
    series(p, 30, 100e6, 0.01, 0.002, 30, 0);
    for (size_t i = 10; i < 20; i++) /* faster by 30 %, then back */
        p[i] = point(p[i].median * 0.7, 0.002);
    struct detect_change *c;
    size_t n = detect_changes(p, 30, NULL, &c);
    assert_int_equal(n, 2);
    assert_int_equal(c[0].index, 10);
    assert_true(c[0].change_pct < -25 && c[0].change_pct > -35);
    assert_int_equal(c[1].index, 20);
    assert_true(c[1].change_pct > 35 && c[1].change_pct < 50); /* 1/0.7 - 1 = 43 % */
    free(c);
}

/* The newest result alone is 25 % slower than a steady past: reported at once. */
static void test_step_at_the_end(void **state)
{
    (void)state;
    rng_state = 3;
    struct detect_point p[10];
    series(p, 10, 50e6, 0.005, 0.002, 9, 0.25);
    struct detect_change *c;
    assert_int_equal(detect_changes(p, 10, NULL, &c), 1);
    assert_int_equal(c[0].index, 9);
    free(c);
}

/* One odd result in the middle is not a step: the levels either side are the same. */
static void test_single_outlier(void **state)
{
    (void)state;
    rng_state = 4;
    struct detect_point p[15];
    series(p, 15, 100e6, 0.01, 0.003, 15, 0);
    p[7] = point(p[7].median * 1.5, 0.003);
    struct detect_change *c;
    assert_int_equal(detect_changes(p, 15, NULL, &c), 0);
}

/* A change below the minimum effect is not reported, however clear; with the minimum lowered
 * it is. */
static void test_min_effect(void **state)
{
    (void)state;
    struct detect_point p[12];
    for (size_t i = 0; i < 12; i++)
        p[i] = point(i < 6 ? 100e6 : 101e6, 0.0005);
    struct detect_change *c;
    assert_int_equal(detect_changes(p, 12, NULL, &c), 0);
    struct detect_options opt = {.min_effect_pct = 0.5, .z = DETECT_DEFAULT_Z};
    assert_int_equal(detect_changes(p, 12, &opt, &c), 1);
    assert_int_equal(c[0].index, 6);
    assert_true(fabs(c[0].change_pct - 1.0) < 1e-9);
    free(c);
}

/* Each result's own spread counts: the same last value is a change when the results are
 * precise, and not when that result's interval is wide (a noisy run of the benchmark). */
static void test_within_spread(void **state)
{
    (void)state;
    struct detect_point p[10];
    for (size_t i = 0; i < 9; i++)
        p[i] = point(100e6 * (1 + 0.001 * (double)(i % 3)), 0.001);
    p[9] = point(110e6, 0.001);
    struct detect_change *c;
    assert_int_equal(detect_changes(p, 10, NULL, &c), 1);
    assert_int_equal(c[0].index, 9);
    free(c);
    p[9] = point(110e6, 0.08); /* +-16 %: tells little */
    assert_int_equal(detect_changes(p, 10, NULL, &c), 0);
    /* the spread may come from the MAD and n instead of an interval */
    p[9] = (struct detect_point){110e6, NAN, NAN, NAN, 0.08 * 110e6 / 1.4826, 3};
    assert_int_equal(detect_changes(p, 10, NULL, &c), 0);
}

/* Noise between results (the machine's drift) that no result's interval shows: a 3 % noise
 * with 0.5 % intervals must not be read as steps. Over 200 series of 20, at most 2 % false
 * alarms; the same series with a 15 % step find it (within one result) in most. */
static void test_noise_false_alarms(void **state)
{
    (void)state;
    rng_state = 5;
    struct detect_point p[20];
    struct detect_change *c;
    int alarms = 0, found = 0;
    for (int t = 0; t < 200; t++) {
        series(p, 20, 100e6, 0.03, 0.005, 20, 0);
        size_t n = detect_changes(p, 20, NULL, &c);
        alarms += n > 0;
        free(c);
    }
    assert_true(alarms <= 4); /* 3 with this seed */
    for (int t = 0; t < 200; t++) {
        series(p, 20, 100e6, 0.03, 0.005, 10, 0.15);
        size_t n = detect_changes(p, 20, NULL, &c);
        for (size_t j = 0; j < n; j++)
            found += c[j].index >= 9 && c[j].index <= 11;
        free(c);
    }
    assert_true(found >= 175); /* 185 with this seed */
}

/* Points without a usable median are skipped; indices refer to the caller's array. Series of
 * fewer than 3 points report nothing. */
static void test_skipped_points_and_short_series(void **state)
{
    (void)state;
    struct detect_point p[14];
    for (size_t i = 0; i < 14; i++)
        p[i] = point(i < 8 ? 100e6 : 130e6, 0.001);
    p[2].median = NAN;
    p[8].median = 0;
    p[9].median = -5;
    struct detect_change *c;
    assert_int_equal(detect_changes(p, 14, NULL, &c), 1);
    assert_int_equal(c[0].index, 10);
    free(c);
    struct detect_point two[2] = {point(100e6, 0.001), point(200e6, 0.001)};
    assert_int_equal(detect_changes(two, 2, NULL, &c), 0);
    assert_int_equal(detect_changes(two, 0, NULL, &c), 0);
    assert_null(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flat_series),
        cmocka_unit_test(test_clean_step),
        cmocka_unit_test(test_improvement_and_regression),
        cmocka_unit_test(test_step_at_the_end),
        cmocka_unit_test(test_single_outlier),
        cmocka_unit_test(test_min_effect),
        cmocka_unit_test(test_within_spread),
        cmocka_unit_test(test_noise_false_alarms),
        cmocka_unit_test(test_skipped_points_and_short_series),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
