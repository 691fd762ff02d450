/* analyze_private: what the files of the bottleneck rules share (analyze.c: the figures and
 * the verdicts; extras.c: the findings beside the verdicts); not for other modules, which use
 * analyze.h. Pure functions, thread-safe on distinct data. The rules are in docs/analysis.md. */
#ifndef MLBENCH_ANALYZE_PRIVATE_H
#define MLBENCH_ANALYZE_PRIVATE_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

#include "analysis/analyze.h"
#include "analysis/findings.h"

#define TEXT_MAX 640            /* bytes of one evidence or recommendation text */

/* Thresholds both files read (the others live beside their one rule). */
#define GPU_LOW_UTIL 0.50       /* below: the GPU waits half the time (launch-bound, starved) */
#define OTHER_LOAD_CORES 0.5    /* other processes' mean load that disturbs a benchmark */

/* What the rules read of a stage, with "not measured" resolved once. */
struct figures {
    int ncpu;          /* CPUs online, 0 when unknown */
    bool gpu_measured; /* a GPU source worked */
    double cpu;        /* cores busy, NAN */
    double util;       /* GPU utilisation, NAN when not measured or no GPU in the figures */
    double sm_active;  /* GPM SM active (analyze.h), NAN without GPM or without a GPU used */
    double tensor_active; /* GPM tensor pipes active, NAN likewise */
    bool gpu_used;     /* the workload used a GPU in this run */
    bool gpu_active;   /* ...and it worked in this stage */
    double io;         /* share of time stalled on I/O, NAN */
    bool io_psi;       /* io comes from PSI (else from iowait) */
    double swap_bps;   /* in + out, NAN */
    bool mem_pressure;
    double avail;      /* cores free for the workload (ncpu less other load), NAN when unknown */
    double wait;       /* share of time waiting for a CPU, NAN: see cpu_wait_share */
    bool wait_own;     /* wait is the workload's own run-queue wait (else machine-wide) */
    double runnable;   /* runnable tasks besides the sampler when wait comes from the
                        * run-queue length (neither own wait nor PSI), else NAN */
    double wait_threads; /* the workload's threads waiting for a CPU on average, NAN */
    double other;      /* cores busy with other processes, NAN */
    double steal;      /* share of all CPUs' time the hypervisor ran other machines, NAN */
    long threads_peak; /* threads of the tree at most, -1 when unknown */
    double time_ns;    /* finite and >= 0 */
};

static inline bool known(double x)
{
    return isfinite(x);
}

static inline double pct(double ratio)
{
    return 100 * ratio;
}

static inline const char *stage_name(const struct stage_resources *s)
{
    return s->name ? s->name : "?";
}

/* Appends "1.0 of 16 cores busy" (or "1.0 cores busy" when ncpu is 0) to buf (len bytes),
 * `what` in place of "busy". */
void analyze_cat_cores(char *buf, size_t len, double cores, int ncpu, const char *what);

/* Appends the swapping and memory stalls of s, what of them was measured. */
void analyze_cat_memory(char *buf, size_t len, const struct stage_resources *s,
                        const struct figures *f);

/* Adds to b the findings about stage s beyond its verdict (the rule id `verdict`):
 * mixed-precision, memory-pressure. */
void analyze_stage_extras(const struct analysis_context *ctx, const struct stage_resources *s,
                          const struct figures *f, const char *verdict,
                          struct findings_builder *b);

/* Adds to b the findings about the run as a whole (s is total, or a top-level stage when there
 * is no total): gpu-memory-headroom, other-load, cpu-contention. */
void analyze_run_extras(const struct analysis_context *ctx, const struct stage_resources *s,
                        const struct figures *f, struct findings_builder *b);

/* Whether a stage's name says it is collective communication (allreduce, barrier, nccl, comm...,
 * case-insensitive; rank_advice.c). */
bool analyze_communicates(const char *name);
/* Adds to b the findings about a multi-rank job's ranks (ctx->rank_stages; rank_advice.c):
 * straggler, communication-bound. stages[0..n) and total as analyze's. */
void analyze_rank_findings(const struct analysis_context *ctx,
                           const struct stage_resources *stages, size_t n,
                           const struct stage_resources *total, struct findings_builder *b);

#endif
