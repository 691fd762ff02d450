/* logreg: the logistic-regression reference workload (docs/logreg.md): make_classification-style
 * data (makeclass.h) -> L-BFGS on scikit-learn's L2-penalised log-loss (lbfgs.h, logloss.h) ->
 * test and train accuracy, with stages `generate`, `train`, `evaluate` and their counters sent
 * through the marker API, and the memory bandwidth each evaluation reaches. Its numbers compare
 * with scikit-learn's LogisticRegression(solver="lbfgs") on the same data
 * (bench/logreg-vs-sklearn.sh). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/device.h"
#include "common/opts.h"
#include "common/pool.h"
#include "logreg/lbfgs.h"
#include "logreg/logloss.h"
#include "logreg/lralloc.h"
#include "logreg/makeclass.h"
#include "logreg/membw.h"
#include "logreg/npy.h"
#include "mlbench/marker.h"
#include "workloads.h"

#define WL "logreg"
/* The bandwidth is measured on X_train when it is at least this large (twice the 32 MiB
 * last-level caches of current server CPUs). */
#define MEMBW_MIN_BYTES (64UL << 20)

struct logreg_opts {
    struct makeclass_spec data;
    struct device dev; /* --device: the CPU, or a GPU through the CUDA backend */
    int threads;
    struct lbfgs_params lbfgs;
    const char *save_data; /* prefix of the .npy files, or NULL */
    enum logloss_kernel kernel;
    int verbose;
    int generate_only;
};

static const char usage_text[] =
    "usage: mlbench-workload logreg [options]\n"
    "Logistic regression (L2, C = 1, scikit-learn's objective) trained with L-BFGS on\n"
    "make_classification-style data, split 75/25 (docs/logreg.md).\n"
    "  --samples N          samples before the split (default 100000)\n"
    "  --features N         features (default 500)\n"
    "  --informative N      informative features (default 250; >= 2)\n"
    "  --redundant N        random linear combinations of the informative ones (default 2)\n"
    "  --class-sep X        half the side of the cluster hypercube (default 1.0)\n"
    "  --flip-y X           fraction of labels drawn at random (default 0.01)\n"
    "  --test-fraction X    share of the samples held out for testing (default 0.25)\n"
    "  --seed N             data seed (default 0)\n"
    "  --threads N          worker threads (default: all CPUs)\n"
    "  --max-iter N         L-BFGS iterations at most (default 500, as the scikit-learn peer)\n"
    "  --tol X              stop when max |gradient| <= X (default 1e-4, scikit-learn's tol)\n"
    "  --save-data PREFIX   write PREFIX.X_train.npy, PREFIX.y_train.npy, PREFIX.X_test.npy,\n"
    "                       PREFIX.y_test.npy (X float32, y int32) for a peer to train on\n"
    "  --generate-only      generate (and save) the data, then exit\n"
    "  --kernel auto|generic|avx512   the evaluation kernel (default auto: the fastest)\n"
    "  --device cpu|cuda    cuda: X on the GPU, through the CUDA backend (docs/logreg.md)\n"
    "  --verbose            one line per L-BFGS iteration on stderr\n"
    "  --help               this text\n";

