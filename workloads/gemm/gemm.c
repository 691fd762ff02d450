/* gemm: matrix-multiply throughput by device, precision and size (docs/workloads.md): the
 * ceiling the other workloads are measured against. Each (precision, size) is a stage; its
 * TFLOP/s is a counter. Before timing, every precision is checked on a small product against a
 * double-precision reference computed here, so a fast wrong result is never reported. CPU:
 * OpenBLAS sgemm (fp32). CUDA: cuBLAS through the backend library (common/cuda_backend.h). The
 * driver (device, lists, check then time) is common/sweep.c's. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/device.h"
#include "common/opts.h"
#include "common/rng.h"
#include "common/sweep.h"
#include "mlbench/marker.h"
#include "workloads.h"

#define WL "gemm"
/* Largest relative Frobenius error of the check product: rounding of the inputs (tf32: 10-bit
 * mantissa, fp16: 10, bf16: 7) over a k = 320 dot product, with margin. */
static const double tolerance[GEMM_PRECISIONS] = {1e-5, 5e-3, 5e-3, 3e-2};

static const char usage_text[] =
    "usage: mlbench-workload gemm [options]\n"
    "Matrix-multiply throughput (C = A B, square N x N, fp32 accumulation) by precision and size.\n"
    "  --device auto|cpu|cuda   auto: cuda when a GPU and the CUDA backend are there (default)\n"
    "  --precision LIST     comma-separated of fp32, tf32, fp16, bf16 (default: cpu fp32;\n"
    "                       cuda all four)\n"
    "  --sizes LIST         comma-separated N (default: cpu 512,1024,2048; cuda 1024,4096,8192)\n"
    "  --warmup N           untimed products first (default 3)\n"
    "  --reps N             timed products; the median is reported (default 10)\n"
    "  --threads N          cpu: OpenBLAS threads (default: all CPUs)\n"
    "  --seed N             of the inputs (default 1)\n";

struct gemm_opts {
    int device; /* 0 auto, 1 cpu, 2 cuda */
    const char *precisions, *sizes;
    int warmup, reps, threads;
    uint64_t seed;
};

/* ||c - a b||_F / ||a b||_F with the reference in double. */
static double rel_error(const float *a, const float *b, const float *c, int m, int n, int k)
{
    double num = 0, den = 0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double ref = 0;
            for (int p = 0; p < k; p++)
                ref += (double)a[(size_t)i * k + p] * b[(size_t)p * n + j];
            double d = c[(size_t)i * n + j] - ref;
            num += d * d;
            den += ref * ref;
        }
    return sqrt(num / den);
}

/* The CPU's product, timed with CLOCK_MONOTONIC (OpenBLAS runs synchronously). */
static void cpu_gemm(const float *a, const float *b, float *c, int m, int n, int k)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c,
                n);
}

static int cpu_time(int size, const struct gemm_opts *o, struct gemm_timing *t, char *err,
                    size_t errlen)
{
    size_t nn = (size_t)size * size;
    float *a = malloc(nn * sizeof *a), *b = malloc(nn * sizeof *b), *c = malloc(nn * sizeof *c);
    double *times = malloc((size_t)o->reps * sizeof *times);
    if (!a || !b || !c || !times) {
        snprintf(err, errlen, "out of memory for three %dx%d matrices", size, size);
        free(a), free(b), free(c), free(times);
        return -1;
    }
    struct rng r;
    rng_seed(&r, o->seed);
    device_fill(a, nn, &r, 1);
    device_fill(b, nn, &r, 1);
    for (int i = 0; i < o->warmup; i++)
        cpu_gemm(a, b, c, size, size, size);
    for (int i = 0; i < o->reps; i++) {
        double t0 = wl_now();
        cpu_gemm(a, b, c, size, size, size);
        times[i] = wl_now() - t0;
    }
    device_timing(times, o->reps, t);
    free(a), free(b), free(c), free(times);
    return 0;
}

/* The sweep's parts (common/sweep.h); ctx is the struct gemm_opts. */

