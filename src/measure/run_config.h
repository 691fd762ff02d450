/* run_config: what measuring a command needs, and what its result records of how it was
 * measured: the command, its repetitions, their supervision and sampling, the label. Filled by
 * run's and sweep's options (src/cli/run_options.c), by `mlbench load` and `mlbench record`;
 * read by the repetition loop (src/session/), the result and its summary (src/result/). Where
 * the results go, --serve and the price are the session's (session/session.h); what only the
 * command line uses is cli's (cli/run_options.h). Plain data. */
#ifndef MLBENCH_RUN_CONFIG_H
#define MLBENCH_RUN_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#define RUN_AUTO_MIN_RUNS 3       /* automatic mode: at least this many runs ... */
#define RUN_AUTO_MIN_SECONDS 5.0  /* ... and this much measured time ... */
#define RUN_AUTO_MAX_RUNS 10      /* ... and at most this many */
#define RUN_AUTO_LONG_SECONDS 60.0 /* one run longer than this: stop after it */
#define RUN_DEFAULT_GRACE 2.0     /* seconds between SIGTERM and SIGKILL */
#define RUN_MAX_TIMEOUT_S (365.0 * 86400) /* --timeout: a year; longer is a typo */
#define RUN_MAX_GRACE_S 3600.0    /* --grace: an hour */

struct run_config {
    char **argv;          /* the command (points into the caller's argv) */
    int argc;
    bool shell;           /* run argv joined by spaces through /bin/sh -c */
    int runs;             /* 0 = automatic */
    int warmup;
    double timeout_s;     /* 0 = none */
    double grace_s;
    const char *prepare;  /* command run before each repetition, or NULL */
    const char *cleanup;  /* command run after each repetition, or NULL */
    const char *label;    /* NULL = none */
    bool fail_fast;
    bool show_output;
    int64_t interval_ns;  /* resource sampling interval (adaptive: the longest) */
    bool interval_adaptive; /* no --interval given: short runs are sampled more often */
    bool all_gpus;        /* report every GPU, not only those the workload used */
    bool discard_throttled; /* leave runs whose GPU slowed its clocks out of the statistics */
    double throttle_threshold_pct; /* --throttle-threshold: a busy GPU sample below this % of
                                    * its maximum SM clock is throttled; 0 = the default, 75
                                    * (result/gpu_clock.h) */
    bool nvtx;            /* load the NVTX injection library into the workload */
    bool ranks;           /* --ranks: a multi-rank job under a launcher (docs/ranks.md) */
    const char *ranks_listen; /* --ranks-listen HOST:PORT: collect ranks of other hosts, or
                               * NULL */
    bool load;            /* mlbench load: its scenario runs are the result and the one run of
                           * the generator is by design (no few_runs warning about it) */
};

#endif
