/* store_entry: a result document as the store's rows hold it (struct store_entry, store.h):
 * the id, label, command, host, commits and the medians of the whole run and of each stage,
 * read defensively from a file that may be anybody's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/jsonx.h"
#include "util/xalloc.h"
#include "store/store_ops.h"

static char *json_strdup(const json_t *obj, const char *key)
{
    const char *v = json_string_value(json_object_get(obj, key));
    return v ? xstrdup(v) : NULL;
}

#define STORE_MAX_RUNS 1000000000LL /* more runs than any result holds (run -r allows 10^6) */

static void stats_from_json(const json_t *o, struct store_stats *t)
{
    t->n = (long)jsonx_count(o, "n", STORE_MAX_RUNS, 0);
    t->median_ns = jsonx_num(o, "median");
    t->ci_low_ns = jsonx_num(o, "ci_low");
    t->ci_high_ns = jsonx_num(o, "ci_high");
    t->ci_level = jsonx_num(o, "ci_level");
    t->mad_ns = jsonx_num(o, "mad");
}

/* The git commit of the working directory the result was measured in, where the environment
 * records one (its shape may grow: the places it has been put are all read). */
static char *workdir_commit(const json_t *env)
{
    const json_t *git = json_object_get(env, "git");
    const char *c = json_string_value(json_object_get(git, "commit"));
    if (!c)
        c = json_string_value(json_object_get(env, "git_commit"));
    if (!c)
        c = json_string_value(json_object_get(json_object_get(env, "workdir"), "git_commit"));
    return c ? xstrdup(c) : NULL;
}

/* Fills e from a result document (borrowed; missing fields give NULL, 0 or NAN) and path
 * (copied). Returns 0, or -1 when result has no string id (e is then empty). Release with
 * store_entry_clear. */
int store_entry_from_json(json_t *result, const char *path, struct store_entry *e)
{
    memset(e, 0, sizeof *e);
    e->file_mtime_ns = e->file_size = -1;
    const char *id = json_string_value(json_object_get(result, "id"));
    if (!id)
        return -1;
    e->id = xstrdup(id);
    e->path = xstrdup(path);
    e->label = json_strdup(result, "label");
    e->created = json_strdup(result, "created");
    e->status = json_strdup(result, "status");
    e->mlbench_commit = json_strdup(json_object_get(result, "mlbench"), "git_commit");
    const json_t *env = json_object_get(result, "environment");
    e->host = json_strdup(env, "hostname");
    e->workdir_commit = workdir_commit(env);

    const json_t *argv = json_object_get(json_object_get(result, "command"), "argv");
    size_t len = 1, i;
    const json_t *a;
    for (i = 0; (a = json_array_get(argv, i)); i++)
        if (json_is_string(a))
            len += json_string_length(a) + 1;
    e->command = xcalloc(len, 1);
    char *p = e->command;
    for (i = 0; (a = json_array_get(argv, i)); i++) {
        if (!json_is_string(a))
            continue;
        if (p != e->command)
            *p++ = ' ';
        memcpy(p, json_string_value(a), json_string_length(a));
        p += json_string_length(a);
    }

    const json_t *sum = json_object_get(result, "summary");
    /* counts from a file that may be anybody's: in range, and ok never above measured (a huge
     * runs_measured overflowed "N failed" in history: issue 12) */
    e->runs_measured = (long)jsonx_count(sum, "runs_measured", STORE_MAX_RUNS, 0);
    e->runs_ok = (long)jsonx_count(sum, "runs_ok", e->runs_measured, 0);
    stats_from_json(json_object_get(sum, "wall_ns"), &e->wall);
    const json_t *stages = json_object_get(sum, "stages");
    e->stages = xcalloc(json_array_size(stages) + 1, sizeof *e->stages);
    for (i = 0; (a = json_array_get(stages, i)); i++) {
        const char *name = json_string_value(json_object_get(a, "name"));
        if (!name)
            continue;
        struct store_stage *s = &e->stages[e->n_stages++];
        s->name = xstrdup(name);
        double depth = jsonx_num(a, "depth");
        s->depth = isfinite(depth) && depth >= 0 && depth < 1000 ? (int)depth : 0;
        stats_from_json(json_object_get(a, "active_ns"), &s->t);
    }
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
        free(e->stages[k].name);
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
