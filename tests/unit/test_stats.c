/* Unit tests of src/analysis/stats.c (summary statistics of repeated measurements).
 *
 * Expected values were computed independently of this code with python3 (3.11) and its
 * statistics, fractions and math modules:
 *   median, mean, stdev (sample), MAD = statistics.median(|x - median|), MeanAD =
 *   statistics.mean(|x - median|), modified z by the formulas of stats.h;
 *   CI ranks and coverage exactly with Fraction: for j = 2, 3, ... while
 *   1 - 2 * sum(comb(n, i) for i < j) / 2**n >= 95/100 (j = 1 when none is);
 *   for n = 10^6 the same with Python's big integers (incremental comb from n/2 - 8 sqrt(n),
 *   the tail below being < e^-128).
 * Small cases are also easy by hand; those derivations are in the comments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#include "assert_near.h"

#define TOL 1e-12

/* Summarises x and compares every field of the result with want (n_outliers exactly, the
 * others within TOL). */
static void check_summary(const double *x, size_t n, const struct stats_summary *want)
{
    struct stats_summary got;
    assert_int_equal(stats_summarize(x, n, &got), 0);
    assert_int_equal(got.n, want->n);
    assert_near(got.median, want->median, TOL);
    assert_near(got.mean, want->mean, TOL);
    assert_near(got.stddev, want->stddev, TOL);
    assert_near(got.mad, want->mad, TOL);
    assert_near(got.min, want->min, TOL);
    assert_near(got.max, want->max, TOL);
    assert_near(got.cv, want->cv, TOL);
    assert_near(got.ci_low, want->ci_low, TOL);
    assert_near(got.ci_high, want->ci_high, TOL);
    assert_near(got.ci_level, want->ci_level, TOL);
    assert_int_equal(got.n_outliers, want->n_outliers);
}

/* x = {3, 1, 4, 1, 5}: sorted 1 1 3 4 5, median 3; mean 14/5 = 2.8;
 * squared deviations 0.04 3.24 1.44 3.24 4.84 sum to 12.8, stddev sqrt(12.8/4) = sqrt(3.2);
 * |x - 3| = 0 2 1 2 2, MAD 2; modified z max 0.6745 * 2/2, so no outlier;
 * n = 5 is too small for 95 %: [min, max] with coverage 1 - 2/32 = 0.9375. */
static void test_odd_n(void **state)
{
    (void)state;
    const double x[] = {3, 1, 4, 1, 5};
    const struct stats_summary want = {
        .n = 5, .median = 3, .mean = 2.8, .stddev = sqrt(3.2), .mad = 2, .min = 1, .max = 5,
        .cv = sqrt(3.2) / 2.8, .ci_low = 1, .ci_high = 5, .ci_level = 0.9375, .n_outliers = 0,
    };
    check_summary(x, ARRAY_LEN(x), &want);
    assert_near(stats_median(x, ARRAY_LEN(x)), 3.0, TOL);
}

/* x = {4, 2, 10, 4, 3, 2} (ties): sorted 2 2 3 4 4 10, median (3 + 4)/2 = 3.5; mean 25/6;
 * stdev (python) 2.9944392908634274; |x - 3.5| sorted .5 .5 .5 1.5 1.5 6.5, MAD (0.5+1.5)/2 = 1;
 * z(10) = 0.6745 * 6.5 = 4.38425 > 3.5: one outlier; n = 6: ranks 1 and 6, 1 - 2/64. */
