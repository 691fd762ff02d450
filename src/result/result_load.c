/* result_load: result files back into JSON, with precise errors (see result_load.h). */
#include "result/result_load.h"

#include <stdio.h>
#include <string.h>

#include "result/result.h"

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
    return j;
}
