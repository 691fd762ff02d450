/* history_load: what `mlbench history` shows of load results (a "load" section, mlbench
 * load): per result the scenario runs that count (not find-peak's probes) with their metric
 * percentile and throughput, read from the result files. docs/store.md#load-results. */
#ifndef MLBENCH_CLI_HISTORY_LOAD_H
#define MLBENCH_CLI_HISTORY_LOAD_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "store/store.h"

#define HISTORY_LOAD_MAX 8 /* scenario runs kept per result */

struct history_load_run {
    char key[64];         /* "single-stream", "server 40 QPS", "server peak" */
    char metric[16];      /* "p90" */
    double metric_s;      /* the metric percentile of latency_s, seconds; NaN when absent */
    double qps;           /* throughput_qps; NaN when absent */
    bool valid;
};

struct history_load {
    size_t n;             /* 0: not a load result */
    struct history_load_run run[HISTORY_LOAD_MAX];
};

/* The load figures of each of e[0..n), entries of the open store s (a directory or a shared
 * store): out[i].n is 0 for a result without a load section or whose document cannot be read
 * (nothing is reported: history lists what the index has). Only the documents of results
 * without a command (what mlbench load stores) are read. Returns a new array of n entries
 * (free it). */
struct history_load *history_load_read(struct store *s, const struct store_entry *e, size_t n);

/* The figures of one result as a JSON array of {key, metric, metric_s, throughput_qps, valid}
 * (new reference). */
json_t *history_load_json(const struct history_load *l);

#endif
