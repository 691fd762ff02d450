/* Unit tests of resources_analyze: from attributed samples to figures, GPU choice and the
 * measurement-quality warnings (other load, swapping, a GPU run that used no GPU, governor). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "result/resources.h"

#define MS 1000000LL
#define T0 (1000 * MS)

enum { CPU, SYS_BUSY, SWAP_IN, GPU0_UTIL, GPU0_PROC, GPU1_UTIL, GPU1_PROC, PSI_CPU, STEAL, PSI_IO,
       IO_BLOCKED, N_SERIES };

static struct series_registry reg;
static struct run_config cfg;
static struct result res;
/* The machine's facts the next setup_run captures (it takes what they own), or NULL: none */
static struct machine_facts *next_facts;
static const char *const *next_meta; /* "key value" metadata the next run sends, NULL-ended */
static const char *next_stage; /* a stage the next run opens at its start and closes at its
                                * end, or NULL (then total is its only stage) */

/* Values per second (counters) or levels (gauges) held for a 1 s run sampled every 100 ms. */
struct levels {
    double cores, sys_busy, swap_bps, gpu0_util, gpu0_mem, gpu1_util, gpu1_mem;
    double psi_cpu; /* share of time tasks waited for a CPU (PSI cpu some) */
    double steal;   /* share of all CPUs' time the hypervisor took (inside sys_busy) */
    double psi_io;  /* share of time tasks waited for I/O, machine-wide (PSI io some) */
    double io_blocked; /* the workload's processes in state D */
};

/* Adds the marker event "<kind> <t_ns> 1 1 <name>[ <value>]" to rep's log, as the receiver
 * would. */
static void send_event(struct repetition *rep, char kind, long long t_ns, const char *name,
                       const char *value)
{
    char buf[256];
    struct marker_token t;
    snprintf(buf, sizeof buf, "%c %lld 1 1 %s%s%s", kind, t_ns, name, value ? " " : "",
             value ? value : "");
    assert_null(marker_parse(buf, strlen(buf), &t));
    event_log_add(&rep->log, &t);
}

