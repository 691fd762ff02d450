/* live: streaming aggregates of live metrics (see live.h): the marker events folded into
 * stage, counter, instant and metadata aggregates, under memory bounds, and the control
 * functions. Sample rows are kept by live_samples.c; live_render.c writes the Prometheus
 * exposition; live_state.h holds the state they share. */
#include "live/live.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/xalloc.h"
#include "live/live_state.h"
#include "util/hash.h"

/* --- names ------------------------------------------------------------------------------ */

/* Index of s[0..len) in t; adds it when add is true and there is room. Returns -1 when absent
 * (and not added because the table is full or add is false). */
static long name_find(struct name_table *t, const char *s, size_t len, bool add, bool *added)
{
    size_t mask = NAME_SLOTS - 1, i = hash_bytes(s, len) & mask;
    *added = false;
    for (; t->slot[i]; i = (i + 1) & mask) {
        const char *n = t->names[t->slot[i] - 1];
        if (strlen(n) == len && !memcmp(n, s, len))
            return t->slot[i] - 1;
    }
    if (!add || t->n >= LIVE_MAX_NAMES)
        return -1;
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        if (t->cap > LIVE_MAX_NAMES)
            t->cap = LIVE_MAX_NAMES;
        t->names = xreallocarray(t->names, t->cap, sizeof *t->names);
    }
    t->names[t->n] = xstrndup(s, len);
    t->slot[i] = (uint16_t)(t->n + 1);
    *added = true;
    return (long)t->n++;
}

static void name_table_free(struct name_table *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->names[i]);
    free(t->names);
}

/* The per-name arrays follow the largest name table. */
static void data_reserve(struct live_metrics *m, size_t n)
{
    if (n <= m->data_cap)
        return;
    size_t cap = m->data_cap ? m->data_cap * 2 : 16;
    if (cap > LIVE_MAX_NAMES)
        cap = LIVE_MAX_NAMES;
    m->stages = xreallocarray(m->stages, cap, sizeof *m->stages);
    m->counters = xreallocarray(m->counters, cap, sizeof *m->counters);
    m->instants = xreallocarray(m->instants, cap, sizeof *m->instants);
    m->meta_values = xreallocarray(m->meta_values, cap, sizeof *m->meta_values);
    m->data_cap = cap;
}

/* Looks up (or adds) a name of one kind; counts a drop when it cannot be tracked. */
static long lookup(struct live_metrics *m, struct name_table *t, const struct marker_token *tok,
                   bool add, enum drop_reason full, bool *added)
{
    *added = false;
    if (tok->name_len > LIVE_MAX_NAME_BYTES) {
        m->dropped[DROP_LONG_NAME]++;
        return -1;
    }
    long i = name_find(t, tok->name, tok->name_len, add, added);
    if (i < 0 && (add || t->n >= LIVE_MAX_NAMES))
        m->dropped[full]++;
    if (*added)
        data_reserve(m, t->n);
    return i;
}

/* --- threads ---------------------------------------------------------------------------- */

static size_t thread_hash(int32_t pid, int32_t tid)
{
    return (size_t)(hash_thread(pid, tid) >> 40) & (THREAD_SLOTS - 1);
}

static struct thread_slot *thread_find(struct live_metrics *m, int32_t pid, int32_t tid)
{
    for (size_t i = thread_hash(pid, tid);; i = (i + 1) & (THREAD_SLOTS - 1)) {
        struct thread_slot *t = &m->threads[i];
        if (!t->pid)
            return NULL;
        if (t->pid == pid && t->tid == tid)
            return t;
    }
}

/* Keeps a thread's span array for the next thread, or frees it (one that grew). */
static void span_array_put(struct live_metrics *m, struct thread_slot *t)
{
    if (t->open && t->cap == SPAN_CAP && m->n_spare < SPARE_MAX)
        m->spare[m->n_spare++] = t->open;
    else
        free(t->open);
    t->open = NULL;
    t->cap = 0;
}

/* Forgets the open spans of slot i and empties it (backward-shift deletion keeps every other
 * entry reachable from its home slot). */
