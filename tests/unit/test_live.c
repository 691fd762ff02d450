/* Unit tests of live: the streaming aggregates behind /metrics. Stage spans per thread become
 * duration histograms and open-span gauges; counters, instants and metadata keep their last
 * values; and memory stays bounded: a million events over a hundred names hold no more than a
 * thousand, and every bound (names, threads, depth, name length) counts what it turns away. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "live/live.h"

#define MS 1000000LL

static struct marker_token token(char kind, int64_t t_ns, int32_t pid, int32_t tid,
                                 const char *name, double number)
{
    struct marker_token t = {.kind = kind, .t_ns = t_ns, .pid = pid, .tid = tid, .name = name,
                             .name_len = strlen(name), .number = number};
    return t;
}

static void ev(struct live_metrics *live, char kind, int64_t t_ns, int32_t pid, int32_t tid,
               const char *name)
{
    struct marker_token t = token(kind, t_ns, pid, tid, name, 0);
    live_on_marker(live, &t);
}

static void counter(struct live_metrics *live, const char *name, double v)
{
    struct marker_token t = token('C', 0, 1, 1, name, v);
    live_on_marker(live, &t);
}

static void meta(struct live_metrics *live, const char *key, const char *value)
{
    struct marker_token t = token('M', 0, 1, 1, key, 0);
    t.value = value;
    t.value_len = strlen(value);
    live_on_marker(live, &t);
}

/* The exposition, and one line of it (the value after "prefix"), for checks. */
static char *render(struct live_metrics *live)
{
    size_t len;
    return live_render(live, &len);
}

static double value_of(const char *text, const char *series)
{
    char want[512];
    snprintf(want, sizeof want, "\n%s ", series);
    const char *p = strstr(text, want);
    if (!p) {
        print_message("missing: %s\n", series);
        fail();
    }
    return strtod(p + strlen(want), NULL);
}

static bool has(const char *text, const char *series)
{
    char want[512];
    snprintf(want, sizeof want, "\n%s ", series);
    return strstr(text, want) != NULL;
}

static void test_spans(void **state)
{
    (void)state;
    struct live_metrics *live = live_new();
    /* thread 1: train { step step } ; thread 2 (another process): load */
    ev(live, 'B', 0, 100, 100, "train");
    ev(live, 'B', 1 * MS, 100, 100, "step");
    ev(live, 'B', 2 * MS, 200, 201, "load");
    ev(live, 'E', 4 * MS, 100, 100, "step"); /* 3 ms */
    char *t = render(live);
    assert_int_equal(value_of(t, "mlbench_stage_active{stage=\"train\"}"), 1);
    assert_int_equal(value_of(t, "mlbench_stage_active{stage=\"step\"}"), 0);
    assert_int_equal(value_of(t, "mlbench_stage_active{stage=\"load\"}"), 1);
    assert_int_equal(value_of(t, "mlbench_stage_duration_seconds_count{stage=\"step\"}"), 1);
    assert_int_equal(value_of(t, "mlbench_stage_duration_seconds_bucket{stage=\"step\",le=\"0.0025\"}"), 0);
    assert_int_equal(value_of(t, "mlbench_stage_duration_seconds_bucket{stage=\"step\",le=\"0.005\"}"), 1);
    assert_int_equal(value_of(t, "mlbench_stage_duration_seconds_count{stage=\"train\"}"), 0);
    free(t);

    ev(live, 'B', 5 * MS, 100, 100, "step");
    ev(live, 'E', 7 * MS, 100, 100, "step");   /* 2 ms */
    ev(live, 'E', 1500 * MS, 100, 100, "train"); /* 1.5 s */
    ev(live, 'E', 10 * MS, 200, 201, "load");  /* 8 ms */
    ev(live, 'E', 11 * MS, 200, 201, "load");  /* not open: unbalanced */
    ev(live, 'E', 11 * MS, 200, 202, "ghost"); /* never begun: unbalanced, no new name */
    t = render(live);
    assert_int_equal(value_of(t, "mlbench_stage_duration_seconds_count{stage=\"step\"}"), 2);
    assert_true(fabs(value_of(t, "mlbench_stage_duration_seconds_sum{stage=\"step\"}") - 0.005) < 1e-12);
    assert_int_equal(value_of(t, "mlbench_stage_duration_seconds_bucket{stage=\"train\",le=\"1\"}"), 0);
    assert_int_equal(value_of(t, "mlbench_stage_duration_seconds_bucket{stage=\"train\",le=\"2.5\"}"), 1);
    assert_int_equal(value_of(t, "mlbench_stage_duration_seconds_bucket{stage=\"train\",le=\"+Inf\"}"), 1);
    assert_int_equal(value_of(t, "mlbench_stage_active{stage=\"train\"}"), 0);
    assert_int_equal(value_of(t, "mlbench_stage_active{stage=\"load\"}"), 0);
    assert_int_equal(value_of(t, "mlbench_markers_unbalanced_total"), 2);
    assert_false(has(t, "mlbench_stage_active{stage=\"ghost\"}"));
    assert_int_equal(value_of(t, "mlbench_markers_received_total"), 10);
    free(t);

    /* issue 12: an end stamped before its begin is no (negative) duration */
    ev(live, 'B', 50 * MS, 300, 300, "step");
    ev(live, 'E', 40 * MS, 300, 300, "step");
    ev(live, 'E', 60 * MS, 300, 300, "step");  /* 10 ms */
    t = render(live);
    assert_int_equal(value_of(t, "mlbench_markers_unbalanced_total"), 3);
    assert_int_equal(value_of(t, "mlbench_stage_duration_seconds_count{stage=\"step\"}"), 3);
    assert_true(fabs(value_of(t, "mlbench_stage_duration_seconds_sum{stage=\"step\"}") - 0.015) < 1e-12);
    free(t);

    struct live_usage u;
    live_usage(live, &u);
    assert_int_equal(u.threads, 0); /* a thread with nothing open is forgotten */
    assert_int_equal(u.open_spans, 0);
    assert_int_equal(u.stages, 3);
    live_free(live);
}

