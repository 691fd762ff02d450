/* Unit tests of the issue-13 rules of analyze.c (docs/analysis.md): the cpu-starved verdict and
 * its three kinds of evidence, framework-aware advice (never what is already set, the knob of
 * the framework in use), stages too short to sample, and the one order of the findings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analyze_fixture.h"

/* Issue 13, point 9: a stage too short to sample says so, and blames no source unless one did
 * not start. `true` run 50 times: one gauge sample per run, no interval inside the stage. */
static void test_too_short_to_sample(void **state)
{
    (void)state;
    struct analysis_context ctx = context();
    ctx.interval_ns = 0.1 * S;
    ctx.runs = 50;
    struct stage_resources s = stage("total", NAN);
    s.time_ns = 0.002 * S;
    s.samples = 50;
    s.iowait = 0.01;
    s.sys_cpu_busy = 0.3;
    assert_string_equal(verdict1(&ctx, &s), "unmeasured");
    assert_contains(an.verdicts[0].evidence, "too short to measure CPU use: 50 samples in all "
                                             "runs together, the stage lasted 2.000 ms");
    assert_contains(an.verdicts[0].evidence, "sampled every 100.0 ms");
    assert_lacks(finding("unmeasured")->recommendation, "could not start");
    assert_lacks(finding("unmeasured")->recommendation, "notes");
    assert_contains(finding("unmeasured")->recommendation, "too short for the shortest");
    /* a busy machine beside it: no CPU quota blamed without the workload's CPU use, and a rate
     * over a short window above 1 is shown as 100 % */
    s.psi_cpu_some = 1.2;
    run1(&ctx, &s);
    assert_contains(finding("cpu-contention")->evidence, "waited for a CPU 100 % of the time");
    assert_lacks(finding("cpu-contention")->recommendation, "quota");
    s.psi_cpu_some = NAN;

    /* adaptive sampling says so */
    ctx.interval_adaptive = true;
    run1(&ctx, &s);
    assert_contains(an.verdicts[0].evidence, "sampled every 10.00 ms at first, up to every "
                                             "100.0 ms");
    /* a source that did not start is named as the reason */
    ctx.cpu_skipped = "proc: cannot open /proc: Permission denied";
    run1(&ctx, &s);
    assert_string_equal(an.verdicts[0].rule, "unmeasured");
    assert_contains(an.verdicts[0].evidence, "proc: cannot open /proc");
}

