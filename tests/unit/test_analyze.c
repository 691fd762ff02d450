/* Unit tests of the bottleneck rules (analyze.c, docs/analysis.md): each rule fires on synthetic
 * figures just inside its thresholds and stays silent just outside; "not measured" (NAN, no GPU
 * source) silences rules; precedence, saving estimates, ordering and the bottleneck choice. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analyze_fixture.h"

static void test_unmeasured(void **state)
{
    (void)state;
    struct analysis_context ctx = context();
    struct stage_resources s = stage("load", NAN);
    s.samples = 0;
    s.time_ns = 0.08 * S;
    assert_string_equal(verdict1(&ctx, &s), "unmeasured");
    assert_contains(an.verdicts[0].evidence, "80.00 ms");
    const struct finding *f = finding("unmeasured");
    assert_non_null(f);
    assert_contains(f->recommendation, "--interval to 16.00 ms");
    assert_true(f->saving_ns == 0);

    /* too short for the shortest interval */
    s.time_ns = 0.019 * S;
    run1(&ctx, &s);
    assert_contains(finding("unmeasured")->recommendation, "too short");

    /* a stage that barely counts: a verdict, no finding */
    s.share = 0.049;
    run1(&ctx, &s);
    assert_string_equal(an.verdicts[0].rule, "unmeasured");
    assert_null(finding("unmeasured"));
    s.share = 0.05;
    run1(&ctx, &s);
    assert_non_null(finding("unmeasured"));

    /* zero samples win over figures that are there */
    s = stage("x", 1.0);
    s.samples = 0;
    assert_string_equal(verdict1(&ctx, &s), "unmeasured");

    /* samples, but every figure NAN */
    s = stage("x", NAN);
    assert_string_equal(verdict1(&ctx, &s), "unmeasured");
    assert_contains(an.verdicts[0].evidence, "no resource figure");

    /* few samples: classified, and said to be rough */
    s = stage("x", 1.0);
    s.samples = 4;
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound-single-thread");
    assert_contains(an.verdicts[0].evidence, "only 4 samples");
    s.samples = 5;
    run1(&ctx, &s);
    assert_null(strstr(an.verdicts[0].evidence, "samples"));
}

static void test_gpu_bound(void **state)
{
    (void)state;
    struct analysis_context ctx = context();
    struct stage_resources s = gpu_stage("train", 1.0, 0.90);
    assert_string_equal(verdict1(&ctx, &s), "gpu-bound");
    assert_contains(an.verdicts[0].evidence, "GPU 90 % busy");
    assert_contains(finding("gpu-bound")->recommendation, "tensor cores");
    assert_true(finding("gpu-bound")->saving_ns == 0);

    s.gpu_mem_util = 0.5; /* bandwidth-heavy kernels */
    run1(&ctx, &s);
    assert_contains(finding("gpu-bound")->recommendation, "memory traffic");
    assert_contains(an.verdicts[0].evidence, "its memory 50 % busy");

    s = gpu_stage("train", 1.0, 0.8999);
    assert_string_equal(verdict1(&ctx, &s), "mixed"); /* GPU partly idle, no CPU rule */
    assert_contains(an.verdicts[0].evidence, "GPU waits 10 %");

    /* no GPU source: GPU rules are silent, the CPU figures decide */
    ctx.gpu_measured = false;
    s = gpu_stage("train", 1.0, 0.99);
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound-single-thread");
    assert_null(strstr(an.verdicts[0].evidence, "GPU"));

    ctx = context();
    s = gpu_stage("train", 1.0, NAN);
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound-single-thread");
}

static void test_memory_bound(void **state)
{
    (void)state;
    struct analysis_context ctx = context();
    struct stage_resources s = stage("load", 0.3);
    s.swap_in_bps = 0.75 * MIB;
    s.swap_out_bps = 0.25 * MIB;
    s.psi_mem_full = 0.25;
    assert_string_equal(verdict1(&ctx, &s), "memory-bound");
    assert_contains(an.verdicts[0].evidence, "swapping 768.0 KiB/s in and 256.0 KiB/s out");
    assert_near(finding("memory-bound")->saving_ns, 0.25 * S);

    s.swap_out_bps = 0.25 * MIB - 1;
    assert_string_equal(verdict1(&ctx, &s), "mixed");

    s = stage("load", 0.3);
    s.psi_mem_some = 0.10;
    assert_string_equal(verdict1(&ctx, &s), "memory-bound");
    assert_true(finding("memory-bound")->saving_ns == 0); /* no "full" figure: cannot say */
    s.psi_mem_some = 0.0999;
    assert_string_equal(verdict1(&ctx, &s), "mixed");

    /* before io-bound (swapping shows as I/O waits) and the CPU rules */
    s = stage("load", 0.3);
    s.psi_mem_some = 0.5;
    s.psi_io_some = 0.5;
    assert_string_equal(verdict1(&ctx, &s), "memory-bound");
    s.cpu_cores = 1.0;
    assert_string_equal(verdict1(&ctx, &s), "memory-bound");

    /* a GPU-bound stage stays GPU-bound; the pressure is a finding of its own */
    s = gpu_stage("train", 1.0, 0.95);
    s.swap_in_bps = 2 * MIB;
    assert_string_equal(verdict1(&ctx, &s), "gpu-bound");
    assert_non_null(finding("memory-pressure"));
    assert_null(finding("memory-bound"));
}

