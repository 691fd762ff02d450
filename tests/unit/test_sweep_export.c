/* Unit tests of how a sweep document is shown (src/export/sweep*.c, html_sweep.c) on the
 * hand-written fixtures of tests/integration/data/sweep/: the terminal table marks the winner,
 * lists failed and out-of-memory points with why, the constraints not met, every warning and
 * the find-max answer, keeps to 80 columns and lets no control character through; the
 * Markdown, CSV and HTML exporters render the sweep; hostile documents (wrong types, control
 * characters, huge strings, 100 000 points) neither crash nor run away. SWEEP_DATA (set by
 * CMake) is the fixtures' folder; SWEEP_SHOW=1 prints what each test renders, SWEEP_TEST=NAME runs one test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/export.h"
#include "export/sweep.h"
#include "util/term.h"

#ifndef SWEEP_DATA
#define SWEEP_DATA "tests/integration/data/sweep"
#endif

static json_t *fixture(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.json", SWEEP_DATA, name);
    json_error_t e;
    json_t *j = json_load_file(path, 0, &e);
    if (!j)
        fail_msg("%s: %s", path, e.text);
    return j;
}

/* The terminal view of doc as a new string. */
static char *terminal(const json_t *doc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(export_sweep_print(f, doc, "sweeps/x.json"), 0);
    fclose(f);
    if (getenv("SWEEP_SHOW"))
        fputs(buf, stdout);
    return buf;
}

/* What an exporter writes of the sweep alone (no point results). */
static char *render(const char *format, json_t *doc, const char *table, int expect)
{
    char *buf = NULL, err[512] = "";
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    struct export_request req = {.results = NULL, .paths = NULL, .n = 0,
                                 .comparison = NULL, .run = -1, .table = table, .sweep = doc};
    int rc = export_write(export_find(format), f, &req, err, sizeof err);
    fclose(f);
    if (rc != expect)
        fail_msg("%s: %d (%s), not %d", format, rc, err, expect);
    if (getenv("SWEEP_SHOW"))
        fputs(buf, stdout);
    return buf;
}

static size_t count(const char *s, const char *needle)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* No control character but newline, and no line wider than cols terminal columns. */
static void assert_clean(const char *text, int cols)
{
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p == '\n' || (p[0] == '\r' && p[1] == '\n')) /* CSV's line ends */
            continue;
        if (*p < 0x20 || *p == 0x7f)
            fail_msg("control character 0x%02x at offset %td", *p, (const char *)p - text);
        if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
            fail_msg("C1 control at offset %td", (const char *)p - text);
        if (p[0] == 0xe2 && p[1] == 0x80 && p[2] >= 0xaa && p[2] <= 0xae)
            fail_msg("bidi control at offset %td", (const char *)p - text);
    }
    if (cols <= 0)
        return;
    char *copy = strdup(text), *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        if (term_cols(line) > cols && strncmp(line, "command:", 8))
            fail_msg("line wider than %d columns: '%s'", cols, line);
    free(copy);
}

/* The line of the table holding name. */
static const char *row_of(const char *text, const char *name)
{
    const char *p = strstr(text, name);
    assert_non_null(p);
    while (p > text && p[-1] != '\n')
        p--;
    return p;
}

static void test_matrix_terminal(void **state)
{
    (void)state;
    json_t *doc = fixture("matrix2x2");
    char *out = terminal(doc);
    assert_clean(out, 80);
    /* the winner marked in its row and said under the table */
    assert_true(!strncmp(row_of(out, "batch=64,lr=0.1 "), "\u2605", 3));
    assert_true(strncmp(row_of(out, "batch=32,lr=0.1 "), "\u2605", 3) != 0);
    assert_non_null(strstr(out, "winner: batch=64,lr=0.1: the lowest total median (1.20 s)\n"));
    assert_non_null(strstr(out, "total median *"));
    assert_non_null(strstr(out, "* the objective: min:total"));
    assert_non_null(strstr(out, "1.140 s .. 1.260 s"));
    assert_non_null(strstr(out, "train_images/s"));
    assert_non_null(strstr(out, "train: cpu-bound"));
    /* each code once, with the points it touches and what it says (issue 35: a line of codes
     * per point came first) */
    assert_null(strstr(out, "batch=32,lr=0.1: high_cv\n"));
    assert_non_null(strstr(out, "high_cv (batch=32,lr=0.1): CV 12 % over 5 runs"));
    assert_non_null(strstr(out, "sweep: sweeps/x.json"));
    free(out);
    json_decref(doc);
}

