/* rank_summary: stages across the ranks of a multi-rank job (see rank_summary.h). */
#include "result/rank_summary.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats.h"
#include "result/result.h"
#include "result/summary_warn.h"
#include "result/summary.h"
#include "util/xalloc.h"

static int by_int32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* One rank's active time in one stage in one run. */
struct entry {
    uint32_t stage, rank_at, run;
    double ns;
};

static int by_stage_run_ns(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    if (x->stage != y->stage)
        return x->stage < y->stage ? -1 : 1;
    if (x->run != y->run)
        return x->run < y->run ? -1 : 1;
    return (x->ns > y->ns) - (x->ns < y->ns);
}

static int by_stage_rank(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    if (x->stage != y->stage)
        return x->stage < y->stage ? -1 : 1;
    return (x->rank_at > y->rank_at) - (x->rank_at < y->rank_at);
}

struct named {
    const char *name;
    uint32_t at;
};

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct named *)a)->name, ((const struct named *)b)->name);
}

/* Every rank of the runs, ascending, into out. */
static void union_ranks(struct rank_summary *out, const struct repetition *const *reps, size_t n)
{
    size_t total = 0;
    for (size_t k = 0; k < n; k++)
        total += reps[k]->stages.n_ranks;
    out->ranks = xmalloc((total + 1) * sizeof *out->ranks);
    for (size_t k = 0; k < n; k++) {
        const struct stage_data *d = &reps[k]->stages;
        if (d->n_ranks) /* d->ranks is NULL without ranks */
            memcpy(out->ranks + out->n_ranks, d->ranks, d->n_ranks * sizeof *d->ranks);
        out->n_ranks += d->n_ranks;
        if (d->world_size > out->world_size)
            out->world_size = d->world_size;
        out->ranks_dropped += d->ranks_dropped;
    }
    qsort(out->ranks, out->n_ranks, sizeof *out->ranks, by_int32);
    size_t m = 0;
    for (size_t i = 0; i < out->n_ranks; i++)
        if (m == 0 || out->ranks[m - 1] != out->ranks[i])
            out->ranks[m++] = out->ranks[i];
    out->n_ranks = m;
    out->hosts = xcalloc(m + 1, sizeof *out->hosts);
    for (size_t k = 0; k < n; k++) {
        const struct stage_data *d = &reps[k]->stages;
        for (size_t i = 0; d->rank_hosts && i < d->n_ranks; i++) {
            const int32_t *at = bsearch(&d->ranks[i], out->ranks, m, sizeof *out->ranks,
                                        by_int32);
            if (d->rank_hosts[i] && at && !out->hosts[at - out->ranks])
                out->hosts[at - out->ranks] = xstrdup(event_log_str(&reps[k]->log,
                                                                    d->rank_hosts[i]));
        }
    }
}

/* The entries of all runs: stage as the index among the summary's stages. */
static struct entry *collect(const struct rank_summary *out, const struct repetition *const *reps,
                             size_t n, const struct stage_summary *stages, size_t n_stages,
                             size_t *n_out)
{
    struct named *names = xmalloc((n_stages + 1) * sizeof *names);
    for (size_t j = 0; j < n_stages; j++)
        names[j] = (struct named){stages[j].name, (uint32_t)j};
    qsort(names, n_stages, sizeof *names, by_name);
    size_t total = 0;
    for (size_t k = 0; k < n; k++)
        total += reps[k]->stages.n_rank_stages;
    struct entry *e = xmalloc((total + 1) * sizeof *e);
    size_t m = 0;
    for (size_t k = 0; k < n; k++) {
        const struct stage_data *d = &reps[k]->stages;
        for (size_t i = 0; i < d->n_rank_stages; i++) {
            const struct rank_stage *rs = &d->rank_stages[i];
            struct named key = {event_log_str(&reps[k]->log, d->stages[rs->name - 1].name), 0};
            const struct named *hit = bsearch(&key, names, n_stages, sizeof *names, by_name);
            const int32_t *r = bsearch(&rs->rank, out->ranks, out->n_ranks, sizeof *out->ranks,
                                       by_int32);
            if (hit && r) /* a stage beyond the summary's bound of names is not summarised */
                e[m++] = (struct entry){hit->at, (uint32_t)(r - out->ranks), (uint32_t)k,
                                        (double)rs->active_ns};
        }
    }
    free(names);
    *n_out = m;
    return e;
}