static void test_launch_bound(void **state)
{
    (void)state;
    struct analysis_context ctx = context();
    ctx.batch_size = 32;
    struct stage_resources s = gpu_stage("train", 1.0, 0.30);
    assert_string_equal(verdict1(&ctx, &s), "launch-bound");
    assert_contains(an.verdicts[0].evidence, "GPU 30 % busy");
    assert_contains(an.verdicts[0].evidence, "at batch 32");
    const struct finding *f = finding("launch-bound");
    assert_contains(f->recommendation, "CUDA graph");
    assert_contains(f->recommendation, "from 32");
    assert_near(f->saving_ns, S * (1 - 0.30 / 0.90));

    ctx.batch_size = 64;
    assert_string_equal(verdict1(&ctx, &s), "launch-bound");
    ctx.batch_size = 65; /* a large batch: a single thread feeding the GPU */
    assert_string_equal(verdict1(&ctx, &s), "gpu-starved");
    ctx.batch_size = -1;
    assert_string_equal(verdict1(&ctx, &s), "launch-bound");
    assert_contains(an.verdicts[0].evidence, "batch size not given");

    s.cpu_cores = 0.8;
    assert_string_equal(verdict1(&ctx, &s), "launch-bound");
    s.cpu_cores = 1.3;
    assert_string_equal(verdict1(&ctx, &s), "launch-bound");
    s.cpu_cores = 1.31;
    assert_string_equal(verdict1(&ctx, &s), "gpu-starved");
    s.cpu_cores = 0.79;
    assert_string_equal(verdict1(&ctx, &s), "mixed");

    s.cpu_cores = 1.0;
    s.gpu_util = 0.5;
    assert_string_equal(verdict1(&ctx, &s), "mixed");
    s.gpu_util = 0.4999;
    assert_string_equal(verdict1(&ctx, &s), "launch-bound");
    /* the GPU does (almost) nothing in the stage: a CPU stage */
    s.gpu_util = 0.05;
    assert_string_equal(verdict1(&ctx, &s), "launch-bound");
    s.gpu_util = 0.0499;
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound-single-thread");
    assert_contains(an.verdicts[0].evidence, "1.0 of 16 cores busy, GPU idle 95 % of the stage");
}

static void test_gpu_starved(void **state)
{
    (void)state;
    struct analysis_context ctx = context();
    struct stage_resources s = gpu_stage("train", 3.9, 0.38);
    assert_string_equal(verdict1(&ctx, &s), "gpu-starved");
    assert_string_equal(an.verdicts[0].evidence, "GPU 38 % busy while 3.9 of 16 cores feed it");
    const struct finding *f = finding("gpu-starved");
    assert_contains(f->recommendation, "DataLoader workers");
    assert_near(f->saving_ns, S * (1 - 0.38 / 0.90));

    /* the CPUs are saturated: more workers cannot help */
    s.cpu_cores = 11.2;
    run1(&ctx, &s);
    assert_contains(finding("gpu-starved")->recommendation, "more workers cannot help");
    s.cpu_cores = 11.19;
    run1(&ctx, &s);
    assert_null(strstr(finding("gpu-starved")->recommendation, "cannot help"));

    /* one thread with a large batch: the loader is single-threaded */
    ctx.batch_size = 256;
    s.cpu_cores = 1.0;
    s.other_cores = 10;
    run1(&ctx, &s);
    assert_string_equal(an.verdicts[0].rule, "gpu-starved");
    assert_contains(finding("gpu-starved")->recommendation, "num_workers=6");

    /* the workload's own I/O stall is named in the evidence; the machine's is not */
    s.psi_io_some = 0.4;
    run1(&ctx, &s);
    assert_null(strstr(an.verdicts[0].evidence, "I/O"));
    s.io_blocked = 0.4;
    run1(&ctx, &s);
    assert_contains(an.verdicts[0].evidence, "blocked on I/O 40 %");

    /* device metadata "cpu" with an idle GPU: not a GPU stage */
    ctx = context();
    ctx.device = "cpu";
    s = gpu_stage("train", 3.9, 0);
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound-parallel");
    assert_null(strstr(an.verdicts[0].evidence, "GPU"));
    /* ...but a GPU that works counts whatever the metadata says */
    s.gpu_util = 0.2;
    assert_string_equal(verdict1(&ctx, &s), "gpu-starved");

    /* no GPU source */
    ctx = context();
    ctx.gpu_measured = false;
    s = gpu_stage("train", 3.9, 0.38);
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound-parallel");
}

