/* compare_method: the options, the runs that count and the verdict of a comparison (see
 * compare_method.h; the method is in docs/compare.md#verdict). */
#include "analysis/compare_method.h"

#include <math.h>

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

const char *compare_verdict(const struct compare_options *opt, size_t nb, size_t nc,
                            double change_pct, double p, double ci_lo, double ci_hi)
{
    if (nb < 2 || nc < 2)
        return "too few runs";
    int significant = p < opt->alpha && isfinite(change_pct) &&
                      fabs(change_pct) >= opt->min_effect_pct && isfinite(ci_lo) &&
                      isfinite(ci_hi) && (ci_hi < 1 || ci_lo > 1);
    if (!significant)
        return "no significant change";
    return ci_hi < 1 ? "faster" : "slower";
}
