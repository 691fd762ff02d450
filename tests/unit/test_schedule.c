/* Unit tests of src/load/schedule.c (Poisson arrivals from splitmix64).
 *
 * splitmix64's expected outputs are the published test vectors of Vigna's reference code
 * (seed 0: 0xe220a8397b1dcdaf; seed 1234567: 6457827717110365317, 3203168211198807973,
 * 9817491932198370423), re-derived with python3 big integers. The statistical checks use
 * 10^6 gaps, so the tolerances are many standard errors wide: the mean of 10^6 exponential
 * gaps has a relative standard error of 0.1 % (tolerance 1 %), their standard deviation about
 * 0.14 % (CV tolerance 2 %), the share of gaps above the mean (e^-1) 0.05 % (tolerance 0.5 %).
 * The seeds are fixed, so the outcome is deterministic anyway. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>

#include "load/schedule.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define N_GAPS 1000000

static void test_splitmix64_vectors(void **state)
{
    (void)state;
    uint64_t s = 0;
    assert_true(schedule_splitmix64(&s) == 0xe220a8397b1dcdafu);
    s = 1234567;
    assert_true(schedule_splitmix64(&s) == 6457827717110365317u);
    assert_true(schedule_splitmix64(&s) == 3203168211198807973u);
    assert_true(schedule_splitmix64(&s) == 9817491932198370423u);
}

/* Uniforms lie in (0, 1] and average 1/2. */
static void test_uniform_range(void **state)
{
    (void)state;
    uint64_t s = 5;
    double sum = 0, lo = 1, hi = 0;
    for (int i = 0; i < N_GAPS; i++) {
        double u = schedule_uniform(&s);
        assert_true(u > 0 && u <= 1);
        sum += u;
        lo = fmin(lo, u);
        hi = fmax(hi, u);
    }
    assert_true(fabs(sum / N_GAPS - 0.5) < 0.002); /* standard error 0.0003 */
    assert_true(lo < 1e-5 && hi > 1 - 1e-5);
}

/* At each rate, the gaps between due times (what a load generator sees, rounded to whole
 * ns) have mean 1/qps and coefficient of variation 1, and e^-1 of them exceed the mean. */
static void test_gap_statistics(void **state)
{
    (void)state;
    static const double rates[] = {1, 37.5, 1000, 250000, 1e7};
    for (size_t r = 0; r < ARRAY_LEN(rates); r++) {
        struct schedule s;
        schedule_init(&s, rates[r], 1000 + r, 0);
        double mean_gap = 1e9 / rates[r], sum = 0, sum2 = 0;
        int64_t prev = 0;
        long above = 0;
        for (int i = 0; i < N_GAPS; i++) {
            int64_t t = schedule_next(&s);
            double gap = (double)(t - prev);
            prev = t;
            sum += gap;
            sum2 += gap * gap;
            above += gap > mean_gap;
        }
        double mean = sum / N_GAPS;
        double sd = sqrt((sum2 - sum * mean) / (N_GAPS - 1));
        if (fabs(mean / mean_gap - 1) > 0.01 || fabs(sd / mean - 1) > 0.02 ||
            fabs((double)above / N_GAPS - exp(-1)) > 0.005) {
            print_error("qps %g: mean gap %g ns (want %g), cv %g, above mean %g\n", rates[r],
                        mean, mean_gap, sd / mean, (double)above / N_GAPS);
            fail();
        }
    }
}

/* The same seed gives the same due times; another seed other ones. */
static void test_seeded(void **state)
{
    (void)state;
    struct schedule a, b, c;
    schedule_init(&a, 500, 77, 1000);
    schedule_init(&b, 500, 77, 1000);
    schedule_init(&c, 500, 78, 1000);
    int differ = 0;
    for (int i = 0; i < 1000; i++) {
        int64_t ta = schedule_next(&a), tb = schedule_next(&b), tc = schedule_next(&c);
        assert_int_equal(ta, tb);
        differ += ta != tc;
    }
    assert_true(differ > 990);
}

/* Due times never go back, the first is at or after the start, and a start far from 0 (a
 * machine up for years) shifts the due times without changing the gaps. */
static void test_monotone_and_offset(void **state)
{
    (void)state;
    const int64_t far = (int64_t)4e17; /* 12.7 years of CLOCK_MONOTONIC */
    struct schedule near0, shifted;
    schedule_init(&near0, 20000, 9, 0);
    schedule_init(&shifted, 20000, 9, far);
    int64_t prev = 0;
    for (int i = 0; i < N_GAPS; i++) {
        int64_t t = schedule_next(&near0), u = schedule_next(&shifted);
        assert_true(t >= prev);
        assert_int_equal(u - far, t);
        prev = t;
    }
    /* 10^6 gaps of 50 us: about 50 s in all */
    assert_true(prev > (int64_t)45e9 && prev < (int64_t)55e9);
}

/* A rate so low that the due time passes INT64_MAX stops there rather than overflowing. */
static void test_saturates(void **state)
{
    (void)state;
    struct schedule s;
    schedule_init(&s, 1e-12, 1, 0); /* mean gap 10^21 ns */
    int64_t last = 0;
    for (int i = 0; i < 100; i++)
        last = schedule_next(&s);
    assert_int_equal(last, INT64_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_splitmix64_vectors),
        cmocka_unit_test(test_uniform_range),
        cmocka_unit_test(test_gap_statistics),
        cmocka_unit_test(test_seeded),
        cmocka_unit_test(test_monotone_and_offset),
        cmocka_unit_test(test_saturates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
