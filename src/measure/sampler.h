/* sampler: resource sampling while a workload runs. A background thread reads every metric
 * source at a fixed interval and appends one row per tick to a sample table: column arrays of
 * values sharing CLOCK_MONOTONIC timestamps.
 *
 * Sources are one file each in src/sources/, a `struct metric_source` listed in
 * src/sources/sources.c. A source that cannot start is skipped and the reason kept; a value that
 * could not be read at one tick is NAN (written as null), never 0. */
#ifndef MLBENCH_SAMPLER_H
#define MLBENCH_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SAMPLER_MIN_INTERVAL_NS 10000000LL      /* 10 ms */
#define SAMPLER_MAX_INTERVAL_NS 10000000000LL   /* 10 s */
#define SAMPLER_DEFAULT_INTERVAL_NS 100000000LL /* 100 ms */
/* Adaptive sampling (when the user did not choose an interval): each tick comes after the time
 * since the start divided by this, between SAMPLER_MIN_INTERVAL_NS and the interval, so a run
 * gets about this many samples before the interval is reached (about 20 + 20 ln(interval /
 * 20 ms) by then: 66 at 100 ms, reached after 2 s) and runs of 10 ms to 200 ms are sampled
 * every 10 ms. */
#define SAMPLER_ADAPT_SAMPLES 20

#include "sources/facts.h"
#include "sources/source.h"

struct sampler;

struct sampler_config {
    int64_t interval_ns;     /* the interval; with adaptive, the longest */
    bool adaptive;           /* start at SAMPLER_MIN_INTERVAL_NS and grow (SAMPLER_ADAPT_SAMPLES) */
    bool all_gpus;
};

/* Opens every source of the table in sources.c. Never fails: unusable sources are skipped
 * (sampler_skipped). The caller owns the result. Not thread-safe. */
struct sampler *sampler_open(const struct sampler_config *cfg);
/* Sources skipped, as "name: reason" strings owned by the sampler. */
size_t sampler_skipped(const struct sampler *s, const char *const **reasons);
/* Names of the sources in use. */
size_t sampler_active(const struct sampler *s, const char *const **names);
/* Read failures counted by the sources so far (unreadable files, vanished processes, NVML errors). */
uint64_t sampler_errors(const struct sampler *s);
/* CPU time the sampling thread has used so far (its own cost), ns. Call between runs. */
int64_t sampler_cpu_ns(const struct sampler *s);
/* Called on the sampler thread after each row is complete (for live exporters); must be quick.
 * tab is the table being filled; rows below `row` may be dropped later (sampler_keep_rows). */
typedef void (*sampler_listener)(void *arg, const struct sample_table *tab, size_t row);
/* Sets (fn != NULL) or removes the listener; call while not sampling. */
void sampler_set_listener(struct sampler *s, sampler_listener fn, void *arg);
/* Bounds the table for long monitoring: once it holds 2n rows, the oldest n are dropped, so
 * it keeps between n and 2n recent rows. 0 (the default) keeps every row. Call while not
 * sampling. */
void sampler_keep_rows(struct sampler *s, size_t n);
/* Starts sampling into tab (initialised here) on a new thread; takes a first sample at once. */
int sampler_start(struct sampler *s, struct sample_table *tab);
/* The workload's leader, once spawned (called from the controlling thread). */
void sampler_set_leader(struct sampler *s, pid_t leader);
/* The static facts of the open sources (their facts op) into *out, zeroed first: no GPU when
 * no open source knows one. Free it with source_facts_free. Safe while sampling (the op reads
 * only what open wrote). */
void sampler_facts(const struct sampler *s, struct source_facts *out);
/* For a caller with no sampler (mlbench env): opens the source `name` of the table in
 * sources.c on its own, takes its facts into *out (zeroed first; free it with
 * source_facts_free) and closes it. Returns 0 with err "", or -1 when the source could not
 * open, is not in the table or has no facts (*out is then empty and err says why). Not
 * thread-safe against another open or close of that source. */
int sampler_source_facts(const char *name, struct source_facts *out, char *err, size_t errlen);
/* Takes a last sample and stops the thread. tab stays valid, owned by the caller. */
void sampler_stop(struct sampler *s);
void sampler_close(struct sampler *s);

#endif
