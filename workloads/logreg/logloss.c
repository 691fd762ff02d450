/* logloss: the logistic-regression objective, its parallel fused pass and the portable kernel
 * (see logloss.h). */
#include "logreg/logloss.h"

#include <stdlib.h>
#include <string.h>

#include "common/opts.h"
#include "common/pool.h"
#include "logreg/logloss_kernel.h"
#include "logreg/lralloc.h"

/* Bytes of X per block: about 256 KiB, so a block's partial sums cost little next to its rows
 * and the blocks spread evenly over the workers. Depends on d only, never on the workers. */
#define BLOCK_BYTES (256L * 1024)

struct logloss {
    const float *X, *y;
    long n, d;
    double inv_C;
    struct pool *pool;
    long block_rows, blocks;
    double *partial; /* blocks x (d + 2): gradient, intercept gradient, loss */
    long *correct;   /* blocks */
    logloss_block_fn *block;
    logloss_correct_fn *count_correct;
    const char *kernel_name;
    const double *wb; /* the point of the pass under way */
    long evals;
    double eval_seconds;
};

void logloss_block_generic(const float *X, const float *y, long m, long d, const double *w,
                           double b, double *g, double *gb, double *loss)
{
    long i = 0;
    double f = 0.0, sb = 0.0;
    /* Four rows at a time: their dot products, then their gradient terms while in L1. */
    for (; i + 4 <= m; i += 4) {
        const float *x0 = X + i * d, *x1 = x0 + d, *x2 = x1 + d, *x3 = x2 + d;
        double z0 = 0.0, z1 = 0.0, z2 = 0.0, z3 = 0.0;
        for (long j = 0; j < d; j++) {
            z0 += (double)x0[j] * w[j];
            z1 += (double)x1[j] * w[j];
            z2 += (double)x2[j] * w[j];
            z3 += (double)x3[j] * w[j];
        }
        double r0, r1, r2, r3;
        f += logloss_row(z0 + b, y[i], &r0) + logloss_row(z1 + b, y[i + 1], &r1) +
             logloss_row(z2 + b, y[i + 2], &r2) + logloss_row(z3 + b, y[i + 3], &r3);
        sb += r0 + r1 + r2 + r3;
        for (long j = 0; j < d; j++)
            g[j] += (double)x0[j] * r0 + (double)x1[j] * r1 + (double)x2[j] * r2 +
                    (double)x3[j] * r3;
    }
    for (; i < m; i++) {
        const float *x = X + i * d;
        double z = 0.0, r;
        for (long j = 0; j < d; j++)
            z += (double)x[j] * w[j];
        f += logloss_row(z + b, y[i], &r);
        sb += r;
        for (long j = 0; j < d; j++)
            g[j] += (double)x[j] * r;
    }
    *loss += f;
    *gb += sb;
}

long logloss_correct_generic(const float *X, const float *y, long m, long d, const double *w,
                             double b)
{
    long correct = 0;
    for (long i = 0; i < m; i++) {
        const float *x = X + i * d;
        double z = b;
        for (long j = 0; j < d; j++)
            z += (double)x[j] * w[j];
        correct += (z > 0.0) == (y[i] > 0.5f);
    }
    return correct;
}

struct logloss *logloss_create(const float *X, const float *y, long n, long d, double C,
                               struct pool *pool)
{
    struct logloss *ll = lr_alloc_array(1, sizeof *ll);
    if (!ll)
        return NULL;
    ll->X = X;
    ll->y = y;
    ll->n = n;
    ll->d = d;
    ll->inv_C = 1.0 / C;
    ll->pool = pool;
    ll->block_rows = BLOCK_BYTES / (d * (long)sizeof(float));
    if (ll->block_rows < 16)
        ll->block_rows = 16;
    ll->blocks = (n + ll->block_rows - 1) / ll->block_rows;
    ll->partial = lr_alloc_array((size_t)ll->blocks * (size_t)(d + 2), sizeof(double));
    ll->correct = lr_alloc_array((size_t)ll->blocks, sizeof(long));
    if (!ll->partial || !ll->correct) {
        logloss_free(ll);
        return NULL;
    }
    if (logloss_set_kernel(ll, LOGLOSS_KERNEL_AUTO))
        logloss_set_kernel(ll, LOGLOSS_KERNEL_GENERIC);
    return ll;
}

