/* load_runs: what one `mlbench load` job ran (the run, or find-peak's probes and its
 * confirmations, in order, each with its rules and verdict), which of them count, and the
 * result document's "load" section built from them (docs/load.md, docs/result-schema.md): the
 * plan, every run with the server's resources and markers during it, the peak and the verdict
 * on what bounds the server. The job (load_job.c) fills the list; the readers of the section
 * are doc/load.h's. Not thread-safe per list. */
#ifndef MLBENCH_SESSION_LOAD_RUNS_H
#define MLBENCH_SESSION_LOAD_RUNS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "load/judge.h"
#include "load/load.h"
#include "result/result.h"

struct load_entry {
    char role[8];              /* "run", "probe" or "confirm" */
    struct load_rules rules;
    struct load_run run;
    struct load_verdict verdict;
};

struct load_runs {
    struct load_entry *v;
    size_t n, cap;
    bool peak_searched;
    double peak_qps;           /* the confirmed peak, 0 when none met the bound */
};

/* Appends an entry (zeroed run) with role and rules and returns it; valid until the next call. */
struct load_entry *load_runs_add(struct load_runs *r, const char *role, const struct load_rules *rules);
/* Frees the entries and their runs; r is empty after. */
void load_runs_free(struct load_runs *r);
/* Whether the run that counts (the last one not a probe: the run, or the last confirmation)
 * was VALID and, after a peak search, a peak was found; false when none counts. */
bool load_runs_valid(const struct load_runs *r);

/* Whether a run of the peak search met the bound: the percentile within it, nothing failed,
 * something completed. A late generator does not count against it: its lag is inside every
 * latency (they run from the due times), so lateness can only make the peak found lower, never
 * higher. */
bool load_entry_met(const struct load_entry *e);

/* The "load" section (schema "mlbench.load/1"): the plan (cfg, address, url; server_cmd may be
 * NULL), every run with the server's figures during it from rep (its samples and markers; rep
 * may be NULL: none), the peak and the bound verdict. Strings from outside are made valid
 * UTF-8. New reference; the caller adds "command". */
json_t *load_runs_section(const struct load_runs *r, const struct load_config *cfg,
                          const char *address, const char *url, const char *server_cmd,
                          const struct repetition *rep);

#endif