static void thread_remove(struct live_metrics *m, size_t i)
{
    struct thread_slot *t = &m->threads[i];
    for (uint32_t k = 0; k < t->depth; k++)
        m->stages[t->open[k].stage].active--;
    span_array_put(m, t);
    memset(t, 0, sizeof *t);
    m->n_threads--;
    size_t mask = THREAD_SLOTS - 1;
    for (size_t j = (i + 1) & mask; m->threads[j].pid; j = (j + 1) & mask) {
        size_t home = thread_hash(m->threads[j].pid, m->threads[j].tid);
        /* j's entry may move to the hole at i when its home is not in (i, j]. */
        bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            m->threads[i] = m->threads[j];
            memset(&m->threads[j], 0, sizeof m->threads[j]);
            i = j;
        }
    }
}

static struct thread_slot *thread_add(struct live_metrics *m, int32_t pid, int32_t tid)
{
    if (m->n_threads >= LIVE_MAX_THREADS) {
        /* Full: the thread that sent nothing for longest (a process killed inside a stage, most
         * likely) loses its open spans. */
        size_t lru = 0;
        uint64_t oldest = UINT64_MAX;
        for (size_t i = 0; i < THREAD_SLOTS; i++)
            if (m->threads[i].pid && m->threads[i].last_use < oldest) {
                oldest = m->threads[i].last_use;
                lru = i;
            }
        m->dropped[DROP_THREAD_LIMIT] += m->threads[lru].depth;
        thread_remove(m, lru);
    }
    size_t i = thread_hash(pid, tid);
    while (m->threads[i].pid)
        i = (i + 1) & (THREAD_SLOTS - 1);
    struct thread_slot *t = &m->threads[i];
    t->pid = pid;
    t->tid = tid;
    /* The sender's process has just sent this event, so it exists, unless its ids are those
     * of another PID namespace (a container given the socket): live_prune_dead must leave
     * those alone. The process, not the thread: a short thread may be gone by the time its
     * events are read. */
    t->foreign = kill(pid, 0) < 0 && errno == ESRCH;
    m->n_threads++;
    return t;
}

static size_t slot_index(const struct live_metrics *m, const struct thread_slot *t)
{
    return (size_t)(t - m->threads);
}

/* --- events ----------------------------------------------------------------------------- */

static void observe(struct stage_data *s, int64_t ns)
{
    double sec = ns > 0 ? (double)ns / 1e9 : 0;
    size_t b = 0;
    while (b < LIVE_STAGE_BUCKETS && sec > live_stage_bounds[b])
        b++;
    s->buckets[b]++;
    s->sum_s += sec;
}

void live_on_query(void *arg, int64_t latency_ns, bool ok)
{
    struct live_metrics *m = arg;
    pthread_mutex_lock(&m->mu);
    m->queries_seen = true;
    if (ok) {
        m->queries_ok++;
        observe(&m->query_latency, latency_ns);
    } else {
        m->queries_failed++;
    }
    pthread_mutex_unlock(&m->mu);
}

static void on_begin(struct live_metrics *m, const struct marker_token *tok)
{
    bool added;
    long st = lookup(m, &m->stage_names, tok, true, DROP_STAGE_LIMIT, &added);
    if (st < 0)
        return;
    if (added)
        memset(&m->stages[st], 0, sizeof m->stages[st]);
    struct thread_slot *t = thread_find(m, tok->pid, tok->tid);
    if (!t)
        t = thread_add(m, tok->pid, tok->tid);
    t->last_use = m->seq;
    if (t->depth >= LIVE_MAX_DEPTH) {
        m->dropped[DROP_DEPTH_LIMIT]++;
        return;
    }
    if (!t->open) {
        t->open = m->n_spare ? m->spare[--m->n_spare] : xcalloc(SPAN_CAP, sizeof *t->open);
        t->cap = SPAN_CAP;
    } else if (t->depth == t->cap) {
        t->cap *= 2;
        t->open = xreallocarray(t->open, t->cap, sizeof *t->open);
    }
    t->open[t->depth++] = (struct open_span){(uint32_t)st, tok->t_ns};
    m->stages[st].active++;
}

/* E closes the innermost open stage of that name on the thread; stages left open inside it are
 * closed with it and counted as unbalanced (as stages.c does for a run). */
