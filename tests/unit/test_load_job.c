/* Unit tests of `mlbench load`'s job (src/session/load_job.c, load_runs.c) on their pure parts:
 * the command line the result records (a credential's header value redacted, whatever way the
 * header was given; everything else kept), the bound a peak-search run met, which run counts
 * for the verdict, and the "load" section built from the runs as doc/load.h reads it back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "session/load_job.h"
#include "session/load_runs.h"
#include "doc/load.h"

/* The words load_job_command records for argv (argv[0] the verb), as a NULL-terminated list
 * compared with want. */
static void check_command(char **argv, int argc, const char *const *want)
{
    json_t *a = load_job_command(argc, argv);
    assert_true(json_is_array(a));
    size_t n = 0;
    while (want[n])
        n++;
    assert_int_equal(json_array_size(a), n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(json_string_value(json_array_get(a, i)), want[i]);
    json_decref(a);
}

static void test_command_redacts_credentials(void **state)
{
    (void)state;
    char *argv[] = {"load", "-H", "Authorization: Bearer abc", "--header", "Cookie: id=1",
                    "--header=X-Api-Key: k1", "-HX-Auth-Token:t2", "-H", "x-secret-thing: s",
                    "-H", "Proxy-Authorization: Basic Zm9v", "http://127.0.0.1:8000/"};
    const char *const want[] = {"mlbench", "load", "-H", "Authorization: REDACTED", "--header",
                                "Cookie: REDACTED", "--header=X-Api-Key: REDACTED",
                                "-HX-Auth-Token: REDACTED", "-H", "x-secret-thing: REDACTED", "-H",
                                "Proxy-Authorization: REDACTED", "http://127.0.0.1:8000/", NULL};
    check_command(argv, (int)(sizeof argv / sizeof *argv), want);
}

static void test_command_keeps_the_rest(void **state)
{
    (void)state;
    /* a header that is no credential, a header without a colon, a credential-looking word that
     * is not a header's value, a word that is not valid UTF-8, and -H last */
    char *argv[] = {"load", "-H", "X-Trace: 7", "-H", "Authorization", "-l",
                    "Authorization: Bearer abc", "--body-file", "key.json", "bad\xff", "-H"};
    const char *const want[] = {"mlbench", "load", "-H", "X-Trace: 7", "-H", "Authorization",
                                "-l", "Authorization: Bearer abc", "--body-file", "key.json",
                                "bad?", "-H", NULL};
    check_command(argv, (int)(sizeof argv / sizeof *argv), want);
}

/* An entry of r with role, judged valid or not, whose percentile is p_ns against bound_ns. */
static struct load_entry *entry(struct load_runs *r, const char *role, bool valid, int64_t p_ns,
                                int64_t bound_ns)
{
    struct load_rules rules = {.min_duration_s = 1, .min_queries = 1, .percentile = 99,
                               .latency_bound_ns = bound_ns, .confidence = 0.99};
    struct load_entry *e = load_runs_add(r, role, &rules);
    e->run.scenario = LOAD_SERVER;
    e->run.target_qps = 10;
    e->run.issued = e->run.completed = 100;
    e->verdict.valid = valid;
    e->verdict.percentile_ns = p_ns;
    return e;
}

static void test_entry_met(void **state)
{
    (void)state;
    struct load_runs r = {0};
    struct load_entry *e = entry(&r, "probe", false, 15000000, 15000000);
    assert_true(load_entry_met(e));          /* at the bound: met, valid or not */
    e->verdict.percentile_ns = 15000001;
    assert_false(load_entry_met(e));         /* 1 ns above */
    e->verdict.percentile_ns = 1000;
    e->run.failed = 1;
    assert_false(load_entry_met(e));         /* a failed query */
    e->run.failed = 0;
    e->run.completed = 0;
    assert_false(load_entry_met(e));         /* nothing completed */
    load_runs_free(&r);
    assert_int_equal(r.n, 0);
    assert_null(r.v);
}

static void test_runs_valid(void **state)
{
    (void)state;
    struct load_runs r = {0};
    assert_false(load_runs_valid(&r));       /* nothing ran */
    entry(&r, "probe", true, 1, 10);
    assert_false(load_runs_valid(&r));       /* a probe never counts */
    entry(&r, "confirm", true, 1, 10);
    entry(&r, "confirm", false, 1, 10);
    entry(&r, "probe", true, 1, 10);
    assert_false(load_runs_valid(&r));       /* the last confirmation counts, not the first */
    r.v[2].verdict.valid = true;
    r.peak_searched = true;
    assert_false(load_runs_valid(&r));       /* a search that found no peak */
    r.peak_qps = 40;
    assert_true(load_runs_valid(&r));
    load_runs_free(&r);

    entry(&r, "run", true, 1, 0);
    assert_true(load_runs_valid(&r));        /* a plain run: no peak asked */
    load_runs_free(&r);
}

/* The section of a peak search, read back: the roles, met_bound on each run, the run that
 * counts, the search's figures and the bound verdict without a server sampled. */
static void test_section_read_back(void **state)
{
    (void)state;
    struct load_runs r = {0};
    entry(&r, "probe", false, 5000000, 10000000);
    entry(&r, "probe", false, 20000000, 10000000);
    entry(&r, "confirm", true, 8000000, 10000000);
    entry(&r, "probe", false, 9000000, 10000000);
    r.peak_searched = true;
    r.peak_qps = 40;
    struct load_config cfg = {.scenario = LOAD_SERVER, .connections = 64, .threads = 2,
                              .request_timeout_s = 10, .seed = 7, .n_requests = 3};
    json_t *section = load_runs_section(&r, &cfg, "127.0.0.1:8000", "http://127.0.0.1:8000/x",
                                        NULL, NULL);
    json_t *result = json_pack("{s:o}", "load", section);
    struct doc_load *l = doc_load_read_result(result);
    assert_true(l->present);
    assert_string_equal(l->schema, "mlbench.load/1");
    assert_string_equal(l->url, "http://127.0.0.1:8000/x");
    assert_string_equal(l->scenario, "server");
    assert_null(l->server_cmd);
    assert_int_equal(l->connections, 64);
    assert_int_equal(l->bodies, 3);
    assert_true(l->seed == 7);
    assert_true(isnan(l->samples_per_query));
    assert_int_equal(l->n_runs, 4);
    const int met[] = {1, 0, 1, 1};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(l->runs[i].met_bound, met[i]);
        assert_false(l->runs[i].server.present); /* no repetition: nothing sampled */
        assert_int_equal(doc_load_counts(l, i), i == 2);
    }
    assert_string_equal(l->runs[3].role, "probe");
    assert_true(l->find_peak);
    assert_true(l->peak_qps == 40);
    assert_true(fabs(l->peak_latency_bound_s - 0.01) < 1e-12);
    assert_int_equal(l->peak_probes, 3);
    assert_int_equal(l->peak_confirmations, 1);
    assert_true(l->valid);
    assert_string_equal(l->bound_kind, "unknown");
    doc_load_free(l);
    json_decref(result);

    /* a plain run: no met_bound, no find_peak; a failed query makes the bound "errors" */
    load_runs_free(&r);
    struct load_entry *e = entry(&r, "run", true, 1, 0);
    e->run.failed = 2;
    cfg.scenario = LOAD_OFFLINE;
    section = load_runs_section(&r, &cfg, "a:1", "http://a:1/", "serve --port 1", NULL);
    result = json_pack("{s:o}", "load", section);
    l = doc_load_read_result(result);
    assert_int_equal(l->n_runs, 1);
    assert_int_equal(l->runs[0].met_bound, -1);
    assert_true(doc_load_counts(l, 0));
    assert_false(l->find_peak);
    assert_string_equal(l->server_cmd, "serve --port 1");
    assert_true(isnan(l->seed));
    assert_string_equal(l->bound_kind, "errors");
    assert_non_null(strstr(l->bound_evidence, "2 of 100 queries failed"));
    doc_load_free(l);
    json_decref(result);
    load_runs_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_command_redacts_credentials),
        cmocka_unit_test(test_command_keeps_the_rest),
        cmocka_unit_test(test_entry_met),
        cmocka_unit_test(test_runs_valid),
        cmocka_unit_test(test_section_read_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
