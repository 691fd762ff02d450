/* Unit tests of stages_aggregate: nesting per thread, several threads and processes, union
 * versus sum, unbalanced and unclosed stages, counters, metadata and the event log. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "measure/event_log.h"
#include "measure/stages.h"

#define MS 1000000LL
#define T0 (1000 * MS)

__attribute__((format(printf, 2, 3)))
static void ev(struct event_log *log, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    struct marker_token t;
    const char *why = marker_parse(buf, strlen(buf), &t);
    assert_null(why);
    event_log_add(log, &t);
}

static const struct stage_total *stage(const struct stage_data *d, const struct event_log *log,
                                       const char *name)
{
    for (size_t i = 0; i < d->n_stages; i++)
        if (!strcmp(event_log_str(log, d->stages[i].name), name))
            return &d->stages[i];
    fail_msg("stage %s missing", name);
    return NULL;
}

/* Busy time saturates: 2000 threads in one stage for a run of 2^62 ns add up past INT64_MAX
 * (fuzz_markers found the overflow). */
static void test_busy_saturates(void **state)
{
    (void)state;
    struct event_log log;
    struct stage_data d;
    event_log_init(&log);
    for (int tid = 1; tid <= 2000; tid++)
        ev(&log, "B %lld 1 %d wait", T0, tid);
    stages_aggregate(&log, T0, INT64_C(1) << 62, &d);
    assert_int_equal(stage(&d, &log, "wait")->busy_ns, INT64_MAX);
    assert_int_equal(stage(&d, &log, "wait")->active_ns, INT64_C(1) << 62);
    stages_free(&d);
    event_log_free(&log);
}

/* The totals of rank r in stage name, or NULL. */
static const struct rank_stage *rank_stage(const struct stage_data *d,
                                           const struct event_log *log, int32_t r,
                                           const char *name)
{
    for (size_t i = 0; i < d->n_rank_stages; i++)
        if (d->rank_stages[i].rank == r &&
            !strcmp(event_log_str(log, d->stages[d->rank_stages[i].name - 1].name), name))
            return &d->rank_stages[i];
    return NULL;
}

/* Ranks: a process's first announcement counts; its worker (another pid announcing the same
 * rank) adds to that rank; a bad value, a process with no rank, and a later different value
 * change nothing; the protocol key is not workload metadata. */
static void test_ranks(void **state)
{
    (void)state;
    struct event_log log;
    struct stage_data d;
    event_log_init(&log);
    ev(&log, "M %lld 10 10 mlbench.rank 0 2", T0);
    ev(&log, "M %lld 20 20 mlbench.rank 1 2", T0);
    ev(&log, "M %lld 21 21 mlbench.rank 1", T0);      /* rank 1's worker */
    ev(&log, "M %lld 20 20 mlbench.rank 5 8", T0);    /* later: ignored */
    ev(&log, "M %lld 30 30 mlbench.rank -1", T0);     /* bad values: ignored */
    ev(&log, "M %lld 31 31 mlbench.rank 1 0", T0);
    ev(&log, "M %lld 32 32 mlbench.rank x", T0);
    ev(&log, "B %lld 10 10 train", T0 + 1 * MS);
    ev(&log, "E %lld 10 10 train", T0 + 11 * MS);      /* rank 0: 10 ms */
    ev(&log, "B %lld 20 20 train", T0 + 1 * MS);
    ev(&log, "E %lld 20 20 train", T0 + 16 * MS);      /* rank 1: 15 ms ... */
    ev(&log, "B %lld 21 21 train", T0 + 14 * MS);
    ev(&log, "E %lld 21 21 train", T0 + 20 * MS);      /* ... and its worker: union 19 ms */
    ev(&log, "B %lld 30 30 train", T0 + 1 * MS);       /* no rank */
    ev(&log, "E %lld 30 30 train", T0 + 2 * MS);
    stages_aggregate(&log, T0, 30 * MS, &d);
    assert_int_equal(d.n_ranks, 2);
    assert_int_equal(d.ranks[0], 0);
    assert_int_equal(d.ranks[1], 1);
    assert_int_equal(d.world_size, 2);
    assert_int_equal(d.n_meta, 0);
    assert_int_equal(rank_stage(&d, &log, 0, "train")->active_ns, 10 * MS);
    assert_int_equal(rank_stage(&d, &log, 0, "train")->count, 1);
    assert_int_equal(rank_stage(&d, &log, 1, "train")->active_ns, 19 * MS);
    assert_int_equal(rank_stage(&d, &log, 1, "train")->busy_ns, 21 * MS);
    assert_int_equal(rank_stage(&d, &log, 1, "train")->count, 2);
    assert_int_equal(d.n_rank_stages, 2);
    assert_int_equal(stage(&d, &log, "train")->count, 4); /* every process's spans */
    stages_free(&d);
    event_log_free(&log);
}

