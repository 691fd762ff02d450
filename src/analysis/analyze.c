/* analyze: the bottleneck rules (see analyze.h). Each stage gets one verdict, the first rule of
 * the precedence in classify() that matches; verdicts and the checks beside them (the table
 * finding_checks below, one row per rule file: finding_checks.h) give findings with evidence, a
 * recommendation and a conservative saving estimate. The rules,
 * thresholds and saving formulas are documented for users in docs/analysis.md: keep the two in
 * step. */
#include "analysis/analyze.h"
#include "analysis/advice.h"
#include "analysis/finding_checks.h"
#include "analysis/findings.h"
#include "analysis/rule_figures.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "measure/sampler.h"
#include "util/units.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* Appends to the evidence and advice texts, fixed buffers (util/strbuf.h). */
#define cat(...) strbuf_catf(__VA_ARGS__)

/* GPU (ratios of time a kernel ran, as NVML reports it) */
#define GPU_BOUND_UTIL 0.90     /* at least: gpu-bound */
#define GPU_ACTIVE_UTIL 0.05    /* at least: the GPU works in the stage (else it is a CPU stage) */
#define GPU_TARGET_UTIL 0.90    /* what a well-fed GPU reaches: the goal of the saving estimates */
#define GPU_MEM_BUSY 0.50       /* memory controller busy at least: bandwidth-heavy kernels */
#define LAUNCH_BATCH_MAX 64     /* batch at most this (or unknown): launch overhead plausible */
/* GPM SM active (the share of SMs with a warp resident, over time). NVIDIA's DCGM guide: 0.8 or
 * more is needed, though not enough, for effective use; under 0.5 likely means ineffective use.
 * A kernel on one SM of 132 reads 100 % utilisation and 0.8 % SM active. */
#define SM_ACTIVE_LOW 0.50      /* below, in a stage a kernel runs 90 % of: under-occupied */
#define SM_ACTIVE_TARGET 0.80   /* what kernels that fill the GPU reach: the saving's goal */

/* CPU, in cores busy (1.0 = one core all the time) */
#define CPU_CORE_BUSY 0.8       /* one thread saturated: lower end */
#define CPU_SINGLE_MAX 1.3      /* one thread saturated: upper end */
#define CPU_PARALLEL_MIN 1.5    /* several threads busy */
#define CPU_SATURATED 0.70      /* share of all CPUs: the machine is saturated */
#define CPU_IDLE_MAX 0.2        /* below: the workload hardly computes */
#define PARALLEL_EFFICIENCY 0.6 /* each added worker is worth this much of one */
#define MAX_WORKERS 8           /* workers suggested for a single-threaded stage, at most */

/* I/O, memory and contention (ratios of time) */
#define IO_STALL_MIN 0.20       /* the workload's tasks blocked on I/O at least this share of the
                                 * time: io-bound */
#define IO_CPU_SHARE_MAX 0.5    /* io-bound needs fewer than this share of the CPUs busy */
#define IO_OWN_MIN_BPS 1048576.0 /* without the workload's own I/O waits (older results): the
                                 * machine's stall counts only where the workload itself read or
                                 * wrote at least this many bytes a second */
#define SWAP_MIN_BPS 1048576.0  /* swapping at least 1 MiB/s (in + out): memory-bound */
#define PSI_MEM_MIN 0.10        /* tasks stalled on memory at least this share: memory-bound */
#define CPU_STARVED_WAIT 0.30   /* the workload's threads waited for a CPU at least this share of
                                 * the time they were ready to run (schedstat): cpu-starved */
#define CPU_STARVED_MIN 0.10    /* ...and they waited at least this many threads on average (a
                                 * tenth of the stage): a sleeping stage's wake-up waits are not */
#define STARVED_BY_OTHERS 0.25  /* other processes' cores from which a stage whose threads
                                 * waited is told they took its CPUs: a busy loop sharing its
                                 * one core gets half of it, 0.5, and the boundary must not
                                 * decide which advice it gets */
#define CPU_STOLEN 0.10         /* the hypervisor ran other machines on the CPUs at least this
                                 * share of their time (steal) while the stage computes:
                                 * cpu-starved, as no run-queue wait shows it */
#define PSI_CPU_STARVED 0.50    /* without schedstat: some task waited for a CPU at least half
                                 * of the time, machine-wide (PSI cpu some), while the stage
                                 * computes (cores busy >= CPU_IDLE_MAX): cpu-starved */

/* Findings */
#define UNMEASURED_MIN_SHARE 0.05 /* an unmeasured stage shorter than this share is not worth it */
#define TOTAL_COVERED 0.5       /* top-level stages covering less: total gets findings too */
#define OVERLAP_SHARED 0.5      /* at least: a stage mostly ran beside others (figures shared) */
#define MIN_INTERVAL_NS ((double)SAMPLER_MIN_INTERVAL_NS) /* the shortest --interval */

struct outcome {
    const char *rule;
    char evidence[TEXT_MAX];
    char recommendation[TEXT_MAX];
    double saving_ns;
    bool finding;      /* the verdict is worth a finding */
};

static bool is_cpu_device(const char *device)
{
    return device && strcasecmp(device, "cpu") == 0;
}

