/* Unit tests of the per-stage span statistics (span_stats, summary_compute: count, nearest-rank
 * percentiles, log-scaled histogram over the ok runs), of the summary's stage tree order with
 * stages from worker processes, of counter rates over the stage they were sent in, of their
 * JSON form and of doc_result_load_file's checks of it (issue 13). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "result/result.h"
#include "doc/result_file.h"
#include "result/span_stats.h"

#define MS 1000000LL
#define T0 (1000 * MS)

static struct run_config cfg;
static struct result res;

static void start(void)
{
    memset(&cfg, 0, sizeof cfg);
    result_init(&res, &cfg);
}

__attribute__((format(printf, 2, 3)))
static void ev(struct repetition *rep, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    struct marker_token t;
    assert_null(marker_parse(buf, strlen(buf), &t));
    event_log_add(&rep->log, &t);
}

static struct repetition *rep_begin(enum run_status st, int64_t wall_ns)
{
    struct repetition *rep = result_add_rep(&res, false);
    rep->outcome.status = st;
    rep->outcome.wall_ns = wall_ns;
    return rep;
}

static void rep_end(struct repetition *rep)
{
    stages_aggregate(&rep->log, T0, rep->outcome.wall_ns, &rep->stages);
}

static const struct stage_summary *sstage(const char *name)
{
    for (size_t i = 0; i < res.summary.n_stages; i++)
        if (!strcmp(res.summary.stages[i].name, name))
            return &res.summary.stages[i];
    fail_msg("stage %s missing", name);
    return NULL;
}

/* Bin edges are 2^(b/4) ns: exact powers of two start a bin of their own. */
static void test_bins(void **state)
{
    (void)state;
    assert_int_equal(span_stats_bin(0), 0);
    assert_int_equal(span_stats_bin(1), 0);
    assert_int_equal(span_stats_bin(2), 4);
    assert_int_equal(span_stats_bin(1024), 40);
    assert_int_equal(span_stats_bin(1023), 39);
    assert_int_equal(span_stats_bin(1e6), 79);  /* 2^19.93 */
    assert_int_equal(span_stats_bin(1 << 20), 80);
    assert_int_equal(span_stats_bin(1e30), SPAN_STATS_MAX_BIN);
    for (int b = 1; b < 200; b++) /* every edge falls in the bin it opens */
        assert_int_equal(span_stats_bin(exp2(b / 4.0)), b);
}

/* 1..100 ms: the nearest-rank percentiles are observed values, the histogram holds them all
 * from the first to the last non-empty bin. */
static void test_make(void **state)
{
    (void)state;
    double d[100];
    for (int i = 0; i < 100; i++)
        d[i] = (double)((100 - i) * MS); /* any order: sorted in place */
    struct span_stats *s = span_stats_make(d, 100);
    assert_non_null(s);
    assert_int_equal(s->n, 100);
    assert_true(s->p50_ns == 50 * MS);
    assert_true(s->p90_ns == 90 * MS);
    assert_true(s->p99_ns == 99 * MS);
    assert_true(s->p999_ns == 100 * MS);
    assert_true(s->max_ns == 100 * MS);
    assert_int_equal(s->first_bin, span_stats_bin(1 * MS));
    assert_int_equal(s->first_bin + (int)s->n_bins - 1, span_stats_bin(100 * MS));
    uint64_t sum = 0;
    for (size_t i = 0; i < s->n_bins; i++)
        sum += s->counts[i];
    assert_int_equal(sum, 100);
    assert_true(s->counts[0] > 0 && s->counts[s->n_bins - 1] > 0);
    span_stats_free(s);
    assert_null(span_stats_make(d, 0));
}

/* Spans of the ok runs are pooled; failed runs and unclosed spans stay out; a stage with no
 * closed span has none; the file's span cap does not limit them. */