static void setup_run(const struct levels *lv, const char *label, const char *device)
{
    memset(&reg, 0, sizeof reg);
    series_register(&reg, "proc", "process_cpu_seconds_total", "", SERIES_COUNTER);
    series_register(&reg, "system", "system_cpu_busy_ratio", "", SERIES_GAUGE);
    series_register(&reg, "system", "system_swap_in_bytes_total", "", SERIES_COUNTER);
    series_register(&reg, "nvml", "gpu_utilization_ratio", "gpu=\"0\"", SERIES_GAUGE);
    series_register(&reg, "nvml", "gpu_process_memory_bytes", "gpu=\"0\"", SERIES_GAUGE);
    series_register(&reg, "nvml", "gpu_utilization_ratio", "gpu=\"1\"", SERIES_GAUGE);
    series_register(&reg, "nvml", "gpu_process_memory_bytes", "gpu=\"1\"", SERIES_GAUGE);
    series_register(&reg, "system", "system_pressure_cpu_some_seconds_total", "",
                    SERIES_COUNTER);
    series_register(&reg, "system", "system_cpu_steal_ratio", "", SERIES_GAUGE);
    series_register(&reg, "system", "system_pressure_io_some_seconds_total", "", SERIES_COUNTER);
    series_register(&reg, "proc", "process_io_blocked_tasks", "", SERIES_GAUGE);
    memset(&cfg, 0, sizeof cfg);
    static char *argv[] = {"python3", "train.py", NULL};
    cfg.argv = argv;
    cfg.argc = 2;
    cfg.label = label;
    result_init(&res, &cfg);
    res.sampling.active = calloc(3, sizeof *res.sampling.active);
    res.sampling.active[0] = strdup("proc");
    res.sampling.active[1] = strdup("system");
    res.sampling.active[2] = strdup("nvml");
    res.sampling.n_active = 3;

    struct repetition *rep = result_add_rep(&res, false);
    rep->outcome.status = RUN_OK;
    rep->outcome.start_ns = T0;
    rep->outcome.wall_ns = 1000 * MS;
    if (device)
        send_event(rep, 'M', T0 + 1, "device", device);
    for (const char *const *kv = next_meta; kv && *kv; kv++)
        send_event(rep, 'M', T0 + 2, *kv, NULL);
    next_meta = NULL;
    if (next_stage) {
        send_event(rep, 'B', T0 + 3, next_stage, NULL);
        send_event(rep, 'E', T0 + 999 * MS, next_stage, NULL);
        next_stage = NULL;
    }
    stages_aggregate(&rep->log, T0, rep->outcome.wall_ns, &rep->stages);
    sample_table_init(&rep->samples, &reg);
    for (int i = 0; i <= 10; i++) {
        size_t row = sample_table_add_row(&rep->samples, T0 + i * 100 * MS);
        double t = i * 0.1;
        sample_table_set(&rep->samples, CPU, row, lv->cores * t);
        sample_table_set(&rep->samples, SYS_BUSY, row, lv->sys_busy);
        sample_table_set(&rep->samples, SWAP_IN, row, lv->swap_bps * t);
        sample_table_set(&rep->samples, GPU0_UTIL, row, lv->gpu0_util);
        sample_table_set(&rep->samples, GPU0_PROC, row, lv->gpu0_mem);
        sample_table_set(&rep->samples, GPU1_UTIL, row, lv->gpu1_util);
        sample_table_set(&rep->samples, GPU1_PROC, row, lv->gpu1_mem);
        sample_table_set(&rep->samples, PSI_CPU, row, lv->psi_cpu * t);
        sample_table_set(&rep->samples, STEAL, row, lv->steal);
        sample_table_set(&rep->samples, PSI_IO, row, lv->psi_io * t);
        sample_table_set(&rep->samples, IO_BLOCKED, row, lv->io_blocked);
    }
    rep->metrics = attrib_run(&rep->samples, T0, rep->outcome.wall_ns, &rep->stages);
    const struct machine_facts *facts = NULL; /* as result_capture_environment would */
    if (next_facts) {
        res.facts = *next_facts;
        facts = &res.facts;
        next_facts = NULL;
    }
    summary_compute(&res, facts);
    resources_analyze(&res, facts);
}

static void teardown_run(void)
{
    result_free(&res);
    series_registry_free(&reg);
}

static int has_warning(const char *code)
{
    for (size_t i = 0; i < res.summary.n_warnings; i++)
        if (!strcmp(res.summary.warnings[i].code, code))
            return 1;
    return 0;
}

static void test_figures_and_gpu_choice(void **state)
{
    (void)state;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    /* the workload holds memory on GPU 1 only; GPU 0 is busy with someone else */
    struct levels lv = {.cores = 1.0, .sys_busy = 1.0 / (double)ncpu, .gpu0_util = 0.9,
                        .gpu0_mem = 0, .gpu1_util = 0.4, .gpu1_mem = 1e9};
    setup_run(&lv, NULL, NULL);
    assert_true(res.analyzed);
    assert_true(res.gpus_shown == 2); /* GPU 1 */
    const struct stage_resources *total = &res.figures[res.summary.n_stages];
    assert_true(fabs(total->cpu_cores - 1.0) < 1e-9);
    assert_true(fabs(total->gpu_util - 0.4) < 1e-9);
    assert_int_equal(total->gpus, 1);
    assert_true(total->other_cores < 1e-9);
    assert_false(has_warning("other_load"));
    assert_false(has_warning("swapping"));
    assert_false(has_warning("gpu_not_used"));
    teardown_run();
}

static void test_other_load_and_swapping(void **state)
{
    (void)state;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    struct levels lv = {.cores = 0.5, .sys_busy = 1.0, .swap_bps = 1 << 20};
    setup_run(&lv, NULL, NULL);
    if (ncpu >= 1)
        assert_true(has_warning("other_load")); /* ncpu busy, the workload half a core */
    assert_true(has_warning("swapping"));
    assert_false(has_warning("cpu_contention")); /* no CPU pressure was recorded */
    teardown_run();
}