static void test_commands_terminal(void **state)
{
    (void)state;
    json_t *doc = fixture("commands");
    char *out = terminal(doc);
    assert_clean(out, 80);
    assert_non_null(strstr(row_of(out, "python b.py "), "failed"));
    assert_non_null(strstr(row_of(out, "python c.py "), "out of memory"));
    assert_non_null(strstr(out, "points that did not run ok:"));
    assert_non_null(strstr(out, "python b.py: failed: exit status 1"));
    assert_non_null(strstr(out, "python c.py: out of memory: CUDA out of memory"));
    assert_non_null(strstr(out, "winner: python a.py"));
    free(out);
    json_decref(doc);
}

static void test_find_max_terminal(void **state)
{
    (void)state;
    json_t *doc = fixture("findmax");
    char *out = terminal(doc);
    assert_clean(out, 0);
    assert_non_null(strstr(out, "find-max probes"));
    assert_non_null(strstr(out, "The largest batch that fits: 512 (the first failure:"));
    assert_non_null(strstr(out, "\u2248 535"));
    assert_clean(out, 80);
    assert_non_null(strstr(out, "point *"));
    assert_null(strstr(out, "objective *"));
    assert_non_null(strstr(out, "Memory budget: 8.000 GiB"));
    assert_non_null(strstr(out, "r\u00b2 = 0.999"));
    assert_non_null(strstr(out, "meets the budget at batch"));
    /* the fastest probe is not the largest fit */
    assert_non_null(strstr(out, "The highest throughput is at batch = 256"));
    assert_non_null(strstr(row_of(out, "  1024 "), "no: peak memory"));
    assert_non_null(strstr(out, "batch=1024: out of memory: peak memory 15.3 GiB > budget 8 GiB"));
    free(out);
    json_decref(doc);
}

static void test_priced_and_constraints_terminal(void **state)
{
    (void)state;
    json_t *doc = fixture("priced");
    char *out = terminal(doc);
    assert_clean(out, 80);
    assert_non_null(strstr(out, "cost per run *"));
    assert_non_null(strstr(out, "0.0078 USD"));
    assert_non_null(strstr(out, "GPU memory"));
    assert_non_null(strstr(out, "price 3.5 USD per hour"));
    free(out);
    json_decref(doc);

    doc = fixture("constraints");
    out = terminal(doc);
    assert_clean(out, 80);
    assert_true(!strncmp(row_of(out, "batch=128 "), "\u2717", 3));
    assert_true(!strncmp(row_of(out, "batch=64 "), "\u2605", 3));
    assert_non_null(strstr(out, "constraints not met:"));
    assert_non_null(strstr(out, "\u2717 batch=128: counter:accuracy 0.85 < 0.9"));
    assert_non_null(strstr(out, "accuracy"));
    free(out);
    /* no point meets them: no winner, and why */
    json_object_set_new(doc, "winner", json_null());
    json_t *points = json_object_get(doc, "points");
    for (size_t i = 0; i < json_array_size(points); i++)
        json_object_set_new(json_array_get(points, i), "constraints_met", json_false());
    out = terminal(doc);
    assert_non_null(strstr(out, "no winner: no point that ran meets the constraints"));
    assert_int_equal(count(out, "\u2605"), 0);
    free(out);
    json_decref(doc);
}

static void test_long_names_cut(void **state)
{
    (void)state;
    json_t *doc = fixture("matrix2x2");
    json_t *p = json_array_get(json_object_get(doc, "points"), 1);
    char name[400];
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    memcpy(name, "\xe6\x97\xa5\xe6\x9c\xac", 6); /* wide characters first */
    json_object_set_new(p, "name", json_string(name));
    char *out = terminal(doc);
    assert_clean(out, 80);
    assert_non_null(strstr(out, "\u2026"));
    free(out);
    json_decref(doc);
}

