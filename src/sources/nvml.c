/* nvml: the GPU metric source. Loads NVML (libnvidia-ml.so.1, shipped with the NVIDIA driver)
 * with dlopen at run time, so one mlbench binary runs with and without a GPU; the few functions
 * used are declared in nvml_abi.h. $MLBENCH_NVML_LIBRARY names another library (the fake NVML
 * of the tests). Every GPU NVML lists is sampled, whatever --all-gpus says: which GPUs the
 * workload used is for the report to decide (gpu_process_memory_bytes tells).
 *
 * Per GPU i, series labelled gpu="i" (docs/metrics.md): utilisation, memory, power, clocks,
 * temperature, PCIe throughput, throttle reasons and the GPU memory of the workload's processes.
 *
 * GPM (GPU Performance Monitoring, Hopper and newer): on a GPU that has it, each tick takes a
 * sample of its counters, and nvmlGpmMetricsGet computes from it and the previous sample the SM,
 * tensor, FP pipe and DRAM activity and the PCIe and NVLink rates. The value at tick k covers
 * exactly the interval since the previous GPM sample: [t(k-1), t(k)] at intervals of
 * GPM_MIN_INTERVAL_NS and more. The first tick of each run (run_start forgets the previous
 * sample) has none; so has a tick less than GPM_MIN_INTERVAL_NS after the previous sample (NVML
 * wants 100 ms between samples), which takes no sample: the next tick's value covers the whole
 * span. A failed sample leaves the previous one for the next tick likewise. These series are
 * registered only when some GPU has GPM; on the others they stay NAN. Where GPM gives the PCIe
 * rates, they fill the PCIe series and nvmlDeviceGetPcieThroughput (which blocks for 20 ms) is
 * not called on that GPU. Each GPM metric follows the failure rules below on its own.
 *
 * Static facts (driver version; name, uuid, compute capability, memory size, maximum SM clock
 * and GPM of each GPU: struct gpu_facts of facts.h) are read once when the source opens and
 * given by its facts op.
 *
 * Failures: a function the library lacks, or one NVML says the GPU does not support, leaves its
 * series NAN without counting an error (it is a capability, not a failure, and is not asked
 * again); any other error leaves the value NAN and counts one error; a lost GPU
 * (NVML_ERROR_GPU_IS_LOST, or one needing a reset) counts one error and is not asked again. */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sources/facts.h"
#include "sources/nvml_abi.h"
#include "sources/sources.h"
#include "util/clock.h"
#include "util/xalloc.h"

#define NVML_DEFAULT_LIBRARY "libnvidia-ml.so.1"
#define NVML_MAX_GPUS 256 /* more than any machine holds (NVLink domains are per rack) */

/* nvmlDeviceGetPcieThroughput measures over 20 ms and blocks for that long, per counter and per
 * GPU: two counters on 8 GPUs cost 320 ms, more than a 100 ms tick. So PCIe is read only at
 * ticks at least PCIE_REST_FACTOR times the duration of the last reading after its end, which
 * keeps it below 1 / (1 + PCIE_REST_FACTOR) = 25 % of the sampler's time whatever the number of
 * GPUs and the interval (1 GPU at 100 ms: every other tick); the ticks between are NAN. */
#define PCIE_REST_FACTOR 3
/* A reading cheaper than this did not block (NVML answered at once, or a fake did): no rest. */
#define PCIE_CHEAP_NS 1000000

/* Initial capacity of the process list (entries); it grows when NVML says it is too small. */
#define PROCS_INITIAL_CAP 64

/* nvmlGpmSampleGet: "the interval between two calls should be greater than 100 ms due to the
 * internal sample refresh rate" (nvml.h); DCGM's profiling metrics have the same minimum. Less
 * 10 ms of slack: on the sampler's fixed-rate schedule, a tick that wakes a few ms late is
 * followed by one on time, a little under 100 ms after it, which must not lose its sample. */
#define GPM_MIN_INTERVAL_NS 90000000LL

/* The series of one GPU, registered in this order. */
enum gpu_series {
    S_UTIL,
    S_MEM_UTIL,
    S_MEM_USED,
    S_MEM_TOTAL,
    S_POWER,
    S_SM_CLOCK,
    S_MEM_CLOCK,
    S_TEMP,
    S_PCIE_RX,
    S_PCIE_TX,
    S_THROTTLE,
    S_PROC_MEM,
    /* GPM (registered only when some GPU has it) */
    S_GRAPHICS_ACTIVE,
    S_SM_ACTIVE,
    S_SM_OCCUPANCY,
    S_TENSOR_ACTIVE,
    S_DRAM_ACTIVE,
    S_FP64_ACTIVE,
    S_FP32_ACTIVE,
    S_FP16_ACTIVE,
    S_NVLINK_RX,
    S_NVLINK_TX,
    N_SERIES
};
#define N_BASE_SERIES S_GRAPHICS_ACTIVE