/* Parses argv into *o. Returns 0, 1 after --help, or -1 on bad input (message printed). */
static int parse(int argc, char **argv, struct logreg_opts *o)
{
    static const char *const devices[] = {"cpu", "cuda", NULL};
    static const char *const kernels[] = {"auto", "generic", "avx512", NULL};
    static const enum logloss_kernel kernel_of[] = {LOGLOSS_KERNEL_AUTO, LOGLOSS_KERNEL_GENERIC,
                                                    LOGLOSS_KERNEL_AVX512};
    int device = 0, kernel = 0;
    memset(o, 0, sizeof *o);
    o->data = (struct makeclass_spec){.samples = 100000, .features = 500, .informative = 250,
                                      .redundant = 2, .class_sep = 1.0, .flip_y = 0.01,
                                      .test_fraction = 0.25, .seed = 0};
    o->threads = wl_online_cpus();
    lbfgs_default_params(&o->lbfgs);
    o->lbfgs.max_iter = 500;
    const struct wl_opt table[] = {
        WL_LONG("samples", &o->data.samples, 2, 1000000000),
        WL_LONG("features", &o->data.features, 1, 1000000),
        WL_LONG("informative", &o->data.informative, 2, MAKECLASS_MAX_INFORMATIVE),
        WL_LONG("redundant", &o->data.redundant, 0, 1000000),
        WL_DOUBLE("class-sep", &o->data.class_sep, 0, 1e6),
        WL_DOUBLE("flip-y", &o->data.flip_y, 0, 1),
        WL_DOUBLE("test-fraction", &o->data.test_fraction, 1e-6, 0.999999),
        WL_U64("seed", &o->data.seed),
        WL_INT("threads", &o->threads, 1, 1024),
        WL_INT("max-iter", &o->lbfgs.max_iter, 1, 1000000),
        WL_DOUBLE("tol", &o->lbfgs.pgtol, 0, 1e12),
        WL_STRING("save-data", &o->save_data),
        WL_FLAG("generate-only", &o->generate_only),
        WL_CHOICE("kernel", &kernel, kernels),
        WL_CHOICE("device", &device, devices),
        WL_FLAG("verbose", &o->verbose),
    };
    int rc = opts_parse(WL, argc, argv, table, (int)(sizeof table / sizeof table[0]),
                        usage_text);
    if (rc)
        return rc;
    o->kernel = kernel_of[kernel];
    if (!logloss_kernel_available(o->kernel)) {
        wl_error(WL, "--kernel %s: this CPU or build has no AVX-512 F/VL with FMA (use --kernel "
                     "auto or generic)",
                 kernels[kernel]);
        return -1;
    }
    if (device_choose(WL, device == 1 ? DEVICE_CUDA : DEVICE_CPU, &o->dev))
        return -1;
    char err[256];
    if (makeclass_check(&o->data, err, sizeof err)) {
        wl_error(WL, "%s", err);
        return -1;
    }
    return 0;
}

static void announce(const struct logreg_opts *o)
{
    char buf[64];
    mlb_meta("model", "logreg");
    mlb_meta("device", o->dev.cuda ? "cuda" : "cpu");
    mlb_meta("device_name", o->dev.name);
    mlb_meta("precision", "fp32");
    snprintf(buf, sizeof buf, "%d", o->threads);
    mlb_meta("threads", buf);
    snprintf(buf, sizeof buf, "%ld", o->data.samples);
    mlb_meta("samples", buf);
    snprintf(buf, sizeof buf, "%ld", o->data.features);
    mlb_meta("features", buf);
    snprintf(buf, sizeof buf, "%ld", o->data.informative);
    mlb_meta("informative", buf);
    snprintf(buf, sizeof buf, "%d", o->lbfgs.max_iter);
    mlb_meta("max_iter", buf);
    snprintf(buf, sizeof buf, "%g", o->lbfgs.pgtol);
    mlb_meta("tol", buf);
    mlb_meta("solver", "lbfgs");
}

/* Writes PREFIX.{X,y}_{train,test}.npy. Returns 0, or -1 with a message printed. */
static int save_data(const char *prefix, const struct makeclass_data *d)
{
    struct {
        const char *name;
        const float *X, *y;
        long n;
    } parts[] = {{"train", d->X_train, d->y_train, d->n_train},
                 {"test", d->X_test, d->y_test, d->n_test}};
    for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++) {
        char path[4096], err[512] = "";
        size_t shape[2] = {(size_t)parts[p].n, (size_t)d->features};
        int32_t *labels = lr_alloc_array((size_t)parts[p].n, sizeof *labels);
        if (!labels) {
            wl_error(WL, "--save-data: out of memory for %ld labels", parts[p].n);
            return -1;
        }
        for (long i = 0; i < parts[p].n; i++)
            labels[i] = (int32_t)parts[p].y[i];
        int rc = 0;
        if (snprintf(path, sizeof path, "%s.X_%s.npy", prefix, parts[p].name) >=
            (int)sizeof path) {
            wl_error(WL, "--save-data '%s' is too long a path", prefix);
            rc = -1;
        } else if (npy_write(path, "<f4", parts[p].X, 2, shape, err, sizeof err) != 0) {
            rc = -1;
        } else {
            snprintf(path, sizeof path, "%s.y_%s.npy", prefix, parts[p].name);
            rc = npy_write(path, "<i4", labels, 1, shape, err, sizeof err);
        }
        free(labels);
        if (rc) {
            if (*err)
                wl_error(WL, "--save-data: %s", err);
            return -1;
        }
    }
    return 0;
}