static void resolve(const struct analysis_context *ctx, const struct stage_resources *s,
                    struct figures *f)
{
    memset(f, 0, sizeof *f);
    f->ncpu = ctx->ncpu > 0 ? ctx->ncpu : 0;
    f->gpu_measured = ctx->gpu_measured;
    f->cpu = known(s->cpu_cores) ? s->cpu_cores : NAN;
    f->util = ctx->gpu_measured && known(s->gpu_util) ? s->gpu_util : NAN;
    f->gpu_used = known(f->util) && ((s->gpus > 0 && !is_cpu_device(ctx->device)) || f->util > 0);
    f->gpu_active = f->gpu_used && f->util >= GPU_ACTIVE_UTIL;
    f->sm_active = f->gpu_used && known(s->gpu_sm_active) ? s->gpu_sm_active : NAN;
    f->tensor_active = f->gpu_used && known(s->gpu_tensor_active) ? s->gpu_tensor_active : NAN;

    /* PSI io "some" is the share of time at least one task waited for I/O. Without it, iowait
     * (a share of all CPU time) times the CPUs is the mean number of CPUs idle with I/O
     * pending: about the share of time one task waited. */
    f->io = f->io_own = NAN;
    if (known(s->io_blocked)) {
        f->io_own = fmin(1, fmax(0, s->io_blocked));
        f->io_own_delayacct = s->io_blocked_delayacct;
    }
    f->io_bps = known(s->read_bps) || known(s->write_bps)
                    ? (known(s->read_bps) ? s->read_bps : 0) + (known(s->write_bps) ? s->write_bps : 0)
                    : NAN;
    if (known(s->psi_io_some)) {
        f->io = s->psi_io_some;
        f->io_psi = true;
    } else if (known(s->iowait)) {
        f->io = f->ncpu ? fmin(1, s->iowait * f->ncpu) : s->iowait;
    }

    f->swap_bps = NAN;
    if (known(s->swap_in_bps) || known(s->swap_out_bps))
        f->swap_bps = (known(s->swap_in_bps) ? s->swap_in_bps : 0) +
                      (known(s->swap_out_bps) ? s->swap_out_bps : 0);
    f->mem_pressure = (known(f->swap_bps) && f->swap_bps >= SWAP_MIN_BPS) ||
                      (known(s->psi_mem_some) && s->psi_mem_some >= PSI_MEM_MIN);

    f->avail = NAN;
    if (f->ncpu)
        /* Rounded where used: a tenth of a core of other load (mlbench's own sampler) must
         * not cost the workload a whole core. */
        f->avail = f->ncpu - (known(s->other_cores) ? s->other_cores : 0);
    f->time_ns = known(s->time_ns) && s->time_ns > 0 ? s->time_ns : 0;

    /* Waiting for a CPU: the workload's own run-queue wait over the time its threads were
     * ready to run (running + waiting), else machine-wide PSI cpu some. */
    f->wait = f->runnable = NAN;
    f->wait_threads = known(s->cpu_wait) ? s->cpu_wait : NAN;
    if (known(s->cpu_wait) && known(f->cpu) && f->cpu + s->cpu_wait > 0) {
        f->wait = s->cpu_wait / (f->cpu + s->cpu_wait);
        f->wait_own = true;
    } else if (known(s->psi_cpu_some)) {
        f->wait = fmin(1, s->psi_cpu_some);
    } else if (known(s->runnable) && f->ncpu) {
        /* R tasks ready to run on N CPUs (R > N): each waits about 1 - N/R of the time. The
         * sampler's own thread is running while it reads the count: not one of them. */
        f->runnable = fmax(0, s->runnable - 1);
        f->wait = f->runnable > f->ncpu ? 1 - f->ncpu / f->runnable : 0;
    }
    f->other = known(s->other_cores) ? s->other_cores : NAN;
    f->steal = known(s->steal) ? s->steal : NAN;
    f->threads_peak = known(s->threads_peak) ? (long)s->threads_peak : -1;
}

/* The share of time the workload waited for I/O as the rules read it: its own tasks' where
 * measured; else (results made before that was sampled) the machine's stall, and only where the
 * workload itself moved data: another process's writes are not this workload's waits. */
static double io_stall(const struct figures *f)
{
    if (known(f->io_own))
        return f->io_own;
    return known(f->io_bps) && f->io_bps >= IO_OWN_MIN_BPS ? f->io : NAN;
}

static void cat_io(char *buf, size_t len, const struct figures *f)
{
    if (known(f->io_own))
        cat(buf, len, "its tasks were blocked on I/O %.0f %% of the time (%s)", pct(f->io_own),
            f->io_own_delayacct ? "the kernel's delay accounting"
                                : "share of samples in state D");
    else
        cat(buf, len, "tasks stalled on I/O %.0f %% of the time (%s, machine-wide)", pct(f->io),
            f->io_psi ? "pressure stall information" : "from iowait");
}

/* Saving when the GPU, now busy util of the time, would be kept GPU_TARGET_UTIL busy with the
 * same work. NVML's utilisation counts time with any kernel running, which overstates the work,
 * so this understates the saving. */
static double gpu_feed_saving(const struct figures *f)
{
    return f->time_ns * fmax(0, 1 - f->util / GPU_TARGET_UTIL);
}

/* Speed-up of a stage on c busy cores given t cores, each added core worth
 * PARALLEL_EFFICIENCY of one. */
static double parallel_saving(const struct figures *f, double c, double t)
{
    if (!(t > c) || !(c > 0))
        return 0;
    double speedup = 1 + PARALLEL_EFFICIENCY * (t - c) / c;
    return f->time_ns * (1 - 1 / speedup);
}

