/* significance: the statistics behind a comparison (see significance.h): a seeded xoshiro256**
 * generator, the Mann-Whitney U test and the bootstrap interval of the ratio of medians or of
 * quantiles. The
 * method and its references are in docs/compare.md. */
#include "analysis/significance.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats.h"
#include "util/xalloc.h"

/* ---- random numbers: xoshiro256** seeded through splitmix64 (Blackman and Vigna) ---- */

struct rng {
    uint64_t s[4];
};

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static void rng_seed(struct rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(struct rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* Uniform in [0, n), n > 0, without modulo bias (rejection of the incomplete last block). */
static size_t rng_below(struct rng *r, size_t n)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % (uint64_t)n;
    uint64_t x;
    do
        x = rng_next(r);
    while (x >= limit);
    return (size_t)(x % (uint64_t)n);
}

/* Uniform in (0, 1): 53 random bits, never 0 or 1. */
static double rng_open01(struct rng *r)
{
    return ((double)(rng_next(r) >> 11) + 0.5) / 9007199254740992.0;
}

/* Standard normal, by Box-Muller (one value of the pair). */
static double rng_normal(struct rng *r)
{
    double u = rng_open01(r), v = rng_open01(r);
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

/* Gamma(a, 1) for a >= 1, by Marsaglia and Tsang's squeeze (ACM TOMS 26, 2000). */
static double rng_gamma(struct rng *r, double a)
{
    double d = a - 1.0 / 3, c = 1 / sqrt(9 * d);
    for (;;) {
        double x = rng_normal(r), v = 1 + c * x;
        if (v <= 0)
            continue;
        v = v * v * v;
        if (log(rng_open01(r)) < 0.5 * x * x + d - d * v + d * log(v))
            return d * v;
    }
}

/* ---- small helpers ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int all_finite(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return 0;
    return 1;
}

/* ---- Mann-Whitney U ---- */

struct ranked {
    double v;
    int from_x;
};

static int cmp_ranked(const void *a, const void *b)
{
    return cmp_double(&((const struct ranked *)a)->v, &((const struct ranked *)b)->v);
}

/* P(U >= u) under H0 for samples of sizes m and n without ties, from the exact distribution:
 * the counts of U are the coefficients of the Gaussian binomial [m+n choose m](q) =
 * prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i). The products and divisions are done in unsigned
 * 64-bit arithmetic: it is exact modulo 2^64, and as every final count is below
 * C(m+n, m) < 2^62 (checked by the caller) the wrapped intermediate values do not matter. */
static double mwu_exact_sf(size_t m, size_t n, size_t u)
{
    if (m > n) {
        size_t t = m;
        m = n;
        n = t;
    }
    size_t top = m * n;
    uint64_t *c = xcalloc(top + m + 1, sizeof *c);
    c[0] = 1;
    size_t deg = 0;
    for (size_t i = 1; i <= m; i++) {
        size_t shift = n + i;
        for (size_t k = deg + shift; k >= shift; k--) /* times (1 - q^shift) */
            c[k] -= c[k - shift];
        for (size_t k = i; k <= deg + shift; k++) /* divided by (1 - q^i) */
            c[k] += c[k - i];
        deg = i * n;
    }
    uint64_t total = 0, tail = 0;
    for (size_t k = 0; k <= top; k++) {
        total += c[k];
        if (k >= u)
            tail += c[k];
    }
    free(c);
    return (double)tail / (double)total;
}

int significance_mann_whitney(const double *x, size_t nx, const double *y, size_t ny,
                              struct significance_mwu *out)
{
    out->u = NAN;
    out->p = NAN;
    out->exact = 0;
    if (nx == 0 || ny == 0 || !all_finite(x, nx) || !all_finite(y, ny))
        return -1;
    size_t n = nx + ny;
    struct ranked *all = xmalloc(n * sizeof *all);
    for (size_t i = 0; i < nx; i++)
        all[i] = (struct ranked){x[i], 1};
    for (size_t i = 0; i < ny; i++)
        all[nx + i] = (struct ranked){y[i], 0};
    qsort(all, n, sizeof *all, cmp_ranked);

    double rank_sum_x = 0, tie_term = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && all[j + 1].v == all[i].v)
            j++;
        double t = (double)(j - i + 1);
        double rank = (double)(i + j) / 2.0 + 1.0; /* average of ranks i+1 .. j+1 */
        for (size_t k = i; k <= j; k++)
            if (all[k].from_x)
                rank_sum_x += rank;
        tie_term += t * t * t - t;
        i = j + 1;
    }
    free(all);

    double dnx = (double)nx, dny = (double)ny, dn = (double)n;
    double u1 = rank_sum_x - dnx * (dnx + 1) / 2;
    double u_big = fmax(u1, dnx * dny - u1);
    out->u = u1;

    /* log2 C(n, min(nx, ny)), summed rather than through lgamma (which sets signgam). */
    size_t small = nx < ny ? nx : ny;
    double log2_arrangements = 0;
    for (size_t k = 1; k <= small; k++)
        log2_arrangements += log2((double)(n - small + k) / (double)k);

    /* exact while the counts fit (see mwu_exact_sf) and the table stays small (80 MB) */
    if (tie_term == 0 && log2_arrangements < 62 && dnx * dny <= 1e7) {
        out->exact = 1;
        out->p = 2 * mwu_exact_sf(nx, ny, (size_t)llround(u_big));
    } else {
        double sigma = sqrt(dnx * dny / 12 * ((dn + 1) - tie_term / (dn * (dn - 1))));
        if (!(sigma > 0)) {
            out->p = 1; /* every value equal: nothing tells the samples apart */
        } else {
            double z = (u_big - dnx * dny / 2 - 0.5) / sigma; /* continuity correction */
            out->p = erfc(z / sqrt(2.0));                      /* 2 * P(Z > z) */
        }
    }
    if (out->p > 1)
        out->p = 1;
    return 0;
}

