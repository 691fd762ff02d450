/* stages: turns one repetition's marker events into stage spans and per-stage totals,
 * counters, metadata and instants. Pure (no I/O), thread-safe on distinct data.
 *
 * Stages nest per thread (pid, tid). The same stage name from several threads or processes is
 * combined three ways (docs/markers.md): busy = sum of span durations, active = length of the
 * union of the spans (wall time during which at least one was open; the figure the summary
 * table shows), span = first begin to last end. */
#ifndef MLBENCH_STAGES_H
#define MLBENCH_STAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "measure/event_log.h"

/* Distinct names one repetition aggregates, of stages, of counters and of metadata keys each
 * (the bounds of live monitoring too): events of further names are counted in names_dropped and
 * name_events_dropped, not aggregated. A workload that makes names per iteration ("step_17")
 * would otherwise make the aggregation and the result file grow without bound. */
#define STAGES_MAX_NAMES 1000

/* A span or stage without a parent stage, a counter sampled with no stage open (name ids). */
#define STAGES_NO_NAME UINT32_MAX

/* Ranks of a multi-rank job (MPI, torchrun): a process announces its rank once with the
 * metadata event "mlbench.rank RANK [WORLD_SIZE]" (docs/markers.md, "Ranks"). At most
 * STAGES_MAX_RANKS distinct ranks are kept per repetition; the processes of further ranks count
 * as ranks_dropped and their stages as no rank's. */
#define STAGES_NO_RANK (-1)
#define STAGES_MAX_RANKS 4096

/* Times are nanoseconds relative to the start of the repetition. Names are event_log ids. */
struct span {
    uint32_t name;
    int32_t pid, tid;
    int32_t rank;   /* the rank its process announced (mlbench.rank), or STAGES_NO_RANK */
    int64_t start_ns, end_ns;
    int32_t depth;  /* 0 = outermost on its thread */
    uint32_t parent; /* name of the stage open on its thread when it began (for a process
                      * adopted by a launcher: on the adopting thread), or STAGES_NO_NAME */
    bool closed;    /* false: still open when the run ended; end_ns is the run's end */
};

struct stage_total {
    uint32_t name;
    int32_t depth;         /* smallest nesting depth seen */
    uint32_t parent;       /* the parent of its first span at that depth, or STAGES_NO_NAME */
    uint64_t count;        /* spans */
    uint64_t unclosed;     /* spans still open at the end of the run */
    int64_t busy_ns, active_ns, first_ns, last_ns;
    int64_t overlap_ns;    /* top-level stages: time it was open while another top-level stage
                            * was open too (on another thread: a loader beside training) */
};

/* Samples of a counter over time that one repetition keeps (for the training curves): at most
 * this many; beyond, every other one kept is dropped and the stride doubles, so the points kept
 * stay evenly spread over the samples sent. */
#define STAGES_MAX_COUNTER_POINTS 1000

struct counter_point {
    int64_t t_ns;      /* from the start of the repetition */
    double value;      /* the sample as sent */
    double sum;        /* the sum of the samples up to and including this one */
};

struct counter_total {
    uint32_t name;
    uint64_t n;
    double sum, min, max, last;
    int64_t last_ns;
    bool count;        /* every sample a whole number >= 0 (images, tokens): sums are meaningful */
    uint32_t stage;    /* the innermost stage open on the sending thread at every sample, or
                        * STAGES_NO_NAME (none open, or several: see stage_mixed) */
    bool stage_mixed;  /* samples were sent in different stages (or some outside any stage) */
    struct counter_point *points; /* every stride-th sample, at most STAGES_MAX_COUNTER_POINTS */
    size_t n_points;
    uint64_t stride;   /* 1: every sample is a point */
};

struct meta_item {
    uint32_t key, value; /* the last value sent for key */
};

/* One stage of one rank in one repetition: the spans of the rank's processes (its workers
 * included) combined as stage_total combines all of them. */
