/* result_load: reads a result file written by `mlbench run` back into JSON, for the commands
 * that work on stored results (show, compare, report, history). */
#ifndef MLBENCH_RESULT_LOAD_H
#define MLBENCH_RESULT_LOAD_H

#include <stddef.h>

#include <jansson.h>

/* Loads path and checks that it is a result of schema "mlbench.result/1". Returns a new
 * reference, or NULL with a message in err that names the file and, for a JSON error, the line
 * and column ("r.json: line 3, column 7: unexpected token") or what is missing. */
json_t *result_load_file(const char *path, char *err, size_t errlen);

#endif
