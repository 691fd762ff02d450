/* sources: the metric sources the sampler reads, in the order they run (proc first: it finds
 * the workload's processes for the others). Each is defined in src/sources/<name>.c. */
#ifndef MLBENCH_SOURCES_H
#define MLBENCH_SOURCES_H

#include <stddef.h>

#include "sources/source.h"

extern const struct metric_source proc_source;   /* src/sources/proc.c */
extern const struct metric_source system_source; /* src/sources/system.c */
extern const struct metric_source nvml_source;   /* src/sources/nvml.c */

/* The table of sources, NULL-terminated. */
extern const struct metric_source *const metric_sources[];

#endif
