/* nvml: facts about the GPUs the nvml metric source found (src/sources/nvml.c), for the report
 * and the environment capture. The source itself is `nvml_source`, listed in sources/sources.h.
 *
 * The facts are read once, when the source opens, and do not change until it closes; these
 * functions make no NVML call. Thread-safety: safe from any thread while the source is open;
 * not against a concurrent open or close of the source (the sampler opens and closes it on the
 * controlling thread). With several open nvml sources, the facts are those of the latest. */
#ifndef MLBENCH_SOURCES_NVML_H
#define MLBENCH_SOURCES_NVML_H

#include <stdbool.h>
#include <stddef.h>

struct nvml_device_facts {
    char name[96];             /* "NVIDIA H200"; "" when unknown */
    char uuid[96];             /* "GPU-5f1c..."; "" when unknown */
    int cc_major, cc_minor;    /* CUDA compute capability; -1 when unknown */
    double memory_total_bytes; /* NAN when unknown */
    bool usable;               /* false: NVML lists it but gave no handle (lost, no permission) */
};

/* Number of GPUs NVML lists (indices 0..n-1, the label gpu="i" of the series; NVML orders them
 * by PCI bus id, which CUDA does only with CUDA_DEVICE_ORDER=PCI_BUS_ID). 0 when not open. */
size_t nvml_device_count(void);

/* Copies the facts of GPU index into *out. Returns 0, or -1 when the source is not open or the
 * index is out of range (*out untouched). */
int nvml_device_get_facts(size_t index, struct nvml_device_facts *out);

/* The main facts of GPU index, for callers that need no more: its name (truncated to namelen,
 * "" when unknown; name may be NULL), compute capability (-1 when unknown) and memory size (NAN
 * when unknown); each output pointer may be NULL. Returns 0, or -1 when the source is not open,
 * the index is out of range or NVML gave no handle for that GPU (outputs untouched). */
int nvml_device_info(size_t index, char *name, size_t namelen, int *cc_major, int *cc_minor,
                     double *mem_total_bytes);

/* Writes the driver version ("580.65.06") into buf. Returns 0, or -1 when the source is not
 * open or the driver did not say (buf then ""). */
int nvml_driver_version(char *buf, size_t len);

#endif
