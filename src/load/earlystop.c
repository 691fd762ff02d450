/* earlystop: LoadGen's early-stopping estimate (see earlystop.h): binomial tails summed in
 * long double from the pmf at k, found by binary search on k. */
#include "load/earlystop.h"

#include <math.h>

/* X ~ Binomial(n, q): q the chance of a query over the latency, p = 1 - q. */
struct binom {
    uint64_t n;
    long double q, p;
    long double log_q, log_p, lgamma_n1; /* lgamma_n1 = log n! */
};

/* lgamma without the global signgam (the arguments here are >= 1: the sign is +). */
static long double log_gamma(long double x)
{
    int sign;
    return lgammal_r(x, &sign);
}

/* log P(X = k), 0 <= k <= n. */
static long double log_pmf(const struct binom *b, uint64_t k)
{
    return b->lgamma_n1 - log_gamma((long double)k + 1) - log_gamma((long double)(b->n - k) + 1) +
           (long double)k * b->log_q + (long double)(b->n - k) * b->log_p;
}

/* Stop a tail once what is left, at most term * r / (1 - r) (the ratios only fall from here),
 * is below 1e-20 of the sum: beyond long double's precision. */
static int tail_done(long double term, long double r, long double sum)
{
    return r < 1 && term * r < (1 - r) * sum * 1e-20L;
}

/* P(X <= k). Below the mode the terms fall away from k downwards, so the sum runs down from
 * k; above it, 1 - P(X > k) runs up from k + 1. O(sqrt(n)) terms either way. */
static long double binom_cdf(const struct binom *b, uint64_t k)
{
    if (k >= b->n)
        return 1;
    long double n = (long double)b->n, term = 1, sum = 1;
    if ((long double)k < (n + 1) * b->q) {
        for (uint64_t j = k; j > 0; j--) {
            /* P(X = j - 1) / P(X = j) */
            long double r = (long double)j * b->p / ((n - (long double)j + 1) * b->q);
            term *= r;
            sum += term;
            if (tail_done(term, r, sum))
                break;
        }
        return expl(log_pmf(b, k)) * sum;
    }
    for (uint64_t j = k + 1; j < b->n; j++) {
        /* P(X = j + 1) / P(X = j) */
        long double r = (n - (long double)j) * b->q / (((long double)j + 1) * b->p);
        term *= r;
        sum += term;
        if (tail_done(term, r, sum))
            break;
    }
    long double above = expl(log_pmf(b, k + 1)) * sum;
    return above < 1 ? 1 - above : 0;
}

/* Sets up *b for n queries at the percentile; 0, or -1 when the arguments are out of range. */
static int binom_init(struct binom *b, uint64_t n, double percentile, double confidence)
{
    if (n == 0 || !(percentile > 0 && percentile < 100) || !(confidence > 0 && confidence < 1))
        return -1;
    /* LoadGen's p is a fraction; its log(1 - p) takes 1 - p in double, as here. */
    double p = hist_fraction(percentile), q = 1 - p;
    if (!(p > 0 && q > 0))
        return -1;
    b->n = n;
    b->p = p;
    b->q = q;
    b->log_p = logl(b->p);
    b->log_q = logl(b->q);
    b->lgamma_n1 = log_gamma((long double)n + 1);
    return 0;
}

int64_t earlystop_max_overlatency(uint64_t n, double percentile, double confidence)
{
    struct binom b;
    if (binom_init(&b, n, percentile, confidence))
        return -1;
    const double alpha = 1 - confidence; /* in double, as LoadGen's `prob < 1 - c` */
    if (!(binom_cdf(&b, 0) < alpha))
        return -1;
    /* P(X <= k) rises with k: lo passes, hi (P = 1) fails. */
    uint64_t lo = 0, hi = n;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (binom_cdf(&b, mid) < alpha)
            lo = mid;
        else
            hi = mid;
    }
    return (int64_t)lo;
}

/* Whether n queries allow an estimate: P(X <= 1) < 1 - confidence. */
static int estimate_possible(uint64_t n, double percentile, double confidence)
{
    struct binom b;
    return binom_init(&b, n, percentile, confidence) == 0 &&
           binom_cdf(&b, 1) < 1 - confidence;
}

uint64_t earlystop_min_queries(double percentile, double confidence)
{
    struct binom b;
    if (binom_init(&b, 1, percentile, confidence))
        return 0;
    /* P(X <= 1) falls as n grows: gallop to a passing n, then bisect. 1 query never passes. */
    uint64_t lo = 1, hi = 2;
    while (!estimate_possible(hi, percentile, confidence)) {
        if (hi > ((uint64_t)1 << 62))
            return 0;
        lo = hi;
        hi *= 2;
    }
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (estimate_possible(mid, percentile, confidence))
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

bool earlystop_estimate(const struct hist *h, double percentile, double confidence,
                        int64_t *estimate_ns)
{
    int64_t k = earlystop_max_overlatency(h->total, percentile, confidence);
    if (k < 1)
        return false;
    *estimate_ns = hist_value_at_rank(h, h->total - (uint64_t)k + 1);
    return true;
}