static void verdict_unmeasured(const struct analysis_context *ctx,
                               const struct stage_resources *s, const struct figures *f,
                               struct outcome *o)
{
    o->rule = "unmeasured";
    o->finding = !known(s->share) || s->share >= UNMEASURED_MIN_SHARE;
    char b[32];
    if (ctx->cpu_skipped && !known(f->cpu) && s->samples > 0) {
        cat(o->evidence, TEXT_MAX, "CPU use not measured: %s", ctx->cpu_skipped);
        cat(o->recommendation, TEXT_MAX,
            "the workload's CPU use could not be read (see the run's notes); fix that source "
            "to classify the stage");
        return;
    }
    bool some = known(f->util) || known(f->io) || known(f->swap_bps) || known(s->psi_mem_some);
    /* Gauges were sampled in it, but a rate (CPU use) needs an interval between two samples
     * whose middle falls in the stage. */
    bool too_short = ctx->interval_ns > 0 ? f->time_ns < 2 * ctx->interval_ns
                                          : s->samples < 2 * (ctx->runs ? ctx->runs : 1);
    if (s->samples > 0 && some && !known(f->cpu) && !too_short) {
        cat(o->evidence, TEXT_MAX, "CPU use not measured in %zu samples: the workload's CPU "
            "time could not be read", s->samples);
        cat(o->recommendation, TEXT_MAX,
            "the run's notes count the sampling errors of the proc source: fix what makes "
            "its reads fail to classify the stage");
        return;
    }
    if (s->samples > 0 && some && !known(f->cpu)) {
        cat(o->evidence, TEXT_MAX, "too short to measure CPU use: %zu sample%s in %s", s->samples,
            s->samples == 1 ? "" : "s", ctx->runs > 1 ? "all runs together" : "the run");
        if (f->time_ns > 0)
            cat(o->evidence, TEXT_MAX, ", the stage lasted %s",
                units_duration(f->time_ns, b, sizeof b));
        if (ctx->interval_ns > 0 && ctx->interval_adaptive) {
            char c[32];
            cat(o->evidence, TEXT_MAX, ", sampled every %s at first, up to every %s",
                units_duration(MIN_INTERVAL_NS, c, sizeof c),
                units_duration(ctx->interval_ns, b, sizeof b));
        } else if (ctx->interval_ns > 0) {
            cat(o->evidence, TEXT_MAX, ", sampled every %s",
                units_duration(ctx->interval_ns, b, sizeof b));
        }
    } else if (s->samples > 0) {
        cat(o->evidence, TEXT_MAX, "%zu samples but no resource figure in them", s->samples);
        cat(o->recommendation, TEXT_MAX,
            "the metric sources could not be read: the run's notes say which were skipped and "
            "why");
        return;
    } else if (f->time_ns > 0)
        cat(o->evidence, TEXT_MAX, "no sample fell in the stage, which lasted %s: it is shorter "
            "than the sampling interval", units_duration(f->time_ns, b, sizeof b));
    else
        cat(o->evidence, TEXT_MAX, "no sample fell in the stage");
    if (f->time_ns >= 2 * MIN_INTERVAL_NS)
        cat(o->recommendation, TEXT_MAX, "lower --interval to %s or less to sample it",
            units_duration(fmax(MIN_INTERVAL_NS, f->time_ns / 5), b, sizeof b));
    else
        cat(o->recommendation, TEXT_MAX,
            "the stage is too short for the shortest --interval (%s): measure it as part of a "
            "longer stage, or repeat it in a loop", units_duration(MIN_INTERVAL_NS, b, sizeof b));
}

static void verdict_gpu_bound(const struct stage_resources *s, const struct figures *f,
                              struct outcome *o)
{
    o->rule = "gpu-bound";
    o->finding = true;
    cat(o->evidence, TEXT_MAX, "GPU %.0f %% busy", pct(f->util));
    if (known(f->sm_active))
        cat(o->evidence, TEXT_MAX, ", %.0f %% of its SMs active", pct(f->sm_active));
    if (known(f->tensor_active))
        cat(o->evidence, TEXT_MAX, ", tensor pipes %.0f %%", pct(f->tensor_active));
    if (known(s->gpu_dram_active))
        cat(o->evidence, TEXT_MAX, ", DRAM bandwidth %.0f %%", pct(s->gpu_dram_active));
    else if (known(s->gpu_mem_util))
        cat(o->evidence, TEXT_MAX, ", its memory %.0f %% busy", pct(s->gpu_mem_util));
    if (known(s->gpu_power_watts))
        cat(o->evidence, TEXT_MAX, ", %.0f W", s->gpu_power_watts);
    /* GPM's DRAM activity is the bandwidth used; NVML's memory utilisation only the share of
     * time any access happened: the first where there is one */
    double memory = known(s->gpu_dram_active) ? s->gpu_dram_active : s->gpu_mem_util;
    if (known(memory) && memory >= GPU_MEM_BUSY)
        cat(o->recommendation, TEXT_MAX,
            "the GPU is the limit and its memory traffic is heavy: fuse element-wise kernels "
            "(torch.compile), halve the bytes moved with bf16/fp16, use channels-last for "
            "convolutions; beyond that, a faster GPU or more GPUs");
    else
        cat(o->recommendation, TEXT_MAX,
            "the GPU is the limit: use its tensor cores (bf16/fp16 autocast, TF32 for fp32 "
            "matrix products), fuse kernels (torch.compile), or do less work per step; beyond "
            "that, a faster GPU or more GPUs");
    o->saving_ns = 0; /* the mixed-precision finding estimates what precision could save */
}