static void test_hostile(void **state)
{
    (void)state;
    json_t *doc = fixture("hostile");
    /* a huge name and detail, beside the control characters of the file */
    size_t big = 1 << 20;
    char *huge = malloc(big + 1);
    memset(huge, 'h', big);
    huge[big] = '\0';
    json_t *p = json_array_get(json_object_get(doc, "points"), 0);
    json_object_set_new(p, "status_detail", json_string(huge));
    json_object_set_new(p, "status", json_string("timeout"));
    free(huge);
    char *out = terminal(doc);
    assert_clean(out, 0);
    assert_null(strstr(out, "\x1b["));
    assert_true(strlen(out) < 2 * big + 100000);
    free(out);
    static const char *const formats[] = {"md", "html", "csv"};
    for (size_t i = 0; i < 3; i++) {
        char *r = render(formats[i], doc, NULL, EXPORT_OK);
        assert_clean(r, 0);
        free(r);
    }
    json_decref(doc);
    /* not even an object */
    json_t *junk = json_string("sweep");
    char *j = terminal(junk);
    free(j);
    j = render("html", junk, NULL, EXPORT_OK);
    free(j);
    json_decref(junk);
}

/* 20 000 points: enough for a quadratic cost to show (4e8 steps), few enough for the sanitized
 * build (ASan makes the allocations here 20 to 50 times slower). */
#define MANY_POINTS 20000

static void test_many_points(void **state)
{
    (void)state;
    json_t *doc = fixture("matrix2x2");
    json_t *points = json_array();
    for (int i = 0; i < MANY_POINTS; i++) {
        char v[32], name[48];
        snprintf(v, sizeof v, "%d", i + 1);
        snprintf(name, sizeof name, "batch=%d", i + 1);
        json_array_append_new(points, json_pack(
            "{s:i, s:s, s:{s:s}, s:s, s:{s:{s:f}, s:f}, s:[{s:s, s:s}]}", "index", i,
            "name", name, "parameters", "batch", v, "status", i % 10 ? "ok" : "failed",
            "figures", "total", "median_ns", 1e9 + 1e4 * (i % 977),
            "peak_memory_bytes", 1e8 + 1e3 * ((i * 7919) % 1000),
            "warnings", "code", "high_cv", "message", "noisy"));
    }
    json_object_set_new(doc, "points", points);
    char *out = terminal(doc);
    assert_true(count(out, "\n") > MANY_POINTS);
    free(out);
    char *html = render("html", doc, NULL, EXPORT_OK);
    /* charts bounded: the first 1000 points */
    assert_non_null(strstr(html, "Only the first 1000 of 20000 points are drawn"));
    assert_true(count(html, "<circle") < 20000);
    free(html);
    char *csv = render("csv", doc, NULL, EXPORT_OK);
    assert_int_equal(count(csv, "\r\n"), MANY_POINTS + 1);
    free(csv);
    json_decref(doc);
}

static void test_markdown(void **state)
{
    (void)state;
    json_t *doc = fixture("commands");
    char *md = render("md", doc, NULL, EXPORT_OK);
    assert_non_null(strstr(md, "# mlbench sweep: 20261202T050102-aa0002"));
    assert_non_null(strstr(md, "Winner: python a.py"));
    assert_non_null(strstr(md, "| \u2605 | python a.py | ok |"));
    assert_non_null(strstr(md, "| python c.py | out of memory: CUDA out of memory"));
    free(md);
    json_decref(doc);
    doc = fixture("findmax");
    md = render("md", doc, NULL, EXPORT_OK);
    assert_non_null(strstr(md, "### The largest value that fits"));
    assert_non_null(strstr(md, "| batch | fits | peak memory | throughput | point |"));
    assert_non_null(strstr(md, "The largest batch that fits: 512"));
    free(md);
    json_decref(doc);
}

