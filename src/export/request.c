/* request.c: what the views of a request share about its results (export.h): the run a view
 * draws (--run, else the representative run) and the check of --run, and a stage's colour,
 * the same in every chart of every result. */
#include "export/export.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/term.h"
#include "util/units.h"
#include "util/xalloc.h"

int export_chosen_run(const struct export_request *req, const struct doc_result *result)
{
    return req->run >= 0 ? req->run : doc_result_median_run(result);
}

int export_check_run(const struct export_request *req, char *err, size_t errlen)
{
    if (req->run < 0)
        return EXPORT_OK;
    for (size_t i = 0; i < req->n; i++) {
        size_t n = req->docs[i]->n_runs;
        if ((size_t)req->run >= n) {
            if (n == 0)
                snprintf(err, errlen, "--run %d: result %s has no runs", req->run,
                         doc_result_name(req->docs[i]));
            else
                snprintf(err, errlen, "--run %d: result %s has runs 0 to %zu (warm-up runs "
                         "first)", req->run, doc_result_name(req->docs[i]), n - 1);
            return EXPORT_EREQUEST;
        }
    }
    return EXPORT_OK;
}

/* ---- stage colours ---- */

/* Whether name is a stage of a result before i, or of result i before its stage j. */
static bool stage_seen_before(const struct export_request *req, size_t i, size_t j,
                              const char *name)
{
    for (size_t a = 0; a <= i; a++) {
        const struct doc_summary *s = &req->docs[a]->summary;
        size_t lim = a == i ? j : s->n_stages;
        for (size_t b = 0; b < lim; b++)
            if (s->stages[b].name && !strcmp(s->stages[b].name, name))
                return true;
    }
    return false;
}

size_t export_stage_colour(const struct export_request *req, const char *name)
{
    /* distinct names in order of first appearance; name's position among them */
    size_t k = 0;
    for (size_t i = 0; i < req->n; i++) {
        const struct doc_summary *s = &req->docs[i]->summary;
        for (size_t j = 0; j < s->n_stages; j++) {
            const char *n = s->stages[j].name;
            if (!n)
                continue;
            if (!strcmp(n, name))
                return k;
            if (!stage_seen_before(req, i, j, n))
                k++;
        }
    }
    return k;
}