/* A kernel runs nearly all the time, but the kernels fill few of the SMs: small kernels (a
 * small batch, unfused element-wise work) keep the GPU "busy" while most of it idles. */
static void verdict_under_occupied(const struct stage_resources *s, const struct figures *f,
                                   struct outcome *o)
{
    o->rule = "gpu-under-occupied";
    o->finding = true;
    cat(o->evidence, TEXT_MAX, "a kernel ran %.0f %% of the time, but only %.0f %% of the SMs "
        "were active on average", pct(f->util), pct(f->sm_active));
    if (known(s->gpu_sm_occupancy))
        cat(o->evidence, TEXT_MAX, " (occupancy %.0f %%)", pct(s->gpu_sm_occupancy));
    if (known(f->tensor_active))
        cat(o->evidence, TEXT_MAX, ", tensor pipes %.0f %% active", pct(f->tensor_active));
    cat(o->recommendation, TEXT_MAX,
        "the kernels are too small to fill the GPU, so \"GPU busy\" overstates its use: give each "
        "kernel more work (a larger batch: mlbench sweep --find-max batch=LO..HI), fuse small "
        "kernels (torch.compile), or run independent work side by side (CUDA streams, several "
        "processes with MPS); a smaller GPU (or a MIG slice) would do this work as fast");
    /* The same work with kernels that fill SM_ACTIVE_TARGET of the SMs: understated, as a
     * larger batch also cuts the per-kernel overheads. */
    o->saving_ns = f->time_ns * fmax(0, 1 - f->sm_active / SM_ACTIVE_TARGET);
}

static void verdict_memory(const struct stage_resources *s, const struct figures *f,
                           struct outcome *o)
{
    o->rule = "memory-bound";
    o->finding = true;
    rule_figures_cat_memory(o->evidence, TEXT_MAX, s, f);
    cat(o->recommendation, TEXT_MAX,
        "the machine is short of memory: shrink the workload's footprint (smaller batch or "
        "cache, memory-mapped or streamed data, fewer DataLoader workers: each holds its own "
        "copies), stop other memory users, or add RAM");
    /* Time in which every task waited on memory was lost outright. */
    o->saving_ns = known(s->psi_mem_full) ? f->time_ns * fmin(1, s->psi_mem_full) : 0;
}

static void verdict_launch(const struct analysis_context *ctx, const struct figures *f,
                           struct outcome *o)
{
    o->rule = "launch-bound";
    o->finding = true;
    cat(o->evidence, TEXT_MAX, "GPU %.0f %% busy while one host thread is saturated (",
        pct(f->util));
    rule_figures_cat_cores(o->evidence, TEXT_MAX, f->cpu, f->ncpu, "busy");
    if (ctx->batch_size > 0)
        cat(o->evidence, TEXT_MAX, ") at batch %ld", ctx->batch_size);
    else
        cat(o->evidence, TEXT_MAX, "), batch size not given");
    cat(o->recommendation, TEXT_MAX,
        "the host launching kernels one by one likely sets the pace, not the GPU: raise the "
        "batch size");
    if (ctx->batch_size > 0)
        cat(o->recommendation, TEXT_MAX, " from %ld", ctx->batch_size);
    cat(o->recommendation, TEXT_MAX,
        " (mlbench sweep), capture the step in a CUDA graph (torch.compile "
        "mode=\"reduce-overhead\"), or fuse kernels");
    if (ctx->loader_workers <= 0)
        cat(o->recommendation, TEXT_MAX, "; if this thread also loads the data, use DataLoader "
            "workers (num_workers%s)", ctx->loader_workers == 0 ? " is 0 now" : "");
    o->saving_ns = gpu_feed_saving(f);
}

static void verdict_starved(const struct analysis_context *ctx, const struct figures *f,
                            struct outcome *o)
{
    o->rule = "gpu-starved";
    o->finding = true;
    int decimals = f->cpu < 0.095 ? 2 : 1;
    cat(o->evidence, TEXT_MAX, "GPU %.0f %% busy while %.*f", pct(f->util), decimals, f->cpu);
    if (f->ncpu)
        cat(o->evidence, TEXT_MAX, " of %d", f->ncpu);
    cat(o->evidence, TEXT_MAX, " cores feed it");
    if (io_stall(f) >= IO_STALL_MIN) {
        cat(o->evidence, TEXT_MAX, "; ");
        cat_io(o->evidence, TEXT_MAX, f);
    }
    if (f->ncpu && f->cpu >= CPU_SATURATED * f->ncpu)
        cat(o->recommendation, TEXT_MAX,
            "the CPUs cannot keep up with the GPU and more workers cannot help: decode and "
            "augment on the GPU (NVIDIA DALI, torchvision transforms on CUDA tensors), or "
            "preprocess once and store the result");
    else {
        bool single = f->cpu <= CPU_SINGLE_MAX;
        cat(o->recommendation, TEXT_MAX, "%s: ", single ? "one thread prepares the input"
                                                        : "the input pipeline is the bottleneck");
        advice_feed_gpu(ctx, single, f->ncpu ? f->avail : 4, o->recommendation, TEXT_MAX);
    }
    o->saving_ns = gpu_feed_saving(f);
}

