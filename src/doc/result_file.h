/* doc/result_file: reads a result file written by `mlbench run` back into JSON, checked to be a
 * result this mlbench reads, for the commands that work on stored results (show, compare,
 * report, history, the store's index); doc/result.h then reads it. */
#ifndef MLBENCH_DOC_RESULT_FILE_H
#define MLBENCH_DOC_RESULT_FILE_H

#include <stddef.h>

#include <jansson.h>

/* Loads path and checks that it is a result of schema "mlbench.result/1". Returns a new
 * reference, or NULL with a message in err that names the file and, for a JSON error, the line
 * and column ("r.json: line 3, column 7: unexpected token") or what is missing. */
json_t *doc_result_load_file(const char *path, char *err, size_t errlen);

#endif
