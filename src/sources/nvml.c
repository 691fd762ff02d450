/* nvml: the GPU metric source. Loads NVML (libnvidia-ml.so.1, shipped with the NVIDIA driver)
 * with dlopen at run time, so one mlbench binary runs with and without a GPU; the few functions
 * used are declared in nvml_abi.h. $MLBENCH_NVML_LIBRARY names another library (the fake NVML
 * of the tests). Every GPU NVML lists is sampled, whatever --all-gpus says: which GPUs the
 * workload used is for the report to decide (gpu_process_memory_bytes tells).
 *
 * Per GPU i, series labelled gpu="i" (docs/metrics.md): utilisation, memory, power, clocks,
 * temperature, PCIe throughput, throttle reasons and the GPU memory of the workload's processes.
 *
 * Static facts (driver version; name, uuid, compute capability and memory size of each GPU) are
 * read once when the source opens and given by its describe op.
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

#include "sources/nvml_abi.h"
#include "sources/sources.h"
#include "util/clock.h"
#include "util/units.h"
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

/* What a GPU is, read when the source opens. */
struct nvml_device_facts {
    char name[96];             /* "NVIDIA H200"; "" when unknown */
    char uuid[96];             /* "GPU-5f1c..."; "" when unknown */
    int cc_major, cc_minor;    /* CUDA compute capability; -1 when unknown */
    double memory_total_bytes; /* NAN when unknown */
    bool usable;               /* false: NVML lists it but gave no handle (lost, no permission) */
};

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
    N_SERIES
};

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
};

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
    Q_PROCS
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
};

struct gpu {
    nvmlDevice_t dev;
    size_t col[N_SERIES]; /* the index of each of its series */
    bool lost;            /* lost, or never reachable: not asked again */
    unsigned unsupported; /* bit q set: NVML said query q is not supported on this GPU */
    struct nvml_device_facts facts;
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
    struct nvml_device_facts *f = &g->facts;
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
        f->memory_total_bytes = (double)m.total;
}

/* Unloads the library after a failed open (NVML initialised or not). */
static void unload(struct nvml_state *st, bool initialised)
{
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
    nvmlReturn_t first_rc = NVML_SUCCESS;
    for (unsigned int i = 0; i < n; i++) {
        struct gpu *g = &st->gpus[i];
        g->facts = (struct nvml_device_facts){.cc_major = -1, .cc_minor = -1,
                                              .memory_total_bytes = NAN};
        rc = api->handle(i, &g->dev);
        if (rc == NVML_SUCCESS) {
            g->facts.usable = true;
            read_facts(api, g);
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

    /* Every GPU gets its series, reachable or not, so that labels are NVML's indices. */
    for (size_t i = 0; i < st->n_gpus; i++) {
        char labels[32];
        snprintf(labels, sizeof labels, "gpu=\"%zu\"", i);
        for (int s = 0; s < N_SERIES; s++)
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

/* Sorts out the answer to query q on GPU g. True when a value came back. */
static bool answered(struct gpu *g, enum query q, nvmlReturn_t rc, uint64_t *errors)
{
    switch (rc) {
    case NVML_SUCCESS:
        return true;
    case NVML_ERROR_GPU_IS_LOST:
    case NVML_ERROR_RESET_REQUIRED:
        g->lost = true; /* counted once: the GPU is not asked again */
        (*errors)++;
        return false;
    case NVML_ERROR_NOT_SUPPORTED:
    case NVML_ERROR_FUNCTION_NOT_FOUND:
    case NVML_ERROR_DEPRECATED:
        g->unsupported |= 1u << q;
        return false;
    default:
        (*errors)++;
        return false;
    }
}

/* Whether query q is to be asked of g (fn: whether the library has it). */
static bool ask(const struct gpu *g, enum query q, bool fn)
{
    return fn && !g->lost && !(g->unsupported & (1u << q));
}

static void store(const struct tick *t, const struct gpu *g, enum gpu_series s, double value)
{
    table_set(t->tab, g->col[s], t->row, value);
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
    if (pcie)
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
}

static void nvml_close(void *state)
{
    unload(state, true);
}

/* Sets key to s when s is not empty; bytes that are not UTF-8 become '?'. */
static void set_text(json_t *o, const char *key, const char *s)
{
    if (!*s)
        return;
    char *clean = units_utf8_sanitize(s, strlen(s));
    json_object_set_new(o, key, json_string(clean));
    free(clean);
}

/* The static facts: every GPU NVML lists, in index order (the label gpu="i" of its series;
 * NVML orders by PCI bus id, CUDA only with CUDA_DEVICE_ORDER=PCI_BUS_ID). */
static json_t *nvml_describe(void *state)
{
    const struct nvml_state *st = state;
    json_t *gpus = json_array();
    for (size_t i = 0; i < st->n_gpus; i++) {
        const struct nvml_device_facts *f = &st->gpus[i].facts;
        json_t *g = json_pack("{s:I, s:b}", "index", (json_int_t)i, "usable", f->usable);
        set_text(g, "name", f->name);
        set_text(g, "uuid", f->uuid);
        if (isfinite(f->memory_total_bytes) && f->memory_total_bytes > 0)
            json_object_set_new(g, "memory_bytes", json_integer((json_int_t)f->memory_total_bytes));
        if (f->cc_major >= 0 && f->cc_minor >= 0)
            json_object_set_new(g, "compute_capability",
                                json_sprintf("%d.%d", f->cc_major, f->cc_minor));
        json_array_append_new(gpus, g);
    }
    json_t *o = json_pack("{s:o}", "gpus", gpus);
    set_text(o, "driver_version", st->driver);
    return o;
}

const struct metric_source nvml_source = {
    .name = "nvml",
    .open = nvml_open,
    .sample = nvml_sample,
    .run_start = nvml_run_start,
    .describe = nvml_describe,
    .close = nvml_close,
};
