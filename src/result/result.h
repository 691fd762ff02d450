/* result: the model of one `mlbench run` invocation (config, every repetition, summary) and
 * its JSON form, schema "mlbench.result/1" (docs/result-schema.md). Not thread-safe. */
#ifndef MLBENCH_RESULT_H
#define MLBENCH_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "analysis/analyze.h"
#include "measure/attrib.h"
#include "measure/event_log.h"
#include "measure/run_config.h"
#include "measure/runner.h"
#include "measure/sampler.h"
#include "measure/stages.h"
#include "result/machine_facts.h"
#include "result/price.h"
#include "result/summary.h"

#define RESULT_MAX_SPANS 20000    /* spans written per repetition; the rest are counted */
#define RESULT_MAX_INSTANTS 10000 /* instants written per repetition */

struct repetition {
    int index;              /* 0-based, in the order run (warm-up runs first) */
    bool warmup;
    struct run_outcome outcome;
    char *prepare_error;    /* the --prepare command failed: why (the run was not made) */
    struct event_log log;   /* names; the events themselves are freed once aggregated */
    struct stage_data stages;
    struct sample_table samples;  /* resource samples (n == 0 without sampling) */
    struct metric_stat **metrics; /* attributed samples: stages.n_stages rows, then the run;
                                   * NULL without samples */
    struct gpu_clock_run gpu_clock; /* whether its GPU kept its clocks; set by summary_compute */
};

/* How resources were sampled during the invocation. */
struct sampling_info {
    int64_t interval_ns;    /* with adaptive, the longest */
    bool adaptive;          /* from SAMPLER_MIN_INTERVAL_NS up to interval_ns (sampler.h) */
    char **active;          /* source names */
    size_t n_active;
    char **skipped;         /* "source: reason" */
    size_t n_skipped;
    uint64_t errors;        /* read failures counted by the sources */
    int64_t cpu_ns;         /* CPU time the sampling thread used over all runs */
    int64_t sampled_ns;     /* wall time sampled: the runs' wall times added up */
};

struct result {
    char id[48];               /* "20261129T233001-4f2a9c" */
    const struct run_config *config;
    int64_t created_unix_ns;
    struct repetition *reps;
    size_t n_reps, cap_reps;
    uint64_t events_outside_runs;
    int stop_signal;           /* mlbench was interrupted by this signal, or 0 */
    struct summary summary;    /* filled by summary_compute */
    struct sampling_info sampling;
    struct analysis analysis;  /* filled by resources_analyze */
    bool analyzed;
    uint64_t gpus_shown;       /* bit i: GPU i was used by the workload (or --all-gpus) */
    struct stage_resources *figures; /* per summary stage, then the whole run (n_stages + 1);
                                      * names borrowed from the summary; NULL without samples */
    json_t *environment;       /* owned; filled by result_capture_environment, NULL before;
                                * written into the document, never read back */
    struct machine_facts facts; /* owned; what environment records of the machine, typed:
                                 * what the summary, the price and the analysis read; filled
                                 * by result_capture_environment, zeroed before */
    struct price_match price;  /* filled by result_price; priced false before or without one */
};

/* A fresh id, "20261129T233001-4f2a9c" (UTC time, then 24 random bits: ids sort by time), into
 * id[len] (48 bytes are plenty); the time it was taken into *unix_ns when not NULL. Sweeps use
 * the same form. */
void result_new_id(char *id, size_t len, int64_t *unix_ns);
/* Sets up an empty result for config (which must outlive it) with a fresh id. */
void result_init(struct result *r, const struct run_config *config);
/* Appends a zeroed repetition with its index set; the pointer is valid until the next call. */
struct repetition *result_add_rep(struct result *r, bool warmup);
void result_free(struct result *r);

/* Captures what the runs ran on into r->environment (envinfo_capture) and r->facts, replacing
 * any earlier capture: the machine, the git state of the current directory (runs git, 2 s at
 * most) and the static facts of the sampler's open sources (its GPUs). sampler may be NULL (no
 * GPUs). Call once after the runs, while the sampler is still open (before sampler_close).
 * Reads nothing of the summary. Returns &r->facts, for summary_compute, result_price and
 * resources_analyze, which take them. */
const struct machine_facts *result_capture_environment(struct result *r,
                                                       const struct sampler *sampler);

/* Decides the price of the result from spec (--price or --price-file; NULL: not priced) and
 * the machine's facts (price_match; NULL: none known), after summary_compute (whose warnings it
 * adds to). A price file that names neither this machine nor a default leaves the result
 * unpriced, with a warning logged and one in the summary ("unpriced"). Nothing happens without
 * a price. spec is borrowed. */
void result_price(struct result *r, const struct price_spec *spec,
                  const struct machine_facts *facts);

/* The whole result as JSON (new reference). Pure serialisation: the environment is the one
 * result_capture_environment captured ({} when none was). */
json_t *result_to_json(const struct result *r);

/* Writes a result document (from result_to_json) to path atomically (temporary file in the
 * same directory, fsync, rename): there is never a partial file. j is not consumed.
 * Returns 0, or -1 with a message in err. */
int result_write_json(json_t *j, const char *path, char *err, size_t errlen);


#endif
