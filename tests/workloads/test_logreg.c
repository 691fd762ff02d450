/* Unit tests of the logreg workload (workloads/logreg/): the make_classification generator
 * (shape, class balance, determinism over seeds and thread counts, redundant features being
 * linear combinations of the informative ones), the objective's gradient against central
 * differences and its two kernels against each other, L-BFGS against known optima (a quadratic,
 * Rosenbrock, and a logistic regression solved by Newton's method here), the .npy writer
 * (header and data read back), and the option checks (exit status 2). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/pool.h"
#include "common/rng.h"
#include "logreg/lbfgs.h"
#include "logreg/logloss.h"
#include "logreg/makeclass.h"
#include "logreg/npy.h"
#include "workloads.h"

#include "assert_near.h"

static struct makeclass_spec small_spec(void)
{
    return (struct makeclass_spec){.samples = 1000, .features = 20, .informative = 5,
                                   .redundant = 3, .class_sep = 1.0, .flip_y = 0.01,
                                   .test_fraction = 0.25, .seed = 7};
}

static void generate(const struct makeclass_spec *spec, int threads, struct makeclass_data *d)
{
    struct pool *pool = pool_create(threads);
    assert_non_null(pool);
    char err[256] = "";
    int rc = makeclass_generate(spec, pool, d, err, sizeof err);
    if (rc)
        print_error("makeclass_generate: %s\n", err);
    assert_int_equal(rc, 0);
    pool_free(pool);
}

/* ---- generator ---- */

static void test_generator_shape(void **state)
{
    (void)state;
    struct makeclass_spec spec = small_spec();
    struct makeclass_data d;
    generate(&spec, 2, &d);
    /* train_test_split: test = ceil(0.25 * 1000) = 250. */
    assert_int_equal(d.n_test, 250);
    assert_int_equal(d.n_train, 750);
    assert_int_equal(d.features, 20);
    int seen[20] = {0};
    for (int j = 0; j < 20; j++) {
        assert_in_range(d.column_source[j], 0, 19);
        seen[d.column_source[j]]++;
    }
    for (int j = 0; j < 20; j++)
        assert_int_equal(seen[j], 1);
    for (long i = 0; i < d.n_train; i++)
        assert_true(d.y_train[i] == 0.0f || d.y_train[i] == 1.0f);
    for (long i = 0; i < d.n_test; i++)
        assert_true(d.y_test[i] == 0.0f || d.y_test[i] == 1.0f);
    for (long i = 0; i < d.n_train * d.features; i++)
        assert_true(isfinite(d.X_train[i]));
    makeclass_free(&d);
    assert_null(d.X_train);
}

static long count_ones(const struct makeclass_data *d)
{
    long ones = 0;
    for (long i = 0; i < d->n_train; i++)
        ones += d->y_train[i] == 1.0f;
    for (long i = 0; i < d->n_test; i++)
        ones += d->y_test[i] == 1.0f;
    return ones;
}

static void test_generator_class_balance(void **state)
{
    (void)state;
    struct makeclass_spec spec = small_spec();
    spec.samples = 1002;
    spec.flip_y = 0.0;
    struct makeclass_data d;
    generate(&spec, 1, &d);
    /* Clusters of 251, 251, 250, 250 (the remainder to the first ones); clusters 1 and 3 are
     * class 1. */
    assert_int_equal(count_ones(&d), 251 + 250);
    makeclass_free(&d);

    /* With flip_y = 0.2 about 10 % of the labels change: the balance stays near 1/2. */
    spec.samples = 20000;
    spec.flip_y = 0.2;
    generate(&spec, 2, &d);
    long ones = count_ones(&d);
    assert_in_range(ones, 9700, 10300);
    makeclass_free(&d);
}

static void test_generator_determinism(void **state)
{
    (void)state;
    struct makeclass_spec spec = small_spec();
    spec.samples = 3001; /* several generator blocks, one partial */
    struct makeclass_data a, b, c;
    generate(&spec, 1, &a);
    generate(&spec, 3, &b);
    size_t xb = (size_t)a.n_train * (size_t)a.features * sizeof(float);
    assert_memory_equal(a.X_train, b.X_train, xb);
    assert_memory_equal(a.X_test, b.X_test, (size_t)a.n_test * (size_t)a.features * 4);
    assert_memory_equal(a.y_train, b.y_train, (size_t)a.n_train * 4);
    assert_memory_equal(a.y_test, b.y_test, (size_t)a.n_test * 4);
    assert_memory_equal(a.column_source, b.column_source, (size_t)a.features * sizeof(int));
    spec.seed = 8;
    generate(&spec, 2, &c);
    assert_memory_not_equal(a.X_train, c.X_train, xb);
    makeclass_free(&a);
    makeclass_free(&b);
    makeclass_free(&c);
}