static const char *const series_names[N_SERIES] = {
    [S_UTIL] = "gpu_utilization_ratio",
    [S_MEM_UTIL] = "gpu_memory_utilization_ratio",
    [S_MEM_USED] = "gpu_memory_used_bytes",
    [S_MEM_TOTAL] = "gpu_memory_total_bytes",
    [S_POWER] = "gpu_power_watts",
    [S_SM_CLOCK] = "gpu_sm_clock_hertz",
    [S_MEM_CLOCK] = "gpu_memory_clock_hertz",
    [S_TEMP] = "gpu_temperature_celsius",
    [S_PCIE_RX] = "gpu_pcie_rx_bytes_per_second",
    [S_PCIE_TX] = "gpu_pcie_tx_bytes_per_second",
    [S_THROTTLE] = "gpu_throttle_reasons",
    [S_PROC_MEM] = "gpu_process_memory_bytes",
    [S_GRAPHICS_ACTIVE] = "gpu_graphics_active_ratio",
    [S_SM_ACTIVE] = "gpu_sm_active_ratio",
    [S_SM_OCCUPANCY] = "gpu_sm_occupancy_ratio",
    [S_TENSOR_ACTIVE] = "gpu_tensor_active_ratio",
    [S_DRAM_ACTIVE] = "gpu_dram_active_ratio",
    [S_FP64_ACTIVE] = "gpu_fp64_active_ratio",
    [S_FP32_ACTIVE] = "gpu_fp32_active_ratio",
    [S_FP16_ACTIVE] = "gpu_fp16_active_ratio",
    [S_NVLINK_RX] = "gpu_nvlink_rx_bytes_per_second",
    [S_NVLINK_TX] = "gpu_nvlink_tx_bytes_per_second",
};

/* The GPM metrics asked for, all in one nvmlGpmMetricsGet; the index is a bit of
 * gpu.gpm_unsupported. */
enum gpm_metric {
    G_GRAPHICS,
    G_SM,
    G_OCCUPANCY,
    G_TENSOR,
    G_DRAM,
    G_FP64,
    G_FP32,
    G_FP16,
    G_PCIE_RX,
    G_PCIE_TX,
    G_NVLINK_RX,
    G_NVLINK_TX,
    N_GPM
};
#define GPM_PCIE_BITS ((1u << G_PCIE_RX) | (1u << G_PCIE_TX))

static const struct {
    unsigned int id;       /* NVML_GPM_METRIC_ */
    enum gpu_series s;
    bool ratio;            /* percent, stored / 100; else MiB/s, stored in bytes/s */
} gpm_metrics[N_GPM] = {
    [G_GRAPHICS] = {NVML_GPM_METRIC_GRAPHICS_UTIL, S_GRAPHICS_ACTIVE, true},
    [G_SM] = {NVML_GPM_METRIC_SM_UTIL, S_SM_ACTIVE, true},
    [G_OCCUPANCY] = {NVML_GPM_METRIC_SM_OCCUPANCY, S_SM_OCCUPANCY, true},
    [G_TENSOR] = {NVML_GPM_METRIC_ANY_TENSOR_UTIL, S_TENSOR_ACTIVE, true},
    [G_DRAM] = {NVML_GPM_METRIC_DRAM_BW_UTIL, S_DRAM_ACTIVE, true},
    [G_FP64] = {NVML_GPM_METRIC_FP64_UTIL, S_FP64_ACTIVE, true},
    [G_FP32] = {NVML_GPM_METRIC_FP32_UTIL, S_FP32_ACTIVE, true},
    [G_FP16] = {NVML_GPM_METRIC_FP16_UTIL, S_FP16_ACTIVE, true},
    [G_PCIE_RX] = {NVML_GPM_METRIC_PCIE_RX_PER_SEC, S_PCIE_RX, false},
    [G_PCIE_TX] = {NVML_GPM_METRIC_PCIE_TX_PER_SEC, S_PCIE_TX, false},
    [G_NVLINK_RX] = {NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC, S_NVLINK_RX, false},
    [G_NVLINK_TX] = {NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC, S_NVLINK_TX, false},
};
_Static_assert(N_GPM <= NVML_GPM_METRICS_CAP, "nvmlGpmMetricsGet_t.metrics too small");