static void test_even_n_with_ties(void **state)
{
    (void)state;
    const double x[] = {4, 2, 10, 4, 3, 2};
    const struct stats_summary want = {
        .n = 6, .median = 3.5, .mean = 25.0 / 6.0, .stddev = 2.9944392908634274, .mad = 1,
        .min = 2, .max = 10, .cv = 2.9944392908634274 / (25.0 / 6.0), .ci_low = 2,
        .ci_high = 10, .ci_level = 0.96875, .n_outliers = 1,
    };
    check_summary(x, ARRAY_LEN(x), &want);
    assert_near(stats_median(x, ARRAY_LEN(x)), 3.5, TOL);

    double z[ARRAY_LEN(x)];
    const double z_expected[] = {0.33725, -1.01175, 4.38425, 0.33725, -0.33725, -1.01175};
    assert_int_equal(stats_modified_z(x, ARRAY_LEN(x), z), 1);
    for (size_t i = 0; i < ARRAY_LEN(x); i++)
        assert_near(z[i], z_expected[i], TOL);
}

/* One value: everything is that value, spreads are 0, the interval is [x, x] with coverage 0. */
static void test_single_value(void **state)
{
    (void)state;
    const double x[] = {7.5};
    const struct stats_summary want = {
        .n = 1, .median = 7.5, .mean = 7.5, .stddev = 0, .mad = 0, .min = 7.5, .max = 7.5,
        .cv = 0, .ci_low = 7.5, .ci_high = 7.5, .ci_level = 0, .n_outliers = 0,
    };
    check_summary(x, 1, &want);
}

/* {3, 1}: median 2, stddev sqrt(((1-2)^2 + (3-2)^2) / 1) = sqrt(2), MAD 1,
 * interval [1, 3] with coverage 1 - 2/4 = 0.5. */
static void test_two_values(void **state)
{
    (void)state;
    const double x[] = {3, 1};
    const struct stats_summary want = {
        .n = 2, .median = 2, .mean = 2, .stddev = sqrt(2.0), .mad = 1, .min = 1, .max = 3,
        .cv = sqrt(2.0) / 2, .ci_low = 1, .ci_high = 3, .ci_level = 0.5, .n_outliers = 0,
    };
    check_summary(x, 2, &want);
}

/* {-1, 1}: mean 0, so cv is defined as 0 rather than a division by zero. */
static void test_cv_zero_mean(void **state)
{
    (void)state;
    const double x[] = {-1, 1};
    struct stats_summary s;
    assert_int_equal(stats_summarize(x, 2, &s), 0);
    assert_near(s.mean, 0.0, TOL);
    assert_near(s.stddev, sqrt(2.0), TOL);
    assert_near(s.cv, 0.0, TOL);
}

static void test_input_not_modified(void **state)
{
    (void)state;
    const double orig[] = {9.5, 1.25, 7, 3, 3, 100, -2, 8.75, 0.5};
    double x[ARRAY_LEN(orig)], z[ARRAY_LEN(orig)];
    memcpy(x, orig, sizeof x);
    struct stats_summary s;
    assert_int_equal(stats_summarize(x, ARRAY_LEN(x), &s), 0);
    assert_memory_equal(x, orig, sizeof x);
    assert_near(stats_median(x, ARRAY_LEN(x)), 3.0, TOL);
    assert_memory_equal(x, orig, sizeof x);
    stats_modified_z(x, ARRAY_LEN(x), z);
    assert_memory_equal(x, orig, sizeof x);
}

/* Ranks of the median interval: x = n, n-1, ..., 1 (unsorted), so x_(j) = j and ci_low,
 * ci_high are the ranks themselves. Expected j and coverage exactly with Fraction (see the
 * top of this file); e.g. n = 10: P(B <= 1) = 11/1024, 1 - 22/1024 = 0.978515625, while
 * j = 3 gives 1 - 2 * 56/1024 = 0.890625 < 0.95. */
