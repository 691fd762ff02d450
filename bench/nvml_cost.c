/* nvml-cost: what each NVML call the nvml metric source makes costs, on this machine's GPU 0:
 * the median and 90th percentile wall time of N calls of each (after 10 unmeasured), as one
 * JSON object per call on stdout. Loads NVML as mlbench does (dlopen, the declarations of
 * src/sources/nvml_abi.h; $MLBENCH_NVML_LIBRARY names another library, such as the tests' fake).
 * GPM calls are timed where the GPU has GPM: a sample (nvmlGpmSampleGet), and the metrics of a
 * pair of samples 100 ms apart (nvmlGpmMetricsGet, all twelve metrics the source asks for).
 * Usage: nvml-cost [N]   (default 200; bench/gpu-check.sh runs it on the GPU machine) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sources/nvml_abi.h"

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

static void *lib;
static nvmlDevice_t dev;

static void *sym(const char *name)
{
    return dlsym(lib, name);
}

/* One call of the kind being timed; returns NVML's answer. */
typedef nvmlReturn_t call_fn(void);

static nvml_utilization_fn *f_util;
static nvml_memory_fn *f_memory;
static nvml_uint_fn *f_power;
static nvml_query_fn *f_clock, *f_pcie, *f_max_clock;
static nvml_temperature_v_fn *f_temp;
static nvml_reasons_fn *f_reasons;
static nvml_procs_v2_fn *f_procs;
static nvml_gpm_sample_fn *f_gpm_sample;
static nvml_gpm_metrics_fn *f_gpm_metrics;
static nvmlGpmSample_t gpm[2];

static nvmlReturn_t c_util(void) { nvmlUtilization_t u; return f_util(dev, &u); }
static nvmlReturn_t c_memory(void) { nvmlMemory_t m; return f_memory(dev, &m); }
static nvmlReturn_t c_power(void) { unsigned v; return f_power(dev, &v); }
static nvmlReturn_t c_sm_clock(void) { unsigned v; return f_clock(dev, NVML_CLOCK_SM, &v); }
static nvmlReturn_t c_max_clock(void) { unsigned v; return f_max_clock(dev, NVML_CLOCK_SM, &v); }
static nvmlReturn_t c_pcie(void) { unsigned v; return f_pcie(dev, NVML_PCIE_UTIL_RX_BYTES, &v); }
static nvmlReturn_t c_reasons(void) { unsigned long long v; return f_reasons(dev, &v); }
static nvmlReturn_t c_gpm_sample(void) { return f_gpm_sample(dev, gpm[1]); }

static nvmlReturn_t c_temp(void)
{
    nvmlTemperature_v1_t t = {.version = NVML_TEMPERATURE_V1, .sensorType = NVML_TEMPERATURE_GPU};
    return f_temp(dev, &t);
}

static nvmlReturn_t c_procs(void)
{
    static nvmlProcessInfo_v2_t infos[256];
    unsigned n = 256;
    return f_procs(dev, &n, infos);
}

static nvmlReturn_t c_gpm_metrics(void)
{
    static const unsigned ids[] = {
        NVML_GPM_METRIC_GRAPHICS_UTIL, NVML_GPM_METRIC_SM_UTIL, NVML_GPM_METRIC_SM_OCCUPANCY,
        NVML_GPM_METRIC_ANY_TENSOR_UTIL, NVML_GPM_METRIC_DRAM_BW_UTIL, NVML_GPM_METRIC_FP64_UTIL,
        NVML_GPM_METRIC_FP32_UTIL, NVML_GPM_METRIC_FP16_UTIL, NVML_GPM_METRIC_PCIE_RX_PER_SEC,
        NVML_GPM_METRIC_PCIE_TX_PER_SEC, NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC,
        NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC};
    nvmlGpmMetricsGet_t get = {.version = NVML_GPM_METRICS_GET_VERSION, .sample1 = gpm[0],
                               .sample2 = gpm[1]};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        get.metrics[get.numMetrics++].metricId = ids[i];
    return f_gpm_metrics(&get);
}

/* Times n calls of fn (after 10 unmeasured) and prints them; a call the library lacks or that
 * fails is reported with its error instead. */