/* Beyond STAGES_MAX_RANKS distinct ranks the lowest are kept; the others' processes are no
 * rank's, and counted. */
static void test_ranks_bounded(void **state)
{
    (void)state;
    struct event_log log;
    struct stage_data d;
    event_log_init(&log);
    for (int r = 0; r < STAGES_MAX_RANKS + 5; r++) {
        ev(&log, "M %lld %d 1 mlbench.rank %d", T0, 100 + r, STAGES_MAX_RANKS + 4 - r);
        ev(&log, "B %lld %d 1 step", T0, 100 + r);
        ev(&log, "E %lld %d 1 step", T0 + MS, 100 + r);
    }
    stages_aggregate(&log, T0, 2 * MS, &d);
    assert_int_equal(d.n_ranks, STAGES_MAX_RANKS);
    assert_int_equal(d.ranks[d.n_ranks - 1], STAGES_MAX_RANKS - 1);
    assert_int_equal(d.ranks_dropped, 5);
    assert_int_equal(d.n_rank_stages, STAGES_MAX_RANKS);
    stages_free(&d);
    event_log_free(&log);
}

static void test_nested_sequence(void **state)
{
    (void)state;
    struct event_log log;
    struct stage_data d;
    event_log_init(&log);
    ev(&log, "B %lld 1 1 load", T0 + 10 * MS);
    ev(&log, "E %lld 1 1 load", T0 + 60 * MS);
    ev(&log, "B %lld 1 1 train", T0 + 60 * MS);
    ev(&log, "B %lld 1 1 step", T0 + 70 * MS);
    ev(&log, "E %lld 1 1 step", T0 + 80 * MS);
    ev(&log, "B %lld 1 1 step", T0 + 90 * MS);
    ev(&log, "E %lld 1 1 step", T0 + 100 * MS);
    ev(&log, "E %lld 1 1 train", T0 + 160 * MS);
    ev(&log, "B %lld 1 1 load", T0 + 160 * MS); /* the same stage again later */
    ev(&log, "E %lld 1 1 load", T0 + 170 * MS);
    stages_aggregate(&log, T0, 200 * MS, &d);

    assert_int_equal(d.n_stages, 3);
    assert_string_equal(event_log_str(&log, d.stages[0].name), "load");
    assert_string_equal(event_log_str(&log, d.stages[1].name), "train");
    assert_string_equal(event_log_str(&log, d.stages[2].name), "step");
    const struct stage_total *load = stage(&d, &log, "load");
    assert_int_equal(load->count, 2);
    assert_int_equal(load->busy_ns, 60 * MS);
    assert_int_equal(load->active_ns, 60 * MS);
    assert_int_equal(load->first_ns, 10 * MS);
    assert_int_equal(load->last_ns, 170 * MS);
    const struct stage_total *step = stage(&d, &log, "step");
    assert_int_equal(step->depth, 1);
    assert_int_equal(step->active_ns, 20 * MS);
    assert_int_equal(d.n_spans, 5);
    assert_int_equal(d.unbalanced, 0);
    assert_int_equal(d.unclosed, 0);
    /* covered: 10..170 ms of 200 */
    assert_int_equal(d.outside_ns, 40 * MS);
    stages_free(&d);
    event_log_free(&log);
}

/* overlap_ns: time a top-level stage was open beside another top-level stage on another
 * thread; back-to-back stages, one stage on two threads and nested stages do not overlap. */
