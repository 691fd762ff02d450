/* stages: aggregation of marker events into spans and totals (see stages.h). */
#include "measure/stages.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/units.h"
#include "util/xalloc.h"
#include "util/hash.h"

/* Open stages of one thread. */
struct thread_stack {
    int32_t pid, tid;
    size_t *open; /* indices into the span array */
    size_t n, cap;
    int32_t base; /* depth of its outermost stage: > 0 in a process adopted by a launcher */
    uint32_t base_parent; /* parent of its outermost stages: the stage open on the adopting
                           * thread, or STAGES_NO_NAME */
};

/* "M ... mlbench.adopt CHILD": the child's stages nest under the stage open on the sender's
 * thread (a workflow driver, a launcher). */
struct adoption {
    int32_t child, pid, tid;
};

struct threads {
    struct thread_stack *t;
    size_t n, cap;
    size_t *slot; /* open addressing: index + 1 into t, 0 = empty */
    size_t n_slot;
};

static size_t thread_hash(int32_t pid, int32_t tid, size_t mask)
{
    return (size_t)(hash_thread(pid, tid) >> 17) & mask;
}

static struct thread_stack *thread_get(struct threads *th, int32_t pid, int32_t tid)
{
    size_t mask = th->n_slot - 1;
    size_t i = thread_hash(pid, tid, mask);
    for (; th->slot[i]; i = (i + 1) & mask) {
        struct thread_stack *s = &th->t[th->slot[i] - 1];
        if (s->pid == pid && s->tid == tid)
            return s;
    }
    th->t = xgrow(th->t, &th->cap, th->n + 1, sizeof *th->t);
    struct thread_stack *s = &th->t[th->n++];
    memset(s, 0, sizeof *s);
    s->pid = pid;
    s->tid = tid;
    th->slot[i] = th->n;
    if (th->n * 2 > th->n_slot) { /* grow and reinsert */
        free(th->slot);
        th->n_slot *= 2;
        th->slot = xcalloc(th->n_slot, sizeof *th->slot);
        for (size_t k = 0; k < th->n; k++) {
            size_t j = thread_hash(th->t[k].pid, th->t[k].tid, th->n_slot - 1);
            while (th->slot[j])
                j = (j + 1) & (th->n_slot - 1);
            th->slot[j] = k + 1;
        }
    }
    return s;
}

static void push_span(struct stage_data *d, size_t *cap, const struct span *sp)
{
    d->spans = xgrow(d->spans, cap, d->n_spans + 1, sizeof *d->spans);
    d->spans[d->n_spans++] = *sp;
}

/* Per name id: the index + 1 of its counter, metadata item or stage name among those kept,
 * NAME_DROPPED for a name beyond the bound, 0 for one not seen yet. */
#define NAME_DROPPED UINT32_MAX

struct name_maps {
    uint32_t *stage, *counter, *meta;
    size_t n_stage_names;
};

/* The slot of name in map, taking a new one while fewer than STAGES_MAX_NAMES are in use;
 * NAME_DROPPED (counted) beyond. */
static uint32_t name_slot(struct stage_data *d, uint32_t *map, uint32_t name, size_t n_used)
{
    if (map[name] == 0) {
        if (n_used < STAGES_MAX_NAMES) {
            map[name] = (uint32_t)n_used + 1;
        } else {
            map[name] = NAME_DROPPED;
            d->names_dropped++;
        }
    }
    if (map[name] == NAME_DROPPED)
        d->name_events_dropped++;
    return map[name];
}

/* Keeps every stride-th sample of c as a point, halving the points kept when they are full. */
static void add_point(struct counter_total *c, int64_t t, double value)
{
    if ((c->n - 1) % c->stride != 0)
        return;
    if (c->n_points == STAGES_MAX_COUNTER_POINTS) {
        for (size_t i = 0; 2 * i < c->n_points; i++)
            c->points[i] = c->points[2 * i];
        c->n_points = (c->n_points + 1) / 2;
        c->stride *= 2;
        if ((c->n - 1) % c->stride != 0)
            return;
    }
    if (!c->points)
        c->points = xmalloc(STAGES_MAX_COUNTER_POINTS * sizeof *c->points);
    c->points[c->n_points++] = (struct counter_point){t, value, c->sum};
}