static void test_ci_ranks(void **state)
{
    (void)state;
    static const struct {
        size_t n, j;
        double coverage;
    } cases[] = {
        {1, 1, 0.0},                   /* [x, x] */
        {2, 1, 0.5},                   /* 1 - 2/4 */
        {3, 1, 0.75},                  /* 1 - 2/8 */
        {4, 1, 0.875},                 /* 1 - 2/16 */
        {5, 1, 0.9375},                /* 1 - 2/32: below 95 %, the best there is */
        {6, 1, 0.96875},               /* 1 - 2/64: the smallest n reaching 95 % */
        {7, 1, 0.984375},              /* 63/64 */
        {8, 1, 0.9921875},             /* 127/128; j = 2 gives 0.9296875 */
        {9, 2, 0.9609375},             /* 123/128 */
        {10, 2, 0.978515625},          /* 501/512 */
        {11, 2, 0.98828125},           /* 253/256 */
        {12, 3, 0.96142578125},        /* 1969/2048 */
        {15, 4, 0.96484375},           /* 247/256 */
        {20, 6, 0.9586105346679688},   /* 125647/131072 */
        {30, 10, 0.9572260547429323},  /* 513906825/536870912 */
        {50, 18, 0.9671608624357315},  /* 544463162459111/562949953421312 */
        {100, 40, 0.9647997997822951}, /* 38219657665440688759455013113/2^95 */
    };
    double x[100];
    for (size_t c = 0; c < ARRAY_LEN(cases); c++) {
        size_t n = cases[c].n;
        for (size_t i = 0; i < n; i++)
            x[i] = (double)(n - i);
        struct stats_summary s;
        assert_int_equal(stats_summarize(x, n, &s), 0);
        if (s.ci_low != (double)cases[c].j || fabs(s.ci_level - cases[c].coverage) > TOL)
            print_error("n = %zu: interval [%g, %g], coverage %.17g\n", n, s.ci_low, s.ci_high,
                        s.ci_level);
        assert_near(s.ci_low, (double)cases[c].j, 0.0);
        assert_near(s.ci_high, (double)(n - cases[c].j + 1), 0.0);
        assert_near(s.ci_level, cases[c].coverage, TOL);
    }
}

/* A clear outlier: python gives median 10.1, MAD 0.1, z(14.0) = 0.6745 * 3.9 / 0.1 = 26.3055;
 * the others are within |z| <= 1.349. */
static void test_clear_outlier(void **state)
{
    (void)state;
    const double x[] = {10.1, 10.3, 9.9, 10.0, 10.2, 10.1, 14.0, 10.0};
    const double z_expected[] = {0, 1.349, -1.349, -0.6745, 0.6745, 0, 26.3055, -0.6745};
    double z[ARRAY_LEN(x)];
    assert_int_equal(stats_modified_z(x, ARRAY_LEN(x), z), 1);
    for (size_t i = 0; i < ARRAY_LEN(x); i++)
        assert_near(z[i], z_expected[i], 1e-9);

    struct stats_summary s;
    assert_int_equal(stats_summarize(x, ARRAY_LEN(x), &s), 0);
    assert_int_equal(s.n_outliers, 1);
    assert_near(s.median, 10.1, TOL);
    assert_near(s.mad, 0.1, 1e-9);
    assert_near(s.mean, 10.575, TOL);
    assert_near(s.stddev, 1.389501452217408, TOL);
}

/* MAD = 0 (more than half the values equal the median): the MeanAD fallback.
 * {5,5,5,5,5,5,9}: MeanAD = 4/7, z(9) = 4 / (1.253314 * 4/7) = 7 / 1.253314 = 5.5852 > 3.5.
 * {5,5,5,5,6,4}: MeanAD = 2/6, z = +-1 / (1.253314 / 3) = +-2.39365: no outlier. */
static void test_mad_zero_fallback(void **state)
{
    (void)state;
    const double a[] = {5, 5, 5, 5, 5, 5, 9};
    double za[ARRAY_LEN(a)];
    assert_int_equal(stats_modified_z(a, ARRAY_LEN(a), za), 1);
    for (size_t i = 0; i < 6; i++)
        assert_near(za[i], 0.0, TOL);
    assert_near(za[6], 5.585192537544462, TOL);

    const double b[] = {5, 5, 5, 5, 6, 4};
    double zb[ARRAY_LEN(b)];
    assert_int_equal(stats_modified_z(b, ARRAY_LEN(b), zb), 0);
    assert_near(zb[4], 2.3936539446619123, TOL);
    assert_near(zb[5], -2.3936539446619123, TOL);

    struct stats_summary s;
    assert_int_equal(stats_summarize(a, ARRAY_LEN(a), &s), 0);
    assert_near(s.mad, 0.0, TOL);
    assert_int_equal(s.n_outliers, 1);
}

