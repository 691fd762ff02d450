/* Unit tests of the multi-rank figures: rank_summary_compute over runs (critical path, fastest,
 * median, skew, scores), the straggler and communication-bound rules, and the scaling section
 * of a comparison. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/analyze.h"
#include "analysis/compare.h"
#include "measure/event_log.h"
#include "measure/stages.h"
#include "result/rank_summary.h"
#include "result/result.h"
#include "result/summary.h"

#define MS 1000000LL

__attribute__((format(printf, 2, 3)))
static void ev(struct event_log *log, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    struct marker_token t;
    assert_null(marker_parse(buf, strlen(buf), &t));
    event_log_add(log, &t);
}

/* A run of 3 ranks: rank r spends ms[r] in "train" then 100 - ms[r] in "allreduce". */
static void make_run(struct repetition *rep, const int ms[3])
{
    memset(rep, 0, sizeof *rep);
    event_log_init(&rep->log);
    for (int r = 0; r < 3; r++) {
        int pid = 10 + r;
        ev(&rep->log, "M 0 %d %d mlbench.rank %d 3", pid, pid, r);
        ev(&rep->log, "M 0 %d %d mlbench.host %s", pid, pid, r == 2 ? "node-b" : "node-a");
        ev(&rep->log, "B 0 %d %d train", pid, pid);
        ev(&rep->log, "E %lld %d %d train", ms[r] * MS, pid, pid);
        ev(&rep->log, "B %lld %d %d allreduce", ms[r] * MS, pid, pid);
        ev(&rep->log, "E %lld %d %d allreduce", 100 * MS, pid, pid);
    }
    ev(&rep->log, "M 0 99 99 mlbench.host node-z"); /* no rank's: ignored */
    stages_aggregate(&rep->log, 0, 100 * MS, &rep->stages);
}

/* Three runs; rank 2 is the straggler in train in two of them, rank 0 in the third. */
static void test_rank_summary(void **state)
{
    (void)state;
    const int ms[3][3] = {{40, 42, 80}, {41, 40, 84}, {90, 40, 42}};
    struct repetition reps[3];
    const struct repetition *use[3];
    for (int k = 0; k < 3; k++) {
        make_run(&reps[k], ms[k]);
        use[k] = &reps[k];
    }
    struct stage_summary stages[2] = {{.name = "train"}, {.name = "allreduce"}};
    struct rank_summary rs;
    rank_summary_compute(&rs, use, 3, stages, 2);
    assert_int_equal(rs.n_ranks, 3);
    assert_int_equal(rs.world_size, 3);
    assert_string_equal(rs.hosts[0], "node-a");
    assert_string_equal(rs.hosts[1], "node-a");
    assert_string_equal(rs.hosts[2], "node-b");
    json_t *js = rank_summary_json(&rs);
    const json_t *hosts = json_object_get(js, "hosts");
    assert_int_equal(json_object_size(hosts), 2);
    assert_int_equal(json_array_size(json_object_get(hosts, "node-a")), 2);
    assert_int_equal(json_integer_value(json_array_get(json_object_get(hosts, "node-b"), 0)), 2);
    json_decref(js);
    assert_int_equal(rs.n_stages, 2);
    const struct rank_stage_summary *t = &rs.stages[0];
    assert_string_equal(t->name, "train");
    assert_int_equal(t->n_ranks, 3);
    /* per run: slowest 80, 84, 90 -> median 84; fastest 40, 40, 40; median rank 42, 41, 42 */
    assert_float_equal(t->critical_ns, 84 * MS, 1);
    assert_float_equal(t->min_ns, 40 * MS, 1);
    assert_float_equal(t->median_ns, 42 * MS, 1);
    /* skew per run 2.0, 2.1, 2.25 -> 2.1 */
    assert_float_equal(t->skew, 2.1, 1e-9);
    /* per rank over the runs: rank 0 median(40, 41, 90) = 41, rank 1 40, rank 2 80 */
    assert_float_equal(t->rank_ns[0], 41 * MS, 1);
    assert_float_equal(t->rank_ns[1], 40 * MS, 1);
    assert_float_equal(t->rank_ns[2], 80 * MS, 1);
    assert_int_equal(t->slowest_rank, 2);
    assert_int_equal(t->fastest_rank, 1);
    assert_float_equal(t->score[1], 1.0, 1e-12);
    assert_float_equal(t->score[2], 0.5, 1e-12);
    const struct rank_stage_summary *a = &rs.stages[1];
    assert_string_equal(a->name, "allreduce");
    assert_int_equal(a->fastest_rank, 2); /* the straggler waits least */

    /* The rules: a straggler in train; allreduce over 25 % of the run mostly waiting. */
    struct rank_stage_figures f[2];
    for (int i = 0; i < 2; i++) {
        const struct rank_stage_summary *st = &rs.stages[i];
        f[i] = (struct rank_stage_figures){
            .name = st->name, .ranks = st->n_ranks, .critical_ns = st->critical_ns,
            .median_ns = st->median_ns, .min_ns = st->min_ns, .slowest_rank = st->slowest_rank,
            .slowest_host = i == 0 ? "node-b" : NULL, .slowest_ns = st->rank_ns[st->slowest_rank],
            .fastest_rank = st->fastest_rank};
    }
    struct stage_resources sr[2] = {{.name = "train", .share = 0.8, .time_ns = 84 * MS},
                                    {.name = "allreduce", .share = 0.6, .time_ns = 60 * MS}};
    struct analysis_context ctx = {.ncpu = 4, .batch_size = -1, .threads = -1,
                                   .loader_workers = -1, .pin_memory = -1, .rank_stages = f,
                                   .n_rank_stages = 2, .wall_ns = 100 * MS};
    struct analysis an;
    analyze(&ctx, sr, 2, NULL, &an);
    const struct finding *straggler = NULL, *comm = NULL;
    for (size_t i = 0; i < an.n_findings; i++) {
        if (!strcmp(an.findings[i].rule, "straggler"))
            straggler = &an.findings[i];
        if (!strcmp(an.findings[i].rule, "communication-bound"))
            comm = &an.findings[i];
    }
    assert_non_null(straggler);
    assert_string_equal(straggler->stage, "train");
    assert_non_null(strstr(straggler->evidence, "rank 2 spends 90 % longer in train"));
    assert_non_null(strstr(straggler->evidence, "; rank 2 runs on node-b"));
    assert_float_equal(straggler->saving_ns, 38 * MS, 1);
    assert_non_null(comm);
    assert_string_equal(comm->stage, "allreduce");
    assert_non_null(strstr(comm->recommendation, "most of it is waiting"));
    assert_non_null(strstr(comm->recommendation, "rank 2, which arrives last"));
    analysis_free(&an);

    /* Balanced ranks: no straggler, and a busy allreduce is the communication's own cost. */
    f[0].slowest_ns = f[0].median_ns * 1.05;
    f[1].min_ns = f[1].critical_ns * 0.9;
    analyze(&ctx, sr, 2, NULL, &an);
    for (size_t i = 0; i < an.n_findings; i++) {
        assert_string_not_equal(an.findings[i].rule, "straggler");
        if (!strcmp(an.findings[i].rule, "communication-bound"))
            assert_non_null(strstr(an.findings[i].recommendation, "communication dominates"));
    }
    analysis_free(&an);

    rank_summary_free(&rs);
    for (int k = 0; k < 3; k++) {
        stages_free(&reps[k].stages);
        event_log_free(&reps[k].log);
    }
}

