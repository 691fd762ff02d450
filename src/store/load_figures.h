/* load_figures: what `mlbench history` shows of load results (results of `mlbench load`, with a
 * "load" section): per result the scenario runs that count (doc_load_counts: not find-peak's
 * probes) with their metric percentile and throughput, read from the stored documents through
 * doc/load.h. docs/store.md#load-results. Not thread-safe per store. */
#ifndef MLBENCH_STORE_LOAD_FIGURES_H
#define MLBENCH_STORE_LOAD_FIGURES_H

#include <stdbool.h>
#include <stddef.h>

#include "store/store.h"

#define LOAD_FIGURES_MAX 8 /* scenario runs kept per result */

/* One scenario run that counts. */
struct load_figure {
    char key[64];         /* "single-stream", "server 40 QPS", "server peak" */
    char metric[16];      /* "p90" */
    double metric_s;      /* the metric percentile of its latency, seconds; NaN when absent */
    double qps;           /* its throughput; NaN when absent */
    bool valid;
};

/* The runs that count of one result, in order. */
struct load_figures {
    size_t n;             /* 0: not a load result */
    struct load_figure run[LOAD_FIGURES_MAX];
};

/* The load figures of each of e[0..n), entries of the open store s (a directory or a shared
 * store): out[i].n is 0 for a result without a load section or whose document cannot be read
 * (nothing is reported: history lists what the index has). Only the documents of results
 * without a command (what mlbench load stores) are read. Returns a new array of n entries
 * (free it). */
struct load_figures *load_figures_read(struct store *s, const struct store_entry *e, size_t n);

#endif
