/* live: streaming aggregates of live metrics and their Prometheus exposition (see live.h). */
#include "live/live.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/xalloc.h"
#include "live/prometheus.h"
#include "util/clock.h"
#include "util/hash.h"

const double live_stage_bounds[LIVE_STAGE_BUCKETS] = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
    0.5,    1,       2.5,    5,     10,     30,    60,   300,   900,  3600,
};

#define NAME_SLOTS 2048   /* hash slots per name table: a power of two >= 2 * LIVE_MAX_NAMES */
#define THREAD_SLOTS 8192 /* hash slots of the thread table: a power of 2 >= 2 * LIVE_MAX_THREADS */
#define SPAN_CAP 4        /* open spans a thread's first array holds */
/* Such arrays are kept for reuse, as many as threads may hold (at most 256 KiB): threads that
 * come and go (a loader thread per batch) then allocate nothing in the steady state, so the
 * heap does not fragment over weeks. */
#define SPARE_MAX LIVE_MAX_THREADS

enum drop_reason {
    DROP_STAGE_LIMIT,
    DROP_COUNTER_LIMIT,
    DROP_INSTANT_LIMIT,
    DROP_METADATA_LIMIT,
    DROP_LONG_NAME,
    DROP_DEPTH_LIMIT,
    DROP_THREAD_LIMIT,
    N_DROP,
};

static const char *const drop_names[N_DROP] = {
    "stage_limit", "counter_limit", "instant_limit", "metadata_limit",
    "long_name",   "depth_limit",   "thread_limit",
};

/* Distinct names, interned: index -> name, with an open-addressing hash. Never shrinks; holds
 * at most LIVE_MAX_NAMES. */
struct name_table {
    char **names;
    size_t n, cap;
    uint16_t slot[NAME_SLOTS]; /* index + 1, 0 = empty */
};

struct stage_data {
    uint64_t buckets[LIVE_STAGE_BUCKETS + 1]; /* per bucket, not cumulative */
    double sum_s;
    uint32_t active; /* spans open now */
};

struct counter_data {
    double last, sum;
    uint64_t samples;
    bool count_like; /* every value so far a whole number >= 0 */
};

struct open_span {
    uint32_t stage;
    int64_t t_ns;
};

/* The open stages of one thread. pid 0 = empty slot. */
struct thread_slot {
    int32_t pid, tid;
    uint32_t depth, cap;
    bool foreign; /* process not visible when first seen: another PID namespace, not pruned */
    uint64_t last_use; /* event sequence number: the least recently used is evicted */
    struct open_span *open;
};

/* One resource series of the latest sample row. */
struct live_series {
    char *name;        /* exported name, "mlbench_..." */
    char *labels;      /* as the source formatted them */
    const char *help;
    enum prom_type type;
    double value;      /* NAN: not measured at this row */
};

struct live_metrics {
    pthread_mutex_t mu;

    /* markers */
    bool markers_on;
    uint64_t received, malformed, unbalanced, dropped[N_DROP], seq;
    uint64_t malformed_floor; /* from live_set_marker_datagrams */
    struct name_table stage_names, counter_names, instant_names, meta_keys;
    struct stage_data *stages;
    struct counter_data *counters;
    uint64_t *instants;
    char **meta_values; /* LIVE_MAX_VALUE_BYTES + 1 each, allocated with the key */
    size_t data_cap; /* of each of the four arrays above */
    struct thread_slot *threads; /* THREAD_SLOTS */
    size_t n_threads;
    struct open_span *spare[SPARE_MAX]; /* arrays of SPAN_CAP spans, free for reuse */
    size_t n_spare;

    /* samples */
    const struct series_def *defs_seen; /* the definitions the series below were built from */
    size_t n_series;
    struct live_series *series;
    size_t *order;        /* series indices grouped by exported name, first appearance first */
    uint64_t rows, sampler_errors;
    int64_t last_row_ns, row_gap_ns;

