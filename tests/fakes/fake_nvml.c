/* fake_nvml: a stand-in for libnvidia-ml.so.1 that replays scripted answers, so that the nvml
 * metric source (src/sources/nvml.c) is tested on machines without a GPU. It exports the NVML
 * functions mlbench looks up, with the prototypes of src/sources/nvml_abi.h. Built twice
 * (tests/fakes/CMakeLists.txt): libfake_nvml.so exports them all; libfake_nvml_minimal.so
 * (FAKE_NVML_MINIMAL) only what an old driver has: no PCIe, no nvmlDeviceGetTemperatureV, no
 * ClocksEventReasons, no _v2 symbols and only the legacy process list layout.
 *
 * GPM (nvmlGpm*) is in the full library only; nvmlDeviceGetMaxClockInfo is in both.
 *
 * nvmlInit reads the script named by $FAKE_NVML_SCRIPT (when no other init is in force; parsed
 * by fake_nvml_script.c), one directive a line, '#' starts a comment, G is a GPU index:
 *   init ERR_x                 nvmlInit answers this error
 *   count ERR_x                nvmlDeviceGetCount answers this error
 *   devices N                  N GPUs (default 1, at most 8)
 *   count_says N               nvmlDeviceGetCount says N whatever exists (a broken library)
 *   driver VERSION             nvmlSystemGetDriverVersion
 *   name G TEXT...             defaults "Fake GPU G"; uuid G TEXT: "GPU-fake-G"
 *   cc G MAJOR MINOR           default 9 0
 *   mem_total G BYTES          default 80 GiB
 *   handle G ERR_x             nvmlDeviceGetHandleByIndex(G) answers this error
 *   pcie_delay_us G US         each PCIe call sleeps this long (the real one takes ~20 ms)
 *   sm_clock_max G MHZ|ERR_x   nvmlDeviceGetMaxClockInfo(SM); default NOT_SUPPORTED (other
 *                              clock types always are)
 *   gpm G 0|1|ERR_x            nvmlGpmQueryDeviceSupport: isSupportedDevice, or this error;
 *                              default 0 (no GPM: nvmlGpmSampleGet answers NOT_SUPPORTED)
 *   QUERY G STEP...            the answers of QUERY on G, one per call, the last repeated
 * QUERY: util (STEP gpu%/mem%, e.g. 80/30), mem_used (bytes; free = total - used), power (mW),
 * sm_clock, mem_clock (MHz), temp (C), pcie_rx, pcie_tx (KB/s), throttle (mask), procs (STEP:
 * PID:BYTES[,PID:BYTES...] or - for none; PID SELF is the caller's pid, CHILD its child process
 * at the time of the call (the workload mlbench is running: integration tests), BYTES NA is
 * NVML_VALUE_NOT_AVAILABLE). Any STEP may be ERR_<NAME> (ERR_UNKNOWN, ERR_NOT_SUPPORTED, ...:
 * that error, once) or LOST (NVML_ERROR_GPU_IS_LOST, and every later call on that GPU too).
 * A query with no script answers NVML_ERROR_NOT_SUPPORTED. Every call takes the next step,
 * whoever makes it: the nvml source calls nvmlDeviceGetMemoryInfo once when it opens (for the
 * total), so the first mem_used step is taken then. A process list too small for the step is
 * answered NVML_ERROR_INSUFFICIENT_SIZE and the step stays for the next call.
 * GPM queries: gpm_sample (nvmlGpmSampleGet, STEP OK; no script: always OK), and the metrics
 * of nvmlGpmMetricsGet, in NVML's unit (STEP a number, may be fractional or negative or nan):
 * gpm_graphics, gpm_sm, gpm_occupancy, gpm_tensor, gpm_dram, gpm_fp64, gpm_fp32, gpm_fp16
 * (percent), gpm_pcie_rx, gpm_pcie_tx, gpm_nvlink_rx, gpm_nvlink_tx (MiB/s). Each
 * nvmlGpmMetricsGet takes one step of every scripted metric of the GPU, asked or not; a metric
 * with no script answers a per-metric NVML_ERROR_NOT_SUPPORTED, an ERR_x step that error in
 * that metric's nvmlReturn. nvmlGpmMetricsGet wants two samples of the same GPU, sample1 taken
 * before sample2 (else NVML_ERROR_INVALID_ARGUMENT: a swapped pair is a bug of the caller), and
 * every sample handle must come from nvmlGpmSampleAlloc and not be freed yet.
 *
 * fake_nvml_calls(NAME) tells how often the NVML function NAME was called since the script was
 * last read. Not thread-safe: one test thread at a time. */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fake_nvml.h"