static void test_cpu_single_thread(void **state)
{
    (void)state;
    struct analysis_context ctx = context();
    struct stage_resources s = stage("preprocess", 1.0);
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound-single-thread");
    assert_string_equal(an.verdicts[0].evidence, "1.0 of 16 cores busy");
    const struct finding *f = finding("cpu-bound-single-thread");
    assert_contains(f->recommendation, "about 8 workers");
    assert_near(f->saving_ns, S * (1 - 1 / (1 + 0.6 * 7)));

    s.cpu_cores = 0.8;
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound-single-thread");
    s.cpu_cores = 1.3;
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound-single-thread");
    s.cpu_cores = 0.7999;
    assert_string_equal(verdict1(&ctx, &s), "mixed");
    s.cpu_cores = 1.3001;
    assert_string_equal(verdict1(&ctx, &s), "mixed");

    /* other processes leave 4 cores: 4 workers */
    s.cpu_cores = 1.0;
    s.other_cores = 12;
    run1(&ctx, &s);
    assert_contains(finding("cpu-bound-single-thread")->recommendation, "about 4 workers");
    assert_near(finding("cpu-bound-single-thread")->saving_ns, S * (1 - 1 / (1 + 0.6 * 3)));
    s.other_cores = 14.6; /* 1.4 cores left, rounded to one: nothing to parallelise onto */
    run1(&ctx, &s);
    assert_true(finding("cpu-bound-single-thread")->saving_ns == 0);
    assert_contains(finding("cpu-bound-single-thread")->recommendation, "quiet machine");

    /* two CPUs */
    ctx.ncpu = 2;
    s.other_cores = NAN;
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound-single-thread");
    assert_near(finding("cpu-bound-single-thread")->saving_ns, S * (1 - 1 / 1.6));

    /* CPU count unknown: still single-threaded, no estimate */
    ctx.ncpu = 0;
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound-single-thread");
    assert_string_equal(an.verdicts[0].evidence, "1.0 cores busy");
    assert_true(finding("cpu-bound-single-thread")->saving_ns == 0);
}

static void test_one_cpu(void **state)
{
    (void)state;
    struct analysis_context ctx = context();
    ctx.ncpu = 1;
    struct stage_resources s = stage("fit", 0.97);
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound");
    assert_contains(an.verdicts[0].evidence, "1.0 of 1 core busy");
    assert_contains(finding("cpu-bound")->recommendation, "threads cannot help");
    assert_true(finding("cpu-bound")->saving_ns == 0);
    s.cpu_cores = 0.8;
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound");
    s.cpu_cores = 0.7999;
    assert_string_equal(verdict1(&ctx, &s), "mixed");
    /* waiting on I/O with the CPU not saturated: io-bound even above half a core */
    s.io_blocked = 0.3;
    assert_string_equal(verdict1(&ctx, &s), "io-bound");
    s.cpu_cores = 0.1;
    s.io_blocked = NAN;
    assert_string_equal(verdict1(&ctx, &s), "idle");
}

/* A collective of a multi-rank job keeps its cores busy polling: the verdict says so and makes
 * no cpu-bound finding; the same stage in a job without ranks (a stage named "barrier" in a
 * thread pool) keeps the usual one. */
static void test_collective_polls(void **state)
{
    (void)state;
    struct analysis_context ctx = context();
    struct stage_resources s = stage("allreduce", 15.2);
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound-parallel");
    assert_non_null(finding("cpu-bound-parallel"));
    struct rank_stage_figures r = {.name = "allreduce", .ranks = 2, .critical_ns = 0.1 * S,
                                   .median_ns = 0.1 * S, .min_ns = 0.1 * S, .slowest_ns = 0.1 * S};
    ctx.rank_stages = &r;
    ctx.n_rank_stages = 1;
    ctx.wall_ns = 10 * S;
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound-parallel");
    assert_contains(an.verdicts[0].evidence, "a collective: the library polls while it waits");
    assert_null(finding("cpu-bound-parallel"));
    s = stage("train", 15.2); /* not a collective: unchanged beside ranks */
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound-parallel");
    assert_contains(finding("cpu-bound-parallel")->recommendation, "the CPUs are the limit");
}

