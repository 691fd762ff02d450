/* summary: statistics across repetitions and measurement-quality warnings (see summary.h). */
#include "result/summary.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlbench/marker_ring.h"
#include "result/result.h"
#include "util/units.h"
#include "util/xalloc.h"

void summary_free(struct summary *s)
{
    for (size_t i = 0; i < s->n_stages; i++) {
        free(s->stages[i].name);
        free(s->stages[i].resources);
        span_stats_free(s->stages[i].spans);
    }
    free(s->total_resources);
    for (size_t i = 0; i < s->n_counters; i++) {
        free(s->counters[i].name);
        free(s->counters[i].stage);
    }
    for (size_t i = 0; i < s->n_meta; i++) {
        free(s->meta[i].key);
        free(s->meta[i].value);
    }
    for (size_t i = 0; i < s->n_warnings; i++) {
        free(s->warnings[i].code);
        free(s->warnings[i].message);
    }
    free(s->stages);
    free(s->counters);
    free(s->meta);
    free(s->warnings);
    rank_summary_free(&s->ranks);
    memset(s, 0, sizeof *s);
}

/* The repetitions the statistics are over. */
struct used {
    const struct repetition **rep;
    size_t n;
    int warmups; /* runs before the first measured one: measured run k is index warmups + k - 1 */
};

/* The union of one kind of name (stages, counters or metadata keys) over the runs, in order of
 * first appearance, and where each is in each run: linear in the names, where searching every
 * run for every name was quadratic (issue 12: 20 000 stages took 16 s). The names are interned
 * in an event log's string table, whose ids are dense and in order of first appearance: name j
 * of the union is id j + 1. At most STAGES_MAX_NAMES (the bound of one run) are kept; later
 * ones are counted in dropped. */
struct name_union {
    struct event_log names;
    size_t n;        /* names kept */
    size_t n_runs;
    uint32_t *at;    /* at[k * n + j]: index + 1 of name j in run k's array, 0 if absent */
    size_t dropped;
};

enum name_kind { NAME_STAGE, NAME_COUNTER, NAME_META };

static size_t names_in(const struct repetition *rep, enum name_kind kind)
{
    const struct stage_data *d = &rep->stages;
    return kind == NAME_STAGE ? d->n_stages : kind == NAME_COUNTER ? d->n_counters : d->n_meta;
}

static const char *name_at(const struct repetition *rep, enum name_kind kind, size_t i)
{
    const struct stage_data *d = &rep->stages;
    uint32_t id = kind == NAME_STAGE     ? d->stages[i].name
                  : kind == NAME_COUNTER ? d->counters[i].name
                                         : d->meta[i].key;
    return event_log_str(&rep->log, id);
}

static void name_union_build(struct name_union *nu, const struct used *u, enum name_kind kind)
{
    memset(nu, 0, sizeof *nu);
    event_log_init(&nu->names);
    for (size_t k = 0; k < u->n; k++)
        for (size_t i = 0; i < names_in(u->rep[k], kind); i++) {
            const char *name = name_at(u->rep[k], kind, i);
            event_log_intern(&nu->names, name, strlen(name));
        }
    size_t distinct = nu->names.n_strings - 1;
    nu->n = distinct < STAGES_MAX_NAMES ? distinct : STAGES_MAX_NAMES;
    nu->dropped = distinct - nu->n;
    nu->n_runs = u->n;
    nu->at = xcalloc(u->n * nu->n + 1, sizeof *nu->at);
    for (size_t k = 0; k < u->n; k++)
        for (size_t i = 0; i < names_in(u->rep[k], kind); i++) {
            const char *name = name_at(u->rep[k], kind, i);
            size_t j = event_log_intern(&nu->names, name, strlen(name)) - 1;
            if (j < nu->n)
                nu->at[k * nu->n + j] = (uint32_t)i + 1;
        }
}

/* Name j of the union; its index in run k (-1 when absent). */
static const char *name_union_name(const struct name_union *nu, size_t j)
{
    return event_log_str(&nu->names, (uint32_t)j + 1);
}

static long name_union_at(const struct name_union *nu, size_t k, size_t j)
{
    return (long)nu->at[k * nu->n + j] - 1;
}

static void name_union_free(struct name_union *nu)
{
    event_log_free(&nu->names);
    free(nu->at);
}