/* The NVML queries of one tick; one a GPU does not support is remembered as a bit. */
enum query {
    Q_UTIL,
    Q_MEMORY,
    Q_POWER,
    Q_SM_CLOCK,
    Q_MEM_CLOCK,
    Q_TEMP,
    Q_PCIE,
    Q_THROTTLE,
    Q_PROCS,
    Q_GPM /* nvmlGpmSampleGet and nvmlGpmMetricsGet: GPM as a whole */
};

/* The functions found in the library; NULL: not exported (the first four are required). */
struct nvml_api {
    nvml_init_fn *init;
    nvml_shutdown_fn *shutdown;
    nvml_count_fn *count;
    nvml_handle_fn *handle;
    nvml_error_string_fn *error_string;
    nvml_driver_version_fn *driver_version;
    nvml_string_fn *name, *uuid;
    nvml_cc_fn *cc;
    nvml_memory_fn *memory;
    nvml_utilization_fn *utilization;
    nvml_uint_fn *power;
    nvml_query_fn *clock;
    nvml_temperature_v_fn *temperature_v; /* preferred: nvmlDeviceGetTemperature is deprecated */
    nvml_query_fn *temperature;
    nvml_query_fn *pcie;
    nvml_reasons_fn *reasons;
    nvml_procs_v2_fn *procs_v2; /* _v3 or _v2: the same layout */
    nvml_procs_v1_fn *procs_v1; /* the legacy symbol, only when neither is exported */
    nvml_query_fn *max_clock;
    nvml_gpm_support_fn *gpm_support; /* GPM: used only when all five are exported */
    nvml_gpm_alloc_fn *gpm_alloc;
    nvml_gpm_free_fn *gpm_free;
    nvml_gpm_sample_fn *gpm_sample;
    nvml_gpm_metrics_fn *gpm_metrics;
};

struct gpu {
    nvmlDevice_t dev;
    size_t col[N_SERIES]; /* the index of each of its series */
    bool lost;            /* lost, or never reachable: not asked again */
    unsigned unsupported; /* bit q set: NVML said query q is not supported on this GPU */
    struct gpu_facts facts;
    /* GPM (facts.gpm): two sample buffers, taken in turn; gpm_sample[gpm_next] is the next */
    nvmlGpmSample_t gpm_sample[2];
    int gpm_next;
    bool gpm_have_prev;       /* the other buffer holds a sample of this run, taken at: */
    int64_t gpm_prev_ns;      /* the timestamp of its tick */
    unsigned gpm_unsupported; /* bit m set: NVML said GPM metric m is not supported here */
};

struct nvml_state {
    void *lib;
    struct nvml_api api;
    struct gpu *gpus;
    size_t n_gpus;
    char driver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
    int64_t pcie_next_ns; /* CLOCK_MONOTONIC; PCIe is read at the first tick from then on */
    void *procs;          /* process list buffer: nvmlProcessInfo_v2_t or _v1_t entries */
    unsigned int procs_cap;
};

/* One tick of one GPU: where its values go. */
struct tick {
    struct sample_table *tab;
    size_t row;
    uint64_t *errors;
    int64_t pcie_cost_ns; /* time spent in PCIe calls this tick */
};


