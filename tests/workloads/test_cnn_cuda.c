/* Tests of the small CNN's CUDA backend (workloads/imgclf/cuda/cnn_cuda.cu, loaded through
 * common/cuda_backend.h) against the CPU backend (imgclf/cnn_cpu.c): from the same weights and
 * the same batches, 50 SGD-with-momentum steps give losses within 1e-3 relative at step 50,
 * parameters close block by block, and the same predictions; bad batches are refused with a
 * message and leave the model usable. Without the backend library or a GPU every test is
 * skipped, saying why.
 *
 * The library is found as mlbench-workload finds it ($MLBENCH_CUDA_BACKEND, else beside the
 * executable); a test binary lives in <build>/tests/workloads/, so when neither is set this
 * points $MLBENCH_CUDA_BACKEND at <build>/libmlbench_wl_cuda.so. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cuda_backend.h"
#include "common/rng.h"
#include "imgclf/cnn.h"

#define H 8
#define W 8
#define C 3
#define CLASSES 10
#define BATCH 16
#define BATCHES 4 /* a fixed set of BATCHES * BATCH images, cycled: the loss has to fall */
#define STEPS 50
#define LR 0.02f
#define MOMENTUM 0.9f
#define WEIGHT_DECAY 5e-4f

/* ---- helpers ---------------------------------------------------------------------------- */

/* Points $MLBENCH_CUDA_BACKEND at the build tree's library when it is unset and the library
 * is not beside this executable (tests/workloads/ is two levels below the build root). */
static void point_at_build_library(void)
{
    const char *env = getenv("MLBENCH_CUDA_BACKEND");
    if (env && *env)
        return;
    char *self = realpath("/proc/self/exe", NULL);
    if (!self)
        return;
    char path[4096];
    const char *dir = dirname(self);
    snprintf(path, sizeof path, "%s/libmlbench_wl_cuda.so", dir);
    if (access(path, F_OK) != 0) {
        snprintf(path, sizeof path, "%s/../../libmlbench_wl_cuda.so", dir);
        if (access(path, F_OK) == 0)
            setenv("MLBENCH_CUDA_BACKEND", path, 1);
    }
    free(self);
}

/* The backend when it loads and sees a GPU; else skips the calling test, saying why. */
static const struct cuda_backend *require_gpu(void)
{
    char err[512] = "", name[256] = "";
    int major = 0, minor = 0;
    point_at_build_library();
    const struct cuda_backend *b = cuda_backend_load(err, sizeof err);
    if (!b) {
        print_message("(no CUDA backend: %s; the CUDA CNN is not tested)\n", err);
        skip();
    }
    int n = b->devices(name, sizeof name, &major, &minor, err, sizeof err);
    if (n <= 0) {
        print_message("(no usable GPU: %s; the CUDA CNN is not tested)\n",
                      n < 0 ? err : "no CUDA device");
        skip();
    }
    print_message("(CUDA CNN on %s, compute capability %d.%d)\n", name, major, minor);
    return b;
}

static struct cnn *make_cpu_net(const struct cnn_shape *shape, uint64_t seed)
{
    char err[256] = "";
    struct cnn *net = cnn_create(shape, seed, 1, err, sizeof err);
    if (!net)
        print_error("cnn_create: %s\n", err);
    assert_non_null(net);
    return net;
}

static struct cuda_cnn *make_gpu_net(const struct cuda_backend *b, const struct cnn_shape *shape,
                                     const float *params, int max_batch)
{
    char err[512] = "";
    struct cuda_cnn *g = b->cnn_create(shape, params, max_batch, err, sizeof err);
    if (!g)
        print_error("cuda cnn_create: %s\n", err);
    assert_non_null(g);
    return g;
}