/* Least squares of column `target` on the columns `cols` (ncols of them) of X (n x d) by the
 * normal equations in double. Returns the residual's RMS over the target's RMS. */
static double regression_residual(const float *X, long n, long d, const int *cols, int ncols,
                                  int target)
{
    double A[16][17] = {{0}};
    assert_true(ncols <= 16);
    for (long i = 0; i < n; i++) {
        const float *x = X + i * d;
        for (int p = 0; p < ncols; p++) {
            for (int q = 0; q < ncols; q++)
                A[p][q] += (double)x[cols[p]] * x[cols[q]];
            A[p][ncols] += (double)x[cols[p]] * x[target];
        }
    }
    /* Gaussian elimination with partial pivoting. */
    for (int p = 0; p < ncols; p++) {
        int best = p;
        for (int r = p + 1; r < ncols; r++)
            if (fabs(A[r][p]) > fabs(A[best][p]))
                best = r;
        for (int k = 0; k <= ncols; k++) {
            double t = A[p][k];
            A[p][k] = A[best][k];
            A[best][k] = t;
        }
        for (int r = 0; r < ncols; r++) {
            if (r == p)
                continue;
            double f = A[r][p] / A[p][p];
            for (int k = p; k <= ncols; k++)
                A[r][k] -= f * A[p][k];
        }
    }
    double res = 0.0, tot = 0.0;
    for (long i = 0; i < n; i++) {
        const float *x = X + i * d;
        double fit = 0.0;
        for (int p = 0; p < ncols; p++)
            fit += A[p][ncols] / A[p][p] * x[cols[p]];
        res += (x[target] - fit) * (x[target] - fit);
        tot += (double)x[target] * x[target];
    }
    return sqrt(res / tot);
}

static void test_generator_redundant_are_combinations(void **state)
{
    (void)state;
    struct makeclass_spec spec = small_spec();
    struct makeclass_data d;
    generate(&spec, 2, &d);
    int informative[5], n_inf = 0, redundant[3], n_red = 0, noise = -1;
    for (int j = 0; j < 20; j++) {
        int src = d.column_source[j];
        if (src < 5)
            informative[n_inf++] = j;
        else if (src < 8)
            redundant[n_red++] = j;
        else if (noise < 0)
            noise = j;
    }
    assert_int_equal(n_inf, 5);
    assert_int_equal(n_red, 3);
    for (int r = 0; r < 3; r++) {
        double rel = regression_residual(d.X_train, d.n_train, d.features, informative, 5,
                                         redundant[r]);
        /* fp32 rounding of the products only. */
        assert_true(rel < 1e-5);
    }
    /* A noise column is not explained by the informative ones. */
    assert_true(regression_residual(d.X_train, d.n_train, d.features, informative, 5, noise) >
                0.9);
    makeclass_free(&d);
}

static void test_generator_rejects_bad_specs(void **state)
{
    (void)state;
    char err[256];
    struct makeclass_spec spec = small_spec();
    spec.informative = 15;
    spec.redundant = 6; /* 21 > 20 features */
    assert_int_equal(makeclass_check(&spec, err, sizeof err), -1);
    assert_non_null(strstr(err, "--informative 15"));
    spec = small_spec();
    spec.informative = 1; /* 4 clusters need 2^informative >= 4 */
    assert_int_equal(makeclass_check(&spec, err, sizeof err), -1);
    assert_non_null(strstr(err, "2^informative"));
    spec = small_spec();
    spec.samples = 2;
    spec.test_fraction = 0.5; /* 1 test row, 1 training row */
    assert_int_equal(makeclass_check(&spec, err, sizeof err), -1);
    spec = small_spec();
    assert_int_equal(makeclass_check(&spec, err, sizeof err), 0);
}

/* ---- objective ---- */

/* A small problem: 203 rows (not a multiple of the kernels' 4-row groups) x 11 features (not a
 * multiple of 8 lanes). */
struct problem {
    struct makeclass_data data;
    struct pool *pool;
    struct logloss *ll;
    double wb[12];
};

