/* stats: summary statistics of repeated measurements (see stats.h). The methods, and why they
 * were chosen, are explained for users in docs/statistics.md. */
#include "analysis/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

/* Iglewicz and Hoaglin (1993): 0.6745 is the 0.75 quantile of the standard normal, so
 * MAD / 0.6745 estimates sigma. When MAD is 0, IBM SPSS's convention uses the mean absolute
 * deviation from the median, scaled by sqrt(pi/2) = 1.253314 (MeanAD / 0.7979 estimates sigma). */
#define MODZ_MAD_SCALE 0.6745
#define MODZ_MEANAD_SCALE 1.253314

#define CI_TARGET 0.95

static const double LN_2PI = 1.837877066409345483560659472811; /* log(2 pi) */

/* Median, raw MAD and mean absolute deviation from the median of one sample. */
struct robust {
    double median;
    double mad;
    double mean_ad;
};

static int all_finite(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return 0;
    return 1;
}

static int cmp_double(const void *a, const void *b)
{
    double da = *(const double *)a, db = *(const double *)b;
    return (da > db) - (da < db);
}

/* Median of s[0..n-1], which is sorted; n > 0. */
static double sorted_median(const double *s, size_t n)
{
    if (n % 2)
        return s[n / 2];
    /* Halving before adding cannot overflow, whatever the magnitudes. */
    return s[n / 2 - 1] / 2 + s[n / 2] / 2;
}

/* Fills *r for x[0..n-1] (n > 0, all finite). scratch holds 2n doubles: on return
 * scratch[0..n-1] is x sorted; scratch[n..2n-1] is clobbered. */
static void robust_compute(const double *x, size_t n, double *scratch, struct robust *r)
{
    double *sorted = scratch, *dev = scratch + n;
    memcpy(sorted, x, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_double);
    r->median = sorted_median(sorted, n);

    /* long double: less rounding when n is large. */
    long double sum_ad = 0;
    for (size_t i = 0; i < n; i++) {
        dev[i] = fabs(sorted[i] - r->median);
        sum_ad += dev[i];
    }
    r->mean_ad = (double)(sum_ad / (long double)n);
    qsort(dev, n, sizeof *dev, cmp_double);
    r->mad = sorted_median(dev, n);
}

static double modified_z(double v, const struct robust *r)
{
    if (r->mad > 0)
        return MODZ_MAD_SCALE * (v - r->median) / r->mad;
    if (r->mean_ad > 0)
        return (v - r->median) / (MODZ_MEANAD_SCALE * r->mean_ad);
    return 0.0;
}

/* stirlerr(m) = log(m!) - log(sqrt(2 pi m) (m/e)^m), the error of Stirling's formula.
 * Exact values for m <= 15 (computed to 50 digits with python3's decimal module: the same
 * numbers as R's sferr_halves table); the asymptotic series beyond, as in Loader (2000). */
static double stirlerr(double m)
{
    static const double small[16] = {
        0.0, /* unused: m == 0 never reaches here */
        0.0810614667953272582196702636, 0.0413406959554092940938220814,
        0.0276779256849983391487892927, 0.0207906721037650931115227718,
        0.0166446911898211921631948654, 0.0138761288230707479987457270,
        0.0118967099458917700950557241, 0.0104112652619720964974785671,
        0.0092554621827127329177286366, 0.0083305634333628712564693187,
        0.0075736754879518407949720242, 0.0069428401072095298656641527,
        0.0064089941880042070684396311, 0.0059513701127588477356244160,
        0.0055547335519628013710386900,
    };
    const double s0 = 1.0 / 12, s1 = 1.0 / 360, s2 = 1.0 / 1260, s3 = 1.0 / 1680,
                 s4 = 1.0 / 1188;
    if (m <= 15)
        return small[(int)m];
    double mm = m * m;
    if (m > 500)
        return (s0 - s1 / mm) / m;
    if (m > 80)
        return (s0 - (s1 - s2 / mm) / mm) / m;
    if (m > 35)
        return (s0 - (s1 - (s2 - s3 / mm) / mm) / mm) / m;
    return (s0 - (s1 - (s2 - (s3 - s4 / mm) / mm) / mm) / mm) / m;
}

/* bd0(x, np) = x log(x / np) + np - x, without the cancellation of that formula when x is
 * close to np (Loader 2000). */
static double bd0(double x, double np)
{
    if (fabs(x - np) < 0.1 * (x + np)) {
        double v = (x - np) / (x + np);
        double s = (x - np) * v;
        double ej = 2 * x * v;
        v *= v;
        for (int j = 1; j < 1000; j++) {
            ej *= v;
            double s1 = s + ej / (2 * j + 1);
            if (s1 == s)
                return s1;
            s = s1;
        }
        return s;
    }
    return x * log(x / np) + np - x;
}

/* P(B = k) for B ~ Binomial(n, 1/2), 0 <= k < n, to a few ulps for any n (Loader's saddle
 * point method, as in R's dbinom: no lgamma, whose cancellation would lose ~9 digits at
 * n = 10^6, and whose glibc version is not thread-safe). */