/* An end closes the innermost open stage of its name; stages left open inside it are closed
 * too and counted as unbalanced, as in a run's aggregation. */
static void test_unbalanced_nesting(void **state)
{
    (void)state;
    struct live_metrics *live = live_new();
    ev(live, 'B', 0, 1, 1, "outer");
    ev(live, 'B', 1 * MS, 1, 1, "inner");
    ev(live, 'B', 2 * MS, 1, 1, "innermost");
    ev(live, 'E', 3 * MS, 1, 1, "outer");
    ev(live, 'B', 3 * MS, 1, 1, "x");
    ev(live, 'B', 3 * MS, 1, 1, "x"); /* the same stage nested in itself */
    ev(live, 'E', 4 * MS, 1, 1, "x");
    ev(live, 'E', 6 * MS, 1, 1, "x");
    char *t = render(live);
    assert_int_equal(value_of(t, "mlbench_markers_unbalanced_total"), 2);
    assert_int_equal(value_of(t, "mlbench_stage_duration_seconds_count{stage=\"outer\"}"), 1);
    assert_int_equal(value_of(t, "mlbench_stage_duration_seconds_count{stage=\"inner\"}"), 0);
    assert_int_equal(value_of(t, "mlbench_stage_active{stage=\"inner\"}"), 0);
    assert_int_equal(value_of(t, "mlbench_stage_active{stage=\"innermost\"}"), 0);
    assert_int_equal(value_of(t, "mlbench_stage_duration_seconds_count{stage=\"x\"}"), 2);
    assert_true(fabs(value_of(t, "mlbench_stage_duration_seconds_sum{stage=\"x\"}") - 0.004) < 1e-12);
    /* an end stamped before its begin (one thread, one clock: a bogus event) is unbalanced, no
     * duration at all (issue 12: it used to count as 0 s; a run's aggregation refuses it too) */
    ev(live, 'B', 10 * MS, 1, 1, "back");
    ev(live, 'E', 9 * MS, 1, 1, "back");
    free(t);
    t = render(live);
    assert_int_equal(value_of(t, "mlbench_markers_unbalanced_total"), 3);
    assert_int_equal(value_of(t, "mlbench_stage_duration_seconds_count{stage=\"back\"}"), 0);
    assert_int_equal(value_of(t, "mlbench_stage_active{stage=\"back\"}"), 1);
    free(t);
    live_free(live);
}

