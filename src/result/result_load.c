/* result_load: result files back into JSON, with precise errors (see result_load.h). */
#include "result/result_load.h"

#include <stdio.h>
#include <string.h>

#include "measure/stages.h"
#include "result/result.h"

/* Where a file holds more names than one run or summary can (STAGES_MAX_NAMES), or NULL.
 * Every consumer (show, compare, history, reports) matches names across runs and results;
 * the bound keeps that cheap whatever a file says. runs[].metadata is an object. */
static const char *too_many(const json_t *j)
{
    static const struct { const char *key, *in_summary, *in_run; } lists[] = {
        {"stages", "summary.stages", "runs[].stages"},
        {"counters", "summary.counters", "runs[].counters"},
        {"metadata", "summary.metadata", "runs[].metadata"},
    };
    const json_t *summary = json_object_get(j, "summary"), *runs = json_object_get(j, "runs");
    for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++) {
        if (json_array_size(json_object_get(summary, lists[k].key)) > STAGES_MAX_NAMES)
            return lists[k].in_summary;
        size_t i;
        const json_t *run;
        json_array_foreach(runs, i, run) {
            const json_t *a = json_object_get(run, lists[k].key);
            if (json_array_size(a) > STAGES_MAX_NAMES || json_object_size(a) > STAGES_MAX_NAMES)
                return lists[k].in_run;
        }
    }
    return NULL;
}

json_t *result_load_file(const char *path, char *err, size_t errlen)
{
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    if (!j) {
        if (je.line < 1)
            snprintf(err, errlen, "%s: %s", path, je.text);
        else
            snprintf(err, errlen, "%s: line %d, column %d: %s (a truncated or corrupt result "
                     "file?)", path, je.line, je.column, je.text);
        return NULL;
    }
    const char *schema = json_string_value(json_object_get(j, "schema"));
    if (!json_is_object(j) || !schema) {
        snprintf(err, errlen, "%s: not an mlbench result (no \"schema\" field)", path);
        json_decref(j);
        return NULL;
    }
    if (strcmp(schema, RESULT_SCHEMA) != 0) {
        snprintf(err, errlen, "%s: schema '%s' is not %s, which this mlbench reads", path, schema,
                 RESULT_SCHEMA);
        json_decref(j);
        return NULL;
    }
    if (!json_is_string(json_object_get(j, "id")) || !json_is_array(json_object_get(j, "runs")) ||
        !json_is_object(json_object_get(j, "summary"))) {
        snprintf(err, errlen, "%s: an mlbench result without id, runs or summary (truncated by "
                 "hand?)", path);
        json_decref(j);
        return NULL;
    }
    const char *what = too_many(j);
    if (what) {
        snprintf(err, errlen, "%s: %s holds more than %d names, more than mlbench writes (a "
                 "result of an older mlbench, or made by hand?)", path, what, STAGES_MAX_NAMES);
        json_decref(j);
        return NULL;
    }
    return j;
}
