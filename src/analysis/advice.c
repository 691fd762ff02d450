/* advice: framework-aware knobs for the recommendations (see advice.h). Each function appends
 * one clause to a recommendation; the wording is documented in docs/analysis.md. */
#include "analysis/advice.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "util/strbuf.h"

/* Appends to the evidence and advice texts, fixed buffers (util/strbuf.h). */
#define add(...) strbuf_catf(__VA_ARGS__)

#define WORKERS_MAX 8 /* DataLoader workers suggested at most */

static bool is_torch(const struct analysis_context *ctx)
{
    return ctx->framework && !strcasecmp(ctx->framework, "torch");
}

static bool mentions(const char *name, const char *const *words)
{
    for (; *words; words++)
        if (strcasestr(name, *words))
            return true;
    return false;
}

bool advice_is_loader_stage(const struct analysis_context *ctx, const char *name)
{
    static const char *const named[] = {"loader", "data_wait", "dataload", NULL};
    static const char *const data_steps[] = {"load", "data", "fetch", "batch", "decode",
                                             "augment", "preprocess", "transform", NULL};
    if (!name)
        return false;
    return mentions(name, named) || (ctx->loader_workers >= 0 && mentions(name, data_steps));
}

/* Workers to suggest for a DataLoader on free_cores: 2 .. WORKERS_MAX. */
static long loader_target(double free_cores)
{
    return (long)fmax(2, fmin(WORKERS_MAX, round(free_cores)));
}

bool advice_parallelise(const struct analysis_context *ctx, const char *stage, int workers,
                        char *buf, size_t len)
{
    long w = ctx->loader_workers;
    /* A DataLoader that loads in the main process (issue 35: an input-bound loop with
     * num_workers=0 was never told to raise it) */
    if (!advice_is_loader_stage(ctx, stage) && w == 0)
        add(buf, len, "the DataLoader loads in this process (num_workers=0): if loading is part "
            "of this stage, num_workers=%d moves it to worker processes on the free cores; "
            "else ", workers);
    if (advice_is_loader_stage(ctx, stage) && w >= 0) {
        if (w < workers) {
            add(buf, len, "raise DataLoader num_workers from %ld to %d", w, workers);
            return true;
        }
        add(buf, len, "DataLoader num_workers=%ld already uses the free cores: make the "
            "per-item work cheaper (decode or augment once ahead of time, vectorised "
            "transforms)", w);
        return false;
    }
    if (advice_is_loader_stage(ctx, stage)) {
        add(buf, len, "load in parallel over about %d workers (%s)", workers,
            is_torch(ctx) ? "a DataLoader with num_workers; pass it to "
                            "mlbench_marker.dataloader() so that mlbench sees its settings"
                          : "DataLoader num_workers in PyTorch, a process pool otherwise");
        return true;
    }
    if (is_torch(ctx) && ctx->threads >= 2) {
        add(buf, len, "torch already runs %ld threads (torch.set_num_threads) yet the stage "
            "keeps one core busy, so its work is outside torch's thread pool (Python code, "
            "decompression, parsing, a single-threaded library): make that part cheaper "
            "(decompress or parse once ahead of time, a faster library) or split it over "
            "processes", ctx->threads);
        return false;
    }
    if (is_torch(ctx) && ctx->threads == 1) {
        add(buf, len, "torch runs 1 thread: for tensor work raise torch.set_num_threads to %d; "
            "for other work split it over about %d processes", workers, workers);
        return true;
    }
    add(buf, len, "parallelise it over about %d workers (a process pool, or threads in native "
        "code), or make it cheaper: a single-threaded step such as decompression or parsing is "
        "best done once ahead of time or with a faster library", workers);
    return true;
}

