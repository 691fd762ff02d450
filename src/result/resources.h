/* resources: from attributed samples to conclusions. Builds the per-stage resource figures the
 * analysis rules read (choosing the GPUs the workload used), runs the analysis, and adds the
 * measurement-quality warnings that need resource data: CPU frequency governor, other load on
 * the machine, swapping, GPU clock throttling, and a run meant for a GPU that used none. */
#ifndef MLBENCH_RESOURCES_H
#define MLBENCH_RESOURCES_H

#include <stdbool.h>
#include <stddef.h>

#include "result/result.h"

/* After summary_compute and result_capture_environment (the GPU name and compute capability
 * the rules use come from r->environment): fills r->analysis (r->analyzed) and adds warnings
 * to r->summary. */
void resources_analyze(struct bench_result *r);

/* Whether GPU device index (label gpu="index") counts in the figures: used by the workload, or
 * every GPU with --all-gpus. Valid after resources_analyze. */
bool resources_gpu_shown(const struct bench_result *r, int index);

#endif