/* Issue 13, point 2: threads kept from running are cpu-starved, not mixed or idle. */
static void test_cpu_starved(void **state)
{
    (void)state;
    struct analysis_context ctx = context();
    ctx.ncpu = 2;
    /* half a core busy, as beside a burner on the same core */
    struct stage_resources s = stage("step", 0.5);
    s.other_cores = 1.0;
    assert_string_equal(verdict1(&ctx, &s), "mixed"); /* no wait figure: what it said before */
    s.cpu_wait = 0.5;
    assert_string_equal(verdict1(&ctx, &s), "cpu-starved");
    assert_contains(an.verdicts[0].evidence, "waited for a CPU 50 % of the time they were ready");
    assert_contains(an.verdicts[0].evidence, "their own run-queue wait");
    const struct finding *f = finding("cpu-starved");
    assert_contains(f->recommendation, "quieter machine");
    /* issue 35: CPU time other processes took is no saving the workload can make */
    assert_true(f->saving_ns == 0);
    s.other_cores = 0;
    run1(&ctx, &s);
    assert_near(finding("cpu-starved")->saving_ns, 0.5 * S); /* its own threads' waits */
    s.other_cores = 1.0;
    /* precedes idle too */
    s.cpu_cores = 0.1;
    s.cpu_wait = 0.9;
    assert_string_equal(verdict1(&ctx, &s), "cpu-starved");
    /* just below the threshold: 0.2 / (0.5 + 0.2) = 0.286 */
    s.cpu_cores = 0.5;
    s.cpu_wait = 0.2;
    assert_string_equal(verdict1(&ctx, &s), "mixed");
    s.cpu_wait = 0.5 * 0.3 / 0.7 + 1e-9;
    assert_string_equal(verdict1(&ctx, &s), "cpu-starved");
    /* a sleeping stage's wake-up waits: a large share of almost nothing (the
     * integration test of idle saw this) */
    s.cpu_cores = 0.002;
    s.cpu_wait = 0.0999;
    assert_string_equal(verdict1(&ctx, &s), "idle");
    s.cpu_wait = 0.1;
    assert_string_equal(verdict1(&ctx, &s), "cpu-starved");
    /* precedes cpu-bound-single-thread */
    s = stage("step", 1.0);
    s.other_cores = 0;
    s.cpu_wait = 0.6;
    assert_string_equal(verdict1(&ctx, &s), "cpu-starved");

    /* PSI when the own wait is not measured, with a higher threshold, and says so */
    s = stage("step", 0.5);
    s.other_cores = 0.9;
    s.psi_cpu_some = 0.98;
    assert_string_equal(verdict1(&ctx, &s), "cpu-starved");
    assert_contains(an.verdicts[0].evidence, "pressure stall information, machine-wide");
    assert_true(finding("cpu-starved")->saving_ns == 0);
    s.psi_cpu_some = 0.49;
    assert_string_equal(verdict1(&ctx, &s), "mixed");
    /* the workload's CPU use unknown: machine-wide waits do not make it starved */
    s.psi_cpu_some = 0.98;
    s.cpu_cores = NAN;
    assert_string_equal(verdict1(&ctx, &s), "unmeasured");
    s.cpu_cores = 0.5;
    /* a stage that hardly computes: machine-wide waits are not its own */
    s.cpu_cores = 0.19;
    assert_string_equal(verdict1(&ctx, &s), "idle");
    s.cpu_cores = 0.5;
    /* the own wait wins over PSI: others waiting is not this stage waiting */
    s.psi_cpu_some = 0.98;
    s.cpu_wait = 0.01;
    assert_string_equal(verdict1(&ctx, &s), "mixed");

    /* neither: the run-queue length, 5 runnable besides the sampler on 2 CPUs: 60 % each */
    s = stage("step", 0.5);
    s.other_cores = 0.9;
    s.runnable = 6;
    assert_string_equal(verdict1(&ctx, &s), "cpu-starved");
    assert_contains(an.verdicts[0].evidence, "5.0 tasks ready to run on 2 CPUs");
    assert_contains(an.verdicts[0].evidence, "procs_running");
    assert_contains(an.verdicts[0].evidence, "about 60 %");
    s.runnable = 4.9; /* 3.9: 49 % */
    assert_string_equal(verdict1(&ctx, &s), "mixed");
    s.psi_cpu_some = 0.1; /* PSI, when there, is preferred to the run queue */
    s.runnable = 6;
    assert_string_equal(verdict1(&ctx, &s), "mixed");

    /* the workload fills the machine itself: cpu-bound-parallel, not starved */
    s = stage("step", 1.8);
    s.other_cores = 0;
    s.cpu_wait = 1.5;
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound-parallel");

    /* its own threads outnumber the cores: the knobs of the framework in use */
    s = stage("step", 1.0);
    s.other_cores = 0.1;
    s.cpu_wait = 1.0;
    s.threads_peak = 12;
    ctx.framework = "torch";
    ctx.threads = 2;
    ctx.loader_workers = 2;
    assert_string_equal(verdict1(&ctx, &s), "cpu-starved");
    f = finding("cpu-starved");
    assert_contains(f->recommendation, "outnumber the cores");
    assert_contains(f->recommendation, "torch.set_num_threads(1) in the main process (now 2)");
    assert_contains(f->recommendation, "each of the 2 DataLoader workers");
    ctx.framework = NULL;
    run1(&ctx, &s);
    assert_contains(finding("cpu-starved")->recommendation, "OMP_NUM_THREADS");
    assert_lacks(finding("cpu-starved")->recommendation, "torch");
    /* neither others nor too many threads: affinity or a quota; the quota only where the
     * cgroup has one, with its figure (issue 35: cpu.max was advised on a machine without) */
    s.threads_peak = 2;
    run1(&ctx, &s);
    assert_contains(finding("cpu-starved")->recommendation, "cpu.max");
    ctx.cpu_quota = 0;
    run1(&ctx, &s);
    assert_contains(finding("cpu-starved")->recommendation, "affinity (taskset -p)");
    assert_lacks(finding("cpu-starved")->recommendation, "quota");
    ctx.cpu_quota = 1.5;
    run1(&ctx, &s);
    assert_contains(finding("cpu-starved")->recommendation,
                    "the cgroup allows 1.5 cores (cpu.max)");
}

