/* load_report: what `mlbench load` made of its scenario runs: the list of runs (probes, the
 * confirmation, the run), the result document's "load" section with the server's resources
 * and markers per run and the verdict on what bounds the server (docs/load.md), and the
 * terminal summary. */
#ifndef MLBENCH_CLI_LOAD_REPORT_H
#define MLBENCH_CLI_LOAD_REPORT_H

#include <stdbool.h>
#include <stdio.h>

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

/* Appends an entry (zeroed run) and returns it; valid until the next call. */
struct load_entry *load_runs_add(struct load_runs *r, const char *role, const struct load_rules *rules);
void load_runs_free(struct load_runs *r);
/* Whether the runs that count (the run, or the last confirmation) were VALID; false when none. */
bool load_runs_valid(const struct load_runs *r);

/* Whether a run of the peak search met the bound: the percentile within it, nothing failed.
 * A late generator does not count against it: its lag is inside every latency (they run from
 * the due times), so lateness can only make the peak found lower, never higher. */
bool load_entry_met(const struct load_entry *e);

/* One line on a finished scenario run, for the progress log. */
void load_report_progress(FILE *f, const struct load_entry *e);

/* The "load" section: the plan (cfg, address, url, server_cmd may be NULL), every run with the
 * server's figures during it from rep (its samples and stages; rep may be NULL), the peak and
 * the bound verdict. New reference. */
json_t *load_report_json(const struct load_runs *r, const struct load_config *cfg,
                         const char *address, const char *url, const char *server_cmd,
                         const struct repetition *rep);

/* The terminal summary of a result document with a "load" section (path: where it was
 * written, may be NULL). Text from the document is sanitised. */
void load_report_print(FILE *f, const json_t *doc, const char *path);

#endif
