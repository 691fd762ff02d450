/* Unit tests of the GPU clock marking (result/gpu_clock.c): busy and idle samples, the clock
 * threshold, the reason bits, the 10 % rule, an unknown maximum clock, which GPUs count, the
 * maximum clocks read from the machine's facts, and --discard-throttled in summary_compute. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "result/gpu_clock.h"
#include "result/result.h"

#define MS 1000000LL
#define MHZ 1e6
#define MAX_MHZ 2000.0
#define NA NAN

/* Columns of the table: per GPU (0, 1) utilisation, SM clock, reasons, process memory. */
enum { UTIL, CLOCK, REASONS, MEM, PER_GPU };

static struct series_registry reg;

static void registry(void)
{
    memset(&reg, 0, sizeof reg);
    for (int g = 0; g < 2; g++) {
        char labels[16];
        snprintf(labels, sizeof labels, "gpu=\"%d\"", g);
        series_register(&reg, "nvml", "gpu_utilization_ratio", labels, SERIES_GAUGE);
        series_register(&reg, "nvml", "gpu_sm_clock_hertz", labels, SERIES_GAUGE);
        series_register(&reg, "nvml", "gpu_throttle_reasons", labels, SERIES_GAUGE);
        series_register(&reg, "nvml", "gpu_process_memory_bytes", labels, SERIES_GAUGE);
    }
}

/* One sample of one GPU. */
struct s {
    double util, mhz, reasons, mem;
};

/* A table of n ticks: GPU 0 from g0, GPU 1 from g1 (NULL: its values not read, NAN). */
static void fill(struct sample_table *t, const struct s *g0, const struct s *g1, size_t n)
{
    sample_table_init(t, &reg);
    for (size_t i = 0; i < n; i++) {
        size_t row = sample_table_add_row(t, (int64_t)i * 50 * MS);
        const struct s *per[2] = {g0 ? &g0[i] : NULL, g1 ? &g1[i] : NULL};
        for (int g = 0; g < 2; g++) {
            if (!per[g])
                continue;
            sample_table_set(t, g * PER_GPU + UTIL, row, per[g]->util);
            sample_table_set(t, g * PER_GPU + CLOCK, row, per[g]->mhz * MHZ);
            sample_table_set(t, g * PER_GPU + REASONS, row, per[g]->reasons);
            sample_table_set(t, g * PER_GPU + MEM, row, per[g]->mem);
        }
    }
}

static double max_hz[GPU_CLOCK_MAX_GPUS];

static void known_max(void)
{
    for (int g = 0; g < GPU_CLOCK_MAX_GPUS; g++)
        max_hz[g] = MAX_MHZ * MHZ;
}

/* Marks n ticks of GPU 0 alone (the workload's memory on it). */
static struct gpu_clock_run mark(const struct s *g0, size_t n, double threshold)
{
    struct sample_table t;
    struct gpu_clock_run out;
    fill(&t, g0, NULL, n);
    gpu_clock_run_compute(&t, max_hz, false, threshold, &out);
    sample_table_free(&t);
    return out;
}

static void test_busy_and_idle(void **state)
{
    (void)state;
    registry();
    known_max();
    /* idle at a low clock (by design), then busy at 90 % of the maximum */
    struct s g0[10];
    for (int i = 0; i < 10; i++)
        g0[i] = i < 5 ? (struct s){0.1, 300, 0x1, 1e9} : (struct s){0.9, 1800, 0, 1e9};
    struct gpu_clock_run r = mark(g0, 10, GPU_CLOCK_THRESHOLD);
    assert_true(r.measured);
    assert_int_equal(r.busy_samples, 5);
    assert_int_equal(r.throttled_samples, 0);
    assert_int_equal(r.slow_samples, 0);
    assert_false(r.throttled);
    assert_true(fabs(r.scaling - 0.9) < 1e-12);
    /* utilisation 0.5 is busy; 0.49 and unknown are not */
    g0[0] = (struct s){0.5, 1000, 0, 1e9};
    g0[1] = (struct s){0.49, 1000, 0, 1e9};
    g0[2] = (struct s){NA, 1000, 0, 1e9};
    r = mark(g0, 10, GPU_CLOCK_THRESHOLD);
    assert_int_equal(r.busy_samples, 6);
    assert_int_equal(r.slow_samples, 1);
    /* never busy: not measured */
    for (int i = 0; i < 10; i++)
        g0[i] = (struct s){0.2, 200, 0x44, 1e9};
    r = mark(g0, 10, GPU_CLOCK_THRESHOLD);
    assert_false(r.measured);
    assert_false(r.throttled);
    assert_int_equal(r.busy_samples, 0);
    assert_true(isnan(r.scaling));
    series_registry_free(&reg);
}