static void test_overlap(void **state)
{
    (void)state;
    struct event_log log;
    struct stage_data d;
    event_log_init(&log);
    ev(&log, "B %lld 1 1 train", T0 + 0 * MS);
    ev(&log, "B %lld 1 1 step", T0 + 10 * MS);     /* nested: never overlaps */
    ev(&log, "E %lld 1 1 step", T0 + 90 * MS);
    ev(&log, "E %lld 1 1 train", T0 + 100 * MS);
    ev(&log, "B %lld 1 2 preprocess", T0 + 50 * MS); /* beside train 50..100 */
    ev(&log, "E %lld 1 2 preprocess", T0 + 150 * MS);
    ev(&log, "B %lld 1 3 preprocess", T0 + 60 * MS); /* itself on another thread: no more */
    ev(&log, "E %lld 1 3 preprocess", T0 + 120 * MS);
    ev(&log, "B %lld 1 1 evaluate", T0 + 150 * MS);  /* starts as preprocess ends */
    ev(&log, "E %lld 1 1 evaluate", T0 + 180 * MS);
    stages_aggregate(&log, T0, 200 * MS, &d);
    assert_int_equal(stage(&d, &log, "train")->overlap_ns, 50 * MS);
    assert_int_equal(stage(&d, &log, "preprocess")->overlap_ns, 50 * MS);
    assert_int_equal(stage(&d, &log, "evaluate")->overlap_ns, 0);
    assert_int_equal(stage(&d, &log, "step")->overlap_ns, 0);
    stages_free(&d);
    event_log_free(&log);
}

static void test_threads_and_processes(void **state)
{
    (void)state;
    struct event_log log;
    struct stage_data d;
    event_log_init(&log);
    /* Two threads of pid 1 overlap 0..50 and 25..75; pid 2's thread 1 does 100..150. */
    ev(&log, "B %lld 1 10 work", T0);
    ev(&log, "B %lld 1 11 work", T0 + 25 * MS);
    ev(&log, "E %lld 1 10 work", T0 + 50 * MS);
    ev(&log, "E %lld 1 11 work", T0 + 75 * MS);
    ev(&log, "B %lld 2 10 work", T0 + 100 * MS);
    ev(&log, "E %lld 2 10 work", T0 + 150 * MS);
    stages_aggregate(&log, T0, 150 * MS, &d);
    const struct stage_total *w = stage(&d, &log, "work");
    assert_int_equal(w->count, 3);
    assert_int_equal(w->busy_ns, 150 * MS);   /* 50 + 50 + 50 */
    assert_int_equal(w->active_ns, 125 * MS); /* union: 0..75 and 100..150 */
    assert_int_equal(w->last_ns - w->first_ns, 150 * MS);
    assert_int_equal(d.unbalanced, 0);
    stages_free(&d);
    event_log_free(&log);
}

static void test_unbalanced_and_unclosed(void **state)
{
    (void)state;
    struct event_log log;
    struct stage_data d;
    event_log_init(&log);
    ev(&log, "E %lld 1 1 ghost", T0 + 1 * MS);           /* never begun */
    ev(&log, "B %lld 1 1 outer", T0 + 2 * MS);
    ev(&log, "B %lld 1 1 inner", T0 + 3 * MS);
    ev(&log, "E %lld 1 1 outer", T0 + 10 * MS);          /* closes inner too: unbalanced */
    ev(&log, "E %lld 1 2 outer", T0 + 11 * MS);          /* another thread: unbalanced */
    ev(&log, "B %lld 1 1 killed", T0 + 20 * MS);         /* never ends */
    stages_aggregate(&log, T0, 50 * MS, &d);
    assert_int_equal(d.unbalanced, 3);
    assert_int_equal(d.unclosed, 1);
    const struct stage_total *inner = stage(&d, &log, "inner");
    assert_int_equal(inner->active_ns, 7 * MS);
    const struct stage_total *killed = stage(&d, &log, "killed");
    assert_int_equal(killed->unclosed, 1);
    assert_int_equal(killed->active_ns, 30 * MS); /* closed at the end of the run */
    for (size_t i = 0; i < d.n_spans; i++)
        if (!strcmp(event_log_str(&log, d.spans[i].name), "killed"))
            assert_false(d.spans[i].closed);
    stages_free(&d);
    event_log_free(&log);
}

