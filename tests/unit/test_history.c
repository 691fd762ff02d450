/* Unit tests of the history's series wiring (src/analysis/history.c over the model of
 * src/doc/history.h): which results make a benchmark (a label, or a command without one), the
 * figures shown, which results a series holds (those whose runs succeeded and that have the
 * figure), the series kept, the step changes found and whether the newest result regressed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "analysis/history.h"
#include "doc/history.h"

#define N 12

static struct doc_history_stage stages[N][2];
static struct doc_history_result results[N];

/* Result i: label (or none, with command), runs_ok of 5 runs, a total of median ns and, when
 * train is not NAN, a stage "train" of that median (and a stage "load" when load). */
static void result(size_t i, const char *label, const char *command, long runs_ok, double median,
                   double train, bool load)
{
    struct doc_history_result *r = &results[i];
    memset(r, 0, sizeof *r);
    r->id = "id";
    r->label = label;
    r->command = command;
    r->runs_measured = 5;
    r->runs_ok = runs_ok;
    r->wall = (struct doc_history_stats){5, median, median * 0.999, median * 1.001, 0.95,
                                         median * 0.001};
    size_t k = 0;
    if (load)
        stages[i][k++] = (struct doc_history_stage){"load", 0, {5, median / 10, NAN, NAN, NAN,
                                                                NAN}};
    if (!isnan(train))
        stages[i][k++] = (struct doc_history_stage){"train", 0, {5, train, train * 0.999,
                                                                 train * 1.001, 0.95,
                                                                 train * 0.001}};
    r->stages = stages[i];
    r->n_stages = k;
}

static struct doc_history model(size_t n, const char *stage)
{
    return (struct doc_history){.results = results, .n_results = n, .stage = stage,
                                .min_effect_pct = 2, .z = 4};
}

static void test_figure_by_stage_name(void **state)
{
    (void)state;
    result(0, "a", "x", 5, 100, 40, false);
    assert_ptr_equal(doc_history_figure(&results[0], DOC_HISTORY_TOTAL), &results[0].wall);
    assert_true(doc_history_figure(&results[0], "train")->median_ns == 40);
    assert_null(doc_history_figure(&results[0], "evaluate"));
    /* a result none of whose runs succeeded is no point of a trend, nor a median of 0 */
    result(1, "a", "x", 0, 100, 40, false);
    assert_non_null(doc_history_figure(&results[1], "train"));
    assert_null(doc_history_trend_figure(&results[1], "train"));
    result(2, "a", "x", 5, 0, 40, false);
    assert_null(doc_history_trend_figure(&results[2], DOC_HISTORY_TOTAL));
    assert_non_null(doc_history_trend_figure(&results[2], "train"));
}

static void test_benchmarks_by_label_then_command(void **state)
{
    (void)state;
    result(0, "a", "python x.py", 5, 100, NAN, false);
    result(1, NULL, "python x.py", 5, 100, NAN, false); /* same command, no label: another */
    result(2, "b", "python x.py", 5, 100, NAN, false);
    result(3, NULL, "python y.py", 5, 100, NAN, false);
    result(4, NULL, "python x.py", 5, 100, NAN, false);
    result(5, "a", "python z.py", 5, 100, NAN, false); /* the label decides, not the command */
    result(6, NULL, NULL, 5, 100, NAN, false);          /* a load result: no command */
    result(7, NULL, "", 5, 100, NAN, false);
    struct doc_history h = model(8, NULL);
    history_series_build(&h, false);
    assert_int_equal(h.n_benchmarks, 5);
    const size_t want[] = {0, 1, 2, 3, 1, 0, 4, 4};
    for (size_t i = 0; i < 8; i++)
        assert_int_equal(h.benchmark[i], want[i]);
    assert_null(h.series); /* not asked for */
    assert_int_equal(h.n_series, 0);
    assert_int_equal(history_newest(&h, 0), 5);
    assert_int_equal(history_newest(&h, 3), 3);
    assert_int_equal(history_newest(&h, 9), 8); /* none: n_results */
    history_series_free(&h);
    assert_null(h.benchmark);
    assert_int_equal(h.n_benchmarks, 0);
}

static void test_figures_shown(void **state)
{
    (void)state;
    result(0, "a", "x", 5, 100, NAN, true); /* load */
    result(1, "a", "x", 5, 100, 50, true);  /* load, train */
    result(2, "b", "x", 5, 100, 50, false); /* train */
    struct doc_history h = model(3, NULL);
    history_series_build(&h, false);
    assert_int_equal(h.n_stages, 3);
    assert_string_equal(h.stages[0], DOC_HISTORY_TOTAL);
    assert_string_equal(h.stages[1], "load");
    assert_string_equal(h.stages[2], "train");
    history_series_free(&h);
    /* --stage: that one alone, even when no result has it */
    h = model(3, "evaluate");
    history_series_build(&h, false);
    assert_int_equal(h.n_stages, 1);
    assert_string_equal(h.stages[0], "evaluate");
    history_series_free(&h);
}