/* cpu_contention (issue 13): tasks waited for a CPU at least 20 % of the time. */
static void test_cpu_contention(void **state)
{
    (void)state;
    struct levels lv = {.cores = 1.0, .sys_busy = 0.5, .psi_cpu = 0.45};
    setup_run(&lv, NULL, NULL);
    assert_true(has_warning("cpu_contention"));
    int figure = 0;
    for (size_t i = 0; i < res.summary.n_warnings; i++)
        figure |= !strcmp(res.summary.warnings[i].code, "cpu_contention") &&
                  strstr(res.summary.warnings[i].message, "45 % of the time") != NULL;
    assert_true(figure);
    teardown_run();
    lv.psi_cpu = 0.15; /* below the limit */
    setup_run(&lv, NULL, NULL);
    assert_false(has_warning("cpu_contention"));
    teardown_run();
}

static const char *warning_message(const char *code)
{
    for (size_t i = 0; i < res.summary.n_warnings; i++)
        if (!strcmp(res.summary.warnings[i].code, code))
            return res.summary.warnings[i].message;
    return NULL;
}

/* io_contention (issue 35): a sleeping workload beside another process's disk writes. The
 * machine stalled on I/O 67 % of the time, the workload's processes were never in state D: a
 * warning names the disturbance, and the verdict is idle, not io-bound; a workload blocked on
 * its own I/O gets no warning and is io-bound. */
static void test_io_contention(void **state)
{
    (void)state;
    struct levels lv = {.cores = 0.01, .psi_io = 0.67};
    setup_run(&lv, NULL, NULL);
    const char *m = warning_message("io_contention");
    assert_non_null(m);
    assert_non_null(strstr(m, "stalled on I/O 67 % of the time"));
    assert_non_null(strstr(m, "the workload's own tasks were blocked on I/O 0 % of it"));
    assert_string_equal(res.analysis.verdicts[res.analysis.n_verdicts - 1].rule, "idle");
    teardown_run();
    lv.io_blocked = 0.6;
    setup_run(&lv, NULL, NULL);
    assert_null(warning_message("io_contention"));
    assert_string_equal(res.analysis.verdicts[res.analysis.n_verdicts - 1].rule, "io-bound");
    teardown_run();
    lv = (struct levels){.cores = 0.01, .psi_io = 0.19};
    setup_run(&lv, NULL, NULL);
    assert_null(warning_message("io_contention"));
    teardown_run();
}

/* Steal time: the hypervisor took 30 % of the CPUs from a single-threaded burn, which got 0.7
 * of a core and did not wait in the run queue. The steal is no other process's load; the
 * result warns cpu_steal, and the stage is cpu-starved by the hypervisor, not "mixed" (a CI
 * run saw exactly this and called it a stage that waits on something not measured). */
static void test_cpu_steal(void **state)
{
    (void)state;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    struct levels lv = {.cores = 0.7, .steal = 0.3};
    lv.sys_busy = (lv.cores + lv.steal * (double)ncpu) / (double)ncpu;
    if (lv.sys_busy > 1)
        skip(); /* one CPU cannot hold both */
    setup_run(&lv, NULL, NULL);
    const struct stage_resources *total = &res.figures[res.summary.n_stages];
    assert_true(fabs(total->steal - 0.3) < 1e-9);
    assert_true(total->other_cores < 1e-9);
    assert_false(has_warning("other_load"));
    assert_non_null(warning_message("cpu_steal"));
    assert_non_null(strstr(warning_message("cpu_steal"), "30 % of the time"));
    const struct finding *f = NULL;
    for (size_t i = 0; i < res.analysis.n_findings; i++)
        if (!strcmp(res.analysis.findings[i].rule, "cpu-starved"))
            f = &res.analysis.findings[i];
    assert_non_null(f);
    assert_non_null(strstr(f->evidence, "steal time"));
    assert_non_null(strstr(f->recommendation, "dedicated host"));
    teardown_run();
    lv.steal = 0.02; /* what a quiet VM shows */
    lv.sys_busy = (lv.cores + lv.steal * (double)ncpu) / (double)ncpu;
    setup_run(&lv, NULL, NULL);
    assert_false(has_warning("cpu_steal"));
    teardown_run();
}