/* The CPU side of evidence: "1.0 of 16 cores busy, GPU idle 97 % of the stage". */
static void cat_cpu_evidence(char *buf, const struct figures *f)
{
    rule_figures_cat_cores(buf, TEXT_MAX, f->cpu, f->ncpu, "busy");
    if (f->gpu_used)
        cat(buf, TEXT_MAX, ", GPU idle %.0f %% of the stage", pct(1 - f->util));
    if (io_stall(f) >= IO_STALL_MIN) {
        cat(buf, TEXT_MAX, ", ");
        cat_io(buf, TEXT_MAX, f);
    }
}

static void verdict_one_cpu(const struct figures *f, struct outcome *o)
{
    o->rule = "cpu-bound";
    o->finding = true;
    cat_cpu_evidence(o->evidence, f);
    cat(o->evidence, TEXT_MAX, ": the machine's only CPU is saturated");
    cat(o->recommendation, TEXT_MAX,
        "threads cannot help on one CPU: make the work cheaper (vectorised, BLAS-backed or "
        "compiled code, less data per step), or run on a machine with more cores or a GPU");
}

/* About one core busy: one thread saturated, or (several processes) one core's worth of work
 * taken in turns, which is no "single thread" (issue 35). */
static void verdict_single(const struct analysis_context *ctx, const struct stage_resources *s,
                           const struct figures *f, struct outcome *o)
{
    bool several = known(s->processes_peak) && s->processes_peak >= 2;
    o->rule = several ? "cpu-bound-one-core" : "cpu-bound-single-thread";
    o->finding = true;
    cat_cpu_evidence(o->evidence, f);
    if (several)
        cat(o->evidence, TEXT_MAX, ", across %.0f processes", s->processes_peak);
    if (!f->ncpu) {
        cat(o->recommendation, TEXT_MAX,
            "parallelise it (DataLoader workers, multiprocessing, threads in native code) or "
            "move it to a GPU");
        return;
    }
    int workers = (int)fmin(MAX_WORKERS, round(f->avail));
    if (workers < 2) {
        cat(o->recommendation, TEXT_MAX,
            "parallelising needs free cores, and other processes keep the others busy: "
            "run on a quiet machine, then parallelise it, or move it to a GPU");
        return;
    }
    /* Several processes already (a DataLoader's workers, a pool) that together keep about one
     * core busy: more of them is not the cure. */
    if (several) {
        cat(o->recommendation, TEXT_MAX,
            "the workload already runs %.0f processes (up to %.0f threads)",
            s->processes_peak, known(s->threads_peak) ? s->threads_peak : s->processes_peak);
        if (ctx->loader_workers > 0)
            cat(o->recommendation, TEXT_MAX, ", %ld of them DataLoader workers (num_workers is "
                "%ld already)", ctx->loader_workers, ctx->loader_workers);
        cat(o->recommendation, TEXT_MAX,
            ", yet together they keep about one core busy: one of them sets the pace, or they "
            "take turns (workers waiting for the main process, or the main process for them); "
            "mark the main loop's waits and work as stages (the marker clients, "
            "docs/markers.md) to see which, before %s",
            ctx->loader_workers > 0 ? "raising num_workers" : "adding workers");
        return;
    }
    if (advice_parallelise(ctx, s->name, workers, o->recommendation, TEXT_MAX))
        o->saving_ns = parallel_saving(f, 1, workers);
    cat(o->recommendation, TEXT_MAX, ", or move it to a GPU");
}

static void verdict_io(const struct stage_resources *s, const struct figures *f,
                       struct outcome *o)
{
    char a[32];
    o->rule = "io-bound";
    o->finding = true;
    cat_io(o->evidence, TEXT_MAX, f);
    cat(o->evidence, TEXT_MAX, ", ");
    rule_figures_cat_cores(o->evidence, TEXT_MAX, f->cpu, f->ncpu, "busy");
    if (known(s->read_bps) && s->read_bps > 0)
        cat(o->evidence, TEXT_MAX, ", reading %s/s", units_bytes(s->read_bps, a, sizeof a));
    if (known(s->write_bps) && s->write_bps > 0)
        cat(o->evidence, TEXT_MAX, ", writing %s/s", units_bytes(s->write_bps, a, sizeof a));
    if (f->gpu_used)
        cat(o->evidence, TEXT_MAX, ", GPU %.0f %% busy", pct(f->util));
    cat(o->recommendation, TEXT_MAX,
        "keep the data in memory or on local NVMe (the page cache helps from the second read "
        "if the data fit in RAM), read packed shards in large sequential chunks instead of many "
        "small files (WebDataset, TFRecord), and prefetch with more parallel readers");
    o->saving_ns = f->time_ns * fmin(1, io_stall(f));
}