void rank_summary_compute(struct rank_summary *out, const struct repetition *const *reps,
                          size_t n, const struct stage_summary *stages, size_t n_stages)
{
    memset(out, 0, sizeof *out);
    union_ranks(out, reps, n);
    if (out->n_ranks == 0) {
        free(out->ranks);
        free(out->hosts);
        out->ranks = NULL;
        out->hosts = NULL;
        return;
    }
    size_t m;
    struct entry *e = collect(out, reps, n, stages, n_stages, &m);

    /* Per stage and run: slowest, fastest and median rank (entries sorted by time). */
    double *crit = xmalloc((n + 1) * sizeof *crit), *lo = xmalloc((n + 1) * sizeof *lo);
    double *mid = xmalloc((n + 1) * sizeof *mid), *skew = xmalloc((n + 1) * sizeof *skew);
    double *x = xmalloc((m + 1) * sizeof *x);
    out->stages = xcalloc(n_stages + 1, sizeof *out->stages);
    qsort(e, m, sizeof *e, by_stage_run_ns);
    for (size_t i = 0; i < m;) {
        uint32_t j = e[i].stage;
        struct rank_stage_summary *st = &out->stages[out->n_stages++];
        st->name = xstrdup(stages[j].name);
        size_t runs = 0, n_skew = 0;
        while (i < m && e[i].stage == j) {
            size_t a = i;
            while (i < m && e[i].stage == j && e[i].run == e[a].run)
                i++;
            size_t c = i - a; /* ranks of this run, fastest first */
            for (size_t q = 0; q < c; q++)
                x[q] = e[a + q].ns;
            crit[runs] = e[i - 1].ns;
            lo[runs] = e[a].ns;
            mid[runs] = stats_median(x, c);
            if (e[a].ns > 0)
                skew[n_skew++] = e[i - 1].ns / e[a].ns;
            runs++;
        }
        st->critical_ns = stats_median(crit, runs);
        st->min_ns = stats_median(lo, runs);
        st->median_ns = stats_median(mid, runs);
        st->skew = n_skew ? stats_median(skew, n_skew) : NAN;
    }
    free(crit);
    free(lo);
    free(mid);
    free(skew);

    /* Per stage and rank: the median over the runs, the slowest rank and the scores. */
    qsort(e, m, sizeof *e, by_stage_rank);
    size_t s = 0;
    for (size_t i = 0; i < m; s++) {
        uint32_t j = e[i].stage;
        struct rank_stage_summary *st = &out->stages[s];
        st->rank_ns = xmalloc(out->n_ranks * sizeof *st->rank_ns);
        st->score = xmalloc(out->n_ranks * sizeof *st->score);
        for (size_t r = 0; r < out->n_ranks; r++)
            st->rank_ns[r] = st->score[r] = NAN;
        double fastest = INFINITY, slowest = -1;
        while (i < m && e[i].stage == j) {
            size_t a = i;
            while (i < m && e[i].stage == j && e[i].rank_at == e[a].rank_at)
                i++;
            for (size_t q = a; q < i; q++)
                x[q - a] = e[q].ns;
            double v = stats_median(x, i - a);
            st->rank_ns[e[a].rank_at] = v;
            st->n_ranks++;
            if (v < fastest) {
                fastest = v;
                st->fastest_rank = out->ranks[e[a].rank_at];
            }
            if (v > slowest) {
                slowest = v;
                st->slowest_rank = out->ranks[e[a].rank_at];
            }
        }
        for (size_t r = 0; r < out->n_ranks; r++)
            if (isfinite(st->rank_ns[r]))
                st->score[r] = st->rank_ns[r] > 0 ? fastest / st->rank_ns[r] : 1;
    }
    free(x);
    free(e);
}

