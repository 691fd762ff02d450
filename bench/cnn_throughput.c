/* cnn-throughput: training throughput of the reference small CNN's CPU backend (workloads/imgclf/
 * cnn_cpu.c). Trains on one seeded batch of random normal images (the data do not change the
 * work): --warmup steps, then 5 timed repetitions of --steps steps; prints one JSON line with
 * the median images_per_s, step_ms and achieved gflops (cnn_flops_train: GEMM FLOPs only).
 * With --forward, the steps are inference (cnn_predict_proba, what the reference server runs
 * per batch) and gflops counts cnn_flops_forward (bench/serve-throughput.sh).
 * bench/cnn_peer.py measures PyTorch the same way; bench/cnn-vs-torch.sh runs both.
 * Usage: cnn-throughput [--height 32] [--width 32] [--channels 3] [--classes 10] [--batch 32]
 *                       [--threads 1] [--steps 20] [--warmup 3] [--seed 1] [--precision fp32|bf16]
 *                       [--forward]
 * (bf16: exit 2 on a CPU without AVX512_BF16). */
#include "common/rng.h"
#include "imgclf/cnn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPS 5

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

/* One training step (its loss), or with forward one inference of the batch (0). */
static double step(struct cnn *net, const float *x, const int *labels, float *prob, int batch,
                   int forward)
{
    if (forward) {
        cnn_predict_proba(net, x, batch, prob, NULL);
        return 0;
    }
    return cnn_train_step(net, x, labels, batch, 0.01f, 0.9f, 0.0f);
}

struct option_int {
    const char *name;
    long min, max;
    long *value;
};

/* Parses "--name value" pairs into the table, --precision and --forward; 0, or 2 after a
 * message. */
static int parse(int argc, char **argv, const struct option_int *opts, int nopts, int *bf16,
                 int *forward)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--forward") == 0) {
            *forward = 1;
            continue;
        }
        if (strcmp(argv[i], "--precision") == 0 && i + 1 < argc) {
            *bf16 = strcmp(argv[++i], "bf16") == 0;
            if (!*bf16 && strcmp(argv[i], "fp32") != 0) {
                fprintf(stderr, "cnn-throughput: --precision '%s' must be fp32 or bf16\n",
                        argv[i]);
                return 2;
            }
            continue;
        }
        const struct option_int *o = NULL;
        for (int k = 0; k < nopts; k++)
            if (strncmp(argv[i], "--", 2) == 0 && strcmp(argv[i] + 2, opts[k].name) == 0)
                o = &opts[k];
        if (!o) {
            fprintf(stderr, "cnn-throughput: unknown option '%s' (see the header of "
                            "bench/cnn_throughput.c)\n", argv[i]);
            return 2;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "cnn-throughput: --%s needs a value\n", o->name);
            return 2;
        }
        char *end;
        errno = 0;
        long v = strtol(argv[++i], &end, 10);
        if (errno || *end || end == argv[i] || v < o->min || v > o->max) {
            fprintf(stderr, "cnn-throughput: --%s '%s' must be an integer from %ld to %ld\n",
                    o->name, argv[i], o->min, o->max);
            return 2;
        }
        *o->value = v;
    }
    return 0;
}

int main(int argc, char **argv)
{
    long height = 32, width = 32, channels = 3, classes = 10, batch = 32, threads = 1, steps = 20,
         warmup = 3, seed = 1;
    const struct option_int opts[] = {
        {"height", 4, 4096, &height},   {"width", 4, 4096, &width},
        {"channels", 1, 1024, &channels}, {"classes", 2, 100000, &classes},
        {"batch", 1, 1 << 20, &batch},  {"threads", 1, 1024, &threads},
        {"steps", 1, 1 << 20, &steps},  {"warmup", 0, 1 << 20, &warmup},
        {"seed", 0, 1L << 30, &seed},
    };
    int bf16 = 0, forward = 0;
    int rc = parse(argc, argv, opts, (int)(sizeof opts / sizeof opts[0]), &bf16, &forward);
    if (rc)
        return rc;

    struct cnn_shape shape = {(int)height, (int)width, (int)channels, (int)classes};
    char err[256];
    struct cnn *net = cnn_create(&shape, (uint64_t)seed, (int)threads, err, sizeof err);
    if (!net) {
        fprintf(stderr, "cnn-throughput: %s\n", err);
        return 2;
    }
    if (cnn_set_precision(net, bf16 ? CNN_BF16 : CNN_FP32, err, sizeof err)) {
        fprintf(stderr, "cnn-throughput: --precision bf16: %s\n", err);
        cnn_free(net);
        return 2;
    }
    size_t in_size = (size_t)height * width * channels;
    float *x = malloc((size_t)batch * in_size * sizeof *x);
    int *labels = malloc((size_t)batch * sizeof *labels);
    float *prob = malloc((size_t)batch * (size_t)classes * sizeof *prob);
    if (!x || !labels || !prob) {
        fprintf(stderr, "cnn-throughput: out of memory for a batch of %ld images\n", batch);
        free(x);
        free(labels);
        free(prob);
        cnn_free(net);
        return 1;
    }
    struct rng r;
    rng_seed(&r, rng_derive((uint64_t)seed, 1));
    for (size_t i = 0; i < (size_t)batch * in_size; i++)
        x[i] = (float)rng_normal(&r);
    for (long i = 0; i < batch; i++)
        labels[i] = (int)rng_below(&r, (uint32_t)classes);

    double loss = 0;
    for (long s = 0; s < warmup; s++)
        loss = step(net, x, labels, prob, (int)batch, forward);
    double rep_s[REPS];
    for (int k = 0; k < REPS; k++) {
        double t = now_s();
        for (long s = 0; s < steps; s++)
            loss = step(net, x, labels, prob, (int)batch, forward);
        rep_s[k] = now_s() - t;
    }
    qsort(rep_s, REPS, sizeof rep_s[0], cmp_double);
    double med = rep_s[REPS / 2];
    double step_s = med / (double)steps;
    double flops = (forward ? cnn_flops_forward(&shape) : cnn_flops_train(&shape)) * (double)batch;
    printf("{\"bench\": \"%s\", \"impl\": \"mlbench\", \"height\": %ld, \"width\": %ld, "
           "\"channels\": %ld, \"classes\": %ld, \"batch\": %ld, \"threads\": %ld, "
           "\"precision\": \"%s\", \"kernel\": \"%s\", "
           "\"steps\": %ld, \"warmup\": %ld, \"reps\": %d, \"images_per_s\": %.1f, "
           "\"step_ms\": %.3f, \"gflops\": %.2f, \"min_step_ms\": %.3f, \"max_step_ms\": %.3f, "
           "\"last_loss\": %.5f}\n",
           forward ? "cnn_forward" : "cnn_train", height, width, channels, classes, batch,
           threads, bf16 ? "bf16" : "fp32",
           cnn_kernel(net), steps, warmup, REPS,
           (double)batch / step_s, 1e3 * step_s, flops / step_s * 1e-9,
           1e3 * rep_s[0] / (double)steps, 1e3 * rep_s[REPS - 1] / (double)steps, loss);
    free(x);
    free(labels);
    free(prob);
    cnn_free(net);
    return 0;
}