/* Calls per function since the script was read. */
static struct {
    const char *name;
    unsigned long n;
} calls[48];

static void count_call(const char *name)
{
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        if (!calls[i].name)
            calls[i].name = name;
        if (!strcmp(calls[i].name, name)) {
            calls[i].n++;
            return;
        }
    }
}

unsigned long fake_nvml_calls(const char *name);
unsigned long fake_nvml_calls(const char *name)
{
    for (size_t i = 0; i < sizeof calls / sizeof calls[0] && calls[i].name; i++)
        if (!strcmp(calls[i].name, name))
            return calls[i].n;
    return 0;
}

void fake_reset_calls(void)
{
    memset(calls, 0, sizeof calls);
}

/* ---- the NVML functions ---- */

/* Checks that NVML is initialised and dev is one of the fake's GPUs. */
static nvmlReturn_t check(nvmlDevice_t dev)
{
    if (fake.inits <= 0)
        return NVML_ERROR_UNINITIALIZED;
    for (unsigned int i = 0; i < fake.n_gpus; i++)
        if (dev == &fake.gpu[i])
            return dev->lost ? NVML_ERROR_GPU_IS_LOST : NVML_SUCCESS;
    return NVML_ERROR_INVALID_ARGUMENT;
}

/* The current step of a query on dev, or NULL with *rc the answer when there is no value. */
static const struct step *peek(nvmlDevice_t dev, enum seq s, nvmlReturn_t *rc)
{
    if ((*rc = check(dev)) != NVML_SUCCESS)
        return NULL;
    const struct sequence *q = &dev->seq[s];
    if (q->n == 0) {
        *rc = NVML_ERROR_NOT_SUPPORTED;
        return NULL;
    }
    const struct step *st = &q->steps[q->next < q->n ? q->next : q->n - 1];
    if (st->lose)
        dev->lost = true;
    *rc = st->rc;
    return st->rc == NVML_SUCCESS ? st : NULL;
}

static void advance(nvmlDevice_t dev, enum seq s)
{
    struct sequence *q = &dev->seq[s];
    if (q->next < q->n)
        q->next++;
}

/* Takes the next step of a query: peek, then advance. */
static const struct step *take(nvmlDevice_t dev, enum seq s, nvmlReturn_t *rc)
{
    const struct step *st = peek(dev, s, rc);
    if (*rc != NVML_ERROR_UNINITIALIZED && *rc != NVML_ERROR_INVALID_ARGUMENT)
        advance(dev, s);
    return st;
}

static nvmlReturn_t init(void)
{
    if (fake.inits > 0) {
        fake.inits++;
        return NVML_SUCCESS;
    }
    nvmlReturn_t rc = fake_load_script();
    if (rc == NVML_SUCCESS)
        fake.inits = 1;
    return rc;
}

#ifndef FAKE_NVML_MINIMAL
nvml_init_fn nvmlInit_v2;
nvmlReturn_t nvmlInit_v2(void)
{
    nvmlReturn_t rc = init();
    count_call(__func__);
    return rc;
}
#endif

nvml_init_fn nvmlInit;
nvmlReturn_t nvmlInit(void)
{
    nvmlReturn_t rc = init();
    count_call(__func__);
    return rc;
}

nvml_shutdown_fn nvmlShutdown;
nvmlReturn_t nvmlShutdown(void)
{
    count_call(__func__);
    if (fake.inits <= 0)
        return NVML_ERROR_UNINITIALIZED;
    if (--fake.inits == 0)
        fake_free_script();
    return NVML_SUCCESS;
}