/* n random normal images and labels in [0, CLASSES). Caller frees both. */
static void random_batch(int n, uint64_t seed, float **x, int **labels)
{
    struct rng r;
    rng_seed(&r, seed);
    size_t size = (size_t)n * H * W * C;
    *x = malloc(size * sizeof **x);
    *labels = malloc((size_t)n * sizeof **labels);
    assert_non_null(*x);
    assert_non_null(*labels);
    for (size_t i = 0; i < size; i++)
        (*x)[i] = (float)rng_normal(&r);
    for (int i = 0; i < n; i++)
        (*labels)[i] = (int)rng_below(&r, CLASSES);
}

/* ---- tests -------------------------------------------------------------------------------- */

/* The requirement: the same training run on both backends. */
static void test_matches_cpu(void **state)
{
    (void)state;
    const struct cuda_backend *b = require_gpu();
    const struct cnn_shape shape = {H, W, C, CLASSES};
    struct cnn *cpu = make_cpu_net(&shape, 42);
    const size_t np = cnn_param_count(cpu);
    struct cuda_cnn *gpu = make_gpu_net(b, &shape, cnn_params(cpu), BATCH);
    float *x;
    int *labels;
    random_batch(BATCHES * BATCH, 7, &x, &labels);

    double first_cpu = 0, loss_cpu = 0, loss_gpu = 0, worst = 0;
    int worst_step = 0;
    for (int step = 1; step <= STEPS; step++) {
        const size_t at = (size_t)((step - 1) % BATCHES) * BATCH;
        loss_cpu = cnn_train_step(cpu, x + at * H * W * C, labels + at, BATCH, LR, MOMENTUM,
                                  WEIGHT_DECAY);
        loss_gpu = b->cnn_train_step(gpu, x + at * H * W * C, labels + at, BATCH, LR, MOMENTUM,
                                     WEIGHT_DECAY);
        if (isnan(loss_gpu))
            fail_msg("step %d: CUDA train_step failed: %s", step, b->cnn_error(gpu));
        assert_false(isnan(loss_cpu));
        const double rel = fabs(loss_gpu - loss_cpu) / fabs(loss_cpu);
        if (rel > worst) {
            worst = rel;
            worst_step = step;
        }
        if (step == 1) {
            first_cpu = loss_cpu;
            /* Identical weights: only the forward's summation order differs. */
            if (!(rel <= 1e-4))
                fail_msg("step 1 (same weights): loss CPU %.9g, CUDA %.9g, relative %.3g > "
                         "1e-4: the forward differs", loss_cpu, loss_gpu, rel);
        }
    }
    print_message("(loss step 1 %.6f, step %d CPU %.6f CUDA %.6f; largest relative difference "
                  "%.3g at step %d)\n", first_cpu, STEPS, loss_cpu, loss_gpu, worst, worst_step);
    if (!(fabs(loss_gpu - loss_cpu) <= 1e-3 * fabs(loss_cpu)))
        fail_msg("step %d: loss CPU %.9g, CUDA %.9g: relative difference %.3g > 1e-3", STEPS,
                 loss_cpu, loss_gpu, fabs(loss_gpu - loss_cpu) / fabs(loss_cpu));
    /* The run has to have trained, or the comparison says little. */
    assert_true(loss_cpu < first_cpu);

    /* Parameters, block by block (cnn.h's layout): relative L2 distance. */
    float *pg = malloc(np * sizeof *pg);
    assert_non_null(pg);
    if (b->cnn_get_params(gpu, pg) != 0)
        fail_msg("CUDA get_params: %s", b->cnn_error(gpu));
    const float *pc = cnn_params(cpu);
    const size_t counts[8] = {(size_t)9 * C * 32, 32, (size_t)9 * 32 * 64, 64,
                              (size_t)64 * (H / 4) * (W / 4) * 128, 128, (size_t)128 * CLASSES,
                              CLASSES};
    static const char *const names[8] = {"conv1.w", "conv1.b", "conv2.w", "conv2.b",
                                         "fc1.w",   "fc1.b",   "fc2.w",   "fc2.b"};
    size_t off = 0;
    for (int k = 0; k < 8; k++) {
        double diff = 0, norm = 0;
        for (size_t i = off; i < off + counts[k]; i++) {
            diff += ((double)pg[i] - pc[i]) * ((double)pg[i] - pc[i]);
            norm += (double)pc[i] * pc[i];
        }
        const double rel = sqrt(diff / norm);
        print_message("(%s: relative L2 distance %.3g)\n", names[k], rel);
        if (!(rel <= 1e-3))
            fail_msg("after %d steps, %s differs: relative L2 distance %.3g > 1e-3", STEPS,
                     names[k], rel);
        off += counts[k];
    }
    assert_int_equal(off, np);

    /* Predictions on all the images (more than max_batch: the CUDA side chunks). A logit tie
     * within float noise may flip a class: allow 2 of 64. */
    const int n = BATCHES * BATCH;
    int *cls_cpu = malloc((size_t)n * sizeof *cls_cpu), *cls_gpu = malloc((size_t)n * sizeof *cls_gpu);
    assert_non_null(cls_cpu);
    assert_non_null(cls_gpu);
    const int right_cpu = cnn_predict(cpu, x, labels, n, cls_cpu);
    const int right_gpu = b->cnn_predict(gpu, x, labels, n, cls_gpu);
    if (right_gpu < 0)
        fail_msg("CUDA predict: %s", b->cnn_error(gpu));
    int differ = 0, right_check = 0;
    for (int i = 0; i < n; i++) {
        differ += cls_cpu[i] != cls_gpu[i];
        right_check += cls_gpu[i] == labels[i];
    }
    print_message("(predict: %d of %d right on the CPU, %d on CUDA; %d differ)\n", right_cpu, n,
                  right_gpu, differ);
    assert_int_equal(right_gpu, right_check);
    assert_true(differ <= 2);

    free(cls_cpu);
    free(cls_gpu);
    free(pg);
    free(x);
    free(labels);
    b->cnn_free(gpu);
    cnn_free(cpu);
}