/* issue 12: an end stamped before its begin gave "load -400.000 ms", share -32 %. */
static void test_end_before_begin(void **state)
{
    (void)state;
    struct event_log log;
    struct stage_data d;
    event_log_init(&log);
    ev(&log, "B %lld 1 1 load", T0 + 500 * MS);
    ev(&log, "E %lld 1 1 load", T0 + 100 * MS);            /* backwards: matches nothing */
    ev(&log, "B %lld 1 1 outer", T0 + 600 * MS);
    ev(&log, "B %lld 1 1 inner", T0 + 700 * MS);
    ev(&log, "E %lld 1 1 outer", T0 + 650 * MS);           /* before inner began: clamped */
    stages_aggregate(&log, T0, 1000 * MS, &d);
    assert_int_equal(d.unbalanced, 2);
    for (size_t i = 0; i < d.n_stages; i++)
        assert_true(d.stages[i].active_ns >= 0);
    for (size_t i = 0; i < d.n_spans; i++)
        assert_true(d.spans[i].end_ns >= d.spans[i].start_ns);
    const struct stage_total *load = stage(&d, &log, "load");
    assert_int_equal(load->unclosed, 1);
    assert_int_equal(load->active_ns, 500 * MS); /* open from 500 ms to the end of the run */
    assert_int_equal(stage(&d, &log, "outer")->active_ns, 50 * MS);
    assert_int_equal(stage(&d, &log, "inner")->active_ns, 0);
    stages_free(&d);
    event_log_free(&log);
}

static void test_counters_meta_instants(void **state)
{
    (void)state;
    struct event_log log;
    struct stage_data d;
    event_log_init(&log);
    ev(&log, "C %lld 1 1 images 32", T0 + 1);
    ev(&log, "C %lld 1 1 loss 2.5", T0 + 2);
    ev(&log, "C %lld 1 1 images 16", T0 + 3);
    ev(&log, "C %lld 1 1 loss 0.5", T0 + 4);
    ev(&log, "M %lld 1 1 precision fp32", T0 + 5);
    ev(&log, "M %lld 1 1 precision bf16", T0 + 6);
    ev(&log, "M %lld 1 1 model small cnn", T0 + 6);
    ev(&log, "I %lld 1 1 epoch", T0 + 7);
    stages_aggregate(&log, T0, 10, &d);
    assert_int_equal(d.n_counters, 2);
    assert_string_equal(event_log_str(&log, d.counters[0].name), "images");
    assert_int_equal(d.counters[0].n, 2);
    assert_true(d.counters[0].sum == 48);
    assert_true(d.counters[0].last == 16);
    assert_true(d.counters[0].min == 16);
    assert_true(d.counters[0].max == 32);
    assert_true(d.counters[1].last == 0.5);
    /* the samples over time, with their running sums (issue 13: training curves) */
    assert_int_equal(d.counters[0].n_points, 2);
    assert_int_equal(d.counters[0].stride, 1);
    assert_int_equal(d.counters[0].points[1].t_ns, 3);
    assert_true(d.counters[0].points[1].value == 16);
    assert_true(d.counters[0].points[1].sum == 48);
    assert_true(d.counters[1].points[0].value == 2.5);
    assert_int_equal(d.n_meta, 2);
    assert_string_equal(event_log_str(&log, d.meta[0].value), "bf16");
    assert_string_equal(event_log_str(&log, d.meta[1].value), "small cnn");
    assert_int_equal(d.n_instants, 1);
    assert_int_equal(d.instants[0].t_ns, 7);
    assert_int_equal(d.outside_ns, -1); /* no stage at all */
    assert_int_equal(d.n_stages, 0);
    stages_free(&d);
    event_log_free(&log);
}

/* issue 13: a counter sent 2500 times keeps at most STAGES_MAX_COUNTER_POINTS points, every
 * 4th sample (the first, the 5th...), evenly over the run, each with the exact running sum. */
