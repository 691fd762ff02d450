/* bench: the heart of `mlbench run`: the repetition loop (warm-up, a fixed or automatic number
 * of runs, --prepare/--cleanup around each, --fail-fast) with everything wired around it: the
 * measuring session (markers, sampler), --serve, the progress line, then the summary, the
 * analysis and the environment of the finished runs, and the result document written to the
 * store (or, when the store fails, a fallback file) and to --output.
 *
 * A workflow file or the default workload are turned into a command before this (cli). Call
 * from the main thread, once per process (the runner owns the process's signals). */
#ifndef MLBENCH_BENCH_H
#define MLBENCH_BENCH_H

#include <jansson.h>

#include "measure/run_config.h"

struct bench_output {
    json_t *doc;    /* the result document, or NULL when nothing could run or it failed to build */
    char *path;     /* the file the result was written to (store or fallback), or NULL */
};

/* Measures cfg. Returns mlbench's exit status: 0 every run ok, 1 a run failed, 2 bad input
 * (nothing ran), 3 the harness could not start or the result could not be written where asked,
 * 127 the command was not found, 128+N stopped by signal N. out is filled in every case; free
 * it with bench_output_free. */
int bench_run(const struct run_config *cfg, struct bench_output *out);
void bench_output_free(struct bench_output *out);

#endif