nvml_error_string_fn nvmlErrorString;
const char *nvmlErrorString(nvmlReturn_t result)
{
    return fake_error_text(result);
}

static nvmlReturn_t device_count(unsigned int *count)
{
    if (fake.inits <= 0)
        return NVML_ERROR_UNINITIALIZED;
    if (fake.count_rc != NVML_SUCCESS)
        return fake.count_rc;
    *count = fake.count_says >= 0 ? (unsigned int)fake.count_says : fake.n_gpus;
    return NVML_SUCCESS;
}

static nvmlReturn_t device_handle(unsigned int index, nvmlDevice_t *device)
{
    if (fake.inits <= 0)
        return NVML_ERROR_UNINITIALIZED;
    if (index >= fake.n_gpus)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (fake.gpu[index].handle_rc != NVML_SUCCESS)
        return fake.gpu[index].handle_rc;
    *device = &fake.gpu[index];
    return NVML_SUCCESS;
}

#ifndef FAKE_NVML_MINIMAL
nvml_count_fn nvmlDeviceGetCount_v2;
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
    count_call(__func__);
    return device_count(count);
}

nvml_handle_fn nvmlDeviceGetHandleByIndex_v2;
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    count_call(__func__);
    return device_handle(index, device);
}
#endif

nvml_count_fn nvmlDeviceGetCount;
nvmlReturn_t nvmlDeviceGetCount(unsigned int *count)
{
    count_call(__func__);
    return device_count(count);
}

nvml_handle_fn nvmlDeviceGetHandleByIndex;
nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device)
{
    count_call(__func__);
    return device_handle(index, device);
}

nvml_driver_version_fn nvmlSystemGetDriverVersion;
nvmlReturn_t nvmlSystemGetDriverVersion(char *buf, unsigned int len)
{
    count_call(__func__);
    if (fake.inits <= 0)
        return NVML_ERROR_UNINITIALIZED;
    if (len <= strlen(fake.driver))
        return NVML_ERROR_INSUFFICIENT_SIZE;
    snprintf(buf, len, "%s", fake.driver);
    return NVML_SUCCESS;
}

static nvmlReturn_t copy_string(nvmlDevice_t device, char *buf, unsigned int len, const char *s)
{
    nvmlReturn_t rc = check(device);
    if (rc != NVML_SUCCESS)
        return rc;
    if (len <= strlen(s))
        return NVML_ERROR_INSUFFICIENT_SIZE;
    snprintf(buf, len, "%s", s);
    return NVML_SUCCESS;
}

nvml_string_fn nvmlDeviceGetName;
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    count_call(__func__);
    return copy_string(device, name, length, check(device) ? "" : device->name);
}

nvml_string_fn nvmlDeviceGetUUID;
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    count_call(__func__);
    return copy_string(device, uuid, length, check(device) ? "" : device->uuid);
}

nvml_cc_fn nvmlDeviceGetCudaComputeCapability;
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor)
{
    count_call(__func__);
    nvmlReturn_t rc = check(device);
    if (rc == NVML_SUCCESS) {
        *major = device->cc_major;
        *minor = device->cc_minor;
    }
    return rc;
}

nvml_memory_fn nvmlDeviceGetMemoryInfo;
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    count_call(__func__);
    nvmlReturn_t rc = check(device);
    if (rc != NVML_SUCCESS)
        return rc;
    const struct step *st = take(device, SEQ_MEM, &rc);
    if (st)
        *memory = (nvmlMemory_t){device->mem_total, device->mem_total - st->a, st->a};
    return rc;
}

nvml_utilization_fn nvmlDeviceGetUtilizationRates;
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *util)
{
    count_call(__func__);
    nvmlReturn_t rc;
    const struct step *st = take(device, SEQ_UTIL, &rc);
    if (st)
        *util = (nvmlUtilization_t){(unsigned int)st->a, (unsigned int)st->b};
    return rc;
}

