/* advice: the knobs the recommendations name, chosen from what the workload says about itself
 * (framework.* metadata, docs/markers.md): never a setting it already has, the framework's own
 * knob when the framework is known, generic words when it is not. Used by the rule files
 * (analyze.c, finding_checks.h); the rules are documented in docs/analysis.md
 * ("Framework-aware advice"). Pure functions. */
#ifndef MLBENCH_ADVICE_H
#define MLBENCH_ADVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/rule_input.h"

/* Whether stage `name` is (part of) the input pipeline of a DataLoader: its name says so
 * ("loader", "data_wait"), or a DataLoader is known to have run and the name is a data step
 * (load, data, fetch, batch, decode, augment, preprocess, transform). A plain "load" of a
 * script without a DataLoader is not one. */
bool advice_is_loader_stage(const struct analysis_context *ctx, const char *name);

/* Appends to buf (len bytes) how to spread a single-threaded stage over `workers` workers
 * (free cores, already capped), or why the obvious knob is already used. Returns true when the
 * advice is to parallelise (the caller may count a saving), false when the knob is at its limit
 * or the stage's work is not what the framework's threads run. */
bool advice_parallelise(const struct analysis_context *ctx, const char *stage, int workers,
                        char *buf, size_t len);

/* Appends how to raise a parallel stage's threads towards `target`, or that the framework's
 * thread count already reaches it (then returns false). */
bool advice_more_threads(const struct analysis_context *ctx, const char *stage, double target,
                         char *buf, size_t len);

/* Appends how to keep busy threads across processes at or below `cores` (oversubscription):
 * torch.set_num_threads in the main process and in DataLoader workers, OMP_NUM_THREADS. */
void advice_fewer_threads(const struct analysis_context *ctx, int cores, char *buf, size_t len);

/* Appends the cure of a stage starved of CPUs: a quieter machine when other processes took
 * them (others), fewer busy threads than the ncpu cores (advice_fewer_threads) when the
 * workload's threads_peak outnumber them, else its affinity or CPU quota. */
void advice_cpu_starved(const struct analysis_context *ctx, bool others, int ncpu,
                        long threads_peak, char *buf, size_t len);

/* Appends the input-pipeline knobs for a GPU waiting on the host, one thread (single) or
 * several preparing the input: num_workers (raised from its value, or said to be at the limit
 * of `free_cores`), prefetch, pin_memory unless already set. */
void advice_feed_gpu(const struct analysis_context *ctx, bool single, double free_cores,
                     char *buf, size_t len);

/* Appends the knob for bf16 mixed precision on the CPU: torch.autocast("cpu", ...) with
 * channels-last when PyTorch is known to run, else that and mlbench-workload's --precision. */
void advice_cpu_bf16(const struct analysis_context *ctx, char *buf, size_t len);

#endif