static void test_counter_points_decimated(void **state)
{
    (void)state;
    struct event_log log;
    struct stage_data d;
    event_log_init(&log);
    for (int i = 0; i < 2500; i++)
        ev(&log, "C %lld 1 1 images %d", T0 + i, 1 + i % 3);
    stages_aggregate(&log, T0, 3000, &d);
    const struct counter_total *c = &d.counters[0];
    assert_int_equal(c->n, 2500);
    assert_int_equal(c->stride, 4);
    assert_int_equal(c->n_points, 625);
    double sum = 0;
    for (int i = 0, k = 0; i < 2500; i++) {
        sum += 1 + i % 3;
        if (i % 4)
            continue;
        assert_int_equal(c->points[k].t_ns, i);
        assert_true(c->points[k].value == 1 + i % 3);
        assert_true(c->points[k].sum == sum);
        k++;
    }
    stages_free(&d);
    event_log_free(&log);
}

/* A launcher (pid 1) adopts its child (pid 2): the child's stages nest under the launcher's
 * stage, even when the child's first event arrives before the adoption; the protocol key is
 * not workload metadata. */
static void test_adoption(void **state)
{
    (void)state;
    struct event_log log;
    struct stage_data d;
    event_log_init(&log);
    ev(&log, "B %lld 1 1 train", T0);
    ev(&log, "B %lld 2 2 epoch", T0 + 1 * MS); /* arrives before the adoption */
    ev(&log, "M %lld 1 1 mlbench.adopt 2", T0 + 1 * MS);
    ev(&log, "B %lld 2 2 step", T0 + 2 * MS);
    ev(&log, "E %lld 2 2 step", T0 + 3 * MS);
    ev(&log, "E %lld 2 2 epoch", T0 + 4 * MS);
    ev(&log, "B %lld 2 3 loader", T0 + 2 * MS); /* another thread of the child */
    ev(&log, "E %lld 2 3 loader", T0 + 3 * MS);
    ev(&log, "E %lld 1 1 train", T0 + 5 * MS);
    ev(&log, "B %lld 9 9 other", T0 + 6 * MS); /* not adopted */
    ev(&log, "E %lld 9 9 other", T0 + 7 * MS);
    stages_aggregate(&log, T0, 10 * MS, &d);
    assert_int_equal(stage(&d, &log, "train")->depth, 0);
    assert_int_equal(stage(&d, &log, "epoch")->depth, 1);
    assert_int_equal(stage(&d, &log, "step")->depth, 2);
    assert_int_equal(stage(&d, &log, "loader")->depth, 1);
    assert_int_equal(stage(&d, &log, "other")->depth, 0);
    assert_int_equal(d.n_meta, 0);
    /* parents (issue 13): the adopted child's stages under the launcher's open stage */
    uint32_t train = stage(&d, &log, "train")->name, epoch = stage(&d, &log, "epoch")->name;
    assert_int_equal(stage(&d, &log, "train")->parent, STAGES_NO_NAME);
    assert_int_equal(stage(&d, &log, "epoch")->parent, train);
    assert_int_equal(stage(&d, &log, "step")->parent, epoch);
    assert_int_equal(stage(&d, &log, "loader")->parent, train);
    assert_int_equal(stage(&d, &log, "other")->parent, STAGES_NO_NAME);
    stages_free(&d);
    event_log_free(&log);
}

static void test_event_log(void **state)
{
    (void)state;
    struct event_log log;
    event_log_init(&log);
    uint32_t a = event_log_intern(&log, "load", 4);
    uint32_t b = event_log_intern(&log, "train", 5);
    assert_int_not_equal(a, b);
    assert_int_equal(event_log_intern(&log, "loadX", 4), a);
    char name[32];
    for (int i = 0; i < 1000; i++) { /* forces rehashing */
        snprintf(name, sizeof name, "s%d", i);
        event_log_intern(&log, name, strlen(name));
    }
    assert_int_equal(event_log_intern(&log, "load", 4), a);
    assert_string_equal(event_log_str(&log, b), "train");
    assert_int_equal(event_log_intern(&log, "", 0), 0);
    for (int i = 0; i < 20; i++)
        event_log_add_malformed(&log, i % 2 ? "bad pid" : "overlong", "B \x01\xff", 4);
    assert_int_equal(log.malformed, 20);
    assert_int_equal(log.n_examples, 2); /* one per reason */
    assert_string_equal(log.example[0], "overlong: \"B ??\"");
    event_log_free(&log);
}