    size_t last_render; /* bytes of the last exposition: the next one reserves as much */
};

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
    if (j < 0) {
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

/* --- samples ---------------------------------------------------------------------------- */

/* Exported names that differ from the series name: Prometheus reserves the _count suffix for
 * histograms and summaries (promtool rejects it on a gauge). */
static const struct {
    const char *series, *exported;
} renamed[] = {
    {"process_count", "process_tree_processes"},
};

static const struct {
    const char *name, *help;
} series_help[] = {
    {"process_cpu_seconds_total",
     "CPU time (user + system) of the workload's process tree, exited children included; its "
     "rate is the cores kept busy."},
    {"process_resident_bytes",
     "Memory of the workload's process tree: sum of PSS (RSS where PSS cannot be read)."},
    {"process_read_bytes_total",
     "Bytes the workload's process tree caused to be read from storage."},
    {"process_written_bytes_total",
     "Bytes the workload's process tree caused to be written to storage."},
    {"process_threads", "Threads in the workload's process tree."},
    {"process_count", "Processes in the workload's process tree."},
    {"system_cpu_busy_ratio", "Fraction of all CPUs' time busy over the last sampling interval."},
    {"system_cpu_core_busy_ratio",
     "Fraction of one CPU's time busy over the last sampling interval."},
    {"system_cpu_iowait_ratio",
     "Fraction of CPU time idle with I/O pending over the last sampling interval."},
    {"system_memory_available_bytes",
     "Memory available for new allocations without swapping (MemAvailable)."},
    {"system_swap_in_bytes_total", "Bytes swapped in."},
    {"system_swap_out_bytes_total", "Bytes swapped out."},
    {"system_disk_read_bytes_total",
     "Bytes read from the machine's disks (whole disks, counted once)."},
    {"system_disk_written_bytes_total",
     "Bytes written to the machine's disks (whole disks, counted once)."},
    {"system_network_receive_bytes_total", "Bytes received on every network interface but lo."},
    {"system_network_transmit_bytes_total", "Bytes sent on every network interface but lo."},
    {"system_pressure_cpu_some_seconds_total",
     "Time at least one runnable task waited for a CPU (PSI)."},
    {"system_pressure_cpu_full_seconds_total",
     "Time all non-idle tasks waited for a CPU at once (PSI)."},
    {"system_pressure_io_some_seconds_total", "Time at least one task was stalled on I/O (PSI)."},
    {"system_pressure_io_full_seconds_total",
     "Time all non-idle tasks were stalled on I/O at once (PSI)."},
    {"system_pressure_memory_some_seconds_total",
     "Time at least one task was stalled on memory (PSI)."},
    {"system_pressure_memory_full_seconds_total",
     "Time all non-idle tasks were stalled on memory at once (PSI)."},
    {"gpu_utilization_ratio",
     "Fraction of the driver's sample period in which a kernel ran on the GPU (NVML)."},
    {"gpu_memory_utilization_ratio",
     "Fraction of the driver's sample period in which GPU memory was read or written (NVML)."},
    {"gpu_memory_used_bytes", "GPU memory in use by all processes (NVML)."},
    {"gpu_memory_total_bytes", "GPU memory size (NVML)."},
    {"gpu_power_watts", "GPU board power (NVML)."},
    {"gpu_sm_clock_hertz", "Current SM clock (NVML)."},
    {"gpu_memory_clock_hertz", "Current memory clock (NVML)."},
    {"gpu_temperature_celsius", "GPU die temperature (NVML)."},
    {"gpu_pcie_rx_bytes_per_second", "PCIe traffic into the GPU (NVML, 20 ms window)."},
    {"gpu_pcie_tx_bytes_per_second", "PCIe traffic out of the GPU (NVML, 20 ms window)."},
    {"gpu_throttle_reasons", "Bitmask of the reasons GPU clocks are below their maximum (NVML)."},
    {"gpu_process_memory_bytes", "GPU memory held by the workload's process tree (NVML)."},
};

static const char *help_for(const char *series)
{
    for (size_t i = 0; i < sizeof series_help / sizeof series_help[0]; i++)
        if (!strcmp(series_help[i].name, series))
            return series_help[i].help;
    return "Sampled by mlbench (docs/metrics.md).";
}

static void series_free(struct live_metrics *m)
{
    for (size_t i = 0; i < m->n_series; i++) {
        free(m->series[i].name);
        free(m->series[i].labels);
    }
    free(m->series);
    free(m->order);
    m->series = NULL;
    m->order = NULL;
    m->n_series = 0;
}

/* The series of a new set of definitions (first row, or a new sampler). */
static void series_build(struct live_metrics *m, const struct sample_table *tab)
{
    series_free(m);
    m->defs_seen = tab->defs;
    m->n_series = tab->n_series;
    m->series = xcalloc(tab->n_series ? tab->n_series : 1, sizeof *m->series);
    m->order = xcalloc(tab->n_series ? tab->n_series : 1, sizeof *m->order);
    for (size_t i = 0; i < tab->n_series; i++) {
        const struct series_def *d = &tab->defs[i];
        struct live_series *s = &m->series[i];
        const char *base = d->name;
        for (size_t k = 0; k < sizeof renamed / sizeof renamed[0]; k++)
            if (!strcmp(base, renamed[k].series))
                base = renamed[k].exported;
        size_t bl = strlen(base);
        bool counter = d->kind == SERIES_COUNTER;
        bool total = bl >= 6 && !strcmp(base + bl - 6, "_total");
        s->name = xasprintf("mlbench_%s%s", base, counter && !total ? "_total" : "");
        if (!prom_valid_name(s->name)) { /* never exported */
            free(s->name);
            s->name = NULL;
        }
        s->labels = xstrdup(d->labels ? d->labels : "");
        s->help = help_for(d->name);
        s->type = counter ? PROM_COUNTER : PROM_GAUGE;
        s->value = NAN;
    }
    /* Group by name, keeping the order in which names first appear (one block per family). */
    size_t k = 0;
    bool *done = xcalloc(tab->n_series ? tab->n_series : 1, sizeof *done);
    for (size_t i = 0; i < tab->n_series; i++) {
        if (done[i] || !m->series[i].name)
            continue;
        for (size_t j = i; j < tab->n_series; j++)
            if (!done[j] && m->series[j].name && !strcmp(m->series[j].name, m->series[i].name)) {
                done[j] = true;
                m->order[k++] = j;
            }
    }
    m->n_series = tab->n_series;
    for (size_t i = k; i < tab->n_series; i++)
        m->order[i] = SIZE_MAX; /* invalid names: skipped */
    free(done);
}

void live_on_sample(void *arg, const struct sample_table *tab, size_t row)
{
    struct live_metrics *m = arg;
    if (row >= tab->n)
        return;
    pthread_mutex_lock(&m->mu);
    if (tab->defs != m->defs_seen || tab->n_series != m->n_series)
        series_build(m, tab);
    for (size_t i = 0; i < m->n_series; i++)
        m->series[i].value = tab->v[i][row];
    int64_t t = tab->t_ns[row];
    if (m->rows && t > m->last_row_ns)
        m->row_gap_ns = t - m->last_row_ns;
    m->last_row_ns = t;
    m->rows++;
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
    series_free(m);
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

/* --- exposition ------------------------------------------------------------------------- */

static void render_samples(const struct live_metrics *m, struct strbuf *b)
{
    const char *family = NULL;
    for (size_t k = 0; k < m->n_series && m->order[k] != SIZE_MAX; k++) {
        const struct live_series *s = &m->series[m->order[k]];
        if (isnan(s->value))
            continue; /* not measured at this tick: absent, never 0 */
        if (!family || strcmp(family, s->name)) {
            prom_family(b, s->name, s->type, s->help);
            family = s->name;
        }
        prom_sample(b, s->name, s->labels, s->value);
    }
}

/* One label list per name of a table, in lb (reset first). */
static const char *name_label(struct strbuf *lb, const char *key, const char *value)
{
    strbuf_reset(lb);
    prom_labels_add(lb, key, value);
    return lb->s;
}

static void render_markers(const struct live_metrics *m, struct strbuf *b, struct strbuf *lb)
{
    const struct name_table *sn = &m->stage_names, *cn = &m->counter_names;
    if (sn->n) {
        prom_family(b, "mlbench_stage_duration_seconds", PROM_HISTOGRAM,
                    "Duration of each completed span of a stage, from its begin marker to its "
                    "end marker on the same thread.");
        for (size_t i = 0; i < sn->n; i++)
            prom_histogram(b, "mlbench_stage_duration_seconds",
                           name_label(lb, "stage", sn->names[i]), live_stage_bounds,
                           LIVE_STAGE_BUCKETS, m->stages[i].buckets, m->stages[i].sum_s);
        prom_family(b, "mlbench_stage_active", PROM_GAUGE,
                    "Spans of each stage open now, over all threads and processes.");
        for (size_t i = 0; i < sn->n; i++)
            prom_sample_u64(b, "mlbench_stage_active", name_label(lb, "stage", sn->names[i]),
                            m->stages[i].active);
    }
    if (cn->n) {
        prom_family(b, "mlbench_marker_value", PROM_GAUGE,
                    "Last value of each counter marker (C events: loss, accuracy, images...).");
        for (size_t i = 0; i < cn->n; i++)
            prom_sample(b, "mlbench_marker_value", name_label(lb, "name", cn->names[i]),
                        m->counters[i].last);
        prom_family(b, "mlbench_marker_samples_total", PROM_COUNTER,
                    "Counter marker events received, per counter name.");
        for (size_t i = 0; i < cn->n; i++)
            prom_sample_u64(b, "mlbench_marker_samples_total",
                            name_label(lb, "name", cn->names[i]), m->counters[i].samples);
        bool any = false;
        for (size_t i = 0; i < cn->n; i++) {
            if (!m->counters[i].count_like)
                continue;
            if (!any)
                prom_family(b, "mlbench_marker_sum_total", PROM_COUNTER,
                            "Sum of the values of each count-like counter marker (every value "
                            "a whole number >= 0: images, tokens); its rate is items per second.");
            any = true;
            prom_sample(b, "mlbench_marker_sum_total", name_label(lb, "name", cn->names[i]),
                        m->counters[i].sum);
        }
    }
    if (m->instant_names.n) {
        prom_family(b, "mlbench_marker_instants_total", PROM_COUNTER,
                    "Instant marker events (I) received, per name.");
        for (size_t i = 0; i < m->instant_names.n; i++)
            prom_sample_u64(b, "mlbench_marker_instants_total",
                            name_label(lb, "name", m->instant_names.names[i]), m->instants[i]);
    }
    if (m->meta_keys.n) {
        prom_family(b, "mlbench_metadata_info", PROM_GAUGE,
                    "Last value of each metadata marker (M events) as the label value; always 1.");
        for (size_t i = 0; i < m->meta_keys.n; i++) {
            strbuf_reset(lb);
            prom_labels_add(lb, "key", m->meta_keys.names[i]);
            prom_labels_add(lb, "value", m->meta_values[i]);
            prom_sample(b, "mlbench_metadata_info", lb->s, 1);
        }
    }
    if (!m->markers_on)
        return;
    prom_family(b, "mlbench_markers_received_total", PROM_COUNTER,
                "Well-formed marker events received.");
    prom_sample_u64(b, "mlbench_markers_received_total", NULL, m->received);
    prom_family(b, "mlbench_markers_malformed_total", PROM_COUNTER,
                "Marker datagrams that did not parse (docs/markers.md).");
    prom_sample_u64(b, "mlbench_markers_malformed_total", NULL,
                    m->malformed > m->malformed_floor ? m->malformed : m->malformed_floor);
    prom_family(b, "mlbench_markers_unbalanced_total", PROM_COUNTER,
                "End markers with no matching open stage on their thread, and stages closed "
                "by the end of an enclosing stage.");
    prom_sample_u64(b, "mlbench_markers_unbalanced_total", NULL, m->unbalanced);
    prom_family(b, "mlbench_markers_dropped_total", PROM_COUNTER,
                "Marker events not aggregated because a memory bound was reached, by reason; "
                "thread_limit counts open spans forgotten when too many threads had stages open.");
    for (int r = 0; r < N_DROP; r++)
        prom_sample_u64(b, "mlbench_markers_dropped_total", name_label(lb, "reason", drop_names[r]),
                        m->dropped[r]);
}

char *live_render(struct live_metrics *m, size_t *len)
{
    struct strbuf b = {0}, lb = {0};
    pthread_mutex_lock(&m->mu);
    strbuf_reserve(&b, m->last_render + 1024); /* one allocation in the usual case */
    prom_family(&b, "mlbench_build_info", PROM_GAUGE,
                "Version and commit of the mlbench serving these metrics; always 1.");
    prom_labels_add(&lb, "version", MLBENCH_VERSION);
    prom_labels_add(&lb, "commit", MLBENCH_GIT_COMMIT);
    prom_sample(&b, "mlbench_build_info", lb.s, 1);

    /* Up while rows keep coming: within three sampling intervals, and at least 1 s. */
    int64_t window = 3 * (m->row_gap_ns ? m->row_gap_ns : 1000000000);
    if (window < 1000000000)
        window = 1000000000;
    bool up = m->rows && mono_ns() - m->last_row_ns <= window;
    prom_family(&b, "mlbench_up", PROM_GAUGE,
                "1 while mlbench is sampling (a sample row within the last three sampling "
                "intervals), 0 otherwise.");
    prom_sample(&b, "mlbench_up", NULL, up);
    prom_family(&b, "mlbench_samples_total", PROM_COUNTER, "Sample rows taken by the sampler.");
    prom_sample_u64(&b, "mlbench_samples_total", NULL, m->rows);
    prom_family(&b, "mlbench_sampler_errors_total", PROM_COUNTER,
                "Read failures counted by the metric sources (unreadable files, vanished "
                "processes, NVML errors).");
    prom_sample_u64(&b, "mlbench_sampler_errors_total", NULL, m->sampler_errors);

    render_samples(m, &b);
    render_markers(m, &b, &lb);
    m->last_render = b.len;
    pthread_mutex_unlock(&m->mu);
    strbuf_free(&lb);
    *len = b.len;
    return b.s;
}
