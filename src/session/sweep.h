/* sweep: `mlbench sweep` (docs/sweep.md): several points (a parameter matrix, several commands,
 * or the probes of --find-max) measured in one session, each a full result in the store with
 * its sweep id and parameters, their repetitions interleaved round by round in a seeded
 * shuffled order unless told otherwise; then the sweep document ("mlbench.sweep/1") with every
 * point's status and figures, the objective and the winner, written to <store>/sweeps/ID.json
 * (store/sweeps.h).
 * Call from the main thread, once per process (session.h). */
#ifndef MLBENCH_SWEEP_H
#define MLBENCH_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "doc/result.h"
#include "doc/sweep.h"
#include "measure/run_config.h"
#include "session/session.h"
#include "session/sweep_plan.h"

enum sweep_mode { SWEEP_MATRIX, SWEEP_COMMANDS, SWEEP_FIND_MAX };

/* One point of a matrix or commands sweep, made by the command line. Everything owned by the
 * spec (sweep_spec_free). */
struct sweep_point_def {
    char *name;
    char **argv;        /* NULL-terminated */
    int argc;
    char *prepare, *cleanup; /* or NULL */
    json_t *parameters; /* object: parameter name -> value (string); {} for commands */
};

struct sweep_spec {
    const struct run_config *cfg;  /* the common options; in find-max mode its argv, prepare
                                    * and cleanup are the templates with {NAME} */
    const struct session_options *opts; /* the session's; its -o is the sweep document's */
    enum sweep_mode mode;
    struct sweep_point_def *points; /* matrix and commands */
    size_t n_points;
    struct sweep_param *params;    /* matrix: for the document */
    size_t n_params;
    bool interleave;
    uint64_t seed;
    struct sweep_objective objective;
    const char *objective_spec;
    bool objective_given;          /* --objective was given (find-max: else the largest fit wins) */
    struct sweep_constraint *constraints;
    char **constraint_specs;       /* point into argv */
    size_t n_constraints;
    double memory_budget_bytes;    /* NAN: none */
    char **oom_patterns;           /* --oom-pattern (point into argv) */
    size_t n_oom_patterns;
    /* find-max */
    struct sweep_search search;
    char search_name[SWEEP_MAX_NAME + 1];
    char **probe_args;             /* --probe-args, split (owned), appended to each probe */
    int n_probe_args;
};

void sweep_spec_free(struct sweep_spec *s);

/* Runs the sweep. *doc_out gets the sweep document (NULL when nothing could start; the
 * caller's to free) and *path_out the file it was written to (or NULL). Returns mlbench's exit
 * status: 0 every point ran (whether it fits or meets the constraints is in the document), 1 a
 * point failed, 2 bad input found once running (an objective no point can meet), 3 the harness
 * could not start or a file could not be written, 128+N interrupted by signal N (every finished
 * point and the document are written first). */
int sweep_run(const struct sweep_spec *spec, json_t **doc_out, char **path_out);

/* The figures of a point (the "figures" object of docs/sweep.md) from its result read
 * (doc/result.h) into f: the total, stages, bottleneck, throughput counters, peak memory, GPU
 * memory and utilisation, cost. Strings are borrowed from the result's document; free f's
 * arrays with doc_sweep_figures_free. */
void sweep_figures(const struct doc_result *result, struct doc_sweep_figures *f);
/* The "figures" object of a point (docs/sweep.md) from f (sweep_figures). New reference. */
json_t *sweep_figures_json(const struct doc_sweep_figures *f);

#endif
