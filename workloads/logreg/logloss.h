/* logloss: scikit-learn's binary logistic-regression objective on fp32 data (1.2's
 * LinearModelLoss with HalfBinomialLoss, lbfgs solver):
 *     f(w, b) = sum_i [log(1 + exp(z_i)) - y_i z_i] + 0.5 / C * ||w||^2,   z_i = x_i'w + b,
 * the intercept b unpenalised, and its gradient, in one pass over X per evaluation: each
 * worker of a pool takes a contiguous range of fixed row blocks and, for every few rows while
 * they are in L1, computes z, the loss and r = sigmoid(z) - y, and adds r x_i to the block's
 * partial gradient. Products and sums are in double. The partial sums are added in block order,
 * so the result does not depend on the number of workers. An AVX-512 kernel is used when the
 * CPU has it, a portable C one otherwise (docs/logreg.md). */
#ifndef MLBENCH_WL_LOGLOSS_H
#define MLBENCH_WL_LOGLOSS_H

struct pool;
struct logloss;

enum logloss_kernel {
    LOGLOSS_KERNEL_AUTO,    /* the fastest this CPU runs */
    LOGLOSS_KERNEL_GENERIC, /* portable C */
    LOGLOSS_KERNEL_AVX512,  /* x86-64 with AVX-512 F and VL */
};

/* The objective on X (n x d, row-major) and labels y (0 or 1), both borrowed (they must outlive
 * the object), with inverse regularisation C > 0, run on pool (borrowed). NULL when out of
 * memory. One object must be used by one thread at a time. */
struct logloss *logloss_create(const float *X, const float *y, long n, long d, double C,
                               struct pool *pool);
void logloss_free(struct logloss *ll);

/* Nonzero when this CPU and build run `kernel` (AUTO and GENERIC always). Thread-safe. */
int logloss_kernel_available(enum logloss_kernel kernel);
/* Chooses the kernel. Returns 0, or -1 when this CPU (or build) lacks it (kernel unchanged). */
int logloss_set_kernel(struct logloss *ll, enum logloss_kernel kernel);
/* "avx512" or "generic". */
const char *logloss_kernel_name(const struct logloss *ll);

/* f at wb (d + 1 entries: w, then b); writes the gradient (d + 1 entries) into grad. */
double logloss_eval(struct logloss *ll, const double *wb, double *grad);
/* Matches logloss_eval's signature for lbfgs_minimize (ctx is the struct logloss). */
double logloss_eval_cb(void *ctx, const double *wb, double *grad);

/* Fraction of rows whose predicted class (z > 0, as scikit-learn's predict) equals y. */
double logloss_accuracy(struct logloss *ll, const double *wb);

/* Evaluations so far and the wall seconds they took (logloss_eval only). */
long logloss_evals(const struct logloss *ll);
double logloss_eval_seconds(const struct logloss *ll);
/* Bytes of X one evaluation reads. */
double logloss_bytes_per_eval(const struct logloss *ll);

#endif
