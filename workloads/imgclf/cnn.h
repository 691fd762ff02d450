/* cnn: the reference small CNN of imgclf, trained on the CPU (cnn_cpu.c: im2col + GEMM, through
 * cnn_gemm.h's AVX-512 kernels when the CPU has them, else OpenBLAS sgemm; plain C for the rest).
 *
 *   conv3x3(32, pad 1)-ReLU-maxpool2 - conv3x3(64, pad 1)-ReLU-maxpool2 - FC(128)-ReLU - FC(classes)
 *   softmax cross-entropy, SGD with momentum (PyTorch's form: v = mu*v + g; w -= lr*v),
 *   optional L2 weight decay added to g.
 *
 * The same model as bench/torch_model.py (PyTorch), for any input size H x W x C with H and W
 * divisible by 4. Images are NHWC float (n x H x W x C, row-major), already normalised.
 * Weights are initialised as PyTorch's defaults (kaiming-uniform, a = sqrt(5): U(-1/sqrt(fan_in),
 * 1/sqrt(fan_in)) for weights and biases) from the seed.
 *
 * Threads: the batch is split into micro-batches processed data-parallel by `threads` workers,
 * each with single-threaded BLAS and its own gradient buffer, then reduced; the result does not
 * depend on the thread count beyond float summation order. Not thread-safe on one struct cnn. */
#ifndef MLBENCH_WL_CNN_H
#define MLBENCH_WL_CNN_H

#include <stddef.h>
#include <stdint.h>

/* Passed to the CUDA backend (common/cuda_backend.h's cnn_create): changing it changes that
 * library's ABI, so bump CUDA_BACKEND_ABI with it. */
struct cnn_shape {
    int height, width, channels; /* input; height and width divisible by 4 */
    int classes;
};

struct cnn;

/* The model's fixed widths, and its dimensions and flat parameter layout for a shape: conv
 * weights as (9 * inputs) x outputs im2col GEMM operands, fc weights as inputs x outputs (fc1's
 * inputs in NHWC flatten order), each followed by its bias. Both backends (cnn_cpu.c and
 * cuda/cnn_cuda.cu) use it, so parameters move between them unchanged. Header-only: the CUDA
 * backend does not link the CPU one. */
#define CNN_C1 32  /* conv1 output channels */
#define CNN_C2 64  /* conv2 output channels */
#define CNN_F1 128 /* fc1 outputs */

struct cnn_layout {
    int h2, w2, h4, w4; /* after the first and second pool */
    int k1, k2;         /* im2col widths: 9 * channels, 9 * CNN_C1 */
    int d;              /* fc1 inputs: h4 * w4 * CNN_C2 */
    size_t off_w1, off_b1, off_w2, off_b2, off_w3, off_b3, off_w4, off_b4, nparam;
};

static inline struct cnn_layout cnn_layout_of(const struct cnn_shape *s)
{
    struct cnn_layout l;
    l.h2 = s->height / 2;
    l.w2 = s->width / 2;
    l.h4 = s->height / 4;
    l.w4 = s->width / 4;
    l.k1 = 9 * s->channels;
    l.k2 = 9 * CNN_C1;
    l.d = l.h4 * l.w4 * CNN_C2;
    l.off_w1 = 0;
    l.off_b1 = l.off_w1 + (size_t)l.k1 * CNN_C1;
    l.off_w2 = l.off_b1 + CNN_C1;
    l.off_b2 = l.off_w2 + (size_t)l.k2 * CNN_C2;
    l.off_w3 = l.off_b2 + CNN_C2;
    l.off_b3 = l.off_w3 + (size_t)l.d * CNN_F1;
    l.off_w4 = l.off_b3 + CNN_F1;
    l.off_b4 = l.off_w4 + (size_t)CNN_F1 * s->classes;
    l.nparam = l.off_b4 + (size_t)s->classes;
    return l;
}

/* Device bytes the CUDA backend's cnn_create allocates for max_batch images (the cudaMalloc
 * list of cuda/cnn_cuda.cu: parameters, gradients and velocity, and per image its input,
 * im2col matrices, activations, argmaxes and their gradients). Keep in step with that list. */
static inline double cnn_cuda_memory_bytes(const struct cnn_shape *s, int max_batch)
{
    const struct cnn_layout L = cnn_layout_of(s);
    const double f = sizeof(float), np1 = (double)s->height * s->width, np2 = (double)L.h2 * L.w2;
    const double image = np1 * s->channels * f + sizeof(int) + np1 * L.k1 * f + np1 * CNN_C1 * f +
                         np2 * CNN_C1 * (2 * f + 1) + np2 * L.k2 * f + np2 * CNN_C2 * f +
                         L.d * (2 * f + 1) + 2 * CNN_F1 * f + s->classes * f + sizeof(double) +
                         sizeof(int);
    return 3 * (double)L.nparam * f + max_batch * image;
}