/* Warns about a noisy series and about its outliers, naming the runs (1-based, measured). */
static void check_series(struct summary *s, const char *what, const double *x,
                         const struct used *u, const struct stats_summary *st)
{
    char a[32];
    if (st->n >= 2 && st->cv > SUMMARY_CV_WARN)
        summary_warn(s, "high_cv",
                     "%s varies by %.1f %% (coefficient of variation above %.0f %%): the machine "
                     "or the workload is noisy; close other programs, pin CPU frequency, or run "
                     "more repetitions", what, 100 * st->cv, 100 * SUMMARY_CV_WARN);
    if (st->n_outliers == 0 || st->n < SUMMARY_OUTLIER_MIN_N)
        return;
    double *z = xmalloc(st->n * sizeof *z);
    stats_modified_z(x, st->n, z);
    char runs[256] = "";
    size_t len = 0, n_far = 0;
    for (size_t i = 0; i < st->n; i++) {
        if (fabs(z[i]) <= STATS_OUTLIER_Z ||
            fabs(x[i] - st->median) <= SUMMARY_OUTLIER_MIN_DEVIATION * fabs(st->median))
            continue;
        n_far++;
        if (len + 40 < sizeof runs)
            len += (size_t)snprintf(runs + len, sizeof runs - len, "%s%d (%s)", len ? ", " : "",
                                    u->rep[i]->index + 1 - u->warmups,
                                    units_duration(x[i], a, sizeof a));
    }
    free(z);
    if (n_far == 0)
        return;
    summary_warn(s, "outliers",
                 "%s: %zu run(s) far from the others (robust z-score above %.1f): run %s; median "
                 "%s. Look for interference (other load, thermal throttling, caches) in those "
                 "runs",
                 what, n_far, STATS_OUTLIER_Z, runs,
                 units_duration(st->median, a, sizeof a));
}

/* Combines one series' statistics of several runs: median of the means, lowest min, highest
 * peak. rows[k] is NULL for a run without the stage. */
static struct metric_stat *combine_metrics(const struct metric_stat *const *rows, size_t n_rows,
                                           size_t n_series)
{
    struct metric_stat *out = xcalloc(n_series ? n_series : 1, sizeof *out);
    double *means = xmalloc((n_rows + 1) * sizeof *means);
    for (size_t j = 0; j < n_series; j++) {
        struct metric_stat *o = &out[j];
        *o = (struct metric_stat){NAN, NAN, NAN, 0};
        size_t n = 0;
        for (size_t k = 0; k < n_rows; k++) {
            const struct metric_stat *m = rows[k] ? &rows[k][j] : NULL;
            if (!m || m->n == 0)
                continue;
            means[n++] = m->mean;
            if (!(o->min <= m->min))
                o->min = m->min;
            if (!(o->peak >= m->peak))
                o->peak = m->peak;
            o->n += m->n;
        }
        if (n)
            o->mean = stats_median(means, n);
    }
    free(means);
    return out;
}

/* A growing array of span durations, ns. */
struct durations {
    double *v;
    size_t n, cap;
};

/* The durations of the closed spans of each stage of the union (nu->n arrays), pooled over the
 * runs of u: all spans held in memory, also those beyond RESULT_MAX_SPANS that the file leaves
 * out. The caller frees each v and the array. */
static struct durations *pool_spans(const struct used *u, const struct name_union *nu)
{
    struct durations *out = xcalloc(nu->n + 1, sizeof *out);
    for (size_t k = 0; k < u->n; k++) {
        const struct repetition *rep = u->rep[k];
        size_t n_ids = rep->log.n_strings + 1;
        uint32_t *j_of = xcalloc(n_ids, sizeof *j_of); /* name id -> union index + 1 */
        for (size_t j = 0; j < nu->n; j++) {
            long at = name_union_at(nu, k, j);
            if (at >= 0)
                j_of[rep->stages.stages[at].name] = (uint32_t)j + 1;
        }
        for (size_t i = 0; i < rep->stages.n_spans; i++) {
            const struct span *sp = &rep->stages.spans[i];
            if (!sp->closed || sp->name >= n_ids || !j_of[sp->name])
                continue;
            struct durations *d = &out[j_of[sp->name] - 1];
            d->v = xgrow(d->v, &d->cap, d->n + 1, sizeof *d->v);
            d->v[d->n++] = (double)(sp->end_ns - sp->start_ns);
        }
        free(j_of);
    }
    return out;
}

