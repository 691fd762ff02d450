/* fake_nvml.h: what the two halves of the fake NVML share (not a header for tests): the script
 * read into memory by fake_nvml_script.c, replayed by the NVML functions of fake_nvml.c. The
 * script's directives are listed at the top of fake_nvml.c. Internal to the library: hidden. */
#ifndef MLBENCH_FAKE_NVML_H
#define MLBENCH_FAKE_NVML_H

#include <stdbool.h>
#include <stddef.h>

#include "sources/nvml_abi.h"

#define FAKE_INTERNAL __attribute__((visibility("hidden")))

#define FAKE_MAX_GPUS 8

/* The scripted answer sequences of one GPU. */
enum seq {
    SEQ_UTIL,
    SEQ_MEM,
    SEQ_POWER,
    SEQ_SM_CLOCK,
    SEQ_MEM_CLOCK,
    SEQ_TEMP,
    SEQ_PCIE_RX,
    SEQ_PCIE_TX,
    SEQ_THROTTLE,
    SEQ_PROCS,
    SEQ_GPM_SAMPLE, /* nvmlGpmSampleGet: OK or an error */
    /* GPM metrics, one step per nvmlGpmMetricsGet, in NVML's unit (percent, MiB/s) */
    SEQ_GPM_GRAPHICS,
    SEQ_GPM_FIRST_METRIC = SEQ_GPM_GRAPHICS,
    SEQ_GPM_SM,
    SEQ_GPM_OCCUPANCY,
    SEQ_GPM_TENSOR,
    SEQ_GPM_DRAM,
    SEQ_GPM_FP64,
    SEQ_GPM_FP32,
    SEQ_GPM_FP16,
    SEQ_GPM_PCIE_RX,
    SEQ_GPM_PCIE_TX,
    SEQ_GPM_NVLINK_RX,
    SEQ_GPM_NVLINK_TX,
    N_SEQ
};

struct proc {
    bool child;               /* CHILD: the caller's child, looked up at each call */
    unsigned int pid;
    unsigned long long bytes;
};

/* One scripted answer. */
struct step {
    nvmlReturn_t rc;
    bool lose;                /* LOST: the GPU is gone from this call on */
    unsigned long long a, b;  /* the value; util: a = gpu %, b = memory % */
    double x;                 /* the value of a GPM metric */
    struct proc *procs;       /* procs: the list */
    unsigned int n_procs;
};

struct sequence {
    struct step *steps;
    size_t n, next;
};

/* The fake's device: nvmlDevice_t points to one. */
struct nvmlDevice_st {
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    int cc_major, cc_minor;
    unsigned long long mem_total;
    nvmlReturn_t handle_rc;
    unsigned int pcie_delay_us;
    nvmlReturn_t sm_clock_max_rc; /* nvmlDeviceGetMaxClockInfo(SM): NOT_SUPPORTED by default */
    unsigned int sm_clock_max_mhz;
    nvmlReturn_t gpm_rc;          /* nvmlGpmQueryDeviceSupport's answer */
    bool gpm;                     /* GPM supported */
    bool lost;
    struct sequence seq[N_SEQ];
};

struct fake_state {
    int inits; /* nvmlInit minus nvmlShutdown: NVML counts references */
    nvmlReturn_t init_rc, count_rc;
    unsigned int n_gpus;
    long long count_says;  /* >= 0: what nvmlDeviceGetCount answers instead of n_gpus */
    char driver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
    unsigned long gpm_samples; /* GPM samples taken: orders them */
    struct nvmlDevice_st gpu[FAKE_MAX_GPUS];
};

extern FAKE_INTERNAL struct fake_state fake;

/* fake_nvml_script.c: reads $FAKE_NVML_SCRIPT into fake (NVML_SUCCESS or the scripted nvmlInit
 * error); frees it (nvmlShutdown); the text of an error code. */
FAKE_INTERNAL nvmlReturn_t fake_load_script(void);
FAKE_INTERNAL void fake_free_script(void);
FAKE_INTERNAL const char *fake_error_text(nvmlReturn_t rc);
FAKE_INTERNAL bool fake_parse_ull(const char *tok, unsigned long long *v);

/* fake_nvml.c: forgets the call counts (when a script is read). */
FAKE_INTERNAL void fake_reset_calls(void);

#endif
