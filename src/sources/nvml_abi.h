/* nvml_abi: the small part of the NVML binary interface that mlbench uses, declared here so that
 * the harness needs neither nvml.h nor a link to NVML (the library is loaded with dlopen by
 * src/sources/nvml.c). tests/fakes/fake_nvml.c implements the same functions from these
 * declarations, so the compiler checks that both sides agree.
 *
 * Names, values and layouts are NVML's own (NVML API Reference, nvml.h of CUDA 12/13): the
 * enums nvmlReturn_t, nvmlClockType_t, nvmlTemperatureSensors_t and nvmlPcieUtilCounter_t are
 * int-sized in the C ABI, so they are plain ints here. Only stable, documented layouts are used.
 * The GPM declarations (GPU Performance Monitoring, Hopper and newer) were checked against the
 * nvml.h of NVIDIA/go-nvml (gen/nvml/nvml.h, 2022 to 2026: unchanged but for
 * NVML_GPM_METRIC_MAX). */
#ifndef MLBENCH_NVML_ABI_H
#define MLBENCH_NVML_ABI_H

typedef int nvmlReturn_t;

enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_TIMEOUT = 10,
    NVML_ERROR_LIBRARY_NOT_FOUND = 12,
    NVML_ERROR_FUNCTION_NOT_FOUND = 13,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_RESET_REQUIRED = 16,
    NVML_ERROR_MEMORY = 20,
    NVML_ERROR_NO_DATA = 21,
    NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
    NVML_ERROR_DEPRECATED = 26,
    NVML_ERROR_UNKNOWN = 999,
};

enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };
enum { NVML_TEMPERATURE_GPU = 0 };
enum { NVML_PCIE_UTIL_TX_BYTES = 0, NVML_PCIE_UTIL_RX_BYTES = 1 }; /* KB/s */

#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
/* usedGpuMemory when the driver cannot tell (e.g. Windows WDDM). */
#define NVML_VALUE_NOT_AVAILABLE (~0ULL)

typedef struct nvmlDevice_st *nvmlDevice_t;

typedef struct {
    unsigned int gpu;    /* percent of the last sample period with a kernel running */
    unsigned int memory; /* percent of it with device memory being read or written */
} nvmlUtilization_t;

typedef struct {
    unsigned long long total, free, used; /* bytes */
} nvmlMemory_t;

/* For nvmlDeviceGetComputeRunningProcesses (the unversioned, legacy symbol). */
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory; /* bytes, or NVML_VALUE_NOT_AVAILABLE */
} nvmlProcessInfo_v1_t;

/* For nvmlDeviceGetComputeRunningProcesses_v2 and _v3 (nvmlProcessInfo_t in nvml.h). */
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId; /* 0xFFFFFFFF without MIG */
} nvmlProcessInfo_v2_t;

/* For nvmlDeviceGetTemperatureV (R550+), which replaces nvmlDeviceGetTemperature. */
typedef struct {
    unsigned int version; /* NVML_TEMPERATURE_V1 */
    int sensorType;
    int temperature; /* degrees Celsius */
} nvmlTemperature_v1_t;
/* NVML_STRUCT_VERSION(Temperature, 1): the size in the low bits, the version in the top byte. */
#define NVML_TEMPERATURE_V1 ((unsigned int)sizeof(nvmlTemperature_v1_t) | (1u << 24))

/* ---- GPM: counters sampled twice, metrics computed from the pair (nvmlGpmMetricsGet) ---- */

typedef struct nvmlGpmSample_st *nvmlGpmSample_t; /* from nvmlGpmSampleAlloc; opaque */

/* Metric ids (nvmlGpmMetricId_t): the ones mlbench asks for. */
enum {
    NVML_GPM_METRIC_GRAPHICS_UTIL = 1,   /* % of time a graphics/compute context was active */
    NVML_GPM_METRIC_SM_UTIL = 2,         /* % of SMs busy */
    NVML_GPM_METRIC_SM_OCCUPANCY = 3,    /* % of warps resident vs the theoretical maximum */
    NVML_GPM_METRIC_ANY_TENSOR_UTIL = 5, /* % of time the SMs did any tensor operation */
    NVML_GPM_METRIC_DRAM_BW_UTIL = 10,   /* % of the theoretical DRAM bandwidth used */
    NVML_GPM_METRIC_FP64_UTIL = 11,      /* % of time doing non-tensor FP64 math */
    NVML_GPM_METRIC_FP32_UTIL = 12,
    NVML_GPM_METRIC_FP16_UTIL = 13,
    NVML_GPM_METRIC_PCIE_TX_PER_SEC = 20,         /* MiB/s out of the GPU */
    NVML_GPM_METRIC_PCIE_RX_PER_SEC = 21,         /* MiB/s into the GPU */
    NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC = 60, /* MiB/s, all links */
    NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC = 61,
};

