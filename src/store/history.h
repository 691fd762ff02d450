/* store/history: a store's results as the history's model holds them (doc/history.h): the
 * entries of the index that a query matches, oldest first, with the figures of load results
 * (results of `mlbench load`: per result the scenario runs that count, with their metric
 * percentile and throughput, read from the stored documents through doc/load.h;
 * docs/store.md#load-results). Not thread-safe per store. */
#ifndef MLBENCH_STORE_HISTORY_H
#define MLBENCH_STORE_HISTORY_H

#include <stddef.h>

#include "doc/history.h"
#include "store/store.h"

/* A history read from a store: the model (its store, hosts and results filled) and what it
 * borrows. */
struct store_history {
    struct doc_history doc;
    struct doc_history_result *results;
    struct store_entry *entries;
    size_t n;
    char *store;
};

/* Reads the entries of the open store s that q matches (q->with_stages is set here) into h:
 * h->doc.results, h->doc.store (how messages name s) and h->doc.hosts (a shared store, or
 * results of more than one host); the rest of h->doc is zero. A load result whose document
 * cannot be read gets no load figures (nothing is said: history lists what the index has).
 * Returns 0, or -1 with err (h is then empty). Free with store_history_free, after the last
 * use of h->doc; s may be closed before. */
int store_history_read(struct store *s, const struct store_query *q, struct store_history *h,
                       char *err, size_t errlen);
void store_history_free(struct store_history *h);

#endif
