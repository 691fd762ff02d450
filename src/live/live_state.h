/* live_state: the state of struct live_metrics, what the files of the live module share:
 * live.c (markers in, control), live_samples.c (sample rows in) and live_render.c (the
 * Prometheus exposition) each include it, and it calls none of them. Not for other modules:
 * they use live.h. All of it is guarded by live_metrics.mu. */
#ifndef MLBENCH_LIVE_STATE_H
#define MLBENCH_LIVE_STATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "live/live.h"
#include "live/prometheus.h"

/* The fixed upper bounds of mlbench_stage_duration_seconds, in seconds (100 µs .. 1 h). */
#define LIVE_STAGE_BUCKETS 21
extern const double live_stage_bounds[LIVE_STAGE_BUCKETS];

#define NAME_SLOTS 2048   /* hash slots per name table: a power of two >= 2 * LIVE_MAX_NAMES */
#define THREAD_SLOTS 8192 /* hash slots of the thread table: a power of 2 >= 2 * LIVE_MAX_THREADS */
#define SPAN_CAP 4        /* open spans a thread's first array holds */
/* Such arrays are kept for reuse, as many as threads may hold (at most 256 KiB): threads that
 * come and go (a loader thread per batch) then allocate nothing in the steady state, so the
 * heap does not fragment over weeks. */
#define SPARE_MAX LIVE_MAX_THREADS

enum drop_reason {
    DROP_STAGE_LIMIT,
    DROP_COUNTER_LIMIT,
    DROP_INSTANT_LIMIT,
    DROP_METADATA_LIMIT,
    DROP_LONG_NAME,
    DROP_DEPTH_LIMIT,
    DROP_THREAD_LIMIT,
    N_DROP,
};

/* Distinct names, interned: index -> name, with an open-addressing hash. Never shrinks; holds
 * at most LIVE_MAX_NAMES. */
struct name_table {
    char **names;
    size_t n, cap;
    uint16_t slot[NAME_SLOTS]; /* index + 1, 0 = empty */
};

struct stage_data {
    uint64_t buckets[LIVE_STAGE_BUCKETS + 1]; /* per bucket, not cumulative */
    double sum_s;
    uint32_t active; /* spans open now */
};

struct counter_data {
    double last, sum;
    uint64_t samples;
    bool count_like; /* every value so far a whole number >= 0 */
};

struct open_span {
    uint32_t stage;
    int64_t t_ns;
};

/* The open stages of one thread. pid 0 = empty slot. */
struct thread_slot {
    int32_t pid, tid;
    uint32_t depth, cap;
    bool foreign; /* process not visible when first seen: another PID namespace, not pruned */
    uint64_t last_use; /* event sequence number: the least recently used is evicted */
    struct open_span *open;
};

/* One resource series of the latest sample row. */
struct live_series {
    char *name;        /* exported name, "mlbench_..." */
    char *labels;      /* as the source formatted them */
    const char *help;
    enum prom_type type;
    double value;      /* NAN: not measured at this row */
};

struct live_metrics {
    pthread_mutex_t mu;

    /* markers */
    bool markers_on;
    uint64_t received, malformed, unbalanced, dropped[N_DROP], seq;
    uint64_t malformed_floor; /* from live_set_marker_datagrams */
    uint64_t foreign;         /* from live_set_marker_foreign */
    struct name_table stage_names, counter_names, instant_names, meta_keys;
    struct stage_data *stages;
    struct counter_data *counters;
    uint64_t *instants;
    char **meta_values; /* LIVE_MAX_VALUE_BYTES + 1 each, allocated with the key */
    size_t data_cap; /* of each of the four arrays above */
    struct thread_slot *threads; /* THREAD_SLOTS */
    size_t n_threads;
    struct open_span *spare[SPARE_MAX]; /* arrays of SPAN_CAP spans, free for reuse */
    size_t n_spare;

    /* samples */
    const struct series_def *defs_seen; /* the definitions the series below were built from */
    size_t n_series;
    struct live_series *series;
    size_t *order;        /* series indices grouped by exported name, first appearance first */
    uint64_t rows, sampler_errors;
    int64_t last_row_ns, row_gap_ns;

    /* mlbench load's queries (live_on_query) */
    bool queries_seen;
    struct stage_data query_latency; /* successful queries, from their due times */
    uint64_t queries_ok, queries_failed;

    size_t last_render; /* bytes of the last exposition: the next one reserves as much */
};

/* Frees the resource series of the latest row and empties the list; mu held or m unshared. */
void live_state_free_series(struct live_metrics *m);

#endif