/* A query whose answer is one unsigned number. */
static nvmlReturn_t take_uint(nvmlDevice_t device, enum seq s, unsigned int *value)
{
    nvmlReturn_t rc;
    const struct step *st = take(device, s, &rc);
    if (st)
        *value = (unsigned int)st->a;
    return rc;
}

nvml_uint_fn nvmlDeviceGetPowerUsage;
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power)
{
    count_call(__func__);
    return take_uint(device, SEQ_POWER, power);
}

nvml_query_fn nvmlDeviceGetClockInfo;
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned int *clock)
{
    count_call(__func__);
    if (type != NVML_CLOCK_SM && type != NVML_CLOCK_MEM)
        return NVML_ERROR_NOT_SUPPORTED;
    return take_uint(device, type == NVML_CLOCK_SM ? SEQ_SM_CLOCK : SEQ_MEM_CLOCK, clock);
}

nvml_query_fn nvmlDeviceGetMaxClockInfo;
nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, int type, unsigned int *clock)
{
    count_call(__func__);
    nvmlReturn_t rc = check(device);
    if (rc != NVML_SUCCESS)
        return rc;
    if (type != NVML_CLOCK_SM || device->sm_clock_max_rc != NVML_SUCCESS)
        return type != NVML_CLOCK_SM ? NVML_ERROR_NOT_SUPPORTED : device->sm_clock_max_rc;
    *clock = device->sm_clock_max_mhz;
    return NVML_SUCCESS;
}

nvml_query_fn nvmlDeviceGetTemperature;
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, int sensor, unsigned int *temp)
{
    count_call(__func__);
    if (sensor != NVML_TEMPERATURE_GPU)
        return NVML_ERROR_INVALID_ARGUMENT;
    return take_uint(device, SEQ_TEMP, temp);
}

static nvmlReturn_t take_reasons(nvmlDevice_t device, unsigned long long *reasons)
{
    nvmlReturn_t rc;
    const struct step *st = take(device, SEQ_THROTTLE, &rc);
    if (st)
        *reasons = st->a;
    return rc;
}

nvml_reasons_fn nvmlDeviceGetCurrentClocksThrottleReasons;
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                       unsigned long long *reasons)
{
    count_call(__func__);
    return take_reasons(device, reasons);
}

/* A child process of the caller (the first found in /proc), or 0. */
static unsigned int first_child(void)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    unsigned int found = 0;
    while (d && !found && (e = readdir(d))) {
        char path[300], buf[512];
        unsigned long long pid;
        if (!fake_parse_ull(e->d_name, &pid))
            continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (fgets(buf, sizeof buf, f)) {
            const char *close = strrchr(buf, ')');
            int ppid;
            if (close && sscanf(close + 2, "%*c %d", &ppid) == 1 && ppid == getpid())
                found = (unsigned int)pid;
        }
        fclose(f);
    }
    if (d)
        closedir(d);
    return found;
}

/* Copies the current process list into infos (v1: legacy layout) when count is enough. */
static nvmlReturn_t take_procs(nvmlDevice_t device, unsigned int *count, void *infos, bool v1)
{
    nvmlReturn_t rc;
    const struct step *st = peek(device, SEQ_PROCS, &rc);
    if (!st) {
        if (rc != NVML_ERROR_UNINITIALIZED && rc != NVML_ERROR_INVALID_ARGUMENT)
            advance(device, SEQ_PROCS);
        return rc;
    }
    if (*count < st->n_procs) {
        *count = st->n_procs; /* not consumed: the caller asks again with more room */
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (unsigned int i = 0; i < st->n_procs; i++) {
        unsigned int pid = st->procs[i].child ? first_child() : st->procs[i].pid;
        if (v1)
            ((nvmlProcessInfo_v1_t *)infos)[i] = (nvmlProcessInfo_v1_t){pid, st->procs[i].bytes};
        else
            ((nvmlProcessInfo_v2_t *)infos)[i] =
                (nvmlProcessInfo_v2_t){pid, st->procs[i].bytes, 0xFFFFFFFFu, 0xFFFFFFFFu};
    }
    *count = st->n_procs;
    advance(device, SEQ_PROCS);
    return NVML_SUCCESS;
}

nvml_procs_v1_fn nvmlDeviceGetComputeRunningProcesses;
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *count,
                                                  nvmlProcessInfo_v1_t *infos)
{
    count_call(__func__);
    return take_procs(device, count, infos, true);
}