/* ---- bootstrap of the ratio of medians or quantiles ---- */

/* The nearest-rank q-quantile (stats_quantile_rank: the k-th smallest) of a resample with
 * replacement of sorted[0..n), drawn directly in O(1): the resample's indices are floor(n U)
 * of n uniforms U, so its k-th smallest index is floor(n U_(k)), and the k-th smallest of n
 * uniforms is Beta(k, n - k + 1) = G1 / (G1 + G2) with G1 ~ Gamma(k), G2 ~ Gamma(n - k + 1).
 * Exact, and independent of n (spans: 10^5 values). */
static double resampled_quantile(const double *sorted, size_t n, double q, struct rng *r)
{
    size_t k = stats_quantile_rank(n, q);
    double g1 = rng_gamma(r, (double)k), g2 = rng_gamma(r, (double)(n - k + 1));
    size_t i = (size_t)((double)n * (g1 / (g1 + g2)));
    return sorted[i < n ? i : n - 1];
}

/* The statistic of a resample with replacement of sorted[0..n): the nearest-rank q-quantile
 * for q >= 0; for q < 0 the median (the mean of the two middle values), found from how often
 * each index was drawn (counts: n scratch entries), so no resample needs sorting (this stream
 * is the one stored comparisons were drawn from: keep it). */
static double resampled_statistic(const double *sorted, size_t n, double q, size_t *counts,
                                  struct rng *r)
{
    if (q >= 0)
        return resampled_quantile(sorted, n, q, r);
    memset(counts, 0, n * sizeof *counts);
    for (size_t i = 0; i < n; i++)
        counts[rng_below(r, n)]++;
    size_t lo_rank = (n - 1) / 2, hi_rank = n / 2, seen = 0;
    double lo = NAN;
    for (size_t i = 0; i < n; i++) {
        seen += counts[i];
        if (isnan(lo) && seen > lo_rank)
            lo = sorted[i];
        if (seen > hi_rank)
            return (lo + sorted[i]) / 2;
    }
    return lo; /* not reached: the counts add up to n */
}

/* Quantile q of sorted[0..n) with linear interpolation between order statistics (the default
 * of numpy.percentile and R's type 7). */
static double quantile_sorted(const double *sorted, size_t n, double q)
{
    double h = (double)(n - 1) * q;
    size_t k = (size_t)floor(h);
    if (k + 1 >= n)
        return sorted[n - 1];
    return sorted[k] + (h - (double)k) * (sorted[k + 1] - sorted[k]);
}

/* The bootstrap of statistic q (see resampled_statistic) of both samples: as
 * significance_bootstrap_ratio. */
