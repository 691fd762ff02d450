/* makeclass: make_classification-style data in fp32 (see makeclass.h; the algorithm follows
 * scikit-learn's, described in docs/logreg.md).
 *
 * Reproducibility without depending on the thread count: the shared parameters (centroids,
 * covariance matrices, the redundant mixing matrix, the feature and sample permutations) come
 * from one stream of the seed; each sample s draws its own values from stream s; and the
 * covariance products run as single-threaded sgemm calls on fixed blocks of GEN_BLOCK output
 * rows, so the same calls with the same shapes happen whichever worker runs a block. */
#include "logreg/makeclass.h"

#include <cblas.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/pool.h"
#include "common/rng.h"
#include "logreg/lralloc.h"

/* Output rows per block: one sgemm per cluster present in the block. */
#define GEN_BLOCK 256
/* Stream of the shared parameters; samples use streams 0..samples-1. */
#define STREAM_SHARED UINT64_MAX

/* Fills out[0..k) with standard normals (Marsaglia's polar method, both values of each pair). */
static void fill_normal(struct rng *r, float *out, long k)
{
    long i = 0;
    while (i < k) {
        double u = 2.0 * rng_uniform(r) - 1.0, v = 2.0 * rng_uniform(r) - 1.0;
        double s = u * u + v * v;
        if (s >= 1.0 || s == 0.0)
            continue;
        double f = sqrt(-2.0 * log(s) / s);
        out[i++] = (float)(u * f);
        if (i < k)
            out[i++] = (float)(v * f);
    }
}

/* Uniform in [-1, 1), as 2 * uniform - 1 in make_classification. */
static float uniform_pm1(struct rng *r)
{
    return (float)(2.0 * rng_uniform(r) - 1.0);
}

int makeclass_check(const struct makeclass_spec *s, char *err, size_t errlen)
{
    if (s->samples < 2 || s->features < 1) {
        snprintf(err, errlen, "need at least 2 samples and 1 feature (got %ld and %ld)",
                 s->samples, s->features);
        return -1;
    }
    if (s->informative < 1 || s->redundant < 0 ||
        s->informative + s->redundant > s->features) {
        snprintf(err, errlen,
                 "--informative %ld + --redundant %ld must not exceed --features %ld: lower "
                 "them or raise --features",
                 s->informative, s->redundant, s->features);
        return -1;
    }
    /* make_classification: n_classes * n_clusters_per_class <= 2 ** n_informative. */
    if (s->informative < 2) {
        snprintf(err, errlen,
                 "--informative %ld is too small: 2 classes x 2 clusters per class need "
                 "2^informative >= 4 hypercube vertices, so --informative >= 2",
                 s->informative);
        return -1;
    }
    if (s->informative > MAKECLASS_MAX_INFORMATIVE) {
        snprintf(err, errlen, "--informative %ld is more than this generator's %d",
                 s->informative, MAKECLASS_MAX_INFORMATIVE);
        return -1;
    }
    if (!(s->test_fraction > 0.0 && s->test_fraction < 1.0)) {
        snprintf(err, errlen, "--test-fraction %g must be between 0 and 1 (exclusive)",
                 s->test_fraction);
        return -1;
    }
    long n_test = (long)ceil(s->test_fraction * (double)s->samples);
    if (n_test < 1 || s->samples - n_test < 2) {
        snprintf(err, errlen,
                 "--test-fraction %g of --samples %ld leaves %ld test and %ld training rows: "
                 "need at least 1 and 2",
                 s->test_fraction, s->samples, n_test, s->samples - n_test);
        return -1;
    }
    if (!(s->flip_y >= 0.0 && s->flip_y <= 1.0) || !(s->class_sep >= 0.0)) {
        snprintf(err, errlen, "--flip-y %g must be in [0, 1] and --class-sep %g >= 0",
                 s->flip_y, s->class_sep);
        return -1;
    }
    return 0;
}

/* What every block of rows needs: the shared parameters and where rows go. */
struct gen_job {
    const struct makeclass_spec *spec;
    struct makeclass_data *data;
    long d, n_inf, n_red, n_noise;
    long cluster_end[MAKECLASS_CLUSTERS]; /* samples [end[k-1], end[k]) form cluster k */
    const float *centroids;               /* MAKECLASS_CLUSTERS x n_inf */
    const float *covariance;              /* MAKECLASS_CLUSTERS x n_inf x n_inf */
    const float *mixing;                  /* n_inf x n_red */
    const uint32_t *perm;                 /* output slot -> sample */
    long blocks;
    atomic_int failed;
};

static int cluster_of(const struct gen_job *job, long sample)
{
    int k = 0;
    while (k < MAKECLASS_CLUSTERS - 1 && sample >= job->cluster_end[k])
        k++;
    return k;
}

