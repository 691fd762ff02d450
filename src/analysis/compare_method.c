/* compare_method: the options, the runs that count and the verdict of a comparison (see
 * compare_method.h; the method is in docs/compare.md#verdict). */
#include "analysis/compare_method.h"

#include <math.h>
#include <stdbool.h>

void compare_options_default(struct compare_options *opt)
{
    opt->alpha = COMPARE_DEFAULT_ALPHA;
    opt->min_effect_pct = COMPARE_DEFAULT_MIN_EFFECT_PCT;
    opt->resamples = COMPARE_DEFAULT_RESAMPLES;
    opt->seed = COMPARE_DEFAULT_SEED;
}

bool compare_run_counts(const struct doc_run *run)
{
    return !run->warmup && run->ok;
}

static bool within_effect(const struct compare_options *opt, double lo, double hi)
{
    double m = opt->min_effect_pct / 100;
    return isfinite(lo) && isfinite(hi) && m > 0 && lo >= 1 / (1 + m) && hi <= 1 + m;
}

const char *compare_interval_verdict(const struct compare_options *opt, double change_pct,
                                     double lo, double hi)
{
    if (isfinite(change_pct) && fabs(change_pct) >= opt->min_effect_pct && isfinite(lo) &&
        isfinite(hi) && (hi < 1 || lo > 1))
        return hi < 1 ? "faster" : "slower";
    return within_effect(opt, lo, hi) ? "no change" : "inconclusive";
}

double compare_rank_p_min(size_t nb, size_t nc)
{
    /* C(nb + nc, nb) by its product, stopped once it passes 2e12 (p_min below 1e-12) */
    double comb = 1;
    size_t k = nb < nc ? nb : nc, n = nb + nc;
    for (size_t i = 1; i <= k && comb < 2e12; i++)
        comb = comb * (double)(n - k + i) / (double)i;
    return comb > 2 ? 2 / comb : 1;
}

/* The smallest and largest of the ratios c[j] / b[i] (b > 0); -1 when there is none, or when
 * there would be more than PAIRS_MAX (the test reaches any alpha long before: only an alpha
 * below 1e-12 on samples that large would ask for them). */
#define PAIRS_MAX 1000000.0
static int pairwise_range(const double *b, size_t nb, const double *c, size_t nc, double *lo,
                          double *hi)
{
    if ((double)nb * (double)nc > PAIRS_MAX)
        return -1;
    *lo = INFINITY;
    *hi = -INFINITY;
    for (size_t i = 0; i < nb; i++)
        for (size_t j = 0; j < nc; j++) {
            if (!(b[i] > 0) || !isfinite(c[j]))
                return -1;
            double r = c[j] / b[i];
            *lo = fmin(*lo, r);
            *hi = fmax(*hi, r);
        }
    return isfinite(*lo) && isfinite(*hi) ? 0 : -1;
}

/* Runs a side after which an interval now [lo, hi] from about n runs a side would be
 * +-settle_pct wide (the width goes as 1/sqrt(runs)); -1 beyond COMPARE_RUNS_NEEDED_MAX. */
static long runs_needed(double lo, double hi, double n, double settle_pct)
{
    if (!(lo > 0) || !(hi >= lo) || !(settle_pct > 0))
        return 0;
    double now = log(hi / lo) / 2, target = log1p(settle_pct / 100);
    double runs = ceil(n * (now / target) * (now / target));
    if (runs <= n)
        runs = n + 1;
    return runs > COMPARE_RUNS_NEEDED_MAX ? -1 : (long)runs;
}

void compare_decide(const struct compare_options *opt, const double *b, size_t nb,
                    const double *c, size_t nc, double change_pct, double p, double ci_lo,
                    double ci_hi, struct compare_decision *d)
{
    *d = (struct compare_decision){.verdict = "too few runs", .lo = ci_lo, .hi = ci_hi,
                                   .level = 1 - opt->alpha};
    if (nb < 2 || nc < 2)
        return;
    double p_min = compare_rank_p_min(nb, nc);
    bool effect = isfinite(change_pct) && fabs(change_pct) >= opt->min_effect_pct;
    if (p_min < opt->alpha) {
        if (p < opt->alpha && effect && isfinite(ci_lo) && isfinite(ci_hi) &&
            (ci_hi < 1 || ci_lo > 1)) {
            d->verdict = ci_hi < 1 ? "faster" : "slower";
            d->decided_by = "rank test";
            return;
        }
    } else if (pairwise_range(b, nb, c, nc, &d->lo, &d->hi) == 0) {
        d->level = 1 - p_min;
        if (d->level >= COMPARE_INTERVAL_LEVEL_MIN && effect && (d->hi < 1 || d->lo > 1)) {
            d->verdict = d->hi < 1 ? "faster" : "slower";
            d->decided_by = "ratio interval";
            return;
        }
    } else {
        d->lo = d->hi = NAN;
    }
    if (d->level >= COMPARE_INTERVAL_LEVEL_MIN && within_effect(opt, d->lo, d->hi)) {
        d->verdict = "no change";
        return;
    }
    d->verdict = "inconclusive";
    d->settle_pct = fmax(fmax(opt->min_effect_pct, isfinite(change_pct) ? fabs(change_pct) / 2
                                                                        : 0), 0.5);
    d->runs_needed = runs_needed(d->lo, d->hi, (double)(nb + nc) / 2, d->settle_pct);
}
