/* attrib: per-stage statistics of sampled series (see attrib.h). */
#include "measure/attrib.h"

#include <math.h>
#include <stdlib.h>

#include "measure/stages.h"
#include "util/xalloc.h"

/* Index of the interval containing t, or -1; *hint speeds up the monotone scans below. */
static int inside(const struct interval *iv, size_t n, int64_t t, size_t *hint)
{
    while (*hint < n && iv[*hint].end_ns < t)
        (*hint)++;
    return *hint < n && iv[*hint].start_ns <= t && t <= iv[*hint].end_ns;
}

/* The time a sample stands for: half the gaps to its neighbours (a whole gap at either end of
 * the table), so that the mean is time-weighted when the interval varies (adaptive sampling
 * starts at 10 ms) and the plain mean when it does not. 1 when the table has one row. */
static double sample_weight(const struct sample_table *tab, size_t r)
{
    if (tab->n < 2)
        return 1;
    size_t lo = r ? r - 1 : r, hi = r + 1 < tab->n ? r + 1 : r;
    double w = (double)(tab->t_ns[hi] - tab->t_ns[lo]) / (hi - lo == 2 ? 2.0 : 1.0);
    return w > 0 ? w : 1;
}

static void gauge(const struct sample_table *tab, const double *v, int64_t t0,
                  const struct interval *iv, size_t n_iv, struct metric_stat *o)
{
    double sum = 0, weights = 0;
    size_t hint = 0;
    for (size_t r = 0; r < tab->n; r++) {
        if (!isfinite(v[r]) || !inside(iv, n_iv, tab->t_ns[r] - t0, &hint))
            continue;
        double w = sample_weight(tab, r);
        sum += w * v[r];
        weights += w;
        if (o->n == 0 || v[r] < o->min)
            o->min = v[r];
        if (o->n == 0 || v[r] > o->peak)
            o->peak = v[r];
        o->n++;
    }
    if (o->n)
        o->mean = sum / weights;
}

/* Consecutive sampling intervals over which one rate of min and peak is taken. */
struct window {
    double delta, seconds;
    size_t first, last; /* rows ending its first and last interval */
    bool open;
};

static void fold(const struct window *w, double max_rate, bool *any, struct metric_stat *o)
{
    if (!w->open || !(w->seconds > 0))
        return;
    double rate = w->delta / w->seconds;
    if (max_rate > 0 && rate > max_rate)
        rate = max_rate;
    if (!*any || rate < o->min)
        o->min = rate;
    if (!*any || rate > o->peak)
        o->peak = rate;
    *any = true;
}

/* A counter over the intervals whose midpoint lies in the stage: the mean is the whole delta
 * over the whole time; min and peak are rates over windows of consecutive intervals at least
 * ATTRIB_RATE_WINDOW_NS long (a short last one joins the one before), so that the counter's
 * granularity (a 10 ms clock tick of CPU time is a whole core over a 10 ms interval) does not
 * make the peak; a rate above what the quantity can reach (def->max_rate) is clamped to it. */
static void counter(const struct sample_table *tab, const struct series_def *def,
                    const double *v, int64_t t0, const struct interval *iv, size_t n_iv,
                    struct metric_stat *o)
{
    double delta = 0, seconds = 0;
    size_t hint = 0;
    struct window done = {0}, cur = {0};
    bool any = false;
    for (size_t r = 1; r < tab->n; r++) {
        int64_t dt = tab->t_ns[r] - tab->t_ns[r - 1];
        if (dt <= 0 || !isfinite(v[r]) || !isfinite(v[r - 1]))
            continue;
        int64_t mid = (tab->t_ns[r] + tab->t_ns[r - 1]) / 2 - t0;
        if (!inside(iv, n_iv, mid, &hint))
            continue;
        double d = v[r] - v[r - 1], s = (double)dt / 1e9;
        delta += d;
        seconds += s;
        o->n++;
        if (cur.open && r == cur.last + 1 && cur.seconds * 1e9 < ATTRIB_RATE_WINDOW_NS) {
            cur.delta += d;
            cur.seconds += s;
            cur.last = r;
            continue;
        }
        fold(&done, def->max_rate, &any, o);
        done = cur;
        cur = (struct window){d, s, r, r, true};
    }
    if (cur.open && done.open && cur.first == done.last + 1 &&
        cur.seconds * 1e9 < ATTRIB_RATE_WINDOW_NS) {
        done.delta += cur.delta;
        done.seconds += cur.seconds;
        cur.open = false;
    }
    fold(&done, def->max_rate, &any, o);
    fold(&cur, def->max_rate, &any, o);
    if (o->n) {
        o->mean = delta / seconds;
        if (def->max_rate > 0 && o->mean > def->max_rate)
            o->mean = def->max_rate;
    }
}

void attrib_stage(const struct sample_table *tab, int64_t t0_ns, const struct interval *iv,
                  size_t n_iv, struct metric_stat *out)
{
    for (size_t s = 0; s < tab->n_series; s++) {
        struct metric_stat *o = &out[s];
        *o = (struct metric_stat){NAN, NAN, NAN, 0};
        if (tab->defs[s].kind == SERIES_COUNTER)
            counter(tab, &tab->defs[s], tab->v[s], t0_ns, iv, n_iv, o);
        else
            gauge(tab, tab->v[s], t0_ns, iv, n_iv, o);
    }
}

static int by_start(const void *a, const void *b)
{
    const struct interval *x = a, *y = b;
    return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

struct metric_stat **attrib_run(const struct sample_table *tab, int64_t t0_ns, int64_t wall_ns,
                                const struct stage_data *d)
{
    struct metric_stat **rows = xcalloc(d->n_stages + 1, sizeof *rows);
    struct interval *iv = xmalloc((d->n_spans + 1) * sizeof *iv);
    for (size_t k = 0; k < d->n_stages; k++) {
        size_t n = 0;
        for (size_t i = 0; i < d->n_spans; i++)
            if (d->spans[i].name == d->stages[k].name)
                iv[n++] = (struct interval){d->spans[i].start_ns, d->spans[i].end_ns};
        qsort(iv, n, sizeof *iv, by_start);
        size_t m = 0; /* merge overlapping spans (threads, processes) into disjoint intervals */
        for (size_t i = 0; i < n; i++) {
            if (m > 0 && iv[i].start_ns <= iv[m - 1].end_ns) {
                if (iv[i].end_ns > iv[m - 1].end_ns)
                    iv[m - 1].end_ns = iv[i].end_ns;
            } else {
                iv[m++] = iv[i];
            }
        }
        rows[k] = xcalloc(tab->n_series ? tab->n_series : 1, sizeof **rows);
        attrib_stage(tab, t0_ns, iv, m, rows[k]);
    }
    iv[0] = (struct interval){0, wall_ns};
    rows[d->n_stages] = xcalloc(tab->n_series ? tab->n_series : 1, sizeof **rows);
    attrib_stage(tab, t0_ns, iv, 1, rows[d->n_stages]);
    free(iv);
    return rows;
}

void attrib_free(struct metric_stat **rows, size_t n_rows)
{
    if (!rows)
        return;
    for (size_t i = 0; i < n_rows; i++)
        free(rows[i]);
    free(rows);
}