/* Generates output slots [first, first + m): m <= GEN_BLOCK. z: GEN_BLOCK x n_inf scratch,
 * w: GEN_BLOCK x d scratch (columns in the unshuffled layout). */
static void gen_block(const struct gen_job *job, long first, long m, float *z, float *w)
{
    const struct makeclass_spec *spec = job->spec;
    struct makeclass_data *data = job->data;
    long d = job->d, n_inf = job->n_inf;
    int cluster[GEN_BLOCK], order[GEN_BLOCK], count[MAKECLASS_CLUSTERS] = {0};
    float label[GEN_BLOCK];

    for (long i = 0; i < m; i++) {
        long sample = job->perm[first + i];
        cluster[i] = cluster_of(job, sample);
        count[cluster[i]]++;
    }
    /* Rows of one cluster sit together in z (position order[i]) for one sgemm per cluster. */
    int start[MAKECLASS_CLUSTERS], next[MAKECLASS_CLUSTERS];
    for (int k = 0, acc = 0; k < MAKECLASS_CLUSTERS; k++) {
        start[k] = next[k] = acc;
        acc += count[k];
    }
    for (long i = 0; i < m; i++) {
        long sample = job->perm[first + i];
        struct rng r;
        rng_seed(&r, rng_derive(spec->seed, (uint64_t)sample));
        order[i] = next[cluster[i]]++;
        fill_normal(&r, z + (size_t)order[i] * n_inf, n_inf);
        float *row = w + (size_t)order[i] * d;
        fill_normal(&r, row + n_inf + job->n_red, job->n_noise);
        float y = (float)(cluster[i] % 2);
        if (rng_uniform(&r) < spec->flip_y)
            y = (float)rng_below(&r, 2);
        label[i] = y;
    }
    for (int k = 0; k < MAKECLASS_CLUSTERS; k++) {
        if (!count[k])
            continue;
        float *wk = w + (size_t)start[k] * d;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, count[k], (int)n_inf,
                    (int)n_inf, 1.0f, z + (size_t)start[k] * n_inf, (int)n_inf,
                    job->covariance + (size_t)k * n_inf * n_inf, (int)n_inf, 0.0f, wk, (int)d);
        const float *c = job->centroids + (size_t)k * n_inf;
        for (int i = 0; i < count[k]; i++)
            for (long j = 0; j < n_inf; j++)
                wk[(size_t)i * d + j] += c[j];
    }
    if (job->n_red)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)job->n_red,
                    (int)n_inf, 1.0f, w, (int)d, job->mixing, (int)job->n_red, 0.0f, w + n_inf,
                    (int)d);
    /* Shuffle the features on the way out, as make_classification's X[:, indices]. */
    const int *src = data->column_source;
    for (long i = 0; i < m; i++) {
        long slot = first + i;
        float *dst, *ydst;
        if (slot < data->n_test) {
            dst = data->X_test + (size_t)slot * d;
            ydst = data->y_test + slot;
        } else {
            dst = data->X_train + (size_t)(slot - data->n_test) * d;
            ydst = data->y_train + (slot - data->n_test);
        }
        const float *row = w + (size_t)order[i] * d;
        for (long j = 0; j < d; j++)
            dst[j] = row[src[j]];
        *ydst = label[i];
    }
}

static void gen_worker(void *arg, int worker, int n)
{
    struct gen_job *job = arg;
    long lo = job->blocks * worker / n, hi = job->blocks * (worker + 1) / n;
    if (lo == hi)
        return;
    float *z = lr_alloc_array((size_t)GEN_BLOCK * (size_t)job->n_inf, sizeof *z);
    float *w = lr_alloc_array((size_t)GEN_BLOCK * (size_t)job->d, sizeof *w);
    if (!z || !w) {
        atomic_store(&job->failed, 1);
    } else {
        long total = job->spec->samples;
        for (long b = lo; b < hi; b++) {
            long first = b * GEN_BLOCK;
            long m = total - first < GEN_BLOCK ? total - first : GEN_BLOCK;
            gen_block(job, first, m, z, w);
        }
    }
    free(z);
    free(w);
}

void makeclass_free(struct makeclass_data *data)
{
    free(data->X_train);
    free(data->X_test);
    free(data->y_train);
    free(data->y_test);
    free(data->column_source);
    memset(data, 0, sizeof *data);
}