#ifndef FAKE_NVML_MINIMAL
nvml_procs_v2_fn nvmlDeviceGetComputeRunningProcesses_v2;
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *count,
                                                     nvmlProcessInfo_v2_t *infos)
{
    count_call(__func__);
    return take_procs(device, count, infos, false);
}

nvml_procs_v2_fn nvmlDeviceGetComputeRunningProcesses_v3;
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *count,
                                                     nvmlProcessInfo_v2_t *infos)
{
    count_call(__func__);
    return take_procs(device, count, infos, false);
}

nvml_reasons_fn nvmlDeviceGetCurrentClocksEventReasons;
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                    unsigned long long *reasons)
{
    count_call(__func__);
    return take_reasons(device, reasons);
}

nvml_temperature_v_fn nvmlDeviceGetTemperatureV;
nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_v1_t *temp)
{
    count_call(__func__);
    if (temp->version != NVML_TEMPERATURE_V1)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if (temp->sensorType != NVML_TEMPERATURE_GPU)
        return NVML_ERROR_INVALID_ARGUMENT;
    unsigned int celsius = 0; /* gcc cannot tell that take_uint sets it on success */
    nvmlReturn_t rc = take_uint(device, SEQ_TEMP, &celsius);
    if (rc == NVML_SUCCESS)
        temp->temperature = (int)celsius;
    return rc;
}

nvml_query_fn nvmlDeviceGetPcieThroughput;
nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device, int counter, unsigned int *value)
{
    count_call(__func__);
    if (counter != NVML_PCIE_UTIL_TX_BYTES && counter != NVML_PCIE_UTIL_RX_BYTES)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (check(device) == NVML_SUCCESS && device->pcie_delay_us) {
        struct timespec ts = {0, (long)device->pcie_delay_us * 1000};
        ts.tv_sec = ts.tv_nsec / 1000000000;
        ts.tv_nsec %= 1000000000;
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
    }
    return take_uint(device, counter == NVML_PCIE_UTIL_TX_BYTES ? SEQ_PCIE_TX : SEQ_PCIE_RX,
                     value);
}

/* ---- GPM ---- */

struct nvmlGpmSample_st {
    nvmlDevice_t dev;     /* the GPU of the last nvmlGpmSampleGet; NULL before */
    unsigned long taken;  /* when: fake.gpm_samples then */
};

/* The samples allocated and not freed yet; not part of the script (a script reload keeps them). */
static nvmlGpmSample_t live_samples[64];

static nvmlGpmSample_t *live_slot(nvmlGpmSample_t sample)
{
    for (size_t i = 0; i < sizeof live_samples / sizeof live_samples[0]; i++)
        if (live_samples[i] == sample)
            return &live_samples[i];
    return NULL;
}

nvml_gpm_support_fn nvmlGpmQueryDeviceSupport;
nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t device, nvmlGpmSupport_t *support)
{
    count_call(__func__);
    nvmlReturn_t rc = check(device);
    if (rc != NVML_SUCCESS)
        return rc;
    if (support->version != NVML_GPM_SUPPORT_VERSION)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if (device->gpm_rc != NVML_SUCCESS)
        return device->gpm_rc;
    support->isSupportedDevice = device->gpm;
    return NVML_SUCCESS;
}

nvml_gpm_alloc_fn nvmlGpmSampleAlloc;
nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t *sample)
{
    count_call(__func__);
    if (fake.inits <= 0)
        return NVML_ERROR_UNINITIALIZED;
    nvmlGpmSample_t *slot = live_slot(NULL);
    if (!slot || !(*slot = calloc(1, sizeof **slot)))
        return NVML_ERROR_MEMORY;
    *sample = *slot;
    return NVML_SUCCESS;
}