void rank_summary_free(struct rank_summary *s)
{
    for (size_t i = 0; i < s->n_stages; i++) {
        free(s->stages[i].name);
        free(s->stages[i].rank_ns);
        free(s->stages[i].score);
    }
    free(s->stages);
    for (size_t r = 0; s->hosts && r < s->n_ranks; r++)
        free(s->hosts[r]);
    free(s->hosts);
    free(s->ranks);
    memset(s, 0, sizeof *s);
}

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *rank_summary_json(const struct rank_summary *s)
{
    if (s->n_ranks == 0)
        return json_null();
    json_t *ranks = json_array(), *stages = json_array(), *hosts = json_object();
    for (size_t r = 0; r < s->n_ranks; r++) {
        json_array_append_new(ranks, json_integer(s->ranks[r]));
        if (!s->hosts || !s->hosts[r])
            continue;
        if (!json_object_get(hosts, s->hosts[r]))
            json_object_set_new(hosts, s->hosts[r], json_array());
        json_array_append_new(json_object_get(hosts, s->hosts[r]), json_integer(s->ranks[r]));
    }
    for (size_t i = 0; i < s->n_stages; i++) {
        const struct rank_stage_summary *st = &s->stages[i];
        json_t *per = json_array();
        for (size_t r = 0; r < s->n_ranks; r++) {
            if (!isfinite(st->rank_ns[r]))
                continue;
            json_array_append_new(per, json_pack(
                "{s:i, s:o, s:o, s:o}", "rank", (int)s->ranks[r], "active_ns_median",
                num(st->rank_ns[r]), "score", num(st->score[r]), "vs_median",
                num(st->median_ns > 0 ? st->rank_ns[r] / st->median_ns - 1 : NAN)));
        }
        json_array_append_new(stages, json_pack(
            "{s:s, s:I, s:o, s:o, s:o, s:o, s:i, s:i, s:o}", "name", st->name, "ranks",
            (json_int_t)st->n_ranks, "critical_path_ns", num(st->critical_ns), "min_ns",
            num(st->min_ns), "median_ns", num(st->median_ns), "skew", num(st->skew),
            "slowest_rank", (int)st->slowest_rank, "fastest_rank", (int)st->fastest_rank,
            "per_rank", per));
    }
    json_t *out = json_pack("{s:o, s:o, s:I, s:o}", "ranks", ranks, "world_size",
                            s->world_size > 0 ? json_integer(s->world_size) : json_null(),
                            "ranks_dropped", (json_int_t)s->ranks_dropped, "stages", stages);
    if (json_object_size(hosts))
        json_object_set_new(out, "hosts", hosts);
    else
        json_decref(hosts);
    return out;
}

/* How rank ended (its rank-exec's report; a failure before a success when it has several), or
 * NULL. */
static const struct rank_exit *rank_exit_of(const struct stage_data *d, int32_t rank)
{
    const struct rank_exit *found = NULL;
    for (size_t i = 0; i < d->n_rank_exits; i++)
        if (d->rank_exits[i].rank == rank && (!found || found->code == 0))
            found = &d->rank_exits[i];
    return found;
}