void logloss_free(struct logloss *ll)
{
    if (!ll)
        return;
    free(ll->partial);
    free(ll->correct);
    free(ll);
}

int logloss_kernel_available(enum logloss_kernel kernel)
{
    if (kernel == LOGLOSS_KERNEL_AVX512)
        return logloss_block_avx512 && logloss_cpu_has_avx512();
    return 1;
}

int logloss_set_kernel(struct logloss *ll, enum logloss_kernel kernel)
{
    int avx512 = logloss_kernel_available(LOGLOSS_KERNEL_AVX512);
    if (kernel == LOGLOSS_KERNEL_AUTO)
        kernel = avx512 ? LOGLOSS_KERNEL_AVX512 : LOGLOSS_KERNEL_GENERIC;
    if (kernel == LOGLOSS_KERNEL_AVX512) {
        if (!avx512)
            return -1;
        ll->block = logloss_block_avx512;
        ll->count_correct = logloss_correct_avx512;
        ll->kernel_name = "avx512";
    } else {
        ll->block = logloss_block_generic;
        ll->count_correct = logloss_correct_generic;
        ll->kernel_name = "generic";
    }
    return 0;
}

const char *logloss_kernel_name(const struct logloss *ll)
{
    return ll->kernel_name;
}

/* Rows of block b: [first, first + count). */
static long block_span(const struct logloss *ll, long b, long *first)
{
    *first = b * ll->block_rows;
    long left = ll->n - *first;
    return left < ll->block_rows ? left : ll->block_rows;
}

static void eval_worker(void *arg, int worker, int workers)
{
    struct logloss *ll = arg;
    long lo = ll->blocks * worker / workers, hi = ll->blocks * (worker + 1) / workers;
    for (long b = lo; b < hi; b++) {
        double *part = ll->partial + (size_t)b * (size_t)(ll->d + 2);
        memset(part, 0, (size_t)(ll->d + 2) * sizeof *part);
        long first, m = block_span(ll, b, &first);
        ll->block(ll->X + (size_t)first * (size_t)ll->d, ll->y + first, m, ll->d, ll->wb,
                  ll->wb[ll->d], part, part + ll->d, part + ll->d + 1);
    }
}

double logloss_eval(struct logloss *ll, const double *wb, double *grad)
{
    double t0 = wl_now();
    long d = ll->d;
    ll->wb = wb;
    pool_run(ll->pool, eval_worker, ll);
    memset(grad, 0, (size_t)(d + 1) * sizeof *grad);
    double f = 0.0;
    for (long b = 0; b < ll->blocks; b++) {
        const double *part = ll->partial + (size_t)b * (size_t)(d + 2);
        for (long j = 0; j <= d; j++)
            grad[j] += part[j];
        f += part[d + 1];
    }
    double ww = 0.0;
    for (long j = 0; j < d; j++) {
        ww += wb[j] * wb[j];
        grad[j] += ll->inv_C * wb[j];
    }
    f += 0.5 * ll->inv_C * ww;
    ll->evals++;
    ll->eval_seconds += wl_now() - t0;
    return f;
}

double logloss_eval_cb(void *ctx, const double *wb, double *grad)
{
    return logloss_eval(ctx, wb, grad);
}

static void correct_worker(void *arg, int worker, int workers)
{
    struct logloss *ll = arg;
    long lo = ll->blocks * worker / workers, hi = ll->blocks * (worker + 1) / workers;
    for (long b = lo; b < hi; b++) {
        long first, m = block_span(ll, b, &first);
        ll->correct[b] = ll->count_correct(ll->X + (size_t)first * (size_t)ll->d, ll->y + first,
                                           m, ll->d, ll->wb, ll->wb[ll->d]);
    }
}

double logloss_accuracy(struct logloss *ll, const double *wb)
{
    ll->wb = wb;
    pool_run(ll->pool, correct_worker, ll);
    long correct = 0;
    for (long b = 0; b < ll->blocks; b++)
        correct += ll->correct[b];
    return ll->n ? (double)correct / (double)ll->n : 0.0;
}

long logloss_evals(const struct logloss *ll)
{
    return ll->evals;
}

double logloss_eval_seconds(const struct logloss *ll)
{
    return ll->eval_seconds;
}

double logloss_bytes_per_eval(const struct logloss *ll)
{
    return (double)ll->n * (double)ll->d * sizeof(float) + (double)ll->n * sizeof(float);
}