static void verdict_parallel(const struct analysis_context *ctx, const struct stage_resources *s,
                             const struct figures *f, struct outcome *o)
{
    o->rule = "cpu-bound-parallel";
    o->finding = true;
    cat_cpu_evidence(o->evidence, f);
    /* More cores busy than torch was asked for: thread pools beside torch's (issue 35: 1.9 cores
     * beside torch_threads=1 passed without a word; Debian's torch runs OpenBLAS's own). */
    bool beyond = ctx->framework && !strcasecmp(ctx->framework, "torch") && ctx->threads > 0 &&
                  f->cpu >= (double)ctx->threads + 0.5;
    if (beyond)
        cat(o->evidence, TEXT_MAX, ", more than the %ld thread%s torch was set to", ctx->threads,
            ctx->threads == 1 ? "" : "s");
    if (beyond)
        cat(o->recommendation, TEXT_MAX, "threads beyond torch's %ld are busy: other thread "
            "pools run beside it (the BLAS library's own, e.g. OpenBLAS's; inter-op threads; "
            "DataLoader workers); set OMP_NUM_THREADS and OPENBLAS_NUM_THREADS to %ld as well "
            "for a measurement of what torch's setting does; ", ctx->threads, ctx->threads);
    if (!f->ncpu || f->cpu >= CPU_SATURATED * f->ncpu || round(f->avail - f->cpu) < 1) {
        cat(o->recommendation, TEXT_MAX,
            "the CPUs are the limit: make the work cheaper (vectorised, BLAS-backed or compiled "
            "code, lower precision, less data), or use a machine with more cores or a GPU");
        return;
    }
    /* One step at a time: doubling the threads, or using every free core. */
    double target = fmin(round(f->avail), 2 * f->cpu);
    cat(o->recommendation, TEXT_MAX, "%.0f cores are idle: ", round(f->avail - f->cpu));
    if (advice_more_threads(ctx, s->name, target, o->recommendation, TEXT_MAX))
        o->saving_ns = parallel_saving(f, f->cpu, target);
    cat(o->recommendation, TEXT_MAX, "; else make it cheaper or move it to a GPU");
}

/* The hypervisor took the CPUs from a stage that computes: its threads lost the time without
 * waiting in this machine's run queue, so only steal time shows it. */
static bool cpu_stolen(const struct figures *f)
{
    return known(f->cpu) && f->cpu >= CPU_IDLE_MAX && known(f->steal) && f->steal >= CPU_STOLEN;
}

/* Whether the stage's threads were kept from running: waits for a CPU at or above the
 * threshold of its evidence, unless the workload itself fills the machine (then it is
 * cpu-bound-parallel, and cpu-contention names the oversubscription); or steal time. */
static bool cpu_waited(const struct figures *f)
{
    /* Without the workload's CPU use, machine-wide waits say nothing about this stage. */
    if (!known(f->cpu) || !known(f->wait) ||
        f->wait < (f->wait_own ? CPU_STARVED_WAIT : PSI_CPU_STARVED))
        return false;
    /* A share of almost nothing is nothing: a stage that sleeps waits a little at each
     * wake-up; and machine-wide waits say nothing about a stage that does not compute. */
    if (f->wait_own ? f->wait_threads < CPU_STARVED_MIN : f->cpu < CPU_IDLE_MAX)
        return false;
    bool others = known(f->other) && f->other >= OTHER_LOAD_CORES;
    return others || !f->ncpu || f->cpu < CPU_SATURATED * f->ncpu;
}

static bool cpu_starved(const struct figures *f)
{
    return cpu_waited(f) || cpu_stolen(f);
}

static void verdict_cpu_stolen(const struct figures *f, struct outcome *o)
{
    cat(o->evidence, TEXT_MAX, "the hypervisor ran other machines on this machine's CPUs "
        "%.0f %% of their time (steal time, /proc/stat, machine-wide), time the stage's threads "
        "lost without waiting in this machine's run queue", pct(f->steal));
    if (known(f->cpu)) {
        cat(o->evidence, TEXT_MAX, ", ");
        rule_figures_cat_cores(o->evidence, TEXT_MAX, f->cpu, f->ncpu, "busy");
    }
    cat(o->recommendation, TEXT_MAX,
        "this virtual machine's host is shared and busy, so the stage's timings are not its "
        "own: benchmark on a dedicated host (or an instance type with dedicated cores), or "
        "compare only runs made side by side, then read the stage's verdict again");
}

static void verdict_cpu_starved(const struct analysis_context *ctx, const struct figures *f,
                                struct outcome *o)
{
    o->rule = "cpu-starved";
    o->finding = true;
    if (!cpu_waited(f)) {
        verdict_cpu_stolen(f, o);
        return;
    }
    if (f->wait_own)
        cat(o->evidence, TEXT_MAX, "the workload's threads waited for a CPU %.0f %% of the time "
            "they were ready to run (their own run-queue wait)",
            pct(f->wait));
    else if (known(f->runnable))
        cat(o->evidence, TEXT_MAX, "%.1f tasks ready to run on %d CPUs on average (run-queue "
            "length, /proc/stat procs_running, machine-wide: neither the workload's own wait nor "
            "pressure stall information was measured): each waited about %.0f %% of the time",
            f->runnable, f->ncpu, pct(f->wait));
    else
        cat(o->evidence, TEXT_MAX, "tasks waited for a CPU %.0f %% of the time (pressure stall "
            "information, machine-wide: the workload's own wait was not measured)", pct(f->wait));
    if (known(f->cpu)) {
        cat(o->evidence, TEXT_MAX, ", ");
        rule_figures_cat_cores(o->evidence, TEXT_MAX, f->cpu, f->ncpu, "busy");
    }
    bool others = known(f->other) && f->other >= STARVED_BY_OTHERS;
    if (known(f->other))
        cat(o->evidence, TEXT_MAX, ", other processes %.1f cores", f->other);
    if (cpu_stolen(f))
        cat(o->evidence, TEXT_MAX, ", steal time %.0f %% (the hypervisor)", pct(f->steal));
    if (f->threads_peak > 0)
        cat(o->evidence, TEXT_MAX, ", up to %ld thread%s", f->threads_peak,
            f->threads_peak == 1 ? "" : "s");
    advice_cpu_starved(ctx, others, f->ncpu, f->threads_peak, o->recommendation, TEXT_MAX);
    /* Ready but not running: the time a CPU of its own would give back (own wait only), and
     * only where the workload's own threads caused it: CPU time other processes took is not
     * the workload's to win by a change (issue 35) */
    o->saving_ns = f->wait_own && !others ? f->time_ns * fmin(1, f->wait) : 0;
}

