/* source: what a metric source is (struct metric_source) and what it writes into: the series
 * registry and the sample tables, column arrays of values sharing CLOCK_MONOTONIC timestamps.
 * The sources are one file each beside this one, listed in sources.c; the sampler
 * (measure/sampler.h) runs them. A value that could not be read is NAN (written as null),
 * never 0. */
#ifndef MLBENCH_SOURCE_H
#define MLBENCH_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct source_facts; /* sources/facts.h */

enum series_kind {
    SERIES_GAUGE,   /* a level: attributed as mean and peak */
    SERIES_COUNTER, /* cumulative total (name ends in _total): attributed as a rate per second */
};

/* One metric, e.g. name "gpu_utilization_ratio", labels "gpu=\"0\"" (Prometheus style). */
struct series_def {
    char *name;
    char *labels;        /* "" when none */
    enum series_kind kind;
    const char *source;  /* name of the source that fills it */
    double max_rate;     /* counters: the highest rate per second the quantity can have (CPU
                          * seconds: the CPUs online; stall seconds: 1), 0 when unbounded. A
                          * rate over a short interval can exceed it by the counter's granularity
                          * (CPU time comes in 10 ms clock ticks): attribution clamps to it */
};

/* The samples of one repetition. v[s][row] is series s at t_ns[row] (NAN: not measured). */
struct sample_table {
    const struct series_def *defs; /* owned by the sampler; valid while it is open */
    size_t n_series;
    int64_t *t_ns;
    double **v;
    size_t n, cap;
};

/* What a source may read when it samples. Filled by the sampler; the proc source runs first and
 * fills tree[] with the workload's processes at this tick, for the sources after it. */
struct sample_ctx {
    const char *proc_root;   /* "/proc", or $MLBENCH_PROC_ROOT for tests */
    pid_t leader;            /* the workload's first process; 0 when not started yet */
    pid_t *tree;             /* the leader and all its descendants now alive */
    size_t n_tree, cap_tree;
    int ncpu;                /* CPUs online */
    long ticks_per_s;        /* sysconf(_SC_CLK_TCK) */
    long page_size;
    bool all_gpus;           /* --all-gpus */
};

/* The series the sources registered, in order (index = column of the sample tables). */
struct series_registry {
    struct series_def *defs;
    size_t n, cap;
};

/* Registration, during open only: adds a series and returns its index. */
size_t series_register(struct series_registry *reg, const char *source, const char *name,
                       const char *labels, enum series_kind kind);

struct metric_source {
    const char *name;
    /* Prepares the source and registers its series. Returns 0, or -1 with a reason in err
     * ("no NVIDIA driver: libnvidia-ml.so.1 not found"): the source is then skipped. */
    int (*open)(struct series_registry *reg, const struct sample_ctx *ctx, void **state,
                char *err, size_t errlen);
    /* Reads the current values and stores them with sample_table_set(tab, series, row, value);
     * values not stored stay NAN. Counts read failures in *errors. Runs on the sampler thread. */
    void (*sample)(void *state, struct sample_ctx *ctx, struct sample_table *tab, size_t row,
                   uint64_t *errors);
    /* Called when a repetition starts (the workload is not spawned yet): reset per-run state. */
    void (*run_start)(void *state);
    /* Optional (NULL: the source has no static facts): adds what the source found when it
     * opened and that does not change while it is open (nvml: the GPUs and their driver) to
     * out (sources/facts.h), whose other facts it leaves alone. Makes no device call and reads
     * only what open wrote, so it is safe on any thread while the source is open, sampling or
     * not. Typed facts, not a document: the environment capture writes them into the
     * environment, and the summary, the analysis and the price read the same C values. */
    void (*facts)(void *state, struct source_facts *out);
    void (*close)(void *state);
};

/* Sets up an empty table with the registry's series (defs are borrowed). */
void sample_table_init(struct sample_table *tab, const struct series_registry *reg);
/* Appends a row stamped t (CLOCK_MONOTONIC ns) with every value NAN; returns its index. */
size_t sample_table_add_row(struct sample_table *tab, int64_t t);
/* Stores a value. Out-of-range indices are ignored. */
void sample_table_set(struct sample_table *tab, size_t series, size_t row, double value);
/* Frees the table's arrays (not the definitions). */
void sample_table_free(struct sample_table *tab);
/* Index of series name{labels} in the table, or -1. labels NULL matches any. */
long sample_table_find(const struct sample_table *tab, const char *name, const char *labels);

/* Frees the definitions of a registry (the sampler's, or one filled outside a sampler in tests). */
void series_registry_free(struct series_registry *reg);

#endif