/* A result document with the summary the scaling section reads. */
static json_t *doc(const char *id, int world, double images_per_s, double allreduce_share)
{
    json_t *counters = json_array();
    json_array_append_new(counters, json_pack("{s:s, s:{s:f}}", "name", "train_images_per_s",
                                              "last", "median", images_per_s));
    if (allreduce_share >= 0)
        json_array_append_new(counters, json_pack("{s:s, s:{s:f}}", "name", "allreduce_share",
                                                  "last", "median", allreduce_share));
    json_t *ranks = world ? json_pack("{s:[i], s:i}", "ranks", 0, "world_size", world)
                          : json_null();
    return json_pack("{s:s, s:s, s:[], s:{s:o, s:o, s:{s:f}, s:[], s:[]}}", "schema",
                     "mlbench.result/1", "id", id, "runs", "summary", "counters", counters,
                     "ranks", ranks, "wall_ns", "median", 1e9, "stages", "metadata");
}

static void test_compare_scaling(void **state)
{
    (void)state;
    json_t *r[2] = {doc("a", 0, 1000, -1), doc("b", 2, 1600, 0.1)};
    json_t *c = compare_results(r, NULL, 2, NULL);
    const json_t *sc = json_object_get(json_array_get(json_object_get(c, "candidates"), 0),
                                       "scaling");
    assert_true(json_is_object(sc));
    assert_string_equal(json_string_value(json_object_get(sc, "basis")), "train_images_per_s");
    assert_float_equal(json_number_value(json_object_get(sc, "speedup")), 1.6, 1e-12);
    assert_float_equal(json_number_value(json_object_get(sc, "efficiency")), 0.8, 1e-12);
    const json_t *cand = json_object_get(sc, "candidate");
    assert_float_equal(json_number_value(json_object_get(cand, "per_rank")), 800, 1e-9);
    assert_float_equal(json_number_value(json_object_get(cand, "allreduce_share")), 0.1, 1e-12);
    assert_true(json_is_null(json_object_get(json_object_get(sc, "baseline"),
                                             "allreduce_share")));
    json_decref(c);
    json_decref(r[1]);
    /* the same number of ranks: no scaling section */
    r[1] = doc("b", 1, 1600, -1);
    c = compare_results(r, NULL, 2, NULL);
    assert_true(json_is_null(json_object_get(
        json_array_get(json_object_get(c, "candidates"), 0), "scaling")));
    json_decref(c);
    json_decref(r[0]);
    json_decref(r[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rank_summary),
        cmocka_unit_test(test_compare_scaling),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
