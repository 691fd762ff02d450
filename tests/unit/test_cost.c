/* Unit tests of the cost of a result (issue 14, cost per result): the arithmetic of
 * result/cost.c (per run, per stage, per unit with its power-of-ten scale, to target), price
 * and currency parsing and price files with their matching rule (result/price.c), and the cost
 * comparison of compare_results (analysis/compare_cost.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/compare.h"
#include "result/cost.h"
#include "result/price.h"
#include "util/jsonx.h"

static void test_cost_of_seconds(void **state)
{
    (void)state;
    assert_true(fabs(cost_of_seconds(0.1, 3.6) - 0.0001) < 1e-15);
    assert_true(fabs(cost_of_seconds(3600, 2.5) - 2.5) < 1e-12);
    assert_true(cost_of_seconds(0, 2.5) == 0);
    assert_true(isnan(cost_of_seconds(-1, 2.5)));
    assert_true(isnan(cost_of_seconds(NAN, 2.5)));
    assert_true(isnan(cost_of_seconds(1, 0)));
    assert_true(isnan(cost_of_seconds(1, INFINITY)));
}

static void test_unit_scale(void **state)
{
    (void)state;
    assert_true(cost_unit_scale(0.5) == 1);
    assert_true(cost_unit_scale(0.01) == 1);
    assert_true(cost_unit_scale(0.009) == 1e3);
    assert_true(cost_unit_scale(1e-7) == 1e6);  /* 0.1 per 1M */
    assert_true(cost_unit_scale(1e-9) == 1e9);  /* 1 per 1B */
    assert_true(cost_unit_scale(1e-30) == 1e12); /* capped */
    assert_true(cost_unit_scale(0) == 1);
    assert_true(cost_unit_scale(NAN) == 1);
    assert_string_equal(cost_unit_label(1), "1");
    assert_string_equal(cost_unit_label(1e3), "1k");
    assert_string_equal(cost_unit_label(1e6), "1M");
    assert_string_equal(cost_unit_label(1e9), "1B");
    assert_string_equal(cost_unit_label(1e12), "1T");
}

static void test_to_target_names(void **state)
{
    (void)state;
    assert_true(cost_is_to_target("time_to_target_s"));
    assert_true(cost_is_to_target("eval_time_to_target_s"));
    assert_false(cost_is_to_target("_time_to_target_s_x"));
    assert_false(cost_is_to_target("time_to_target"));
    assert_false(cost_is_to_target("xtime_to_target_s"));
    assert_false(cost_is_to_target(NULL));
}

static void test_price_parse(void **state)
{
    (void)state;
    double v;
    char cur[4], err[512];
    assert_int_equal(price_parse("3.50", &v, cur, err, sizeof err), 0);
    assert_true(v == 3.5);
    assert_string_equal(cur, "USD");
    assert_int_equal(price_parse("3.5USD", &v, cur, err, sizeof err), 0);
    assert_string_equal(cur, "USD");
    assert_int_equal(price_parse("2.1 eur", &v, cur, err, sizeof err), 0);
    assert_true(v == 2.1);
    assert_string_equal(cur, "EUR");
    assert_int_equal(price_parse("3.5EUR", &v, cur, err, sizeof err), 0); /* E is not an exponent */
    assert_true(v == 3.5);
    assert_string_equal(cur, "EUR");
    assert_int_equal(price_parse("1e-2", &v, cur, err, sizeof err), 0);
    assert_true(v == 0.01);
    const char *bad[] = {"", "abc", "0", "-1", "nan", "inf", "0x10", "1e99", " ", "3,5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        assert_int_equal(price_parse(bad[i], &v, cur, err, sizeof err), -1);
        assert_non_null(strstr(err, "price per hour"));
    }
    assert_int_equal(price_parse("3.5 dollars", &v, cur, err, sizeof err), -1);
    assert_non_null(strstr(err, "'dollars'"));
    assert_int_equal(price_parse("3.5 U$D", &v, cur, err, sizeof err), -1);
    assert_non_null(strstr(err, "currency"));
}

static void test_currency(void **state)
{
    (void)state;
    char c[4];
    assert_int_equal(price_parse_currency("gbp", c), 0);
    assert_string_equal(c, "GBP");
    assert_int_equal(price_parse_currency("US", c), -1);
    assert_int_equal(price_parse_currency("USDX", c), -1);
    assert_int_equal(price_parse_currency("U1D", c), -1);
    assert_int_equal(price_parse_currency(NULL, c), -1);
}

