/* gpu_sync: stages timed without synchronising the GPU (see gpu_sync.h; the rule for users is
 * in docs/analysis.md, "Unsynchronised timing"). */
#include "result/gpu_sync.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "result/result.h"
#include "util/units.h"
#include "util/xalloc.h"

#define GPU_SYNC_BUSY 0.25       /* activity at least: the GPU works (SM active or utilisation) */
#define GPU_SYNC_IDLE 0.05       /* activity below: the GPU ran dry */
#define GPU_SYNC_HOST_MAX 1.3    /* cores busy at most while the tail drains: one thread waiting
                                  * (blocked, or spinning in cudaStreamSynchronize) or launching;
                                  * a stage computing on several cores is doing its own work */
#define GPU_SYNC_GAP_MAX_NS 100000000LL /* the next stage begins at most this after the end */
#define GPU_SYNC_MAX_PAIRS 64    /* distinct pairs of stages warned about, at most */
#define GPU_SYNC_QUEUED_SCAN 64  /* spans ending after a queued instant looked at for its own */

static bool top_level(const struct span *s)
{
    return s->depth == 0 && s->closed && s->end_ns >= s->start_ns;
}

/* Orders indices of the spans given as context (qsort_r: no shared state) by start. */
static int by_start(const void *a, const void *b, void *spans)
{
    int64_t x = ((const struct span *)spans)[*(const size_t *)a].start_ns;
    int64_t y = ((const struct span *)spans)[*(const size_t *)b].start_ns;
    return (x > y) - (x < y);
}

