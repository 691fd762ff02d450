/* Unit tests of src/load/peak.c, the search of `mlbench load --find-peak`, against simulated
 * servers: one that meets the bound exactly up to a capacity, one whose short probes are lucky
 * above it (the confirmation must catch it), one that never meets it, and one that always does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>

#include "load/peak.h"

struct sim {
    double capacity;     /* rates up to this meet the bound */
    double lucky_above;  /* probes (not confirmations) up to this meet it too */
    int runs, probes, confirms;
};

/* Runs the search to its end against the simulated server; returns the rate found. */
static double search(struct sim *m, double start, double tol)
{
    struct peak_search s;
    peak_init(&s, start, tol);
    double qps;
    bool confirm;
    while (peak_next(&s, &qps, &confirm)) {
        assert_true(qps > 0);
        m->runs++;
        if (confirm)
            m->confirms++;
        else
            m->probes++;
        bool met = qps <= m->capacity || (!confirm && qps <= m->lucky_above);
        peak_report(&s, met);
        assert_true(m->runs < 200); /* it ends */
    }
    return s.found;
}

static void test_finds_capacity_within_tolerance(void **state)
{
    (void)state;
    static const double caps[] = {0.7, 3, 37, 100, 250, 1234.5, 99999};
    static const double starts[] = {1, 10, 400};
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
        for (size_t j = 0; j < sizeof starts / sizeof starts[0]; j++) {
            struct sim m = {.capacity = caps[i]};
            double found = search(&m, starts[j], 0.05);
            /* never above what met the bound, and no further below than the tolerance allows */
            assert_true(found <= caps[i]);
            assert_true(found >= caps[i] * (1 - 0.05) - 1e-9);
            assert_int_equal(m.confirms, 1);
            assert_true(m.probes <= PEAK_MAX_PROBES);
        }
}

static void test_lucky_probes_are_caught_by_the_confirmation(void **state)
{
    (void)state;
    struct sim m = {.capacity = 100, .lucky_above = 118};
    double found = search(&m, 10, 0.05);
    assert_true(found <= 100);
    assert_true(found > 0);
    assert_true(m.confirms >= 2); /* the first confirmation, near 118, failed */
    assert_true(m.confirms <= PEAK_MAX_CONFIRMS);
}

static void test_never_met_finds_nothing(void **state)
{
    (void)state;
    struct sim m = {.capacity = 0};
    assert_true(search(&m, 10, 0.05) == 0);
    assert_int_equal(m.confirms, 0);
}

static void test_always_met_stops_at_the_probe_limit(void **state)
{
    (void)state;
    struct sim m = {.capacity = INFINITY};
    double found = search(&m, 10, 0.05);
    assert_true(found > 10);
    assert_int_equal(m.confirms, 1);
    assert_true(m.probes <= PEAK_MAX_PROBES);
}

static void test_confirmations_are_bounded(void **state)
{
    (void)state;
    /* every probe meets it, no confirmation does */
    struct sim m = {.capacity = 0, .lucky_above = 500};
    assert_true(search(&m, 10, 0.05) == 0);
    assert_int_equal(m.confirms, PEAK_MAX_CONFIRMS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_finds_capacity_within_tolerance),
        cmocka_unit_test(test_lucky_probes_are_caught_by_the_confirmation),
        cmocka_unit_test(test_never_met_finds_nothing),
        cmocka_unit_test(test_always_met_stops_at_the_probe_limit),
        cmocka_unit_test(test_confirmations_are_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