/* Checks one precision on a 192 x 320 x 256 product; 0, or -1 with the error printed. */
static int gemm_check(void *ctx, const struct device *dev, int precision)
{
    const struct cuda_backend *cuda = dev->cuda;
    const uint64_t seed = ((const struct gemm_opts *)ctx)->seed;
    const int m = 192, k = 320, n = 256;
    float *a = malloc((size_t)m * k * sizeof *a), *b = malloc((size_t)k * n * sizeof *b);
    float *c = malloc((size_t)m * n * sizeof *c);
    char err[512];
    int rc = -1;
    if (!a || !b || !c) {
        wl_error(WL, "out of memory");
        goto out;
    }
    struct rng r;
    rng_seed(&r, seed ^ 0xc0ffee);
    device_fill(a, (size_t)m * k, &r, 1);
    device_fill(b, (size_t)k * n, &r, 1);
    if (cuda) {
        struct gemm_request rq = {.precision = precision, .m = m, .n = n, .k = k, .seed = seed};
        if (cuda->gemm(&rq, a, b, c, NULL, err, sizeof err)) {
            wl_error(WL, "%s", err);
            goto out;
        }
    } else {
        cpu_gemm(a, b, c, m, n, k);
    }
    double e = rel_error(a, b, c, m, n, k);
    if (!(e <= tolerance[precision])) {
        wl_error(WL, "%s on %s gives a wrong product: relative error %.3g, more than the %.0e "
                     "its rounding allows: not timing it",
                 precision_names[precision], cuda ? "cuda" : "cpu", e, tolerance[precision]);
        goto out;
    }
    rc = 0;
out:
    free(a), free(b), free(c);
    return rc;
}

static int gemm_setup(void *ctx, const struct device *dev)
{
    const struct gemm_opts *o = ctx;
    if (!dev->cuda)
        openblas_set_num_threads(o->threads);
    return 0;
}

static void gemm_describe(void *ctx, const struct device *dev)
{
    const struct gemm_opts *o = ctx;
    char buf[64];
    if (dev->cuda) {
        snprintf(buf, sizeof buf, "%d.%d", dev->cc_major, dev->cc_minor);
        mlb_meta("compute_capability", buf);
    } else {
        snprintf(buf, sizeof buf, "%d", o->threads);
        mlb_meta("threads", buf);
    }
    printf("gemm on %s%s: C = A B, N x N, median of %d after %d warm-up\n", dev->name,
           dev->cuda ? "" : " (OpenBLAS sgemm)", o->reps, o->warmup);
}

static int gemm_measure(void *ctx, const struct device *dev, int precision, int size,
                        const char *stage, struct gemm_timing *t, char *err, size_t errlen)
{
    const struct gemm_opts *o = ctx;
    struct gemm_request rq = {.precision = precision, .m = size, .n = size, .k = size,
                              .warmup = o->warmup, .reps = o->reps, .seed = o->seed};
    mlb_stage_begin(stage);
    int rc = dev->cuda ? dev->cuda->gemm(&rq, NULL, NULL, NULL, t, err, errlen)
                       : cpu_time(size, o, t, err, errlen);
    mlb_stage_end(stage);
    return rc;
}

static void gemm_report(void *ctx, int precision, int size, const struct gemm_timing *t)
{
    (void)ctx;
    char counter[64];
    snprintf(counter, sizeof counter, "tflops_%s_%d", precision_names[precision], size);
    double tflops = 2.0 * size * (double)size * size / t->median_s * 1e-12;
    mlb_counter(counter, tflops);
    printf("  %-5s %6d  %10.3f ms  (%.3f .. %.3f)  %9.2f TFLOP/s\n", precision_names[precision],
           size, t->median_s * 1e3, t->min_s * 1e3, t->max_s * 1e3, tflops);
}

static const struct sweep_parts gemm_parts = {
    .wl = WL,
    .list_opt = "sizes",
    .list_cpu = "512,1024,2048",
    .list_cuda = "1024,4096,8192",
    .list_min = 16,
    .list_max = 65536,
    .precisions_cpu = "fp32",
    .precisions_cuda = "fp32,tf32,fp16,bf16",
    .cpu_fp32 = "the CPU product is fp32 (OpenBLAS sgemm)",
    .stage_tag = "",
    .setup = gemm_setup,
    .describe = gemm_describe,
    .check = gemm_check,
    .measure = gemm_measure,
    .report = gemm_report,
};

int gemm_main(int argc, char **argv)
{
    struct gemm_opts o = {.warmup = 3, .reps = 10, .threads = wl_online_cpus(), .seed = 1};
    const struct wl_opt table[] = {
        WL_CHOICE("device", &o.device, device_names),
        WL_STRING("precision", &o.precisions),
        WL_STRING("sizes", &o.sizes),
        WL_INT("warmup", &o.warmup, 0, 1000),
        WL_INT("reps", &o.reps, 1, 100000),
        WL_INT("threads", &o.threads, 1, 1024),
        WL_U64("seed", &o.seed),
    };
    int rc = opts_parse(WL, argc, argv, table, (int)(sizeof table / sizeof table[0]),
                        usage_text);
    if (rc)
        return rc > 0 ? 0 : 2;
    struct sweep_args args = {.device = o.device, .precisions = o.precisions, .list = o.sizes};
    return sweep_main(&gemm_parts, &args, &o);
}