static void on_end(struct live_metrics *m, const struct marker_token *tok)
{
    bool added;
    long st = lookup(m, &m->stage_names, tok, false, DROP_STAGE_LIMIT, &added);
    if (st < 0) {
        if (tok->name_len <= LIVE_MAX_NAME_BYTES && m->stage_names.n < LIVE_MAX_NAMES)
            m->unbalanced++; /* a name never begun */
        return;
    }
    struct thread_slot *t = thread_find(m, tok->pid, tok->tid);
    long j = -1;
    if (t) {
        t->last_use = m->seq;
        for (long k = (long)t->depth - 1; k >= 0; k--)
            if (t->open[k].stage == (uint32_t)st) {
                j = k;
                break;
            }
    }
    if (j < 0 || tok->t_ns < t->open[j].t_ns) { /* stamped before its begin: no duration */
        m->unbalanced++;
        return;
    }
    for (long k = (long)t->depth - 1; k > j; k--) {
        m->stages[t->open[k].stage].active--;
        m->unbalanced++;
    }
    observe(&m->stages[st], tok->t_ns - t->open[j].t_ns);
    m->stages[st].active--;
    t->depth = (uint32_t)j;
    if (t->depth == 0)
        thread_remove(m, slot_index(m, t));
}

static void on_counter(struct live_metrics *m, const struct marker_token *tok)
{
    bool added;
    long i = lookup(m, &m->counter_names, tok, true, DROP_COUNTER_LIMIT, &added);
    if (i < 0)
        return;
    struct counter_data *c = &m->counters[i];
    if (added)
        *c = (struct counter_data){.count_like = true};
    double v = tok->number;
    c->last = v;
    c->samples++;
    if (c->count_like && isfinite(v) && v >= 0 && v == floor(v))
        c->sum += v;
    else
        c->count_like = false;
}

static void on_instant(struct live_metrics *m, const struct marker_token *tok)
{
    bool added;
    long i = lookup(m, &m->instant_names, tok, true, DROP_INSTANT_LIMIT, &added);
    if (i < 0)
        return;
    if (added)
        m->instants[i] = 0;
    m->instants[i]++;
}

static void on_meta(struct live_metrics *m, const struct marker_token *tok)
{
    bool added;
    long i = lookup(m, &m->meta_keys, tok, true, DROP_METADATA_LIMIT, &added);
    if (i < 0)
        return;
    size_t len = tok->value_len < LIVE_MAX_VALUE_BYTES ? tok->value_len : LIVE_MAX_VALUE_BYTES;
    if (added) /* one buffer per key for good: values that change allocate nothing */
        m->meta_values[i] = xmalloc(LIVE_MAX_VALUE_BYTES + 1);
    /* A value cut inside a UTF-8 sequence gets '?' for its tail when escaped. */
    memcpy(m->meta_values[i], tok->value ? tok->value : "", len);
    m->meta_values[i][len] = '\0';
}

void live_on_marker(void *arg, const struct marker_token *tok)
{
    struct live_metrics *m = arg;
    pthread_mutex_lock(&m->mu);
    m->markers_on = true;
    if (!tok) {
        m->malformed++;
    } else {
        m->received++;
        m->seq++;
        switch (tok->kind) {
        case MARKER_BEGIN: on_begin(m, tok); break;
        case MARKER_END: on_end(m, tok); break;
        case MARKER_COUNTER: on_counter(m, tok); break;
        case MARKER_INSTANT: on_instant(m, tok); break;
        case MARKER_META: on_meta(m, tok); break;
        default: break;
        }
    }
    pthread_mutex_unlock(&m->mu);
}

/* --- control ---------------------------------------------------------------------------- */

struct live_metrics *live_new(void)
{
    struct live_metrics *m = xcalloc(1, sizeof *m);
    pthread_mutex_init(&m->mu, NULL);
    m->threads = xcalloc(THREAD_SLOTS, sizeof *m->threads);
    return m;
}

void live_free(struct live_metrics *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < THREAD_SLOTS; i++)
        free(m->threads[i].open);
    for (size_t i = 0; i < m->n_spare; i++)
        free(m->spare[i]);
    free(m->threads);
    for (size_t i = 0; i < m->meta_keys.n; i++)
        free(m->meta_values[i]);
    name_table_free(&m->stage_names);
    name_table_free(&m->counter_names);
    name_table_free(&m->instant_names);
    name_table_free(&m->meta_keys);
    free(m->stages);
    free(m->counters);
    free(m->instants);
    free(m->meta_values);
    live_state_free_series(m);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