static void verdict_idle(const struct figures *f, struct outcome *o)
{
    o->rule = "idle";
    o->finding = true;
    rule_figures_cat_cores(o->evidence, TEXT_MAX, f->cpu, f->ncpu, "busy");
    /* No GPU line where no GPU was measured: a CPU machine's stage is not "GPU not measured"
     * (a run meant for a GPU that could not be measured gets the gpu_unverified warning). */
    if (f->gpu_used)
        cat(o->evidence, TEXT_MAX, ", GPU idle");
    else if (f->gpu_measured)
        cat(o->evidence, TEXT_MAX, ", no GPU used");
    /* The workload's own I/O waits only: the machine's stall is other processes' too (the
     * io_contention warning says it) */
    if (known(f->io_own))
        cat(o->evidence, TEXT_MAX, ", blocked on I/O %.0f %%", pct(f->io_own));
    cat(o->recommendation, TEXT_MAX,
        "the stage waits on something not measured: sleeps, the network or remote storage, "
        "locks, a server or another process; mark the waits as stages to see which");
}

static void verdict_mixed(const struct figures *f, struct outcome *o)
{
    o->rule = "mixed";
    o->finding = true;
    rule_figures_cat_cores(o->evidence, TEXT_MAX, f->cpu, f->ncpu, "busy"); /* known: classify() */
    if (f->gpu_used)
        cat(o->evidence, TEXT_MAX, ", GPU %.0f %% busy", pct(f->util));
    if (known(f->io_own))
        cat(o->evidence, TEXT_MAX, ", blocked on I/O %.0f %%", pct(f->io_own));

    if (f->gpu_active && f->util >= GPU_LOW_UTIL) {
        cat(o->evidence, TEXT_MAX, ": the GPU waits %.0f %% of the time, for the host or for "
            "synchronisation", pct(1 - f->util));
        cat(o->recommendation, TEXT_MAX,
            "look for gaps between kernels on a timeline (Nsight Systems): prefetch the next "
            "batch, copy from pinned memory with non_blocking, avoid per-step synchronisation "
            "(.item(), printing losses), and use CUDA graphs for many small kernels");
    } else if (f->gpu_active) {
        cat(o->evidence, TEXT_MAX, ": neither the GPU nor a CPU core is saturated; host and "
            "device probably take turns");
        cat(o->recommendation, TEXT_MAX,
            "overlap host and device work: asynchronous copies from pinned memory, no per-step "
            "synchronisation, the next batch prepared while the GPU computes");
    } else if (f->cpu > CPU_SINGLE_MAX) {
        cat(o->evidence, TEXT_MAX, ": more than one core but not several saturated");
        cat(o->recommendation, TEXT_MAX,
            "split the stage with markers to find its busy part, then apply that part's verdict");
    } else {
        cat(o->evidence, TEXT_MAX, ": no core saturated, no I/O or memory stall: the stage "
            "partly waits on something not measured");
        cat(o->recommendation, TEXT_MAX,
            "look for sleeps, network or remote storage, locks, or another process; mark the "
            "waits as stages to see which");
    }
}

