/* doc/result_file.c: result files read back and checked, with precise errors (see result_file.h). */
#include "doc/result_file.h"

#include <stdio.h>
#include <string.h>

#include "doc/result.h"

/* Where a file holds more names than one run or summary can (DOC_MAX_NAMES), or NULL.
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
        if (json_array_size(json_object_get(summary, lists[k].key)) > DOC_MAX_NAMES)
            return lists[k].in_summary;
        size_t i;
        const json_t *run;
        json_array_foreach(runs, i, run) {
            const json_t *a = json_object_get(run, lists[k].key);
            if (json_array_size(a) > DOC_MAX_NAMES || json_object_size(a) > DOC_MAX_NAMES)
                return lists[k].in_run;
        }
    }
    return NULL;
}

/* What is wrong with a stage's "spans" object (docs/result-schema.md), or NULL: absent or
 * null (results of older versions, stages without closed spans) is fine. */
static const char *bad_span_stats(const json_t *sp)
{
    static const char *const figures[] = {"p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns"};
    if (!sp || json_is_null(sp))
        return NULL;
    const json_t *h = json_object_get(sp, "histogram"), *counts = json_object_get(h, "counts");
    json_int_t n = json_integer_value(json_object_get(sp, "n"));
    if (!json_is_object(sp) || !json_is_integer(json_object_get(sp, "n")) || n < 1)
        return "not an object with a count n >= 1";
    for (size_t i = 0; i < sizeof figures / sizeof figures[0]; i++)
        if (!json_is_number(json_object_get(sp, figures[i])))
            return "a percentile is not a number";
    json_int_t per = json_integer_value(json_object_get(h, "bins_per_octave"));
    json_int_t first = json_integer_value(json_object_get(h, "first_bin"));
    if (!json_is_integer(json_object_get(h, "bins_per_octave")) || per < 1 || per > 64 ||
        !json_is_integer(json_object_get(h, "first_bin")) || first < 0 || first >= 64 * per ||
        !json_is_array(counts) || json_array_size(counts) == 0 ||
        json_array_size(counts) > (size_t)(64 * per - first))
        return "its histogram has no valid bins_per_octave, first_bin and counts";
    json_int_t sum = 0;
    for (size_t i = 0; i < json_array_size(counts); i++) {
        json_int_t c = json_integer_value(json_array_get(counts, i));
        if (!json_is_integer(json_array_get(counts, i)) || c < 0 || c > n)
            return "a histogram count is not an integer between 0 and n";
        sum += c;
    }
    return sum == n ? NULL : "the histogram counts do not add up to n";
}

/* Checks summary.stages[].spans; 0, or -1 with a message naming the stage. */
static int check_span_stats(const json_t *j, const char *path, char *err, size_t errlen)
{
    size_t i;
    const json_t *st;
    json_array_foreach(json_object_get(json_object_get(j, "summary"), "stages"), i, st) {
        const char *why = bad_span_stats(json_object_get(st, "spans"));
        if (why) {
            snprintf(err, errlen, "%s: summary.stages[%zu].spans is malformed: %s (edited by "
                     "hand or damaged? write it again with mlbench run)", path, i, why);
            return -1;
        }
    }
    return 0;
}

json_t *doc_result_load_file(const char *path, char *err, size_t errlen)
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
    if (strcmp(schema, DOC_RESULT_SCHEMA) != 0) {
        snprintf(err, errlen, "%s: schema '%s' is not %s, which this mlbench reads", path, schema,
                 DOC_RESULT_SCHEMA);
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
                 "result of an older mlbench, or made by hand?)", path, what, DOC_MAX_NAMES);
        json_decref(j);
        return NULL;
    }
    if (check_span_stats(j, path, err, errlen) < 0) {
        json_decref(j);
        return NULL;
    }
    return j;
}