static void test_summary_spans(void **state)
{
    (void)state;
    start();
    for (int k = 0; k < 2; k++) {
        struct repetition *rep = rep_begin(RUN_OK, 1000 * MS);
        ev(rep, "B %lld 1 1 train", T0);
        for (int i = 0; i < 50; i++) { /* run 0: 1..50 ms, run 1: 51..100 ms */
            long long at = T0 + i * 19 * MS, len = (k * 50 + i + 1) * MS / 10;
            ev(rep, "B %lld 1 1 step", at);
            ev(rep, "E %lld 1 1 step", at + len);
        }
        ev(rep, "E %lld 1 1 train", T0 + 950 * MS);
        ev(rep, "B %lld 1 1 hang", T0 + 950 * MS); /* never closed */
        rep_end(rep);
    }
    struct repetition *bad = rep_begin(RUN_FAILED, 100 * MS);
    ev(bad, "B %lld 1 1 step", T0);
    ev(bad, "E %lld 1 1 step", T0 + 90 * MS); /* would be the max */
    rep_end(bad);
    summary_compute(&res, NULL); /* no environment captured */

    const struct span_stats *st = sstage("step")->spans;
    assert_non_null(st);
    assert_int_equal(st->n, 100);
    assert_true(st->p50_ns == 5 * MS);
    assert_true(st->p99_ns == 99 * MS / 10);
    assert_true(st->max_ns == 10 * MS);
    assert_int_equal(sstage("train")->spans->n, 2);
    assert_null(sstage("hang")->spans);

    json_t *j = result_to_json(&res);
    json_t *stages = json_object_get(json_object_get(j, "summary"), "stages");
    json_t *step = NULL, *hang = NULL;
    for (size_t i = 0; i < json_array_size(stages); i++) {
        const char *name = json_string_value(json_object_get(json_array_get(stages, i), "name"));
        if (!strcmp(name, "step"))
            step = json_object_get(json_array_get(stages, i), "spans");
        if (!strcmp(name, "hang"))
            hang = json_object_get(json_array_get(stages, i), "spans");
    }
    assert_true(json_is_null(hang));
    assert_int_equal(json_integer_value(json_object_get(step, "n")), 100);
    assert_true(json_real_value(json_object_get(step, "p90_ns")) == 9 * MS);
    json_t *h = json_object_get(step, "histogram");
    assert_int_equal(json_integer_value(json_object_get(h, "bins_per_octave")), 4);
    assert_int_equal(json_integer_value(json_object_get(h, "first_bin")), span_stats_bin(MS / 10));
    assert_int_equal(json_array_size(json_object_get(h, "counts")), st->n_bins);
    json_decref(j);
    result_free(&res);

    /* no ok run: no latency figures from partial work */
    start();
    bad = rep_begin(RUN_FAILED, 100 * MS);
    ev(bad, "B %lld 1 1 step", T0);
    ev(bad, "E %lld 1 1 step", T0 + 10 * MS);
    rep_end(bad);
    summary_compute(&res, NULL); /* no environment captured */
    assert_null(sstage("step")->spans);
    result_free(&res);
}

/* Issue 13, point 6: DataLoader-like workers (pid 2, 3) send `decode` while the main thread is
 * in train > data_wait; `step` must stay under train, not come after decode as if its child.
 * Run 2 has a stage the first did not (eval), which begins before decode. */
static void test_summary_tree_order(void **state)
{
    (void)state;
    start();
    for (int k = 0; k < 2; k++) {
        struct repetition *rep = rep_begin(RUN_OK, 200 * MS);
        ev(rep, "B %lld 1 1 train", T0);
        ev(rep, "B %lld 1 1 data_wait", T0 + 1 * MS);
        ev(rep, "B %lld 2 2 decode", T0 + 2 * MS);
        ev(rep, "B %lld 3 3 decode", T0 + 3 * MS);
        ev(rep, "E %lld 2 2 decode", T0 + 8 * MS);
        ev(rep, "E %lld 3 3 decode", T0 + 9 * MS);
        ev(rep, "E %lld 1 1 data_wait", T0 + 10 * MS);
        ev(rep, "B %lld 1 1 step", T0 + 10 * MS);
        ev(rep, "E %lld 1 1 step", T0 + 30 * MS);
        if (k == 1) {
            ev(rep, "B %lld 1 1 eval", T0 + 30 * MS);
            ev(rep, "E %lld 1 1 eval", T0 + 40 * MS);
        }
        ev(rep, "E %lld 1 1 train", T0 + 50 * MS);
        rep_end(rep);
        /* each run alone is in tree order too */
        const char *want[] = {"train", "data_wait", "step", "eval", "decode"};
        for (size_t i = 0, w = 0; i < rep->stages.n_stages; i++, w++) {
            if (k == 0 && w == 3)
                w++;
            assert_string_equal(event_log_str(&rep->log, rep->stages.stages[i].name), want[w]);
        }
    }
    summary_compute(&res, NULL); /* no environment captured */
    const char *want[] = {"train", "data_wait", "step", "eval", "decode"};
    const int depth[] = {0, 1, 1, 1, 0};
    assert_int_equal(res.summary.n_stages, 5);
    for (size_t i = 0; i < 5; i++) {
        assert_string_equal(res.summary.stages[i].name, want[i]);
        assert_int_equal(res.summary.stages[i].depth, depth[i]);
    }
    result_free(&res);
}

/* Issue 13, point 7: a counter's rate over the stage it was sent in, beside the run's rate;
 * several stages (or none) give no stage rate. */