static void test_series_hold_the_results_that_succeeded(void **state)
{
    (void)state;
    result(0, "a", "x", 5, 100, 40, false);
    result(1, "b", "x", 5, 200, NAN, false); /* b has no train */
    result(2, "a", "x", 0, 100, 40, false);  /* failed: no point */
    result(3, "a", "x", 5, 101, NAN, false); /* no train in this one */
    result(4, "b", "x", 0, 200, NAN, false);
    result(5, "a", "x", 5, 102, 41, false);
    struct doc_history h = model(6, NULL);
    history_series_build(&h, true);
    /* a: total, train; b: total (with its points) and no train (no point, not the first
     * figure): a benchmark keeps its first figure even without a point */
    assert_int_equal(h.n_series, 3);
    const struct doc_history_series *s = &h.series[0];
    assert_int_equal(s->benchmark, 0);
    assert_string_equal(s->label, "a");
    assert_string_equal(s->stage, DOC_HISTORY_TOTAL);
    assert_int_equal(s->n_points, 3);
    assert_int_equal(s->points[0].result, 0);
    assert_int_equal(s->points[1].result, 3);
    assert_int_equal(s->points[2].result, 5);
    assert_true(s->points[2].median_ns == 102);
    assert_int_equal(s->points[2].n, 5);
    s = &h.series[1];
    assert_string_equal(s->stage, "train");
    assert_int_equal(s->n_points, 2);
    assert_int_equal(s->points[0].result, 0);
    assert_int_equal(s->points[1].result, 5);
    s = &h.series[2];
    assert_int_equal(s->benchmark, 1);
    assert_string_equal(s->label, "b");
    assert_string_equal(s->stage, DOC_HISTORY_TOTAL);
    assert_int_equal(s->n_points, 1);
    assert_int_equal(s->points[0].result, 1);
    history_series_free(&h);

    /* a benchmark none of whose results succeeded keeps its first series, empty */
    result(0, "c", "x", 0, 100, 40, false);
    result(1, "c", "x", 0, 100, 40, false);
    h = model(2, NULL);
    history_series_build(&h, true);
    assert_int_equal(h.n_series, 1);
    assert_string_equal(h.series[0].stage, DOC_HISTORY_TOTAL);
    assert_int_equal(h.series[0].n_points, 0);
    assert_int_equal(h.series[0].n_changes, 0);
    history_series_free(&h);
}

/* Benchmark "s": n results, 100 ns then `after` from index at on; a result of "other" after the
 * third. Returns the results made. */
static size_t step(size_t at, size_t n, double after)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        result(k++, "s", "x", 5, i < at ? 100 : after, NAN, false);
        if (i == 2)
            result(k++, "other", "x", 5, 100, NAN, false);
    }
    return k;
}

static void test_changes_and_regression(void **state)
{
    (void)state;
    size_t n = step(6, 10, 130);
    struct doc_history h = model(n, NULL);
    history_series_build(&h, true);
    assert_int_equal(h.n_series, 2);
    const struct doc_history_series *s = &h.series[0];
    assert_string_equal(s->label, "s");
    assert_int_equal(s->n_points, 10);
    assert_int_equal(s->n_changes, 1);
    assert_int_equal(s->changes[0].point, 6);
    assert_int_equal(s->points[6].result, 7); /* "other" sits at index 3 */
    assert_true(s->changes[0].change_pct > 25 && s->changes[0].change_pct < 35);
    assert_int_equal(h.series[1].n_changes, 0);
    /* the change is not at the newest result: no regression */
    assert_false(history_regressed(&h));
    history_series_free(&h);

    /* a step at the newest result... */
    n = step(9, 10, 130);
    h = model(n, NULL);
    history_series_build(&h, true);
    assert_int_equal(h.series[0].n_changes, 1);
    assert_int_equal(h.series[0].points[h.series[0].changes[0].point].result, n - 1);
    assert_true(history_regressed(&h));
    history_series_free(&h);
    /* ...is not found below a larger smallest effect */
    h = model(n, NULL);
    h.min_effect_pct = 50;
    history_series_build(&h, true);
    assert_int_equal(h.series[0].n_changes, 0);
    assert_false(history_regressed(&h));
    history_series_free(&h);

    /* faster at the newest result is no regression */
    n = step(9, 10, 70);
    h = model(n, NULL);
    history_series_build(&h, true);
    assert_int_equal(h.series[0].n_changes, 1);
    assert_true(h.series[0].changes[0].change_pct < 0);
    assert_false(history_regressed(&h));
    history_series_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_figure_by_stage_name),
        cmocka_unit_test(test_benchmarks_by_label_then_command),
        cmocka_unit_test(test_figures_shown),
        cmocka_unit_test(test_series_hold_the_results_that_succeeded),
        cmocka_unit_test(test_changes_and_regression),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
