/* rule_input: what the bottleneck rules are given (analyze.h): the resource figures of each
 * stage and of the whole run, a multi-rank job's stages across its ranks, and the context of the
 * machine and the workload. Plain data, no functions; analyze.h includes it, and the rule files
 * (rule_figures.h, finding_checks.h) read it without reaching back into analyze.c. */
#ifndef MLBENCH_RULE_INPUT_H
#define MLBENCH_RULE_INPUT_H

#include <stdbool.h>
#include <stddef.h>

/* Resource figures of one stage (or of the whole run), medians over the measured runs of the
 * per-run means (peaks: the largest peak). NAN when not measured (source skipped, stage
 * shorter than the sampling interval). Ratios are 0..1. */
struct stage_resources {
    const char *name;        /* stage name, "total" for the whole run */
    int depth;               /* nesting depth, 0 for top level and total */
    double time_ns;          /* median active time */
    double share;            /* of the run's median wall time, 0..1 */
    double overlap;          /* part of time_ns with another top-level stage open beside it on
                              * another thread, 0..1 (its process-wide figures are shared) */
    size_t samples;          /* samples that fell in the stage (all runs) */

    /* workload process tree */
    double cpu_cores;        /* mean CPU cores busy (1.0 = one core all the time) */
    double cpu_cores_peak;
    double cpu_wait;         /* mean threads of the tree runnable but waiting for a CPU (rate of
                              * process_cpu_wait_seconds_total: run-queue wait from schedstat) */
    double rss_peak_bytes;
    double read_bps, write_bps;   /* bytes/s read and written by the tree (storage layer) */
    double threads_peak;
    double processes_peak;   /* most processes in the workload's tree at one sample */
    double io_blocked;       /* mean tasks of the tree blocked on I/O: the rate of
                              * process_io_wait_seconds_total (the kernel's delay accounting)
                              * where the kernel had it on, else the mean of
                              * process_io_blocked_tasks (processes in state D at each sample) */
    bool io_blocked_delayacct; /* io_blocked comes from delay accounting */

    /* whole machine */
    double sys_cpu_busy;     /* mean fraction of all cores busy (steal time included) */
    double steal;            /* mean fraction of all cores' time the hypervisor ran others */
    double other_cores;      /* mean cores busy with other processes than the workload (steal
                              * time is not theirs: it is left out) */
    double iowait;           /* mean fraction of CPU time in iowait */
    double psi_cpu_some, psi_io_some, psi_io_full, psi_mem_some, psi_mem_full; /* ratios */
    double runnable;         /* mean tasks running or runnable (procs_running), sampler included */
    double disk_read_bps, disk_write_bps;
    double swap_in_bps, swap_out_bps;
    double mem_available_min_bytes;

    /* GPUs the workload used (averaged over them; peaks over them) */
    int gpus;                /* GPUs in the figures; 0 = none used or none measured */
    double gpu_util;         /* mean SM utilisation */
    double gpu_util_peak;
    double gpu_mem_util;     /* mean memory-controller utilisation */
    double gpu_mem_peak_bytes;    /* largest memory used on one GPU */
    double gpu_mem_total_bytes;   /* that GPU's memory */
    double gpu_power_watts;
    /* NVML GPM activities (Hopper and newer; NAN without GPM): the share of the SMs that had a
     * warp resident, averaged over time (DCGM's SM active), the warps resident of the most an
     * SM holds (occupancy), the share of time the tensor pipes and the DRAM interface worked */
    double gpu_sm_active;
    double gpu_sm_occupancy;
    double gpu_tensor_active;
    double gpu_dram_active;
};

/* One stage across the ranks of a multi-rank job (medians over the runs, ns; rank_summary.h). */
struct rank_stage_figures {
    const char *name;
    size_t ranks;            /* ranks that had the stage */
    double critical_ns;      /* the slowest rank's time: what the job waits for */
    double median_ns;        /* the median rank's */
    double min_ns;           /* the fastest rank's */
    int slowest_rank;
    const char *slowest_host; /* the host of the slowest rank when known (rank-exec), or NULL */
    double slowest_ns;       /* the slowest rank's median over the runs */
    int fastest_rank;        /* the rank with the least time */
};

/* Context that sharpens the advice: from the machine, the sampling and the workload's metadata
 * markers (framework.* facts: docs/markers.md). Integers below 0 mean "not given". */
struct analysis_context {
    int ncpu;                /* CPUs online; 0 or less: unknown */
    bool gpu_measured;       /* NVML worked: GPU figures are real (else GPU rules stay silent) */
    bool gpu_tensor_cores;   /* the GPU has tensor cores (compute capability >= 7.0) */
    const char *gpu_name;    /* or NULL */
    const char *cpu_bf16;    /* the CPU's bf16 matrix instructions, "amx_bf16" or "avx512_bf16"
                              * (the environment's cpu.features), or NULL: neither, or unknown */
    long batch_size;         /* metadata batch_size, -1 (any value <= 0) when not given */
    const char *precision;   /* metadata precision (fp32, tf32, fp16, bf16...), or NULL */
    const char *device;      /* metadata device (cpu, cuda...), or NULL */
    const char *cpu_skipped; /* the proc source did not start: its "source: reason" note, else
                              * NULL (CPU use unknown for that reason, not for shortness) */
    double interval_ns;      /* sampling interval (adaptive: the longest), 0 when unknown */
    bool interval_adaptive;  /* sampled every 10 ms at first, up to interval_ns */
    size_t runs;             /* measured runs the figures come from, 0 when unknown */
    /* Framework facts (framework.* metadata, or the plain keys torch_threads, num_workers) */
    const char *framework;   /* "torch" when PyTorch ran in the workload, else NULL */
    long threads;            /* intra-op threads (torch.get_num_threads, torch_threads), -1 */
    double cpu_quota;        /* the cgroup's CPU quota in cores (cpu.max); 0: none; NAN: not
                              * known (no environment captured) */
    long loader_workers;     /* DataLoader num_workers, -1 when no DataLoader is known */
    int pin_memory;          /* DataLoader pin_memory: 1, 0, or -1 unknown */
    /* A multi-rank job's stages across its ranks (straggler and communication rules), or none */
    const struct rank_stage_figures *rank_stages;
    size_t n_rank_stages;
    double wall_ns;          /* the run's median wall time, 0 when unknown */
};

#endif