/* The first of the NULL-terminated names that lib exports, or NULL. */
static void *lookup(void *lib, const char *const *names)
{
    for (; *names; names++) {
        void *p = dlsym(lib, *names);
        if (p)
            return p;
    }
    return NULL;
}
#define SYMBOLS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* POSIX guarantees that dlsym's object pointer converts to a function pointer. */
static void load_api(void *lib, struct nvml_api *api)
{
    api->init = (nvml_init_fn *)lookup(lib, SYMBOLS("nvmlInit_v2", "nvmlInit"));
    api->shutdown = (nvml_shutdown_fn *)lookup(lib, SYMBOLS("nvmlShutdown"));
    api->count =
        (nvml_count_fn *)lookup(lib, SYMBOLS("nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"));
    api->handle = (nvml_handle_fn *)lookup(
        lib, SYMBOLS("nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"));
    api->error_string = (nvml_error_string_fn *)lookup(lib, SYMBOLS("nvmlErrorString"));
    api->driver_version =
        (nvml_driver_version_fn *)lookup(lib, SYMBOLS("nvmlSystemGetDriverVersion"));
    api->name = (nvml_string_fn *)lookup(lib, SYMBOLS("nvmlDeviceGetName"));
    api->uuid = (nvml_string_fn *)lookup(lib, SYMBOLS("nvmlDeviceGetUUID"));
    api->cc = (nvml_cc_fn *)lookup(lib, SYMBOLS("nvmlDeviceGetCudaComputeCapability"));
    api->memory = (nvml_memory_fn *)lookup(lib, SYMBOLS("nvmlDeviceGetMemoryInfo"));
    api->utilization =
        (nvml_utilization_fn *)lookup(lib, SYMBOLS("nvmlDeviceGetUtilizationRates"));
    api->power = (nvml_uint_fn *)lookup(lib, SYMBOLS("nvmlDeviceGetPowerUsage"));
    api->clock = (nvml_query_fn *)lookup(lib, SYMBOLS("nvmlDeviceGetClockInfo"));
    api->temperature_v =
        (nvml_temperature_v_fn *)lookup(lib, SYMBOLS("nvmlDeviceGetTemperatureV"));
    if (!api->temperature_v)
        api->temperature =
            (nvml_query_fn *)lookup(lib, SYMBOLS("nvmlDeviceGetTemperature"));
    api->pcie = (nvml_query_fn *)lookup(lib, SYMBOLS("nvmlDeviceGetPcieThroughput"));
    api->reasons = (nvml_reasons_fn *)lookup(
        lib, SYMBOLS("nvmlDeviceGetCurrentClocksEventReasons",
                     "nvmlDeviceGetCurrentClocksThrottleReasons"));
    api->max_clock = (nvml_query_fn *)lookup(lib, SYMBOLS("nvmlDeviceGetMaxClockInfo"));
    api->gpm_support =
        (nvml_gpm_support_fn *)lookup(lib, SYMBOLS("nvmlGpmQueryDeviceSupport"));
    api->gpm_alloc = (nvml_gpm_alloc_fn *)lookup(lib, SYMBOLS("nvmlGpmSampleAlloc"));
    api->gpm_free = (nvml_gpm_free_fn *)lookup(lib, SYMBOLS("nvmlGpmSampleFree"));
    api->gpm_sample = (nvml_gpm_sample_fn *)lookup(lib, SYMBOLS("nvmlGpmSampleGet"));
    api->gpm_metrics = (nvml_gpm_metrics_fn *)lookup(lib, SYMBOLS("nvmlGpmMetricsGet"));
    api->procs_v2 = (nvml_procs_v2_fn *)lookup(
        lib, SYMBOLS("nvmlDeviceGetComputeRunningProcesses_v3",
                     "nvmlDeviceGetComputeRunningProcesses_v2"));
    if (!api->procs_v2)
        api->procs_v1 =
            (nvml_procs_v1_fn *)lookup(lib, SYMBOLS("nvmlDeviceGetComputeRunningProcesses"));
}

static const char *error_text(const struct nvml_api *api, nvmlReturn_t rc, char *buf, size_t len)
{
    const char *s = api->error_string ? api->error_string(rc) : NULL;
    if (s && *s)
        return s;
    snprintf(buf, len, "NVML error %d", rc);
    return buf;
}

/* Reads the facts of a GPU that has a handle; what NVML does not tell stays unknown. */
static void read_facts(const struct nvml_api *api, struct gpu *g)
{
    struct gpu_facts *f = &g->facts;
    if (api->name && api->name(g->dev, f->name, sizeof f->name) != NVML_SUCCESS)
        f->name[0] = '\0';
    if (api->uuid && api->uuid(g->dev, f->uuid, sizeof f->uuid) != NVML_SUCCESS)
        f->uuid[0] = '\0';
    f->name[sizeof f->name - 1] = f->uuid[sizeof f->uuid - 1] = '\0';
    int major, minor;
    if (api->cc && api->cc(g->dev, &major, &minor) == NVML_SUCCESS) {
        f->cc_major = major;
        f->cc_minor = minor;
    }
    nvmlMemory_t m;
    if (api->memory && api->memory(g->dev, &m) == NVML_SUCCESS)
        f->memory_bytes = (double)m.total;
    unsigned int mhz;
    if (api->max_clock && api->max_clock(g->dev, NVML_CLOCK_SM, &mhz) == NVML_SUCCESS && mhz > 0)
        f->sm_clock_max_hertz = mhz * 1e6;
}