static void test_cpu_parallel(void **state)
{
    (void)state;
    struct analysis_context ctx = context();
    struct stage_resources s = stage("fit", 15.2);
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound-parallel");
    assert_string_equal(an.verdicts[0].evidence, "15.2 of 16 cores busy");
    assert_contains(finding("cpu-bound-parallel")->recommendation, "the CPUs are the limit");
    assert_true(finding("cpu-bound-parallel")->saving_ns == 0);

    /* 4 of 16: room to double the threads */
    s.cpu_cores = 4.0;
    run1(&ctx, &s);
    const struct finding *f = finding("cpu-bound-parallel");
    assert_contains(f->recommendation, "12 cores are idle");
    assert_contains(f->recommendation, "towards 8");
    assert_near(f->saving_ns, S * (1 - 1 / 1.6));

    s.cpu_cores = 1.5;
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound-parallel");
    s.cpu_cores = 1.4999;
    assert_string_equal(verdict1(&ctx, &s), "mixed");

    /* two CPUs: 70 % of the machine is 1.4 cores */
    ctx.ncpu = 2;
    s.cpu_cores = 1.4;
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound-parallel");
    assert_true(finding("cpu-bound-parallel")->saving_ns == 0);
    s.cpu_cores = 1.3999;
    assert_string_equal(verdict1(&ctx, &s), "mixed");
}

static void test_io_bound(void **state)
{
    (void)state;
    struct analysis_context ctx = context();
    /* the workload's own tasks blocked on I/O (processes in state D at a fifth of the samples) */
    struct stage_resources s = stage("read", 0.3);
    s.io_blocked = 0.20;
    s.read_bps = 120 * MIB;
    assert_string_equal(verdict1(&ctx, &s), "io-bound");
    assert_contains(an.verdicts[0].evidence,
                    "its tasks were blocked on I/O 20 % of the time (share of samples in state D)");
    assert_contains(an.verdicts[0].evidence, "0.3 of 16 cores busy, reading 120.0 MiB/s");
    assert_near(finding("io-bound")->saving_ns, 0.2 * S);
    s.io_blocked = 0.1999;
    assert_string_equal(verdict1(&ctx, &s), "mixed");
    /* from the kernel's delay accounting where it is on */
    s.io_blocked = 0.5;
    s.io_blocked_delayacct = true;
    assert_string_equal(verdict1(&ctx, &s), "io-bound");
    assert_contains(an.verdicts[0].evidence, "50 % of the time (the kernel's delay accounting)");

    /* issue 35: a stage that sleeps beside another process's disk writes (the machine stalled
     * on I/O 67 % of the time, the workload blocked 0 % and moving no bytes) is not io-bound,
     * and no I/O figure or advice is given for it: the machine's stall is others' */
    s = stage("sleep", 0.01);
    s.psi_io_some = 0.67;
    s.iowait = 0.3;
    s.io_blocked = 0;
    s.read_bps = s.write_bps = 0;
    assert_string_equal(verdict1(&ctx, &s), "idle");
    assert_null(strstr(an.verdicts[0].evidence, "67"));
    for (size_t i = 0; i < an.n_findings; i++)
        assert_null(strstr(an.findings[i].recommendation, "WebDataset"));
    s.cpu_cores = 0.3;
    assert_string_equal(verdict1(&ctx, &s), "mixed");
    /* ...nor where the own figure is absent (a result made before it was sampled) and the
     * workload moved no data */
    s.io_blocked = NAN;
    assert_string_equal(verdict1(&ctx, &s), "mixed");
    s.read_bps = 0.99 * MIB;
    assert_string_equal(verdict1(&ctx, &s), "mixed");
    /* such a result reading 1 MiB/s or more: the machine's stall, said to be machine-wide */
    s.read_bps = 1 * MIB;
    assert_string_equal(verdict1(&ctx, &s), "io-bound");
    assert_contains(an.verdicts[0].evidence,
                    "stalled on I/O 67 % of the time (pressure stall information, machine-wide)");
    /* without PSI: iowait is a share of all CPUs, 1.25 % of 16 is 0.2 of a CPU */
    s.psi_io_some = NAN;
    s.iowait = 0.0125;
    assert_string_equal(verdict1(&ctx, &s), "io-bound");
    assert_contains(an.verdicts[0].evidence, "from iowait, machine-wide");
    s.iowait = 0.0124;
    assert_string_equal(verdict1(&ctx, &s), "mixed");

    /* the CPUs busy: not I/O-bound (at half the CPUs and above) */
    s = stage("read", 7.99);
    s.io_blocked = 0.5;
    assert_string_equal(verdict1(&ctx, &s), "io-bound");
    s.cpu_cores = 8.0;
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound-parallel");
    /* a saturated thread comes first */
    s.cpu_cores = 1.0;
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound-single-thread");
    assert_contains(an.verdicts[0].evidence, "blocked on I/O 50 %");

    /* uncached reads beside busy loops: blocked on its own I/O 80 % of the time, and its thread
     * waited for a CPU too when the disk answered (0.3 on average): what it waits for most is
     * the disk (it was cpu-starved); the other way round it is starved */
    s = stage("read", 0.05);
    s.io_blocked = 0.8;
    s.cpu_wait = 0.3;
    s.other_cores = 2;
    assert_string_equal(verdict1(&ctx, &s), "io-bound");
    s.io_blocked = 0.25;
    assert_string_equal(verdict1(&ctx, &s), "cpu-starved");

    /* a GPU stage waiting on I/O */
    s = gpu_stage("train", 0.5, 0.3);
    s.io_blocked = 0.4;
    assert_string_equal(verdict1(&ctx, &s), "io-bound");
    assert_contains(an.verdicts[0].evidence, "GPU 30 % busy");
}

