/* Unit tests of the CNN's bf16 GEMM (workloads/imgclf/cnn_gemm.h, cnn_gemm_bf16.c):
 *   - the rounding: the instruction the kernels use against a software round-to-nearest-even
 *     (ties, carries into the exponent, overflow to infinity, NaN, signed zero, denormals);
 *   - the GEMM against a double triple loop, twice: on the operands rounded by the software
 *     rounding, within fp32 summation error only ((k + 4) eps32 sum |terms|), which fails if an
 *     operand is rounded otherwise (truncated, say); and on the fp32 operands, within the bf16
 *     bound (2 u + u^2 + (k + 4) eps32) sum |terms| with u = 2^-8, which is what a user of bf16
 *     can expect;
 *   - every transpose variant, sizes around the blocking (12 x 32 tiles, k blocks of at most
 *     384, chunks of 288 rows; odd k), beta 0 (C not read), 1 and 0.5, C's padding untouched,
 *     the CNN's own shapes, the pre-packed B (packed in two panel ranges, as two threads do),
 *     and an A converted to bf16 ahead.
 * On a CPU without AVX512_BF16 every test is skipped, saying so: there is no fallback to test
 * (the workload refuses --precision bf16 there). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "imgclf/cnn_gemm.h"

#define PAD 3
#define GUARD 12345.0f

/* Round to nearest even to bf16, denormal inputs as zero (vcvtne2ps2bf16's rule), NaN quiet. */
static uint16_t bf16_reference(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7f800000u) == 0) /* zero or denormal: signed zero */
        return (uint16_t)((u >> 16) & 0x8000u);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: keep sign and top payload, make it quiet */
        return (uint16_t)((u >> 16) | 0x0040u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static float bf16_value(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void require_bf16(void)
{
    if (!cnn_gemm_bf16_available()) {
        print_message("(no AVX512_BF16 on this CPU or build, or MLBENCH_CPU_DISABLE names it: "
                      "the bf16 kernels are not tested)\n");
        skip();
    }
}

static void test_rounding(void **state)
{
    (void)state;
    require_bf16();
    float x[64];
    x[63] = 42.0f; /* past n: must stay untouched */
    int n = 0;
    x[n++] = 1.0f;
    x[n++] = from_bits(0x3f808000u); /* 1 + 2^-8: a tie, 1 is even -> 1 */
    x[n++] = from_bits(0x3f818000u); /* 1 + 3 * 2^-8: a tie, rounds up to the even 1 + 2^-6 */
    x[n++] = from_bits(0x3f808001u); /* just above the tie: up */
    x[n++] = from_bits(0x3f807fffu); /* just below: down */
    x[n++] = from_bits(0x3fffffffu); /* carries into the exponent: 2 */
    x[n++] = FLT_MAX;                /* above bf16's largest + half an ulp: infinity */
    x[n++] = from_bits(0x7f7f7fffu); /* bf16's largest, just */
    x[n++] = -FLT_MAX;
    x[n++] = INFINITY;
    x[n++] = -INFINITY;
    x[n++] = NAN;
    x[n++] = -0.0f;
    x[n++] = 0.0f;
    x[n++] = FLT_MIN;                /* smallest normal: kept */
    x[n++] = from_bits(0x00000001u); /* denormals: zero */
    x[n++] = from_bits(0x807fffffu);
    x[n++] = 3.14159265f;
    x[n++] = -2.718281828f;
    struct rng r;
    rng_seed(&r, 7);
    while (n < 63) /* odd: the last element goes through the odd-count path */
        x[n++] = (float)(rng_normal(&r) * pow(10, (int)(rng_uniform(&r) * 20) - 10));
    uint16_t got[64];
    memset(got, 0xab, sizeof got);
    cnn_bf16_convert(x, got, (size_t)n);
    for (int i = 0; i < n; i++) {
        uint16_t want = bf16_reference(x[i]);
        if (isnan(x[i]) ? !isnan(bf16_value(got[i])) : got[i] != want)
            fail_msg("x[%d] = %a (0x%08x): bf16 0x%04x, want 0x%04x", i, (double)x[i],
                     (unsigned)((union { float f; uint32_t u; }){x[i]}.u), got[i], want);
    }
    assert_int_equal(got[63], 0xabab); /* nothing past n written */
    /* the same rounding kept as floats */
    float kept[64];
    memcpy(kept, x, sizeof kept);
    cnn_bf16_round_in_place(kept, (size_t)n);
    for (int i = 0; i < n; i++)
        if (isnan(x[i]) ? !isnan(kept[i]) : memcmp(&kept[i], &(float){bf16_value(got[i])}, 4))
            fail_msg("x[%d] = %a: rounded in place to %a, want %a", i, (double)x[i],
                     (double)kept[i], (double)bf16_value(got[i]));
    assert_true(kept[63] == x[63]); /* nothing past n written */
}

static float *alloc_floats(size_t count)
{
    float *p = malloc((count ? count : 1) * sizeof *p);
    assert_non_null(p);
    return p;
}

/* The pre-packed B of op(B), packed in two halves of its panels. */
static void *pack_b(int tb, int n, int k, const float *b, int ldb)
{
    size_t bytes = cnn_gemm_bf16_packed_size(n, k);
    void *p = NULL;
    assert_int_equal(posix_memalign(&p, 64, bytes ? bytes : 64), 0);
    const int panels = (n + 31) / 32;
    cnn_gemm_bf16_pack(tb, n, k, b, ldb, p, panels / 2, panels);
    cnn_gemm_bf16_pack(tb, n, k, b, ldb, p, 0, panels / 2);
    return p;
}

/* How check_one passes the operands: mode bit 0, B packed ahead (cnn_gemm_bf16_pack); bit 1, A
 * converted to bf16 ahead (cnn_bf16_convert: the GEMM reads it in place or interleaves it). */
#define PACKED_B 1
#define BF16_A 2

/* Random A, B and C; C = op(A) op(B) + beta C by cnn_gemm_bf16, or cnn_gemm_bf16_run for the
 * modes, against the two double references described at the top. */
static void check_one(int ta, int tb, int m, int n, int k, float beta, int mode, uint64_t seed)
{
    /* a bf16 A read in place needs an even leading dimension */
    const int lda = (ta ? m : k) + (mode & BF16_A ? PAD + 1 : PAD);
    const int ldb = (tb ? k : n) + PAD, ldc = n + PAD;
    const int packed = mode & PACKED_B;
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
    memcpy(c, c0, (size_t)m * ldc * sizeof *c);

    void *pb = NULL;
    uint16_t *a16 = NULL;
    if (mode) {
        struct cnn_bf16_gemm g = {.trans_a = ta, .trans_b = tb, .m = m, .n = n, .k = k,
                                  .a = a, .lda = lda, .b = b, .ldb = ldb, .beta = beta,
                                  .c = c, .ldc = ldc};
        if (packed) {
            g.b_packed = pb = pack_b(tb, n, k, b, ldb);
            g.b = NULL;
        }
        if (mode & BF16_A) {
            a16 = malloc((size_t)arows * lda * sizeof *a16);
            assert_non_null(a16);
            cnn_bf16_convert(a, a16, (size_t)arows * lda);
            g.a16 = a16;
            g.a = NULL;
        }
        cnn_gemm_bf16_run(&g);
    } else {
        cnn_gemm_bf16(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
    }

    const double eps32 = FLT_EPSILON / 2, u = 1.0 / 256;
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < ldc; j++) {
            const double got = c[(size_t)i * ldc + j];
            if (j >= n) {
                if (got != GUARD)
                    fail_msg("ta %d tb %d m %d n %d k %d: padding C[%d][%d] written (%g)", ta,
                             tb, m, n, k, i, j, got);
                continue;
            }
            double exact = 0, rounded = 0, mag = 0, rmag = 0;
            for (int p = 0; p < k; p++) {
                float av = ta ? a[(size_t)p * lda + i] : a[(size_t)i * lda + p];
                float bv = tb ? b[(size_t)j * ldb + p] : b[(size_t)p * ldb + j];
                double ar = bf16_value(bf16_reference(av)), br = bf16_value(bf16_reference(bv));
                exact += (double)av * bv;
                mag += fabs((double)av * bv);
                rounded += ar * br;
                rmag += fabs(ar * br);
            }
            if (beta != 0.0f) {
                double cv = (double)beta * c0[(size_t)i * ldc + j];
                exact += cv;
                rounded += cv;
                mag += fabs(cv);
                rmag += fabs(cv);
            }
            const double tol_sum = (k + 4) * eps32 * rmag + 1e-30;
            const double tol_bf16 = (2 * u + u * u + (k + 4) * eps32) * mag + 1e-30;
            if (!(fabs(got - rounded) <= tol_sum))
                fail_msg("ta %d tb %d m %d n %d k %d beta %g%s: C[%d][%d] = %.9g, want %.9g "
                         "from the bf16 operands (tolerance %.3g)",
                         ta, tb, m, n, k, (double)beta, packed ? " packed" : "", i, j, got,
                         rounded, tol_sum);
            if (!(fabs(got - exact) <= tol_bf16))
                fail_msg("ta %d tb %d m %d n %d k %d beta %g%s: C[%d][%d] = %.9g, exact %.9g, "
                         "beyond the bf16 bound %.3g",
                         ta, tb, m, n, k, (double)beta, packed ? " packed" : "", i, j, got,
                         exact, tol_bf16);
        }
    }
    free(pb);
    free(a16);
    free(a);
    free(b);
    free(c);
    free(c0);
}

static void test_odd_sizes(void **state)
{
    (void)state;
    require_bf16();
    static const int ms[] = {1, 5, 12, 13, 289, 300};
    static const int ns[] = {1, 16, 17, 32, 33, 70};
    static const int ks[] = {1, 2, 9, 384, 385, 769};
    static const float betas[] = {0.0f, 1.0f, 0.5f};
    unsigned count = 0;
    for (int t = 0; t < 16; t++)
        for (size_t im = 0; im < sizeof ms / sizeof *ms; im++)
            for (size_t in = 0; in < sizeof ns / sizeof *ns; in++)
                for (size_t ik = 0; ik < sizeof ks / sizeof *ks; ik++, count++) {
                    const int ta = t & 1, mode = t >> 2;
                    if (mode & BF16_A && !ta && ks[ik] % 2) /* read in place: k even */
                        continue;
                    check_one(ta, (t >> 1) & 1, ms[im], ns[in], ks[ik], betas[count % 3],
                              mode, count + 1);
                }
}

/* The GEMMs of cnn_cpu.c at 32x32x3 and 28x28x1 (micro-batch 4, group 32, 10 classes); the
 * weights' (B of the forward and input-gradient GEMMs) through the pre-packed path, as there. */
static void test_cnn_shapes(void **state)
{
    (void)state;
    require_bf16();
    static const struct {
        int ta, tb, m, n, k;
        float beta;
        int mode;
    } shapes[] = {
        {0, 0, 4096, 32, 27, 0.0f, PACKED_B},           /* conv1 forward */
        {1, 0, 27, 32, 4096, 1.0f, 0},                  /* conv1 weight gradient */
        {0, 0, 3136, 32, 9, 0.0f, PACKED_B},            /* conv1 forward, 1 channel */
        {1, 0, 9, 32, 3136, 0.0f, 0},                   /* conv1 weight gradient, 1 channel */
        {0, 0, 1024, 64, 288, 0.0f, PACKED_B | BF16_A}, /* conv2 forward */
        {1, 0, 288, 64, 1024, 1.0f, BF16_A},            /* conv2 weight gradient */
        {0, 1, 784, 288, 64, 0.0f, PACKED_B},           /* conv2 input gradient */
        {0, 0, 32, 128, 3136, 0.0f, PACKED_B},          /* fc1 forward */
        {1, 0, 3136, 128, 32, 1.0f, 0},                 /* fc1 weight gradient */
        {0, 1, 32, 3136, 128, 0.0f, PACKED_B},          /* fc1 input gradient */
        {0, 0, 32, 10, 128, 0.0f, PACKED_B},            /* fc2 forward */
        {1, 0, 128, 10, 32, 1.0f, 0},                   /* fc2 weight gradient */
        {0, 1, 32, 128, 10, 0.0f, PACKED_B},            /* fc2 input gradient */
    };
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        check_one(shapes[s].ta, shapes[s].tb, shapes[s].m, shapes[s].n, shapes[s].k,
                  shapes[s].beta, shapes[s].mode, 1000 + s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rounding),
        cmocka_unit_test(test_odd_sizes),
        cmocka_unit_test(test_cnn_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
