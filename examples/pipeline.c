/* example-pipeline: a small, real ML workflow in plain C, marked with the mlbench marker API.
 *
 * Four stages: `load` generates a synthetic 10-class data set (Gaussian clusters, 64 features
 * on very different scales), writes it to a temporary file and reads it back; `preprocess`
 * standardises the features with the training split's mean and deviation; `train` fits a
 * softmax regression by mini-batch SGD; `evaluate` measures accuracy on the held-out split.
 * Deterministic for a given --seed. Counters: `samples` (training samples) and `loss` per
 * epoch, `eval_samples` and `accuracy` at the end. This is what `make run` benchmarks.
 *
 * Usage: example-pipeline [--epochs N] [--seed N]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mlbench/marker.h"

#define N_TRAIN 60000
#define N_TEST 10000
#define N_FEATURES 64
#define N_CLASSES 10
#define BATCH_SIZE 32
#define LEARNING_RATE 0.05f
#define MAX_EPOCHS 1000

struct dataset {
    float *x;   /* n * N_FEATURES, row-major */
    uint8_t *y; /* n labels in [0, N_CLASSES) */
    size_t n;
};

static void *xcalloc(size_t count, size_t size)
{
    void *p = calloc(count, size);
    if (p == NULL) {
        fprintf(stderr, "example-pipeline: out of memory (%zu x %zu bytes)\n", count, size);
        exit(1);
    }
    return p;
}

/* splitmix64: a small, well-mixed deterministic generator. */
static uint64_t rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* Uniform in (0, 1). */
static double rng_uniform(uint64_t *state)
{
    return ((double)(rng_next(state) >> 11) + 0.5) / 9007199254740992.0;
}

/* Standard normal (Box-Muller; one of the pair is dropped to keep the code short). */
static double rng_gauss(uint64_t *state)
{
    double u = rng_uniform(state), v = rng_uniform(state);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* Fills train and test with samples of the same Gaussian clusters. Feature j is scaled by
 * 1..7 and shifted, so that standardisation matters to SGD. */
static void generate(struct dataset *train, struct dataset *test, uint64_t seed)
{
    uint64_t rng = seed;
    static float centre[N_CLASSES][N_FEATURES];
    for (int k = 0; k < N_CLASSES; k++)
        for (int j = 0; j < N_FEATURES; j++)
            centre[k][j] = (float)(0.35 * rng_gauss(&rng));
    struct dataset *sets[2] = {train, test};
    for (int s = 0; s < 2; s++) {
        for (size_t i = 0; i < sets[s]->n; i++) {
            int k = (int)(rng_next(&rng) % N_CLASSES);
            sets[s]->y[i] = (uint8_t)k;
            float *row = sets[s]->x + i * N_FEATURES;
            for (int j = 0; j < N_FEATURES; j++) {
                double v = centre[k][j] + rng_gauss(&rng);
                row[j] = (float)(v * (1 + j % 7) + 10.0 * (j % 5));
            }
        }
    }
}

static void write_all(FILE *f, const void *p, size_t size, const char *path)
{
    if (fwrite(p, 1, size, f) != size) {
        fprintf(stderr, "example-pipeline: cannot write %s: %s\n", path, strerror(errno));
        exit(1);
    }
}

static void read_all(FILE *f, void *p, size_t size, const char *path)
{
    if (fread(p, 1, size, f) != size) {
        fprintf(stderr, "example-pipeline: cannot read %s: %s\n", path,
                ferror(f) ? strerror(errno) : "file too short");
        exit(1);
    }
}

/* Stage `load`: generate the data set, store it in a temporary file, read it back. */
static void load(struct dataset *train, struct dataset *test, uint64_t seed)
{
    struct dataset gen_train = {xcalloc(N_TRAIN * N_FEATURES, sizeof(float)),
                                xcalloc(N_TRAIN, 1), N_TRAIN};
    struct dataset gen_test = {xcalloc(N_TEST * N_FEATURES, sizeof(float)),
                               xcalloc(N_TEST, 1), N_TEST};
    generate(&gen_train, &gen_test, seed);

    const char *tmpdir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/mlbench-example-XXXXXX",
             tmpdir != NULL && tmpdir[0] != '\0' ? tmpdir : "/tmp");
    int fd = mkstemp(path);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w+b");
    if (f == NULL) {
        fprintf(stderr, "example-pipeline: cannot create a temporary file %s: %s\n", path,
                strerror(errno));
        exit(1);
    }
    unlink(path); /* gone when closed, whatever happens */
    const struct dataset *out[2] = {&gen_train, &gen_test};
    for (int s = 0; s < 2; s++) {
        write_all(f, out[s]->x, out[s]->n * N_FEATURES * sizeof(float), path);
        write_all(f, out[s]->y, out[s]->n, path);
    }
    free(gen_train.x);
    free(gen_train.y);
    free(gen_test.x);
    free(gen_test.y);

    rewind(f);
    struct dataset *in[2] = {train, test};
    for (int s = 0; s < 2; s++) {
        read_all(f, in[s]->x, in[s]->n * N_FEATURES * sizeof(float), path);
        read_all(f, in[s]->y, in[s]->n, path);
    }
    fclose(f);
}

