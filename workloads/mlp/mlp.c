/* mlp: inference of a transformer-sized MLP block, y = GELU(x W1 + b1) W2 + b2, at small and
 * large batches, by device and precision (docs/workloads.md): the seeds' FP16-against-FP32
 * example measured properly (warm-up, synchronised timing, repetitions, a correctness check
 * first), showing where half precision pays (large batches: compute-bound) and where a step is
 * bound by kernel launches (batch 1; --graph replays the step as one CUDA graph). CPU: OpenBLAS
 * sgemm + C, fp32. CUDA: the backend's cuBLAS path. Each (precision, batch) is a stage; the
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

#define WL "mlp"

/* Largest relative error of the check block (batch 4, 64 -> 256 -> 64) against a double
 * reference: activations rounded to the precision twice, with margin. */
static const double tolerance[GEMM_PRECISIONS] = {1e-5, 5e-3, 1e-2, 6e-2};

static const char usage_text[] =
    "usage: mlbench-workload mlp [options]\n"
    "Inference of an MLP block y = GELU(x W1 + b1) W2 + b2 (transformer-sized by default):\n"
    "latency at batch 1, throughput at batch 256, by precision.\n"
    "  --device auto|cpu|cuda   auto: cuda when a GPU and the CUDA backend are there (default)\n"
    "  --precision LIST     of fp32, tf32, fp16, bf16 (default: cpu fp32; cuda fp32,fp16,bf16)\n"
    "  --batches LIST       rows per forward (default 1,256)\n"
    "  --hidden N           model width (default 1024, BERT-large's)\n"
    "  --ff N               inner width (default 4 x hidden)\n"
    "  --warmup N           untimed forwards first (default 10)\n"
    "  --reps N             timed forwards; the median is reported (default 50)\n"
    "  --graph              cuda: capture the forward in a CUDA graph and replay it\n"
    "  --threads N          cpu: OpenBLAS threads (default: all CPUs)\n"
    "  --seed N             of the inputs (default 1)\n"
    "  --max-memory SIZE    fail as out of memory (exit 3) when the largest batch's block needs\n"
    "                       more than SIZE (e.g. 64MiB): the weights, x, h, y and timings\n";

struct mlp_opts {
    int device, hidden, ff, warmup, reps, graph, threads;
    const char *precisions, *batches;
    uint64_t seed;
    int64_t max_memory; /* --max-memory; 0: none */
};

/* The block's inputs as floats: x (batch x hidden), w1, b1, w2, b2, scaled like a trained
 * layer's (weights U(-1, 1) / sqrt(fan-in)). Returns 0, or -1 out of memory. */
static int make_inputs(const struct mlp_request *rq, float *w[5], uint64_t seed)
{
    const size_t n[5] = {(size_t)rq->batch * rq->hidden, (size_t)rq->hidden * rq->ff,
                         (size_t)rq->ff, (size_t)rq->ff * rq->hidden, (size_t)rq->hidden};
    const float scale[5] = {1, 1 / sqrtf((float)rq->hidden), 0.1f, 1 / sqrtf((float)rq->ff),
                            0.1f};
    struct rng r;
    rng_seed(&r, seed);
    for (int i = 0; i < 5; i++) {
        if (!(w[i] = malloc(n[i] * sizeof(float))))
            return -1;
        device_fill(w[i], n[i], &r, scale[i]);
    }
    return 0;
}

static float gelu(float v)
{
    return 0.5f * v * (1.0f + erff(v * 0.70710678f));
}

/* The CPU forward: h (batch x ff) is scratch. */
static void cpu_forward(const struct mlp_request *rq, float *const w[5], float *h, float *y)
{
    int b = rq->batch, d = rq->hidden, f = rq->ff;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, b, f, d, 1.0f, w[0], d, w[1], f, 0.0f,
                h, f);
    for (int i = 0; i < b; i++)
        for (int j = 0; j < f; j++)
            h[(size_t)i * f + j] = gelu(h[(size_t)i * f + j] + w[2][j]);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, b, d, f, 1.0f, h, f, w[3], d, 0.0f, y,
                d);
    for (int i = 0; i < b; i++)
        for (int j = 0; j < d; j++)
            y[(size_t)i * d + j] += w[4][j];
}

