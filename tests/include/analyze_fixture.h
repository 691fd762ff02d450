/* analyze_fixture: what the unit tests of the bottleneck rules share (test_analyze.c,
 * test_analyze_advice.c): synthetic stages with nothing measured but what a test sets, a
 * 16-CPU context with a working GPU source and no metadata, and checks on the analysis `an`
 * they fill. Header-only; include after <cmocka.h>, <math.h> and <string.h>. */
#ifndef MLBENCH_TEST_ANALYZE_FIXTURE_H
#define MLBENCH_TEST_ANALYZE_FIXTURE_H

#include "analysis/analyze.h"

#define S 1e9 /* ns in a second */
#define MIB 1048576.0
#define GIB (1024 * MIB)

static struct analysis an;

/* A top-level stage of 1 s with 100 samples, with nothing measured but cpu_cores. */
static inline struct stage_resources stage(const char *name, double cpu)
{
    return (struct stage_resources){
        .name = name, .depth = 0, .time_ns = S, .share = 0.5, .samples = 100,
        .cpu_cores = cpu, .cpu_cores_peak = NAN, .cpu_wait = NAN, .rss_peak_bytes = NAN,
        .read_bps = NAN, .write_bps = NAN, .threads_peak = NAN, .processes_peak = NAN,
        .io_blocked = NAN,
        .sys_cpu_busy = NAN,
        .other_cores = NAN, .iowait = NAN, .psi_cpu_some = NAN, .runnable = NAN,
        .psi_io_some = NAN, .psi_io_full = NAN, .psi_mem_some = NAN, .psi_mem_full = NAN,
        .disk_read_bps = NAN, .disk_write_bps = NAN, .swap_in_bps = NAN, .swap_out_bps = NAN,
        .mem_available_min_bytes = NAN, .gpus = 0, .gpu_util = NAN, .gpu_util_peak = NAN,
        .gpu_mem_util = NAN, .gpu_mem_peak_bytes = NAN, .gpu_mem_total_bytes = NAN,
        .gpu_power_watts = NAN, .gpu_sm_active = NAN, .gpu_sm_occupancy = NAN,
        .gpu_tensor_active = NAN, .gpu_dram_active = NAN};
}

/* The same stage on one GPU busy util of the time. */
static inline struct stage_resources gpu_stage(const char *name, double cpu, double util)
{
    struct stage_resources s = stage(name, cpu);
    s.gpus = 1;
    s.gpu_util = util;
    return s;
}

/* 16 CPUs, NVML working, no metadata. */
static inline struct analysis_context context(void)
{
    return (struct analysis_context){.ncpu = 16, .gpu_measured = true, .batch_size = -1,
                                     .threads = -1, .loader_workers = -1, .pin_memory = -1,
                                     .cpu_quota = NAN};
}

/* Analyses the one stage s (no total) into an. */
static inline void run1(const struct analysis_context *ctx, const struct stage_resources *s)
{
    analysis_free(&an);
    analyze(ctx, s, 1, NULL, &an);
    assert_int_equal(an.n_verdicts, 1);
}

static inline const char *verdict1(const struct analysis_context *ctx,
                                   const struct stage_resources *s)
{
    run1(ctx, s);
    return an.verdicts[0].rule;
}

static inline const struct finding *finding(const char *rule)
{
    for (size_t i = 0; i < an.n_findings; i++)
        if (!strcmp(an.findings[i].rule, rule))
            return &an.findings[i];
    return NULL;
}

static inline void assert_near(double x, double want)
{
    if (!(fabs(x - want) <= 1e-6 * fmax(1, fabs(want)))) {
        print_error("%.9g is not %.9g\n", x, want);
        fail();
    }
}

static inline void assert_contains(const char *text, const char *part)
{
    if (!strstr(text, part)) {
        print_error("'%s' does not contain '%s'\n", text, part);
        fail();
    }
}

static inline void assert_lacks(const char *text, const char *part)
{
    if (strstr(text, part)) {
        print_error("'%s' contains '%s'\n", text, part);
        fail();
    }
}

static inline int teardown(void **state)
{
    (void)state;
    analysis_free(&an);
    return 0;
}

#endif
