/* Unit tests of the result reader (src/doc/result.h): a document read field by field, what a
 * missing, null or wrong member reads as, and the answers derived once (the representative
 * run, a stage by name and its share, the stage figures). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "doc/load.h"
#include "doc/result.h"

static json_t *parse(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (!j)
        fail_msg("bad test JSON at %d:%d: %s", e.line, e.column, e.text);
    return j;
}

static const char good[] =
    "{\"schema\": \"mlbench.result/1\", \"id\": \"20260101T000000-abcdef\", \"label\": \"lbl\","
    " \"command\": {\"argv\": [\"./train\", 7, \"--fast\"], \"shell\": true},"
    " \"config\": {\"runs\": null, \"warmup\": 1, \"timeout_s\": 2.5,"
    "              \"timings\": {\"name\": \"sort\"}},"
    " \"environment\": {\"hostname\": \"h\", \"cpus_online\": 8},"
    " \"runs\": [{\"warmup\": true, \"status\": \"ok\", \"wall_ns\": 1},"
    "            {\"status\": \"ok\", \"wall_ns\": 30, \"exit_code\": 0},"
    "            {\"status\": \"failed\", \"wall_ns\": 5, \"exit_code\": 3},"
    "            {\"status\": \"ok\", \"wall_ns\": 10,"
    "             \"spans\": [{\"name\": \"a\", \"pid\": 1, \"tid\": 2, \"start_ns\": 0,"
    "                          \"end_ns\": 4, \"closed\": false}]},"
    "            {\"status\": \"ok\", \"wall_ns\": 20}],"
    " \"summary\": {\"runs_measured\": 4, \"runs_ok\": 3,"
    "   \"wall_ns\": {\"n\": 3, \"median\": 20, \"ci_low\": 10, \"ci_high\": 30},"
    "   \"stages\": [{\"name\": \"load\", \"depth\": 0, \"share\": 0.25,"
    "                 \"active_ns\": {\"median\": 5},"
    "                 \"resources\": [{\"metric\": \"process_cpu_seconds_total\", \"mean\": 1.5},"
    "                                 {\"metric\": \"gpu_utilization_ratio\","
    "                                  \"labels\": \"gpu=\\\"0\\\"\", \"mean\": 0.5},"
    "                                 {\"metric\": \"gpu_utilization_ratio\","
    "                                  \"labels\": \"gpu=\\\"1\\\"\", \"mean\": 0.9},"
    "                                 {\"metric\": \"process_resident_bytes\", \"peak\": 100,"
    "                                  \"n\": 7}]},"
    "                {\"name\": \"train\", \"depth\": 2000, \"share\": 0.75}],"
    "   \"counters\": [{\"name\": \"images\", \"count\": true, \"last\": {\"median\": 64}}]},"
    " \"analysis\": {\"bottleneck\": \"train\", \"gpus\": [0],"
    "   \"findings\": [{\"rule\": \"r\", \"stage\": \"train\", \"saving_ns\": 12}]},"
    " \"warnings\": [{\"code\": \"high_cv\", \"message\": \"m\"}],"
    " \"load\": {\"scenarios\": [{\"role\": \"probe\"}, {\"role\": \"confirm\"},"
    "                            {\"role\": \"probe\"}], \"find_peak\": {\"peak_qps\": 40}}}";

static void test_fields(void **state)
{
    (void)state;
    json_t *j = parse(good);
    struct doc_result *r = doc_result_read(j);
    assert_string_equal(r->id, "20260101T000000-abcdef");
    assert_string_equal(doc_result_name(r), "lbl");
    assert_int_equal(r->n_argv, 3);
    assert_null(r->argv[1]); /* a word that is not a string */
    assert_true(r->shell);
    assert_int_equal(r->config.runs, -1); /* null: automatic */
    assert_int_equal(r->config.warmup, 1);
    assert_true(r->config.timeout_s == 2.5);
    assert_true(isnan(r->config.grace_s));
    assert_true(doc_result_recorded(r));
    assert_string_equal(r->config.timings_name, "sort");
    assert_true(r->cpus_online == 8);
    assert_int_equal(r->n_runs, 5);
    assert_true(r->runs[0].warmup);
    assert_false(r->runs[2].ok);
    assert_true(r->runs[2].exit_code == 3);
    assert_true(isnan(r->runs[4].exit_code));
    assert_true(r->summary.wall.present);
    assert_int_equal(r->summary.wall.n, 3);
    assert_true(isnan(r->summary.wall.mad));
    assert_int_equal(r->summary.n_stages, 2);
    assert_int_equal(r->summary.stages[1].depth, DOC_MAX_DEPTH);
    assert_true(r->summary.counters[0].count);
    assert_true(r->summary.counters[0].last.median == 64);
    assert_string_equal(r->analysis.bottleneck, "train");
    assert_true(r->analysis.findings[0].saving_ns == 12);
    assert_string_equal(r->warnings[0].code, "high_cv");
    struct doc_span sp;
    assert_int_equal(doc_run_n_spans(&r->runs[3]), 1);
    doc_run_span(&r->runs[3], 0, &sp);
    assert_string_equal(sp.name, "a");
    assert_false(sp.closed);
    assert_true(sp.end_ns == 4);
    doc_result_free(r);
    json_decref(j);
}

