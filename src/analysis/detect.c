/* detect: step changes in a series of results (see detect.h; method in docs/store.md).
 *
 * On the log scale (timing noise is multiplicative, changes are read in percent) each point i
 * has a variance v_i = tau^2 + s_i^2: s_i is the standard error of the result's own median (from
 * its interval, or its MAD and n), tau^2 the drift between invocations that no single result
 * sees, estimated from the median absolute successive difference of the series (a step moves
 * only one difference, so it does not inflate the estimate). A segment's level is the weighted
 * median of its points (weights 1 / v_i: a noisy result counts less, an odd result cannot pull
 * the level) with variance (pi / 2) / sum(w). Binary segmentation splits a segment where the
 * difference of the two levels over its standard error is largest, when that strength reaches
 * z and the change reaches the minimum effect; the changes found are then checked again
 * against their final neighbours and the weakest failing one is dropped until all pass. */
#include "analysis/detect.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

#define DETECT_FLOOR 1e-4          /* resolution on the log scale (0.01 %): no zero variance */
#define MAD_TO_SIGMA 1.4826        /* MAD of a normal sample to its standard deviation */
#define MEDIAN_EFFICIENCY 1.2533   /* sqrt(pi / 2): standard error of a median over a mean's */
#define SUCCESSIVE_MAD 0.9539      /* 0.6745 * sqrt(2): median |x(i+1) - x(i)| over sigma */
#define SMALL_SAMPLE 0.5           /* tau from m differences is scaled by 1 + this / sqrt(m) */

void detect_options_default(struct detect_options *opt)
{
    opt->min_effect_pct = DETECT_DEFAULT_MIN_EFFECT_PCT;
    opt->z = DETECT_DEFAULT_Z;
}