void live_expect_markers(struct live_metrics *m)
{
    pthread_mutex_lock(&m->mu);
    m->markers_on = true;
    pthread_mutex_unlock(&m->mu);
}

void live_add_malformed(struct live_metrics *m, uint64_t n)
{
    pthread_mutex_lock(&m->mu);
    m->markers_on = true;
    m->malformed += n;
    pthread_mutex_unlock(&m->mu);
}

void live_set_marker_datagrams(struct live_metrics *m, uint64_t datagrams)
{
    pthread_mutex_lock(&m->mu);
    m->markers_on = true;
    if (datagrams > m->received && datagrams - m->received > m->malformed_floor)
        m->malformed_floor = datagrams - m->received;
    pthread_mutex_unlock(&m->mu);
}

void live_set_marker_foreign(struct live_metrics *m, uint64_t total)
{
    pthread_mutex_lock(&m->mu);
    m->markers_on = true;
    if (total > m->foreign)
        m->foreign = total;
    pthread_mutex_unlock(&m->mu);
}

void live_set_sampler_errors(struct live_metrics *m, uint64_t total)
{
    pthread_mutex_lock(&m->mu);
    m->sampler_errors = total;
    pthread_mutex_unlock(&m->mu);
}

void live_close_spans(struct live_metrics *m)
{
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < THREAD_SLOTS; i++)
        span_array_put(m, &m->threads[i]);
    memset(m->threads, 0, THREAD_SLOTS * sizeof *m->threads);
    m->n_threads = 0;
    for (size_t i = 0; i < m->stage_names.n; i++)
        m->stages[i].active = 0;
    pthread_mutex_unlock(&m->mu);
}

size_t live_prune_dead(struct live_metrics *m)
{
    size_t n = 0;
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < THREAD_SLOTS;) {
        const struct thread_slot *t = &m->threads[i];
        if (!t->pid) {
            i++;
            continue;
        }
        /* The thread is gone (its process may live on: a finished loader thread). */
        if (!t->foreign && tgkill(t->pid, t->tid, 0) < 0 && errno == ESRCH) {
            thread_remove(m, i); /* another entry may have moved into i: look at it again */
            n++;
        } else {
            i++;
        }
    }
    pthread_mutex_unlock(&m->mu);
    return n;
}

void live_usage(struct live_metrics *m, struct live_usage *u)
{
    memset(u, 0, sizeof *u);
    pthread_mutex_lock(&m->mu);
    const struct name_table *tables[] = {&m->stage_names, &m->counter_names, &m->instant_names,
                                         &m->meta_keys};
    u->stages = m->stage_names.n;
    u->counters = m->counter_names.n;
    u->instants = m->instant_names.n;
    u->metadata = m->meta_keys.n;
    u->threads = m->n_threads;
    u->series = m->n_series;
    u->bytes = sizeof *m + THREAD_SLOTS * sizeof *m->threads;
    for (size_t t = 0; t < 4; t++) {
        u->bytes += tables[t]->cap * sizeof(char *);
        for (size_t i = 0; i < tables[t]->n; i++)
            u->bytes += strlen(tables[t]->names[i]) + 1;
    }
    u->bytes += m->data_cap * (sizeof *m->stages + sizeof *m->counters + sizeof *m->instants +
                               sizeof *m->meta_values);
    u->bytes += m->meta_keys.n * (LIVE_MAX_VALUE_BYTES + 1) +
                m->n_spare * SPAN_CAP * sizeof(struct open_span);
    for (size_t i = 0; i < THREAD_SLOTS; i++) {
        u->open_spans += m->threads[i].depth;
        u->bytes += m->threads[i].cap * sizeof(struct open_span);
    }
    for (size_t i = 0; i < m->n_series; i++)
        u->bytes += sizeof *m->series + sizeof *m->order +
                    (m->series[i].name ? strlen(m->series[i].name) + 1 : 0) +
                    strlen(m->series[i].labels) + 1;
    for (int r = 0; r < N_DROP; r++)
        u->dropped += m->dropped[r];
    pthread_mutex_unlock(&m->mu);
}
