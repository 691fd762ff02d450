/* store_entry: a result document as the store's rows hold it (struct store_entry, store.h):
 * the id, label, command, host, commits and the medians of the whole run and of each stage,
 * read defensively from a file that may be anybody's. */
#include <stdlib.h>
#include <string.h>

#include "doc/result.h"
#include "store/store_ops.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

#define STORE_MAX_RUNS 1000000000LL /* more runs than any result holds (run -r allows 10^6) */

/* A count from a file that may be anybody's, in [0, max]: 0 outside it. */
static long count_in(long long n, long long max)
{
    return n >= 0 && n <= max ? (long)n : 0;
}

static void stats_from_doc(const struct doc_stats *d, struct doc_history_stats *t)
{
    t->n = count_in(d->n, STORE_MAX_RUNS);
    t->median_ns = d->median;
    t->ci_low_ns = d->ci_low;
    t->ci_high_ns = d->ci_high;
    t->ci_level = d->ci_level;
    t->mad_ns = d->mad;
}

/* Fills e from a result document (borrowed; missing fields give NULL, 0 or NAN) and path
 * (copied). Returns 0, or -1 when result has no string id (e is then empty). Release with
 * store_entry_clear. */
int store_entry_from_json(json_t *result, const char *path, struct store_entry *e)
{
    memset(e, 0, sizeof *e);
    e->file_mtime_ns = e->file_size = -1;
    struct doc_result *r = doc_result_read(result);
    if (!r->id) {
        doc_result_free(r);
        return -1;
    }
    e->id = xstrdup(r->id);
    e->path = xstrdup(path);
    e->label = dup_or_null(r->label);
    e->created = dup_or_null(r->created);
    e->status = dup_or_null(r->status);
    e->mlbench_commit = dup_or_null(r->mlbench_commit);
    e->host = dup_or_null(r->hostname);
    e->workdir_commit = dup_or_null(doc_result_workdir_commit(r));

    struct strbuf cmd = STRBUF_INIT;
    for (size_t i = 0; i < r->n_argv; i++)
        if (r->argv[i]) {
            if (cmd.len)
                strbuf_putc(&cmd, ' ');
            strbuf_puts(&cmd, r->argv[i]);
        }
    e->command = strbuf_take(&cmd);

    /* counts from a file that may be anybody's: in range, and ok never above measured (a huge
     * runs_measured overflowed "N failed" in history: issue 12) */
    e->runs_measured = count_in(r->summary.runs_measured, STORE_MAX_RUNS);
    e->runs_ok = count_in(r->summary.runs_ok, e->runs_measured);
    stats_from_doc(&r->summary.wall, &e->wall);
    e->stages = xcalloc(r->summary.n_stages + 1, sizeof *e->stages);
    for (size_t i = 0; i < r->summary.n_stages; i++) {
        const struct doc_stage *st = &r->summary.stages[i];
        if (!st->name)
            continue;
        struct doc_history_stage *s = &e->stages[e->n_stages++];
        s->name = xstrdup(st->name);
        s->depth = st->depth;
        stats_from_doc(&st->active, &s->t);
    }
    doc_result_free(r);
    return 0;
}

/* Frees what e owns and zeroes it (e itself is the caller's). */
void store_entry_clear(struct store_entry *e)
{
    free(e->id);
    free(e->path);
    free(e->label);
    free(e->command);
    free(e->host);
    free(e->mlbench_commit);
    free(e->workdir_commit);
    free(e->created);
    free(e->status);
    for (size_t k = 0; k < e->n_stages; k++)
        free((char *)e->stages[k].name);
    free(e->stages);
    memset(e, 0, sizeof *e);
}

void store_entries_free(struct store_entry *e, size_t n)
{
    if (!e)
        return;
    for (size_t i = 0; i < n; i++)
        store_entry_clear(&e[i]);
    free(e);
}
