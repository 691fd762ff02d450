/* bf16-peak: the multiply-add ceiling of one core, the figure the CNN's GEMM rates are read
 * against: a loop of nothing but vdpbf16ps (AVX512_BF16: 32 bf16 products summed in pairs into
 * 16 fp32 lanes, 64 FLOPs) on 24 independent accumulators, and the same loop of vfmadd231ps
 * (AVX-512F fp32: 32 FLOPs). 24 chains hide the instructions' latency (4-6 cycles) on two pipes.
 * Prints one JSON line: the median GFLOP/s of 5 repetitions of each, in one thread.
 * Usage: bf16-peak [--seconds 0.3]   (each repetition's approximate length)
 * Exit 2 on a CPU without AVX-512F or AVX512_BF16 (with the reason). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPS 5
#define CHAINS 24

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* iters x CHAINS instructions; returns a sum of the accumulators so the loop is not removed. */
__attribute__((target("avx512f,avx512bf16"))) static float loop_bf16(long iters)
{
    __m512 acc[CHAINS];
    for (int i = 0; i < CHAINS; i++)
        acc[i] = _mm512_setzero_ps();
    __m512bh a = (__m512bh)_mm512_set1_epi32(0x3f803f80), b = a; /* pairs of 1.0 */
    for (long it = 0; it < iters; it++) {
#pragma GCC unroll 24
        for (int i = 0; i < CHAINS; i++)
            acc[i] = _mm512_dpbf16_ps(acc[i], a, b);
        __asm__ volatile("" : "+v"(a)); /* a may change: the compiler keeps every step */
    }
    float s = 0;
    for (int i = 0; i < CHAINS; i++)
        s += _mm512_reduce_add_ps(acc[i]);
    return s;
}

__attribute__((target("avx512f"))) static float loop_fp32(long iters)
{
    __m512 acc[CHAINS];
    for (int i = 0; i < CHAINS; i++)
        acc[i] = _mm512_setzero_ps();
    __m512 a = _mm512_set1_ps(1.0f), b = _mm512_set1_ps(1e-9f);
    for (long it = 0; it < iters; it++) {
#pragma GCC unroll 24
        for (int i = 0; i < CHAINS; i++)
            acc[i] = _mm512_fmadd_ps(a, b, acc[i]);
        __asm__ volatile("" : "+v"(a));
    }
    float s = 0;
    for (int i = 0; i < CHAINS; i++)
        s += _mm512_reduce_add_ps(acc[i]);
    return s;
}

/* Median GFLOP/s of REPS repetitions of about `seconds` each. */
static double measure(float (*loop)(long), double flops_per_iter, double seconds, float *sink)
{
    long iters = 1000;
    for (;;) { /* calibrate */
        double t = now_s();
        *sink += loop(iters);
        double dt = now_s() - t;
        if (dt > seconds / 4)
            break;
        iters *= 2;
    }
    iters *= 4; /* about `seconds` */
    double rate[REPS];
    for (int r = 0; r < REPS; r++) {
        double t = now_s();
        *sink += loop(iters);
        rate[r] = flops_per_iter * (double)iters / (now_s() - t) * 1e-9;
    }
    qsort(rate, REPS, sizeof rate[0], cmp_double);
    return rate[REPS / 2];
}

int main(int argc, char **argv)
{
    double seconds = 0.3;
    if (argc == 3 && strcmp(argv[1], "--seconds") == 0) {
        char *end;
        seconds = strtod(argv[2], &end);
        if (*end || !(seconds > 0 && seconds <= 60)) {
            fprintf(stderr, "bf16-peak: --seconds '%s' must be a number from 0 to 60\n", argv[2]);
            return 2;
        }
    } else if (argc != 1) {
        fprintf(stderr, "usage: bf16-peak [--seconds S]\n");
        return 2;
    }
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bf16")) {
        fprintf(stderr, "bf16-peak: this CPU has no AVX-512F with AVX512_BF16\n");
        return 2;
    }
    float sink = 0;
    double bf16 = measure(loop_bf16, CHAINS * 64.0, seconds, &sink);
    double fp32 = measure(loop_fp32, CHAINS * 32.0, seconds, &sink);
    printf("{\"bench\": \"peak\", \"bf16_gflops\": %.1f, \"fp32_gflops\": %.1f, \"ratio\": %.2f, "
           "\"sink\": %g}\n",
           bf16, fp32, bf16 / fp32, (double)sink);
    return 0;
}
#else
int main(void)
{
    fprintf(stderr, "bf16-peak: x86-64 only (vdpbf16ps)\n");
    return 2;
}
#endif