static void test_counter_stage_rate(void **state)
{
    (void)state;
    start();
    for (int k = 0; k < 3; k++) {
        struct repetition *rep = rep_begin(RUN_OK, 1000 * MS);
        ev(rep, "B %lld 1 1 train", T0);
        for (int i = 0; i < 10; i++) { /* 10 steps of 10 ms, 32 images each */
            ev(rep, "B %lld 1 1 step", T0 + i * 20 * MS);
            ev(rep, "C %lld 1 1 images 32", T0 + i * 20 * MS + 5 * MS);
            ev(rep, "E %lld 1 1 step", T0 + i * 20 * MS + 10 * MS);
        }
        ev(rep, "C %lld 1 1 loss 0.5", T0 + 300 * MS); /* in train */
        ev(rep, "E %lld 1 1 train", T0 + 400 * MS);
        ev(rep, "C %lld 1 1 loss 0.4", T0 + 500 * MS); /* outside any stage */
        ev(rep, "C %lld 1 7 tokens 5", T0 + 100 * MS); /* a thread with no stage open */
        rep_end(rep);
    }
    summary_compute(&res, NULL); /* no environment captured */
    const struct counter_summary *images = NULL, *loss = NULL, *tokens = NULL;
    for (size_t i = 0; i < res.summary.n_counters; i++) {
        const struct counter_summary *c = &res.summary.counters[i];
        if (!strcmp(c->name, "images"))
            images = c;
        else if (!strcmp(c->name, "loss"))
            loss = c;
        else if (!strcmp(c->name, "tokens"))
            tokens = c;
    }
    assert_non_null(images);
    assert_string_equal(images->stage, "step");
    assert_false(images->stage_mixed);
    assert_true(fabs(images->rate_median - 320) < 1e-9);         /* 320 over 1 s */
    assert_true(fabs(images->stage_rate_median - 3200) < 1e-9);  /* 320 over 100 ms of step */
    assert_null(loss->stage);
    assert_true(loss->stage_mixed);
    assert_true(isnan(loss->stage_rate_median));
    assert_null(tokens->stage);
    assert_false(tokens->stage_mixed);

    json_t *j = result_to_json(&res);
    json_t *c0 = json_array_get(json_object_get(json_object_get(j, "summary"), "counters"), 0);
    assert_string_equal(json_string_value(json_object_get(c0, "name")), "images");
    assert_string_equal(json_string_value(json_object_get(c0, "stage")), "step");
    assert_true(fabs(json_real_value(json_object_get(c0, "stage_rate_per_s_median")) - 3200) <
                1e-9);
    json_decref(j);
    result_free(&res);
}

/* Writes text to a temporary file and loads it: the document, or NULL with err set. */
static json_t *load_text(const char *text, char *err, size_t errlen)
{
    char path[] = "/tmp/test_span_stats-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    json_t *j = doc_result_load_file(path, err, errlen);
    unlink(path);
    return j;
}

static void test_load(void **state)
{
    (void)state;
    static const char head[] = "{\"schema\":\"mlbench.result/1\",\"id\":\"x\",\"runs\":[],"
                               "\"summary\":{\"stages\":[{\"name\":\"step\"";
    static const char good[] = ",\"spans\":{\"n\":3,\"p50_ns\":5,\"p90_ns\":6,\"p99_ns\":6,"
                               "\"p999_ns\":6,\"max_ns\":6,\"histogram\":{\"bins_per_octave\":4,"
                               "\"first_bin\":9,\"counts\":[1,0,2]}}";
    static const struct { const char *spans, *why; } bad[] = {
        {",\"spans\":[]", "count n"},
        {",\"spans\":{\"n\":3,\"p50_ns\":\"5\",\"p90_ns\":6,\"p99_ns\":6,\"p999_ns\":6,"
         "\"max_ns\":6,\"histogram\":{\"bins_per_octave\":4,\"first_bin\":9,\"counts\":[3]}}",
         "percentile"},
        {",\"spans\":{\"n\":3,\"p50_ns\":5,\"p90_ns\":6,\"p99_ns\":6,\"p999_ns\":6,"
         "\"max_ns\":6,\"histogram\":{\"bins_per_octave\":4,\"first_bin\":9,\"counts\":[1,1]}}",
         "add up"},
        {",\"spans\":{\"n\":3,\"p50_ns\":5,\"p90_ns\":6,\"p99_ns\":6,\"p999_ns\":6,"
         "\"max_ns\":6,\"histogram\":{\"bins_per_octave\":4,\"first_bin\":255,\"counts\":[1,2]}}",
         "first_bin"},
        {",\"spans\":{\"n\":3,\"p50_ns\":5,\"p90_ns\":6,\"p99_ns\":6,\"p999_ns\":6,"
         "\"max_ns\":6,\"histogram\":{\"bins_per_octave\":4,\"first_bin\":9,\"counts\":[4,-1]}}",
         "count is not"},
    };
    char text[1024], err[512];
    /* an older result (no spans), a stage without spans (null), and a valid one load */
    const char *ok[] = {"", ",\"spans\":null", good};
    for (size_t i = 0; i < 3; i++) {
        snprintf(text, sizeof text, "%s%s}]}}", head, ok[i]);
        json_t *j = load_text(text, err, sizeof err);
        assert_non_null(j);
        json_decref(j);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, "%s%s}]}}", head, bad[i].spans);
        err[0] = '\0';
        assert_null(load_text(text, err, sizeof err));
        assert_non_null(strstr(err, "summary.stages[0].spans is malformed"));
        if (!strstr(err, bad[i].why))
            fail_msg("case %zu: %s", i, err);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bins),
        cmocka_unit_test(test_make),
        cmocka_unit_test(test_summary_spans),
        cmocka_unit_test(test_summary_tree_order),
        cmocka_unit_test(test_counter_stage_rate),
        cmocka_unit_test(test_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