static void test_counters_meta_instants(void **state)
{
    (void)state;
    struct live_metrics *live = live_new();
    counter(live, "images", 32);
    counter(live, "images", 16);
    counter(live, "loss", 0.5);
    counter(live, "loss", 0.25);
    counter(live, "tokens", 10);
    counter(live, "tokens", -1); /* no longer count-like: its sum goes away */
    meta(live, "batch_size", "64");
    meta(live, "batch_size", "128");
    meta(live, "empty", "");
    struct marker_token t = token('I', 0, 1, 1, "checkpoint", 0);
    live_on_marker(live, &t);
    live_on_marker(live, &t);
    char *x = render(live);
    assert_int_equal(value_of(x, "mlbench_marker_value{name=\"images\"}"), 16);
    assert_int_equal(value_of(x, "mlbench_marker_sum_total{name=\"images\"}"), 48);
    assert_int_equal(value_of(x, "mlbench_marker_samples_total{name=\"images\"}"), 2);
    assert_true(value_of(x, "mlbench_marker_value{name=\"loss\"}") == 0.25);
    assert_false(has(x, "mlbench_marker_sum_total{name=\"loss\"}"));
    assert_int_equal(value_of(x, "mlbench_marker_value{name=\"tokens\"}"), -1);
    assert_false(has(x, "mlbench_marker_sum_total{name=\"tokens\"}"));
    assert_true(has(x, "mlbench_metadata_info{key=\"batch_size\",value=\"128\"}"));
    assert_false(has(x, "mlbench_metadata_info{key=\"batch_size\",value=\"64\"}"));
    assert_true(has(x, "mlbench_metadata_info{key=\"empty\",value=\"\"}"));
    assert_int_equal(value_of(x, "mlbench_marker_instants_total{name=\"checkpoint\"}"), 2);
    free(x);

    /* A long metadata value is cut; a cut inside a UTF-8 sequence is not passed on as is. */
    char big[LIVE_MAX_VALUE_BYTES + 100];
    memset(big, 'v', sizeof big);
    big[LIVE_MAX_VALUE_BYTES - 1] = '\xc3';
    big[LIVE_MAX_VALUE_BYTES] = '\xa9';
    big[sizeof big - 1] = '\0';
    meta(live, "long", big);
    x = render(live);
    const char *p = strstr(x, "key=\"long\",value=\"");
    assert_non_null(p);
    p += strlen("key=\"long\",value=\"");
    assert_int_equal(strcspn(p, "\""), LIVE_MAX_VALUE_BYTES);
    assert_int_equal(p[LIVE_MAX_VALUE_BYTES - 1], '?');
    free(x);
    live_free(live);
}