/* ||y - y_ref||_F / ||y_ref||_F with the reference computed in double. */
static double rel_error(const struct mlp_request *rq, float *const w[5], const float *y)
{
    int b = rq->batch, d = rq->hidden, f = rq->ff;
    double num = 0, den = 0, *h = malloc((size_t)f * sizeof *h);
    if (!h)
        return NAN;
    for (int i = 0; i < b; i++) {
        for (int j = 0; j < f; j++) {
            double v = w[2][j];
            for (int k = 0; k < d; k++)
                v += (double)w[0][(size_t)i * d + k] * w[1][(size_t)k * f + j];
            h[j] = 0.5 * v * (1 + erf(v / sqrt(2.0)));
        }
        for (int j = 0; j < d; j++) {
            double v = w[4][j];
            for (int k = 0; k < f; k++)
                v += h[k] * w[3][(size_t)k * d + j];
            double e = y[(size_t)i * d + j] - v;
            num += e * e;
            den += v * v;
        }
    }
    free(h);
    return sqrt(num / den);
}

/* Runs rq on the device: the check (y given) or the timing (t given). 0, or -1 (failed) or -2
 * (out of memory) with err set. */
static int forward(const struct device *dev, const struct mlp_request *rq, float *const w[5],
                   float *y, struct gemm_timing *t, char *err, size_t errlen)
{
    if (dev->cuda) {
        int rc = dev->cuda->mlp(rq, y ? (const float *const *)w : NULL, y, t, err, errlen);
        return rc && device_error_is_oom(err) ? -2 : rc;
    }
    float *h = malloc((size_t)rq->batch * rq->ff * sizeof *h);
    float *out = y ? y : malloc((size_t)rq->batch * rq->hidden * sizeof *out);
    double *times = t ? malloc((size_t)rq->reps * sizeof *times) : NULL;
    int rc = -2;
    if (!h || !out || (t && !times)) {
        snprintf(err, errlen, "cannot allocate the activations of a batch of %d", rq->batch);
        goto out;
    }
    if (y)
        cpu_forward(rq, w, h, out);
    for (int i = 0; t && i < rq->warmup + rq->reps; i++) {
        double t0 = wl_now();
        cpu_forward(rq, w, h, out);
        if (i >= rq->warmup)
            times[i - rq->warmup] = wl_now() - t0;
    }
    if (t)
        device_timing(times, rq->reps, t);
    rc = 0;
out:
    free(h);
    if (out != y)
        free(out);
    free(times);
    return rc;
}

static void free_inputs(float *w[5])
{
    for (int i = 0; i < 5; i++)
        free(w[i]);
}

/* The sweep's parts (common/sweep.h); ctx is the struct mlp_opts. */

/* Checks one precision on a small block; 0, or -1 with the error printed. */
static int mlp_check(void *ctx, const struct device *dev, int precision)
{
    const uint64_t seed = ((const struct mlp_opts *)ctx)->seed;
    struct mlp_request rq = {.precision = precision, .batch = 4, .hidden = 64, .ff = 256};
    float *w[5] = {NULL}, *y = malloc(4 * 64 * sizeof *y);
    char err[512];
    int rc = -1;
    if (!y || make_inputs(&rq, w, seed ^ 0xc0ffee)) {
        wl_error(WL, "out of memory");
    } else if (forward(dev, &rq, w, y, NULL, err, sizeof err)) {
        wl_error(WL, "check %s: %s", precision_names[precision], err);
    } else {
        double e = rel_error(&rq, w, y);
        if (e <= tolerance[precision])
            rc = 0;
        else
            wl_error(WL, "%s on %s gives a wrong result: relative error %.3g, more than the "
                         "%.0e its rounding allows: not timing it",
                     precision_names[precision], dev->name, e, tolerance[precision]);
    }
    free_inputs(w);
    free(y);
    return rc;
}

static int mlp_setup(void *ctx, const struct device *dev)
{
    const struct mlp_opts *o = ctx;
    if (o->graph && !dev->cuda) {
        wl_error(WL, "--graph needs --device cuda (a CUDA graph replays GPU kernels)");
        return -1;
    }
    if (!dev->cuda)
        openblas_set_num_threads(o->threads);
    return 0;
}

static void mlp_describe(void *ctx, const struct device *dev)
{
    const struct mlp_opts *o = ctx;
    char buf[64];
    snprintf(buf, sizeof buf, "%dx%d", o->hidden, o->ff);
    mlb_meta("shape", buf);
    mlb_meta("cuda_graph", o->graph ? "yes" : "no");
    printf("mlp on %s: y = GELU(x W1 + b1) W2 + b2, %d -> %d -> %d%s, median of %d after %d "
           "warm-up\n",
           dev->name, o->hidden, o->ff, o->hidden, o->graph ? ", CUDA graph" : "", o->reps,
           o->warmup);
}