static void problem_init(struct problem *p, int threads)
{
    struct makeclass_spec spec = {.samples = 271, .features = 11, .informative = 4,
                                  .redundant = 1, .class_sep = 1.0, .flip_y = 0.05,
                                  .test_fraction = 0.25, .seed = 3};
    generate(&spec, 1, &p->data);
    assert_int_equal(p->data.n_train, 203);
    p->pool = pool_create(threads);
    assert_non_null(p->pool);
    p->ll = logloss_create(p->data.X_train, p->data.y_train, p->data.n_train, 11, 1.0, p->pool);
    assert_non_null(p->ll);
    struct rng r;
    rng_seed(&r, 11);
    for (int j = 0; j < 12; j++)
        p->wb[j] = 0.3 * rng_normal(&r);
}

static void problem_free(struct problem *p)
{
    logloss_free(p->ll);
    pool_free(p->pool);
    makeclass_free(&p->data);
}

/* The objective written out directly, in long double. */
static double reference_loss(const struct problem *p, const double *wb)
{
    long double f = 0.0L, ww = 0.0L;
    for (long i = 0; i < p->data.n_train; i++) {
        long double z = wb[11];
        for (int j = 0; j < 11; j++)
            z += (long double)p->data.X_train[i * 11 + j] * wb[j];
        f += log1pl(expl(z)) - p->data.y_train[i] * z;
    }
    for (int j = 0; j < 11; j++)
        ww += (long double)wb[j] * wb[j];
    return (double)(f + 0.5L * ww);
}

static void check_gradient(struct problem *p)
{
    double g[12], gp[12], wb[12];
    double f = logloss_eval(p->ll, p->wb, g);
    assert_near(f, reference_loss(p, p->wb), 1e-12);
    for (int j = 0; j < 12; j++) {
        double h = 1e-5 * fmax(1.0, fabs(p->wb[j]));
        memcpy(wb, p->wb, sizeof wb);
        wb[j] += h;
        double fp = logloss_eval(p->ll, wb, gp);
        wb[j] -= 2 * h;
        double fm = logloss_eval(p->ll, wb, gp);
        double fd = (fp - fm) / (2 * h);
        /* Central differences: O(h^2) truncation plus f's rounding / h. */
        if (!(fabs(fd - g[j]) <= 1e-6 * fmax(1.0, fabs(g[j]))))
            fail_msg("d f / d wb[%d]: gradient %.12g, central difference %.12g", j, g[j], fd);
    }
}

static void test_gradient_matches_differences(void **state)
{
    (void)state;
    struct problem p;
    problem_init(&p, 2);
    assert_int_equal(logloss_set_kernel(p.ll, LOGLOSS_KERNEL_GENERIC), 0);
    check_gradient(&p);
    if (logloss_set_kernel(p.ll, LOGLOSS_KERNEL_AVX512) == 0)
        check_gradient(&p);
    else
        print_message("(no AVX-512 on this CPU: its kernel is not tested)\n");
    problem_free(&p);
}

static void test_kernels_agree(void **state)
{
    (void)state;
    struct problem p;
    problem_init(&p, 1);
    if (logloss_set_kernel(p.ll, LOGLOSS_KERNEL_AVX512) != 0) {
        print_message("(no AVX-512 on this CPU: nothing to compare)\n");
        problem_free(&p);
        skip();
    }
    /* Large margins too: the vector exp/log1p must hold where exp underflows. */
    const double scales[] = {1.0, 40.0};
    for (size_t s = 0; s < 2; s++) {
        double wb[12], ga[12], gg[12];
        for (int j = 0; j < 12; j++)
            wb[j] = p.wb[j] * scales[s];
        logloss_set_kernel(p.ll, LOGLOSS_KERNEL_AVX512);
        double fa = logloss_eval(p.ll, wb, ga);
        logloss_set_kernel(p.ll, LOGLOSS_KERNEL_GENERIC);
        double fg = logloss_eval(p.ll, wb, gg);
        assert_near(fa, fg, 1e-13);
        for (int j = 0; j < 12; j++)
            assert_near(ga[j], gg[j], 1e-12);
        assert_near(fa, reference_loss(&p, wb), 1e-12);
    }
    problem_free(&p);
}

static void test_threads_do_not_change_objective(void **state)
{
    (void)state;
    struct problem a, b;
    problem_init(&a, 1);
    problem_init(&b, 3);
    double ga[12], gb[12];
    double fa = logloss_eval(a.ll, a.wb, ga), fb = logloss_eval(b.ll, b.wb, gb);
    assert_memory_equal(&fa, &fb, sizeof fa);
    assert_memory_equal(ga, gb, sizeof ga);
    assert_int_equal(logloss_evals(a.ll), 1);
    problem_free(&a);
    problem_free(&b);
}