/* Issue 12: a run with more distinct names than STAGES_MAX_NAMES of a kind keeps the first
 * ones and counts the rest; 20 000 top-level stages open at once (each on a thread of its own)
 * aggregate with the right overlap, which a sweep over every open stage at every edge made
 * quadratic (16 s). */
static void test_many_names(void **state)
{
    (void)state;
    struct event_log log;
    struct stage_data d;
    const int n = 20000;
    event_log_init(&log);
    for (int i = 0; i < n; i++)
        ev(&log, "B %lld 1 %d s%d", T0 + i, 100 + i, i);
    for (int i = 0; i < n; i++)
        ev(&log, "E %lld 1 %d s%d", T0 + 100 * MS + i, 100 + i, i);
    for (int i = 0; i < 3 * STAGES_MAX_NAMES / 2; i++) {
        ev(&log, "C %lld 1 1 c%d %d", T0 + 150 * MS, i, i);
        ev(&log, "C %lld 1 1 c%d %d", T0 + 151 * MS, i, i + 1);
        ev(&log, "M %lld 1 1 k%d v", T0 + 150 * MS, i);
    }
    ev(&log, "B %lld 1 1 s19999", T0 + 160 * MS); /* a dropped name stays dropped */
    ev(&log, "E %lld 1 1 s19999", T0 + 170 * MS);
    stages_aggregate(&log, T0, 200 * MS, &d);

    assert_int_equal(d.n_stages, STAGES_MAX_NAMES);
    assert_int_equal(d.n_counters, STAGES_MAX_NAMES);
    assert_int_equal(d.n_meta, STAGES_MAX_NAMES);
    assert_int_equal(d.names_dropped, (n - STAGES_MAX_NAMES) + 2 * (STAGES_MAX_NAMES / 2));
    /* each dropped stage name's B and E, the late pair of s19999, two samples per dropped
     * counter and one item per dropped key */
    assert_int_equal(d.name_events_dropped,
                     2 * (n - STAGES_MAX_NAMES) + 2 + 3 * (STAGES_MAX_NAMES / 2));
    assert_int_equal(d.unbalanced, 0);
    assert_int_equal(d.unclosed, 0);
    /* stage i is open from i ns to 100 ms + i ns: s0 is alone for its first nanosecond, s999
     * (the last kept: the others are dropped) for its last */
    const struct stage_total *first = stage(&d, &log, "s0"), *last = stage(&d, &log, "s999");
    assert_int_equal(first->overlap_ns, 100 * MS - 1);
    assert_int_equal(last->overlap_ns, 100 * MS - 1);
    assert_int_equal(first->active_ns, 100 * MS);
    assert_string_equal(event_log_str(&log, d.counters[999].name), "c999");
    assert_true(d.counters[999].sum == 999 + 1000);
    stages_free(&d);
    event_log_free(&log);
}

/* Issue 13, point 6: stages from two worker processes begin while the main thread is in
 * train > data_wait; the order is the tree (each stage under its parent, siblings by first
 * begin), never first begin alone, which put `decode` between data_wait and step. */
static void test_tree_order_two_processes(void **state)
{
    (void)state;
    struct event_log log;
    struct stage_data d;
    event_log_init(&log);
    ev(&log, "B %lld 1 1 train", T0);
    ev(&log, "B %lld 1 1 data_wait", T0 + 1 * MS);
    ev(&log, "B %lld 2 2 decode", T0 + 2 * MS);
    ev(&log, "B %lld 2 2 resize", T0 + 3 * MS);
    ev(&log, "B %lld 3 3 decode", T0 + 3 * MS);
    ev(&log, "E %lld 2 2 resize", T0 + 4 * MS);
    ev(&log, "E %lld 2 2 decode", T0 + 8 * MS);
    ev(&log, "E %lld 3 3 decode", T0 + 9 * MS);
    ev(&log, "E %lld 1 1 data_wait", T0 + 10 * MS);
    ev(&log, "B %lld 1 1 step", T0 + 10 * MS);
    ev(&log, "B %lld 1 1 forward", T0 + 11 * MS);
    ev(&log, "E %lld 1 1 forward", T0 + 12 * MS);
    ev(&log, "E %lld 1 1 step", T0 + 30 * MS);
    ev(&log, "E %lld 1 1 train", T0 + 40 * MS);
    stages_aggregate(&log, T0, 50 * MS, &d);
    const char *want[] = {"train", "data_wait", "step", "forward", "decode", "resize"};
    const int depth[] = {0, 1, 1, 2, 0, 1};
    assert_int_equal(d.n_stages, 6);
    for (size_t i = 0; i < 6; i++) {
        assert_string_equal(event_log_str(&log, d.stages[i].name), want[i]);
        assert_int_equal(d.stages[i].depth, depth[i]);
    }
    assert_int_equal(d.stages[2].parent, d.stages[0].name); /* step under train */
    assert_int_equal(d.stages[5].parent, d.stages[4].name); /* resize under decode */
    stages_free(&d);
    event_log_free(&log);
}

