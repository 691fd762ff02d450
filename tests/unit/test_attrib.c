/* Unit tests of attrib: samples to stages (gauges: mean/min/peak; counters: rates over the
 * intervals whose midpoint is in the stage), merged spans, NAN samples, empty stages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "measure/attrib.h"
#include "measure/stages.h"

#define MS 1000000LL
#define T0 (5000 * MS)

/* A table with one gauge and one counter sampled every 100 ms from T0 - 50 ms. */
static void make_table(struct series_registry *reg, struct sample_table *tab)
{
    memset(reg, 0, sizeof *reg);
    series_register(reg, "test", "g", "", SERIES_GAUGE);
    series_register(reg, "test", "c_total", "", SERIES_COUNTER);
    sample_table_init(tab, reg);
    /* gauge 1..10; counter rises 1 per interval (10/s), then 3 per interval (30/s) */
    double total = 0;
    for (int i = 0; i < 10; i++) {
        size_t row = sample_table_add_row(tab, T0 - 50 * MS + i * 100 * MS);
        sample_table_set(tab, 0, row, i + 1);
        sample_table_set(tab, 1, row, total);
        total += i < 5 ? 1 : 3;
    }
}

static void test_gauge_and_counter(void **state)
{
    (void)state;
    struct series_registry reg;
    struct sample_table tab;
    struct metric_stat m[2];
    make_table(&reg, &tab);
    /* samples at -50, 50, 150, ... 850 ms; the stage 0..400 ms holds 50, 150, 250, 350 */
    struct interval iv[] = {{0, 400 * MS}};
    attrib_stage(&tab, T0, iv, 1, m);
    assert_int_equal(m[0].n, 4);
    assert_true(m[0].mean == 3.5); /* values 2,3,4,5 */
    assert_true(m[0].min == 2);
    assert_true(m[0].peak == 5);
    /* intervals with midpoints 0, 100, 200, 300, 400 ms: rows 1..5, deltas 1,1,1,1,1 */
    assert_int_equal(m[1].n, 5);
    assert_true(fabs(m[1].mean - 10.0) < 1e-9);
    assert_true(fabs(m[1].peak - 10.0) < 1e-9);

    /* later stage: rate 30/s */
    struct interval late[] = {{600 * MS, 850 * MS}};
    attrib_stage(&tab, T0, late, 1, m);
    assert_true(fabs(m[1].mean - 30.0) < 1e-9);
    assert_true(fabs(m[1].min - 30.0) < 1e-9);

    /* two disjoint intervals covering both regimes: time-weighted mean of the rates */
    struct interval both[] = {{0, 100 * MS}, {700 * MS, 800 * MS}};
    attrib_stage(&tab, T0, both, 2, m);
    assert_int_equal(m[0].n, 2); /* samples at 50 and 750 ms: values 2 and 9 */
    assert_true(m[0].mean == 5.5);
    assert_int_equal(m[1].n, 4); /* midpoints 0, 100, 700, 800 ms */
    assert_true(fabs(m[1].mean - 20.0) < 1e-9);
    assert_true(fabs(m[1].min - 10.0) < 1e-9);
    assert_true(fabs(m[1].peak - 30.0) < 1e-9);

    /* a stage between two samples: nothing measured, not 0 */
    struct interval tiny[] = {{60 * MS, 90 * MS}};
    attrib_stage(&tab, T0, tiny, 1, m);
    assert_int_equal(m[0].n, 0);
    assert_true(isnan(m[0].mean) && isnan(m[0].peak));
    sample_table_free(&tab);
    series_registry_free(&reg);
}

static void test_nan_samples_skipped(void **state)
{
    (void)state;
    struct series_registry reg;
    struct sample_table tab;
    struct metric_stat m[2];
    make_table(&reg, &tab);
    tab.v[0][2] = NAN; /* 150 ms */
    tab.v[1][3] = NAN; /* 250 ms: both intervals touching it are unknown */
    struct interval iv[] = {{0, 400 * MS}};
    attrib_stage(&tab, T0, iv, 1, m);
    assert_int_equal(m[0].n, 3);
    assert_true(fabs(m[0].mean - (2 + 4 + 5) / 3.0) < 1e-12);
    assert_int_equal(m[1].n, 3);
    assert_true(fabs(m[1].mean - 10.0) < 1e-9);
    sample_table_free(&tab);
    series_registry_free(&reg);
}