static void test_idle(void **state)
{
    (void)state;
    struct analysis_context ctx = context();
    struct stage_resources s = stage("wait", 0.05);
    s.io_blocked = 0.01;
    s.psi_io_some = 0.5; /* others' I/O: not the stage's (issue 35) */
    assert_string_equal(verdict1(&ctx, &s), "idle");
    assert_string_equal(an.verdicts[0].evidence,
                        "0.05 of 16 cores busy, no GPU used, blocked on I/O 1 %");
    assert_true(finding("idle")->saving_ns == 0);
    /* no GPU measured (a machine without a driver): no GPU words at all (issue 35) */
    ctx.gpu_measured = false;
    s.io_blocked = NAN;
    s.cpu_cores = 0.1999;
    assert_string_equal(verdict1(&ctx, &s), "idle");
    assert_string_equal(an.verdicts[0].evidence, "0.2 of 16 cores busy");
    s.cpu_cores = 0.2;
    assert_string_equal(verdict1(&ctx, &s), "mixed");

    /* a GPU that idles too */
    ctx.gpu_measured = true;
    s = gpu_stage("wait", 0.05, 0.01);
    assert_string_equal(verdict1(&ctx, &s), "idle");
    assert_contains(an.verdicts[0].evidence, "GPU idle");
    /* a GPU that works: not idle */
    s.gpu_util = 0.3;
    assert_string_equal(verdict1(&ctx, &s), "mixed");
    assert_contains(an.verdicts[0].evidence, "take turns");
}

static void test_nan_silences_rules(void **state)
{
    (void)state;
    struct analysis_context ctx = context();
    /* only GPU utilisation measured: GPU-bound can be said, nothing else */
    struct stage_resources s = gpu_stage("train", NAN, 0.95);
    assert_string_equal(verdict1(&ctx, &s), "gpu-bound");
    /* without the CPU figure nothing else can be said (issue 13: it was "mixed", and told to
     * look for sources that could not start although none had failed) */
    s.gpu_util = 0.3;
    assert_string_equal(verdict1(&ctx, &s), "unmeasured");
    assert_contains(an.verdicts[0].evidence, "CPU use not measured in 100 samples");
    /* I/O stalls without the CPU figure: not io-bound */
    s = stage("read", NAN);
    s.psi_io_some = 0.9;
    assert_string_equal(verdict1(&ctx, &s), "unmeasured");
    /* NAN everywhere else: no extra finding */
    s = stage("x", 1.0);
    run1(&ctx, &s);
    assert_int_equal(an.n_findings, 1);
}