/* 10^6 events over 100 stage names on 8 threads: the names are kept, nothing else grows. */
static void test_bounded_million_events(void **state)
{
    (void)state;
    struct live_metrics *live = live_new();
    char names[100][16];
    for (int i = 0; i < 100; i++)
        snprintf(names[i], sizeof names[i], "stage%02d", i);
    struct live_usage u1 = {0}, u2;
    int64_t t = 0;
    for (long i = 0; i < 500000; i++) { /* a begin and an end each */
        int32_t tid = 1000 + (int32_t)(i % 8);
        const char *name = names[i % 100];
        ev(live, 'B', t, 42, tid, name);
        ev(live, 'E', t + (i % 1000) * 1000, 42, tid, name);
        t += 1000;
        if (i == 50000)
            live_usage(live, &u1);
    }
    live_usage(live, &u2);
    assert_int_equal(u2.stages, 100);
    assert_int_equal(u2.threads, 0);
    assert_int_equal(u2.open_spans, 0);
    assert_int_equal(u2.dropped, 0);
    assert_int_equal(u1.bytes, u2.bytes); /* flat after the first 10^5 events */
    char *x = render(live);
    assert_int_equal(value_of(x, "mlbench_markers_received_total"), 1000000);
    assert_int_equal(value_of(x, "mlbench_stage_duration_seconds_count{stage=\"stage07\"}"), 5000);
    free(x);

    /* Many more names than the bound: the table stops at LIVE_MAX_NAMES and counts the rest. */
    char name[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "generated_%d", i);
        ev(live, 'B', t, 42, 7, name);
        ev(live, 'E', t + 1, 42, 7, name);
        counter(live, name, i);
        struct marker_token in = token('I', t, 42, 7, name, 0);
        live_on_marker(live, &in);
        meta(live, name, "v");
    }
    live_usage(live, &u2);
    assert_int_equal(u2.stages, LIVE_MAX_NAMES);
    assert_int_equal(u2.counters, LIVE_MAX_NAMES);
    assert_int_equal(u2.instants, LIVE_MAX_NAMES);
    assert_int_equal(u2.metadata, LIVE_MAX_NAMES);
    size_t bytes = u2.bytes;
    for (int i = 5000; i < 20000; i++) {
        snprintf(name, sizeof name, "generated_%d", i);
        ev(live, 'B', t, 42, 7, name);
        ev(live, 'E', t + 1, 42, 7, name);
        counter(live, name, i);
    }
    live_usage(live, &u2);
    assert_int_equal(u2.bytes, bytes);
    x = render(live);
    assert_int_equal(value_of(x, "mlbench_markers_dropped_total{reason=\"stage_limit\"}"),
                     2 * (20000 - (LIVE_MAX_NAMES - 100)));
    assert_int_equal(value_of(x, "mlbench_markers_dropped_total{reason=\"counter_limit\"}"),
                     20000 - LIVE_MAX_NAMES);
    assert_int_equal(value_of(x, "mlbench_markers_dropped_total{reason=\"instant_limit\"}"),
                     5000 - LIVE_MAX_NAMES);
    assert_int_equal(value_of(x, "mlbench_markers_dropped_total{reason=\"metadata_limit\"}"),
                     5000 - LIVE_MAX_NAMES);
    assert_true(strlen(x) < 4 * 1024 * 1024); /* a scrape at the bounds: about 2 MiB */
    free(x);
    live_free(live);
}

/* Threads that never end their stages (killed workers): at most LIVE_MAX_THREADS are kept; the
 * least recently active lose their open spans, which are counted. */
static void test_bounded_threads_and_depth(void **state)
{
    (void)state;
    struct live_metrics *live = live_new();
    for (int32_t tid = 1; tid <= 3 * LIVE_MAX_THREADS; tid++)
        ev(live, 'B', tid, 77, tid, "worker");
    struct live_usage u;
    live_usage(live, &u);
    assert_int_equal(u.threads, LIVE_MAX_THREADS);
    assert_int_equal(u.open_spans, LIVE_MAX_THREADS);
    char *x = render(live);
    assert_int_equal(value_of(x, "mlbench_markers_dropped_total{reason=\"thread_limit\"}"),
                     2 * LIVE_MAX_THREADS);
    assert_int_equal(value_of(x, "mlbench_stage_active{stage=\"worker\"}"), LIVE_MAX_THREADS);
    free(x);
    /* The most recent threads are the ones kept: their ends still match. */
    for (int32_t tid = 2 * LIVE_MAX_THREADS + 1; tid <= 3 * LIVE_MAX_THREADS; tid++)
        ev(live, 'E', tid + 5, 77, tid, "worker");
    live_usage(live, &u);
    assert_int_equal(u.threads, 0);
    x = render(live);
    assert_int_equal(value_of(x, "mlbench_stage_duration_seconds_count{stage=\"worker\"}"),
                     LIVE_MAX_THREADS);
    assert_int_equal(value_of(x, "mlbench_stage_active{stage=\"worker\"}"), 0);
    assert_int_equal(value_of(x, "mlbench_markers_unbalanced_total"), 0);
    free(x);

    /* Recursion deeper than LIVE_MAX_DEPTH on one thread. */
    for (int i = 0; i < LIVE_MAX_DEPTH + 10; i++)
        ev(live, 'B', i, 5, 5, "recurse");
    live_usage(live, &u);
    assert_int_equal(u.open_spans, LIVE_MAX_DEPTH);
    x = render(live);
    assert_int_equal(value_of(x, "mlbench_markers_dropped_total{reason=\"depth_limit\"}"), 10);
    free(x);

    /* A name longer than the bound is not tracked. */
    char longname[LIVE_MAX_NAME_BYTES + 2];
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    ev(live, 'B', 0, 5, 6, longname);
    ev(live, 'E', 1, 5, 6, longname);
    x = render(live);
    assert_int_equal(value_of(x, "mlbench_markers_dropped_total{reason=\"long_name\"}"), 2);
    assert_int_equal(value_of(x, "mlbench_markers_unbalanced_total"), 0);
    free(x);

    live_close_spans(live); /* the workload ended */
    live_usage(live, &u);
    assert_int_equal(u.threads, 0);
    assert_int_equal(u.open_spans, 0);
    x = render(live);
    assert_int_equal(value_of(x, "mlbench_stage_active{stage=\"recurse\"}"), 0);
    assert_int_equal(value_of(x, "mlbench_stage_active{stage=\"worker\"}"), 0);
    free(x);
    live_free(live);
}