/* Sets up GPM on g when it has it: two sample buffers, freed by unload. No GPM otherwise. */
static void open_gpm(const struct nvml_api *api, struct gpu *g)
{
    if (!api->gpm_support || !api->gpm_alloc || !api->gpm_free || !api->gpm_sample ||
        !api->gpm_metrics)
        return;
    nvmlGpmSupport_t support = {.version = NVML_GPM_SUPPORT_VERSION};
    if (api->gpm_support(g->dev, &support) != NVML_SUCCESS || !support.isSupportedDevice)
        return;
    for (int i = 0; i < 2; i++) {
        if (api->gpm_alloc(&g->gpm_sample[i]) != NVML_SUCCESS) {
            if (i == 1)
                api->gpm_free(g->gpm_sample[0]);
            g->gpm_sample[0] = g->gpm_sample[1] = NULL;
            return;
        }
    }
    g->facts.gpm = true;
}

/* Unloads the library, after a failed open (NVML initialised or not) or at close. */
static void unload(struct nvml_state *st, bool initialised)
{
    for (size_t i = 0; initialised && i < st->n_gpus; i++)
        if (st->gpus[i].facts.gpm)
            for (int b = 0; b < 2; b++)
                st->api.gpm_free(st->gpus[i].gpm_sample[b]);
    if (initialised)
        st->api.shutdown();
    dlclose(st->lib);
    free(st->gpus);
    free(st->procs);
    free(st);
}

static int nvml_open(struct series_registry *reg, const struct sample_ctx *ctx, void **state,
                     char *err, size_t errlen)
{
    (void)ctx; /* --all-gpus filters the report, not the sampling */
    const char *path = getenv("MLBENCH_NVML_LIBRARY");
    bool custom = path && *path;
    if (!custom)
        path = NVML_DEFAULT_LIBRARY;
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        if (why && strstr(why, "No such file"))
            snprintf(err, errlen, "%s not found (%s): GPU not measured", path,
                     custom ? "MLBENCH_NVML_LIBRARY" : "no NVIDIA driver");
        else
            snprintf(err, errlen, "cannot load %s: %s: GPU not measured", path,
                     why ? why : "unknown error");
        return -1;
    }

    struct nvml_state *st = xcalloc(1, sizeof *st);
    st->lib = lib;
    load_api(lib, &st->api);
    const struct nvml_api *api = &st->api;
    if (!api->init || !api->shutdown || !api->count || !api->handle) {
        snprintf(err, errlen, "%s lacks nvmlInit, nvmlShutdown, nvmlDeviceGetCount or "
                 "nvmlDeviceGetHandleByIndex: not an NVML library? GPU not measured", path);
        unload(st, false);
        return -1;
    }
    char buf[64];
    nvmlReturn_t rc = api->init();
    if (rc != NVML_SUCCESS) {
        snprintf(err, errlen, "nvmlInit failed: %s: GPU not measured",
                 error_text(api, rc, buf, sizeof buf));
        unload(st, false);
        return -1;
    }
    unsigned int n = 0;
    rc = api->count(&n);
    if (rc != NVML_SUCCESS || n == 0 || n > NVML_MAX_GPUS) {
        if (rc != NVML_SUCCESS)
            snprintf(err, errlen, "nvmlDeviceGetCount failed: %s: GPU not measured",
                     error_text(api, rc, buf, sizeof buf));
        else if (n > NVML_MAX_GPUS) /* a broken library: 4 294 967 295 GPUs asked 1.4 TB */
            snprintf(err, errlen, "NVML says there are %u GPUs, more than the %d one machine can "
                     "hold (a broken driver or library?): GPU not measured", n, NVML_MAX_GPUS);
        else
            snprintf(err, errlen, "no GPU found");
        unload(st, true);
        return -1;
    }

    st->n_gpus = n;
    st->gpus = xcalloc(n, sizeof *st->gpus);
    size_t usable = 0;
    bool gpm = false; /* some GPU has GPM */
    nvmlReturn_t first_rc = NVML_SUCCESS;
    for (unsigned int i = 0; i < n; i++) {
        struct gpu *g = &st->gpus[i];
        g->facts = gpu_facts_unknown((int)i);
        rc = api->handle(i, &g->dev);
        if (rc == NVML_SUCCESS) {
            g->facts.usable = true;
            read_facts(api, g);
            open_gpm(api, g);
            gpm |= g->facts.gpm;
            usable++;
        } else {
            g->lost = true;
            if (first_rc == NVML_SUCCESS)
                first_rc = rc;
        }
    }
    if (usable == 0) {
        snprintf(err, errlen, "no usable GPU: nvmlDeviceGetHandleByIndex: %s: GPU not measured",
                 error_text(api, first_rc, buf, sizeof buf));
        unload(st, true);
        return -1;
    }

    /* Every GPU gets its series, reachable or not, so that labels are NVML's indices; the GPM
     * ones only when some GPU has GPM (absent, rather than null on every GPU). */
    for (size_t i = 0; i < st->n_gpus; i++) {
        char labels[32];
        snprintf(labels, sizeof labels, "gpu=\"%zu\"", i);
        for (int s = 0; s < (gpm ? N_SERIES : N_BASE_SERIES); s++)
            st->gpus[i].col[s] =
                series_register(reg, "nvml", series_names[s], labels, SERIES_GAUGE);
    }
    if (!api->driver_version ||
        api->driver_version(st->driver, sizeof st->driver) != NVML_SUCCESS)
        st->driver[0] = '\0';
    st->driver[sizeof st->driver - 1] = '\0';
    st->procs_cap = PROCS_INITIAL_CAP;
    st->procs = xcalloc(st->procs_cap, api->procs_v2 ? sizeof(nvmlProcessInfo_v2_t)
                                                     : sizeof(nvmlProcessInfo_v1_t));
    *state = st;
    return 0;
}

