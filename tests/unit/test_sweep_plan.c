/* Unit tests of sweep_plan: parameters, the product and substitution, the interleaved order,
 * the --find-max search against an oracle, objectives and constraints; and units_parse_bytes,
 * which budgets and constraints read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "session/sweep_plan.h"
#include "util/units.h"

static void test_lists(void **state)
{
    (void)state;
    struct sweep_param p;
    char err[512];
    assert_int_equal(sweep_param_list(&p, "batch", "32,64,128", err, sizeof err), 0);
    assert_int_equal(p.n, 3);
    assert_string_equal(p.values[2], "128");
    assert_true(p.numeric);
    sweep_param_free(&p);
    assert_int_equal(sweep_param_list(&p, "opt", "adam,sgd", err, sizeof err), 0);
    assert_false(p.numeric);
    sweep_param_free(&p);
    assert_int_equal(sweep_param_list(&p, "x", "", err, sizeof err), -1);
    assert_non_null(strstr(err, "no values"));
    assert_int_equal(sweep_param_list(&p, "x", "1,,2", err, sizeof err), -1);
    assert_non_null(strstr(err, "empty value"));
    assert_int_equal(sweep_param_list(&p, "x", "1,2,1", err, sizeof err), -1);
    assert_non_null(strstr(err, "twice"));
    assert_int_equal(sweep_param_list(&p, "9x", "1", err, sizeof err), -1);
    assert_non_null(strstr(err, "'9x'"));
    assert_int_equal(sweep_param_list(&p, "a-b", "1", err, sizeof err), -1);
}

static void test_ranges(void **state)
{
    (void)state;
    struct sweep_param p;
    char err[512];
    assert_int_equal(sweep_param_range(&p, "t", "1", "4", NULL, false, err, sizeof err), 0);
    assert_int_equal(p.n, 4);
    assert_string_equal(p.values[3], "4");
    sweep_param_free(&p);
    /* decimal steps are counted, not accumulated: 0.1 .. 0.5 has 5 values, the last 0.5 */
    assert_int_equal(sweep_param_range(&p, "lr", "0.1", "0.5", "0.1", false, err, sizeof err), 0);
    assert_int_equal(p.n, 5);
    assert_string_equal(p.values[4], "0.5");
    assert_string_equal(p.values[2], "0.3");
    sweep_param_free(&p);
    assert_int_equal(sweep_param_range(&p, "b", "10", "100", NULL, true, err, sizeof err), 0);
    assert_int_equal(p.n, 3); /* 16 32 64 */
    assert_string_equal(p.values[0], "16");
    assert_string_equal(p.values[2], "64");
    sweep_param_free(&p);
    assert_int_equal(sweep_param_range(&p, "b", "5", "1", NULL, false, err, sizeof err), -1);
    assert_non_null(strstr(err, "MIN is above MAX"));
    assert_int_equal(sweep_param_range(&p, "b", "1", "x", NULL, false, err, sizeof err), -1);
    assert_non_null(strstr(err, "'x' is not a number"));
    assert_int_equal(sweep_param_range(&p, "b", "1", "2", "0", false, err, sizeof err), -1);
    assert_int_equal(sweep_param_range(&p, "b", "1", "1e9", NULL, false, err, sizeof err), -1);
    assert_non_null(strstr(err, "more than"));
    assert_int_equal(sweep_param_range(&p, "b", "5", "7", NULL, true, err, sizeof err), -1);
    assert_non_null(strstr(err, "no power of two"));
}

static void test_product_and_substitution(void **state)
{
    (void)state;
    struct sweep_param ps[2];
    char err[512];
    assert_int_equal(sweep_param_list(&ps[0], "a", "1,2", err, sizeof err), 0);
    assert_int_equal(sweep_param_list(&ps[1], "b", "x,y,z", err, sizeof err), 0);
    assert_int_equal(sweep_product_size(ps, 2), 6);
    size_t idx[2];
    sweep_combination(ps, 2, 0, idx);
    assert_int_equal(idx[0], 0);
    assert_int_equal(idx[1], 0);
    sweep_combination(ps, 2, 4, idx); /* the last varies fastest: (1, 1) */
    assert_int_equal(idx[0], 1);
    assert_int_equal(idx[1], 1);
    bool used[2] = {false, false};
    char *s = sweep_substitute("--a={a} {\"k\": {a}} {{b}} { print } {}", "the command", ps, 2,
                               idx, used, err, sizeof err);
    assert_non_null(s);
    assert_string_equal(s, "--a=2 {\"k\": 2} {b} { print } {}");
    assert_true(used[0]);
    assert_false(used[1]);
    free(s);
    s = sweep_substitute("{c}", "--prepare", ps, 2, idx, used, err, sizeof err);
    assert_null(s);
    assert_non_null(strstr(err, "--prepare has {c}"));
    assert_non_null(strstr(err, "a, b"));
    assert_non_null(strstr(err, "{{c}}"));
    char *name = sweep_point_name(ps, 2, idx);
    assert_string_equal(name, "a=2 b=y");
    free(name);
    sweep_param_free(&ps[0]);
    sweep_param_free(&ps[1]);
}