/* The first window ending after t (windows sorted by end), or n. */
static size_t first_ending_after(const struct gpu_window *w, size_t n, int64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w[mid].end_ns <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The tail after the stage a, followed by b; false when there is none. */
static bool tail_between(const struct span *a, const struct span *b, const struct gpu_window *w,
                         size_t n, struct gpu_tail *t)
{
    /* a's last window: the last one ending by a's end and lying within a */
    size_t k = first_ending_after(w, n, a->end_ns);
    if (k == 0 || w[k - 1].start_ns < a->start_ns || !(w[k - 1].active >= GPU_SYNC_BUSY))
        return false;
    /* the windows after a's end, up to b's end */
    while (k < n && w[k].start_ns < a->end_ns)
        k++;
    if (k >= n || w[k].end_ns > b->end_ns ||
        w[k].start_ns - a->end_ns > w[k].end_ns - w[k].start_ns)
        return false;
    /* busy windows, then windows below busy (utilisation's long windows pass through values
     * between busy and idle as the tail drains), at least one of them idle */
    size_t busy = 0, after = 0, idle = 0;
    double active = 0, cpu = 0;
    int64_t busy_end = a->end_ns;
    bool cpu_known = true;
    for (; k < n && w[k].end_ns <= b->end_ns; k++) {
        if (!isfinite(w[k].active))
            return false;
        if (after == 0 && w[k].active >= GPU_SYNC_BUSY) {
            busy++;
            active += w[k].active;
            busy_end = w[k].end_ns;
            cpu_known = cpu_known && isfinite(w[k].cpu_cores);
            if (cpu_known)
                cpu += w[k].cpu_cores;
        } else if (busy > 0 && w[k].active < GPU_SYNC_BUSY) {
            after++;
            idle += w[k].active < GPU_SYNC_IDLE;
        } else {
            return false; /* the GPU works again in b: b's own work */
        }
    }
    if (busy == 0 || idle == 0)
        return false;
    cpu = cpu_known ? cpu / (double)busy : NAN;
    if (isfinite(cpu) && cpu > GPU_SYNC_HOST_MAX)
        return false;
    t->tail_ns = busy_end - a->end_ns;
    t->active = active / (double)busy;
    t->cpu_cores = cpu;
    return true;
}

size_t gpu_sync_tails(const struct span *spans, size_t n_spans, const struct gpu_window *windows,
                      size_t n_windows, struct gpu_tail *out, size_t max)
{
    size_t n_top = 0;
    size_t *order = xmalloc((n_spans + 1) * sizeof *order);
    for (size_t i = 0; i < n_spans; i++)
        if (top_level(&spans[i]))
            order[n_top++] = i;
    qsort_r(order, n_top, sizeof *order, by_start, (void *)spans);

    size_t found = 0;
    int64_t open_until = INT64_MIN; /* the latest end of the stages before the current one */
    for (size_t i = 0; i + 1 < n_top && found < max; i++) {
        const struct span *a = &spans[order[i]], *b = &spans[order[i + 1]];
        bool other_open = open_until > a->end_ns; /* an earlier stage still open after a */
        if (a->end_ns > open_until)
            open_until = a->end_ns;
        /* b must be the next stage of the same process, right after a, with none beside it */
        if (other_open || b->pid != a->pid || b->start_ns < a->end_ns ||
            b->start_ns - a->end_ns > GPU_SYNC_GAP_MAX_NS ||
            (i + 2 < n_top && spans[order[i + 2]].start_ns < b->end_ns))
            continue;
        struct gpu_tail t = {.stage = order[i], .next = order[i + 1]};
        if (tail_between(a, b, windows, n_windows, &t))
            out[found++] = t;
    }
    free(order);
    return found;
}

/* ---- over a result ---- */

static int by_end(const void *a, const void *b)
{
    int64_t x = ((const struct gpu_window *)a)->end_ns, y = ((const struct gpu_window *)b)->end_ns;
    return (x > y) - (x < y);
}

/* The workload's cores busy between run-relative times from and to: the CPU-time counter's
 * difference between the samples nearest them; NAN when not sampled. */
static double cores_between(const struct sample_table *tab, long cpu, int64_t t0, int64_t from,
                            int64_t to)
{
    if (cpu < 0 || tab->n < 2)
        return NAN;
    /* i: the last sample at or before from (else the first); j: the first at or after to
     * (else the last); binary searches, as a long run has many samples */
    size_t lo = 0, hi = tab->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (tab->t_ns[mid] - t0 <= from)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t i = lo > 0 ? lo - 1 : 0;
    lo = i, hi = tab->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (tab->t_ns[mid] - t0 < to)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t j = lo < tab->n ? lo : tab->n - 1;
    if (j <= i)
        return NAN;
    double dt = (double)(tab->t_ns[j] - tab->t_ns[i]) / 1e9;
    double v = tab->v[cpu][j] - tab->v[cpu][i];
    return dt > 0 && isfinite(v) && v >= 0 ? v / dt : NAN;
}

/* The GPU windows of one run on the GPUs in mask: GPM's SM active where sampled, else NVML's
 * utilisation; *gpm says which. Returns the windows (sorted by end; caller frees) and their
 * number in *n. */
static struct gpu_window *run_windows(const struct repetition *rep, uint64_t mask, bool *gpm,
                                      size_t *n)
{
    const struct sample_table *tab = &rep->samples;
    int64_t t0 = rep->outcome.start_ns;
    *n = 0;
    *gpm = false;
    for (size_t s = 0; s < tab->n_series && !*gpm; s++) {
        int g;
        if (!strcmp(tab->defs[s].name, "gpu_sm_active_ratio") &&
            sscanf(tab->defs[s].labels, "gpu=\"%d\"", &g) == 1 && g >= 0 && g < 64 &&
            (mask & (1ull << g)))
            for (size_t row = 0; row < tab->n && !*gpm; row++)
                *gpm = isfinite(tab->v[s][row]);
    }
    const char *metric = *gpm ? "gpu_sm_active_ratio" : "gpu_utilization_ratio";
    long cpu = sample_table_find(tab, "process_cpu_seconds_total", NULL);
    struct gpu_window *w = xcalloc(tab->n + 1, sizeof *w);
    /* A GPM value covers the time since the previous GPM sample: the last row with a value,
     * or the run's first row (a sample with nothing before it to compare); ticks closer than
     * GPM's 100 ms to the last sample take none and have no value (src/sources/nvml.c). */
    int64_t since = tab->n ? tab->t_ns[0] - t0 : 0;
    for (size_t row = *gpm ? 1 : 0; row < tab->n; row++) {
        double active = NAN;
        for (size_t s = 0; s < tab->n_series; s++) {
            int g;
            if (strcmp(tab->defs[s].name, metric) != 0 ||
                sscanf(tab->defs[s].labels, "gpu=\"%d\"", &g) != 1 || g < 0 || g >= 64 ||
                !(mask & (1ull << g)) || !isfinite(tab->v[s][row]))
                continue;
            if (!(active >= tab->v[s][row]))
                active = tab->v[s][row];
        }
        if (!isfinite(active))
            continue;
        int64_t end = tab->t_ns[row] - t0;
        int64_t start = *gpm ? since : end - GPU_SYNC_UTIL_WINDOW_NS;
        since = end;
        w[*n] = (struct gpu_window){start, end, active, cores_between(tab, cpu, t0, start, end)};
        (*n)++;
    }
    qsort(w, *n, sizeof *w, by_end);
    return w;
}

/* What the runs say about one pair of stages. */
struct pair {
    const char *stage, *next; /* borrowed from a run's event log */
    size_t runs, tails;       /* runs where both appear; of them, runs with a tail */
    int64_t tail_max_ns;
    double active_sum, cpu_sum;
    size_t cpu_n;
    bool gpm;
    size_t last_run;          /* the run that last had a tail: counted once per run */
};

static struct pair *pair_of(struct pair *pairs, size_t *n, const char *stage, const char *next)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp(pairs[i].stage, stage) && !strcmp(pairs[i].next, next))
            return &pairs[i];
    if (*n == GPU_SYNC_MAX_PAIRS)
        return NULL;
    pairs[*n] = (struct pair){.stage = stage, .next = next, .last_run = SIZE_MAX};
    return &pairs[(*n)++];
}

