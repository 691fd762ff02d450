/* Unit tests of the CNN's GEMM (workloads/imgclf/cnn_gemm.h): the AVX-512 kernels and the
 * OpenBLAS fallback against a naive triple loop in double, for every transpose variant, sizes
 * that are not multiples of the kernels' blocking (12 rows, 32 columns, 256 deep; 1 included),
 * leading dimensions wider than the matrices, beta 0 (C not read), 1 and 0.5, and the CNN's own
 * shapes. On a CPU without AVX-512 the kernels' tests are skipped with a message and only the
 * fallback is tested. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/rng.h"
#include "imgclf/cnn_gemm.h"

typedef void gemm_fn(int trans_a, int trans_b, int m, int n, int k, const float *a, int lda,
                     const float *b, int ldb, float beta, float *c, int ldc);

/* Extra columns beyond each matrix's width in its leading dimension: the kernels must use the
 * leading dimensions, and must not write C's padding. */
#define PAD 3
/* What C's padding holds before the call, and must hold after. */
#define GUARD 12345.0f

static float *alloc_floats(size_t count)
{
    float *p = malloc((count ? count : 1) * sizeof *p);
    assert_non_null(p);
    return p;
}

/* Runs fn on random A and B (stored as the transposes say) and a random C, and compares C with
 * the double-precision triple loop within the float summation bound (k + 2) eps sum |terms|.
 * With beta 0, C starts as NaN: a kernel that reads it fails. */
static void check_one(gemm_fn *fn, int ta, int tb, int m, int n, int k, float beta, uint64_t seed)
{
    const int lda = (ta ? m : k) + PAD, ldb = (tb ? k : n) + PAD, ldc = n + PAD;
    const int arows = ta ? k : m, brows = tb ? n : k;
    float *a = alloc_floats((size_t)arows * lda), *b = alloc_floats((size_t)brows * ldb);
    float *c = alloc_floats((size_t)m * ldc), *c0 = alloc_floats((size_t)m * ldc);
    struct rng r;
    rng_seed(&r, seed);
    for (size_t i = 0; i < (size_t)arows * lda; i++)
        a[i] = (float)rng_normal(&r);
    for (size_t i = 0; i < (size_t)brows * ldb; i++)
        b[i] = (float)rng_normal(&r);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < ldc; j++)
            c0[(size_t)i * ldc + j] = j >= n ? GUARD : beta == 0.0f ? NAN : (float)rng_normal(&r);
    for (size_t i = 0; i < (size_t)m * ldc; i++)
        c[i] = c0[i];

    fn(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);

    for (int i = 0; i < m; i++) {
        for (int j = 0; j < ldc; j++) {
            const float got = c[(size_t)i * ldc + j];
            if (j >= n) {
                if (got != GUARD)
                    fail_msg("ta %d tb %d m %d n %d k %d: padding C[%d][%d] written (%g)", ta,
                             tb, m, n, k, i, j, (double)got);
                continue;
            }
            double want = 0, mag = 0;
            for (int p = 0; p < k; p++) {
                double av = ta ? a[(size_t)p * lda + i] : a[(size_t)i * lda + p];
                double bv = tb ? b[(size_t)j * ldb + p] : b[(size_t)p * ldb + j];
                want += av * bv;
                mag += fabs(av * bv);
            }
            if (beta != 0.0f) {
                double cv = (double)beta * c0[(size_t)i * ldc + j];
                want += cv;
                mag += fabs(cv);
            }
            const double tol = (k + 2) * (double)FLT_EPSILON * mag + 1e-30;
            if (!(fabs(got - want) <= tol))
                fail_msg("ta %d tb %d m %d n %d k %d beta %g: C[%d][%d] = %.9g, want %.9g "
                         "(tolerance %.3g)", ta, tb, m, n, k, (double)beta, i, j, (double)got,
                         want, tol);
        }
    }
    free(a);
    free(b);
    free(c);
    free(c0);
}

/* Every transpose variant over sizes around the kernels' blocking (12 x 32 register tiles,
 * k blocks of at most 256), beta cycling through 0, 1 and 0.5. */
static void check_odd_sizes(gemm_fn *fn)
{
    static const int ms[] = {1, 5, 12, 13, 27};
    static const int ns[] = {1, 16, 17, 32, 33, 70};
    static const int ks[] = {1, 9, 256, 257, 513};
    static const float betas[] = {0.0f, 1.0f, 0.5f};
    unsigned count = 0;
    for (int t = 0; t < 4; t++)
        for (size_t im = 0; im < sizeof ms / sizeof *ms; im++)
            for (size_t in = 0; in < sizeof ns / sizeof *ns; in++)
                for (size_t ik = 0; ik < sizeof ks / sizeof *ks; ik++, count++)
                    check_one(fn, t & 1, t >> 1, ms[im], ns[in], ks[ik], betas[count % 3],
                              count + 1);
}

/* The GEMMs of cnn_cpu.c at 32x32x3 and 28x28x1 (micro-batch 4, group 32, 10 classes). */
static void check_cnn_shapes(gemm_fn *fn)
{
    static const struct {
        int ta, tb, m, n, k;
        float beta;
    } shapes[] = {
        {0, 0, 4096, 32, 27, 0.0f},  /* conv1 forward */
        {1, 0, 27, 32, 4096, 1.0f},  /* conv1 weight gradient */
        {1, 0, 9, 32, 3136, 0.0f},   /* conv1 weight gradient, 1 channel */
        {0, 0, 1024, 64, 288, 0.0f}, /* conv2 forward */
        {1, 0, 288, 64, 1024, 1.0f}, /* conv2 weight gradient */
        {0, 1, 784, 288, 64, 0.0f},  /* conv2 input gradient */
        {0, 0, 32, 128, 3136, 0.0f}, /* fc1 forward */
        {1, 0, 3136, 128, 32, 1.0f}, /* fc1 weight gradient */
        {0, 1, 32, 3136, 128, 0.0f}, /* fc1 input gradient */
        {1, 0, 128, 10, 32, 1.0f},   /* fc2 weight gradient */
    };
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        check_one(fn, shapes[s].ta, shapes[s].tb, shapes[s].m, shapes[s].n, shapes[s].k,
                  shapes[s].beta, 1000 + s);
}

/* Skips the calling test, saying why, when the AVX-512 kernels cannot run here. */
static void require_avx512(void)
{
    if (!cnn_gemm_avx512_available()) {
        print_message("(no AVX-512F on this CPU or build: the AVX-512 kernels are not tested)\n");
        skip();
    }
}

static void test_avx512_odd_sizes(void **state)
{
    (void)state;
    require_avx512();
    check_odd_sizes(cnn_gemm_avx512);
}

static void test_avx512_cnn_shapes(void **state)
{
    (void)state;
    require_avx512();
    check_cnn_shapes(cnn_gemm_avx512);
}

/* The fallback runs on every CPU: tested everywhere (it is the path without AVX-512). */
static void test_blas_odd_sizes(void **state)
{
    (void)state;
    check_odd_sizes(cnn_gemm_blas);
}

static void test_blas_cnn_shapes(void **state)
{
    (void)state;
    check_cnn_shapes(cnn_gemm_blas);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_avx512_odd_sizes),
        cmocka_unit_test(test_avx512_cnn_shapes),
        cmocka_unit_test(test_blas_odd_sizes),
        cmocka_unit_test(test_blas_cnn_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