static void test_ratio_threshold(void **state)
{
    (void)state;
    registry();
    known_max();
    struct s g0[10];
    for (int i = 0; i < 10; i++)
        g0[i] = (struct s){0.95, 1900, 0, 1e9};
    g0[3].mhz = 1400; /* 0.70: below 0.75 */
    g0[4].mhz = 1500; /* 0.75: not below */
    struct gpu_clock_run r = mark(g0, 10, GPU_CLOCK_THRESHOLD);
    assert_int_equal(r.busy_samples, 10);
    assert_int_equal(r.slow_samples, 1);
    assert_int_equal(r.throttled_samples, 1);
    assert_true(r.throttled); /* 1 of 10: the 10 % */
    assert_int_equal(r.reasons, 0);
    assert_true(fabs(r.scaling - (8 * 0.95 + 0.70 + 0.75) / 10) < 1e-12);
    /* a lower threshold (--throttle-threshold 50) passes both */
    r = mark(g0, 10, 0.5);
    assert_int_equal(r.throttled_samples, 0);
    assert_false(r.throttled);
    /* an SM clock not read in a sample: no ratio there */
    g0[3].mhz = NA;
    r = mark(g0, 10, GPU_CLOCK_THRESHOLD);
    assert_int_equal(r.busy_samples, 10);
    assert_int_equal(r.slow_samples, 0);
    assert_true(fabs(r.scaling - (8 * 0.95 + 0.75) / 9) < 1e-12);
    series_registry_free(&reg);
}

static void test_reason_bits(void **state)
{
    (void)state;
    registry();
    known_max();
    struct s g0[4];
    const struct {
        double bits;
        unsigned reasons;
    } cases[] = {
        {0x1, 0}, {0x2, 0}, {0x10, 0}, {0x100, 0}, /* idle, app clocks, sync boost, display */
        {0x4, GPU_CLOCK_POWER}, {0x8, GPU_CLOCK_POWER}, {0x80, GPU_CLOCK_POWER},
        {0x20, GPU_CLOCK_THERMAL}, {0x40, GPU_CLOCK_THERMAL},
        {0x4 | 0x40 | 0x1, GPU_CLOCK_POWER | GPU_CLOCK_THERMAL},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        for (int i = 0; i < 4; i++)
            g0[i] = (struct s){0.9, 1900, 0, 1e9};
        g0[2].reasons = cases[k].bits;
        struct gpu_clock_run r = mark(g0, 4, GPU_CLOCK_THRESHOLD);
        assert_int_equal(r.reasons, cases[k].reasons);
        assert_int_equal(r.throttled_samples, cases[k].reasons ? 1 : 0);
        assert_int_equal(r.throttled, cases[k].reasons != 0);
        assert_int_equal(r.slow_samples, 0);
    }
    /* reasons while idle do not count */
    for (int i = 0; i < 4; i++)
        g0[i] = (struct s){i == 0 ? 0.9 : 0.1, 1900, i == 0 ? 0 : 0x40, 1e9};
    struct gpu_clock_run r = mark(g0, 4, GPU_CLOCK_THRESHOLD);
    assert_int_equal(r.busy_samples, 1);
    assert_int_equal(r.reasons, 0);
    assert_false(r.throttled);
    series_registry_free(&reg);
}