/* Counts the runs in which both stages of each pair with a tail appear. */
static void count_runs(const struct result *r, struct pair *pairs, size_t n_pairs)
{
    for (size_t k = 0; k < r->n_reps; k++) {
        const struct repetition *rep = &r->reps[k];
        if (rep->warmup || rep->outcome.status != RUN_OK)
            continue;
        for (size_t p = 0; p < n_pairs; p++) {
            bool a = false, b = false;
            for (size_t i = 0; i < rep->stages.n_stages; i++) {
                const char *name = event_log_str(&rep->log, rep->stages.stages[i].name);
                a = a || !strcmp(name, pairs[p].stage);
                b = b || !strcmp(name, pairs[p].next);
            }
            pairs[p].runs += a && b;
        }
    }
}

/* ---- what the marker client saw: work queued at a stage's end ---- */

/* The same by end. */
static int span_by_end(const void *a, const void *b, void *spans)
{
    int64_t x = ((const struct span *)spans)[*(const size_t *)a].end_ns;
    int64_t y = ((const struct span *)spans)[*(const size_t *)b].end_ns;
    return (x > y) - (x < y);
}

/* The stage a GPU_SYNC_QUEUED instant was sent in: the span of its thread that ended first
 * after it (the client sends it just before the stage's end), by[] the spans' indices sorted
 * by end. NULL when none is found within GPU_SYNC_QUEUED_SCAN spans. */
static const struct span *queued_stage(const struct stage_data *d, const size_t *by,
                                       const struct instant *in)
{
    size_t lo = 0, hi = d->n_spans;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->spans[by[mid]].end_ns < in->t_ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t k = lo; k < d->n_spans && k < lo + GPU_SYNC_QUEUED_SCAN; k++) {
        const struct span *sp = &d->spans[by[k]];
        if (sp->pid == in->pid && sp->tid == in->tid && sp->start_ns <= in->t_ns && sp->closed)
            return sp;
    }
    return NULL;
}

/* One stage the marker client saw end with GPU work queued. */
struct queued {
    const char *stage;  /* borrowed from a run's event log */
    size_t runs, last_run;
};

/* Counts, per stage, the runs in which the marker client saw it end with GPU work queued. */
static size_t queued_stages(const struct result *r, struct queued *q, size_t max)
{
    size_t n = 0;
    for (size_t k = 0; k < r->n_reps; k++) {
        const struct repetition *rep = &r->reps[k];
        const struct stage_data *d = &rep->stages;
        if (rep->warmup || rep->outcome.status != RUN_OK || d->n_instants == 0)
            continue;
        size_t *by = NULL;
        for (size_t i = 0; i < d->n_instants; i++) {
            if (strcmp(event_log_str(&rep->log, d->instants[i].name), GPU_SYNC_QUEUED) != 0)
                continue;
            if (!by) {
                by = xmalloc((d->n_spans + 1) * sizeof *by);
                for (size_t j = 0; j < d->n_spans; j++)
                    by[j] = j;
                qsort_r(by, d->n_spans, sizeof *by, span_by_end, d->spans);
            }
            const struct span *sp = queued_stage(d, by, &d->instants[i]);
            if (!sp)
                continue;
            const char *name = event_log_str(&rep->log, sp->name);
            size_t j = 0;
            while (j < n && strcmp(q[j].stage, name) != 0)
                j++;
            if (j == n) {
                if (n == max)
                    continue;
                q[n++] = (struct queued){.stage = name, .last_run = SIZE_MAX};
            }
            if (q[j].last_run != k)
                q[j].runs++, q[j].last_run = k;
        }
        free(by);
    }
    return n;
}