static void test_gpu_claims(void **state)
{
    (void)state;
    struct levels idle = {.cores = 1.0, .sys_busy = 0.0};
    setup_run(&idle, NULL, "cuda");
    assert_true(has_warning("gpu_not_used"));
    teardown_run();
    setup_run(&idle, "resnet-gpu", NULL);
    assert_true(has_warning("gpu_not_used"));
    teardown_run();
    setup_run(&idle, "resnet-gpu", "cpu"); /* device metadata decides over the label */
    assert_false(has_warning("gpu_not_used"));
    teardown_run();
    struct levels used = {.cores = 1.0, .gpu0_util = 0.5, .gpu0_mem = 1e9};
    setup_run(&used, NULL, "cuda");
    assert_false(has_warning("gpu_not_used"));
    teardown_run();
}

static int has_finding(const char *rule, const char *evidence)
{
    for (size_t i = 0; i < res.analysis.n_findings; i++)
        if (!strcmp(res.analysis.findings[i].rule, rule) &&
            strstr(res.analysis.findings[i].evidence, evidence))
            return 1;
    return 0;
}

/* Facts of a machine whose GPU 0 is named name with compute capability major.minor, or has no
 * handle (name NULL: nothing known), for the next setup_run. */
static void next_gpu(const char *name, int major, int minor)
{
    static struct machine_facts m;
    memset(&m, 0, sizeof m);
    struct gpu_facts g = gpu_facts_unknown(0);
    if (name) {
        g.usable = true;
        snprintf(g.name, sizeof g.name, "%s", name);
        g.cc_major = major;
        g.cc_minor = minor;
    }
    source_facts_add_gpu(&m.sources, &g);
    next_facts = &m;
}

/* The GPU the rules name comes from the machine's facts: the first GPU used that NVML gave a
 * handle for; tensor cores from its compute capability. */
static void test_gpu_facts_from_environment(void **state)
{
    (void)state;
    struct levels busy = {.cores = 1.0, .gpu0_util = 0.97, .gpu0_mem = 1e9};
    next_gpu("NVIDIA H200", 9, 0);
    setup_run(&busy, NULL, "cuda");
    assert_true(has_finding("mixed-precision", "on NVIDIA H200, which has tensor cores"));
    teardown_run();

    next_gpu("Tesla P100", 6, 0);
    setup_run(&busy, NULL, "cuda");
    assert_false(has_finding("mixed-precision", "")); /* no tensor cores */
    teardown_run();

    next_gpu(NULL, -1, -1);
    setup_run(&busy, NULL, "cuda");
    assert_false(has_finding("mixed-precision", "")); /* no handle: nothing known */
    teardown_run();

    setup_run(&busy, NULL, "cuda"); /* no environment captured */
    assert_false(has_finding("mixed-precision", ""));
    teardown_run();
}

/* The CPU's bf16 matrix instructions come from the machine's facts (the environment's
 * cpu.features): an fp32 training stage on the CPU gets the mixed-precision finding only where
 * they are listed. */
static void test_cpu_bf16_from_environment(void **state)
{
    (void)state;
    struct levels busy = {.cores = 1.0};
    static const char *const fp32[] = {"precision fp32", NULL};
    /* the CPU extensions of each machine, NULL-ended; a NULL machine: none captured */
    static const char *const avx512[] = {"avx2", "avx512_bf16", NULL};
    static const char *const amx[] = {"avx512_bf16", "amx_bf16", NULL};
    static const char *const avx2[] = {"avx2", "fma", NULL};
    static const char *const none[] = {NULL};
    const char *const *const machines[] = {avx512, amx, avx2, none, NULL};
    const char *const want[] = {"this CPU has avx512_bf16", "this CPU has amx_bf16", NULL, NULL,
                                NULL};
    for (int i = 0; i < 5; i++) {
        static struct machine_facts m;
        memset(&m, 0, sizeof m);
        for (const char *const *f = machines[i]; f && *f; f++)
            m.cpu_features[m.n_cpu_features++] = *f;
        next_facts = machines[i] ? &m : NULL;
        next_meta = fp32;
        next_stage = "train";
        setup_run(&busy, NULL, NULL);
        if (want[i] && !has_finding("mixed-precision", want[i]))
            fail_msg("environment %d: no mixed-precision finding with '%s'", i, want[i]);
        if (!want[i] && has_finding("mixed-precision", ""))
            fail_msg("environment %d: a mixed-precision finding without bf16 instructions", i);
        teardown_run();
    }
}

