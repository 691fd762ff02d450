/* export.c: the table of report formats and the look-ups `mlbench report` uses to choose one
 * (by --format name or alias, by the output file's extension). What the formats share is in
 * values.c, reproduce.c and request.c; the outline of the Markdown and HTML reports in
 * outline.c (see export.h). */
#include "export/export.h"

#include <string.h>

#include "util/xalloc.h"

/* The formats, in the order help texts list them. */
static const struct exporter *const exporters[] = {
    &export_markdown,
    &export_html,
    &export_trace,
    &export_csv,
};

#define N_EXPORTERS (sizeof exporters / sizeof exporters[0])

const struct exporter *export_find(const char *name)
{
    for (size_t i = 0; i < N_EXPORTERS; i++)
        if (!strcmp(name, exporters[i]->name) ||
            (exporters[i]->alias && !strcmp(name, exporters[i]->alias)))
            return exporters[i];
    return NULL;
}

const struct exporter *export_for_path(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (!dot || strchr(dot, '/'))
        return NULL;
    for (size_t i = 0; i < N_EXPORTERS; i++)
        if (!strcmp(dot + 1, exporters[i]->extension))
            return exporters[i];
    return NULL;
}

const struct exporter *export_at(size_t i)
{
    return i < N_EXPORTERS ? exporters[i] : NULL;
}

int export_write(const struct exporter *e, FILE *out, const struct export_request *req,
                 char *err, size_t errlen)
{
    struct export_request r = *req;
    struct doc_result **docs = xcalloc(r.n ? r.n : 1, sizeof *docs);
    struct doc_load **loads = xcalloc(r.n ? r.n : 1, sizeof *loads);
    for (size_t i = 0; i < r.n; i++) {
        docs[i] = doc_result_read(r.results[i]);
        loads[i] = doc_load_read(docs[i]->load);
    }
    r.docs = docs;
    r.loads = loads;
    struct doc_sweep *sweep = r.sweep ? doc_sweep_read(r.sweep) : NULL;
    r.sweep_doc = sweep;
    struct doc_comparison *cmp = json_is_object(r.comparison) ? doc_comparison_read(r.comparison)
                                                              : NULL;
    r.cmp = cmp;
    int rc = e->write(out, &r, err, errlen);
    for (size_t i = 0; i < r.n; i++) {
        doc_result_free(docs[i]);
        doc_load_free(loads[i]);
    }
    free(docs);
    free(loads);
    doc_sweep_free(sweep);
    doc_comparison_free(cmp);
    return rc;
}