static void test_gpu_memory_headroom(void **state)
{
    (void)state;
    struct analysis_context ctx = context();
    ctx.batch_size = 32;
    struct stage_resources s = gpu_stage("train", 1.0, 0.95);
    s.gpu_mem_total_bytes = 140 * GIB;
    s.gpu_mem_peak_bytes = 14 * GIB;
    run1(&ctx, &s);
    const struct finding *f = finding("gpu-memory-headroom");
    assert_non_null(f);
    assert_string_equal(f->evidence, "GPU memory peak 14.00 GiB of 140.0 GiB (10 %) at batch 32");
    assert_contains(f->recommendation, "at most about 9x");
    assert_true(f->saving_ns == 0);

    s.gpu_mem_peak_bytes = 70 * GIB;
    run1(&ctx, &s);
    assert_null(finding("gpu-memory-headroom"));
    s.gpu_mem_peak_bytes = 70 * GIB - 1;
    run1(&ctx, &s);
    assert_non_null(finding("gpu-memory-headroom"));

    s.gpu_mem_total_bytes = NAN;
    run1(&ctx, &s);
    assert_null(finding("gpu-memory-headroom"));

    ctx.gpu_measured = false;
    s.gpu_mem_total_bytes = 140 * GIB;
    run1(&ctx, &s);
    assert_null(finding("gpu-memory-headroom"));
}

static void test_mixed_precision(void **state)
{
    (void)state;
    struct analysis_context ctx = context();
    ctx.gpu_tensor_cores = true;
    ctx.gpu_name = "NVIDIA H200";
    ctx.precision = "fp32";
    struct stage_resources s = gpu_stage("step", 1.0, 0.95);
    run1(&ctx, &s);
    const struct finding *f = finding("mixed-precision");
    assert_non_null(f);
    assert_string_equal(f->evidence, "GPU 95 % busy in fp32 on NVIDIA H200, which has tensor cores");
    assert_near(f->saving_ns, S * (1 - 1 / 1.3));

    /* precision not declared: said, without an estimate */
    ctx.precision = NULL;
    run1(&ctx, &s);
    assert_contains(finding("mixed-precision")->evidence, "precision not declared");
    assert_true(finding("mixed-precision")->saving_ns == 0);

    ctx.precision = "bf16";
    run1(&ctx, &s);
    assert_null(finding("mixed-precision"));
    ctx.precision = "tf32";
    run1(&ctx, &s);
    assert_null(finding("mixed-precision"));

    ctx.precision = "fp32";
    ctx.gpu_tensor_cores = false;
    run1(&ctx, &s);
    assert_null(finding("mixed-precision"));

    /* a training stage at least half busy counts; a launch-bound one does not */
    ctx.gpu_tensor_cores = true;
    s = gpu_stage("train_epoch", 1.0, 0.5);
    run1(&ctx, &s);
    assert_non_null(finding("mixed-precision"));
    assert_true(finding("mixed-precision")->saving_ns == 0);
    s.gpu_util = 0.4999;
    run1(&ctx, &s);
    assert_string_equal(an.verdicts[0].rule, "launch-bound");
    assert_null(finding("mixed-precision"));
    /* neither GPU-bound nor training */
    s = gpu_stage("eval", 1.0, 0.7);
    run1(&ctx, &s);
    assert_null(finding("mixed-precision"));
}

/* The same finding for fp32 training that the CPU computes, on a CPU with bf16 matrix
 * instructions (docs/analysis.md, "Extra findings"). */
