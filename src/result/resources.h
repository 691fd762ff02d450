/* resources: from attributed samples to conclusions. Builds the per-stage resource figures the
 * analysis rules read (choosing the GPUs the workload used), runs the analysis, and adds the
 * measurement-quality warnings that need resource data: CPU frequency governor, other load on
 * the machine, swapping, stages timed without synchronising the GPU (gpu_sync.h), and a run
 * meant for a GPU that used none (GPU clock throttling is the summary's: gpu_clock.h). */
#ifndef MLBENCH_RESOURCES_H
#define MLBENCH_RESOURCES_H

#include <stddef.h>

#include "result/result.h"

/* After summary_compute: fills r->analysis (r->analyzed) and adds warnings to r->summary.
 * facts: the machine the runs ran on (result_capture_environment's answer; NULL: none known),
 * whose GPU name and compute capability and CPU extensions the rules use. */
void resources_analyze(struct result *r, const struct machine_facts *facts);

#endif