/* Standard normal quantile of p in (0.5, 1), by bisection on erfc (ample for a weight). */
static double normal_quantile(double p)
{
    double lo = 0, hi = 10;
    for (int i = 0; i < 80; i++) {
        double mid = (lo + hi) / 2;
        if (1 - 0.5 * erfc(mid / M_SQRT2) < p)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

/* The standard error of a result's median on the log scale, from its own runs; 0 when it
 * carries no spread (one run). */
static double within_sigma(const struct detect_point *p)
{
    if (isfinite(p->ci_low) && isfinite(p->ci_high) && isfinite(p->ci_level) && p->ci_low > 0 &&
        p->ci_high >= p->ci_low && p->ci_level > 0.5) {
        double coverage = p->ci_level < 0.9999 ? p->ci_level : 0.9999;
        return (log(p->ci_high) - log(p->ci_low)) / 2 / normal_quantile((1 + coverage) / 2);
    }
    if (isfinite(p->mad) && p->mad >= 0 && p->n >= 2)
        return MAD_TO_SIGMA * p->mad / p->median * MEDIAN_EFFICIENCY / sqrt((double)p->n);
    return 0;
}

struct pair {
    double y, w;
};

struct series {
    double *y;       /* log of the medians */
    double *v;       /* variance of each point */
    size_t *orig;    /* index in the caller's array */
    size_t n;
    struct pair *scratch; /* for weighted medians */
    double min_log;  /* log(1 + min effect) */
    double z;
};

static int by_y(const void *a, const void *b)
{
    double x = ((const struct pair *)a)->y, y = ((const struct pair *)b)->y;
    return (x > y) - (x < y);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Level of points [a, b) and its variance. */
static void level(struct series *s, size_t a, size_t b, double *lvl, double *var)
{
    size_t m = b - a;
    struct pair *q = s->scratch;
    double total = 0;
    for (size_t i = 0; i < m; i++) {
        q[i].y = s->y[a + i];
        q[i].w = 1 / s->v[a + i];
        total += q[i].w;
    }
    qsort(q, m, sizeof *q, by_y);
    double cum = 0;
    *lvl = q[m - 1].y;
    for (size_t i = 0; i < m; i++) {
        cum += q[i].w;
        if (cum >= total / 2 * (1 - 1e-12)) {
            /* Exactly half the weight below: between this point and the next, as a median. */
            if (i + 1 < m && fabs(cum - total / 2) <= 1e-12 * total)
                *lvl = (q[i].y + q[i + 1].y) / 2;
            else
                *lvl = q[i].y;
            break;
        }
    }
    /* The median of 1 or 2 points is their (weighted) mean; from 3 on, pi/2 as for large n. */
    *var = (m <= 2 ? 1.0 : M_PI / 2) / total;
}

/* Strength and size (log) of a change at k between segments [a, k) and [k, b). */
static double strength(struct series *s, size_t a, size_t k, size_t b, double *diff)
{
    double la, va, lb, vb;
    level(s, a, k, &la, &va);
    level(s, k, b, &lb, &vb);
    *diff = lb - la;
    return fabs(*diff) / sqrt(va + vb);
}

static bool passes(const struct series *s, double z, double diff)
{
    return z >= s->z && fabs(diff) >= s->min_log;
}

struct cuts {
    size_t *k;
    size_t n;
};

/* Binary segmentation of [a, b): appends the accepted cuts (unordered). */
static void segment(struct series *s, size_t a, size_t b, struct cuts *c)
{
    if (b - a < 2)
        return;
    size_t best = 0;
    double best_z = -1, diff;
    for (size_t k = a + 1; k < b; k++) {
        double z = strength(s, a, k, b, &diff);
        if (passes(s, z, diff) && z > best_z) {
            best_z = z;
            best = k;
        }
    }
    if (best_z < 0)
        return;
    c->k[c->n++] = best;
    segment(s, a, best, c);
    segment(s, best, b, c);
}

static int by_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

/* Estimates tau^2 and fills the variances. */
static void variances(struct series *s, const double *within)
{
    double tau2 = 0;
    if (s->n >= 2) {
        double *d = xcalloc(s->n - 1, sizeof *d);
        for (size_t i = 0; i + 1 < s->n; i++)
            d[i] = fabs(s->y[i + 1] - s->y[i]);
        size_t m = s->n - 1;
        qsort(d, m, sizeof *d, by_value);
        double med = m % 2 ? d[m / 2] : (d[m / 2 - 1] + d[m / 2]) / 2;
        /* The median of few differences is itself uncertain: allow for it, or short series
         * would see changes in their noise (about 2 % of series of 10 instead of 1 %). */
        double sb = med / SUCCESSIVE_MAD * (1 + SMALL_SAMPLE / sqrt((double)m));
        double mean_within = 0;
        for (size_t i = 0; i < s->n; i++)
            mean_within += within[i] * within[i] / (double)s->n;
        tau2 = sb * sb > mean_within ? sb * sb - mean_within : 0;
        free(d);
    }
    for (size_t i = 0; i < s->n; i++)
        s->v[i] = tau2 + within[i] * within[i] + DETECT_FLOOR * DETECT_FLOOR;
}

size_t detect_changes(const struct detect_point *p, size_t n, const struct detect_options *opt,
                      struct detect_change **out)
{
    struct detect_options def;
    if (!opt) {
        detect_options_default(&def);
        opt = &def;
    }
    *out = NULL;
    struct series s = {0};
    s.y = xcalloc(n + 1, sizeof *s.y);
    s.v = xcalloc(n + 1, sizeof *s.v);
    s.orig = xcalloc(n + 1, sizeof *s.orig);
    s.scratch = xcalloc(n + 1, sizeof *s.scratch);
    double *within = xcalloc(n + 1, sizeof *within);
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(p[i].median) || p[i].median <= 0)
            continue;
        s.y[s.n] = log(p[i].median);
        within[s.n] = within_sigma(&p[i]);
        s.orig[s.n++] = i;
    }
    s.min_log = log1p(fmax(opt->min_effect_pct, 0) / 100);
    s.z = opt->z > 0 ? opt->z : DETECT_DEFAULT_Z;
    size_t found = 0;
    if (s.n >= 3) {
        variances(&s, within);
        struct cuts c = {xcalloc(s.n, sizeof *c.k), 0};
        segment(&s, 0, s.n, &c);
        qsort(c.k, c.n, sizeof *c.k, by_size);
        /* Each cut against its final neighbours; drop the weakest failing one, again. */
        double *z = xcalloc(c.n + 1, sizeof *z), *diff = xcalloc(c.n + 1, sizeof *diff);
        for (;;) {
            size_t weakest = c.n;
            for (size_t j = 0; j < c.n; j++) {
                size_t a = j ? c.k[j - 1] : 0, b = j + 1 < c.n ? c.k[j + 1] : s.n;
                z[j] = strength(&s, a, c.k[j], b, &diff[j]);
                if (!passes(&s, z[j], diff[j]) && (weakest == c.n || z[j] < z[weakest]))
                    weakest = j;
            }
            if (weakest == c.n)
                break;
            memmove(&c.k[weakest], &c.k[weakest + 1], (c.n - weakest - 1) * sizeof *c.k);
            c.n--;
        }
        if (c.n) {
            *out = xcalloc(c.n, sizeof **out);
            for (size_t j = 0; j < c.n; j++) {
                size_t a = j ? c.k[j - 1] : 0, b = j + 1 < c.n ? c.k[j + 1] : s.n;
                double la, lb, var;
                level(&s, a, c.k[j], &la, &var);
                level(&s, c.k[j], b, &lb, &var);
                (*out)[j].index = s.orig[c.k[j]];
                (*out)[j].before = exp(la);
                (*out)[j].after = exp(lb);
                (*out)[j].change_pct = 100 * expm1(lb - la);
                (*out)[j].z = z[j];
            }
            found = c.n;
        }
        free(z);
        free(diff);
        free(c.k);
    }
    free(s.y);
    free(s.v);
    free(s.orig);
    free(s.scratch);
    free(within);
    return found;
}
