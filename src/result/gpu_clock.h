/* gpu_clock: whether the GPU kept its clocks during each run. A run during which a GPU the
 * workload used ran its SM clock below a threshold of its maximum, or reported power or thermal
 * slowdown, while busy, is marked throttled; over the runs this gives "clock scaling" (the SM
 * clock as a share of its maximum) and, with --discard-throttled, the runs the statistics leave
 * out (nvbench discards samples below 75 % of the default SM clock). docs/statistics.md#gpu-clock.
 * The per-run rule (gpu_clock_run_compute) is pure; the rest reads and writes a session_result. */
#ifndef MLBENCH_GPU_CLOCK_H
#define MLBENCH_GPU_CLOCK_H

#include <stdbool.h>
#include <stddef.h>

#include "sources/source.h"

struct result;
struct machine_facts;
struct repetition;
struct run_config;
struct summary;

/* A busy sample whose SM clock is below this share of the GPU's maximum SM clock is throttled
 * (nvbench's 75 % of the default clock); --throttle-threshold PCT changes it. */
#define GPU_CLOCK_THRESHOLD 0.75
/* A sample counts (is "busy") from this GPU utilisation on: an idle or nearly idle GPU lowers
 * its clocks by design, so its samples say nothing about throttling. */
#define GPU_CLOCK_BUSY_UTIL 0.5
/* A run is throttled when at least this share of its busy samples is, and at least one: one
 * sample at a clock ramp (the first kernel after a pause) must not mark a long run, while a
 * slowdown over a tenth of the run changes its time by more than the noise we warn about. */
#define GPU_CLOCK_RUN_PERCENT 10 /* whole percent: the comparison is exact in integers */
/* NVML clock event reasons (gpu_throttle_reasons) that mean the GPU slowed itself down, not
 * idleness or application clocks: power (SW power cap 0x4, HW slowdown 0x8, HW power brake
 * 0x80) and thermal (SW thermal 0x20, HW thermal 0x40). HW slowdown (0x8) is set for power
 * brake and for overheating alike; it is counted as power, as NVML groups it. */
#define GPU_CLOCK_POWER_BITS 0x8cull
#define GPU_CLOCK_THERMAL_BITS 0x60ull
#define GPU_CLOCK_REASON_BITS (GPU_CLOCK_POWER_BITS | GPU_CLOCK_THERMAL_BITS) /* 0xec */
#define GPU_CLOCK_MAX_GPUS 64     /* GPU indices (label gpu="i") looked at: 0..63 */

/* Reasons seen, as bits of gpu_clock_run.reasons. */
#define GPU_CLOCK_POWER (1u << 0)
#define GPU_CLOCK_THERMAL (1u << 1)

/* One run's GPU clock. Samples are (GPU, tick) pairs over the GPUs considered. */
struct gpu_clock_run {
    bool measured;             /* at least one busy sample: the fields below mean something */
    size_t busy_samples;       /* samples with utilisation >= GPU_CLOCK_BUSY_UTIL */
    size_t throttled_samples;  /* of them, below the threshold or with a reason bit set */
    size_t slow_samples;       /* of them, with an SM clock below the threshold (max known) */
    unsigned reasons;          /* GPU_CLOCK_POWER, GPU_CLOCK_THERMAL: seen in busy samples */
    double scaling;            /* mean SM clock / maximum over the busy samples where both
                                * are known; NAN when none is (no maximum clock known) */
    bool throttled;            /* throttled_samples >= max(1, GPU_CLOCK_RUN_PERCENT % of busy) */
};

/* The GPU clock over the runs of a result (summary.gpu_clock). */
struct gpu_clock_summary {
    double threshold;          /* the share of the maximum SM clock used */
    size_t runs;               /* measured (not warm-up) runs whose GPU clock was measured */
    size_t throttled_runs;     /* of them, throttled */
    size_t discarded_runs;     /* throttled ok runs left out of the statistics
                                * (--discard-throttled) */
    bool discard;              /* --discard-throttled was given */
    bool kept_all;             /* --discard-throttled, but every ok run was throttled: none
                                * was left out */
    unsigned reasons;          /* reasons seen in the throttled runs */
    double scaling_median;     /* over the used runs whose scaling is known; NAN */
    double scaling_min;
    double scaling_throttled;  /* median over the throttled measured runs; NAN */
};

/* Marks one run from its samples: the series gpu_utilization_ratio, gpu_sm_clock_hertz,
 * gpu_throttle_reasons and gpu_process_memory_bytes labelled gpu="i". GPUs considered: with
 * all_gpus every GPU; otherwise those where the workload held memory at some sample, plus
 * those whose process memory could not be read at any sample and that were busy (utilisation
 * > 0) at some sample (as the analysis chooses GPUs: resources.c). max_hz[i] is GPU i's maximum
 * SM clock (GPU_CLOCK_MAX_GPUS entries; NAN or <= 0 where unknown: then only reasons count);
 * threshold is a share of it (GPU_CLOCK_THRESHOLD). Pure. */
void gpu_clock_run_compute(const struct sample_table *t, const double *max_hz, bool all_gpus,
                           double threshold, struct gpu_clock_run *out);

/* The maximum SM clock of each GPU of the machine's facts (gpu_facts.index and
 * sm_clock_max_hertz) into max_hz[GPU_CLOCK_MAX_GPUS]; NAN where not known (facts NULL, an
 * older fake or driver). */
void gpu_clock_max_hertz(const struct machine_facts *facts, double *max_hz);

/* The threshold cfg asks for (--throttle-threshold), as a share: GPU_CLOCK_THRESHOLD unless
 * given. */
double gpu_clock_threshold(const struct run_config *cfg);

/* For summary_compute: marks every repetition of r (rep->gpu_clock, from the maximum clocks of
 * the GPUs of facts; NULL: none known), counts the measured and throttled runs into
 * r->summary.gpu_clock, and with --discard-throttled removes the throttled runs from
 * used[0..n) (the ok runs; order kept), unless every one of them is throttled. Returns the
 * number of runs left in used. */
size_t gpu_clock_mark(struct result *r, const struct machine_facts *facts,
                      const struct repetition **used, size_t n);

/* For summary_compute, once the used runs are final: the scaling over them into s->gpu_clock
 * and the warnings gpu_throttling, throttled_discarded and throttled_kept. */
void gpu_clock_summarize(struct summary *s, const struct repetition *const *used, size_t n);

#endif