/* The CPU's inputs are made before the stage: the stage times the forwards only. */
static int mlp_measure(void *ctx, const struct device *dev, int precision, int batch,
                       const char *stage, struct gemm_timing *t, char *err, size_t errlen)
{
    const struct mlp_opts *o = ctx;
    struct mlp_request rq = {.precision = precision, .batch = batch, .hidden = o->hidden,
                             .ff = o->ff, .warmup = o->warmup, .reps = o->reps,
                             .graph = o->graph, .seed = o->seed};
    float *w[5] = {NULL};
    if (!dev->cuda && make_inputs(&rq, w, o->seed)) {
        free_inputs(w);
        snprintf(err, errlen, "cannot allocate the inputs and weights of a batch of %d", batch);
        return -2;
    }
    mlb_stage_begin(stage);
    int rc = forward(dev, &rq, w, NULL, t, err, errlen);
    mlb_stage_end(stage);
    free_inputs(w);
    return rc;
}

/* What mlp_measure and forward allocate for a batch: x (batch x hidden), W1, b1, W2, b2, h
 * (batch x ff), y (batch x hidden) and the reps' times; on the GPU the same tensors in the
 * precision's element size (the backend's device buffers). Linear in the batch. */
static double mlp_need_bytes(void *ctx, const struct device *dev, int precision, int batch,
                             char *what, size_t whatlen)
{
    const struct mlp_opts *o = ctx;
    double elem = !dev->cuda || precision == GEMM_FP32 || precision == GEMM_TF32 ? 4 : 2;
    double d = o->hidden, f = o->ff, b = batch;
    double weights = (2 * d * f + f + d) * elem, acts = (2 * b * d + b * f) * elem;
    char wb[32], ab[32];
    snprintf(what, whatlen, "weights %s, activations x, h, y %s",
             wl_format_bytes(weights, wb, sizeof wb), wl_format_bytes(acts, ab, sizeof ab));
    return weights + acts + (double)o->reps * sizeof(double);
}

static void mlp_report(void *ctx, int precision, int batch, const struct gemm_timing *t)
{
    const struct mlp_opts *o = ctx;
    char buf[64];
    double flops = 4.0 * batch * (double)o->hidden * o->ff; /* two products */
    double tflops = flops / t->median_s * 1e-12;
    snprintf(buf, sizeof buf, "ms_%s_b%d", precision_names[precision], batch);
    mlb_counter(buf, t->median_s * 1e3);
    snprintf(buf, sizeof buf, "tflops_%s_b%d", precision_names[precision], batch);
    mlb_counter(buf, tflops);
    printf("  %-5s batch %6d  %10.4f ms  (%.4f .. %.4f)  %12.0f rows/s  %8.3f TFLOP/s\n",
           precision_names[precision], batch, t->median_s * 1e3, t->min_s * 1e3,
           t->max_s * 1e3, batch / t->median_s, tflops);
}

static const struct sweep_parts mlp_parts = {
    .wl = WL,
    .list_opt = "batches",
    .list_cpu = "1,256",
    .list_cuda = "1,256",
    .list_min = 1,
    .list_max = 1 << 20,
    .precisions_cpu = "fp32",
    .precisions_cuda = "fp32,fp16,bf16",
    .cpu_fp32 = "the CPU block runs in fp32",
    .stage_tag = "b",
    .setup = mlp_setup,
    .describe = mlp_describe,
    .check = mlp_check,
    .measure = mlp_measure,
    .need_bytes = mlp_need_bytes,
    .report = mlp_report,
};

int mlp_main(int argc, char **argv)
{
    struct mlp_opts o = {.hidden = 1024, .warmup = 10, .reps = 50,
                         .threads = wl_online_cpus(), .seed = 1};
    const struct wl_opt table[] = {
        WL_CHOICE("device", &o.device, device_names),
        WL_STRING("precision", &o.precisions),
        WL_STRING("batches", &o.batches),
        WL_INT("hidden", &o.hidden, 1, 65536),
        WL_INT("ff", &o.ff, 1, 262144),
        WL_INT("warmup", &o.warmup, 0, 100000),
        WL_INT("reps", &o.reps, 1, 1000000),
        WL_FLAG("graph", &o.graph),
        WL_INT("threads", &o.threads, 1, 1024),
        WL_U64("seed", &o.seed),
        WL_SIZE("max-memory", &o.max_memory),
    };
    int rc = opts_parse(WL, argc, argv, table, (int)(sizeof table / sizeof table[0]),
                        usage_text);
    if (rc)
        return rc > 0 ? 0 : 2;
    if (!o.ff)
        o.ff = 4 * o.hidden;
    struct sweep_args args = {.device = o.device, .precisions = o.precisions, .list = o.batches,
                              .max_memory = o.max_memory};
    return sweep_main(&mlp_parts, &args, &o);
}