/* A run is throttled from max(1, 10 % of its busy samples) throttled samples on. */
static void test_ten_percent_rule(void **state)
{
    (void)state;
    registry();
    known_max();
    struct s g0[25];
    for (int i = 0; i < 25; i++)
        g0[i] = (struct s){0.9, 1900, 0, 1e9};
    g0[0].mhz = 900; /* a clock ramp at the start: 1 of 25 */
    struct gpu_clock_run r = mark(g0, 25, GPU_CLOCK_THRESHOLD);
    assert_int_equal(r.throttled_samples, 1);
    assert_false(r.throttled);
    g0[10].reasons = 0x4; /* 2 of 25 = 8 % */
    r = mark(g0, 25, GPU_CLOCK_THRESHOLD);
    assert_int_equal(r.throttled_samples, 2);
    assert_false(r.throttled);
    g0[20].reasons = 0x20; /* 3 of 25 = 12 % */
    r = mark(g0, 25, GPU_CLOCK_THRESHOLD);
    assert_int_equal(r.throttled_samples, 3);
    assert_true(r.throttled);
    assert_int_equal(r.reasons, GPU_CLOCK_POWER | GPU_CLOCK_THERMAL);
    /* 20 busy samples: 2 is exactly 10 % */
    g0[20].reasons = 0;
    r = mark(g0, 20, GPU_CLOCK_THRESHOLD);
    assert_int_equal(r.throttled_samples, 2);
    assert_true(r.throttled);
    /* few samples: one is enough */
    r = mark(g0, 3, GPU_CLOCK_THRESHOLD);
    assert_int_equal(r.busy_samples, 3);
    assert_int_equal(r.throttled_samples, 1);
    assert_true(r.throttled);
    series_registry_free(&reg);
}

static void test_unknown_max_clock(void **state)
{
    (void)state;
    registry();
    for (int g = 0; g < GPU_CLOCK_MAX_GPUS; g++)
        max_hz[g] = NAN;
    struct s g0[5];
    for (int i = 0; i < 5; i++)
        g0[i] = (struct s){0.9, 300, 0, 1e9}; /* low, but against no known maximum */
    struct gpu_clock_run r = mark(g0, 5, GPU_CLOCK_THRESHOLD);
    assert_true(r.measured);
    assert_int_equal(r.busy_samples, 5);
    assert_int_equal(r.slow_samples, 0);
    assert_false(r.throttled);
    assert_true(isnan(r.scaling));
    g0[1].reasons = 0x40;
    r = mark(g0, 5, GPU_CLOCK_THRESHOLD);
    assert_true(r.throttled);
    assert_int_equal(r.reasons, GPU_CLOCK_THERMAL);
    assert_true(isnan(r.scaling));
    /* no table of maxima at all */
    struct sample_table t;
    fill(&t, g0, NULL, 5);
    gpu_clock_run_compute(&t, NULL, false, GPU_CLOCK_THRESHOLD, &r);
    assert_true(r.throttled);
    assert_true(isnan(r.scaling));
    sample_table_free(&t);
    series_registry_free(&reg);
}

