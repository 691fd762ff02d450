/* logloss_kernel: the per-block kernels behind logloss.c (one portable, one AVX-512 in
 * logloss_avx512.c) and the per-row loss they share. Internal to the logreg folder. */
#ifndef MLBENCH_WL_LOGLOSS_KERNEL_H
#define MLBENCH_WL_LOGLOSS_KERNEL_H

#include <math.h>

/* For rows [0, m) of X (m x d, row-major) with labels y, weights w (d) and intercept b: adds
 * sum of log-losses to *loss, sum of r_i x_i to g (d entries) and sum of r_i to *gb, where
 * r_i = sigmoid(z_i) - y_i. */
typedef void logloss_block_fn(const float *X, const float *y, long m, long d, const double *w,
                              double b, double *g, double *gb, double *loss);
/* For rows [0, m): the number whose predicted class (z > 0) equals y. */
typedef long logloss_correct_fn(const float *X, const float *y, long m, long d,
                                const double *w, double b);

logloss_block_fn logloss_block_generic;
logloss_correct_fn logloss_correct_generic;
/* NULL when the build cannot target AVX-512 (not x86-64). */
extern logloss_block_fn *const logloss_block_avx512;
extern logloss_correct_fn *const logloss_correct_avx512;
/* Nonzero when the CPU runs logloss_block_avx512. */
int logloss_cpu_has_avx512(void);

/* log(1 + exp(z)) - y z and r = sigmoid(z) - y, without overflow for any z (one exp, one
 * log1p). */
static inline double logloss_row(double z, double y, double *r)
{
    double e = exp(-fabs(z));
    double sigmoid = z >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
    *r = sigmoid - y;
    return fmax(z, 0.0) - y * z + log1p(e);
}

#endif