/* Whether rc says that what was asked is not there (a capability, not a failure). */
static bool unsupported(nvmlReturn_t rc)
{
    return rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_FUNCTION_NOT_FOUND ||
           rc == NVML_ERROR_DEPRECATED;
}

/* Sorts out the answer to query q on GPU g. True when a value came back. */
static bool answered(struct gpu *g, enum query q, nvmlReturn_t rc, uint64_t *errors)
{
    if (rc == NVML_SUCCESS)
        return true;
    if (rc == NVML_ERROR_GPU_IS_LOST || rc == NVML_ERROR_RESET_REQUIRED)
        g->lost = true; /* counted once: the GPU is not asked again */
    if (unsupported(rc))
        g->unsupported |= 1u << q;
    else
        (*errors)++;
    return false;
}

/* Whether query q is to be asked of g (fn: whether the library has it). */
static bool ask(const struct gpu *g, enum query q, bool fn)
{
    return fn && !g->lost && !(g->unsupported & (1u << q));
}

static void store(const struct tick *t, const struct gpu *g, enum gpu_series s, double value)
{
    sample_table_set(t->tab, g->col[s], t->row, value);
}

/* One clock, temperature or PCIe counter: a query with one argument and an unsigned answer. */
static void read_scaled(struct tick *t, struct gpu *g, enum query q,
                        nvml_query_fn *fn, int arg, enum gpu_series s, double scale)
{
    unsigned int v;
    if (ask(g, q, fn != NULL) && answered(g, q, fn(g->dev, arg, &v), t->errors))
        store(t, g, s, v * scale);
}

static void read_temperature(const struct nvml_api *api, struct tick *t, struct gpu *g)
{
    if (api->temperature_v) {
        nvmlTemperature_v1_t temp = {.version = NVML_TEMPERATURE_V1,
                                     .sensorType = NVML_TEMPERATURE_GPU};
        if (ask(g, Q_TEMP, true) &&
            answered(g, Q_TEMP, api->temperature_v(g->dev, &temp), t->errors))
            store(t, g, S_TEMP, temp.temperature);
    } else {
        read_scaled(t, g, Q_TEMP, api->temperature, NVML_TEMPERATURE_GPU, S_TEMP, 1.0);
    }
}

static void read_pcie(const struct nvml_api *api, struct tick *t, struct gpu *g)
{
    int64_t start = mono_ns();
    read_scaled(t, g, Q_PCIE, api->pcie, NVML_PCIE_UTIL_RX_BYTES, S_PCIE_RX, 1024.0);
    read_scaled(t, g, Q_PCIE, api->pcie, NVML_PCIE_UTIL_TX_BYTES, S_PCIE_TX, 1024.0);
    t->pcie_cost_ns += mono_ns() - start;
}

/* Whether GPM gives g's PCIe rates, so that the blocking nvmlDeviceGetPcieThroughput is not
 * needed: until NVML says either GPM PCIe metric is not supported there. */
static bool gpm_pcie(const struct gpu *g)
{
    return g->facts.gpm && ask(g, Q_GPM, true) && !(g->gpm_unsupported & GPM_PCIE_BITS);
}

/* One GPM metric in base units; NAN for what no percentage or rate can be (NaN, negative). */
static double gpm_value(enum gpm_metric m, double v)
{
    if (!(v >= 0))
        return NAN;
    if (!gpm_metrics[m].ratio)
        return v * 1048576.0; /* MiB/s */
    /* Counter deltas over elapsed cycles, read at slightly different instants, can come out
     * above 100 % (DCGM, which reads the same counters, has shown SM activity of 1.29 on MIG
     * instances, NVIDIA/DCGM#152): read as "all of it", which is what the analysis compares. */
    return v >= 100.0 ? 1.0 : v / 100.0;
}