static void test_accuracy(void **state)
{
    (void)state;
    /* Rows x = (+-1, i), y = 1 when x0 > 0: w = (1, 0), b = 0 classifies all. */
    float X[8 * 2];
    float y[8];
    for (int i = 0; i < 8; i++) {
        X[2 * i] = i % 2 ? 1.0f : -1.0f;
        X[2 * i + 1] = (float)i;
        y[i] = (float)(i % 2);
    }
    struct pool *pool = pool_create(2);
    struct logloss *ll = logloss_create(X, y, 8, 2, 1.0, pool);
    double wb[3] = {1.0, 0.0, 0.0};
    assert_near(logloss_accuracy(ll, wb), 1.0, 0);
    wb[0] = -1.0;
    assert_near(logloss_accuracy(ll, wb), 0.0, 0);
    wb[0] = 0.0;
    wb[2] = 1.0; /* all predicted 1 */
    assert_near(logloss_accuracy(ll, wb), 0.5, 0);
    logloss_free(ll);
    pool_free(pool);
}

/* ---- L-BFGS ---- */

/* f = sum a_i (x_i - c_i)^2 / 2 with a_i from 1 to 1000. */
static double quadratic(void *ctx, const double *x, double *g)
{
    (void)ctx;
    double f = 0.0;
    for (int i = 0; i < 20; i++) {
        double a = pow(1000.0, i / 19.0), r = x[i] - (i - 10);
        f += 0.5 * a * r * r;
        g[i] = a * r;
    }
    return f;
}

static double rosenbrock(void *ctx, const double *x, double *g)
{
    (void)ctx;
    double a = 1.0 - x[0], b = x[1] - x[0] * x[0];
    g[0] = -2.0 * a - 400.0 * x[0] * b;
    g[1] = 200.0 * b;
    return a * a + 100.0 * b * b;
}

static void test_lbfgs_quadratic_and_rosenbrock(void **state)
{
    (void)state;
    struct lbfgs_params p;
    lbfgs_default_params(&p);
    assert_int_equal(p.history, 10);
    assert_int_equal(p.max_iter, 100);
    p.pgtol = 1e-9;
    p.factr = 0.0; /* only the gradient test stops it */
    p.max_iter = 1000;
    struct lbfgs_result res;
    double x[20] = {0};
    assert_int_equal(lbfgs_minimize(20, x, quadratic, NULL, &p, &res), 0);
    assert_int_equal(res.status, LBFGS_CONVERGED_PGTOL);
    assert_true(res.pg_max <= 1e-9);
    for (int i = 0; i < 20; i++)
        assert_near(x[i], i - 10, 1e-9);

    double r[2] = {-1.2, 1.0};
    assert_int_equal(lbfgs_minimize(2, r, rosenbrock, NULL, &p, &res), 0);
    assert_int_equal(res.status, LBFGS_CONVERGED_PGTOL);
    assert_near(r[0], 1.0, 1e-8);
    assert_near(r[1], 1.0, 1e-8);
    /* The More-Thuente search needs few evaluations per iteration. */
    assert_true(res.evals < 2 * res.iterations + 10);

    /* The iteration limit stops it with the status that says so. */
    p.max_iter = 3;
    r[0] = -1.2;
    r[1] = 1.0;
    assert_int_equal(lbfgs_minimize(2, r, rosenbrock, NULL, &p, &res), 0);
    assert_int_equal(res.status, LBFGS_MAX_ITER);
    assert_int_equal(res.iterations, 3);
    /* Already at the optimum: no iteration. */
    r[0] = r[1] = 1.0;
    assert_int_equal(lbfgs_minimize(2, r, rosenbrock, NULL, &p, &res), 0);
    assert_int_equal(res.status, LBFGS_CONVERGED_PGTOL);
    assert_int_equal(res.iterations, 0);
    assert_int_equal(res.evals, 1);
}