static void test_governor(void **state)
{
    (void)state;
    char dir[] = "/tmp/mlbench-sys-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    for (int cpu = 0; cpu < 2; cpu++) {
        snprintf(path, sizeof path, "%s/devices", dir);
        mkdir(path, 0755);
        snprintf(path, sizeof path, "%s/devices/system", dir);
        mkdir(path, 0755);
        snprintf(path, sizeof path, "%s/devices/system/cpu", dir);
        mkdir(path, 0755);
        snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%d", dir, cpu);
        mkdir(path, 0755);
        snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%d/cpufreq", dir, cpu);
        mkdir(path, 0755);
        snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%d/cpufreq/scaling_governor", dir, cpu);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(cpu ? "powersave\n" : "performance\n", f);
        fclose(f);
    }
    setenv("MLBENCH_SYS_ROOT", dir, 1);
    struct levels lv = {.cores = 1.0};
    setup_run(&lv, NULL, NULL);
    assert_true(has_warning("cpu_governor"));
    int named = 0;
    for (size_t i = 0; i < res.summary.n_warnings; i++)
        named |= strstr(res.summary.warnings[i].message, "'powersave' on 1 of 2 CPUs") != NULL;
    assert_true(named);
    teardown_run();
    unsetenv("MLBENCH_SYS_ROOT");
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static const struct finding *finding_of(const char *rule)
{
    for (size_t i = 0; i < res.analysis.n_findings; i++)
        if (!strcmp(res.analysis.findings[i].rule, rule))
            return &res.analysis.findings[i];
    return NULL;
}

/* Framework facts in the metadata (framework.* of the Python client, or the plain
 * torch_threads) reach the advice: a single-threaded run whose torch already has 2 threads is
 * not told to parallelise (issue 13). */
static void test_framework_facts_reach_advice(void **state)
{
    (void)state;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 2)
        skip(); /* one CPU: cpu-bound, where no parallel advice is given anyway */
    struct levels lv = {.cores = 1.0, .sys_busy = 1.0 / (double)ncpu};
    static const char *const facts[] = {"framework.torch.version 1.13.0",
                                        "framework.torch.num_threads 2", NULL};
    static const char *const plain[] = {"torch_threads 2", NULL};
    const char *const *sets[] = {facts, plain};
    for (int i = 0; i < 2; i++) {
        next_meta = sets[i];
        setup_run(&lv, NULL, NULL);
        const struct finding *f = finding_of("cpu-bound-single-thread");
        assert_non_null(f);
        if (!strstr(f->recommendation, "torch already runs 2 threads"))
            fail_msg("set %d: %s", i, f->recommendation);
        assert_null(strstr(f->recommendation, "parallelise it over"));
        teardown_run();
    }
    /* without them: the generic advice */
    setup_run(&lv, NULL, NULL);
    assert_non_null(strstr(finding_of("cpu-bound-single-thread")->recommendation,
                           "parallelise it over"));
    teardown_run();
}

int main(void)
{
    unsetenv("MLBENCH_SYS_ROOT");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_figures_and_gpu_choice),
        cmocka_unit_test(test_other_load_and_swapping),
        cmocka_unit_test(test_cpu_contention),
        cmocka_unit_test(test_io_contention),
        cmocka_unit_test(test_cpu_steal),
        cmocka_unit_test(test_gpu_claims),
        cmocka_unit_test(test_gpu_facts_from_environment),
        cmocka_unit_test(test_cpu_bf16_from_environment),
        cmocka_unit_test(test_governor),
        cmocka_unit_test(test_framework_facts_reach_advice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
