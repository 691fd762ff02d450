/* load_figures: load results' figures for `mlbench history` (load_figures.h). */
#include "store/load_figures.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "doc/load.h"
#include "util/xalloc.h"

/* Fills f from the load section l: the runs that count, as the comparison takes them. */
static void from_doc(const struct doc_load *l, struct load_figures *f)
{
    f->n = 0;
    for (size_t i = 0; i < l->n_runs && f->n < LOAD_FIGURES_MAX; i++) {
        if (!doc_load_counts(l, i))
            continue;
        const struct doc_load_run *r = &l->runs[i];
        struct load_figure *x = &f->run[f->n++];
        const char *scen = r->scenario ? r->scenario : "?";
        if (l->find_peak)
            snprintf(x->key, sizeof x->key, "%.40s peak", scen);
        else if (isfinite(r->target_qps))
            snprintf(x->key, sizeof x->key, "%.40s %.4g QPS", scen, r->target_qps);
        else
            snprintf(x->key, sizeof x->key, "%.40s", scen);
        double p = isfinite(r->percentile) ? r->percentile : 99;
        snprintf(x->metric, sizeof x->metric, "p%g", p);
        x->metric_s = doc_latency_at(&r->latency, p);
        x->qps = r->throughput_qps;
        x->valid = r->valid;
    }
}

struct load_figures *load_figures_read(struct store *s, const struct store_entry *e, size_t n)
{
    struct load_figures *out = xcalloc(n + 1, sizeof *out);
    for (size_t i = 0; i < n; i++) {
        if (e[i].command && *e[i].command)
            continue;
        char err[256];
        json_t *doc = store_get(s, &e[i], err, sizeof err);
        struct doc_load *l = doc_load_read_result(doc);
        if (l->present)
            from_doc(l, &out[i]);
        doc_load_free(l);
        json_decref(doc);
    }
    return out;
}
