/* record: the result of a document of timings measured in another process (`mlbench record`,
 * doc/timings.h): each round one repetition, timed per call, summarised and analysed as a run's
 * repetitions are, so that show, compare, history and report work on it. Not thread-safe. */
#ifndef MLBENCH_RESULT_RECORD_H
#define MLBENCH_RESULT_RECORD_H

#include <jansson.h>

#include "doc/timings.h"
#include "measure/run_config.h"
#include "result/result.h"

/* The result of document t as a stored run would have it, into r (result_free it), unpriced.
 * cfg gets t's command, rounds and label (its other fields stay as the caller set them) and r
 * borrows it. *env and *facts: the environment and the machine's facts captured for the first
 * document, shared by the others (*env NULL: captured now and kept in both; the caller
 * releases them, with json_decref and machine_facts_free). */
void record_result(const struct timings *t, struct run_config *cfg, struct result *r,
                   json_t **env, struct machine_facts *facts);

/* What a timing in the process did not measure is null or absent in its document doc (the JSON
 * of record_result's result), never 0 (docs/result-schema.md); adds each round as timed
 * (runs[].round_ns, round_cpu_ns) and config.timings. */
void record_mark_unmeasured(json_t *doc, const struct timings *t);

#endif