nvml_gpm_free_fn nvmlGpmSampleFree;
nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t sample)
{
    count_call(__func__);
    if (fake.inits <= 0) /* strict: a sample freed after nvmlShutdown leaks (ASan tells) */
        return NVML_ERROR_UNINITIALIZED;
    nvmlGpmSample_t *slot = sample ? live_slot(sample) : NULL;
    if (!slot)
        return NVML_ERROR_INVALID_ARGUMENT;
    free(sample);
    *slot = NULL;
    return NVML_SUCCESS;
}

nvml_gpm_sample_fn nvmlGpmSampleGet;
nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t sample)
{
    count_call(__func__);
    nvmlReturn_t rc = check(device);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!sample || !live_slot(sample))
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!device->gpm)
        return NVML_ERROR_NOT_SUPPORTED;
    if (device->seq[SEQ_GPM_SAMPLE].n > 0 && !take(device, SEQ_GPM_SAMPLE, &rc))
        return rc;
    sample->dev = device;
    sample->taken = ++fake.gpm_samples;
    return NVML_SUCCESS;
}

/* The sequence of each GPM metric id; N_SEQ: not one the fake knows. */
static enum seq gpm_sequence(unsigned int id)
{
    static const struct {
        unsigned int id;
        enum seq s;
    } map[] = {
        {NVML_GPM_METRIC_GRAPHICS_UTIL, SEQ_GPM_GRAPHICS},
        {NVML_GPM_METRIC_SM_UTIL, SEQ_GPM_SM},
        {NVML_GPM_METRIC_SM_OCCUPANCY, SEQ_GPM_OCCUPANCY},
        {NVML_GPM_METRIC_ANY_TENSOR_UTIL, SEQ_GPM_TENSOR},
        {NVML_GPM_METRIC_DRAM_BW_UTIL, SEQ_GPM_DRAM},
        {NVML_GPM_METRIC_FP64_UTIL, SEQ_GPM_FP64},
        {NVML_GPM_METRIC_FP32_UTIL, SEQ_GPM_FP32},
        {NVML_GPM_METRIC_FP16_UTIL, SEQ_GPM_FP16},
        {NVML_GPM_METRIC_PCIE_RX_PER_SEC, SEQ_GPM_PCIE_RX},
        {NVML_GPM_METRIC_PCIE_TX_PER_SEC, SEQ_GPM_PCIE_TX},
        {NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC, SEQ_GPM_NVLINK_RX},
        {NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC, SEQ_GPM_NVLINK_TX},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (map[i].id == id)
            return map[i].s;
    return N_SEQ;
}

nvml_gpm_metrics_fn nvmlGpmMetricsGet;
nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *get)
{
    count_call(__func__);
    if (fake.inits <= 0)
        return NVML_ERROR_UNINITIALIZED;
    if (get->version != NVML_GPM_METRICS_GET_VERSION)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    const struct nvmlGpmSample_st *s1 = get->sample1, *s2 = get->sample2;
    if (get->numMetrics == 0 || get->numMetrics > NVML_GPM_METRICS_CAP || !s1 || !s2 ||
        !live_slot(get->sample1) || !live_slot(get->sample2) || !s1->dev ||
        s1->dev != s2->dev || s1->taken >= s2->taken)
        return NVML_ERROR_INVALID_ARGUMENT;
    nvmlDevice_t dev = s1->dev;
    nvmlReturn_t rc = check(dev);
    if (rc != NVML_SUCCESS)
        return rc;
    for (unsigned int i = 0; i < get->numMetrics; i++) {
        nvmlGpmMetric_t *m = &get->metrics[i];
        enum seq s = gpm_sequence(m->metricId);
        memset(&m->metricInfo, 0, sizeof m->metricInfo);
        m->value = 0;
        if (s == N_SEQ) {
            m->nvmlReturn = NVML_ERROR_INVALID_ARGUMENT;
            continue;
        }
        const struct step *st = peek(dev, s, &m->nvmlReturn);
        if (st)
            m->value = st->x;
    }
    for (int s = SEQ_GPM_FIRST_METRIC; s < N_SEQ; s++)
        advance(dev, (enum seq)s);
    return NVML_SUCCESS;
}
#endif