struct waiter {
    pid_t tid;
    int fd; /* read end: the thread ends when it can read */
};

static void *thread_wait(void *arg)
{
    struct waiter *w = arg;
    __atomic_store_n(&w->tid, gettid(), __ATOMIC_SEQ_CST);
    char c;
    (void)!read(w->fd, &c, 1);
    return NULL;
}

/* A process that died inside a stage, and a thread that ended inside one while its process
 * lives on: pruning forgets their spans; a live thread keeps its own, and so does one whose
 * ids did not exist when it began (another PID namespace). */
static void test_prune_dead(void **state)
{
    (void)state;
    struct live_metrics *live = live_new();
    int child_pipe[2], thread_pipe[2];
    assert_int_equal(pipe(child_pipe), 0);
    assert_int_equal(pipe(thread_pipe), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        char c;
        close(child_pipe[1]);
        (void)!read(child_pipe[0], &c, 1);
        _exit(0);
    }
    struct waiter w = {0, thread_pipe[0]};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, thread_wait, &w), 0);
    while (!__atomic_load_n(&w.tid, __ATOMIC_SEQ_CST))
        usleep(1000);

    ev(live, 'B', 0, (int32_t)child, (int32_t)child, "doomed");
    ev(live, 'B', 0, (int32_t)getpid(), (int32_t)w.tid, "ended");
    ev(live, 'B', 0, (int32_t)getpid(), (int32_t)gettid(), "alive");
    ev(live, 'B', 0, 1 << 30, 1 << 30, "container"); /* no such pid here */
    /* a thread already gone when its first event is read, of a process that is there */
    ev(live, 'B', 0, (int32_t)getpid(), 1 << 30, "late");
    assert_int_equal(live_prune_dead(live), 1);      /* "late"; the others are all there */

    close(child_pipe[1]);
    assert_int_equal(waitpid(child, NULL, 0), child);
    close(thread_pipe[1]);
    assert_int_equal(pthread_join(th, NULL), 0);
    close(child_pipe[0]);
    close(thread_pipe[0]);
    assert_int_equal(live_prune_dead(live), 2);
    char *x = render(live);
    assert_int_equal(value_of(x, "mlbench_stage_active{stage=\"doomed\"}"), 0);
    assert_int_equal(value_of(x, "mlbench_stage_active{stage=\"ended\"}"), 0);
    assert_int_equal(value_of(x, "mlbench_stage_active{stage=\"alive\"}"), 1);
    assert_int_equal(value_of(x, "mlbench_stage_active{stage=\"container\"}"), 1);
    assert_int_equal(value_of(x, "mlbench_stage_active{stage=\"late\"}"), 0);
    free(x);
    live_free(live);
}