/* Issue 13, point 3: never recommend what is already set; the framework's knob by name. */
static void test_framework_advice(void **state)
{
    (void)state;
    struct analysis_context ctx = context();
    ctx.ncpu = 2;
    struct stage_resources s = stage("step", 1.0);
    s.other_cores = 0;
    /* torch_threads=2 on 2 cores: not told to parallelise with threads */
    ctx.framework = "torch";
    ctx.threads = 2;
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound-single-thread");
    const struct finding *f = finding("cpu-bound-single-thread");
    assert_contains(f->recommendation, "torch already runs 2 threads");
    assert_lacks(f->recommendation, "parallelise it over");
    assert_lacks(f->recommendation, "num_workers");
    assert_true(f->saving_ns == 0);

    /* a gzip read in `load`, no framework, no DataLoader: no DataLoader advice */
    ctx.framework = NULL;
    ctx.threads = -1;
    s = stage("load", 1.0);
    run1(&ctx, &s);
    f = finding("cpu-bound-single-thread");
    assert_lacks(f->recommendation, "num_workers");
    assert_lacks(f->recommendation, "DataLoader");
    assert_contains(f->recommendation, "decompression");

    /* a DataLoader with 2 workers on 2 cores: at the limit, not "use num_workers=2" */
    ctx.framework = "torch";
    ctx.threads = 1;
    ctx.loader_workers = 2;
    s = stage("data_wait", 1.0);
    run1(&ctx, &s);
    f = finding("cpu-bound-single-thread");
    assert_contains(f->recommendation, "num_workers=2 already uses the free cores");
    assert_lacks(f->recommendation, "raise");
    /* ... with free cores: raised from its value */
    ctx.ncpu = 8;
    run1(&ctx, &s);
    assert_contains(finding("cpu-bound-single-thread")->recommendation,
                    "raise DataLoader num_workers from 2 to 8");
    /* a data step named so, with a DataLoader known to run with 0 workers */
    ctx.loader_workers = 0;
    s = stage("augment", 1.0);
    run1(&ctx, &s);
    assert_contains(finding("cpu-bound-single-thread")->recommendation,
                    "raise DataLoader num_workers from 0 to 8");

    /* parallel stage: torch's thread count already at the target, or raised from its value */
    ctx.ncpu = 16;
    ctx.loader_workers = -1;
    ctx.threads = 8;
    s = stage("step", 4.0);
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound-parallel");
    assert_contains(finding("cpu-bound-parallel")->recommendation,
                    "torch.set_num_threads is already 8");
    assert_true(finding("cpu-bound-parallel")->saving_ns == 0);
    ctx.threads = 4;
    run1(&ctx, &s);
    assert_contains(finding("cpu-bound-parallel")->recommendation,
                    "raise torch.set_num_threads from 4 to 8");
    ctx.framework = NULL;
    ctx.threads = -1;
    run1(&ctx, &s);
    assert_contains(finding("cpu-bound-parallel")->recommendation, "OMP_NUM_THREADS");
    assert_lacks(finding("cpu-bound-parallel")->recommendation, "torch");

    /* a GPU starved by its input: pin_memory and num_workers as set */
    ctx.framework = "torch";
    ctx.loader_workers = 4;
    ctx.pin_memory = 1;
    s = gpu_stage("train", 3.9, 0.38);
    s.other_cores = 0;
    assert_string_equal(verdict1(&ctx, &s), "gpu-starved");
    f = finding("gpu-starved");
    assert_contains(f->recommendation, "raise DataLoader num_workers from 4 to 8");
    assert_lacks(f->recommendation, "pin_memory=True");
    assert_contains(f->recommendation, "pin_memory is on already");
}