/* Runs (measured, ok) in which a stage of this name appears. */
static size_t runs_with(const struct result *r, const char *stage)
{
    size_t n = 0;
    for (size_t k = 0; k < r->n_reps; k++) {
        const struct repetition *rep = &r->reps[k];
        if (rep->warmup || rep->outcome.status != RUN_OK)
            continue;
        for (size_t i = 0; i < rep->stages.n_stages; i++)
            if (!strcmp(event_log_str(&rep->log, rep->stages.stages[i].name), stage)) {
                n++;
                break;
            }
    }
    return n;
}

void gpu_sync_check(struct result *r)
{
    /* What the marker client saw is certain: it needs no GPU measured, and the timelines'
     * reading is not repeated for the stages it names. */
    struct queued queued[GPU_SYNC_MAX_PAIRS];
    size_t n_queued = queued_stages(r, queued, GPU_SYNC_MAX_PAIRS);
    for (size_t i = 0; i < n_queued; i++)
        summary_warn(&r->summary, "gpu_unsynchronized",
                     "stage '%s' ended with GPU work still queued in %zu of %zu runs (the marker "
                     "client found PyTorch's CUDA stream busy at its end): its time leaves that "
                     "work out, and whatever waits for it next (the next stage, or a later "
                     ".item()) is charged for it; synchronise before the stage ends "
                     "(torch.cuda.synchronize(), or an event's synchronize()), or time the GPU "
                     "work with CUDA events",
                     queued[i].stage, queued[i].runs, runs_with(r, queued[i].stage));
    if (!r->gpus_shown)
        return;
    struct pair pairs[GPU_SYNC_MAX_PAIRS];
    size_t n_pairs = 0;
    for (size_t k = 0; k < r->n_reps; k++) {
        const struct repetition *rep = &r->reps[k];
        if (rep->warmup || rep->outcome.status != RUN_OK || rep->samples.n < 3 ||
            rep->stages.n_spans < 2)
            continue;
        bool gpm;
        size_t n_w;
        struct gpu_window *w = run_windows(rep, r->gpus_shown, &gpm, &n_w);
        struct gpu_tail tails[16];
        size_t n_t = gpu_sync_tails(rep->stages.spans, rep->stages.n_spans, w, n_w, tails, 16);
        for (size_t i = 0; i < n_t; i++) {
            const char *a = event_log_str(&rep->log, rep->stages.spans[tails[i].stage].name);
            const char *b = event_log_str(&rep->log, rep->stages.spans[tails[i].next].name);
            struct pair *p = pair_of(pairs, &n_pairs, a, b);
            if (!p || p->last_run == k)
                continue;
            p->last_run = k;
            p->tails++;
            if (tails[i].tail_ns > p->tail_max_ns)
                p->tail_max_ns = tails[i].tail_ns;
            p->active_sum += tails[i].active;
            if (isfinite(tails[i].cpu_cores))
                p->cpu_sum += tails[i].cpu_cores, p->cpu_n++;
            p->gpm = gpm;
        }
        free(w);
    }
    count_runs(r, pairs, n_pairs);
    for (size_t i = 0; i < n_pairs; i++) {
        const struct pair *p = &pairs[i];
        bool named = false;
        for (size_t j = 0; j < n_queued && !named; j++)
            named = !strcmp(queued[j].stage, p->stage);
        if (named || 2 * p->tails < p->runs)
            continue;
        char tail[32], host[64] = "";
        if (p->cpu_n)
            snprintf(host, sizeof host, " (%.1f cores busy)", p->cpu_sum / (double)p->cpu_n);
        summary_warn(&r->summary, "gpu_unsynchronized",
                     "stage '%s' seems to end before its GPU work does: in %zu of %zu runs the GPU "
                     "stayed busy (%s %.0f %%) up to %s into '%s', then fell idle while the host "
                     "waited%s. '%s' leaves out GPU work still queued and '%s' includes it: "
                     "synchronise before the stage ends (torch.cuda.synchronize(), or an event's "
                     "synchronize()), or time the GPU work with CUDA events",
                     p->stage, p->tails, p->runs, p->gpm ? "SM active" : "utilisation",
                     100 * p->active_sum / (double)p->tails,
                     units_duration((double)p->tail_max_ns, tail, sizeof tail), p->next, host,
                     p->stage, p->next);
    }
}