int makeclass_generate(const struct makeclass_spec *spec, struct pool *pool,
                       struct makeclass_data *data, char *err, size_t errlen)
{
    memset(data, 0, sizeof *data);
    if (makeclass_check(spec, err, errlen))
        return -1;
    if (spec->samples > (long)UINT32_MAX) {
        snprintf(err, errlen, "--samples %ld is more than this generator's %lu", spec->samples,
                 (unsigned long)UINT32_MAX);
        return -1;
    }
    long n = spec->samples, d = spec->features, n_inf = spec->informative;
    long n_test = (long)ceil(spec->test_fraction * (double)n);
    struct gen_job job = {.spec = spec, .data = data, .d = d, .n_inf = n_inf,
                          .n_red = spec->redundant,
                          .n_noise = d - n_inf - spec->redundant};
    data->n_test = n_test;
    data->n_train = n - n_test;
    data->features = d;
    data->X_train = lr_alloc_array((size_t)data->n_train * (size_t)d, sizeof(float));
    data->X_test = lr_alloc_array((size_t)n_test * (size_t)d, sizeof(float));
    data->y_train = lr_alloc_array((size_t)data->n_train, sizeof(float));
    data->y_test = lr_alloc_array((size_t)n_test, sizeof(float));
    data->column_source = lr_alloc_array((size_t)d, sizeof(int));
    float *centroids = lr_alloc_array(MAKECLASS_CLUSTERS * (size_t)n_inf, sizeof(float));
    float *covariance =
        lr_alloc_array(MAKECLASS_CLUSTERS * (size_t)n_inf * (size_t)n_inf, sizeof(float));
    float *mixing = lr_alloc_array((size_t)n_inf * (size_t)(job.n_red ? job.n_red : 1),
                                   sizeof(float));
    uint32_t *perm = lr_alloc_array((size_t)n, sizeof *perm);
    if (!data->X_train || !data->X_test || !data->y_train || !data->y_test ||
        !data->column_source || !centroids || !covariance || !mixing || !perm) {
        snprintf(err, errlen,
                 "cannot allocate %.1f MiB for %ld x %ld samples: use fewer --samples or "
                 "--features",
                 ((double)n * (double)d * 4.0 + (double)n * 8.0) / 1048576.0, n, d);
        goto fail;
    }

    /* Shared parameters, in make_classification's order. */
    struct rng r;
    rng_seed(&r, rng_derive(spec->seed, STREAM_SHARED));
    for (long k = 0; k < MAKECLASS_CLUSTERS; k++)
        job.cluster_end[k] = (k ? job.cluster_end[k - 1] : 0) + n / MAKECLASS_CLUSTERS +
                             (k < n % MAKECLASS_CLUSTERS);
    /* Distinct hypercube vertices (n_inf >= 2 gives at least 4 of them). */
    for (long k = 0; k < MAKECLASS_CLUSTERS; k++) {
        float *c = centroids + k * n_inf;
        int again;
        do {
            uint64_t bits = 0;
            for (long j = 0; j < n_inf; j++) {
                if (j % 64 == 0)
                    bits = rng_next(&r);
                c[j] = (float)(((bits >> (j % 64)) & 1) ? spec->class_sep : -spec->class_sep);
            }
            again = 0;
            for (long p = 0; p < k && !again; p++)
                again = !memcmp(c, centroids + p * n_inf, (size_t)n_inf * sizeof *c);
        } while (again);
    }
    for (size_t i = 0; i < MAKECLASS_CLUSTERS * (size_t)n_inf * (size_t)n_inf; i++)
        covariance[i] = uniform_pm1(&r);
    for (size_t i = 0; i < (size_t)n_inf * (size_t)job.n_red; i++)
        mixing[i] = uniform_pm1(&r);
    for (long j = 0; j < d; j++)
        data->column_source[j] = (int)j;
    for (long j = d - 1; j > 0; j--) {
        long k = rng_below(&r, (uint32_t)(j + 1));
        int t = data->column_source[j];
        data->column_source[j] = data->column_source[k];
        data->column_source[k] = t;
    }
    for (long i = 0; i < n; i++)
        perm[i] = (uint32_t)i;
    for (long i = n - 1; i > 0; i--) {
        long k = rng_below(&r, (uint32_t)(i + 1));
        uint32_t t = perm[i];
        perm[i] = perm[k];
        perm[k] = t;
    }

    job.centroids = centroids;
    job.covariance = covariance;
    job.mixing = mixing;
    job.perm = perm;
    job.blocks = (n + GEN_BLOCK - 1) / GEN_BLOCK;
    atomic_init(&job.failed, 0);
    int blas_threads = openblas_get_num_threads();
    openblas_set_num_threads(1);
    pool_run(pool, gen_worker, &job);
    openblas_set_num_threads(blas_threads);
    if (atomic_load(&job.failed)) {
        snprintf(err, errlen, "cannot allocate the generator's scratch rows (%ld features)", d);
        goto fail;
    }
    free(centroids);
    free(covariance);
    free(mixing);
    free(perm);
    return 0;
fail:
    free(centroids);
    free(covariance);
    free(mixing);
    free(perm);
    makeclass_free(data);
    return -1;
}