/* The latest row is what is served; a new set of series (another sampler) replaces the old. */
static void test_samples(void **state)
{
    (void)state;
    struct live_metrics *live = live_new();
    struct series_def defs[2] = {
        {"system_cpu_busy_ratio", "", SERIES_GAUGE, "system", 0},
        {"process_cpu_seconds_total", "", SERIES_COUNTER, "proc", 0},
    };
    int64_t t[3] = {1, 2, 3};
    double a[3] = {0.1, 0.2, NAN}, b[3] = {1, 2, 3};
    double *v[2] = {a, b};
    struct sample_table tab = {.defs = defs, .n_series = 2, .t_ns = t, .v = v, .n = 3, .cap = 3};
    live_on_sample(live, &tab, 0);
    live_on_sample(live, &tab, 1);
    char *x = render(live);
    assert_true(value_of(x, "mlbench_system_cpu_busy_ratio") == 0.2);
    assert_int_equal(value_of(x, "mlbench_process_cpu_seconds_total"), 2);
    assert_int_equal(value_of(x, "mlbench_samples_total"), 2);
    assert_int_equal(value_of(x, "mlbench_up"), 0); /* rows stamped long ago */
    free(x);
    live_on_sample(live, &tab, 2);
    live_on_sample(live, &tab, 7); /* out of range: ignored */
    x = render(live);
    assert_false(has(x, "mlbench_system_cpu_busy_ratio")); /* not measured: absent, never 0 */
    assert_int_equal(value_of(x, "mlbench_process_cpu_seconds_total"), 3);
    free(x);
    struct series_def other[1] = {{"gpu_power_watts", "gpu=\"0\"", SERIES_GAUGE, "nvml", 0}};
    double *w[1] = {b};
    struct sample_table tab2 = {.defs = other, .n_series = 1, .t_ns = t, .v = w, .n = 3, .cap = 3};
    live_on_sample(live, &tab2, 0);
    x = render(live);
    assert_false(has(x, "mlbench_process_cpu_seconds_total"));
    assert_int_equal(value_of(x, "mlbench_gpu_power_watts{gpu=\"0\"}"), 1);
    free(x);
    struct live_usage u;
    live_usage(live, &u);
    assert_int_equal(u.series, 1);
    live_free(live);
    live_free(NULL);
}

/* Malformed datagrams: reported one by one (tok NULL), or estimated from the receiver's count
 * of every datagram; the larger is exported and it never goes down. */
/* mlbench load's queries: absent until one ends, then a histogram and the counts by result. */
static void test_queries(void **state)
{
    (void)state;
    struct live_metrics *live = live_new();
    char *x = render(live);
    assert_null(strstr(x, "mlbench_load_"));
    free(x);
    live_on_query(live, 3000000, true);   /* 3 ms: the 5 ms bucket */
    live_on_query(live, 200000000, true); /* 200 ms: the 250 ms bucket */
    live_on_query(live, 1, false);
    x = render(live);
    assert_true(value_of(x, "mlbench_load_latency_seconds_bucket{le=\"0.0025\"}") == 0);
    assert_true(value_of(x, "mlbench_load_latency_seconds_bucket{le=\"0.005\"}") == 1);
    assert_true(value_of(x, "mlbench_load_latency_seconds_bucket{le=\"0.1\"}") == 1);
    assert_true(value_of(x, "mlbench_load_latency_seconds_bucket{le=\"0.25\"}") == 2);
    assert_true(value_of(x, "mlbench_load_latency_seconds_count") == 2);
    assert_true(fabs(value_of(x, "mlbench_load_latency_seconds_sum") - 0.203) < 1e-9);
    assert_true(value_of(x, "mlbench_load_queries_total{result=\"ok\"}") == 2);
    assert_true(value_of(x, "mlbench_load_queries_total{result=\"failed\"}") == 1);
    free(x);
    live_free(live);
}

static void test_malformed(void **state)
{
    (void)state;
    struct live_metrics *live = live_new();
    ev(live, 'B', 0, 1, 1, "a");
    ev(live, 'E', 1, 1, 1, "a");
    ev(live, 'I', 1, 1, 1, "i");
    live_set_marker_datagrams(live, 5); /* 3 events + 2 that were not */
    char *x = render(live);
    assert_int_equal(value_of(x, "mlbench_markers_malformed_total"), 2);
    free(x);
    live_set_marker_datagrams(live, 3); /* an older reading: no step back */
    x = render(live);
    assert_int_equal(value_of(x, "mlbench_markers_malformed_total"), 2);
    free(x);
    for (int i = 0; i < 3; i++)
        live_on_marker(live, NULL);
    live_add_malformed(live, 1);
    x = render(live);
    assert_int_equal(value_of(x, "mlbench_markers_malformed_total"), 4);
    assert_int_equal(value_of(x, "mlbench_markers_received_total"), 3);
    free(x);
    live_free(live);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spans),
        cmocka_unit_test(test_unbalanced_nesting),
        cmocka_unit_test(test_counters_meta_instants),
        cmocka_unit_test(test_bounded_million_events),
        cmocka_unit_test(test_bounded_threads_and_depth),
        cmocka_unit_test(test_prune_dead),
        cmocka_unit_test(test_samples),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_queries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