/* The stage a counter was sent in: the innermost open on the sending thread; several stages
 * (or some samples outside any) make it mixed. */
static void test_counter_stage(void **state)
{
    (void)state;
    struct event_log log;
    struct stage_data d;
    event_log_init(&log);
    ev(&log, "B %lld 1 1 train", T0);
    ev(&log, "B %lld 1 1 step", T0 + 1 * MS);
    ev(&log, "C %lld 1 1 images 32", T0 + 2 * MS);
    ev(&log, "C %lld 1 2 queue 3", T0 + 2 * MS); /* another thread, nothing open there */
    ev(&log, "C %lld 1 1 loss 0.5", T0 + 2 * MS);
    ev(&log, "E %lld 1 1 step", T0 + 3 * MS);
    ev(&log, "C %lld 1 1 loss 0.4", T0 + 4 * MS); /* in train now */
    ev(&log, "B %lld 1 1 step", T0 + 5 * MS);
    ev(&log, "C %lld 1 1 images 32", T0 + 6 * MS);
    ev(&log, "E %lld 1 1 step", T0 + 7 * MS);
    ev(&log, "E %lld 1 1 train", T0 + 8 * MS);
    stages_aggregate(&log, T0, 10 * MS, &d);
    assert_int_equal(d.n_counters, 3);
    assert_int_equal(d.counters[0].stage, stage(&d, &log, "step")->name);
    assert_false(d.counters[0].stage_mixed);
    assert_int_equal(d.counters[1].stage, STAGES_NO_NAME);
    assert_false(d.counters[1].stage_mixed);
    assert_int_equal(d.counters[2].stage, STAGES_NO_NAME);
    assert_true(d.counters[2].stage_mixed);
    stages_free(&d);
    event_log_free(&log);
}

/* stages_tree_order alone: depth first, siblings in the given order, a cycle last. */
static void test_tree_order_function(void **state)
{
    (void)state;
    /* 0 root; 1 root; 2 under 0; 3 under 1; 4 under 2; 5 under 0; 6 <-> 7 a cycle */
    const size_t parent[] = {SIZE_MAX, SIZE_MAX, 0, 1, 2, 0, 7, 6};
    const size_t want[] = {0, 2, 4, 5, 1, 3, 6, 7};
    size_t order[8];
    stages_tree_order(8, parent, order);
    for (size_t i = 0; i < 8; i++)
        assert_int_equal(order[i], want[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nested_sequence),
        cmocka_unit_test(test_threads_and_processes),
        cmocka_unit_test(test_overlap),
        cmocka_unit_test(test_unbalanced_and_unclosed),
        cmocka_unit_test(test_end_before_begin),
        cmocka_unit_test(test_counters_meta_instants),
        cmocka_unit_test(test_counter_points_decimated),
        cmocka_unit_test(test_adoption),
        cmocka_unit_test(test_event_log),
        cmocka_unit_test(test_many_names),
        cmocka_unit_test(test_busy_saturates),
        cmocka_unit_test(test_ranks),
        cmocka_unit_test(test_ranks_bounded),
        cmocka_unit_test(test_tree_order_two_processes),
        cmocka_unit_test(test_counter_stage),
        cmocka_unit_test(test_tree_order_function),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