/* The verdict of one stage: the first rule that matches, in the order of docs/analysis.md. */
static void classify(const struct analysis_context *ctx, const struct stage_resources *s,
                     const struct figures *f, struct outcome *o)
{
    memset(o, 0, sizeof *o);
    bool anything = known(f->cpu) || known(f->util) || known(f->io) || known(f->io_own) ||
                    known(f->swap_bps) || known(s->psi_mem_some);
    bool one_thread = known(f->cpu) && f->cpu >= CPU_CORE_BUSY && f->cpu <= CPU_SINGLE_MAX;
    bool small_batch = ctx->batch_size <= LAUNCH_BATCH_MAX; /* unknown (<= 0) counts as small */
    bool io_bound = io_stall(f) >= IO_STALL_MIN && known(f->cpu) &&
                    f->cpu < fmax(CPU_CORE_BUSY, IO_CPU_SHARE_MAX * f->ncpu);
    /* its own tasks blocked on I/O more than its threads waited for a CPU: the disk, not the
     * others' CPU use, is what it waits for most (uncached reads beside busy loops) */
    bool io_first = io_bound && known(f->io_own) &&
                    f->io_own > (known(f->wait_threads) ? f->wait_threads : 0);

    if (s->samples == 0 || !anything)
        verdict_unmeasured(ctx, s, f, o);
    else if (known(f->util) && f->util >= GPU_BOUND_UTIL && known(f->sm_active) &&
             f->sm_active < SM_ACTIVE_LOW)
        verdict_under_occupied(s, f, o);
    else if (known(f->util) && f->util >= GPU_BOUND_UTIL)
        verdict_gpu_bound(s, f, o);
    else if (f->mem_pressure)
        verdict_memory(s, f, o);
    else if (f->gpu_active && f->util < GPU_LOW_UTIL && one_thread && small_batch)
        verdict_launch(ctx, f, o);
    else if (f->gpu_active && f->util < GPU_LOW_UTIL && known(f->cpu) && f->cpu >= CPU_CORE_BUSY)
        verdict_starved(ctx, f, o);
    /* Threads kept from running say nothing about what the stage needs: before the CPU rules,
     * idle and mixed, each of which would read the lost time as the stage's own; not before
     * io-bound where the stage waited for its disk more than for a CPU. */
    else if (cpu_starved(f) && !io_first)
        verdict_cpu_starved(ctx, f, o);
    /* A process driving a GPU spins a core while it waits for the device: its CPU time says
     * little, so the CPU rules are for stages in which the GPU does not work. */
    else if (!f->gpu_active && f->ncpu == 1 && known(f->cpu) && f->cpu >= CPU_CORE_BUSY)
        verdict_one_cpu(f, o);
    else if (!f->gpu_active && f->ncpu != 1 && one_thread)
        verdict_single(ctx, s, f, o);
    else if (io_bound)
        verdict_io(s, f, o);
    else if (!f->gpu_active && known(f->cpu) && f->cpu > CPU_SINGLE_MAX &&
             (f->cpu >= CPU_PARALLEL_MIN || (f->ncpu && f->cpu >= CPU_SATURATED * f->ncpu)))
        verdict_parallel(ctx, s, f, o);
    else if (!f->gpu_active && known(f->cpu) && f->cpu < CPU_IDLE_MAX)
        verdict_idle(f, o);
    else if (!known(f->cpu))
        verdict_unmeasured(ctx, s, f, o); /* too little was measured to classify it */
    else
        verdict_mixed(f, o);

    /* MPI and NCCL wait by polling: in a collective of a multi-rank job, busy cores are the
     * library waiting or copying, not work to make cheaper (no finding); the rank rules
     * (straggler, communication-bound) say what to do. */
    if (ctx->n_rank_stages > 0 && !strncmp(o->rule, "cpu-bound", 9) &&
        rule_figures_communicates(s->name)) {
        o->finding = false;
        cat(o->evidence, TEXT_MAX, " (a collective: the library polls while it waits)");
    }
    if (s->samples > 0 && s->samples < FEW_SAMPLES && strcmp(o->rule, "unmeasured") != 0)
        cat(o->evidence, TEXT_MAX, " (only %zu samples: rough)", s->samples);
    /* A stage run beside others (a loader thread's work beside training) shares the process's
     * figures with them, and shortening it shortens the run only where it is alone. */
    if (s->overlap >= OVERLAP_SHARED && strcmp(o->rule, "unmeasured") != 0) {
        cat(o->evidence, TEXT_MAX, "; ran beside other stages %.0f %% of its time, which share "
            "these figures", pct(s->overlap));
        o->saving_ns *= 1 - s->overlap;
    }
    if (!known(o->saving_ns) || o->saving_ns < 0)
        o->saving_ns = 0;
}

/* The checks beside the verdicts, in the order their findings are found (which decides among
 * findings of equal saving and share: findings.h): a stage's after its verdict's, the run's
 * after its stage's, the job's last. */
static const struct finding_check *const finding_checks[] = {
    &stage_findings_check,
    &run_findings_check,
    &rank_findings_check,
};
#define N_FINDING_CHECKS (sizeof finding_checks / sizeof finding_checks[0])

void analyze(const struct analysis_context *ctx, const struct stage_resources *stages, size_t n,
             const struct stage_resources *total, struct analysis *out)
{
    memset(out, 0, sizeof *out);
    struct findings_builder b = {out, 0, NULL, NULL, total};
    out->verdicts = xcalloc(n + 1, sizeof *out->verdicts);

    /* Total repeats its stages' findings unless they leave most of the run out. */
    double covered = 0;
    for (size_t i = 0; i < n; i++)
        if (stages[i].depth == 0 && known(stages[i].share))
            covered += stages[i].share;
    bool total_findings = n == 0 || covered < TOTAL_COVERED;

    for (size_t i = 0; i <= n; i++) {
        const struct stage_resources *s = i < n ? &stages[i] : total;
        if (!s)
            break;
        struct figures f;
        struct outcome o;
        resolve(ctx, s, &f);
        classify(ctx, s, &f, &o);
        out->verdicts[out->n_verdicts++] = (struct verdict){
            .stage = xstrdup(stage_name(s)), .rule = xstrdup(o.rule),
            .evidence = xstrdup(o.evidence)};
        if ((i < n || total_findings) && o.finding)
            findings_add(&b, o.rule, s, o.evidence, o.recommendation, o.saving_ns);
        struct finding_input in = {ctx, s, &f, o.rule, stages, n, total};
        bool run = total ? s == total : s->depth == 0;
        for (size_t k = 0; k < N_FINDING_CHECKS; k++)
            if ((finding_checks[k]->scope == FINDING_STAGE && (i < n || total_findings)) ||
                (finding_checks[k]->scope == FINDING_RUN && run))
                finding_checks[k]->add(&in, &b);
    }
    struct finding_input job = {ctx, NULL, NULL, NULL, stages, n, total};
    for (size_t k = 0; k < N_FINDING_CHECKS; k++)
        if (finding_checks[k]->scope == FINDING_JOB)
            finding_checks[k]->add(&job, &b);
    findings_sort(&b);

    const struct stage_resources *top = NULL;
    for (size_t i = 0; i < n; i++)
        if (stages[i].depth == 0 && known(stages[i].share) &&
            (!top || stages[i].share > top->share))
            top = &stages[i];
    out->bottleneck = top ? xstrdup(stage_name(top)) : NULL;
}
