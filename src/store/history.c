/* store/history.c: a store's results as the history's model (store/history.h): the index's
 * entries, and the figures of load results read from their documents. */
#include "store/history.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc/load.h"
#include "util/xalloc.h"

/* Fills f from the load section l: the runs that count, as the comparison takes them. */
static void load_from_doc(const struct doc_load *l, struct doc_history_loads *f)
{
    f->n = 0;
    for (size_t i = 0; i < l->n_runs && f->n < DOC_HISTORY_LOADS_MAX; i++) {
        if (!doc_load_counts(l, i))
            continue;
        const struct doc_load_run *r = &l->runs[i];
        struct doc_history_load *x = &f->run[f->n++];
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

/* The load figures of entry e of s: only the documents of results without a command (what
 * mlbench load stores) are read. */
static void load_figures(struct store *s, const struct store_entry *e,
                         struct doc_history_loads *f)
{
    if (e->command && *e->command)
        return;
    char err[256];
    json_t *doc = store_get(s, e, err, sizeof err);
    struct doc_load *l = doc_load_read_result(doc);
    if (l->present)
        load_from_doc(l, f);
    doc_load_free(l);
    json_decref(doc);
}

/* Whether two optional strings differ (NULL is one value). */
static bool differ(const char *a, const char *b)
{
    return (a == NULL) != (b == NULL) || (a && strcmp(a, b) != 0);
}

int store_history_read(struct store *s, const struct store_query *q, struct store_history *h,
                       char *err, size_t errlen)
{
    memset(h, 0, sizeof *h);
    struct store_query with_stages = *q;
    with_stages.with_stages = true;
    if (store_list(s, &with_stages, &h->entries, &h->n, err, errlen) < 0)
        return -1;
    const struct store_entry *e = h->entries;
    h->results = xcalloc(h->n + 1, sizeof *h->results);
    for (size_t i = 0; i < h->n; i++) {
        h->results[i] = (struct doc_history_result){
            .id = e[i].id, .path = e[i].path, .created = e[i].created, .label = e[i].label,
            .command = e[i].command, .host = e[i].host, .mlbench_commit = e[i].mlbench_commit,
            .commit = e[i].workdir_commit, .status = e[i].status,
            .runs_measured = e[i].runs_measured, .runs_ok = e[i].runs_ok, .wall = e[i].wall,
            .stages = e[i].stages, .n_stages = e[i].n_stages,
        };
        load_figures(s, &e[i], &h->results[i].load);
    }
    h->store = xstrdup(store_name(s));
    h->doc.store = h->store;
    h->doc.hosts = store_is_shared(s);
    for (size_t i = 1; i < h->n && !h->doc.hosts; i++)
        h->doc.hosts = differ(e[i].host, e[0].host);
    h->doc.results = h->results;
    h->doc.n_results = h->n;
    return 0;
}

void store_history_free(struct store_history *h)
{
    store_entries_free(h->entries, h->n);
    free(h->results);
    free(h->store);
    memset(h, 0, sizeof *h);
}