bool advice_more_threads(const struct analysis_context *ctx, const char *stage, double target,
                         char *buf, size_t len)
{
    long t = (long)ceil(target), w = ctx->loader_workers;
    if (advice_is_loader_stage(ctx, stage) && w >= 0) {
        if (w < t) {
            add(buf, len, "if the work splits further, raise DataLoader num_workers from %ld to "
                "%ld", w, t);
            return true;
        }
        add(buf, len, "DataLoader num_workers=%ld already reaches that: look for a serial part "
            "(split the stage with markers)", w);
        return false;
    }
    if (is_torch(ctx) && ctx->threads > 0) {
        if (ctx->threads < t) {
            add(buf, len, "if the work splits further, raise torch.set_num_threads from %ld to "
                "%ld", ctx->threads, t);
            return true;
        }
        add(buf, len, "torch.set_num_threads is already %ld: the idle cores are not for lack "
            "of threads; look for a serial part (split the stage with markers)", ctx->threads);
        return false;
    }
    if (is_torch(ctx)) {
        add(buf, len, "if the work splits further, raise torch.set_num_threads (or "
            "OMP_NUM_THREADS) towards %ld", t);
        return true;
    }
    add(buf, len, "if the work splits further, raise the threads or workers towards %ld "
        "(OMP_NUM_THREADS, the library's thread-pool size, or more worker processes)", t);
    return true;
}

void advice_fewer_threads(const struct analysis_context *ctx, int cores, char *buf, size_t len)
{
    if (cores < 1)
        cores = 1;
    if (!is_torch(ctx)) {
        add(buf, len, "keep the busy threads across processes at or below the %d cores: "
            "OMP_NUM_THREADS (or the library's thread-pool size) in each process, fewer worker "
            "processes", cores);
        return;
    }
    long w = ctx->loader_workers > 0 ? ctx->loader_workers : 0;
    long main_threads = cores - w >= 1 ? cores - w : 1;
    add(buf, len, "keep the busy threads across processes at or below the %d cores: "
        "torch.set_num_threads(%ld) in the main process", cores, main_threads);
    if (ctx->threads > 0)
        add(buf, len, " (now %ld)", ctx->threads);
    if (w)
        add(buf, len, " and torch.set_num_threads(1) in each of the %ld DataLoader workers "
            "(worker_init_fn)", w);
    add(buf, len, "; OMP_NUM_THREADS for pools torch does not own");
}

void advice_cpu_starved(const struct analysis_context *ctx, bool others, int ncpu,
                        long threads_peak, char *buf, size_t len)
{
    if (others) {
        add(buf, len, "other processes took the CPUs this stage waited for, so its timings are "
            "not its own: benchmark on a quieter machine (or stop them), or give the workload "
            "cores of its own (taskset, cpusets) and fewer threads than those cores");
    } else if (ncpu > 0 && threads_peak > ncpu) {
        add(buf, len, "the workload's own threads outnumber the cores: ");
        advice_fewer_threads(ctx, ncpu, buf, len);
    } else {
        add(buf, len, "the workload gets fewer CPUs than it is ready to use: check its CPU "
            "affinity (taskset -p)");
        if (ctx->cpu_quota > 0)
            add(buf, len, " and its quota: the cgroup allows %.1f cores (cpu.max)",
                ctx->cpu_quota);
        else if (!(ctx->cpu_quota == 0))
            add(buf, len, " and quota (cgroup cpu.max)");
        add(buf, len, ", and keep its busy threads at or below the cores it may use");
    }
}

void advice_feed_gpu(const struct analysis_context *ctx, bool single, double free_cores,
                     char *buf, size_t len)
{
    long w = ctx->loader_workers, target = loader_target(free_cores);
    if (w == 0 || (w < 0 && single))
        add(buf, len, "use DataLoader workers (num_workers=%ld), prefetching", target);
    else if (w > 0 && w < target)
        add(buf, len, "raise DataLoader num_workers from %ld to %ld, a larger prefetch_factor",
            w, target);
    else if (w > 0)
        add(buf, len, "DataLoader num_workers=%ld already uses the free cores, so more cannot "
            "help: a larger prefetch_factor", w);
    else
        add(buf, len, "more DataLoader workers, a larger prefetch_factor");
    if (ctx->pin_memory == 1)
        add(buf, len, ", copies with non_blocking=True (pin_memory is on already)");
    else
        add(buf, len, ", pin_memory=True with non_blocking copies");
    add(buf, len, ", or GPU preprocessing (NVIDIA DALI)");
}

void advice_cpu_bf16(const struct analysis_context *ctx, char *buf, size_t len)
{
    if (is_torch(ctx))
        add(buf, len, "torch.autocast(\"cpu\", dtype=torch.bfloat16) around the forward pass "
            "and loss, the model and input in channels-last");
    else
        add(buf, len, "in PyTorch torch.autocast(\"cpu\", dtype=torch.bfloat16) with "
            "channels-last; mlbench-workload imgclf --precision bf16");
}
