/* doc/load: the reader of a load result's `load` section ("mlbench.load/1" inside a result of
 * `mlbench load`, docs/result-schema.md#load-mlbench-load): its scenario runs typed, with the
 * rule of which runs count read here once (every consumer, the comparison, the reports and the
 * history, asks doc_load_counts). Tolerant as doc/result.h: absent members read as NULL, NAN,
 * false or 0. Strings and `json` members are borrowed from the document; the arrays belong to
 * the view. Read-only after doc_load_read. */
#ifndef MLBENCH_DOC_LOAD_H
#define MLBENCH_DOC_LOAD_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* A latency object, seconds (NAN where null). */
struct doc_latency {
    long long count;
    double min, mean, p50, p90, p95, p99, p999, max;
    const json_t *json;
};

/* The server's marker spans of one name during a scenario run (server.stages.NAME). */
struct doc_load_spans {
    bool present;
    long long count;
    double mean_s;                 /* NAN when absent */
};

/* The server during one scenario run (with --server-cmd). */
struct doc_load_server {
    bool present;
    double cpu_cores, resident_bytes_max, system_cpu_busy_ratio, gpu_utilization_ratio;
    long long samples;
    const json_t *stages, *counters; /* objects by name, or NULL */
    struct doc_load_spans queue_wait, batch, compute; /* the spans the reference server sends */
    double queue_wait_s;           /* the mean queue wait: the queue_wait spans', else the
                                    * queue_wait_seconds counter's mean (one per batch); NAN */
    double batch_size;             /* the batch_size counter's mean, NAN when absent */
};

/* The generator during one scenario run. */
struct doc_load_client {
    double cpu_s, busiest_thread_ratio;
    struct doc_latency send_lag;
    bool client_bound;
    long long reconnects, bytes_sent, bytes_received;
};

/* load.scenarios[]: one scenario run. */
struct doc_load_run {
    const char *role;              /* "run", "probe", "confirm"; NULL when absent */
    const char *scenario;
    bool counts;                   /* doc_load_counts */
    int met_bound;                 /* find-peak: 1, 0, or -1 when absent */
    double target_qps, throughput_qps, percentile, latency_bound_s;
    double duration_s, issue_duration_s, start_offset_s, start_ns, start_unix_ns;
    long long queries, completed, failed, requests;
    struct doc_latency latency, response;
    double early_estimate_s, early_percentile, early_confidence; /* early_stopping */
    long long early_min_queries;
    bool valid;
    const json_t *invalid_reasons; /* array of strings, or NULL */
    const json_t *errors;          /* object of counts by kind, or NULL */
    const json_t *seconds;         /* array of per-second rows, or NULL */
    const json_t *histogram;       /* object, or NULL: its buckets read with doc_load_bucket */
    long long histogram_total;     /* the queries it counts, 0 when absent */
    struct doc_load_client client;
    struct doc_load_server server;
    const json_t *json;
};

struct doc_load {
    bool present;                  /* the section is an object */
    const char *schema, *url, *address, *scenario, *server_cmd;
    const char **command;          /* the mlbench load command recorded: n_command words, NULL
                                    * for one not a string; none in results before it */
    size_t n_command;
    long long connections, threads, bodies;
    double samples_per_query, seed, request_timeout_s; /* NAN when null */
    bool valid;
    bool find_peak;                /* --find-peak was given */
    double peak_qps, peak_latency_bound_s, peak_percentile; /* find_peak's, NAN when null */
    long long peak_probes, peak_confirmations;
    const char *bound_kind, *bound_evidence; /* load.bound, NULL when null */
    struct doc_load_run *runs;
    size_t n_runs;
    const json_t *json;
};

/* load.scenarios[].seconds[]: one second of a run, by completion time (NAN where null). */
struct doc_load_second {
    double t_s, completed, failed, p50_s, p90_s, p99_s, max_s;
};
size_t doc_load_n_seconds(const struct doc_load_run *run);
void doc_load_second(const struct doc_load_run *run, size_t i, struct doc_load_second *s);

/* load.scenarios[].histogram.buckets[]: the queries of one latency bucket (NAN where absent). */
struct doc_load_bucket {
    double low_ns, high_ns, count;
};
size_t doc_load_n_buckets(const struct doc_load_run *run);
void doc_load_bucket(const struct doc_load_run *run, size_t i, struct doc_load_bucket *b);

/* Reads load (a result's "load" member; NULL or not an object: an empty view, present false).
 * Never NULL; free with doc_load_free. */
struct doc_load *doc_load_read(const json_t *load);
/* Reads the load section of the result document result (its "load" member), as doc_load_read:
 * present false for a result of another command. */
struct doc_load *doc_load_read_result(const json_t *result);
void doc_load_free(struct doc_load *l);

/* Whether run i counts: not a probe; with find-peak only the last run that is not a probe (the
 * confirmation whose rate is the reported peak). */
bool doc_load_counts(const struct doc_load *l, size_t i);

/* The latency object's percentile p (50, 90, 95, 99, 99.9) in seconds, NAN for another p. */
double doc_latency_at(const struct doc_latency *lat, double p);
/* The p-th percentile of a run's latency in seconds: its latency object's (doc_latency_at),
 * else from its histogram with LoadGen's rank (docs/load.md): floor(n p / 100) + 1, the high
 * end of the bucket that holds it, never above the maximum. NAN when neither has it. */
double doc_load_run_percentile(const struct doc_load_run *run, double p);

/* "server run at 40 QPS", "offline run": a run's name in headings and captions. */
void doc_load_run_name(const struct doc_load_run *run, char *buf, size_t len);

#endif