struct sibling_key {
    double first_ns; /* median first begin over the runs */
    size_t j;        /* union index: order of first appearance */
};

static int by_first_begin(const void *a, const void *b)
{
    const struct sibling_key *x = a, *y = b;
    if (x->first_ns != y->first_ns)
        return (x->first_ns > y->first_ns) - (x->first_ns < y->first_ns);
    return (x->j > y->j) - (x->j < y->j);
}

/* Puts s->stages (in union order) in tree order: parent[j] is the union index of stage j's
 * parent (SIZE_MAX for a root), first_ns[j] its median first begin. */
static void order_stages(struct summary *s, const size_t *parent, const double *first_ns)
{
    size_t n = s->n_stages;
    struct sibling_key *key = xmalloc((n + 1) * sizeof *key);
    size_t *pos = xmalloc((n + 1) * sizeof *pos), *par = xmalloc((n + 1) * sizeof *par);
    size_t *order = xmalloc((n + 1) * sizeof *order);
    for (size_t j = 0; j < n; j++)
        key[j] = (struct sibling_key){first_ns[j], j};
    qsort(key, n, sizeof *key, by_first_begin);
    for (size_t p = 0; p < n; p++)
        pos[key[p].j] = p;
    for (size_t p = 0; p < n; p++)
        par[p] = parent[key[p].j] < n ? pos[parent[key[p].j]] : SIZE_MAX;
    stages_tree_order(n, par, order);
    struct stage_summary *sorted = xmalloc((n + 1) * sizeof *sorted);
    for (size_t i = 0; i < n; i++)
        sorted[i] = s->stages[key[order[i]].j];
    free(s->stages);
    s->stages = sorted;
    free(order);
    free(par);
    free(pos);
    free(key);
}

/* The union index of the parent of stage t of run rep, or SIZE_MAX (a root, or a parent whose
 * name was not kept). */
static size_t parent_index(struct name_union *nu, const struct repetition *rep,
                           const struct stage_total *t)
{
    if (t->parent == STAGES_NO_NAME)
        return SIZE_MAX;
    const char *name = event_log_str(&rep->log, t->parent);
    size_t j = event_log_intern(&nu->names, name, strlen(name)) - 1; /* interned: its id */
    return j < nu->n ? j : SIZE_MAX;
}

/* Resources of one stage from the runs that have it (present, at index present_at[k] of run
 * k's stages). */
static struct metric_stat *stage_resources(const struct used *present, const size_t *present_at,
                                           size_t n_series)
{
    const struct metric_stat **rows = xcalloc(present->n + 1, sizeof *rows);
    for (size_t k = 0; k < present->n; k++)
        if (present->rep[k]->metrics)
            rows[k] = present->rep[k]->metrics[present_at[k]];
    struct metric_stat *m = combine_metrics(rows, present->n, n_series);
    free(rows);
    return m;
}

/* The span latencies of the stages of the union nu (in union order), over the ok runs only:
 * the spans of failed runs describe partial work. */
static void stage_latencies(struct summary *s, const struct used *u, const struct name_union *nu)
{
    struct durations *dur = pool_spans(&(struct used){u->rep, s->used_failed ? 0 : u->n,
                                                      u->warmups}, nu);
    for (size_t j = 0; j < nu->n; j++) {
        s->stages[j].spans = span_stats_make(dur[j].v, dur[j].n);
        free(dur[j].v);
    }
    free(dur);
}