/* Computes the GPM metrics of [prev, cur] on g and stores those that NVML gives. */
static void store_gpm(const struct nvml_api *api, struct tick *t, struct gpu *g,
                      nvmlGpmSample_t prev, nvmlGpmSample_t cur)
{
    nvmlGpmMetricsGet_t get = {.version = NVML_GPM_METRICS_GET_VERSION, .sample1 = prev,
                               .sample2 = cur};
    enum gpm_metric asked[N_GPM];
    for (int m = 0; m < N_GPM; m++)
        if (!(g->gpm_unsupported & (1u << m))) {
            get.metrics[get.numMetrics].metricId = gpm_metrics[m].id;
            asked[get.numMetrics++] = (enum gpm_metric)m;
        }
    if (get.numMetrics == 0 || !answered(g, Q_GPM, api->gpm_metrics(&get), t->errors))
        return;
    bool pcie = gpm_pcie(g);
    for (unsigned int i = 0; i < get.numMetrics; i++) {
        const nvmlGpmMetric_t *r = &get.metrics[i];
        enum gpm_metric m = asked[i];
        if (r->nvmlReturn == NVML_SUCCESS) {
            if (pcie || (m != G_PCIE_RX && m != G_PCIE_TX))
                store(t, g, gpm_metrics[m].s, gpm_value(m, r->value));
        } else if (unsupported(r->nvmlReturn)) {
            g->gpm_unsupported |= 1u << m; /* e.g. NVLink on a PCIe card */
        } else {
            (*t->errors)++;
        }
    }
}

/* Takes a GPM sample of g and, with the previous one of this run, computes the metrics of the
 * interval between them. A failed sample leaves the previous one in place. */
static void read_gpm(const struct nvml_api *api, struct tick *t, struct gpu *g)
{
    int64_t now = t->tab->t_ns[t->row];
    if (!g->facts.gpm || !ask(g, Q_GPM, true) ||
        (g->gpm_have_prev && now - g->gpm_prev_ns < GPM_MIN_INTERVAL_NS))
        return;
    nvmlGpmSample_t cur = g->gpm_sample[g->gpm_next];
    if (!answered(g, Q_GPM, api->gpm_sample(g->dev, cur), t->errors))
        return;
    if (g->gpm_have_prev)
        store_gpm(api, t, g, g->gpm_sample[!g->gpm_next], cur);
    g->gpm_next = !g->gpm_next;
    g->gpm_have_prev = true;
    g->gpm_prev_ns = now;
}

static bool in_tree(const struct sample_ctx *ctx, unsigned int pid)
{
    for (size_t i = 0; i < ctx->n_tree; i++)
        if ((unsigned int)ctx->tree[i] == pid)
            return true;
    return false;
}

/* Asks for the compute processes on g into st->procs, growing it when NVML says it is too
 * small (the list can grow between calls, so a few tries). Returns NVML's answer; *n: entries. */
static nvmlReturn_t list_processes(struct nvml_state *st, const struct gpu *g, unsigned int *n)
{
    size_t size = st->api.procs_v2 ? sizeof(nvmlProcessInfo_v2_t) : sizeof(nvmlProcessInfo_v1_t);
    nvmlReturn_t rc = NVML_ERROR_INSUFFICIENT_SIZE;
    for (int attempt = 0; attempt < 3 && rc == NVML_ERROR_INSUFFICIENT_SIZE; attempt++) {
        *n = st->procs_cap;
        rc = st->api.procs_v2 ? st->api.procs_v2(g->dev, n, st->procs)
                              : st->api.procs_v1(g->dev, n, st->procs);
        if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {
            unsigned int want = *n > st->procs_cap ? *n + 16 : st->procs_cap * 2;
            st->procs = xreallocarray(st->procs, want, size);
            st->procs_cap = want;
        }
    }
    if (*n > st->procs_cap)
        *n = st->procs_cap;
    return rc;
}