/* All equal: MAD and MeanAD are 0, every z is 0, nothing is an outlier, no spread. */
static void test_all_equal(void **state)
{
    (void)state;
    const double x[] = {2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5};
    double z[ARRAY_LEN(x)];
    assert_int_equal(stats_modified_z(x, ARRAY_LEN(x), z), 0);
    for (size_t i = 0; i < ARRAY_LEN(x); i++)
        assert_near(z[i], 0.0, 0.0);

    struct stats_summary s;
    assert_int_equal(stats_summarize(x, ARRAY_LEN(x), &s), 0);
    assert_int_equal(s.n_outliers, 0);
    assert_near(s.stddev, 0.0, 0.0);
    assert_near(s.cv, 0.0, 0.0);
    assert_near(s.mad, 0.0, 0.0);
    assert_near(s.ci_low, 2.5, 0.0);
    assert_near(s.ci_high, 2.5, 0.0);
}

static int summary_is_zero(const struct stats_summary *s)
{
    return s->n == 0 && s->median == 0 && s->mean == 0 && s->stddev == 0 && s->mad == 0 &&
           s->min == 0 && s->max == 0 && s->cv == 0 && s->ci_low == 0 && s->ci_high == 0 &&
           s->ci_level == 0 && s->n_outliers == 0;
}

/* NaN and +-infinity anywhere, and n == 0, are refused: -1 and a zeroed summary; the median is
 * NaN; modified z-scores are all NaN and nothing is counted. */
static void test_non_finite_and_empty(void **state)
{
    (void)state;
    const double bad[] = {NAN, INFINITY, -INFINITY};
    for (size_t b = 0; b < ARRAY_LEN(bad); b++) {
        for (size_t pos = 0; pos < 4; pos++) {
            double x[] = {1, 2, 3, 4};
            double z[ARRAY_LEN(x)];
            x[pos] = bad[b];
            struct stats_summary s;
            memset(&s, 0xff, sizeof s);
            assert_int_equal(stats_summarize(x, ARRAY_LEN(x), &s), -1);
            assert_true(summary_is_zero(&s));
            assert_true(isnan(stats_median(x, ARRAY_LEN(x))));
            assert_int_equal(stats_modified_z(x, ARRAY_LEN(x), z), 0);
            for (size_t i = 0; i < ARRAY_LEN(x); i++)
                assert_true(isnan(z[i]));
        }
    }

    const double one[] = {1};
    double z_untouched[] = {42};
    struct stats_summary s;
    memset(&s, 0xff, sizeof s);
    assert_int_equal(stats_summarize(one, 0, &s), -1);
    assert_true(summary_is_zero(&s));
    assert_true(isnan(stats_median(one, 0)));
    assert_int_equal(stats_modified_z(one, 0, z_untouched), 0);
    assert_near(z_untouched[0], 42.0, 0.0);
}

/* Nearest-rank quantiles: p50 of 1..10 is 5 (5 of 10 at or below), p90 is 9 (0.9 * 10 is
 * 9.000000000000002 in binary: must not round up to 10), p99 and p99.9 are the largest, p0 the
 * smallest; out-of-range q and empty input give NAN. */
