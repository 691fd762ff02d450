/* rule_figures: what the files of the bottleneck rules share (analyze.c: the verdicts;
 * stage_findings.c, run_findings.c, rank_findings.c: the findings beside them, finding_checks.h):
 * the figures of a stage as the rules read them, the thresholds more than one file reads, and
 * the helpers that write figures into evidence texts. A leaf: it calls none of the rule files.
 * Pure functions, thread-safe on distinct data. The rules are in docs/analysis.md. */
#ifndef MLBENCH_RULE_FIGURES_H
#define MLBENCH_RULE_FIGURES_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

#include "analysis/rule_input.h"

#define TEXT_MAX 640            /* bytes of one evidence or recommendation text */

/* Thresholds several rule files read (the others live beside their one rule). */
#define GPU_LOW_UTIL 0.50       /* below: the GPU waits half the time (launch-bound, starved) */
#define OTHER_LOAD_CORES 0.5    /* other processes' mean load that disturbs a benchmark */
#define FEW_SAMPLES 5           /* fewer samples: figures are rough, the evidence says so, and
                                 * the finding ranks after well-measured ones (findings.c) */
#define LEAD_SHARE_MIN 0.05     /* a stage under this share of the run does not lead the
                                 * findings (findings.c) */

/* What the rules read of a stage, with "not measured" resolved once. */
struct figures {
    int ncpu;          /* CPUs online, 0 when unknown */
    bool gpu_measured; /* a GPU source worked */
    double cpu;        /* cores busy, NAN */
    double util;       /* GPU utilisation, NAN when not measured or no GPU in the figures */
    double sm_active;  /* GPM SM active (rule_input.h), NAN without GPM or without a GPU used */
    double tensor_active; /* GPM tensor pipes active, NAN likewise */
    bool gpu_used;     /* the workload used a GPU in this run */
    bool gpu_active;   /* ...and it worked in this stage */
    double io;         /* share of time the machine stalled on I/O (anyone's), NAN */
    bool io_psi;       /* io comes from PSI (else from iowait) */
    double io_own;     /* share of time the workload's own tasks were blocked on I/O, NAN when
                        * not measured (results made before it was sampled) */
    bool io_own_delayacct; /* io_own comes from delay accounting (else state D samples) */
    double io_bps;     /* bytes/s the workload read and wrote (storage layer), NAN */
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
void rule_figures_cat_cores(char *buf, size_t len, double cores, int ncpu, const char *what);

/* Appends the swapping and memory stalls of s, what of them was measured. */
void rule_figures_cat_memory(char *buf, size_t len, const struct stage_resources *s,
                             const struct figures *f);

/* Whether a stage's name says it is collective communication (allreduce, barrier, nccl, comm...,
 * case-insensitive). */
bool rule_figures_communicates(const char *name);

#endif
