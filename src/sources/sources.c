/* sources: the one table of metric sources (see sources.h). Order matters: proc fills the
 * workload's process list that nvml uses to find the workload's GPU memory. */
#include "sources/sources.h"

const struct metric_source *const metric_sources[] = {
    &proc_source,
    &system_source,
    &nvml_source,
    NULL,
};