/* Issue 13, point 4: one order. All savings 0 (as observed): the bottleneck's finding first,
 * not the first stage's; the run's own findings after the stages'. */
static void test_findings_order(void **state)
{
    (void)state;
    struct analysis_context ctx = context();
    struct stage_resources st[3] = {stage("load", 0.05), stage("train", 0.5),
                                    stage("evaluate", 0.5)};
    st[0].share = 0.07;
    st[1].share = 0.30;
    st[2].share = 0.52;
    struct stage_resources total = stage("total", 0.5);
    total.share = 1;
    total.other_cores = 1.0;
    analysis_free(&an);
    analyze(&ctx, st, 3, &total, &an);
    assert_string_equal(an.bottleneck, "evaluate");
    assert_int_equal(an.n_findings, 4);
    assert_string_equal(an.findings[0].stage, "evaluate"); /* was "load": input order */
    assert_string_equal(an.findings[1].stage, "train");
    assert_string_equal(an.findings[2].stage, "load");
    assert_string_equal(an.findings[3].stage, "total");
    assert_string_equal(an.findings[3].rule, "other-load");
    /* a saving still ranks first, whatever its stage's share */
    st[0].cpu_cores = 1.0;
    analysis_free(&an);
    analyze(&ctx, st, 3, &total, &an);
    assert_string_equal(an.findings[0].stage, "load");
    assert_true(an.findings[0].saving_ns > 0);
    assert_string_equal(an.findings[1].stage, "evaluate");
}

/* A plain PyTorch script (no markers) with a 2-worker DataLoader kept about one core busy in
 * 3 processes: it was told "parallelise it over about 2 workers (a process pool...)", a pool
 * it already had. Several processes and no framework facts: find which sets the pace first. */
static void test_single_core_across_processes(void **state)
{
    (void)state;
    struct analysis_context ctx = context();
    ctx.ncpu = 2;
    struct stage_resources s = stage("total", 1.25);
    s.processes_peak = 3;
    s.threads_peak = 9;
    /* issue 35: three processes are no "single thread" */
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound-one-core");
    const struct finding *f = finding("cpu-bound-one-core");
    assert_non_null(f);
    assert_contains(f->evidence, "3 processes");
    assert_contains(f->recommendation, "already runs 3 processes (up to 9 threads)");
    assert_null(strstr(f->recommendation, "parallelise it over"));
    assert_true(f->saving_ns == 0);
    /* ...whatever the framework says (it was told to parallelise when torch facts came) */
    ctx.framework = "torch";
    ctx.threads = 1;
    ctx.loader_workers = 2;
    run1(&ctx, &s);
    f = finding("cpu-bound-one-core");
    assert_contains(f->recommendation, "2 of them DataLoader workers");
    assert_lacks(f->recommendation, "parallelise");
    ctx = context();
    ctx.ncpu = 2;
    /* one process: the advice to parallelise stands */
    s.processes_peak = 1;
    run1(&ctx, &s);
    assert_contains(finding("cpu-bound-single-thread")->recommendation, "parallelise it over");
}

/* Issue 35: advice from the facts mlbench already has. Each of these was wrong on today's main
 * (before this issue): an input-bound loop whose DataLoader reported num_workers=0 was never
 * told to raise it; 1.9 cores beside torch_threads=1 passed without a word; bf16 was advised
 * for a train stage 98 % waiting for data. */