static void print_progress(void *ctx, int iteration, double f, double pg_max)
{
    (void)ctx;
    fprintf(stderr, "logreg: iteration %d: loss %.9g, max |gradient| %.3g\n", iteration, f,
            pg_max);
}

/* Streaming-read bandwidth in bytes/s over X_train (bytes long), or 0 when it is smaller than
 * MEMBW_MIN_BYTES: a cache-sized buffer would measure the cache, and a scratch buffer would
 * inflate the workload's memory footprint, which mlbench measures. */
static double measure_bandwidth(struct pool *pool, const void *buf, size_t bytes)
{
    if (bytes < MEMBW_MIN_BYTES)
        return 0.0;
    return membw_read_bytes_per_s(pool, buf, bytes, 3);
}

/* The objective on the GPU, counted and timed like logloss_eval for the summary. */
struct gpu_objective {
    const struct cuda_backend *cuda;
    struct cuda_logreg *g;
    long evals;
    double seconds;
};

static double gpu_eval_cb(void *ctx, const double *wb, double *grad)
{
    struct gpu_objective *o = ctx;
    double t0 = wl_now(), f = o->cuda->logreg_eval(o->g, wb, grad);
    o->seconds += wl_now() - t0;
    o->evals++;
    return f;
}

/* Evaluates the trained model wb on test and train (stage "evaluate") and reports: counters,
 * the bandwidth each evaluation of the objective reached, and the summary line. */
static void report(const struct logreg_opts *o, struct pool *pool,
                   const struct makeclass_data *data, struct logloss *train, struct logloss *test,
                   const double *wb, const struct lbfgs_result *res,
                   const struct gpu_objective *gpu, double gen_s, double train_s)
{
    long d = data->features;
    double t0 = wl_now();
    mlb_stage_begin("evaluate");
    double acc = logloss_accuracy(test, wb);
    double train_acc = logloss_accuracy(train, wb);
    mlb_stage_end("evaluate");
    double eval_s = wl_now() - t0;
    mlb_counter("accuracy", acc);
    mlb_counter("train_accuracy", train_acc);

    /* How close each evaluation came to the memory's limit: on the CPU it reads X once, on the
     * GPU twice (a row pass, then a column pass); the GPU's bandwidth is not measured here. */
    double per_eval_s = gpu->g ? gpu->seconds / (double)gpu->evals
                               : logloss_eval_seconds(train) / (double)logloss_evals(train);
    double eval_bps = (gpu->g ? 2 : 1) * logloss_bytes_per_eval(train) / per_eval_s;
    double mem_bps = gpu->g ? 0
                            : measure_bandwidth(pool, data->X_train,
                                                (size_t)data->n_train * (size_t)d * sizeof(float));
    mlb_counter("eval_ms", 1e3 * per_eval_s);
    mlb_counter("eval_bytes_per_s", eval_bps);
    if (mem_bps > 0) {
        mlb_counter("memory_read_bytes_per_s", mem_bps);
        mlb_counter("bandwidth_fraction", eval_bps / mem_bps);
    }

    char bandwidth[320] = ", read bandwidth not measured: X_train is under 64 MiB";
    if (gpu->g)
        snprintf(bandwidth, sizeof bandwidth, " on %s", o->dev.name);
    if (mem_bps > 0)
        snprintf(bandwidth, sizeof bandwidth, " = %.0f %% of %.1f GB/s read bandwidth",
                 100.0 * eval_bps / mem_bps, mem_bps * 1e-9);
    printf("logreg: %ld+%ld rows x %ld features, %d thread(s), %s kernel: generate %.3f s, "
           "train %.3f s (%d iterations, %d evaluations, %.2f ms each = %.1f GB/s%s), "
           "evaluate %.3f s; loss %.6f, test accuracy %.4f, train accuracy %.4f; %s\n",
           data->n_train, data->n_test, d, o->threads,
           gpu->g ? "cuda" : logloss_kernel_name(train), gen_s, train_s,
           res->iterations, res->evals, 1e3 * per_eval_s, eval_bps * 1e-9, bandwidth, eval_s,
           res->f, acc, train_acc, lbfgs_status_text(res->status));
}