static void test_quantile_nearest_rank(void **state)
{
    (void)state;
    double v[10] = {7, 3, 10, 1, 9, 2, 8, 4, 6, 5};
    stats_sort(v, 10);
    for (int i = 0; i < 10; i++)
        assert_true(v[i] == i + 1);
    assert_true(stats_quantile_sorted(v, 10, 0.5) == 5);
    assert_true(stats_quantile_sorted(v, 10, 0.9) == 9);
    assert_true(stats_quantile_sorted(v, 10, 0.91) == 10);
    assert_true(stats_quantile_sorted(v, 10, 0.99) == 10);
    assert_true(stats_quantile_sorted(v, 10, 0.999) == 10);
    assert_true(stats_quantile_sorted(v, 10, 0) == 1);
    assert_true(stats_quantile_sorted(v, 10, 1) == 10);
    assert_true(stats_quantile_sorted(v, 10, 0.05) == 1);
    assert_true(stats_quantile_sorted(v, 10, 0.11) == 2);
    assert_true(isnan(stats_quantile_sorted(v, 10, -0.1)));
    assert_true(isnan(stats_quantile_sorted(v, 10, 1.5)));
    assert_true(isnan(stats_quantile_sorted(v, 10, NAN)));
    assert_true(isnan(stats_quantile_sorted(v, 0, 0.5)));
    /* 1000 values 1..1000: p99.9 is 999, p99 990. */
    double *w = malloc(1000 * sizeof *w);
    for (int i = 0; i < 1000; i++)
        w[i] = 1000 - i;
    stats_sort(w, 1000);
    assert_true(stats_quantile_sorted(w, 1000, 0.999) == 999);
    assert_true(stats_quantile_sorted(w, 1000, 0.99) == 990);
    assert_true(stats_quantile_sorted(w, 1000, 0.5) == 500);
    free(w);
}

/* n = 10^6: x[i] = (i * 7919) mod n, a permutation of 0 .. n-1 (7919 is prime, coprime to
 * 10^6). Median (499999 + 500000)/2; mean the same; sample variance of 0..n-1 is n(n+1)/12;
 * |x - 499999.5| takes 0.5, 1.5, ... twice each, the 500000th and 500001st are 249999.5 and
 * 250000.5, so MAD = 250000. The median interval (python big integers) has ranks 499020 and
 * 500981, i.e. values 499019 and 500980, coverage 0.9501210313476318. */
static void test_large_n(void **state)
{
    (void)state;
    const size_t n = 1000000;
    double *x = malloc(n * sizeof *x);
    assert_non_null(x);
    for (size_t i = 0; i < n; i++)
        x[i] = (double)((i * 7919) % n);

    assert_near(stats_median(x, n), 499999.5, 0.0);

    struct stats_summary s;
    assert_int_equal(stats_summarize(x, n, &s), 0);
    assert_near(s.median, 499999.5, 0.0);
    assert_near(s.mean, 499999.5, TOL);
    assert_near(s.stddev, sqrt(1e6 * (1e6 + 1) / 12), 1e-10);
    assert_near(s.mad, 250000.0, 0.0);
    assert_near(s.min, 0.0, 0.0);
    assert_near(s.max, 999999.0, 0.0);
    assert_near(s.ci_low, 499019.0, 0.0);
    assert_near(s.ci_high, 500980.0, 0.0);
    assert_near(s.ci_level, 0.9501210313476318, TOL);
    assert_int_equal(s.n_outliers, 0);
    free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_odd_n),
        cmocka_unit_test(test_even_n_with_ties),
        cmocka_unit_test(test_single_value),
        cmocka_unit_test(test_two_values),
        cmocka_unit_test(test_cv_zero_mean),
        cmocka_unit_test(test_input_not_modified),
        cmocka_unit_test(test_ci_ranks),
        cmocka_unit_test(test_clear_outlier),
        cmocka_unit_test(test_mad_zero_fallback),
        cmocka_unit_test(test_all_equal),
        cmocka_unit_test(test_non_finite_and_empty),
        cmocka_unit_test(test_large_n),
        cmocka_unit_test(test_quantile_nearest_rank),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
