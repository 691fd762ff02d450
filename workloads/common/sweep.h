/* sweep: the driver that gemm and mlp share: choose the device, parse the lists of precisions
 * and of sizes (gemm's matrix sizes, mlp's batches), refuse precisions the CPU lacks, write the
 * common metadata, then for each precision check it on a small problem and time it at each size
 * (one stage per pair). Each workload gives its parts in a struct sweep_parts. */
#ifndef MLBENCH_WL_SWEEP_H
#define MLBENCH_WL_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "common/device.h"

struct sweep_parts {
    const char *wl;        /* the workload's name: messages, the "model" metadata */
    const char *list_opt;  /* the option of the size list ("sizes", "batches") */
    const char *list_cpu, *list_cuda; /* its defaults by device */
    long list_min, list_max;
    const char *precisions_cpu, *precisions_cuda; /* --precision's defaults by device */
    const char *cpu_fp32;  /* ends the message refusing a precision other than fp32 on the CPU */
    const char *stage_tag; /* stages are "<precision>-<tag><size>" */
    /* Checks the workload's own options against dev and sets up the CPU (its threads): 0, or -1
     * with the message printed (the workload exits 2). */
    int (*setup)(void *ctx, const struct device *dev);
    /* Metadata beyond model, device and device_name, and the header line on stdout. */
    void (*describe)(void *ctx, const struct device *dev);
    /* Checks one precision on a small problem: 0, or -1 with the error printed. */
    int (*check)(void *ctx, const struct device *dev, int precision);
    /* Times (precision, size) into *t, wrapping what it times in mlb_stage_begin/end(stage)
     * (not the inputs' setup). 0, -1 with err set, or -2 when out of memory (err says what
     * could not be allocated: the workload exits WL_EXIT_OOM). */
    int (*measure)(void *ctx, const struct device *dev, int precision, int size,
                   const char *stage, struct gemm_timing *t, char *err, size_t errlen);
    /* Bytes the workload allocates to measure (precision, size), for --max-memory; may be NULL
     * (the workload has no --max-memory). what: the one-line account of what is counted. */
    double (*need_bytes)(void *ctx, const struct device *dev, int precision, int size,
                         char *what, size_t whatlen);
    /* Counters and the result line of one measured (precision, size). */
    void (*report)(void *ctx, int precision, int size, const struct gemm_timing *t);
};

/* The options every sweep takes, as parsed (NULL lists: the defaults of the device). */
struct sweep_args {
    int device; /* enum device_choice */
    const char *precisions, *list;
    int64_t max_memory; /* --max-memory in bytes; 0: none */
};

/* Runs the sweep of parts on the arguments; ctx goes to every callback. With max_memory, the
 * largest need_bytes of the lists is checked before anything runs: over it, the run stops there
 * with the out-of-memory message. The exit status: 0, 1 after a failed check or measurement, 2
 * for a bad option or an unavailable device, WL_EXIT_OOM out of memory (over max_memory, or a
 * measurement's allocation failed). */
int sweep_main(const struct sweep_parts *parts, const struct sweep_args *args, void *ctx);

#endif