static const char good_file[] =
    "# prices per hour\n"
    "currency: eur\n"
    "NVIDIA H100: 3.0\n"
    "NVIDIA H100 80GB HBM3: 4.0\n"
    "AMD EPYC: 0.5\n"
    "build-box: 1.25\n"
    "default: 0.10\n";

static int load(struct price_spec *s, const char *text, char *err, size_t errlen)
{
    return price_spec_parse_file_text(s, "prices.yaml", text, strlen(text), err, errlen);
}

static void test_price_file(void **state)
{
    (void)state;
    struct price_spec s;
    char err[512];
    assert_int_equal(load(&s, good_file, err, sizeof err), 0);
    assert_string_equal(s.currency, "EUR");
    assert_int_equal(s.n_entries, 4);
    assert_string_equal(s.entries[1].name, "NVIDIA H100 80GB HBM3");
    assert_true(s.entries[1].per_hour == 4.0);
    assert_true(s.default_per_hour == 0.10);
    price_spec_free(&s);

    static const struct {
        const char *text, *want;
    } bad[] = {
        {"a: [1\n", "prices.yaml:"},
        {"- 1\n- 2\n", "mapping of machine names"},
        {"box: cheap\n", "'cheap' of 'box' is not a price per hour"},
        {"box: -2\n", "'-2' of 'box'"},
        {"box: 0\n", "'0' of 'box'"},
        {"box: .nan\n", "'.nan' of 'box'"},
        {"box: 2 EUR\n", "'2 EUR' of 'box'"},
        {"box: {a: 1}\n", "(a mapping) of 'box'"},
        {"currency: dollars\nbox: 1\n", "currency 'dollars'"},
        {"box: 1\nbox: 2\n", "'box' is given twice"},
        {"default: x\n", "'x' of 'default'"},
        {"currency: USD\n", "no machine and no 'default:'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        assert_int_equal(load(&s, bad[i].text, err, sizeof err), -1);
        if (!strstr(err, bad[i].want))
            fail_msg("%s: got '%s', want '%s'", bad[i].text, err, bad[i].want);
        price_spec_free(&s);
    }
    assert_int_equal(price_spec_load_file(&s, "/nonexistent/prices.yaml", err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/prices.yaml"));
    price_spec_free(&s);
}

/* The facts envinfo_capture would fill for a machine with host name host, one GPU named gpu
 * and CPU model cpu (NULL: not known; a GPU whose name is not known is still listed). The
 * GPU's facts are static: call once per machine matched. */
static struct machine_facts machine(const char *host, const char *gpu, const char *cpu)
{
    static struct gpu_facts g;
    struct machine_facts m = {.n_cpu_features = 0};
    snprintf(m.hostname, sizeof m.hostname, "%s", host ? host : "");
    snprintf(m.cpu_model, sizeof m.cpu_model, "%s", cpu ? cpu : "");
    if (gpu) {
        g = gpu_facts_unknown(0);
        g.usable = true;
        snprintf(g.name, sizeof g.name, "%s", gpu);
        m.sources.gpus = &g;
        m.sources.n_gpus = 1;
    }
    return m;
}

static void test_price_match(void **state)
{
    (void)state;
    struct price_spec s;
    char err[512];
    assert_int_equal(load(&s, good_file, err, sizeof err), 0);
    struct price_match m;

    /* The longest substring wins: the 80GB entry over "NVIDIA H100" (case-insensitive). */
    struct machine_facts env = machine("gpu-7", "nvidia h100 80gb hbm3 sxm", "Intel Xeon");
    price_match(&s, &env, &m);
    assert_true(m.priced);
    assert_true(m.per_hour == 4.0);
    assert_string_equal(m.currency, "EUR");
    assert_string_equal(m.rule, "substring");
    assert_string_equal(m.entry, "NVIDIA H100 80GB HBM3");
    assert_string_equal(m.field, "gpus[0].name");
    assert_string_equal(m.source, "--price-file");
    price_match_free(&m);

    /* An exact name beats a longer substring elsewhere. */
    env = machine("build-box", "NVIDIA H100 80GB HBM3 SXM", NULL);
    price_match(&s, &env, &m);
    assert_string_equal(m.rule, "exact");
    assert_string_equal(m.entry, "build-box");
    assert_string_equal(m.field, "hostname");
    assert_true(m.per_hour == 1.25);
    price_match_free(&m);

    /* The CPU model. */
    env = machine("vm", NULL, "AMD EPYC 7763");
    price_match(&s, &env, &m);
    assert_string_equal(m.entry, "AMD EPYC");
    assert_string_equal(m.field, "cpu.model");
    price_match_free(&m);

    /* Nothing: the default; no default: unpriced. */
    env = machine("laptop", NULL, NULL);
    price_match(&s, &env, &m);
    assert_true(m.priced);
    assert_string_equal(m.rule, "default");
    assert_string_equal(m.entry, "default");
    assert_true(m.per_hour == 0.10);
    price_match_free(&m);
    price_spec_free(&s);
    assert_int_equal(load(&s, "box: 1\n", err, sizeof err), 0);
    price_match(&s, &env, &m);
    assert_false(m.priced);
    assert_null(m.entry);
    price_match_free(&m);
    price_match(&s, NULL, &m); /* no environment at all */
    assert_false(m.priced);
    price_match_free(&m);
    price_spec_free(&s);

    /* --price: that price, whatever the machine. */
    assert_int_equal(price_spec_from_price(&s, "2 GBP", err, sizeof err), 0);
    price_match(&s, NULL, &m);
    assert_true(m.priced);
    assert_true(m.per_hour == 2);
    assert_string_equal(m.currency, "GBP");
    assert_string_equal(m.source, "--price");
    assert_null(m.file);
    price_match_free(&m);
    price_spec_free(&s);
}

/* A summary of 3 runs, 10 s median wall (9..12 s), a stage "train" of 8 s, a count counter of
 * 1000 images/s and time_to_target_s with a median of 36 s. */
static void fill_summary(struct summary *s, struct stage_summary *st, struct counter_summary *c)
{
    memset(s, 0, sizeof *s);
    s->valid = true;
    s->n_used = 3;
    s->wall = (struct stats_summary){.n = 3, .median = 10e9, .ci_low = 9e9, .ci_high = 12e9};
    memset(st, 0, sizeof *st);
    st->name = "train";
    st->n = 3;
    st->active.median = 8e9;
    s->stages = st;
    s->n_stages = 1;
    memset(c, 0, 2 * sizeof *c);
    c[0].name = "train_images";
    c[0].n = 3;
    c[0].count = true;
    c[0].rate_median = 1000;
    c[1].name = "time_to_target_s";
    c[1].n = 3;
    c[1].last = (struct stats_summary){.n = 3, .median = 36, .ci_low = 30, .ci_high = 40};
    s->counters = c;
    s->n_counters = 2;
}

static void test_cost_json(void **state)
{
    (void)state;
    struct summary s;
    struct stage_summary st;
    struct counter_summary c[2];
    fill_summary(&s, &st, c);
    struct price_match m = {.priced = true, .per_hour = 3.6, .currency = "USD",
                            .source = "--price"};
    json_t *j = cost_json(&s, &m);
    assert_non_null(j);
    const json_t *run = json_object_get(j, "run");
    assert_true(fabs(jsonx_num(run, "median") - 0.01) < 1e-12);  /* 10 s at 3.6/h */
    assert_true(fabs(jsonx_num(run, "ci_low") - 0.009) < 1e-12);
    assert_true(fabs(jsonx_num(run, "ci_high") - 0.012) < 1e-12);
    assert_string_equal(jsonx_str(j, "currency"), "USD");
    assert_string_equal(jsonx_str(j, "source"), "--price");
    assert_true(json_is_null(json_object_get(j, "price_file")));
    const json_t *stage = json_array_get(json_object_get(j, "stages"), 0);
    assert_string_equal(jsonx_str(stage, "name"), "train");
    assert_true(fabs(jsonx_num(stage, "median") - 0.008) < 1e-12);
    /* 1000 images/s at 0.001 a second: 1e-6 an image, 1 per 1M. */
    const json_t *units = json_object_get(j, "per_unit");
    assert_int_equal(json_array_size(units), 1); /* not time_to_target_s: not a count */
    const json_t *u = json_array_get(units, 0);
    assert_string_equal(jsonx_str(u, "counter"), "train_images");
    assert_true(jsonx_num(u, "per") == 1e6);
    assert_true(fabs(jsonx_num(u, "median") - 1.0) < 1e-9);
    assert_string_equal(jsonx_str(u, "description"), "USD per 1M train_images");
    const json_t *t = json_array_get(json_object_get(j, "to_target"), 0);
    assert_string_equal(jsonx_str(t, "counter"), "time_to_target_s");
    assert_true(fabs(jsonx_num(t, "median") - 0.036) < 1e-12);
    assert_true(fabs(jsonx_num(t, "ci_high") - 0.04) < 1e-12);
    json_decref(j);

    /* No valid run: the run's cost is null, not 0. */
    s.valid = false;
    j = cost_json(&s, &m);
    assert_true(json_is_null(json_object_get(json_object_get(j, "run"), "median")));
    json_decref(j);
}

/* A minimal result: one ok run of wall_ns, priced at per_hour in currency (or unpriced). */
static json_t *result(const char *id, double wall_ns, double per_hour, const char *currency,
                      double per_1m_images)
{
    json_t *r = json_pack(
        "{s:s, s:s, s:[{s:i, s:b, s:s, s:f}], s:{s:{s:f, s:i}, s:[{s:s, s:i, s:{s:f}}]}}",
        "schema", "mlbench.result/1", "id", id, "runs", "index", 0, "warmup", 0, "status", "ok",
        "wall_ns", wall_ns, "summary", "wall_ns", "median", wall_ns, "n", 1, "stages", "name",
        "total", "depth", 0, "active_ns", "median", wall_ns);
    if (per_hour > 0)
        json_object_set_new(r, "cost", json_pack(
            "{s:f, s:s, s:{s:f}, s:[{s:s, s:f, s:f}]}", "price_per_hour", per_hour, "currency",
            currency, "run", "median", wall_ns * 1e-9 * per_hour / 3600, "per_unit", "counter",
            "train_images", "per", 1e6, "median", per_1m_images));
    return r;
}

static void test_compare_cost(void **state)
{
    (void)state;
    /* The candidate is 3x faster on a machine 8x the price. */
    json_t *r[2] = {result("a", 3e9, 1.0, "USD", 2.0), result("b", 1e9, 8.0, "USD", 5.0)};
    json_t *doc = compare_results(r, NULL, 2, NULL);
    assert_non_null(doc);
    const json_t *cost = json_object_get(json_array_get(json_object_get(doc, "candidates"), 0),
                                         "cost");
    assert_true(json_is_object(cost));
    assert_true(fabs(jsonx_num(cost, "time_ratio") - 1.0 / 3) < 1e-9);
    assert_true(fabs(jsonx_num(cost, "cost_ratio") - 8.0 / 3) < 1e-9);
    assert_true(json_is_true(json_object_get(cost, "same_currency")));
    assert_true(jsonx_num(json_object_get(cost, "baseline"), "price_per_hour") == 1.0);
    assert_true(jsonx_num(json_object_get(cost, "candidate"), "price_per_hour") == 8.0);
    const json_t *u = json_array_get(json_object_get(cost, "per_unit"), 0);
    assert_string_equal(jsonx_str(u, "counter"), "train_images");
    assert_true(fabs(jsonx_num(u, "ratio") - 2.5) < 1e-9);
    json_decref(doc);
    json_decref(r[1]);

    /* Different currencies: both costs, no cost ratio. */
    r[1] = result("b", 1e9, 8.0, "EUR", 5.0);
    doc = compare_results(r, NULL, 2, NULL);
    cost = json_object_get(json_array_get(json_object_get(doc, "candidates"), 0), "cost");
    assert_false(json_is_true(json_object_get(cost, "same_currency")));
    assert_true(json_is_null(json_object_get(cost, "cost_ratio")));
    assert_true(isfinite(jsonx_num(cost, "time_ratio")));
    json_decref(doc);
    json_decref(r[1]);

    /* One side unpriced: null. */
    r[1] = result("b", 1e9, 0, NULL, 0);
    doc = compare_results(r, NULL, 2, NULL);
    cost = json_object_get(json_array_get(json_object_get(doc, "candidates"), 0), "cost");
    assert_true(json_is_null(cost));
    json_decref(doc);
    json_decref(r[1]);
    json_decref(r[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cost_of_seconds), cmocka_unit_test(test_unit_scale),
        cmocka_unit_test(test_to_target_names), cmocka_unit_test(test_price_parse),
        cmocka_unit_test(test_currency),        cmocka_unit_test(test_price_file),
        cmocka_unit_test(test_price_match),     cmocka_unit_test(test_cost_json),
        cmocka_unit_test(test_compare_cost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
