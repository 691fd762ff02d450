/* device: what the workloads with a CPU and a CUDA path share: choosing the device for
 * --device auto|cpu|cuda (loading the CUDA backend, finding a GPU, saying why not), and parsing
 * the comma-separated lists of precisions and sizes they take. */
#ifndef MLBENCH_WL_DEVICE_H
#define MLBENCH_WL_DEVICE_H

#include <stddef.h>

#include "common/cuda_backend.h"

#define DEVICE_LIST_MAX 16

enum device_choice { DEVICE_AUTO, DEVICE_CPU, DEVICE_CUDA };
extern const char *const device_names[];    /* "auto", "cpu", "cuda", NULL */
extern const char *const precision_names[]; /* "fp32", "tf32", "fp16", "bf16", NULL */

struct device {
    const struct cuda_backend *cuda; /* NULL: the CPU */
    char name[256];                  /* the GPU's, or "cpu" */
    int cc_major, cc_minor;
};

/* Chooses the device for `choice` into *d. auto: the GPU when the backend loads and finds one,
 * else the CPU, saying why on stderr. cuda without backend or GPU: prints why and returns -1
 * (the caller exits 2). Else 0. */
int device_choose(const char *wl, enum device_choice choice, struct device *d);

/* Parses `list` (comma-separated) into out: precisions (indexes into precision_names) or whole
 * numbers in [min, max]. The count, or -1 with a message naming the option and value. */
int device_parse_precisions(const char *wl, const char *opt, const char *list, int *out);
int device_parse_ints(const char *wl, const char *opt, const char *list, long min, long max,
                      int *out);

/* Whether an error message of the CUDA backend says the GPU's memory ran out (its CUDA_CHECK
 * adds "out of GPU memory" to cudaErrorMemoryAllocation): the workload then exits
 * WL_EXIT_OOM. */
int device_error_is_oom(const char *err);

struct rng;
/* x[i] = scale * uniform in [-1, 1) from r. */
void device_fill(float *x, size_t n, struct rng *r, float scale);
/* Median, min and max of the n > 0 times in times_s (sorted in place) into *out. */
void device_timing(double *times_s, int n, struct gemm_timing *out);

#endif