/* The run after parsing: 0, or 1 on a failure (message printed). */
static int run(const struct logreg_opts *o)
{
    struct pool *pool = pool_create(o->threads);
    if (!pool) {
        wl_error(WL, "cannot start %d threads: try fewer --threads", o->threads);
        return 1;
    }
    int rc = 1;
    struct makeclass_data data = {0};
    struct logloss *train = NULL, *test = NULL;
    struct gpu_objective gpu = {.cuda = o->dev.cuda};
    double *wb = NULL;
    char err[512];
    announce(o);

    double t0 = wl_now();
    mlb_stage_begin("generate");
    int gen = makeclass_generate(&o->data, pool, &data, err, sizeof err);
    mlb_stage_end("generate");
    double gen_s = wl_now() - t0;
    if (gen) {
        wl_error(WL, "%s", err);
        goto out;
    }
    if (o->save_data && save_data(o->save_data, &data))
        goto out;
    if (o->generate_only) {
        printf("logreg: generated %ld train + %ld test rows x %ld features in %.3f s%s%s\n",
               data.n_train, data.n_test, data.features, gen_s,
               o->save_data ? ", saved to " : "", o->save_data ? o->save_data : "");
        rc = 0;
        goto out;
    }

    long d = data.features;
    train = logloss_create(data.X_train, data.y_train, data.n_train, d, 1.0, pool);
    test = logloss_create(data.X_test, data.y_test, data.n_test, d, 1.0, pool);
    wb = lr_alloc_array((size_t)d + 1, sizeof *wb);
    if (!train || !test || !wb) {
        wl_error(WL, "out of memory for the model (%ld features)", d);
        goto out;
    }
    /* Cannot fail: parse checked that the kernel is available. */
    logloss_set_kernel(train, o->kernel);
    logloss_set_kernel(test, o->kernel);

    struct lbfgs_params params = o->lbfgs;
    if (o->verbose)
        params.progress = print_progress;
    struct lbfgs_result res;
    if (gpu.cuda) { /* X and y to the GPU once, before training (as a framework's tensors) */
        mlb_stage_begin("upload");
        gpu.g = gpu.cuda->logreg_create(data.X_train, data.y_train, data.n_train, d, 1.0, err,
                                        sizeof err);
        mlb_stage_end("upload");
        if (!gpu.g) {
            wl_error(WL, "--device cuda: %s", err);
            goto out;
        }
    }
    t0 = wl_now();
    mlb_stage_begin("train");
    int fit = gpu.g ? lbfgs_minimize(d + 1, wb, gpu_eval_cb, &gpu, &params, &res)
                    : lbfgs_minimize(d + 1, wb, logloss_eval_cb, train, &params, &res);
    mlb_stage_end("train");
    double train_s = wl_now() - t0;
    mlb_counter("iterations", res.iterations);
    mlb_counter("function_evals", res.evals);
    mlb_counter("loss", res.f);
    if (fit) {
        wl_error(WL, "training %s after %d iterations%s%s", lbfgs_status_text(res.status),
                 res.iterations, gpu.g ? ": " : "", gpu.g ? gpu.cuda->logreg_error(gpu.g) : "");
        goto out;
    }

    report(o, pool, &data, train, test, wb, &res, &gpu, gen_s, train_s);
    rc = 0;
out:
    free(wb);
    if (gpu.g)
        gpu.cuda->logreg_free(gpu.g);
    logloss_free(train);
    logloss_free(test);
    makeclass_free(&data);
    pool_free(pool);
    return rc;
}

int logreg_main(int argc, char **argv)
{
    struct logreg_opts o;
    int p = parse(argc, argv, &o);
    if (p)
        return p > 0 ? 0 : 2;
    return run(&o);
}