static void measure(const char *name, void *present, call_fn *fn, int n)
{
    if (!present) {
        printf("{\"call\": \"%s\", \"error\": \"not in the library\"}\n", name);
        return;
    }
    nvmlReturn_t rc = NVML_SUCCESS;
    for (int i = 0; i < 10 && rc == NVML_SUCCESS; i++)
        rc = fn();
    if (rc != NVML_SUCCESS) {
        printf("{\"call\": \"%s\", \"error\": \"NVML error %d\"}\n", name, rc);
        return;
    }
    long long *t = malloc((size_t)n * sizeof *t);
    if (!t)
        exit(1);
    for (int i = 0; i < n; i++) {
        long long start = now_ns();
        fn();
        t[i] = now_ns() - start;
    }
    qsort(t, (size_t)n, sizeof *t, by_value);
    printf("{\"call\": \"%s\", \"calls\": %d, \"median_ns\": %lld, \"p90_ns\": %lld}\n", name, n,
           t[n / 2], t[n * 9 / 10]);
    free(t);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 200;
    if (n < 10 || n > 1000000) {
        fprintf(stderr, "nvml-cost: N '%s' is not a number of calls from 10 to 1000000\n",
                argv[1]);
        return 2;
    }
    const char *path = getenv("MLBENCH_NVML_LIBRARY");
    lib = dlopen(path && *path ? path : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    nvml_init_fn *init = lib ? (nvml_init_fn *)sym("nvmlInit_v2") : NULL;
    nvml_handle_fn *handle = lib ? (nvml_handle_fn *)sym("nvmlDeviceGetHandleByIndex_v2") : NULL;
    if (!init || !handle || init() != NVML_SUCCESS || handle(0, &dev) != NVML_SUCCESS) {
        fprintf(stderr, "nvml-cost: no NVML or no GPU 0 (%s)\n", lib ? "init failed" : dlerror());
        return 2;
    }
    f_util = (nvml_utilization_fn *)sym("nvmlDeviceGetUtilizationRates");
    f_memory = (nvml_memory_fn *)sym("nvmlDeviceGetMemoryInfo");
    f_power = (nvml_uint_fn *)sym("nvmlDeviceGetPowerUsage");
    f_clock = (nvml_query_fn *)sym("nvmlDeviceGetClockInfo");
    f_max_clock = (nvml_query_fn *)sym("nvmlDeviceGetMaxClockInfo");
    f_temp = (nvml_temperature_v_fn *)sym("nvmlDeviceGetTemperatureV");
    f_pcie = (nvml_query_fn *)sym("nvmlDeviceGetPcieThroughput");
    f_reasons = (nvml_reasons_fn *)sym("nvmlDeviceGetCurrentClocksEventReasons");
    f_procs = (nvml_procs_v2_fn *)sym("nvmlDeviceGetComputeRunningProcesses_v3");
    measure("nvmlDeviceGetUtilizationRates", (void *)f_util, c_util, n);
    measure("nvmlDeviceGetMemoryInfo", (void *)f_memory, c_memory, n);
    measure("nvmlDeviceGetPowerUsage", (void *)f_power, c_power, n);
    measure("nvmlDeviceGetClockInfo(SM)", (void *)f_clock, c_sm_clock, n);
    measure("nvmlDeviceGetMaxClockInfo(SM)", (void *)f_max_clock, c_max_clock, n);
    measure("nvmlDeviceGetTemperatureV", (void *)f_temp, c_temp, n);
    measure("nvmlDeviceGetCurrentClocksEventReasons", (void *)f_reasons, c_reasons, n);
    measure("nvmlDeviceGetComputeRunningProcesses_v3", (void *)f_procs, c_procs, n);
    measure("nvmlDeviceGetPcieThroughput(RX)", (void *)f_pcie, c_pcie, n < 50 ? n : 50);

    nvml_gpm_support_fn *support = (nvml_gpm_support_fn *)sym("nvmlGpmQueryDeviceSupport");
    nvml_gpm_alloc_fn *alloc = (nvml_gpm_alloc_fn *)sym("nvmlGpmSampleAlloc");
    f_gpm_sample = (nvml_gpm_sample_fn *)sym("nvmlGpmSampleGet");
    f_gpm_metrics = (nvml_gpm_metrics_fn *)sym("nvmlGpmMetricsGet");
    nvmlGpmSupport_t s = {.version = NVML_GPM_SUPPORT_VERSION};
    if (!support || !alloc || !f_gpm_sample || !f_gpm_metrics ||
        support(dev, &s) != NVML_SUCCESS || !s.isSupportedDevice ||
        alloc(&gpm[0]) != NVML_SUCCESS || alloc(&gpm[1]) != NVML_SUCCESS) {
        printf("{\"call\": \"nvmlGpm*\", \"error\": \"no GPM on GPU 0\"}\n");
        return 0;
    }
    f_gpm_sample(dev, gpm[0]);
    struct timespec wait = {0, 100000000}; /* NVML wants 100 ms between the samples of a pair */
    nanosleep(&wait, NULL);
    measure("nvmlGpmSampleGet", (void *)f_gpm_sample, c_gpm_sample, n);
    measure("nvmlGpmMetricsGet(12 metrics)", (void *)f_gpm_metrics, c_gpm_metrics, n);
    return 0;
}