static void test_shuffle(void **state)
{
    (void)state;
    size_t order[7], again[7];
    uint64_t s1 = 42, s2 = 42;
    int moved = 0;
    for (int round = 0; round < 20; round++) {
        sweep_shuffle(order, 7, &s1);
        sweep_shuffle(again, 7, &s2);
        int seen[7] = {0};
        for (size_t i = 0; i < 7; i++) {
            assert_true(order[i] < 7);
            seen[order[i]]++;
            assert_int_equal(order[i], again[i]); /* the same seed, the same rounds */
            moved += order[i] != i;
        }
        for (size_t i = 0; i < 7; i++)
            assert_int_equal(seen[i], 1); /* every point once per round */
    }
    assert_true(moved > 0);
    uint64_t s3 = 43;
    sweep_shuffle(again, 7, &s3);
    uint64_t s4 = 42;
    sweep_shuffle(order, 7, &s4);
    assert_memory_not_equal(order, again, sizeof order);
}

/* Runs the search against "fits when value <= limit"; returns the answer and the probes. */
static long long search(long long lo, long long hi, bool pow2, long long limit, int *probes)
{
    struct sweep_search s;
    char name[SWEEP_MAX_NAME + 1], spec[64], err[256];
    snprintf(spec, sizeof spec, "batch=%lld..%lld", lo, hi);
    assert_int_equal(sweep_search_parse(&s, name, spec, pow2, err, sizeof err), 0);
    assert_string_equal(name, "batch");
    *probes = 0;
    while (s.next > 0) {
        long long v = s.next;
        assert_true(v >= s.lo && v <= s.hi);
        if (pow2)
            assert_int_equal(v & (v - 1), 0);
        sweep_search_report(&s, v, v <= limit);
        ++*probes;
        assert_true(*probes < 100);
    }
    return s.last_fit;
}

static void test_search(void **state)
{
    (void)state;
    int probes;
    assert_int_equal(search(16, 65536, false, 1000, &probes), 1000); /* exactly */
    assert_true(probes <= 2 * 13);
    assert_int_equal(search(16, 65536, true, 1000, &probes), 512);
    assert_int_equal(search(16, 65536, false, 1e9, &probes), 65536); /* everything fits */
    assert_int_equal(search(16, 100, false, 100, &probes), 100);
    assert_int_equal(search(16, 65536, false, 3, &probes), -1);   /* nothing fits */
    assert_int_equal(probes, 1);
    assert_int_equal(search(1, 1, false, 1, &probes), 1);
    assert_int_equal(search(16, 65536, true, 16, &probes), 16);
    for (long long limit = 16; limit < 300; limit += 7)
        assert_int_equal(search(16, 1024, false, limit, &probes), limit);

    struct sweep_search s;
    char name[SWEEP_MAX_NAME + 1], err[256];
    assert_int_equal(sweep_search_parse(&s, name, "batch=100..10", false, err, sizeof err), -1);
    assert_non_null(strstr(err, "above HI"));
    assert_int_equal(sweep_search_parse(&s, name, "batch=0..10", false, err, sizeof err), -1);
    assert_int_equal(sweep_search_parse(&s, name, "batch", false, err, sizeof err), -1);
    assert_non_null(strstr(err, "NAME=LO..HI"));
    assert_int_equal(sweep_search_parse(&s, name, "batch=5..7", true, err, sizeof err), -1);
    assert_int_equal(sweep_search_parse(&s, name, "b=10..100", true, err, sizeof err), 0);
    assert_int_equal(s.lo, 16);
    assert_int_equal(s.hi, 64);
}

static json_t *figures(void)
{
    return json_pack("{s:{s:f}, s:[{s:s, s:f}], s:[{s:s, s:f, s:n, s:b}, {s:s, s:n, s:f, s:b}],"
                     " s:f, s:n, s:f}",
                     "total", "median_ns", 2e9, "stages", "name", "train", "median_ns", 1.5e9,
                     "counters", "name", "accuracy", "last_median", 0.85, "rate_per_s",
                     "count", 0, "name", "train_images", "last_median", "rate_per_s", 3000.0,
                     "count", 1, "peak_memory_bytes", 3.0 * 1024 * 1024 * 1024,
                     "gpu_memory_peak_bytes", "cost_per_run", 0.002);
}