/* GPU 0 busy and slow, GPU 1 busy at full clock: which one counts decides the run. */
static void test_gpu_choice(void **state)
{
    (void)state;
    registry();
    known_max();
    struct s g0[4], g1[4];
    struct sample_table t;
    struct gpu_clock_run r;
    /* the workload's memory is on GPU 1 (0 on GPU 0: someone else's job is busy there) */
    for (int i = 0; i < 4; i++) {
        g0[i] = (struct s){0.9, 800, 0x40, 0};
        g1[i] = (struct s){0.9, 1900, 0, i == 2 ? 1e9 : 0};
    }
    fill(&t, g0, g1, 4);
    gpu_clock_run_compute(&t, max_hz, false, GPU_CLOCK_THRESHOLD, &r);
    assert_int_equal(r.busy_samples, 4);
    assert_false(r.throttled);
    assert_true(fabs(r.scaling - 0.95) < 1e-12);
    /* --all-gpus: both */
    gpu_clock_run_compute(&t, max_hz, true, GPU_CLOCK_THRESHOLD, &r);
    assert_int_equal(r.busy_samples, 8);
    assert_int_equal(r.throttled_samples, 4);
    assert_true(r.throttled);
    sample_table_free(&t);
    /* no process memory readable: the GPUs with utilisation > 0 count, not an idle one */
    for (int i = 0; i < 4; i++) {
        g0[i] = (struct s){0.9, 800, 0, NA};
        g1[i] = (struct s){0, 300, 0x40, NA};
    }
    fill(&t, g0, g1, 4);
    gpu_clock_run_compute(&t, max_hz, false, GPU_CLOCK_THRESHOLD, &r);
    assert_int_equal(r.busy_samples, 4);
    assert_int_equal(r.slow_samples, 4);
    assert_int_equal(r.reasons, 0);
    assert_true(r.throttled);
    sample_table_free(&t);
    /* memory known to be 0 everywhere: the workload used no GPU, nothing is measured */
    for (int i = 0; i < 4; i++)
        g0[i] = (struct s){0.9, 800, 0x40, 0};
    fill(&t, g0, NULL, 4);
    gpu_clock_run_compute(&t, max_hz, false, GPU_CLOCK_THRESHOLD, &r);
    assert_false(r.measured);
    assert_false(r.throttled);
    sample_table_free(&t);
    series_registry_free(&reg);
}

/* Adds GPU index, usable or not, with maximum SM clock hz (NAN: unknown) to m. */
static void add_gpu(struct machine_facts *m, int index, bool usable, double hz)
{
    struct gpu_facts g = gpu_facts_unknown(index);
    g.usable = usable;
    g.sm_clock_max_hertz = hz;
    source_facts_add_gpu(&m->sources, &g);
}

static void test_max_from_facts(void **state)
{
    (void)state;
    struct machine_facts m = {.n_cpu_features = 0};
    add_gpu(&m, 0, true, 1980000000);
    add_gpu(&m, 1, false, NAN);
    add_gpu(&m, 2, false, 1.41e9);
    add_gpu(&m, 99, false, 1e9);
    add_gpu(&m, 3, false, 0);
    double hz[GPU_CLOCK_MAX_GPUS];
    gpu_clock_max_hertz(&m, hz);
    assert_true(hz[0] == 1.98e9);
    assert_true(isnan(hz[1]));
    assert_true(hz[2] == 1.41e9);
    assert_true(isnan(hz[3]));
    assert_true(isnan(hz[4]));
    machine_facts_free(&m);
    gpu_clock_max_hertz(NULL, hz);
    assert_true(isnan(hz[0]));
}

/* ---- over the runs: summary_compute ---------------------------------------------------- */

static struct run_config cfg;
static struct result res;

static int has_warning(const char *code, const char *part)
{
    for (size_t i = 0; i < res.summary.n_warnings; i++)
        if (!strcmp(res.summary.warnings[i].code, code))
            return !part || strstr(res.summary.warnings[i].message, part) != NULL;
    return 0;
}

/* A result of n ok runs of wall 100 + i ms on GPU 0 (max 2000 MHz in the machine's facts); the
 * runs in slow[] run it at 1000 MHz (50 %). */