/* A new model with seeded weights, using `threads` workers (>= 1). NULL with a message in err
 * when the shape is invalid (names the bad value), or with errno ENOMEM when its buffers could
 * not be allocated. */
struct cnn *cnn_create(const struct cnn_shape *shape, uint64_t seed, int threads, char *err,
                       size_t errlen);
void cnn_free(struct cnn *net);
/* The arithmetic of the GEMMs (convolutions and fully connected layers, forward and backward).
 * CNN_BF16 is mixed precision: every GEMM operand (im2col columns, weights, activations and
 * gradients feeding a GEMM) rounded to bf16, products summed in fp32, C in fp32; the master
 * weights, their SGD update, biases, ReLU, pooling, softmax, the loss and the reductions stay
 * fp32. No loss scaling: bf16 has fp32's 8 exponent bits, so small gradients do not underflow
 * (fp16's 5 bits flush gradients below 6e-8 to zero, which is why fp16 training scales the
 * loss); it gives up mantissa (8 bits against 24) instead. */
enum cnn_precision { CNN_FP32, CNN_BF16 };

/* Switches the model's GEMMs to precision p (CNN_FP32 at creation). 0, or -1 with a message in
 * err when this CPU cannot run it (CNN_BF16 needs AVX512_BF16: common/cpu.h), or with errno
 * ENOMEM when the bf16 copies of the weights could not be allocated. */
int cnn_set_precision(struct cnn *net, enum cnn_precision p, char *err, size_t errlen);
/* The GEMM kernel in use, for the result's metadata: "avx512_bf16" (vdpbf16ps), "avx512f" (our
 * fp32 kernels) or "openblas" (fp32 sgemm). */
const char *cnn_kernel(const struct cnn *net);

/* Bytes cnn_create (and cnn_set_precision for p) allocates for shape and threads: parameters,
 * gradients, velocity, each worker's scratch, the bf16 weights. It does not depend on the batch
 * (workers go through it in groups). */
double cnn_memory_bytes(const struct cnn_shape *shape, int threads, enum cnn_precision p);

/* Forward and backward on n images with labels in [0, classes): sets the gradient of the mean
 * cross-entropy loss (no weight decay) and returns that loss. Weights unchanged. NaN, with
 * nothing computed, when n <= 0 or a label is out of range. */
double cnn_loss_grad(struct cnn *net, const float *x, const int *labels, int n);
/* One training step: cnn_loss_grad, then the SGD-with-momentum update. Returns the loss (NaN
 * and no update for the inputs cnn_loss_grad refuses). */
double cnn_train_step(struct cnn *net, const float *x, const int *labels, int n, float lr,
                      float momentum, float weight_decay);
/* The SGD-with-momentum update of cnn_train_step from a gradient given: grad[0..nparam) times
 * scale (data-parallel training: the ranks' summed gradients over the global batch's size). */
void cnn_sgd_update(struct cnn *net, const float *grad, float scale, float lr, float momentum,
                    float weight_decay);
/* Writes the predicted class of each of the n images to out_class; returns the number whose
 * prediction equals labels[i] when labels is not NULL (else 0). */
int cnn_predict(struct cnn *net, const float *x, const int *labels, int n, int *out_class);
/* Inference: the class probabilities (the softmax of the logits) of each of the n images into
 * out_prob (n x classes, row-major; each row sums to 1 up to rounding), and, when out_class is
 * not NULL, the predicted class (the argmax, as cnn_predict). Returns 0; -1 with nothing
 * written when n <= 0. Training is not affected: the softmax is computed only here. */
int cnn_predict_proba(struct cnn *net, const float *x, int n, float *out_prob, int *out_class);
/* The shape the model was created with. */
struct cnn_shape cnn_shape_of(const struct cnn *net);

/* All parameters as one flat array (conv1 w, b, conv2 w, b, fc1 w, b, fc2 w, b) and their
 * gradients, same layout: for gradient checks and for saving. In bf16 the weights' bf16 copies
 * are made from these at the start of every call that computes, so writes through the pointer
 * are always seen. */
size_t cnn_param_count(const struct cnn *net);
float *cnn_params(struct cnn *net);
const float *cnn_grads(const struct cnn *net);

/* Multiply-add FLOPs (2 per multiply-add) of one image: forward only, and a training step
 * (forward + backward: input, weight gradients; the first layer's input gradient is skipped). */
double cnn_flops_forward(const struct cnn_shape *shape);
double cnn_flops_train(const struct cnn_shape *shape);

#endif
