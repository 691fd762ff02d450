/* Unit tests of the unsynchronised-timing rule (src/result/gpu_sync.c, docs/analysis.md): GPU
 * timelines written by hand, one window per sample, against the spans of two stages. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "result/gpu_sync.h"

#define MS 1000000LL

static struct span top(uint32_t name, int64_t start_ms, int64_t end_ms)
{
    return (struct span){.name = name, .pid = 100, .tid = 100, .rank = -1,
                         .start_ns = start_ms * MS, .end_ns = end_ms * MS, .depth = 0,
                         .parent = UINT32_MAX, .closed = true};
}

/* GPM-like windows of 100 ms from 0 to end_ms: activity `busy` up to busy_until_ms, then
 * `after`; the host at `cpu` cores throughout. */
static size_t timeline(struct gpu_window *w, int64_t end_ms, int64_t busy_until_ms, double busy,
                       double after, double cpu)
{
    size_t n = 0;
    for (int64_t t = 0; t < end_ms; t += 100)
        w[n++] = (struct gpu_window){t * MS, (t + 100) * MS, t < busy_until_ms ? busy : after,
                                     cpu};
    return n;
}

static struct span spans[4];
static struct gpu_window w[64];
static struct gpu_tail tails[4];

/* train [0, 1000 ms] then eval [1000, 2000 ms] */
static void two_stages(void)
{
    spans[0] = top(1, 0, 1000);
    spans[1] = top(2, 1000, 2000);
}

static void test_tail_found(void **state)
{
    (void)state;
    two_stages();
    size_t n = timeline(w, 2000, 1400, 0.9, 0.0, 0.95);
    assert_int_equal(gpu_sync_tails(spans, 2, w, n, tails, 4), 1);
    assert_int_equal(tails[0].stage, 0);
    assert_int_equal(tails[0].next, 1);
    assert_int_equal(tails[0].tail_ns, 400 * MS);
    assert_true(fabs(tails[0].active - 0.9) < 1e-9);
    assert_true(fabs(tails[0].cpu_cores - 0.95) < 1e-9);

    /* the spans in any order, and nested spans beside them, change nothing */
    spans[2] = spans[0];
    spans[0] = top(3, 200, 300);
    spans[0].depth = 1;
    assert_int_equal(gpu_sync_tails(spans, 3, w, n, tails, 4), 1);
    assert_int_equal(tails[0].stage, 2);

    /* the host unknown: still a tail, its cores unknown */
    two_stages();
    n = timeline(w, 2000, 1400, 0.9, 0.0, NAN);
    assert_int_equal(gpu_sync_tails(spans, 2, w, n, tails, 4), 1);
    assert_true(isnan(tails[0].cpu_cores));
}

static void test_no_tail(void **state)
{
    (void)state;
    two_stages();
    /* synchronised: the GPU falls idle when train ends */
    size_t n = timeline(w, 2000, 1000, 0.9, 0.0, 1.0);
    assert_int_equal(gpu_sync_tails(spans, 2, w, n, tails, 4), 0);
    /* eval uses the GPU all along: its own work */
    n = timeline(w, 2000, 2000, 0.9, 0.0, 1.0);
    assert_int_equal(gpu_sync_tails(spans, 2, w, n, tails, 4), 0);
    /* the GPU idle at train's end */
    n = timeline(w, 2000, 0, 0.9, 0.0, 1.0);
    assert_int_equal(gpu_sync_tails(spans, 2, w, n, tails, 4), 0);
    /* busy, idle, busy again in eval: eval's own kernels */
    n = timeline(w, 2000, 1400, 0.9, 0.0, 1.0);
    w[17].active = 0.8;
    assert_int_equal(gpu_sync_tails(spans, 2, w, n, tails, 4), 0);
    /* the host computes on four cores meanwhile: eval's own work */
    n = timeline(w, 2000, 1400, 0.9, 0.0, 4.0);
    assert_int_equal(gpu_sync_tails(spans, 2, w, n, tails, 4), 0);
    /* a window not measured in eval: no judgement */
    n = timeline(w, 2000, 1400, 0.9, 0.0, 1.0);
    w[15].active = NAN;
    assert_int_equal(gpu_sync_tails(spans, 2, w, n, tails, 4), 0);
    /* no idle window before eval ends */
    n = timeline(w, 2000, 1400, 0.9, 0.0, 1.0);
    spans[1].end_ns = 1400 * MS;
    assert_int_equal(gpu_sync_tails(spans, 2, w, n, tails, 4), 0);
}

static void test_not_a_boundary(void **state)
{
    (void)state;
    size_t n = timeline(w, 2000, 1400, 0.9, 0.0, 1.0);
    /* another stage open beside them (a loader thread): the GPU may be its */
    two_stages();
    spans[2] = top(3, 0, 2000);
    spans[2].tid = 101;
    assert_int_equal(gpu_sync_tails(spans, 3, w, n, tails, 4), 0);
    spans[2] = top(3, 1200, 1300);
    spans[2].tid = 101;
    assert_int_equal(gpu_sync_tails(spans, 3, w, n, tails, 4), 0);
    /* eval in another process */
    two_stages();
    spans[1].pid = 200;
    assert_int_equal(gpu_sync_tails(spans, 2, w, n, tails, 4), 0);
    /* eval begins 300 ms after train: the gap between is outside both */
    two_stages();
    spans[1].start_ns = 1300 * MS;
    assert_int_equal(gpu_sync_tails(spans, 2, w, n, tails, 4), 0);
    /* a stage still open at the end of the run */
    two_stages();
    spans[0].closed = false;
    assert_int_equal(gpu_sync_tails(spans, 2, w, n, tails, 4), 0);
}

/* Utilisation's windows: a second long, one every 100 ms, the share of it with a kernel. */
static void test_utilisation_windows(void **state)
{
    (void)state;
    spans[0] = top(1, 0, 3000);
    spans[1] = top(2, 3000, 6000);
    size_t n = 0;
    for (int64_t t = 1000; t <= 6000; t += 100) {
        /* busy from 0 to 4200 ms: the part of [t - 1 s, t] before 4200 */
        double busy = fmax(0, fmin(1, (4200.0 - (double)(t - 1000)) / 1000.0));
        w[n++] = (struct gpu_window){(t - 1000) * MS, t * MS, busy, 1.0};
        if (n == 64)
            break;
    }
    assert_int_equal(gpu_sync_tails(spans, 2, w, n, tails, 4), 1);
    /* the last window at least 25 % busy ends 700 ms after the busy time did */
    assert_int_equal(tails[0].tail_ns, 1900 * MS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tail_found),
        cmocka_unit_test(test_no_tail),
        cmocka_unit_test(test_not_a_boundary),
        cmocka_unit_test(test_utilisation_windows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