static void test_cpu_mixed_precision(void **state)
{
    (void)state;
    struct analysis_context ctx = context();
    ctx.cpu_bf16 = "avx512_bf16";
    ctx.precision = "fp32";
    struct stage_resources s = stage("train", 8.0);
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound-parallel");
    const struct finding *f = finding("mixed-precision");
    assert_non_null(f);
    assert_string_equal(f->evidence, "training on the CPU in fp32 with 8.0 of 16 cores busy, and "
                                     "this CPU has avx512_bf16");
    assert_contains(f->recommendation, "try bf16 mixed precision on the CPU");
    assert_contains(f->recommendation, "mlbench-workload imgclf --precision bf16");
    assert_contains(f->recommendation, "mlbench compare --max-accuracy-drop");
    assert_near(f->saving_ns, S * (1 - 1 / 1.3));

    /* a single thread training counts too (case-insensitive name), and PyTorch gets its knob */
    ctx.framework = "torch";
    ctx.cpu_bf16 = "amx_bf16";
    s = stage("Train_epoch", 1.0);
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound-single-thread");
    assert_contains(finding("mixed-precision")->evidence, "this CPU has amx_bf16");
    assert_contains(finding("mixed-precision")->recommendation, "torch.autocast(\"cpu\", "
                    "dtype=torch.bfloat16) around the forward pass");
    assert_lacks(finding("mixed-precision")->recommendation, "mlbench-workload");
    ctx.framework = NULL;
    ctx.cpu_bf16 = "avx512_bf16";

    /* precision not declared: said, without an estimate */
    ctx.precision = NULL;
    s = stage("train", 8.0);
    run1(&ctx, &s);
    assert_contains(finding("mixed-precision")->evidence, "in fp32 (precision not declared)");
    assert_contains(finding("mixed-precision")->recommendation, "if it runs in fp32, try bf16");
    assert_true(finding("mixed-precision")->saving_ns == 0);

    /* already in lower precision */
    static const char *const lower[] = {"bf16", "fp16", "mixed"};
    for (size_t i = 0; i < 3; i++) {
        ctx.precision = lower[i];
        run1(&ctx, &s);
        assert_null(finding("mixed-precision"));
    }

    /* a CPU without bf16 matrix instructions */
    ctx.precision = "fp32";
    ctx.cpu_bf16 = NULL;
    run1(&ctx, &s);
    assert_string_equal(an.verdicts[0].rule, "cpu-bound-parallel");
    assert_null(finding("mixed-precision"));
    ctx.cpu_bf16 = "avx512_bf16";

    /* not a training stage, or one the CPU does not bound */
    s = stage("load", 8.0);
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound-parallel");
    assert_null(finding("mixed-precision"));
    s = stage("train", 0.1);
    assert_string_equal(verdict1(&ctx, &s), "idle");
    assert_null(finding("mixed-precision"));

    /* a GPU used (even idle in this stage): the GPU rule alone, as before */
    s = gpu_stage("train", 8.0, 0.02);
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound-parallel");
    assert_null(finding("mixed-precision"));
    ctx.gpu_tensor_cores = true;
    s = gpu_stage("train", 1.0, 0.95);
    run1(&ctx, &s);
    int n = 0;
    for (size_t i = 0; i < an.n_findings; i++)
        n += !strcmp(an.findings[i].rule, "mixed-precision");
    assert_int_equal(n, 1);
    assert_contains(finding("mixed-precision")->evidence, "which has tensor cores");

    /* a run that says it used a GPU that was not measured: not its CPU's arithmetic */
    ctx = context();
    ctx.cpu_bf16 = "avx512_bf16";
    ctx.gpu_measured = false;
    ctx.device = "cuda";
    s = stage("train", 1.0);
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound-single-thread");
    assert_null(finding("mixed-precision"));
    ctx.device = "CPU";
    run1(&ctx, &s);
    assert_non_null(finding("mixed-precision"));
}

static void test_other_load_and_contention(void **state)
{
    (void)state;
    struct analysis_context ctx = context();
    struct stage_resources s = stage("fit", 1.0);
    s.other_cores = 0.5;
    run1(&ctx, &s);
    assert_non_null(finding("other-load"));
    assert_string_equal(finding("other-load")->evidence,
                        "other processes kept 0.5 cores busy on average (of 16)");
    s.other_cores = 0.4999;
    run1(&ctx, &s);
    assert_null(finding("other-load"));

    s.psi_cpu_some = 0.2;
    s.threads_peak = 64;
    s.cpu_cores = 15.9;
    run1(&ctx, &s);
    assert_contains(finding("cpu-contention")->recommendation, "OMP_NUM_THREADS");
    assert_contains(finding("cpu-contention")->evidence, "up to 64 threads");
    /* a DataLoader is named only where the workload reports one (a plain torch run did not) */
    assert_lacks(finding("cpu-contention")->recommendation, "DataLoader");
    ctx.loader_workers = 2;
    run1(&ctx, &s);
    assert_contains(finding("cpu-contention")->recommendation, "DataLoader worker");
    ctx.loader_workers = -1;
    s.threads_peak = 8;
    run1(&ctx, &s);
    assert_contains(finding("cpu-contention")->recommendation, "CPU quota");
    s.other_cores = 3;
    run1(&ctx, &s);
    assert_contains(finding("cpu-contention")->recommendation, "other processes");
    s.psi_cpu_some = 0.1999;
    run1(&ctx, &s);
    assert_null(finding("cpu-contention"));
}