/* The optimum by Newton's method on the 12 x 12 Hessian X'DX + I (intercept unpenalised). */
static void newton_reference(const struct problem *p, double *wb)
{
    memset(wb, 0, 12 * sizeof *wb);
    for (int it = 0; it < 50; it++) {
        double H[12][13] = {{0}};
        for (long i = 0; i < p->data.n_train; i++) {
            double x[12], z = 0.0;
            for (int j = 0; j < 11; j++)
                x[j] = p->data.X_train[i * 11 + j];
            x[11] = 1.0;
            for (int j = 0; j < 12; j++)
                z += x[j] * wb[j];
            double s = 1.0 / (1.0 + exp(-z)), r = s - p->data.y_train[i], h = s * (1.0 - s);
            for (int a = 0; a < 12; a++) {
                H[a][12] += r * x[a];
                for (int b = 0; b < 12; b++)
                    H[a][b] += h * x[a] * x[b];
            }
        }
        for (int j = 0; j < 11; j++) {
            H[j][12] += wb[j];
            H[j][j] += 1.0;
        }
        for (int c = 0; c < 12; c++) /* no pivoting: H is positive definite */
            for (int r = 0; r < 12; r++)
                if (r != c) {
                    double f = H[r][c] / H[c][c];
                    for (int k = c; k <= 12; k++)
                        H[r][k] -= f * H[c][k];
                }
        for (int j = 0; j < 12; j++)
            wb[j] -= H[j][12] / H[j][j];
    }
}

static void test_lbfgs_reaches_logistic_optimum(void **state)
{
    (void)state;
    struct problem p;
    problem_init(&p, 2);
    double ref[12], wb[12] = {0}, g[12];
    newton_reference(&p, ref);
    struct lbfgs_params params;
    lbfgs_default_params(&params);
    /* Tighter than 1e-6 the steps' decrease (~|g|^2) falls under f's rounding (f ~ 65). */
    params.pgtol = 1e-6;
    params.factr = 0.0;
    struct lbfgs_result res;
    assert_int_equal(lbfgs_minimize(12, wb, logloss_eval_cb, p.ll, &params, &res), 0);
    assert_int_equal(res.status, LBFGS_CONVERGED_PGTOL);
    logloss_eval(p.ll, ref, g);
    for (int j = 0; j < 12; j++) {
        assert_true(fabs(g[j]) < 1e-9); /* Newton's point is the optimum */
        assert_near(wb[j], ref[j], 1e-6); /* |g| <= 1e-6, Hessian >= I */
    }
    assert_near(res.f, logloss_eval(p.ll, ref, g), 1e-12);

    /* scikit-learn's stopping rule (pgtol 1e-4, factr 1e7) stops close to it too. */
    lbfgs_default_params(&params);
    memset(wb, 0, sizeof wb);
    assert_int_equal(lbfgs_minimize(12, wb, logloss_eval_cb, p.ll, &params, &res), 0);
    assert_true(res.status == LBFGS_CONVERGED_PGTOL || res.status == LBFGS_CONVERGED_FTOL);
    assert_near(res.f, logloss_eval(p.ll, ref, g), 1e-7);
    problem_free(&p);
}

/* ---- .npy ---- */

static char tmpdir[] = "/tmp/test_logreg.XXXXXX";

/* Reads path whole into a new buffer; *len its size. */
static unsigned char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc(*len + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, *len, f), *len);
    fclose(f);
    buf[*len] = 0;
    return buf;
}

/* Checks path's preamble and header and returns the data's offset. */
static size_t check_npy_header(const unsigned char *buf, size_t len, const char *dict)
{
    assert_true(len >= 10);
    assert_memory_equal(buf, "\x93NUMPY\x01\x00", 8);
    size_t hlen = buf[8] | (size_t)buf[9] << 8;
    assert_int_equal((10 + hlen) % 64, 0);
    assert_true(10 + hlen <= len);
    assert_int_equal(buf[10 + hlen - 1], '\n');
    assert_memory_equal(buf + 10, dict, strlen(dict));
    for (size_t i = 10 + strlen(dict); i < 10 + hlen - 1; i++)
        assert_int_equal(buf[i], ' ');
    return 10 + hlen;
}

static int count_dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void test_npy_round_trip(void **state)
{
    (void)state;
    char path[256], err[256];
    float X[3 * 4];
    int32_t y[3] = {0, 1, -7};
    for (int i = 0; i < 12; i++)
        X[i] = (float)i * 0.5f - 1.0f;
    size_t shape[2] = {3, 4};
    snprintf(path, sizeof path, "%s/X.npy", tmpdir);
    assert_int_equal(npy_write(path, "<f4", X, 2, shape, err, sizeof err), 0);
    size_t len;
    unsigned char *buf = read_file(path, &len);
    size_t off = check_npy_header(buf, len,
                                  "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }");
    assert_int_equal(len - off, sizeof X);
    assert_memory_equal(buf + off, X, sizeof X);
    free(buf);

    snprintf(path, sizeof path, "%s/y.npy", tmpdir);
    assert_int_equal(npy_write(path, "<i4", y, 1, shape, err, sizeof err), 0);
    buf = read_file(path, &len);
    off = check_npy_header(buf, len,
                           "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }");
    assert_int_equal(len - off, sizeof y);
    assert_memory_equal(buf + off, y, sizeof y);
    free(buf);
    /* Only the two files: no temporary left behind. */
    assert_int_equal(count_dir_entries(tmpdir), 2);
}