/* Stage `preprocess`: standardise every feature with the training split's statistics. */
static void preprocess(struct dataset *train, struct dataset *test)
{
    double mean[N_FEATURES] = {0}, var[N_FEATURES] = {0};
    for (size_t i = 0; i < train->n; i++)
        for (int j = 0; j < N_FEATURES; j++)
            mean[j] += train->x[i * N_FEATURES + j];
    for (int j = 0; j < N_FEATURES; j++)
        mean[j] /= (double)train->n;
    for (size_t i = 0; i < train->n; i++)
        for (int j = 0; j < N_FEATURES; j++) {
            double d = train->x[i * N_FEATURES + j] - mean[j];
            var[j] += d * d;
        }
    float scale[N_FEATURES], shift[N_FEATURES];
    for (int j = 0; j < N_FEATURES; j++) {
        double sd = sqrt(var[j] / (double)train->n);
        scale[j] = (float)(sd > 0 ? 1.0 / sd : 1.0);
        shift[j] = (float)mean[j];
    }
    struct dataset *sets[2] = {train, test};
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < sets[s]->n; i++)
            for (int j = 0; j < N_FEATURES; j++) {
                float *v = &sets[s]->x[i * N_FEATURES + j];
                *v = (*v - shift[j]) * scale[j];
            }
}

struct model {
    float w[N_CLASSES][N_FEATURES];
    float b[N_CLASSES];
};

/* Class probabilities of one sample; returns the index of the largest. */
static int predict(const struct model *m, const float *x, float prob[N_CLASSES])
{
    float max = -INFINITY;
    int best = 0;
    for (int k = 0; k < N_CLASSES; k++) {
        float z = m->b[k];
        for (int j = 0; j < N_FEATURES; j++)
            z += m->w[k][j] * x[j];
        prob[k] = z;
        if (z > max) {
            max = z;
            best = k;
        }
    }
    float sum = 0;
    for (int k = 0; k < N_CLASSES; k++) {
        prob[k] = expf(prob[k] - max);
        sum += prob[k];
    }
    for (int k = 0; k < N_CLASSES; k++)
        prob[k] /= sum;
    return best;
}

/* Stage `train`: softmax regression, mini-batch SGD on a shuffled order each epoch. */
static void train_model(struct model *m, const struct dataset *train, int epochs, uint64_t seed)
{
    size_t *order = xcalloc(train->n, sizeof *order);
    for (size_t i = 0; i < train->n; i++)
        order[i] = i;
    uint64_t rng = seed ^ 0x5eed5eed5eed5eedu;
    memset(m, 0, sizeof *m);

    for (int epoch = 1; epoch <= epochs; epoch++) {
        for (size_t i = train->n - 1; i > 0; i--) {
            size_t r = (size_t)(rng_next(&rng) % (i + 1));
            size_t t = order[i];
            order[i] = order[r];
            order[r] = t;
        }
        double loss = 0;
        for (size_t start = 0; start < train->n; start += BATCH_SIZE) {
            size_t end = start + BATCH_SIZE < train->n ? start + BATCH_SIZE : train->n;
            struct model grad;
            memset(&grad, 0, sizeof grad);
            for (size_t s = start; s < end; s++) {
                const float *x = train->x + order[s] * N_FEATURES;
                int y = train->y[order[s]];
                float prob[N_CLASSES];
                predict(m, x, prob);
                loss -= log(prob[y] > 1e-30f ? prob[y] : 1e-30f);
                for (int k = 0; k < N_CLASSES; k++) {
                    float err = prob[k] - (k == y ? 1.0f : 0.0f);
                    grad.b[k] += err;
                    for (int j = 0; j < N_FEATURES; j++)
                        grad.w[k][j] += err * x[j];
                }
            }
            float step = LEARNING_RATE / (float)(end - start);
            for (int k = 0; k < N_CLASSES; k++) {
                m->b[k] -= step * grad.b[k];
                for (int j = 0; j < N_FEATURES; j++)
                    m->w[k][j] -= step * grad.w[k][j];
            }
        }
        loss /= (double)train->n;
        mlb_counter("samples", (double)train->n);
        mlb_counter("loss", loss);
        printf("epoch %d loss %.4f\n", epoch, loss);
    }
    free(order);
}