static void test_advice_from_facts(void **state)
{
    (void)state;
    struct analysis_context ctx = context();
    ctx.ncpu = 4;
    ctx.framework = "torch";
    ctx.threads = 1;
    ctx.loader_workers = 0;
    /* the whole loop marked as one stage, its DataLoader in the main process */
    struct stage_resources s = stage("train", 1.0);
    s.other_cores = 0;
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound-single-thread");
    const struct finding *f = finding("cpu-bound-single-thread");
    assert_contains(f->recommendation, "the DataLoader loads in this process (num_workers=0)");
    assert_contains(f->recommendation, "num_workers=4 moves it to worker processes");

    /* more cores busy than torch's threads */
    s = stage("fit", 1.9);
    s.other_cores = 0;
    ctx.loader_workers = -1;
    assert_string_equal(verdict1(&ctx, &s), "cpu-bound-parallel");
    assert_contains(an.verdicts[0].evidence, "more than the 1 thread torch was set to");
    assert_contains(finding("cpu-bound-parallel")->recommendation,
                    "OMP_NUM_THREADS and OPENBLAS_NUM_THREADS to 1");
    ctx.threads = 2; /* as many as asked for: nothing said */
    run1(&ctx, &s);
    assert_lacks(an.verdicts[0].evidence, "torch was set to");

    /* a train stage that waits for data 98 % of its time: no precision advice */
    ctx = context();
    ctx.cpu_bf16 = "avx512_bf16";
    ctx.precision = "fp32";
    struct stage_resources st[2] = {stage("train", 1.0), stage("data_wait", 1.0)};
    st[1].depth = 1;
    st[1].time_ns = 0.98 * S;
    analysis_free(&an);
    analyze(&ctx, st, 2, NULL, &an);
    assert_null(finding("mixed-precision"));
    st[1].time_ns = 0.3 * S; /* mostly computing: advised */
    analysis_free(&an);
    analyze(&ctx, st, 2, NULL, &an);
    assert_non_null(finding("mixed-precision"));
}

/* Issue 35: ranking. A 1.4 % setup stage's advice (saving 18 ms) came first above the 55 %
 * bottleneck; a finding drawn from a handful of samples ranked first. Both now rank after the
 * well-measured findings of stages that matter. */
static void test_ranking(void **state)
{
    (void)state;
    struct analysis_context ctx = context();
    ctx.ncpu = 4;
    struct stage_resources st[2] = {stage("setup", 1.0), stage("train", 0.05)};
    st[0].share = 0.014;
    st[0].time_ns = 0.04 * S;
    st[0].other_cores = 0;
    st[1].share = 0.55;
    analysis_free(&an);
    analyze(&ctx, st, 2, NULL, &an);
    assert_true(an.n_findings >= 2);
    assert_true(finding("cpu-bound-single-thread")->saving_ns > 0); /* setup's */
    assert_string_equal(an.findings[0].stage, "train");
    /* a big stage measured in 3 samples: rough, after the well-measured one */
    st[0].share = 0.4;
    st[0].time_ns = 4 * S;
    st[0].samples = 3;
    analysis_free(&an);
    analyze(&ctx, st, 2, NULL, &an);
    assert_contains(an.verdicts[0].evidence, "only 3 samples: rough");
    assert_string_equal(an.findings[0].stage, "train");
    st[0].samples = 100; /* well measured: its saving leads */
    analysis_free(&an);
    analyze(&ctx, st, 2, NULL, &an);
    assert_string_equal(an.findings[0].stage, "setup");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_too_short_to_sample, teardown),
        cmocka_unit_test_teardown(test_cpu_starved, teardown),
        cmocka_unit_test_teardown(test_framework_advice, teardown),
        cmocka_unit_test_teardown(test_findings_order, teardown),
        cmocka_unit_test_teardown(test_single_core_across_processes, teardown),
        cmocka_unit_test_teardown(test_advice_from_facts, teardown),
        cmocka_unit_test_teardown(test_ranking, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