static void summarize_stages(struct summary *s, const struct used *u, double wall_median)
{
    double *x = xmalloc(u->n * sizeof *x), *busy = xmalloc(u->n * sizeof *x);
    double *span = xmalloc(u->n * sizeof *x), *count = xmalloc(u->n * sizeof *x);
    double *overlap = xmalloc(u->n * sizeof *x);
    struct used present = {xmalloc(u->n * sizeof *present.rep), 0, u->warmups};
    size_t *present_at = xmalloc(u->n * sizeof *present_at); /* stage index in present.rep[k] */

    struct name_union nu;
    name_union_build(&nu, u, NAME_STAGE);
    size_t *parent = xmalloc((nu.n + 1) * sizeof *parent);
    double *first = xmalloc((nu.n + 1) * sizeof *first), *begin = xmalloc(u->n * sizeof *begin);
    s->n_stages = nu.n;
    s->stages = xcalloc(nu.n + 1, sizeof *s->stages);
    s->names_dropped += nu.dropped;
    for (size_t j = 0; j < nu.n; j++) {
        s->stages[j].name = xstrdup(name_union_name(&nu, j));
        s->stages[j].depth = INT_MAX;
    }
    for (size_t j = 0; j < s->n_stages; j++) {
        struct stage_summary *ss = &s->stages[j];
        size_t n = 0;
        present.n = 0;
        for (size_t k = 0; k < u->n; k++) {
            long at = name_union_at(&nu, k, j);
            if (at < 0)
                continue;
            const struct stage_total *t = &u->rep[k]->stages.stages[at];
            x[n] = (double)t->active_ns;
            busy[n] = (double)t->busy_ns;
            span[n] = (double)(t->last_ns - t->first_ns);
            count[n] = (double)t->count;
            overlap[n] = (double)t->overlap_ns;
            begin[n] = (double)t->first_ns;
            if (t->depth < ss->depth) { /* its parent where it is least deep, in the first run */
                ss->depth = t->depth;
                parent[j] = parent_index(&nu, u->rep[k], t);
            }
            present_at[present.n] = (size_t)at;
            present.rep[present.n++] = u->rep[k];
            n++;
        }
        ss->n = n;
        if (s->n_series)
            ss->resources = stage_resources(&present, present_at, s->n_series);
        stats_summarize(x, n, &ss->active);
        ss->busy_median_ns = stats_median(busy, n);
        ss->overlap_median_ns = stats_median(overlap, n);
        ss->span_median_ns = stats_median(span, n);
        ss->count_median = stats_median(count, n);
        ss->share = wall_median > 0 ? ss->active.median / wall_median : 0;
        first[j] = stats_median(begin, n);
        if (ss->share >= 0.01) { /* noise in a stage that barely counts is not worth a warning */
            char what[160];
            snprintf(what, sizeof what, "stage '%s'", ss->name);
            check_series(s, what, x, &present, &ss->active);
        }
    }
    stage_latencies(s, u, &nu);
    order_stages(s, parent, first);
    free(parent);
    free(first);
    free(begin);
    free(present.rep);
    free(present_at);
    name_union_free(&nu);
    free(x);
    free(busy);
    free(overlap);
    free(span);
    free(count);
}

/* The active time of the stage named by id in run rep, ns; 0 when it is not there. */
static int64_t stage_active_ns(const struct repetition *rep, uint32_t id)
{
    for (size_t i = 0; i < rep->stages.n_stages; i++)
        if (rep->stages.stages[i].name == id)
            return rep->stages.stages[i].active_ns;
    return 0;
}

/* The stage of counter c of run rep into cs (the first run's, kept while every run agrees);
 * its rate over that stage's active time, or NAN. */
static double counter_stage(struct counter_summary *cs, bool first_run,
                            const struct repetition *rep, const struct counter_total *c)
{
    const char *name = c->stage == STAGES_NO_NAME ? NULL : event_log_str(&rep->log, c->stage);
    if (first_run) {
        cs->stage = name ? xstrdup(name) : NULL;
        cs->stage_mixed = c->stage_mixed;
    } else if (c->stage_mixed || !name != !cs->stage || (name && strcmp(name, cs->stage))) {
        cs->stage_mixed = true;
    }
    if (cs->stage_mixed) {
        free(cs->stage);
        cs->stage = NULL;
    }
    int64_t active = name ? stage_active_ns(rep, c->stage) : 0;
    return active > 0 ? c->sum / ((double)active / 1e9) : NAN;
}

