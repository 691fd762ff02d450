/* cuda_backend: the optional CUDA backend of the workloads. It is a shared library,
 * libmlbench_wl_cuda.so, built only when CMake finds the CUDA toolkit (workloads/<name>/cuda/), and
 * loaded at run time by `--device cuda`, so that mlbench-workload itself never links CUDA and
 * runs on any machine. The library exports one function, mlbench_cuda_backend(), returning the
 * table below; the ABI number must match. */
#ifndef MLBENCH_WL_CUDA_BACKEND_H
#define MLBENCH_WL_CUDA_BACKEND_H

#include <stddef.h>
#include <stdint.h>

/* The ABI number covers the table's layout and the structs passed through it. struct
 * cnn_shape is imgclf's (imgclf/cnn.h): the table only points to it, so common does not include
 * a workload; the CNN's callers and imgclf/cuda/cnn_cuda.cu include cnn.h. Changing that struct
 * changes this ABI too. */
struct cnn_shape;

#define CUDA_BACKEND_ABI 4
#define CUDA_BACKEND_SYMBOL "mlbench_cuda_backend"

/* Precisions of the GEMM benchmark: inputs, output and accumulation (all accumulate in fp32). */
enum gemm_precision { GEMM_FP32, GEMM_TF32, GEMM_FP16, GEMM_BF16, GEMM_PRECISIONS };

struct gemm_request {
    enum gemm_precision precision;
    int m, n, k;        /* C[m x n] = A[m x k] B[k x n], row-major */
    int warmup, reps;   /* untimed, then timed repetitions */
    uint64_t seed;      /* of the inputs, uniform in [-1, 1) */
};

struct gemm_timing {
    double median_s, min_s, max_s; /* per product: device time between CUDA events */
};

/* An MLP block, y = GELU(x W1 + b1) W2 + b2 (erf GELU), x: batch x hidden, W1: hidden x ff,
 * W2: ff x hidden, row-major; activations and weights in the precision, accumulation in fp32. */
struct mlp_request {
    enum gemm_precision precision;
    int batch, hidden, ff;
    int warmup, reps;
    int graph;        /* capture the block's kernels in a CUDA graph and replay it */
    uint64_t seed;
};

/* The logistic-regression objective of logreg (logreg/logloss.h: scikit-learn's, sum of
 * log-losses + 0.5 / C ||w||^2, unpenalised intercept) with X (fp32) and y resident on the GPU. */
struct cuda_logreg;

/* imgclf's small CNN (imgclf/cnn.h) trained in fp32 on the GPU: the CPU backend's model, flat
 * parameter layout and math (imgclf/cuda/cnn_cuda.cu), for checks against it and for timing. */
struct cuda_cnn;

struct cuda_backend {
    int abi; /* CUDA_BACKEND_ABI */
    /* Number of usable CUDA devices (0: none) and device 0's name and compute capability.
     * -1 with a message when the driver or runtime fails. */
    int (*devices)(char *name, size_t name_len, int *cc_major, int *cc_minor, char *err,
                   size_t errlen);
    /* With a, b and c NULL: times rq on device 0 (cuBLAS; inputs generated on the device from
     * rq->seed) and fills *out. With a, b (row-major float, m x k and k x n, rounded to the
     * precision on the device) and c (m x n): computes the product once into c, for the
     * caller's correctness check; out may be NULL. 0, or -1 with a message naming the CUDA
     * call and its error (out of memory included). */
    int (*gemm)(const struct gemm_request *rq, const float *a, const float *b, float *c,
                struct gemm_timing *out, char *err, size_t errlen);
    /* The same for an MLP block: with w (the inputs: x, w1, b1, w2, b2 as floats) and y given,
     * computes y once for the caller's check; else times rq (inputs generated on the device;
     * per forward, between CUDA events). */
    int (*mlp)(const struct mlp_request *rq, const float *const w[5], float *y,
               struct gemm_timing *out, char *err, size_t errlen);
    /* Uploads X (n x d, row-major) and y (0 or 1) to device 0; NULL with a message (out of GPU
     * memory included). */
    struct cuda_logreg *(*logreg_create)(const float *X, const float *y, long n, long d,
                                         double C, char *err, size_t errlen);
    /* f at wb (d + 1: w, then b) and its gradient into grad: one pass over X on the GPU, sums
     * in double; only wb, the gradient and f cross the bus. NaN on a CUDA error
     * (logreg_error says which). */
    double (*logreg_eval)(struct cuda_logreg *g, const double *wb, double *grad);
    const char *(*logreg_error)(const struct cuda_logreg *g);
    void (*logreg_free)(struct cuda_logreg *g);
    /* A CNN of the shape on device 0 starting from params (cnn_param_count floats of a CPU net
     * of the same shape, cnn_params' layout; copied), with zero momentum and buffers for
     * batches of up to max_batch images. NULL with a message (bad shape or max_batch, out of
     * GPU memory, a CUDA call that failed). One struct is for one thread at a time. */
    struct cuda_cnn *(*cnn_create)(const struct cnn_shape *shape, const float *params,
                                   int max_batch, char *err, size_t errlen);
    /* cnn_train_step on n (1..max_batch) NHWC images x and labels in [0, classes), both on the
     * host: the mean cross-entropy before the update, then one SGD-with-momentum step. NaN,
     * nothing changed, for a bad n or label; NaN on a CUDA error. cnn_error says which. */
    double (*cnn_train_step)(struct cuda_cnn *g, const float *x, const int *labels, int n,
                             float lr, float momentum, float weight_decay);
    /* cnn_predict: the class of each of the n images (any n: in chunks of max_batch) into
     * out_class; the number equal to labels[i] when labels is not NULL (else 0). -1 on a CUDA
     * error (cnn_error). */
    int (*cnn_predict)(struct cuda_cnn *g, const float *x, const int *labels, int n,
                       int *out_class);
    /* Copies the current parameters (cnn_params' layout) into params: 0, or -1 (cnn_error). */
    int (*cnn_get_params)(struct cuda_cnn *g, float *params);
    /* The last error's message; after a failed CUDA call, the first such failure's, and every
     * later call fails. */
    const char *(*cnn_error)(const struct cuda_cnn *g);
    void (*cnn_free)(struct cuda_cnn *g);
};

/* Loads the backend: $MLBENCH_CUDA_BACKEND, else libmlbench_wl_cuda.so beside the running
 * executable. NULL with a message saying why (not built, cannot load, ABI mismatch). The
 * library stays loaded. */
const struct cuda_backend *cuda_backend_load(char *err, size_t errlen);

#endif