typedef struct {
    unsigned int metricId;   /* in: an NVML_GPM_METRIC_ id */
    nvmlReturn_t nvmlReturn; /* out: this metric's answer; value is valid only on NVML_SUCCESS */
    double value;            /* out: percent 0..100 or MiB/s, as the id says */
    struct {
        char *shortName, *longName, *unit; /* out, owned by NVML; may be NULL */
    } metricInfo;
} nvmlGpmMetric_t;

/* nvml.h sizes metrics[] NVML_GPM_METRIC_MAX, which grew from 98 (nvml.h of CUDA 11.8 to 12.8)
 * to 210 (12.9) and 333 (13.2) while the version stayed 1: so NVML reads and writes only the
 * first numMetrics entries (a program built with 98 entries works with a newer library). The
 * array is sized for what mlbench asks, with room to spare; numMetrics must not exceed it. */
#define NVML_GPM_METRICS_CAP 16
#define NVML_GPM_METRICS_GET_VERSION 1
typedef struct {
    unsigned int version;    /* NVML_GPM_METRICS_GET_VERSION */
    unsigned int numMetrics; /* entries of metrics[] asked */
    nvmlGpmSample_t sample1; /* the earlier sample */
    nvmlGpmSample_t sample2; /* the later one */
    nvmlGpmMetric_t metrics[NVML_GPM_METRICS_CAP];
} nvmlGpmMetricsGet_t;

#define NVML_GPM_SUPPORT_VERSION 1
typedef struct {
    unsigned int version;           /* NVML_GPM_SUPPORT_VERSION */
    unsigned int isSupportedDevice; /* out: nonzero when the GPU has GPM */
} nvmlGpmSupport_t;

/* Function types, one per symbol mlbench looks up (several symbols share a type). */
typedef nvmlReturn_t nvml_init_fn(void);     /* nvmlInit_v2, nvmlInit */
typedef nvmlReturn_t nvml_shutdown_fn(void); /* nvmlShutdown */
typedef const char *nvml_error_string_fn(nvmlReturn_t result);
typedef nvmlReturn_t nvml_count_fn(unsigned int *count); /* nvmlDeviceGetCount_v2, _ */
typedef nvmlReturn_t nvml_handle_fn(unsigned int index, nvmlDevice_t *device);
typedef nvmlReturn_t nvml_string_fn(nvmlDevice_t device, char *buf, unsigned int len);
typedef nvmlReturn_t nvml_driver_version_fn(char *buf, unsigned int len);
typedef nvmlReturn_t nvml_cc_fn(nvmlDevice_t device, int *major, int *minor);
typedef nvmlReturn_t nvml_memory_fn(nvmlDevice_t device, nvmlMemory_t *memory);
typedef nvmlReturn_t nvml_utilization_fn(nvmlDevice_t device, nvmlUtilization_t *util);
typedef nvmlReturn_t nvml_uint_fn(nvmlDevice_t device, unsigned int *value); /* power, mW */
/* nvmlDeviceGetClockInfo and nvmlDeviceGetMaxClockInfo (which: clock type, MHz),
 * nvmlDeviceGetTemperature (sensor, Celsius), nvmlDeviceGetPcieThroughput (counter, KB/s): one
 * argument, one unsigned answer. */
typedef nvmlReturn_t nvml_query_fn(nvmlDevice_t device, int which, unsigned int *value);
typedef nvmlReturn_t nvml_temperature_v_fn(nvmlDevice_t device, nvmlTemperature_v1_t *temp);
typedef nvmlReturn_t nvml_reasons_fn(nvmlDevice_t device, unsigned long long *reasons);
typedef nvmlReturn_t nvml_procs_v1_fn(nvmlDevice_t device, unsigned int *count,
                                      nvmlProcessInfo_v1_t *infos);
typedef nvmlReturn_t nvml_procs_v2_fn(nvmlDevice_t device, unsigned int *count,
                                      nvmlProcessInfo_v2_t *infos);
typedef nvmlReturn_t nvml_gpm_support_fn(nvmlDevice_t device, nvmlGpmSupport_t *support);
typedef nvmlReturn_t nvml_gpm_alloc_fn(nvmlGpmSample_t *sample);
typedef nvmlReturn_t nvml_gpm_free_fn(nvmlGpmSample_t sample);
typedef nvmlReturn_t nvml_gpm_sample_fn(nvmlDevice_t device, nvmlGpmSample_t sample);
typedef nvmlReturn_t nvml_gpm_metrics_fn(nvmlGpmMetricsGet_t *get);

#endif
