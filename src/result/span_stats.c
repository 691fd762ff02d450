/* span_stats: per-stage latency distributions (see span_stats.h). */
#include "result/span_stats.h"

#include <math.h>
#include <stdlib.h>

#include "analysis/stats.h"
#include "util/xalloc.h"

int span_stats_bin(double ns)
{
    if (!(ns >= 1))
        return 0;
    int b = (int)floor(SPAN_STATS_BINS_PER_OCTAVE * log2(ns));
    /* log2 may round across a bin edge: settle it against the edge itself */
    if (b > 0 && ns < exp2((double)b / SPAN_STATS_BINS_PER_OCTAVE))
        b--;
    else if (ns >= exp2((double)(b + 1) / SPAN_STATS_BINS_PER_OCTAVE))
        b++;
    return b < 0 ? 0 : b > SPAN_STATS_MAX_BIN ? SPAN_STATS_MAX_BIN : b;
}

struct span_stats *span_stats_make(double *d, size_t n)
{
    if (n == 0)
        return NULL;
    stats_sort(d, n);
    struct span_stats *s = xcalloc(1, sizeof *s);
    s->n = n;
    s->p50_ns = stats_quantile_sorted(d, n, 0.50);
    s->p90_ns = stats_quantile_sorted(d, n, 0.90);
    s->p99_ns = stats_quantile_sorted(d, n, 0.99);
    s->p999_ns = stats_quantile_sorted(d, n, 0.999);
    s->max_ns = d[n - 1];
    s->first_bin = span_stats_bin(d[0]);
    s->n_bins = (size_t)(span_stats_bin(d[n - 1]) - s->first_bin + 1);
    s->counts = xcalloc(s->n_bins, sizeof *s->counts);
    for (size_t i = 0; i < n; i++)
        s->counts[span_stats_bin(d[i]) - s->first_bin]++;
    return s;
}

void span_stats_free(struct span_stats *s)
{
    if (!s)
        return;
    free(s->counts);
    free(s);
}