static void summarize_counters(struct summary *s, const struct used *u)
{
    double *last = xmalloc(u->n * sizeof *last), *sum = xmalloc(u->n * sizeof *sum);
    double *rate = xmalloc(u->n * sizeof *rate), *stage_rate = xmalloc(u->n * sizeof *rate);
    struct name_union nu;
    name_union_build(&nu, u, NAME_COUNTER);
    s->n_counters = nu.n;
    s->counters = xcalloc(nu.n + 1, sizeof *s->counters);
    s->names_dropped += nu.dropped;
    for (size_t j = 0; j < s->n_counters; j++) {
        struct counter_summary *cs = &s->counters[j];
        *cs = (struct counter_summary){.name = xstrdup(name_union_name(&nu, j)), .count = true};
        size_t n = 0;
        for (size_t k = 0; k < u->n; k++) {
            long at = name_union_at(&nu, k, j);
            if (at < 0)
                continue;
            const struct counter_total *c = &u->rep[k]->stages.counters[at];
            cs->count = cs->count && c->count;
            last[n] = c->last;
            sum[n] = c->sum;
            double wall_s = (double)u->rep[k]->outcome.wall_ns / 1e9;
            rate[n] = wall_s > 0 ? c->sum / wall_s : 0;
            stage_rate[n] = counter_stage(cs, n == 0, u->rep[k], c);
            n++;
        }
        cs->n = n;
        /* A counter may carry non-finite values (a diverged loss): then no statistics. */
        if (stats_summarize(last, n, &cs->last) < 0)
            memset(&cs->last, 0, sizeof cs->last), cs->last.median = NAN;
        cs->sum_median = stats_median(sum, n);
        cs->rate_median = stats_median(rate, n);
        cs->stage_rate_median = cs->stage ? stats_median(stage_rate, n) : NAN;
    }
    free(stage_rate);
    free(last);
    free(sum);
    free(rate);
    name_union_free(&nu);
}

static void summarize_meta(struct summary *s, const struct used *u)
{
    struct name_union nu;
    name_union_build(&nu, u, NAME_META);
    s->n_meta = nu.n;
    s->meta = xcalloc(nu.n + 1, sizeof *s->meta);
    s->names_dropped += nu.dropped;
    for (size_t j = 0; j < s->n_meta; j++) {
        struct meta_summary *m = &s->meta[j];
        m->key = xstrdup(name_union_name(&nu, j));
        for (size_t k = 0; k < u->n; k++) { /* the last value sent; varies if any differs */
            long at = name_union_at(&nu, k, j);
            if (at < 0)
                continue;
            const char *value = event_log_str(&u->rep[k]->log, u->rep[k]->stages.meta[at].value);
            if (!m->value) {
                m->value = xstrdup(value);
            } else if (strcmp(m->value, value) != 0) {
                m->varies = true;
                free(m->value);
                m->value = xstrdup(value);
            }
        }
    }
    name_union_free(&nu);
}