/* stage: the innermost stage open on the sending thread, or STAGES_NO_NAME. */
static void add_counter(struct stage_data *d, struct name_maps *m, const struct marker_event *e,
                        int64_t t, uint32_t stage)
{
    uint32_t slot = name_slot(d, m->counter, e->name, d->n_counters);
    if (slot == NAME_DROPPED)
        return;
    if (slot > d->n_counters) {
        d->counters = xreallocarray(d->counters, d->n_counters + 1, sizeof *d->counters);
        d->counters[d->n_counters++] = (struct counter_total){
            .name = e->name, .min = e->number, .max = e->number, .count = true,
            .stage = stage, .stride = 1};
    }
    struct counter_total *c = &d->counters[slot - 1];
    if (!(e->number >= 0 && e->number == floor(e->number)))
        c->count = false;
    if (c->n == 0)
        c->stage = stage;
    else if (c->stage != stage && !c->stage_mixed)
        c->stage_mixed = true;
    if (c->stage_mixed)
        c->stage = STAGES_NO_NAME;
    c->n++;
    c->sum += e->number;
    c->last = e->number;
    c->last_ns = t;
    if (e->number < c->min)
        c->min = e->number;
    if (e->number > c->max)
        c->max = e->number;
    add_point(c, t, e->number);
}

static void add_meta(struct stage_data *d, struct name_maps *m, const struct marker_event *e)
{
    uint32_t slot = name_slot(d, m->meta, e->name, d->n_meta);
    if (slot == NAME_DROPPED)
        return;
    if (slot > d->n_meta) {
        d->meta = xreallocarray(d->meta, d->n_meta + 1, sizeof *d->meta);
        d->meta[d->n_meta++] = (struct meta_item){.key = e->name};
    }
    d->meta[slot - 1].value = e->value;
}