static void test_attrib_run(void **state)
{
    (void)state;
    struct series_registry reg;
    struct sample_table tab;
    make_table(&reg, &tab);
    struct event_log log;
    event_log_init(&log);
    const char *events[] = {"B 5000000000 1 1 work", "B 5100000000 1 2 work",
                            "E 5300000000 1 1 work", "E 5400000000 1 2 work"};
    for (size_t i = 0; i < 4; i++) {
        struct marker_token t;
        assert_null(marker_parse(events[i], strlen(events[i]), &t));
        event_log_add(&log, &t);
    }
    struct stage_data d;
    stages_aggregate(&log, T0, 900 * MS, &d);
    struct metric_stat **rows = attrib_run(&tab, T0, 900 * MS, &d);
    /* "work" is the union 0..400 ms of two overlapping spans: samples 50..350 ms */
    assert_int_equal(rows[0][0].n, 4);
    assert_true(rows[0][0].mean == 3.5);
    /* the whole run 0..900 ms: samples 50..850 ms */
    assert_int_equal(rows[1][0].n, 9);
    attrib_free(rows, d.n_stages + 1);
    stages_free(&d);
    event_log_free(&log);
    sample_table_free(&tab);
    series_registry_free(&reg);
}

/* Samples 10 ms apart, then 100 ms apart (adaptive sampling): the gauge's mean weighs each
 * sample by the time it stands for, so the 10 ms samples (value 0) count for 10 ms each and the
 * 100 ms ones (value 10) for 100 ms: not the plain mean of the values. */
static void test_gauge_time_weighted(void **state)
{
    (void)state;
    struct series_registry reg;
    struct sample_table tab;
    memset(&reg, 0, sizeof reg);
    series_register(&reg, "test", "g", "", SERIES_GAUGE);
    sample_table_init(&tab, &reg);
    int64_t t = T0;
    for (int i = 0; i < 10; i++, t += 10 * MS) /* T0 .. T0 + 90 ms */
        sample_table_set(&tab, 0, sample_table_add_row(&tab, t), 0);
    for (int i = 0; i < 4; i++, t += 100 * MS) /* T0 + 100 .. 400 ms */
        sample_table_set(&tab, 0, sample_table_add_row(&tab, t), 10);
    struct metric_stat m[1];
    struct interval iv[] = {{0, 400 * MS}};
    attrib_stage(&tab, T0, iv, 1, m);
    assert_int_equal(m[0].n, 14);
    /* weights: row 0 a whole gap (10), rows 1..8 10 each, row 9 (90 ms) (10 + 10) / 2 = 10,
     * row 10 (100 ms) (10 + 100) / 2 = 55, rows 11, 12 100, row 13 (the end) 100:
     * mean = 10 * (55 + 300) / (100 + 355) */
    assert_true(fabs(m[0].mean - 10.0 * 355 / 455) < 1e-9);
    assert_true(m[0].mean > 10.0 * 4 / 14 + 4); /* the plain mean would be 2.86 */
    sample_table_free(&tab);
    series_registry_free(&reg);
}

/* CPU time in 10 ms ticks sampled every 10 ms: one interval can hold 0, 1, 2 or 3 ticks, a rate
 * of 0 to 3 cores, on a machine of 2 CPUs running 1.5 cores steadily. min and peak are over
 * windows of at least 95 ms (10 intervals here), not single intervals, and never above the
 * series' max_rate; a short last interval (the sample at the run's end) joins the window before. */
static void test_counter_windows_and_clamp(void **state)
{
    (void)state;
    struct series_registry reg;
    struct sample_table tab;
    memset(&reg, 0, sizeof reg);
    series_register(&reg, "test", "cpu_total", "", SERIES_COUNTER);
    reg.defs[0].max_rate = 2;
    sample_table_init(&tab, &reg);
    /* ticks per interval: 3, 0 alternating (1.5 cores), 40 intervals of 10 ms */
    for (int i = 0; i <= 40; i++)
        sample_table_set(&tab, 0, sample_table_add_row(&tab, T0 + i * 10 * MS), 0.03 * ((i + 1) / 2));
    sample_table_set(&tab, 0, sample_table_add_row(&tab, T0 + 402 * MS), 0.61); /* 2 ms: 5 cores */
    struct metric_stat m[1];
    struct interval iv[] = {{0, 410 * MS}};
    attrib_stage(&tab, T0, iv, 1, m);
    assert_int_equal(m[0].n, 41);
    assert_true(fabs(m[0].mean - (0.6 + 0.01) / 0.402) < 1e-9);
    assert_true(m[0].min >= 1.4 && m[0].min <= 1.5);
    assert_true(m[0].peak >= 1.5 && m[0].peak <= 1.6); /* not 3 (one interval), not 5 (the last) */
    /* the same with max_rate 1: clamped */
    reg.defs[0].max_rate = 1;
    attrib_stage(&tab, T0, iv, 1, m);
    assert_true(m[0].peak == 1 && m[0].mean == 1);
    sample_table_free(&tab);
    series_registry_free(&reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gauge_and_counter),
        cmocka_unit_test(test_gauge_time_weighted),
        cmocka_unit_test(test_counter_windows_and_clamp),
        cmocka_unit_test(test_nan_samples_skipped),
        cmocka_unit_test(test_attrib_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