struct rank_stage {
    int32_t rank;
    uint32_t name;         /* index + 1 of the stage in stage_data.stages: position in tree order */
    uint64_t count;        /* spans */
    int64_t active_ns, busy_ns;
};

/* How a rank's process ended, as its `mlbench rank-exec` reported ("mlbench.rank_exit"). */
struct rank_exit {
    int32_t rank, pid;   /* pid: the rank-exec's */
    int code;            /* exit status, or -1 when killed */
    int signal;          /* the signal that killed it, or 0 */
};

struct instant {
    uint32_t name;
    int32_t pid, tid;
    int64_t t_ns;
};

struct stage_data {
    struct span *spans;
    size_t n_spans;
    struct stage_total *stages; /* in tree order (stages_tree_order): each stage under its
                                 * parent, siblings and roots by first begin */
    size_t n_stages;
    struct counter_total *counters; /* ordered by first sample */
    size_t n_counters;
    struct meta_item *meta;     /* ordered by first appearance */
    size_t n_meta;
    struct instant *instants;
    size_t n_instants;
    uint64_t events;          /* well-formed events */
    uint64_t unbalanced;      /* E without a matching open B on its thread (or stamped before
                               * it: never a negative duration), or B closed by an E of an
                               * outer stage */
    uint64_t unclosed;        /* B still open at the end of the run */
    uint64_t names_dropped;   /* distinct stage, counter and metadata names beyond
                               * STAGES_MAX_NAMES of their kind */
    uint64_t name_events_dropped; /* their events */
    int64_t outside_ns;       /* wall time during which no stage was open (-1 without markers) */
    /* Ranks (empty unless some process announced one). */
    int32_t *ranks;           /* distinct ranks announced, ascending */
    size_t n_ranks;
    int32_t world_size;       /* the largest WORLD_SIZE announced, 0 when none was */
    uint64_t ranks_dropped;   /* processes whose rank was beyond STAGES_MAX_RANKS distinct ones */
    struct rank_stage *rank_stages; /* by rank, then by stage in tree order */
    size_t n_rank_stages;
    struct rank_exit *rank_exits;   /* in arrival order, at most one per process */
    size_t n_rank_exits;
    uint32_t *rank_hosts;     /* parallel to ranks: the host the rank's first process named
                               * ("mlbench.host", from rank-exec) as a string id of the log, 0
                               * when none did; NULL without ranks */
};

/* Aggregates the events of log, which happened in the run started at t0_ns (CLOCK_MONOTONIC)
 * and lasting wall_ns. *out is overwritten; free it with stages_free. */
void stages_aggregate(const struct event_log *log, int64_t t0_ns, int64_t wall_ns,
                      struct stage_data *out);
void stages_free(struct stage_data *d);

/* Internal to stages_aggregate (stage_ranks.c): the rank each process announced in log, as a
 * table sorted by pid, and the per-rank totals of d's spans once d's stages are in tree order. */
struct rank_table {
    struct rank_pid { int32_t pid, rank; } *of;
    size_t n;
};
void stages_read_ranks(const struct event_log *log, struct stage_data *d, struct rank_table *t);
int32_t stages_rank_of(const struct rank_table *t, int32_t pid);
void stages_read_rank_exits(const struct event_log *log, struct stage_data *d,
                            const struct rank_table *t);
void stages_read_rank_hosts(const struct event_log *log, struct stage_data *d,
                            const struct rank_table *t);
void stages_rank_totals(struct stage_data *d);

/* The stage tree in reading order: n items, already sorted by first begin, parent[i] the index
 * of item i's parent or SIZE_MAX for a root. Writes to order[0..n-1] the items depth first,
 * each parent before its children, roots and siblings in their given order, so that another
 * thread's or process's stages never come between a stage and its children. Items on a cycle
 * of parents (none from stages_aggregate) come last, in their given order. Pure. */
void stages_tree_order(size_t n, const size_t *parent, size_t *order);

#endif
