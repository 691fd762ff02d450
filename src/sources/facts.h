/* facts: the static facts a metric source finds when it opens and that do not change while it
 * is open (nvtop's populate_static_info), typed: today the GPUs the nvml source lists and their
 * driver. The environment capture (result/envinfo) writes them into the environment document
 * and hands them, as C values, to what reads them during a run (the summary's GPU clock, the
 * analysis, the price). A fact not known is "" (texts), -1 (integers) or NAN (quantities),
 * never 0 or a guess. */
#ifndef MLBENCH_SOURCES_FACTS_H
#define MLBENCH_SOURCES_FACTS_H

#include <stdbool.h>
#include <stddef.h>

/* What one GPU is (docs/environment.md#gpus). */
struct gpu_facts {
    int index;                 /* NVML's index: the label gpu="i" of the GPU's series */
    bool usable;               /* false: listed but no handle (lost GPU, no permission): nothing
                                * below is known */
    char name[96];             /* "NVIDIA H200"; "" when unknown */
    char uuid[96];             /* "GPU-5f1c..."; "" when unknown */
    double memory_bytes;       /* total memory; NAN when unknown */
    int cc_major, cc_minor;    /* CUDA compute capability; -1 when unknown */
    double sm_clock_max_hertz; /* nvmlDeviceGetMaxClockInfo(SM); NAN when unknown */
    bool gpm;                  /* GPM supported and sampled (usable GPUs only) */
};

/* The static facts of the open sources together; zeroed: none. */
struct source_facts {
    char gpu_driver[96];       /* the GPU driver's version; "" when unknown */
    struct gpu_facts *gpus;    /* every GPU listed, in index order; owned */
    size_t n_gpus;
};

/* A GPU whose facts are all unknown, at index. */
struct gpu_facts gpu_facts_unknown(int index);

/* Appends a copy of g to f's GPUs. */
void source_facts_add_gpu(struct source_facts *f, const struct gpu_facts *g);

/* A deep copy of src into dst (whose former contents are not freed). */
void source_facts_copy(struct source_facts *dst, const struct source_facts *src);

/* Frees what f owns and zeroes it; f may be NULL. */
void source_facts_free(struct source_facts *f);

#endif
