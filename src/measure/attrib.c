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

static void gauge(const struct sample_table *tab, const double *v, int64_t t0,
                  const struct interval *iv, size_t n_iv, struct metric_stat *o)
{
    double sum = 0;
    size_t hint = 0;
    for (size_t r = 0; r < tab->n; r++) {
        if (!isfinite(v[r]) || !inside(iv, n_iv, tab->t_ns[r] - t0, &hint))
            continue;
        sum += v[r];
        if (o->n == 0 || v[r] < o->min)
            o->min = v[r];
        if (o->n == 0 || v[r] > o->peak)
            o->peak = v[r];
        o->n++;
    }
    if (o->n)
        o->mean = sum / (double)o->n;
}

static void counter(const struct sample_table *tab, const double *v, int64_t t0,
                    const struct interval *iv, size_t n_iv, struct metric_stat *o)
{
    double delta = 0, seconds = 0;
    size_t hint = 0;
    for (size_t r = 1; r < tab->n; r++) {
        int64_t dt = tab->t_ns[r] - tab->t_ns[r - 1];
        if (dt <= 0 || !isfinite(v[r]) || !isfinite(v[r - 1]))
            continue;
        int64_t mid = (tab->t_ns[r] + tab->t_ns[r - 1]) / 2 - t0;
        if (!inside(iv, n_iv, mid, &hint))
            continue;
        double d = v[r] - v[r - 1], rate = d / ((double)dt / 1e9);
        delta += d;
        seconds += (double)dt / 1e9;
        if (o->n == 0 || rate < o->min)
            o->min = rate;
        if (o->n == 0 || rate > o->peak)
            o->peak = rate;
        o->n++;
    }
    if (o->n)
        o->mean = delta / seconds;
}

void attrib_stage(const struct sample_table *tab, int64_t t0_ns, const struct interval *iv,
                  size_t n_iv, struct metric_stat *out)
{
    for (size_t s = 0; s < tab->n_series; s++) {
        struct metric_stat *o = &out[s];
        *o = (struct metric_stat){NAN, NAN, NAN, 0};
        if (tab->defs[s].kind == SERIES_COUNTER)
            counter(tab, tab->v[s], t0_ns, iv, n_iv, o);
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