/* The GPU memory of the workload's processes on g: 0 when it has none there. */
static void read_process_memory(struct nvml_state *st, struct tick *t, struct gpu *g,
                                const struct sample_ctx *ctx)
{
    /* Started but with no process list: the proc source could not tell which are its own. */
    if (ctx->leader > 0 && ctx->n_tree == 0)
        return;
    if (!ask(g, Q_PROCS, st->api.procs_v2 || st->api.procs_v1))
        return;
    unsigned int n;
    if (!answered(g, Q_PROCS, list_processes(st, g, &n), t->errors))
        return;
    double sum = 0;
    for (unsigned int i = 0; i < n; i++) {
        unsigned int pid;
        unsigned long long used;
        if (st->api.procs_v2) {
            const nvmlProcessInfo_v2_t *p = (const nvmlProcessInfo_v2_t *)st->procs + i;
            pid = p->pid;
            used = p->usedGpuMemory;
        } else {
            const nvmlProcessInfo_v1_t *p = (const nvmlProcessInfo_v1_t *)st->procs + i;
            pid = p->pid;
            used = p->usedGpuMemory;
        }
        if (!in_tree(ctx, pid))
            continue;
        if (used == NVML_VALUE_NOT_AVAILABLE)
            return; /* the driver cannot tell: unknown, not 0 */
        sum += (double)used;
    }
    store(t, g, S_PROC_MEM, sum);
}

static void sample_gpu(struct nvml_state *st, struct tick *t, struct gpu *g,
                       const struct sample_ctx *ctx, bool pcie)
{
    const struct nvml_api *api = &st->api;
    nvmlUtilization_t u;
    if (ask(g, Q_UTIL, api->utilization != NULL) &&
        answered(g, Q_UTIL, api->utilization(g->dev, &u), t->errors)) {
        store(t, g, S_UTIL, u.gpu / 100.0);
        store(t, g, S_MEM_UTIL, u.memory / 100.0);
    }
    nvmlMemory_t m;
    if (ask(g, Q_MEMORY, api->memory != NULL) &&
        answered(g, Q_MEMORY, api->memory(g->dev, &m), t->errors)) {
        store(t, g, S_MEM_USED, (double)m.used);
        store(t, g, S_MEM_TOTAL, (double)m.total);
    }
    unsigned int mw;
    if (ask(g, Q_POWER, api->power != NULL) &&
        answered(g, Q_POWER, api->power(g->dev, &mw), t->errors))
        store(t, g, S_POWER, mw / 1000.0);
    read_scaled(t, g, Q_SM_CLOCK, api->clock, NVML_CLOCK_SM, S_SM_CLOCK, 1e6);
    read_scaled(t, g, Q_MEM_CLOCK, api->clock, NVML_CLOCK_MEM, S_MEM_CLOCK, 1e6);
    read_temperature(api, t, g);
    read_gpm(api, t, g);
    if (pcie && !gpm_pcie(g))
        read_pcie(api, t, g);
    unsigned long long reasons;
    if (ask(g, Q_THROTTLE, api->reasons != NULL) &&
        answered(g, Q_THROTTLE, api->reasons(g->dev, &reasons), t->errors))
        store(t, g, S_THROTTLE, (double)reasons);
    read_process_memory(st, t, g, ctx);
}

static void nvml_sample(void *state, struct sample_ctx *ctx, struct sample_table *tab, size_t row,
                        uint64_t *errors)
{
    struct nvml_state *st = state;
    struct tick t = {tab, row, errors, 0};
    bool pcie = st->api.pcie && mono_ns() >= st->pcie_next_ns;
    for (size_t i = 0; i < st->n_gpus; i++)
        if (!st->gpus[i].lost)
            sample_gpu(st, &t, &st->gpus[i], ctx, pcie);
    if (pcie && t.pcie_cost_ns >= PCIE_CHEAP_NS)
        st->pcie_next_ns = mono_ns() + PCIE_REST_FACTOR * t.pcie_cost_ns;
}

static void nvml_run_start(void *state)
{
    struct nvml_state *st = state;
    st->pcie_next_ns = 0; /* a lost GPU stays lost: only a reset brings it back */
    for (size_t i = 0; i < st->n_gpus; i++)
        st->gpus[i].gpm_have_prev = false; /* a run's first interval starts with it */
}

static void nvml_close(void *state)
{
    unload(state, true);
}

/* The static facts: every GPU NVML lists, in index order (the label gpu="i" of its series;
 * NVML orders by PCI bus id, CUDA only with CUDA_DEVICE_ORDER=PCI_BUS_ID), and the driver. */
static void nvml_facts(void *state, struct source_facts *out)
{
    const struct nvml_state *st = state;
    for (size_t i = 0; i < st->n_gpus; i++)
        source_facts_add_gpu(out, &st->gpus[i].facts);
    snprintf(out->gpu_driver, sizeof out->gpu_driver, "%s", st->driver);
}

const struct metric_source nvml_source = {
    .name = "nvml",
    .open = nvml_open,
    .sample = nvml_sample,
    .run_start = nvml_run_start,
    .facts = nvml_facts,
    .close = nvml_close,
};