static void test_derived(void **state)
{
    (void)state;
    json_t *j = parse(good);
    struct doc_result *r = doc_result_read(j);
    /* measured ok runs 30, 10, 20 (the warm-up and the failed run left out): median 20 */
    assert_int_equal(doc_result_median_run(r), 4);
    assert_non_null(doc_result_stage(r, "train"));
    assert_null(doc_result_stage(r, "nope"));
    assert_true(doc_result_stage_share(r, "load") == 0.25);
    assert_true(doc_result_stage_share(r, "total") == 1);
    assert_true(isnan(doc_result_stage_share(r, "nope")));
    struct doc_figures f;
    doc_figures(&r->summary.stages[0].resources, r->analysis.gpus, &f);
    assert_true(f.cpu_cores == 1.5);
    assert_true(f.gpu_util == 0.5); /* only GPU 0 is in the analysis's GPUs */
    assert_true(f.rss_peak_bytes == 100);
    assert_int_equal(f.samples, 7);
    assert_true(isnan(f.gpu_power_watts));
    /* find-peak: the probes do not count, nor a confirmation followed by another run */
    struct doc_load *l = doc_load_read(r->load);
    assert_int_equal(l->n_runs, 3);
    assert_false(doc_load_counts(l, 0));
    assert_true(doc_load_counts(l, 1));
    assert_false(doc_load_counts(l, 2));
    assert_false(doc_load_counts(l, 3)); /* past the end */
    doc_load_free(l);
    doc_result_free(r);
    json_decref(j);
}

/* Anything in place of the document, or of any member, reads as absent and never crashes. */
static void test_hostile(void **state)
{
    (void)state;
    static const char *const docs[] = {
        "null", "[]", "7", "\"x\"", "{}",
        "{\"runs\": 5, \"summary\": [], \"analysis\": \"no\", \"warnings\": {}}",
        "{\"runs\": [7, null, {\"stages\": 1, \"spans\": {\"a\": 1}, \"counters\": [1]}],"
        " \"summary\": {\"stages\": [null, 3, {\"name\": 5, \"depth\": -4, \"active_ns\": 2,"
        "  \"resources\": \"r\"}], \"wall_ns\": [], \"runs_measured\": 1e300},"
        " \"analysis\": {\"verdicts\": [1], \"findings\": {}, \"gpus\": \"0\"},"
        " \"command\": {\"argv\": \"ls\"}, \"environment\": [1], \"cost\": 1, \"load\": []}",
    };
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        json_t *j = json_loads(docs[i], JSON_DECODE_ANY, NULL);
        assert_non_null(j);
        struct doc_result *r = doc_result_read(j);
        assert_string_equal(doc_result_name(r), "(no id)");
        (void)doc_result_median_run(r);
        assert_false(r->summary.wall.present);
        assert_int_equal(r->summary.runs_measured, 0);
        for (size_t s = 0; s < r->summary.n_stages; s++) {
            assert_in_range(r->summary.stages[s].depth, 0, DOC_MAX_DEPTH);
            assert_true(isnan(r->summary.stages[s].active.median));
        }
        for (size_t k = 0; k < r->n_runs; k++)
            for (size_t s = 0; s < doc_run_n_spans(&r->runs[k]); s++) {
                struct doc_span sp;
                doc_run_span(&r->runs[k], s, &sp);
            }
        struct doc_cost c;
        assert_false(doc_cost_read(r->cost, &c));
        assert_null(r->load);
        doc_result_free(r);
        json_decref(j);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fields),
        cmocka_unit_test(test_derived),
        cmocka_unit_test(test_hostile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