static void test_stages_total_order_bottleneck(void **state)
{
    (void)state;
    struct analysis_context ctx = context();
    struct stage_resources st[4] = {stage("load", 1.0), stage("step", 1.0), stage("fwd", 4.0),
                                    stage("wait", 0.05)};
    st[0].share = 0.2;
    st[0].time_ns = 0.2 * S;
    st[1].share = 0.6;
    st[1].time_ns = 0.6 * S;
    st[2].depth = 1;        /* inside step: its share does not compete */
    st[2].share = 0.7;
    st[2].time_ns = 0.7 * S;
    st[3].share = 0.2;
    st[3].time_ns = 0.2 * S;
    struct stage_resources total = stage("total", 1.2);
    total.share = 1;
    total.other_cores = 1.0;

    analysis_free(&an);
    analyze(&ctx, st, 4, &total, &an);
    assert_int_equal(an.n_verdicts, 5);
    const char *names[] = {"load", "step", "fwd", "wait", "total"};
    const char *rules[] = {"cpu-bound-single-thread", "cpu-bound-single-thread",
                           "cpu-bound-parallel", "idle", "cpu-bound-single-thread"};
    for (int i = 0; i < 5; i++) {
        assert_string_equal(an.verdicts[i].stage, names[i]);
        assert_string_equal(an.verdicts[i].rule, rules[i]);
    }
    assert_string_equal(an.bottleneck, "step");

    /* largest saving first; equal savings (0) in input order; total repeats no verdict
     * finding (the top-level stages cover the run) but carries the run's other load */
    assert_int_equal(an.n_findings, 5);
    assert_string_equal(an.findings[0].stage, "step");
    assert_near(an.findings[0].saving_ns, 0.6 * S * (1 - 1 / (1 + 0.6 * 7)));
    assert_string_equal(an.findings[1].stage, "fwd");
    assert_near(an.findings[1].saving_ns, 0.7 * S * (1 - 1 / 1.6));
    assert_string_equal(an.findings[2].stage, "load");
    assert_string_equal(an.findings[3].stage, "wait");
    assert_string_equal(an.findings[3].rule, "idle");
    assert_string_equal(an.findings[4].stage, "total");
    assert_string_equal(an.findings[4].rule, "other-load");
    for (size_t i = 1; i < an.n_findings; i++)
        assert_true(an.findings[i - 1].saving_ns >= an.findings[i].saving_ns);

    /* stages that leave most of the run out: total gets its own verdict finding */
    st[1].share = 0.05;
    analysis_free(&an);
    analyze(&ctx, st, 4, &total, &an);
    assert_string_equal(an.bottleneck, "load"); /* ties: the first */
    int total_verdict = 0;
    for (size_t i = 0; i < an.n_findings; i++)
        total_verdict += !strcmp(an.findings[i].stage, "total") &&
                         !strcmp(an.findings[i].rule, "cpu-bound-single-thread");
    assert_int_equal(total_verdict, 1);

    /* no stages: total alone, no bottleneck to point at */
    analysis_free(&an);
    analyze(&ctx, NULL, 0, &total, &an);
    assert_int_equal(an.n_verdicts, 1);
    assert_string_equal(an.verdicts[0].stage, "total");
    assert_null(an.bottleneck);
    assert_non_null(finding("cpu-bound-single-thread"));
    assert_non_null(finding("other-load"));

    /* nothing at all */
    analysis_free(&an);
    analyze(&ctx, NULL, 0, NULL, &an);
    assert_int_equal(an.n_verdicts, 0);
    assert_int_equal(an.n_findings, 0);
    assert_null(an.bottleneck);

    /* without total, run-wide findings come from the top-level stages */
    analysis_free(&an);
    st[0].other_cores = 2;
    st[2].other_cores = 2;
    analyze(&ctx, st, 4, NULL, &an);
    int other = 0;
    for (size_t i = 0; i < an.n_findings; i++)
        other += !strcmp(an.findings[i].rule, "other-load");
    assert_int_equal(other, 1);
    assert_string_equal(finding("other-load")->stage, "load");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_unmeasured, teardown),
        cmocka_unit_test_teardown(test_gpu_bound, teardown),
        cmocka_unit_test_teardown(test_memory_bound, teardown),
        cmocka_unit_test_teardown(test_launch_bound, teardown),
        cmocka_unit_test_teardown(test_gpu_starved, teardown),
        cmocka_unit_test_teardown(test_cpu_single_thread, teardown),
        cmocka_unit_test_teardown(test_one_cpu, teardown),
        cmocka_unit_test_teardown(test_cpu_parallel, teardown),
        cmocka_unit_test_teardown(test_collective_polls, teardown),
        cmocka_unit_test_teardown(test_io_bound, teardown),
        cmocka_unit_test_teardown(test_idle, teardown),
        cmocka_unit_test_teardown(test_nan_silences_rules, teardown),
        cmocka_unit_test_teardown(test_gpu_memory_headroom, teardown),
        cmocka_unit_test_teardown(test_mixed_precision, teardown),
        cmocka_unit_test_teardown(test_cpu_mixed_precision, teardown),
        cmocka_unit_test_teardown(test_other_load_and_contention, teardown),
        cmocka_unit_test_teardown(test_stages_total_order_bottleneck, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