static void test_objectives_and_constraints(void **state)
{
    (void)state;
    json_t *doc = figures(); /* a point's figures as a sweep document has them, read */
    struct doc_sweep_figures read;
    doc_sweep_figures_read(doc, &read);
    const struct doc_sweep_figures *f = &read;
    struct sweep_objective o;
    char err[512], why[512];
    assert_int_equal(sweep_objective_parse("min:total", &o, err, sizeof err), 0);
    assert_false(o.maximise);
    assert_true(sweep_figure_value(f, o.figure, o.name) == 2e9);
    assert_int_equal(sweep_objective_parse("max:counter:train_images_per_s", &o, err, sizeof err), 0);
    assert_true(o.maximise);
    assert_true(sweep_figure_value(f, o.figure, o.name) == 3000.0);
    assert_true(sweep_objective_known(&o, f));
    assert_int_equal(sweep_objective_parse("max:counter:tokens", &o, err, sizeof err), 0);
    assert_false(sweep_objective_known(&o, f));
    assert_true(isnan(sweep_figure_value(f, o.figure, o.name)));
    assert_int_equal(sweep_objective_parse("min:stage:train", &o, err, sizeof err), 0);
    assert_true(sweep_figure_value(f, o.figure, o.name) == 1.5e9);
    assert_int_equal(sweep_objective_parse("min:cost", &o, err, sizeof err), 0);
    assert_true(sweep_figure_value(f, o.figure, o.name) == 0.002);
    assert_int_equal(sweep_objective_parse("fast", &o, err, sizeof err), -1);
    assert_non_null(strstr(err, "'fast'"));
    assert_int_equal(sweep_objective_parse("min:counter:", &o, err, sizeof err), -1);

    struct sweep_constraint c;
    assert_int_equal(sweep_constraint_parse("counter:accuracy>=0.9", &c, err, sizeof err), 0);
    assert_false(sweep_constraint_met(&c, f, why, sizeof why));
    assert_non_null(strstr(why, "0.85 < 0.9"));
    assert_int_equal(sweep_constraint_parse("counter:accuracy>0.8", &c, err, sizeof err), 0);
    assert_true(sweep_constraint_met(&c, f, why, sizeof why));
    assert_int_equal(sweep_constraint_parse("memory<=8GiB", &c, err, sizeof err), 0);
    assert_true(c.value == 8.0 * 1024 * 1024 * 1024);
    assert_true(sweep_constraint_met(&c, f, why, sizeof why));
    assert_int_equal(sweep_constraint_parse("memory<2GiB", &c, err, sizeof err), 0);
    assert_false(sweep_constraint_met(&c, f, why, sizeof why));
    assert_int_equal(sweep_constraint_parse("total<1.5s", &c, err, sizeof err), 0);
    assert_true(c.value == 1.5e9);
    assert_false(sweep_constraint_met(&c, f, why, sizeof why));
    assert_int_equal(sweep_constraint_parse("gpu_memory<=1GiB", &c, err, sizeof err), 0);
    assert_false(sweep_constraint_met(&c, f, why, sizeof why));
    assert_non_null(strstr(why, "unknown"));
    assert_int_equal(sweep_constraint_parse("memory<=lots", &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "'lots' is not a size"));
    assert_int_equal(sweep_constraint_parse("speed>1", &c, err, sizeof err), -1);
    assert_int_equal(sweep_constraint_parse("counter:accuracy", &c, err, sizeof err), -1);
    assert_int_equal(sweep_constraint_parse("cost<=x", &c, err, sizeof err), -1);
    doc_sweep_figures_free(&read);
    json_decref(doc);
}

static void test_bytes(void **state)
{
    (void)state;
    double v;
    assert_int_equal(units_parse_bytes("512", &v), 0);
    assert_true(v == 512);
    assert_int_equal(units_parse_bytes("8GiB", &v), 0);
    assert_true(v == 8.0 * 1024 * 1024 * 1024);
    assert_int_equal(units_parse_bytes("8G", &v), 0);
    assert_true(v == 8.0 * 1024 * 1024 * 1024);
    assert_int_equal(units_parse_bytes("8GB", &v), 0);
    assert_true(v == 8e9);
    assert_int_equal(units_parse_bytes("1.5 MiB", &v), 0);
    assert_true(v == 1.5 * 1024 * 1024);
    assert_int_equal(units_parse_bytes("100k", &v), 0);
    assert_true(v == 102400);
    assert_int_equal(units_parse_bytes("-1", &v), -1);
    assert_int_equal(units_parse_bytes("8 GiBs", &v), -1);
    assert_int_equal(units_parse_bytes("1e400", &v), -1);
    assert_int_equal(units_parse_bytes("GiB", &v), -1);
    assert_int_equal(units_parse_bytes("", &v), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lists),
        cmocka_unit_test(test_ranges),
        cmocka_unit_test(test_product_and_substitution),
        cmocka_unit_test(test_shuffle),
        cmocka_unit_test(test_search),
        cmocka_unit_test(test_objectives_and_constraints),
        cmocka_unit_test(test_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