static int bootstrap_ratio(const double *base, size_t nb, const double *cand, size_t nc,
                           double q, unsigned resamples, uint64_t seed, double level,
                           double *lo, double *hi)
{
    *lo = *hi = NAN;
    if (nb == 0 || nc == 0 || resamples == 0 || !(level > 0 && level < 1) ||
        !all_finite(base, nb) || !all_finite(cand, nc))
        return -1;
    double *sb = xmalloc(nb * sizeof *sb), *sc = xmalloc(nc * sizeof *sc);
    memcpy(sb, base, nb * sizeof *sb);
    memcpy(sc, cand, nc * sizeof *sc);
    qsort(sb, nb, sizeof *sb, cmp_double);
    qsort(sc, nc, sizeof *sc, cmp_double);
    size_t *counts = xmalloc((nb > nc ? nb : nc) * sizeof *counts);
    double *ratios = xmalloc(resamples * sizeof *ratios);
    struct rng r;
    rng_seed(&r, seed);
    int rc = 0;
    for (unsigned i = 0; i < resamples; i++) {
        double mb = resampled_statistic(sb, nb, q, counts, &r);
        double mc = resampled_statistic(sc, nc, q, counts, &r);
        ratios[i] = mc / mb;
        if (mb == 0 || !isfinite(ratios[i])) {
            rc = -1;
            break;
        }
    }
    if (rc == 0) {
        qsort(ratios, resamples, sizeof *ratios, cmp_double);
        *lo = quantile_sorted(ratios, resamples, (1 - level) / 2);
        *hi = quantile_sorted(ratios, resamples, 1 - (1 - level) / 2);
    }
    free(ratios);
    free(counts);
    free(sc);
    free(sb);
    return rc;
}

int significance_bootstrap_ratio(const double *base, size_t nb, const double *cand,
                                 size_t nc, unsigned resamples, uint64_t seed, double level,
                                 double *lo, double *hi)
{
    return bootstrap_ratio(base, nb, cand, nc, -1, resamples, seed, level, lo, hi);
}

int significance_bootstrap_quantile_ratio(const double *base, size_t nb, const double *cand,
                                          size_t nc, double q, unsigned resamples,
                                          uint64_t seed, double level, double *lo, double *hi)
{
    if (!(q >= 0 && q <= 1)) {
        *lo = *hi = NAN;
        return -1;
    }
    return bootstrap_ratio(base, nb, cand, nc, q, resamples, seed, level, lo, hi);
}

/* ---- circular block bootstrap of the ratio of weighted means ---- */

size_t significance_default_block(size_t n)
{
    size_t b = (size_t)llround(cbrt((double)n));
    return b ? b : 1;
}

/* The weighted mean of one circular block resample of v[0..n) (weights w, NULL: 1); NaN when
 * the resample has no weight. */
static double block_resample_mean(const double *v, const double *w, size_t n, size_t block,
                                  struct rng *r)
{
    double sum = 0, weight = 0;
    for (size_t taken = 0; taken < n;) {
        size_t start = rng_below(r, n);
        for (size_t k = 0; k < block && taken < n; k++, taken++) {
            size_t i = (start + k) % n;
            double wi = w ? w[i] : 1;
            sum += wi * v[i];
            weight += wi;
        }
    }
    return weight > 0 ? sum / weight : NAN;
}

static int weights_ok(const double *w, size_t n)
{
    if (!w)
        return 1;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(w[i]) || w[i] < 0)
            return 0;
    return 1;
}

int significance_block_bootstrap_ratio(const double *base, const double *base_w, size_t nb,
                                       const double *cand, const double *cand_w, size_t nc,
                                       size_t block, unsigned resamples, uint64_t seed,
                                       double level, double *lo, double *hi)
{
    *lo = *hi = NAN;
    if (nb == 0 || nc == 0 || resamples == 0 || !(level > 0 && level < 1) ||
        !all_finite(base, nb) || !all_finite(cand, nc) || !weights_ok(base_w, nb) ||
        !weights_ok(cand_w, nc))
        return -1;
    size_t bb = block ? block : significance_default_block(nb);
    size_t bc = block ? block : significance_default_block(nc);
    bb = bb > nb ? nb : bb;
    bc = bc > nc ? nc : bc;
    double *ratios = xmalloc(resamples * sizeof *ratios);
    struct rng r;
    rng_seed(&r, seed);
    int rc = 0;
    for (unsigned i = 0; i < resamples; i++) {
        double mb = block_resample_mean(base, base_w, nb, bb, &r);
        double mc = block_resample_mean(cand, cand_w, nc, bc, &r);
        ratios[i] = mc / mb;
        if (!(mb != 0) || !isfinite(ratios[i])) {
            rc = -1;
            break;
        }
    }
    if (rc == 0) {
        qsort(ratios, resamples, sizeof *ratios, cmp_double);
        *lo = quantile_sorted(ratios, resamples, (1 - level) / 2);
        *hi = quantile_sorted(ratios, resamples, 1 - (1 - level) / 2);
    }
    free(ratios);
    return rc;
}