/* Bad batches are refused with a message naming the value, and the model still trains. */
static void test_rejects_bad_batches(void **state)
{
    (void)state;
    const struct cuda_backend *b = require_gpu();
    const struct cnn_shape shape = {H, W, C, CLASSES};
    struct cnn *cpu = make_cpu_net(&shape, 3);
    struct cuda_cnn *gpu = make_gpu_net(b, &shape, cnn_params(cpu), BATCH);
    float *x;
    int *labels;
    random_batch(BATCH + 1, 11, &x, &labels);

    assert_true(isnan(b->cnn_train_step(gpu, x, labels, BATCH + 1, LR, MOMENTUM, 0.0f)));
    print_message("(too big a batch: %s)\n", b->cnn_error(gpu));
    assert_non_null(strstr(b->cnn_error(gpu), "17"));
    assert_true(isnan(b->cnn_train_step(gpu, x, labels, 0, LR, MOMENTUM, 0.0f)));

    labels[3] = CLASSES;
    assert_true(isnan(b->cnn_train_step(gpu, x, labels, BATCH, LR, MOMENTUM, 0.0f)));
    print_message("(bad label: %s)\n", b->cnn_error(gpu));
    assert_non_null(strstr(b->cnn_error(gpu), "label 10"));
    labels[3] = 0;

    const double loss = b->cnn_train_step(gpu, x, labels, BATCH, LR, MOMENTUM, 0.0f);
    if (isnan(loss))
        fail_msg("a good batch after refused ones: %s", b->cnn_error(gpu));

    char err[512] = "";
    const struct cnn_shape odd = {6, 8, 3, CLASSES};
    assert_null(b->cnn_create(&odd, cnn_params(cpu), BATCH, err, sizeof err));
    assert_non_null(strstr(err, "6 x 8"));
    assert_null(b->cnn_create(&shape, cnn_params(cpu), 0, err, sizeof err));
    assert_non_null(strstr(err, "max_batch 0"));

    free(x);
    free(labels);
    b->cnn_free(gpu);
    cnn_free(cpu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matches_cpu),
        cmocka_unit_test(test_rejects_bad_batches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
