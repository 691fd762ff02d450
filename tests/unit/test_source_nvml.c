/* Unit tests of the nvml metric source (src/sources/nvml.c) against the fake NVML library
 * (tests/fakes/fake_nvml.c), which replays the answers a script gives it: values, errors, a GPU
 * that is lost, process lists. The fixture (the source on the fake, ticks, checks) is
 * tests/fakes/fake_nvml_fixture.h; the GPM metrics are tested in test_source_nvml_gpm.c. *
 * Expected values are the scripted NVML answers converted by hand to base units: percent / 100,
 * mW / 1000, MHz * 1e6, KB/s * 1024. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fake_nvml_fixture.h"
#include "measure/sampler.h"
#include "sources/sources.h"

#define N_GPU_SERIES 12

static const char *const all_series[N_GPU_SERIES] = {
    "gpu_utilization_ratio", "gpu_memory_utilization_ratio", "gpu_memory_used_bytes",
    "gpu_memory_total_bytes", "gpu_power_watts", "gpu_sm_clock_hertz",
    "gpu_memory_clock_hertz", "gpu_temperature_celsius", "gpu_pcie_rx_bytes_per_second",
    "gpu_pcie_tx_bytes_per_second", "gpu_throttle_reasons", "gpu_process_memory_bytes",
};

/* Without a library there is no source, and the reason says so. */
static void test_library_missing(void **state)
{
    struct fixture *fx = *state;
    setenv("MLBENCH_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    assert_int_equal(open_source(fx), -1);
    assert_string_equal(fx->err, "/nonexistent/libnvidia-ml.so.1 not found "
                                 "(MLBENCH_NVML_LIBRARY): GPU not measured");
    assert_int_equal(fx->reg.n, 0);

    /* The real library: on a machine without the driver, the reason users will read. */
    unsetenv("MLBENCH_NVML_LIBRARY");
    void *real = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (real) {
        dlclose(real);
        if (open_source(fx) == 0)
            close_source(fx);
        return;
    }
    assert_int_equal(open_source(fx), -1);
    assert_string_equal(fx->err, "libnvidia-ml.so.1 not found (no NVIDIA driver): "
                                 "GPU not measured");
}

static void test_not_an_nvml_library(void **state)
{
    struct fixture *fx = *state;
    setenv("MLBENCH_NVML_LIBRARY", "libm.so.6", 1);
    assert_int_equal(open_source(fx), -1);
    assert_contains(fx->err, "libm.so.6 lacks nvmlInit");
    assert_int_equal(fx->reg.n, 0);
}

static void test_init_error(void **state)
{
    struct fixture *fx = *state;
    use_fake(fx, false, "init ERR_DRIVER_NOT_LOADED\n");
    assert_int_equal(open_source(fx), -1);
    assert_string_equal(fx->err, "nvmlInit failed: Driver Not Loaded: GPU not measured");
    assert_int_equal(fx->calls("nvmlInit_v2"), 1);
    assert_int_equal(fx->calls("nvmlShutdown"), 0); /* NVML was not initialised */
    assert_int_equal(fx->reg.n, 0);
}

static void test_count_error(void **state)
{
    struct fixture *fx = *state;
    use_fake(fx, false, "count ERR_UNKNOWN\n");
    assert_int_equal(open_source(fx), -1);
    assert_string_equal(fx->err, "nvmlDeviceGetCount failed: Unknown Error: GPU not measured");
    assert_int_equal(fx->calls("nvmlShutdown"), 1);
}

/* issue 12: a library that said 4 294 967 295 GPUs made mlbench allocate 1.4 TB and abort. */
static void test_absurd_count(void **state)
{
    struct fixture *fx = *state;
    use_fake(fx, false, "count_says 4294967295\n");
    assert_int_equal(open_source(fx), -1);
    assert_string_equal(fx->err, "NVML says there are 4294967295 GPUs, more than the 256 one "
                        "machine can hold (a broken driver or library?): GPU not measured");
    assert_int_equal(fx->calls("nvmlShutdown"), 1);
    assert_int_equal(fx->reg.n, 0);
    use_fake(fx, false, "count_says 100000\n");
    assert_int_equal(open_source(fx), -1);
    assert_non_null(strstr(fx->err, "100000 GPUs"));
}

static void test_no_gpu(void **state)
{
    struct fixture *fx = *state;
    use_fake(fx, false, "devices 0\n");
    assert_int_equal(open_source(fx), -1);
    assert_string_equal(fx->err, "no GPU found");
    assert_int_equal(fx->calls("nvmlShutdown"), 1);
    assert_int_equal(fx->reg.n, 0);
}

static void test_no_usable_gpu(void **state)
{
    struct fixture *fx = *state;
    use_fake(fx, false, "devices 1\nhandle 0 ERR_NO_PERMISSION\n");
    assert_int_equal(open_source(fx), -1);
    assert_string_equal(fx->err, "no usable GPU: nvmlDeviceGetHandleByIndex: "
                                 "Insufficient Permissions: GPU not measured");
    assert_int_equal(fx->calls("nvmlShutdown"), 1);
}

static const char two_gpus[] =
    "devices 2\n"
    "driver 580.65.06\n"
    "name 0 NVIDIA H200\n"
    "uuid 0 GPU-00000000-1111-2222-3333-444444444444\n"
    "cc 0 9 0\n"
    "mem_total 0 150000000000\n"
    "name 1 NVIDIA A100-SXM4-80GB\n"
    "cc 1 8 0\n"
    "mem_total 1 85899345920\n"
    "util 0 10/5 80/30 95/40\n"
    "mem_used 0 7 1000000000 2000000000   # the first is taken when the source opens\n"
    "power 0 123456 250000\n"
    "sm_clock 0 1980 1755\n"
    "mem_clock 0 2619\n"
    "temp 0 45 50 51\n"
    "pcie_rx 0 1000 0\n"
    "pcie_tx 0 2000 3\n"
    "throttle 0 0 4 1\n"
    "procs 0 - SELF:1048576\n"
    "util 1 0/0\n"
    "mem_used 1 0 500\n"
    "power 1 60000\n"
    "sm_clock 1 210\n"
    "mem_clock 1 1593\n"
    "temp 1 30\n"
    "pcie_rx 1 1\n"
    "pcie_tx 1 2\n"
    "throttle 1 1\n"
    "procs 1 -\n";

/* Two GPUs: every series of each, with the scripted values in base units, the last value of a
 * sequence repeated once it is used up. */
static void test_two_gpus(void **state)
{
    struct fixture *fx = *state;
    use_fake(fx, false, two_gpus);
    assert_int_equal(open_source(fx), 0);
    assert_int_equal(fx->reg.n, 2 * N_GPU_SERIES);
    for (size_t i = 0; i < fx->reg.n; i++) {
        const struct series_def *d = &fx->reg.defs[i];
        assert_string_equal(d->name, all_series[i % N_GPU_SERIES]);
        assert_string_equal(d->labels, i < N_GPU_SERIES ? "gpu=\"0\"" : "gpu=\"1\"");
        assert_int_equal(d->kind, SERIES_GAUGE);
        assert_string_equal(d->source, "nvml");
    }
    fx->tree[0] = getpid();
    fx->ctx.n_tree = 1;
    fx->ctx.leader = getpid();
    for (int i = 0; i < 3; i++)
        assert_int_equal(tick(fx), i);
    assert_int_equal(fx->errors, 0);

    assert_value(fx, "gpu_utilization_ratio", 0, 0, 0.10);
    assert_value(fx, "gpu_utilization_ratio", 0, 1, 0.80);
    assert_value(fx, "gpu_utilization_ratio", 0, 2, 0.95);
    assert_value(fx, "gpu_memory_utilization_ratio", 0, 0, 0.05);
    assert_value(fx, "gpu_memory_utilization_ratio", 0, 2, 0.40);
    assert_value(fx, "gpu_memory_used_bytes", 0, 0, 1e9);
    assert_value(fx, "gpu_memory_used_bytes", 0, 1, 2e9);
    assert_value(fx, "gpu_memory_used_bytes", 0, 2, 2e9);
    assert_value(fx, "gpu_memory_total_bytes", 0, 2, 150e9);
    assert_value(fx, "gpu_power_watts", 0, 0, 123.456);
    assert_value(fx, "gpu_power_watts", 0, 1, 250.0);
    assert_value(fx, "gpu_sm_clock_hertz", 0, 0, 1980e6);
    assert_value(fx, "gpu_sm_clock_hertz", 0, 1, 1755e6);
    assert_value(fx, "gpu_memory_clock_hertz", 0, 2, 2619e6);
    assert_value(fx, "gpu_temperature_celsius", 0, 0, 45);
    assert_value(fx, "gpu_temperature_celsius", 0, 2, 51);
    assert_value(fx, "gpu_pcie_rx_bytes_per_second", 0, 0, 1024000);
    assert_value(fx, "gpu_pcie_rx_bytes_per_second", 0, 1, 0);
    assert_value(fx, "gpu_pcie_tx_bytes_per_second", 0, 0, 2048000);
    assert_value(fx, "gpu_pcie_tx_bytes_per_second", 0, 1, 3072);
    assert_value(fx, "gpu_throttle_reasons", 0, 0, 0);
    assert_value(fx, "gpu_throttle_reasons", 0, 1, 4);
    assert_value(fx, "gpu_throttle_reasons", 0, 2, 1);
    assert_value(fx, "gpu_process_memory_bytes", 0, 0, 0); /* a real 0: none of ours there */
    assert_value(fx, "gpu_process_memory_bytes", 0, 1, 1048576);

    assert_value(fx, "gpu_utilization_ratio", 1, 1, 0);
    assert_value(fx, "gpu_memory_used_bytes", 1, 0, 500);
    assert_value(fx, "gpu_memory_total_bytes", 1, 0, 85899345920.0);
    assert_value(fx, "gpu_power_watts", 1, 2, 60);
    assert_value(fx, "gpu_sm_clock_hertz", 1, 0, 210e6);
    assert_value(fx, "gpu_memory_clock_hertz", 1, 0, 1593e6);
    assert_value(fx, "gpu_temperature_celsius", 1, 0, 30);
    assert_value(fx, "gpu_pcie_rx_bytes_per_second", 1, 0, 1024);
    assert_value(fx, "gpu_pcie_tx_bytes_per_second", 1, 2, 2048);
    assert_value(fx, "gpu_throttle_reasons", 1, 0, 1);
    assert_value(fx, "gpu_process_memory_bytes", 1, 2, 0);

    /* The newest symbols are preferred over the deprecated ones. */
    assert_int_equal(fx->calls("nvmlInit_v2"), 1);
    assert_int_equal(fx->calls("nvmlInit"), 0);
    assert_int_equal(fx->calls("nvmlDeviceGetTemperatureV"), 6);
    assert_int_equal(fx->calls("nvmlDeviceGetTemperature"), 0);
    assert_int_equal(fx->calls("nvmlDeviceGetCurrentClocksEventReasons"), 6);
    assert_int_equal(fx->calls("nvmlDeviceGetCurrentClocksThrottleReasons"), 0);
    assert_int_equal(fx->calls("nvmlDeviceGetComputeRunningProcesses_v3"), 6);
    assert_int_equal(fx->calls("nvmlDeviceGetComputeRunningProcesses_v2"), 0);

    close_source(fx);
    assert_int_equal(fx->calls("nvmlShutdown"), 1);
}

/* Facts for the report, read when the source opens and given by its facts op; a GPU
 * without a handle is listed but not usable, keeps its series (NAN) and is never asked
 * anything. The facts are those of the state asked: there is nothing to ask of a source
 * that is not open, and a new open reads them again. */
static void test_device_info(void **state)
{
    struct fixture *fx = *state;
    assert_non_null(nvml_source.facts);

    use_fake(fx, false, "devices 3\nname 0 NVIDIA H200\nuuid 0 GPU-abc\ncc 0 9 0\n"
                        "mem_total 0 150000000000\nmem_used 0 1\n"
                        "name 1 NVIDIA L4\ncc 1 8 9\n"
                        "handle 2 ERR_GPU_IS_LOST\n");
    assert_int_equal(open_source(fx), 0);
    struct source_facts d = source_facts_of(fx);
    assert_int_equal(d.n_gpus, 3);
    const struct gpu_facts *g = &d.gpus[0];
    assert_int_equal(g->index, 0);
    assert_string_equal(g->name, "NVIDIA H200");
    assert_string_equal(g->uuid, "GPU-abc");
    assert_int_equal(g->cc_major, 9);
    assert_int_equal(g->cc_minor, 0);
    assert_true(g->memory_bytes == 150000000000.0);
    assert_true(g->usable);
    g = &d.gpus[1];
    assert_int_equal(g->index, 1);
    assert_string_equal(g->name, "NVIDIA L4");
    assert_string_equal(g->uuid, "GPU-fake-1");
    assert_int_equal(g->cc_major, 8);
    assert_int_equal(g->cc_minor, 9);
    assert_true(isnan(g->memory_bytes)); /* no mem_used script: not supported */
    assert_true(g->usable);
    g = &d.gpus[2];
    assert_int_equal(g->index, 2);
    assert_false(g->usable);
    assert_string_equal(g->name, "");   /* unknown: "" (the environment leaves it out) */
    assert_int_equal(g->cc_major, -1); /* unknown: -1 (the environment leaves it out) */
    assert_int_equal(g->cc_minor, -1);
    assert_string_equal(d.gpu_driver, "999.0.fake");
    source_facts_free(&d);

    assert_int_equal(fx->reg.n, 3 * N_GPU_SERIES);
    size_t row = tick(fx);
    for (int s = 0; s < N_GPU_SERIES; s++)
        assert_nan(fx, all_series[s], 2, row);
    assert_int_equal(fx->errors, 0);
    assert_value(fx, "gpu_memory_used_bytes", 0, row, 1);
    close_source(fx);

    /* Reopened on other GPUs: their facts, nothing left of the first open. */
    FILE *f = fopen(fx->script, "w");
    assert_non_null(f);
    fputs("devices 1\nname 0 NVIDIA A100\n", f);
    fclose(f);
    series_registry_free(&fx->reg);
    assert_int_equal(open_source(fx), 0);
    d = source_facts_of(fx);
    assert_int_equal(d.n_gpus, 1);
    assert_string_equal(d.gpus[0].name, "NVIDIA A100");
    source_facts_free(&d);
}

/* The sampler collects the facts of its open sources; without a sampler (mlbench env) one
 * source is opened for its facts alone and closed after. */
static void test_sampler_facts(void **state)
{
    struct fixture *fx = *state;
    char err[512];
    struct source_facts d;
    setenv("MLBENCH_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    assert_int_equal(sampler_source_facts("nvml", &d, err, sizeof err), -1);
    assert_int_equal(d.n_gpus, 0);
    assert_contains(err, "not found");
    source_facts_free(&d);
    assert_int_equal(sampler_source_facts("no-such-source", &d, err, sizeof err), -1);
    assert_int_equal(d.n_gpus, 0);
    assert_string_equal(err, "not a metric source");
    source_facts_free(&d);

    use_fake(fx, false, "devices 2\nname 0 NVIDIA H200\ndriver 580.65.06\n");
    assert_int_equal(sampler_source_facts("nvml", &d, err, sizeof err), 0);
    assert_string_equal(err, "");
    assert_int_equal(d.n_gpus, 2);
    assert_string_equal(d.gpus[0].name, "NVIDIA H200");
    assert_string_equal(d.gpu_driver, "580.65.06");
    source_facts_free(&d);
    assert_int_equal(fx->calls("nvmlInit_v2"), 1);
    assert_int_equal(fx->calls("nvmlShutdown"), 1); /* closed after */

    struct sampler_config cfg = {.interval_ns = SAMPLER_DEFAULT_INTERVAL_NS};
    struct sampler *s = sampler_open(&cfg);
    sampler_facts(s, &d);
    /* proc and system have no static facts: the GPUs are nvml's */
    assert_null(proc_source.facts);
    assert_null(system_source.facts);
    assert_int_equal(d.n_gpus, 2);
    source_facts_free(&d);
    sampler_close(s);
}

/* An error answer: that value NAN, one error, the next tick normal again. */
static void test_error_value(void **state)
{
    struct fixture *fx = *state;
    use_fake(fx, false, "util 0 10/20 ERR_UNKNOWN 30/40\npower 0 1000 ERR_TIMEOUT ERR_NO_DATA 2000\n");
    assert_int_equal(open_source(fx), 0);
    for (int i = 0; i < 4; i++)
        tick(fx);
    assert_value(fx, "gpu_utilization_ratio", 0, 0, 0.1);
    assert_nan(fx, "gpu_utilization_ratio", 0, 1);
    assert_nan(fx, "gpu_memory_utilization_ratio", 0, 1);
    assert_value(fx, "gpu_utilization_ratio", 0, 2, 0.3);
    assert_value(fx, "gpu_memory_utilization_ratio", 0, 3, 0.4);
    assert_value(fx, "gpu_power_watts", 0, 0, 1);
    assert_nan(fx, "gpu_power_watts", 0, 1);
    assert_nan(fx, "gpu_power_watts", 0, 2);
    assert_value(fx, "gpu_power_watts", 0, 3, 2);
    assert_int_equal(fx->errors, 3);
}

/* Not supported (or no script, which the fake answers so): NAN, no error, not asked again. */
static void test_not_supported(void **state)
{
    struct fixture *fx = *state;
    use_fake(fx, false, "util 0 50/50\npower 0 ERR_NOT_SUPPORTED 1000\n"
                        "sm_clock 0 ERR_FUNCTION_NOT_FOUND\nprocs 0 ERR_NOT_SUPPORTED\n");
    assert_int_equal(open_source(fx), 0);
    fx->tree[0] = getpid();
    fx->ctx.n_tree = 1;
    for (int i = 0; i < 3; i++)
        tick(fx);
    assert_int_equal(fx->errors, 0);
    for (size_t row = 0; row < 3; row++) {
        assert_value(fx, "gpu_utilization_ratio", 0, row, 0.5);
        assert_nan(fx, "gpu_power_watts", 0, row);
        assert_nan(fx, "gpu_sm_clock_hertz", 0, row);
        assert_nan(fx, "gpu_temperature_celsius", 0, row);
        assert_nan(fx, "gpu_process_memory_bytes", 0, row);
    }
    assert_int_equal(fx->calls("nvmlDeviceGetPowerUsage"), 1);
    assert_int_equal(fx->calls("nvmlDeviceGetComputeRunningProcesses_v3"), 1);
    assert_int_equal(fx->calls("nvmlDeviceGetTemperatureV"), 1);
    assert_int_equal(fx->calls("nvmlDeviceGetUtilizationRates"), 3);
}

/* A GPU that falls off the bus: one error, NAN from then on, the other GPU unaffected. */
static void test_gpu_lost(void **state)
{
    struct fixture *fx = *state;
    use_fake(fx, false, "devices 2\nutil 0 10/10\nutil 1 50/50 LOST\npower 1 100000\n"
                        "temp 1 40\n");
    assert_int_equal(open_source(fx), 0);
    for (int i = 0; i < 4; i++)
        tick(fx);
    assert_int_equal(fx->errors, 1);
    assert_value(fx, "gpu_utilization_ratio", 1, 0, 0.5);
    assert_value(fx, "gpu_power_watts", 1, 0, 100);
    assert_value(fx, "gpu_temperature_celsius", 1, 0, 40);
    for (size_t row = 1; row < 4; row++) {
        for (int s = 0; s < N_GPU_SERIES; s++)
            assert_nan(fx, all_series[s], 1, row);
        assert_value(fx, "gpu_utilization_ratio", 0, row, 0.1);
    }
    /* Ticks 0 and 1 ask both GPUs; then only GPU 0. */
    assert_int_equal(fx->calls("nvmlDeviceGetUtilizationRates"), 2 + 2 + 1 + 1);
    /* GPU 0 has no power script: asked once (not supported), GPU 1 once before it was lost. */
    assert_int_equal(fx->calls("nvmlDeviceGetPowerUsage"), 2);
}

/* Only the workload's processes count, summed; 0 when it has none on that GPU; NAN when that
 * is not known. */
static void test_process_memory(void **state)
{
    struct fixture *fx = *state;
    use_fake(fx, false, "devices 2\n"
                        "procs 0 SELF:7,1:4096 SELF:1048576,4000000:2048,1:4096 SELF:NA - -\n"
                        "procs 1 1:4096 ERR_UNKNOWN - -\n");
    assert_int_equal(open_source(fx), 0);

    /* Not started yet: nothing of the workload can be on a GPU. */
    size_t r0 = tick(fx);
    assert_value(fx, "gpu_process_memory_bytes", 0, r0, 0);
    assert_value(fx, "gpu_process_memory_bytes", 1, r0, 0);

    fx->ctx.leader = getpid();
    fx->tree[0] = getpid();
    fx->tree[1] = 4000000; /* a child of the workload, by its pid */
    fx->ctx.n_tree = 2;
    size_t r1 = tick(fx);
    assert_value(fx, "gpu_process_memory_bytes", 0, r1, 1048576 + 2048);
    assert_nan(fx, "gpu_process_memory_bytes", 1, r1);
    assert_int_equal(fx->errors, 1);

    size_t r2 = tick(fx); /* the driver cannot tell (NVML_VALUE_NOT_AVAILABLE): unknown */
    assert_nan(fx, "gpu_process_memory_bytes", 0, r2);
    assert_value(fx, "gpu_process_memory_bytes", 1, r2, 0);

    /* Started, but the process list is empty: the proc source could not tell, unknown. */
    fx->ctx.n_tree = 0;
    size_t r3 = tick(fx);
    assert_nan(fx, "gpu_process_memory_bytes", 0, r3);
    assert_nan(fx, "gpu_process_memory_bytes", 1, r3);
    assert_int_equal(fx->errors, 1);
}

/* More processes than the first buffer holds: NVML says so, the source asks again. */
static void test_many_processes(void **state)
{
    struct fixture *fx = *state;
    char script[4096] = "procs 0 ";
    for (int i = 0; i < 150; i++) {
        char entry[32];
        snprintf(entry, sizeof entry, "%d:%d,", 100000 + i, 1);
        strcat(script, entry);
    }
    strcat(script, "SELF:7\n");
    use_fake(fx, false, script);
    assert_int_equal(open_source(fx), 0);
    fx->tree[0] = getpid();
    fx->tree[1] = 100149;
    fx->ctx.n_tree = 2;
    size_t row = tick(fx);
    assert_value(fx, "gpu_process_memory_bytes", 0, row, 8);
    row = tick(fx);
    assert_value(fx, "gpu_process_memory_bytes", 0, row, 8);
    assert_int_equal(fx->errors, 0);
    /* Once too small, then large enough for good. */
    assert_int_equal(fx->calls("nvmlDeviceGetComputeRunningProcesses_v3"), 3);
}

/* An old driver's library: what it lacks stays NAN, the older symbols and the legacy process
 * layout are used. */
static void test_minimal_library(void **state)
{
    struct fixture *fx = *state;
    use_fake(fx, true, "devices 1\nutil 0 20/10\ntemp 0 60\nthrottle 0 8\n"
                       "pcie_rx 0 5\npcie_tx 0 6\nprocs 0 1:4096,SELF:3000,2:1\n");
    assert_int_equal(open_source(fx), 0);
    fx->tree[0] = getpid();
    fx->ctx.n_tree = 1;
    size_t row = tick(fx);
    assert_value(fx, "gpu_utilization_ratio", 0, row, 0.2);
    assert_value(fx, "gpu_temperature_celsius", 0, row, 60);
    assert_value(fx, "gpu_throttle_reasons", 0, row, 8);
    assert_value(fx, "gpu_process_memory_bytes", 0, row, 3000);
    assert_nan(fx, "gpu_pcie_rx_bytes_per_second", 0, row);
    assert_nan(fx, "gpu_pcie_tx_bytes_per_second", 0, row);
    assert_int_equal(fx->errors, 0);
    assert_int_equal(fx->calls("nvmlInit"), 1);
    assert_int_equal(fx->calls("nvmlDeviceGetCount"), 1);
    assert_int_equal(fx->calls("nvmlDeviceGetTemperature"), 1);
    assert_int_equal(fx->calls("nvmlDeviceGetCurrentClocksThrottleReasons"), 1);
    assert_int_equal(fx->calls("nvmlDeviceGetComputeRunningProcesses"), 1);
    assert_null(dlsym(fx->fake, "nvmlDeviceGetPcieThroughput"));
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, ms % 1000 * 1000000};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* PCIe readings block (5 ms per call here, ~20 ms on real GPUs): after one, the source rests
 * for 3 times as long, so a tick right after has none; later ones, or a new run, read again. */
static void test_pcie_rest(void **state)
{
    struct fixture *fx = *state;
    use_fake(fx, false, "pcie_delay_us 0 5000\npcie_rx 0 1 2 3\npcie_tx 0 4 5 6\n"
                        "util 0 1/1\n");
    assert_int_equal(open_source(fx), 0);
    size_t r0 = tick(fx), r1 = tick(fx);
    assert_value(fx, "gpu_pcie_rx_bytes_per_second", 0, r0, 1024);
    assert_value(fx, "gpu_pcie_tx_bytes_per_second", 0, r0, 4096);
    assert_nan(fx, "gpu_pcie_rx_bytes_per_second", 0, r1);
    assert_nan(fx, "gpu_pcie_tx_bytes_per_second", 0, r1);
    assert_value(fx, "gpu_utilization_ratio", 0, r1, 0.01);
    sleep_ms(300); /* > 3 * 2 * 5 ms, with room for a slow machine */
    size_t r2 = tick(fx);
    assert_value(fx, "gpu_pcie_rx_bytes_per_second", 0, r2, 2048);
    assert_value(fx, "gpu_pcie_tx_bytes_per_second", 0, r2, 5120);
    nvml_source.run_start(fx->state); /* a new repetition starts with a reading */
    size_t r3 = tick(fx);
    assert_value(fx, "gpu_pcie_rx_bytes_per_second", 0, r3, 3072);
    assert_int_equal(fx->calls("nvmlDeviceGetPcieThroughput"), 6);
    assert_int_equal(fx->errors, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_absurd_count, setup, teardown),
        cmocka_unit_test_setup_teardown(test_library_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_an_nvml_library, setup, teardown),
        cmocka_unit_test_setup_teardown(test_init_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_count_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_gpu, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_usable_gpu, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_gpus, setup, teardown),
        cmocka_unit_test_setup_teardown(test_device_info, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sampler_facts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_value, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_supported, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gpu_lost, setup, teardown),
        cmocka_unit_test_setup_teardown(test_process_memory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_processes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_minimal_library, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pcie_rest, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