static void test_npy_errors(void **state)
{
    (void)state;
    char path[256], err[256] = "";
    float x[2] = {1, 2};
    size_t shape[1] = {2};
    snprintf(path, sizeof path, "%s/bad.npy", tmpdir);
    assert_int_equal(npy_write(path, "<f2", x, 1, shape, err, sizeof err), -1);
    assert_non_null(strstr(err, "'<f2'"));
    assert_int_equal(npy_write(path, "<f4", x, 3, shape, err, sizeof err), -1);
    snprintf(path, sizeof path, "%s/missing/dir/x.npy", tmpdir);
    assert_int_equal(npy_write(path, "<f4", x, 1, shape, err, sizeof err), -1);
    assert_non_null(strstr(err, "missing/dir"));
    assert_int_equal(count_dir_entries(tmpdir), 2);
}

/* ---- the workload's options ---- */

static int run_main(const char *args)
{
    char buf[512], *argv[32];
    int argc = 0;
    snprintf(buf, sizeof buf, "logreg %s", args);
    for (char *tok = strtok(buf, " "); tok && argc < 31; tok = strtok(NULL, " "))
        argv[argc++] = tok;
    argv[argc] = NULL;
    fflush(stdout);
    return logreg_main(argc, argv);
}

static void test_bad_options_exit_2(void **state)
{
    (void)state;
    const char *bad[] = {
        "--samples abc",          "--samples 1",          "--features 0",
        "--informative 1",        "--flip-y 1.5",         "--class-sep -1",
        "--test-fraction 0",      "--threads 0",          "--max-iter 0",
        "--tol -1",               "--seed -3",            "--device cuda",
        "--device tpu",           "--kernel sse",         "--save-data",
        "--no-such-option",       "stray",
        "--features 100 --informative 90 --redundant 20",
        "--samples 3 --test-fraction 0.5",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = run_main(bad[i]);
        if (rc != 2)
            fail_msg("'logreg %s' returned %d, expected 2", bad[i], rc);
    }
    assert_int_equal(run_main("--help"), 0);
}

static void test_small_run_and_save(void **state)
{
    (void)state;
    char args[512], path[300];
    assert_int_equal(run_main("--samples 2000 --features 20 --informative 5 --threads 2"), 0);
    snprintf(args, sizeof args,
             "--samples 400 --features 6 --informative 3 --redundant 1 --generate-only "
             "--save-data %s/d",
             tmpdir);
    assert_int_equal(run_main(args), 0);
    const char *parts[] = {"X_train", "y_train", "X_test", "y_test"};
    for (int i = 0; i < 4; i++) {
        struct stat st;
        snprintf(path, sizeof path, "%s/d.%s.npy", tmpdir, parts[i]);
        assert_int_equal(stat(path, &st), 0);
        unlink(path);
    }
}

static int setup_tmpdir(void **state)
{
    (void)state;
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_tmpdir(void **state)
{
    (void)state;
    char path[300];
    const char *names[] = {"X.npy", "y.npy"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", tmpdir, names[i]);
        unlink(path);
    }
    return rmdir(tmpdir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generator_shape),
        cmocka_unit_test(test_generator_class_balance),
        cmocka_unit_test(test_generator_determinism),
        cmocka_unit_test(test_generator_redundant_are_combinations),
        cmocka_unit_test(test_generator_rejects_bad_specs),
        cmocka_unit_test(test_gradient_matches_differences),
        cmocka_unit_test(test_kernels_agree),
        cmocka_unit_test(test_threads_do_not_change_objective),
        cmocka_unit_test(test_accuracy),
        cmocka_unit_test(test_lbfgs_quadratic_and_rosenbrock),
        cmocka_unit_test(test_lbfgs_reaches_logistic_optimum),
        cmocka_unit_test(test_npy_round_trip),
        cmocka_unit_test(test_npy_errors),
        cmocka_unit_test(test_bad_options_exit_2),
        cmocka_unit_test(test_small_run_and_save),
    };
    return cmocka_run_group_tests(tests, setup_tmpdir, remove_tmpdir);
}