static void runs(size_t n, const bool *slow, bool discard)
{
    memset(&cfg, 0, sizeof cfg);
    cfg.discard_throttled = discard;
    result_init(&res, &cfg);
    add_gpu(&res.facts, 0, true, MAX_MHZ * MHZ); /* as result_capture_environment would */
    for (size_t i = 0; i < n; i++) {
        struct repetition *rep = result_add_rep(&res, false);
        rep->outcome.status = RUN_OK;
        rep->outcome.wall_ns = (int64_t)(100 + i) * MS;
        stages_aggregate(&rep->log, 1000 * MS, rep->outcome.wall_ns, &rep->stages);
        struct s g0[4];
        for (int k = 0; k < 4; k++)
            g0[k] = (struct s){0.9, slow[i] ? 1000 : 1900, 0, 1e9};
        fill(&rep->samples, g0, NULL, 4);
    }
    summary_compute(&res, &res.facts);
}

static void test_summary_and_discard(void **state)
{
    (void)state;
    registry();
    const bool slow[] = {false, true, false, true, false};
    runs(5, slow, false);
    const struct gpu_clock_summary *gc = &res.summary.gpu_clock;
    assert_int_equal(res.summary.n_used, 5);
    assert_int_equal(gc->runs, 5);
    assert_int_equal(gc->throttled_runs, 2);
    assert_int_equal(gc->discarded_runs, 0);
    assert_true(gc->threshold == GPU_CLOCK_THRESHOLD);
    assert_true(fabs(gc->scaling_median - 0.95) < 1e-12);
    assert_true(fabs(gc->scaling_min - 0.5) < 1e-12);
    assert_true(res.reps[1].gpu_clock.throttled && !res.reps[0].gpu_clock.throttled);
    assert_true(has_warning("gpu_throttling", "in 2 of 5 runs"));
    assert_true(has_warning("gpu_throttling", "clock scaling 50 %"));
    assert_true(has_warning("gpu_throttling", "--discard-throttled"));
    assert_false(has_warning("throttled_discarded", NULL));
    result_free(&res);

    /* --discard-throttled: the statistics are over the 3 others */
    runs(5, slow, true);
    gc = &res.summary.gpu_clock;
    assert_int_equal(res.summary.n_ok, 5);
    assert_int_equal(res.summary.n_used, 3);
    assert_int_equal(res.summary.wall.n, 3);
    assert_true(res.summary.wall.max == 104 * MS);
    assert_true(res.summary.wall.median == 102 * MS);
    assert_int_equal(gc->throttled_runs, 2);
    assert_int_equal(gc->discarded_runs, 2);
    assert_true(fabs(gc->scaling_min - 0.95) < 1e-12); /* over the used runs */
    assert_true(has_warning("throttled_discarded", "2 of 5 runs were throttled"));
    assert_true(has_warning("gpu_throttling", NULL));
    assert_false(has_warning("gpu_throttling", "leave those runs out"));
    result_free(&res);

    /* every run throttled: none is left out, and that is said */
    const bool all[] = {true, true, true};
    runs(3, all, true);
    gc = &res.summary.gpu_clock;
    assert_int_equal(res.summary.n_used, 3);
    assert_int_equal(gc->discarded_runs, 0);
    assert_true(gc->kept_all);
    assert_true(has_warning("throttled_kept", "statistics include throttled runs"));
    assert_false(has_warning("throttled_discarded", NULL));
    result_free(&res);

    /* no throttled run: no warning */
    const bool none[] = {false, false, false};
    runs(3, none, true);
    assert_int_equal(res.summary.gpu_clock.runs, 3);
    assert_int_equal(res.summary.gpu_clock.throttled_runs, 0);
    assert_int_equal(res.summary.n_used, 3);
    assert_false(has_warning("gpu_throttling", NULL));
    assert_false(has_warning("throttled_kept", NULL));
    result_free(&res);
    series_registry_free(&reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_busy_and_idle),
        cmocka_unit_test(test_ratio_threshold),
        cmocka_unit_test(test_reason_bits),
        cmocka_unit_test(test_ten_percent_rule),
        cmocka_unit_test(test_unknown_max_clock),
        cmocka_unit_test(test_gpu_choice),
        cmocka_unit_test(test_max_from_facts),
        cmocka_unit_test(test_summary_and_discard),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