/* Warm-up and first-run effects, failed runs, and marker problems. */
static void quality_warnings(struct summary *s, const struct result *r, const struct used *u)
{
    char a[32], b[32];
    const struct run_config *cfg = r->config;

    if (s->n_used > 0 && s->n_used < 3 && !cfg->load)
        summary_warn(s, "few_runs",
                     "only %zu measured run(s): no spread can be judged and no confidence "
                     "interval given; use -r 5 or more", s->n_used);
    else if (s->n_used >= 3 && s->wall.ci_level < 0.95)
        summary_warn(s, "low_ci_coverage",
                     "with %zu runs the interval of the median (min..max) covers only %.1f %%; "
                     "6 or more runs give a 95 %% interval", s->n_used, 100 * s->wall.ci_level);

    for (size_t i = 0; i < r->n_reps && s->valid; i++) {
        const struct repetition *rep = &r->reps[i];
        if (!rep->warmup || rep->outcome.status != RUN_OK)
            continue;
        double w = (double)rep->outcome.wall_ns;
        if (w > (1 + SUMMARY_WARMUP_SLOWER) * s->wall.median)
            summary_warn(s, "slow_warmup",
                         "warm-up run %d took %s, %.0f %% longer than the median of the measured "
                         "runs (%s): first-run effects (cold caches, JIT, autotuning) that the "
                         "warm-up kept out of the statistics", rep->index + 1,
                         units_duration(w, a, sizeof a), 100 * (w / s->wall.median - 1),
                         units_duration(s->wall.median, b, sizeof b));
    }
    if (cfg->warmup == 0 && u->n >= 3) {
        double *rest = xmalloc(u->n * sizeof *rest);
        for (size_t k = 1; k < u->n; k++)
            rest[k - 1] = (double)u->rep[k]->outcome.wall_ns;
        double med = stats_median(rest, u->n - 1), first = (double)u->rep[0]->outcome.wall_ns;
        free(rest);
        if (first > (1 + SUMMARY_WARMUP_SLOWER) * med)
            summary_warn(s, "slow_first_run",
                         "the first run took %s, %.0f %% longer than the median of the others "
                         "(%s): first-run effects are in the statistics; add a warm-up run (-w 1)",
                         units_duration(first, a, sizeof a), 100 * (first / med - 1),
                         units_duration(med, b, sizeof b));
    }

    size_t by_status[RUN_INTERRUPTED + 1] = {0};
    uint64_t malformed = 0, unbalanced = 0, unclosed = 0, dropped = 0, spans_cut = 0;
    uint64_t names_cut = 0, name_events_cut = 0, foreign = 0, ring_dropped = 0;
    const struct ring_drop *worst = NULL;
    int32_t first_foreign = 0;
    const char *example = NULL;
    for (size_t i = 0; i < r->n_reps; i++) {
        const struct repetition *rep = &r->reps[i];
        if (!rep->warmup)
            by_status[rep->outcome.status]++;
        malformed += rep->log.malformed;
        if (!foreign && rep->log.foreign)
            first_foreign = rep->log.first_foreign_pid;
        foreign += rep->log.foreign;
        dropped += rep->log.dropped;
        ring_dropped += rep->log.ring_dropped;
        for (size_t k = 0; k < rep->log.n_drops; k++)
            if (!worst || rep->log.drops[k].events > worst->events)
                worst = &rep->log.drops[k];
        unbalanced += rep->stages.unbalanced;
        names_cut += rep->stages.names_dropped;
        name_events_cut += rep->stages.name_events_dropped;
        if (rep->stages.n_spans > RESULT_MAX_SPANS)
            spans_cut += rep->stages.n_spans - RESULT_MAX_SPANS;
        if (rep->outcome.status == RUN_OK)
            unclosed += rep->stages.unclosed;
        if (!example && rep->log.n_examples)
            example = rep->log.example[0];
    }
    if (s->n_ok < s->n_measured) {
        size_t bad = s->n_measured - s->n_ok;
        summary_warn(s, s->n_ok ? "failed_runs" : "no_successful_run",
                     "%zu of %zu measured runs did not succeed (failed %zu, signaled %zu, timeout "
                     "%zu, interrupted %zu); %s", bad, s->n_measured, by_status[RUN_FAILED],
                     by_status[RUN_SIGNALED], by_status[RUN_TIMEOUT], by_status[RUN_INTERRUPTED],
                     s->n_ok ? "statistics are over the successful ones"
                             : "statistics are over all of them and describe partial work; no "
                               "analysis is made");
    }
    if (malformed)
        summary_warn(s, "malformed_markers",
                     "%llu malformed marker event(s) were ignored, e.g. %s",
                     (unsigned long long)malformed, example ? example : "?");
    if (foreign)
        summary_warn(s, "foreign_markers",
                     "%llu marker datagram(s) from processes outside the workload's process tree "
                     "were ignored, the first from pid %ld: another process sent to the marker "
                     "socket, a daemon started the sender (docker run, systemd-run: run mlbench "
                     "where the workload starts), or a worker ended before its first marker could "
                     "be checked (docs/security.md)", (unsigned long long)foreign,
                     (long)first_foreign);
    if (unbalanced)
        summary_warn(s, "unbalanced_markers",
                     "%llu stage end(s) did not match an open stage of the same name on the same "
                     "thread; stages nest per thread (docs/markers.md)",
                     (unsigned long long)unbalanced);
    if (unclosed)
        summary_warn(s, "unclosed_stages",
                     "%llu stage(s) were begun but never ended in successful runs; they were "
                     "closed at the end of the run", (unsigned long long)unclosed);
    if (dropped)
        summary_warn(s, "events_dropped",
                     "%llu marker events beyond %u per run were dropped",
                     (unsigned long long)dropped, EVENT_LOG_MAX_EVENTS);
    if (ring_dropped)
        summary_warn(s, "ring_full",
                     "%llu marker events were dropped because a thread's ring was full (the "
                     "most from pid %ld thread %ld: %llu): mlbench read them more slowly than "
                     "the workload wrote them, and stages that lost their begin or end count as "
                     "unbalanced or unclosed. Set %s larger (the default is %u bytes a "
                     "thread), or send fewer events (docs/markers.md)",
                     (unsigned long long)ring_dropped, (long)worst->pid, (long)worst->tid,
                     (unsigned long long)worst->events, MLBENCH_MARKER_RING_BYTES_ENV,
                     MLB_RING_DEFAULT_BYTES);
    if (names_cut || s->names_dropped)
        summary_warn(s, "names_dropped",
                     "more than %d distinct stage, counter or metadata names: %llu name(s) in "
                     "single runs (%llu events) and %zu over all runs were not aggregated. Name "
                     "stages by role and put the iteration in a counter (docs/markers.md)",
                     STAGES_MAX_NAMES, (unsigned long long)names_cut,
                     (unsigned long long)name_events_cut, s->names_dropped);
    if (spans_cut)
        summary_warn(s, "spans_truncated",
                     "%llu spans beyond %d per run were left out of the result file (stage totals "
                     "and statistics include them)", (unsigned long long)spans_cut, RESULT_MAX_SPANS);
    if (r->events_outside_runs)
        summary_warn(s, "events_outside_runs",
                     "%llu marker events arrived while no run was in progress (leftover "
                     "processes?) and were ignored", (unsigned long long)r->events_outside_runs);
}