static double binom_half_pmf(size_t n, size_t k)
{
    if (k == 0)
        return n > 1100 ? 0.0 : ldexp(1.0, -(int)n); /* 2^-n; underflows past 1074 */
    double dn = (double)n, dk = (double)k, half = dn / 2;
    double lc = stirlerr(dn) - stirlerr(dk) - stirlerr(dn - dk) - bd0(dk, half) -
                bd0(dn - dk, half);
    double lf = LN_2PI + log(dk) + log1p(-dk / dn);
    return exp(lc - 0.5 * lf);
}

/* Rank j (1-based) of the median interval [x_(j), x_(n-j+1)]: the largest j <= n/2 whose
 * coverage 1 - 2 P(B <= j-1), B ~ Binomial(n, 1/2), is >= CI_TARGET; j = 1 ([min, max]) when
 * none is. Writes that coverage to *coverage. */
static size_t median_ci_rank(size_t n, double *coverage)
{
    size_t half = n / 2, j = 1, k = 1;
    double cdf = binom_half_pmf(n, 0); /* P(B <= k-1) */
    *coverage = 1.0 - 2.0 * cdf;

    /* Hoeffding: P(B <= n/2 - t) <= exp(-2 t^2 / n), so below n/2 - 6 sqrt(n) the tail is
     * under exp(-72): coverage there is 1 to double precision, and the sum starts there
     * (O(sqrt n) terms instead of O(n)). */
    double start = (double)n / 2 - 6 * sqrt((double)n);
    if (start > 2) {
        k = (size_t)start;
        j = k;
        cdf = 0.0;
        *coverage = 1.0;
    }
    for (; k < half; k++) {
        cdf += binom_half_pmf(n, k);
        double c = 1.0 - 2.0 * cdf; /* coverage of rank k + 1 */
        if (c < CI_TARGET)
            break;
        j = k + 1;
        *coverage = c;
    }
    return j;
}

double stats_median(const double *x, size_t n)
{
    if (n == 0 || !all_finite(x, n))
        return NAN;
    double *sorted = xmalloc(n * sizeof *sorted);
    memcpy(sorted, x, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_double);
    double m = sorted_median(sorted, n);
    free(sorted);
    return m;
}

size_t stats_quantile_rank(size_t n, double q)
{
    if (n == 0 || !(q >= 0 && q <= 1))
        return 0;
    /* The rank ceil(q n), less a hair so that 0.9 * 10 (9.000000000000002 in binary) is 9. */
    double r = ceil(q * (double)n - 1e-9 * fmax(1, q * (double)n));
    return r < 1 ? 1 : r > (double)n ? n : (size_t)r;
}

double stats_quantile_sorted(const double *sorted, size_t n, double q)
{
    size_t k = stats_quantile_rank(n, q);
    return k ? sorted[k - 1] : NAN;
}

void stats_sort(double *x, size_t n)
{
    if (n > 1)
        qsort(x, n, sizeof *x, cmp_double);
}

size_t stats_modified_z(const double *x, size_t n, double *z)
{
    if (n == 0)
        return 0;
    if (!all_finite(x, n)) {
        for (size_t i = 0; i < n; i++)
            z[i] = NAN;
        return 0;
    }
    double *scratch = xcalloc(n, 2 * sizeof *scratch);
    struct robust r;
    robust_compute(x, n, scratch, &r);
    free(scratch);

    size_t outliers = 0;
    for (size_t i = 0; i < n; i++) {
        z[i] = modified_z(x[i], &r);
        if (fabs(z[i]) > STATS_OUTLIER_Z)
            outliers++;
    }
    return outliers;
}

int stats_summarize(const double *x, size_t n, struct stats_summary *out)
{
    *out = (struct stats_summary){0};
    if (n == 0 || !all_finite(x, n))
        return -1;

    double *scratch = xcalloc(n, 2 * sizeof *scratch);
    struct robust r;
    robust_compute(x, n, scratch, &r);
    const double *sorted = scratch;

    /* Two passes (no cancellation of sum of squares minus square of sum), accumulated in long
     * double to keep the rounding of 10^6 additions small. */
    long double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += x[i];
    long double mean = sum / (long double)n, ss = 0;
    for (size_t i = 0; i < n; i++) {
        long double d = x[i] - mean;
        ss += d * d;
    }

    out->n = n;
    out->median = r.median;
    out->mean = (double)mean;
    out->stddev = n > 1 ? (double)sqrtl(ss / (long double)(n - 1)) : 0.0;
    out->mad = r.mad;
    out->min = sorted[0];
    out->max = sorted[n - 1];
    out->cv = out->mean != 0 ? out->stddev / out->mean : 0.0;

    size_t j = median_ci_rank(n, &out->ci_level);
    out->ci_low = sorted[j - 1];
    out->ci_high = sorted[n - j];

    for (size_t i = 0; i < n; i++)
        if (fabs(modified_z(x[i], &r)) > STATS_OUTLIER_Z)
            out->n_outliers++;

    free(scratch);
    return 0;
}
