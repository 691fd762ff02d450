/* gpu_sync: catches stages timed without synchronising the GPU. CUDA launches are
 * asynchronous: a stage that ends without torch.cuda.synchronize() (or an event's
 * synchronize) ends while its kernels are still queued, and the next stage, whose first
 * blocking call waits for them, is charged their time. From outside the process this shows as
 * the GPU staying busy past the stage's end, into the next stage, then falling idle there while
 * the host waits. The rule and its limits are in docs/analysis.md ("Unsynchronised timing").
 * Pure functions over one run's spans and GPU windows, and the check over a result. */
#ifndef MLBENCH_GPU_SYNC_H
#define MLBENCH_GPU_SYNC_H

#include <stddef.h>
#include <stdint.h>

#include "measure/stages.h"

struct result;

/* The GPU's activity over a window of the run (ns from the run's start). GPM's SM active
 * covers exactly the time since the previous sample; NVML's utilisation an unknown period of
 * up to a second before its sample (GPU_SYNC_UTIL_WINDOW_NS), which is taken whole. */
struct gpu_window {
    int64_t start_ns, end_ns;
    double active;      /* 0..1: the busiest GPU the workload used; NAN: not measured */
    double cpu_cores;   /* the workload's cores busy over about the same time; NAN: unknown */
};

#define GPU_SYNC_UTIL_WINDOW_NS 1000000000LL /* NVML: "between 1 second and 1/6 second" */

/* One boundary where the GPU stayed busy after a stage had ended. */
struct gpu_tail {
    size_t stage, next;  /* indices into the spans given: the stage that ended, the next one */
    int64_t tail_ns;     /* from the stage's end to the end of the last busy window */
    double active;       /* mean activity over the busy windows after the end */
    double cpu_cores;    /* the host's mean cores busy over them (NAN: unknown) */
};

/* The tails of one run. spans[0..n_spans) are the run's spans (any order; only closed
 * top-level ones are read); windows[0..n_windows) sorted by end. A top-level stage A and the
 * next top-level stage B of the same process (starting within GPU_SYNC_GAP_MAX_NS of A's end,
 * with no other top-level stage open meanwhile) form a tail when: A's last window is busy; B's
 * first window after A's end is busy and starts at most one window's length after it; after the
 * busy windows the GPU is idle in every window up to B's end (at least one); and the host keeps
 * at most one core busy over the busy windows (it waits, spinning or blocked). Writes at most
 * max tails to out, in the order of the stages; returns how many. Thread-safe. */
size_t gpu_sync_tails(const struct span *spans, size_t n_spans, const struct gpu_window *windows,
                      size_t n_windows, struct gpu_tail *out, size_t max);

/* The instant the Python marker client sends just before the end of a stage that leaves CUDA
 * work queued (python/mlbench_marker: torch.cuda.current_stream().query() was false). */
#define GPU_SYNC_QUEUED "mlbench.gpu_queued"

/* Checks every measured successful run of r and adds the warning "gpu_unsynchronized" to
 * r->summary: for each stage the marker client saw end with work queued (GPU_SYNC_QUEUED, in
 * any run: it is certain), and, where a GPU was measured (r->gpus_shown), for each other pair
 * of stages that has a tail in at least half of the runs in which both appear. Call after the
 * GPUs are chosen. */
void gpu_sync_check(struct result *r);

#endif