/* Stage `evaluate`: accuracy on the held-out split. */
static double evaluate(const struct model *m, const struct dataset *test)
{
    size_t correct = 0;
    for (size_t i = 0; i < test->n; i++) {
        float prob[N_CLASSES];
        correct += predict(m, test->x + i * N_FEATURES, prob) == test->y[i];
    }
    mlb_counter("eval_samples", (double)test->n);
    return (double)correct / (double)test->n;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: example-pipeline [--epochs N] [--seed N]\n"
                 "  --epochs N  training epochs, 1..%d (default 10)\n"
                 "  --seed N    seed of the synthetic data and the shuffling (default 42)\n",
            MAX_EPOCHS);
}

/* Parses a decimal integer in [min, max]; on error names the option and value, exits 2. */
static unsigned long long parse_option(const char *option, const char *text,
                                       unsigned long long min, unsigned long long max)
{
    if (text == NULL) {
        fprintf(stderr, "example-pipeline: %s needs a value\n", option);
        usage(stderr);
        exit(2);
    }
    unsigned long long v = 0;
    int ok = text[0] >= '0' && text[0] <= '9'; /* strtoull would accept "-1" and " 1" */
    if (ok) {
        char *end;
        errno = 0;
        v = strtoull(text, &end, 10);
        ok = *end == '\0' && errno == 0 && v >= min && v <= max;
    }
    if (!ok) {
        fprintf(stderr, "example-pipeline: invalid %s value '%s': expected an integer from %llu "
                        "to %llu\n", option, text, min, max);
        usage(stderr);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    int epochs = 10;
    uint64_t seed = 42;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--epochs") == 0) {
            epochs = (int)parse_option("--epochs", argv[i + 1], 1, MAX_EPOCHS);
            i++;
        } else if (strcmp(argv[i], "--seed") == 0) {
            seed = parse_option("--seed", argv[i + 1], 0, UINT64_MAX);
            i++;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "example-pipeline: unknown argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }

    char text[32];
    mlb_meta("model", "softmax_regression");
    mlb_meta("device", "cpu");
    mlb_meta("dataset", "synthetic_gaussian_10x64");
    snprintf(text, sizeof text, "%d", BATCH_SIZE);
    mlb_meta("batch_size", text);
    snprintf(text, sizeof text, "%d", N_TRAIN);
    mlb_meta("train_samples", text);
    snprintf(text, sizeof text, "%d", N_TEST);
    mlb_meta("test_samples", text);
    snprintf(text, sizeof text, "%d", epochs);
    mlb_meta("epochs", text);
    snprintf(text, sizeof text, "%llu", (unsigned long long)seed);
    mlb_meta("seed", text);

    struct dataset train = {xcalloc(N_TRAIN * N_FEATURES, sizeof(float)), xcalloc(N_TRAIN, 1),
                            N_TRAIN};
    struct dataset test = {xcalloc(N_TEST * N_FEATURES, sizeof(float)), xcalloc(N_TEST, 1),
                           N_TEST};
    static struct model model;

    mlb_stage_begin("load");
    load(&train, &test, seed);
    mlb_stage_end("load");

    mlb_stage_begin("preprocess");
    preprocess(&train, &test);
    mlb_stage_end("preprocess");

    mlb_stage_begin("train");
    train_model(&model, &train, epochs, seed);
    mlb_stage_end("train");

    mlb_stage_begin("evaluate");
    double accuracy = evaluate(&model, &test);
    mlb_counter("accuracy", accuracy);
    mlb_stage_end("evaluate");

    printf("accuracy %.4f\n", accuracy);
    free(train.x);
    free(train.y);
    free(test.x);
    free(test.y);
    return 0;
}