static int span_by_name_start(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    if (x->name != y->name)
        return x->name < y->name ? -1 : 1;
    return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

static int span_by_start(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

static int stage_by_first(const void *a, const void *b)
{
    const struct stage_total *x = a, *y = b;
    if (x->first_ns != y->first_ns)
        return (x->first_ns > y->first_ns) - (x->first_ns < y->first_ns);
    return (x->depth > y->depth) - (x->depth < y->depth);
}

/* Totals per stage name, from spans sorted by (name, start), of n_names distinct names. */
static void totals(struct stage_data *d, const struct span *sorted, size_t n, size_t n_names)
{
    d->stages = xcalloc(n_names, sizeof *d->stages);
    for (size_t i = 0; i < n;) {
        struct stage_total t = {.name = sorted[i].name, .depth = sorted[i].depth,
                                .parent = sorted[i].parent,
                                .first_ns = sorted[i].start_ns, .last_ns = sorted[i].end_ns};
        int64_t cur_start = sorted[i].start_ns, cur_end = sorted[i].end_ns;
        size_t j = i;
        for (; j < n && sorted[j].name == t.name; j++) {
            const struct span *s = &sorted[j];
            t.count++;
            t.unclosed += !s->closed;
            /* saturates: thousands of threads each in a span as long as the run overflow */
            int64_t len = s->end_ns - s->start_ns;
            t.busy_ns = t.busy_ns > INT64_MAX - len ? INT64_MAX : t.busy_ns + len;
            if (s->depth < t.depth) {
                t.depth = s->depth;
                t.parent = s->parent;
            }
            if (s->end_ns > t.last_ns)
                t.last_ns = s->end_ns;
            if (s->start_ns > cur_end) { /* disjoint: close the merged interval */
                t.active_ns += cur_end - cur_start;
                cur_start = s->start_ns;
                cur_end = s->end_ns;
            } else if (s->end_ns > cur_end) {
                cur_end = s->end_ns;
            }
        }
        t.active_ns += cur_end - cur_start;
        d->stages[d->n_stages++] = t;
        i = j;
    }
    qsort(d->stages, d->n_stages, sizeof *d->stages, stage_by_first);
}

void stages_tree_order(size_t n, const size_t *parent, size_t *order)
{
    /* children of i: kids[first[i] .. first[i + 1]), in the given order (a counting sort) */
    size_t *first = xcalloc(n + 2, sizeof *first), *kids = xmalloc((n + 1) * sizeof *kids);
    size_t *stack = xmalloc((n + 1) * sizeof *stack);
    bool *done = xcalloc(n + 1, sizeof *done);
    for (size_t i = 0; i < n; i++)
        if (parent[i] < n)
            first[parent[i] + 2]++;
    for (size_t i = 2; i < n + 2; i++)
        first[i] += first[i - 1];
    for (size_t i = 0; i < n; i++)
        if (parent[i] < n)
            kids[first[parent[i] + 1]++] = i;
    size_t n_out = 0;
    for (size_t root = 0; root < n; root++) {
        if (parent[root] < n)
            continue;
        size_t top = 0;
        stack[top++] = root;
        while (top) {
            size_t i = stack[--top];
            if (done[i])
                continue;
            done[i] = true;
            order[n_out++] = i;
            for (size_t k = first[i + 1]; k > first[i]; k--) /* so the first child pops first */
                stack[top++] = kids[k - 1];
        }
    }
    for (size_t i = 0; i < n; i++)
        if (!done[i])
            order[n_out++] = i;
    free(done);
    free(stack);
    free(kids);
    free(first);
}

/* Puts d->stages (sorted by first begin) in tree order; stage_of is scratch indexed by name. */
static void order_stages(struct stage_data *d, uint32_t *stage_of)
{
    size_t n = d->n_stages;
    size_t *parent = xmalloc((n + 1) * sizeof *parent), *order = xmalloc((n + 1) * sizeof *order);
    for (size_t k = 0; k < n; k++)
        stage_of[d->stages[k].name] = (uint32_t)k;
    for (size_t k = 0; k < n; k++)
        parent[k] = d->stages[k].parent == STAGES_NO_NAME ? SIZE_MAX
                                                          : stage_of[d->stages[k].parent];
    stages_tree_order(n, parent, order);
    struct stage_total *sorted = xmalloc((n + 1) * sizeof *sorted);
    for (size_t k = 0; k < n; k++)
        sorted[k] = d->stages[order[k]];
    free(d->stages);
    d->stages = sorted;
    free(order);
    free(parent);
}

struct edge {
    int64_t t;
    size_t stage;
    int delta; /* +1 begin, -1 end */
};

/* By time; at equal times ends first, so back-to-back stages do not overlap. */
static int edge_order(const void *a, const void *b)
{
    const struct edge *x = a, *y = b;
    if (x->t != y->t)
        return (x->t > y->t) - (x->t < y->t);
    return x->delta - y->delta;
}

/* Sets each top-level stage's overlap_ns: a sweep over the begins and ends of the top-level
 * spans counting, per stage, its open spans, and over all stages how many distinct stages are
 * open. The time during which two or more were open accumulates in one clock (shared); a stage
 * takes the clock's advance from its opening to its closing, so the sweep is linear in the
 * edges however many stages are open at once. stage_of maps a name id to its stage index. */
static void overlaps(struct stage_data *d, const struct span *spans, size_t n,
                     uint32_t *stage_of)
{
    for (size_t k = 0; k < d->n_stages; k++)
        stage_of[d->stages[k].name] = (uint32_t)k;
    struct edge *e = xmalloc(2 * n * sizeof *e);
    size_t ne = 0;
    for (size_t i = 0; i < n; i++) {
        if (spans[i].depth != 0)
            continue;
        size_t k = stage_of[spans[i].name];
        e[ne++] = (struct edge){spans[i].start_ns, k, +1};
        e[ne++] = (struct edge){spans[i].end_ns, k, -1};
    }
    qsort(e, ne, sizeof *e, edge_order);
    int64_t *open = xcalloc(d->n_stages, sizeof *open);
    int64_t *since = xcalloc(d->n_stages, sizeof *since);
    int64_t shared = 0;
    size_t distinct = 0;
    for (size_t i = 0; i < ne; i++) {
        if (i > 0 && distinct >= 2)
            shared += e[i].t - e[i - 1].t;
        size_t k = e[i].stage;
        if (e[i].delta > 0 && open[k]++ == 0) {
            distinct++;
            since[k] = shared;
        } else if (e[i].delta < 0 && --open[k] == 0) {
            distinct--;
            d->stages[k].overlap_ns += shared - since[k];
        }
    }
    free(since);
    free(open);
    free(e);
}

/* Wall time covered by no span at all. */
static int64_t uncovered(struct span *by_start, size_t n, int64_t wall_ns)
{
    int64_t covered = 0, cur_start = 0, cur_end = -1;
    for (size_t i = 0; i < n; i++) {
        if (by_start[i].start_ns > cur_end) {
            if (cur_end >= 0)
                covered += cur_end - cur_start;
            cur_start = by_start[i].start_ns;
            cur_end = by_start[i].end_ns;
        } else if (by_start[i].end_ns > cur_end) {
            cur_end = by_start[i].end_ns;
        }
    }
    if (cur_end >= 0)
        covered += cur_end - cur_start;
    return covered >= wall_ns ? 0 : wall_ns - covered;
}

/* Depth at which a thread of process pid starts its stages: one below the stage open on the
 * adopting thread now (recursively, for launchers that were adopted themselves); that stage's
 * name in *parent (STAGES_NO_NAME when none is open). */
static int32_t adopted_depth(struct threads *th, const struct adoption *a, size_t n, int32_t pid,
                             int hops, const struct span *spans, uint32_t *parent)
{
    for (size_t i = 0; i < n && hops < 16; i++) {
        if (a[i].child != pid)
            continue;
        struct thread_stack *p = thread_get(th, a[i].pid, a[i].tid);
        int32_t open = (int32_t)p->n, base = p->base; /* p may move in the call below */
        if (open) {
            *parent = spans[p->open[p->n - 1]].name;
            return base + open;
        }
        return adopted_depth(th, a, n, a[i].pid, hops + 1, spans, parent);
    }
    *parent = STAGES_NO_NAME;
    return 0;
}

/* The adoptions of the run, read before the events so that a child's first stage may arrive
 * before its launcher's message. */
static struct adoption *adoptions(const struct event_log *log, size_t *n_out)
{
    struct adoption *a = NULL;
    size_t n = 0;
    for (size_t i = 0; i < log->n; i++) {
        const struct marker_event *e = &log->ev[i];
        long child;
        if (e->kind != MARKER_META || strcmp(event_log_str(log, e->name), "mlbench.adopt") != 0 ||
            units_parse_long(event_log_str(log, e->value), 1, INT32_MAX, &child) < 0)
            continue;
        a = xreallocarray(a, n + 1, sizeof *a);
        a[n++] = (struct adoption){(int32_t)child, e->pid, e->tid};
    }
    *n_out = n;
    return a;
}

void stages_aggregate(const struct event_log *log, int64_t t0_ns, int64_t wall_ns,
                      struct stage_data *d)
{
    size_t n_adopt;
    struct adoption *adopt = adoptions(log, &n_adopt);
    struct threads th = {.n_slot = 16};
    size_t span_cap = 0;
    size_t n_ids = log->n_strings ? log->n_strings : 1;
    struct name_maps names = {xcalloc(n_ids, sizeof *names.stage),
                              xcalloc(n_ids, sizeof *names.counter),
                              xcalloc(n_ids, sizeof *names.meta), 0};

    memset(d, 0, sizeof *d);
    th.slot = xcalloc(th.n_slot, sizeof *th.slot);
    struct rank_table ranks;
    stages_read_ranks(log, d, &ranks);
    stages_read_rank_exits(log, d, &ranks);
    stages_read_rank_hosts(log, d, &ranks);

    for (size_t i = 0; i < log->n; i++) {
        const struct marker_event *e = &log->ev[i];
        if (e->name >= n_ids) /* not an id of this log: only a caller's hand-made event */
            continue;
        int64_t t = e->t_ns - t0_ns;
        if (t < 0)
            t = 0;
        if (t > wall_ns)
            t = wall_ns; /* clock read after the run's end was taken: same instant */
        d->events++;
        switch (e->kind) {
        case MARKER_BEGIN: {
            uint32_t slot = name_slot(d, names.stage, e->name, names.n_stage_names);
            if (slot == NAME_DROPPED)
                break;
            if (slot > names.n_stage_names)
                names.n_stage_names++;
            struct thread_stack *s = thread_get(&th, e->pid, e->tid);
            if (s->n == 0) {
                uint32_t parent;
                int32_t base = adopted_depth(&th, adopt, n_adopt, e->pid, 0, d->spans, &parent);
                s = thread_get(&th, e->pid, e->tid); /* the table may have grown */
                s->base = base;
                s->base_parent = parent;
            }
            struct span sp = {.name = e->name, .pid = e->pid, .tid = e->tid,
                              .rank = stages_rank_of(&ranks, e->pid), .start_ns = t,
                              .end_ns = -1, .depth = s->base + (int32_t)s->n,
                              .parent = s->n ? d->spans[s->open[s->n - 1]].name
                                             : s->base_parent};
            push_span(d, &span_cap, &sp);
            s->open = xgrow(s->open, &s->cap, s->n + 1, sizeof *s->open);
            s->open[s->n++] = d->n_spans - 1;
            break;
        }
        case MARKER_END: {
            if (names.stage[e->name] == NAME_DROPPED) {
                d->name_events_dropped++;
                break;
            }
            struct thread_stack *s = thread_get(&th, e->pid, e->tid);
            size_t k = s->n;
            while (k > 0 && d->spans[s->open[k - 1]].name != e->name)
                k--;
            /* An end stamped before its begin (the workload's clock, or a forged event) would
             * make a negative duration: it matches nothing, and the stage stays open. */
            if (k == 0 || t < d->spans[s->open[k - 1]].start_ns) {
                d->unbalanced++;
                break;
            }
            /* Inner stages left open are closed here too, and counted as unbalanced. */
            for (size_t j = s->n; j >= k; j--) {
                struct span *sp = &d->spans[s->open[j - 1]];
                sp->end_ns = t > sp->start_ns ? t : sp->start_ns;
                sp->closed = j == k;
                d->unbalanced += j != k;
            }
            s->n = k - 1;
            break;
        }
        case MARKER_COUNTER: {
            const struct thread_stack *s = thread_get(&th, e->pid, e->tid);
            add_counter(d, &names, e, t, s->n ? d->spans[s->open[s->n - 1]].name : STAGES_NO_NAME);
            break;
        }
        case MARKER_META:
            /* keys "mlbench.*" belong to the protocol (adoption, ranks), not to the workload */
            if (strncmp(event_log_str(log, e->name), "mlbench.", 8) != 0)
                add_meta(d, &names, e);
            break;
        case MARKER_INSTANT:
            d->instants = xreallocarray(d->instants, d->n_instants + 1, sizeof *d->instants);
            d->instants[d->n_instants++] =
                (struct instant){.name = e->name, .pid = e->pid, .tid = e->tid, .t_ns = t};
            break;
        default:
            break;
        }
    }

    /* Stages still open when the run ended (killed, timed out, or never ended). */
    for (size_t k = 0; k < th.n; k++) {
        for (size_t j = 0; j < th.t[k].n; j++) {
            d->spans[th.t[k].open[j]].end_ns = wall_ns;
            d->unclosed++;
        }
        free(th.t[k].open);
    }
    free(th.t);
    free(th.slot);
    free(adopt);
    free(ranks.of);

    free(names.counter);
    free(names.meta);
    if (d->n_spans == 0) {
        d->outside_ns = -1;
        free(names.stage);
        return;
    }
    struct span *tmp = xmalloc(d->n_spans * sizeof *tmp);
    memcpy(tmp, d->spans, d->n_spans * sizeof *tmp);
    qsort(tmp, d->n_spans, sizeof *tmp, span_by_name_start);
    totals(d, tmp, d->n_spans, names.n_stage_names);
    order_stages(d, names.stage);
    stages_rank_totals(d);
    qsort(tmp, d->n_spans, sizeof *tmp, span_by_start);
    overlaps(d, tmp, d->n_spans, names.stage);
    d->outside_ns = uncovered(tmp, d->n_spans, wall_ns);
    free(tmp);
    free(names.stage);
}

void stages_free(struct stage_data *d)
{
    free(d->spans);
    free(d->stages);
    for (size_t i = 0; i < d->n_counters; i++)
        free(d->counters[i].points);
    free(d->counters);
    free(d->meta);
    free(d->instants);
    free(d->ranks);
    free(d->rank_stages);
    free(d->rank_exits);
    free(d->rank_hosts);
    memset(d, 0, sizeof *d);
}