void rank_warnings(struct summary *s, const struct result *r)
{
    const struct repetition *reps = r->reps;
    size_t n = r->n_reps, failed = 0, ranked = 0;
    for (size_t k = 0; k < n; k++)
        ranked += reps[k].stages.n_ranks > 0;
    if (r->config && r->config->ranks && n > 0 && ranked == 0)
        summary_warn(s, "no_ranks", "--ranks: no process announced a rank, so there are no "
                     "stages per rank: mark stages with mlbench's C or Python client (they read "
                     "the launcher's rank variables), or start each rank as `mlbench rank-exec "
                     "-- PROGRAM` (docs/ranks.md)");
    /* Ranks that never reported: WORLD_SIZE says how many there are. */
    for (size_t k = 0; k < n; k++) {
        const struct stage_data *d = &reps[k].stages;
        if (d->world_size > 0 && d->n_ranks > 0 && d->ranks_dropped == 0 &&
            (size_t)d->world_size > d->n_ranks) {
            bool listening = r->config && r->config->ranks_listen;
            summary_warn(s, "ranks_missing", "run %d: the job has %d ranks (WORLD_SIZE) but "
                         "only %zu reported: %s (docs/ranks.md)", reps[k].index + 1,
                         (int)d->world_size, d->n_ranks, listening ?
                         "start each rank as `mlbench rank-exec -- PROGRAM` and pass the "
                         "collector's address on to the other hosts (mpirun -x "
                         "MLBENCH_RANK_COLLECTOR)" :
                         "ranks on other hosts reach mlbench through `mlbench run "
                         "--ranks-listen ADDR` and `mlbench rank-exec` on each host");
            break;
        }
    }
    char first[200] = "";
    for (size_t k = 0; k < n; k++) {
        const struct stage_data *d = &reps[k].stages;
        for (size_t i = 0; i < d->n_rank_exits; i++) {
            const struct rank_exit *x = &d->rank_exits[i];
            if (x->code == 0)
                continue;
            if (failed++ == 0) {
                const char *name = x->signal ? sigabbrev_np(x->signal) : NULL;
                if (x->signal)
                    snprintf(first, sizeof first, "rank %d (pid %d) was killed by SIG%s in run "
                             "%d", (int)x->rank, (int)x->pid, name ? name : "?",
                             reps[k].index + 1);
                else
                    snprintf(first, sizeof first, "rank %d (pid %d) exited with status %d in "
                             "run %d", (int)x->rank, (int)x->pid, x->code, reps[k].index + 1);
            }
        }
    }
    if (failed == 1)
        summary_warn(s, "rank_failed", "%s: look at that rank's output (--show-output)",
                     first);
    else if (failed > 1)
        summary_warn(s, "rank_failed", "%s, then %zu more rank exit(s) failed (a launcher "
                     "stops the other ranks when one fails): look at the first one's output "
                     "(--show-output)", first, failed - 1);
}

json_t *rank_run_json(const struct stage_data *d, const struct event_log *log)
{
    if (d->n_ranks == 0)
        return json_null();
    json_t *out = json_array();
    size_t i = 0;
    for (size_t r = 0; r < d->n_ranks; r++) {
        json_t *stages = json_array();
        while (i < d->n_rank_stages && d->rank_stages[i].rank < d->ranks[r])
            i++; /* not reached: every rank of rank_stages is in ranks */
        for (; i < d->n_rank_stages && d->rank_stages[i].rank == d->ranks[r]; i++) {
            const struct rank_stage *rs = &d->rank_stages[i];
            json_array_append_new(stages, json_pack(
                "{s:s, s:I, s:I, s:I}", "name", event_log_str(log, d->stages[rs->name - 1].name),
                "count", (json_int_t)rs->count, "active_ns", (json_int_t)rs->active_ns,
                "busy_ns", (json_int_t)rs->busy_ns));
        }
        json_t *jr = json_pack("{s:i, s:o}", "rank", (int)d->ranks[r], "stages", stages);
        if (d->rank_hosts && d->rank_hosts[r])
            json_object_set_new(jr, "host", json_string(event_log_str(log, d->rank_hosts[r])));
        const struct rank_exit *x = rank_exit_of(d, d->ranks[r]);
        if (x && x->signal) {
            const char *name = sigabbrev_np(x->signal);
            char sig[24];
            snprintf(sig, sizeof sig, "SIG%s", name ? name : "?");
            json_object_set_new(jr, "exit", json_pack("{s:i, s:s}", "signal", x->signal,
                                                      "signal_name", sig));
        } else if (x) {
            json_object_set_new(jr, "exit", json_pack("{s:i}", "code", x->code));
        }
        json_array_append_new(out, jr);
    }
    return out;
}