void summary_compute(struct result *r, const struct machine_facts *facts)
{
    struct summary *s = &r->summary;
    summary_free(s);

    struct used u = {xmalloc((r->n_reps + 1) * sizeof *u.rep), 0, r->config->warmup};
    for (size_t i = 0; i < r->n_reps; i++) {
        if (r->reps[i].warmup)
            continue;
        s->n_measured++; /* a run whose --prepare failed counts, as a failed run */
        if (r->reps[i].outcome.status == RUN_OK)
            u.rep[u.n++] = &r->reps[i];
    }
    s->n_ok = u.n;
    u.n = gpu_clock_mark(r, facts, u.rep, u.n); /* each run's GPU clock; --discard-throttled */
    if (u.n == 0) { /* describe what there is rather than nothing */
        s->used_failed = s->n_measured > 0;
        for (size_t i = 0; i < r->n_reps; i++)
            if (!r->reps[i].warmup && !r->reps[i].prepare_error)
                u.rep[u.n++] = &r->reps[i];
    }
    s->n_used = u.n;
    s->valid = u.n > 0;
    s->outside_median_ns = -1;

    if (s->valid) {
        double *wall = xmalloc(u.n * sizeof *wall), *user = xmalloc(u.n * sizeof *user);
        double *sys = xmalloc(u.n * sizeof *sys), *rss = xmalloc(u.n * sizeof *rss);
        double *cores = xmalloc(u.n * sizeof *cores), *outside = xmalloc(u.n * sizeof *outside);
        size_t n_outside = 0;
        for (size_t k = 0; k < u.n; k++) {
            const struct run_outcome *o = &u.rep[k]->outcome;
            wall[k] = (double)o->wall_ns;
            user[k] = (double)o->user_ns;
            sys[k] = (double)o->sys_ns;
            rss[k] = (double)o->max_rss_bytes;
            cores[k] = o->wall_ns > 0 ? (double)(o->user_ns + o->sys_ns) / (double)o->wall_ns : 0;
            if (u.rep[k]->stages.outside_ns >= 0)
                outside[n_outside++] = (double)u.rep[k]->stages.outside_ns;
        }
        stats_summarize(wall, u.n, &s->wall);
        stats_summarize(user, u.n, &s->user);
        stats_summarize(sys, u.n, &s->sys);
        stats_summarize(rss, u.n, &s->max_rss);
        s->cpu_cores_median = stats_median(cores, u.n);
        if (n_outside)
            s->outside_median_ns = stats_median(outside, n_outside);
        check_series(s, "total", wall, &u, &s->wall);
        for (size_t k = 0; k < u.n && !s->series; k++) {
            if (u.rep[k]->metrics) {
                s->series = u.rep[k]->samples.defs;
                s->n_series = u.rep[k]->samples.n_series;
            }
        }
        if (s->n_series) {
            const struct metric_stat **rows = xcalloc(u.n + 1, sizeof *rows);
            for (size_t k = 0; k < u.n; k++)
                if (u.rep[k]->metrics)
                    rows[k] = u.rep[k]->metrics[u.rep[k]->stages.n_stages];
            s->total_resources = combine_metrics(rows, u.n, s->n_series);
            free(rows);
        }
        summarize_stages(s, &u, s->wall.median);
        rank_summary_compute(&s->ranks, u.rep, u.n, s->stages, s->n_stages);
        summarize_counters(s, &u);
        summarize_meta(s, &u);
        free(wall);
        free(user);
        free(sys);
        free(rss);
        free(cores);
        free(outside);
    }
    quality_warnings(s, r, &u);
    rank_warnings(s, r);
    gpu_clock_summarize(s, u.rep, u.n);
    free(u.rep);
}