static void test_csv(void **state)
{
    (void)state;
    json_t *doc = fixture("matrix2x2");
    char *csv = render("csv", doc, NULL, EXPORT_OK);
    assert_true(!strncmp(csv, "sweep,point,name,batch,lr,status,status_detail,result_id,", 57));
    assert_non_null(strstr(csv, ",train_images_per_s\r\n"));
    assert_non_null(strstr(csv, "20261202T050102-aa0001,2,\"batch=64,lr=0.1\",64,0.1,ok,,"));
    assert_non_null(strstr(csv, ",1200000000,1140000000,1260000000,5,train,cpu-bound,0.8,"));
    assert_int_equal(count(csv, ",true,,false,"), 3);
    assert_int_equal(count(csv, ",true,,true,"), 1); /* the winner */
    assert_int_equal(count(csv, "\r\n"), 5);
    free(csv);
    /* the other tables need results; sweep without a sweep is refused */
    struct export_request req = {.results = NULL, .paths = NULL, .n = 0,
                                 .comparison = NULL, .run = -1, .table = "sweep", .sweep = NULL};
    char *buf = NULL, err[256];
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(export_write(&export_csv, f, &req, err, sizeof err), EXPORT_EREQUEST);
    fclose(f);
    free(buf);
    assert_non_null(strstr(err, "--table sweep needs a sweep"));
    json_decref(doc);
}

/* The circles of class front, by data-point, as a bit set. */
static unsigned front_of(const char *html)
{
    unsigned set = 0;
    for (const char *p = html; (p = strstr(p, "<circle class=\"front\" data-point=\"")); p++)
        set |= 1u << atoi(p + strlen("<circle class=\"front\" data-point=\""));
    return set;
}

static void test_html_charts(void **state)
{
    (void)state;
    json_t *doc = fixture("matrix2x2");
    char *html = render("html", doc, NULL, EXPORT_OK);
    /* against batch and against lr: total, train_images, peak memory; two lines each */
    assert_int_equal(count(html, "<figure class=\"sweep-chart\">"), 6);
    assert_int_equal(count(html, "<polyline class=\"series\""), 12);
    assert_non_null(strstr(html, "total median per run against batch"));
    assert_non_null(strstr(html, "batch (log2 scale)"));
    assert_non_null(strstr(html, "class=\"whisker\""));
    assert_non_null(strstr(html, "lr=0.1</span>"));
    /* time against memory: batch=64,lr=0.1 (fastest) and batch=32,lr=0.1 (least memory) */
    assert_int_equal(count(html, "<figure class=\"pareto\">"), 1);
    assert_int_equal(front_of(html), (1u << 2) | (1u << 0));
    free(html);
    json_decref(doc);

    doc = fixture("priced");
    html = render("html", doc, NULL, EXPORT_OK);
    assert_non_null(strstr(html, "Pareto front: total median against cost per run"));
    const char *cost = strstr(html, "Pareto front: total median against cost per run");
    assert_int_equal(front_of(cost) & 0xf, (1u << 0) | (1u << 2) | (1u << 3));
    assert_non_null(strstr(html, "cost per run (USD) against gpus"));
    free(html);
    json_decref(doc);

    doc = fixture("findmax");
    html = render("html", doc, NULL, EXPORT_OK);
    assert_int_equal(count(html, "<figure class=\"findmax-memory\">"), 1);
    assert_int_equal(count(html, "<figure class=\"findmax-throughput\">"), 1);
    assert_int_equal(count(html, "<circle class=\"probe\""), 12);
    assert_non_null(strstr(html, "class=\"budget\""));
    assert_non_null(strstr(html, "class=\"fit\""));
    assert_non_null(strstr(html, "predicted 535"));
    free(html);
    json_decref(doc);

    doc = fixture("commands");
    html = render("html", doc, NULL, EXPORT_OK);
    assert_int_equal(count(html, "<figure class=\"sweep-chart\">"), 0); /* no parameter */
    assert_non_null(strstr(html, "<title>mlbench sweep: 20261202T050102-aa0002</title>"));
    free(html);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matrix_terminal),
        cmocka_unit_test(test_commands_terminal),
        cmocka_unit_test(test_find_max_terminal),
        cmocka_unit_test(test_priced_and_constraints_terminal),
        cmocka_unit_test(test_long_names_cut),
        cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_many_points),
        cmocka_unit_test(test_markdown),
        cmocka_unit_test(test_csv),
        cmocka_unit_test(test_html_charts),
    };
    if (getenv("SWEEP_TEST")) /* one test by name, to look at it */
        cmocka_set_test_filter(getenv("SWEEP_TEST"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
