/* lralloc: the allocation policy of the logreg workload. Its large buffers (the data, the
 * per-block partial sums) are sized by the options, so failure is reported to the user with the
 * sizes (the caller's message) and the workload exits 1; nothing aborts. */
#ifndef MLBENCH_WL_LRALLOC_H
#define MLBENCH_WL_LRALLOC_H

#include <stdint.h>
#include <stdlib.h>

/* calloc-like: count x size zeroed bytes, or NULL when that overflows or memory is short.
 * Free with free(). Thread-safe. */
static inline void *lr_alloc_array(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        return NULL;
    return calloc(count ? count : 1, size ? size : 1);
}

#endif
