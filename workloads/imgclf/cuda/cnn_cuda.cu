// cnn_cuda: the fp32 CUDA training backend of imgclf's small CNN (imgclf/cnn.h), the same model
// and math as the CPU backend (imgclf/cnn_cpu.c), so that the two can be checked step for step
// (common/cuda_backend.h: cnn_create ... cnn_free).
//
// Layouts are the CPU's, unchanged: NHWC activations; one flat parameter array (conv1 w, b,
// conv2 w, b, fc1 w, b, fc2 w, b) with conv weights as (9*cin) x cout im2col GEMM operands and
// fc weights as in x out, fc1's inputs in NHWC flatten order. A step on n <= max_batch images:
//   forward:  im2col3x3 -> cuBLAS (conv1) -> bias_relu_pool -> im2col3x3 -> cuBLAS (conv2) ->
//             bias_relu_pool -> cuBLAS (fc1) -> bias_relu -> cuBLAS (fc2) -> bias_add
//   loss:     softmax_xent, one thread per image: its loss, and dlogits / n in place
//   backward: as cnn_layers.c's cnn_fc_backward and cnn_conv_backward, for the whole batch (no
//             micro-batches: GPU memory holds every activation): weight gradients and input
//             gradients by cuBLAS, bias gradients by column_sums, pool_backward to the argmax
//             where the pooled output was positive, col2im3x3; no input gradient for conv1
//   update:   sgd_momentum over the flat arrays (PyTorch's SGD: g += wd*w; v = mu*v + g;
//             w -= lr*v), as cnn_cpu.c's job_reduce.
// Everything runs on the struct's one stream and cuBLAS handle; a call synchronises once, when
// it copies its results back. The reductions (bias gradients, the loss on the host) have a fixed
// order, so a step is deterministic for a given GPU and cuBLAS.
#include "common/cuda/cuda_check.cuh"
#include "imgclf/cnn.h"

#include <climits>
#include <cmath>
#include <cstdlib>

#define C1 CNN_C1
#define C2 CNN_C2
#define F1 CNN_F1
#define THREADS 256

struct cuda_cnn {
    struct cnn_shape s;
    int max_batch;
    struct cnn_layout L; // cnn_cpu.c's dimensions and parameter layout
    cudaStream_t stream;
    cublasHandle_t blas;
    float *param, *grad, *vel; // nparam each
    // Per-batch buffers, sized for max_batch images.
    float *x;           // input, n x H x W x C
    int *labels;        // n
    float *col1;        // im2col of x: n*H*W x k1 (kept for conv1's weight gradient)
    float *y1;          // conv1 output before bias, n*H*W x C1; its gradient in backward
    float *p1;          // pooled conv1 block output, n x H2 x W2 x C1
    unsigned char *arg1; // argmax (0..3) in the 2x2 window of each p1 value
    float *col2;        // im2col of p1: n*H2*W2 x k2; its gradient in backward
    float *y2;          // conv2 output before bias, n*H2*W2 x C2; its gradient in backward
    float *p2;          // pooled conv2 block output = fc1 input, n x d
    unsigned char *arg2;
    float *h;           // fc1 output after ReLU, n x F1
    float *logits;      // n x classes; their gradient after softmax_xent
    float *dh;          // gradient of h, n x F1
    float *dp2;         // gradient of p2, n x d
    float *dp1;         // gradient of p1, n x H2 x W2 x C1
    double *loss;       // per image, n
    int *pred;          // predicted class per image, n
    double *loss_host;  // their copy on the host (malloc)
    int broken; // a CUDA or cuBLAS call failed: error holds the first failure, calls refuse
    char error[256];
};

// A failed launch (bad configuration, or an earlier asynchronous fault surfacing), naming the
// kernel and the layer it was for.
#define KERNEL_CHECK(what)                                                                     \
    do {                                                                                       \
        cudaError_t rc_ = cudaGetLastError();                                                  \
        if (rc_ != cudaSuccess) {                                                              \
            snprintf(err, errlen, "kernel %s: %s", what, cudaGetErrorString(rc_));             \
            goto out;                                                                          \
        }                                                                                      \
    } while (0)

static unsigned blocks_for(size_t n)
{
    size_t b = (n + THREADS - 1) / THREADS;
    return (unsigned)(b < 4096 ? (b ? b : 1) : 4096);
}

// ---- kernels --------------------------------------------------------------------------------

// im2col of a 3x3, pad-1 convolution over m NHWC images h x w x c: col is (m*h*w) x (9*c), row
// (i, y, x) holding the pixels (y-1..y+1, x-1..x+1) in [kh][kw][c] order, 0 outside: the row
// order of the conv weights, so that col times them is the NHWC conv output.
static __global__ void im2col3x3(const float *in, int m, int h, int w, int c, float *col)
{
    const size_t k = (size_t)9 * c, total = (size_t)m * h * w * k;
    for (size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x; idx < total;
         idx += (size_t)gridDim.x * blockDim.x) {
        size_t pixel = idx / k;
        int r = (int)(idx % k), kk = r / c, ch = r % c;
        int x = (int)(pixel % w), y = (int)(pixel / w % h);
        size_t i = pixel / ((size_t)w * h);
        int iy = y + kk / 3 - 1, ix = x + kk % 3 - 1;
        col[idx] = iy >= 0 && iy < h && ix >= 0 && ix < w
                       ? in[((i * h + iy) * w + ix) * c + ch]
                       : 0.0f;
    }
}

// The adjoint of im2col3x3: out (m x h x w x c) = the sum of col's entries that copied each
// pixel. Gathered per output value (at most 9 terms) rather than scattered with atomics, so the
// sum has a fixed order.
static __global__ void col2im3x3(const float *col, int m, int h, int w, int c, float *out)
{
    const size_t k = (size_t)9 * c, total = (size_t)m * h * w * c;
    for (size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x; idx < total;
         idx += (size_t)gridDim.x * blockDim.x) {
        int ch = (int)(idx % c);
        size_t pixel = idx / c;
        int ix = (int)(pixel % w), iy = (int)(pixel / w % h);
        size_t i = pixel / ((size_t)w * h);
        float sum = 0.0f;
        // The output pixel (y, x) read (iy, ix) at kernel position (kh, kw) = (iy-y+1, ix-x+1).
        for (int kh = 0; kh < 3; kh++) {
            int y = iy - kh + 1;
            if (y < 0 || y >= h)
                continue;
            for (int kw = 0; kw < 3; kw++) {
                int x = ix - kw + 1;
                if (x < 0 || x >= w)
                    continue;
                sum += col[((i * h + y) * w + x) * k + (kh * 3 + kw) * c + ch];
            }
        }
        out[idx] = sum;
    }
}

// The index in the m x h x w x nc pool input of the top-left of the 2x2 window of pooled value
// o (in the m x h/2 x w/2 x nc output), same channel; the window's others are + nc, + w*nc and
// + w*nc + nc.
static __device__ size_t window_at(size_t o, int h, int w, int nc)
{
    const int h2 = h / 2, w2 = w / 2;
    const int ch = (int)(o % nc);
    const size_t q = o / nc;
    const int px = (int)(q % w2), py = (int)(q / w2 % h2);
    const size_t i = q / ((size_t)w2 * h2);
    return ((i * h + 2 * py) * w + 2 * px) * nc + ch;
}

// Bias, ReLU and 2x2 max-pool of y (m x h x w x nc, before bias) into p (m x h/2 x w/2 x nc),
// the window's argmax (0..3: top-left, top-right, bottom-left, bottom-right; the first of equal
// values, as PyTorch and cnn_layers.c) in arg. The bias is added after the max: it is the same for
// the whole window.
static __global__ void bias_relu_pool(const float *y, const float *bias, int m, int h, int w,
                                      int nc, float *p, unsigned char *arg)
{
    const size_t total = (size_t)m * (h / 2) * (w / 2) * nc;
    for (size_t o = blockIdx.x * (size_t)blockDim.x + threadIdx.x; o < total;
         o += (size_t)gridDim.x * blockDim.x) {
        const float *a = y + window_at(o, h, w, nc);
        const float win[4] = {a[0], a[nc], a[(size_t)w * nc], a[(size_t)w * nc + nc]};
        float v = win[0];
        unsigned char best = 0;
        for (unsigned char j = 1; j < 4; j++) {
            if (win[j] > v) {
                v = win[j];
                best = j;
            }
        }
        v += bias[o % nc];
        p[o] = v > 0.0f ? v : 0.0f;
        arg[o] = best;
    }
}

// Backward of bias_relu_pool: dy (m x h x w x nc) gets dp at each window's argmax where the
// pooled value is positive (ReLU passes no gradient where its output is 0, as PyTorch's
// threshold_backward), 0 elsewhere; every dy value is written.
static __global__ void pool_backward(const float *dp, const float *p, const unsigned char *arg,
                                     int m, int h, int w, int nc, float *dy)
{
    const size_t total = (size_t)m * (h / 2) * (w / 2) * nc;
    for (size_t o = blockIdx.x * (size_t)blockDim.x + threadIdx.x; o < total;
         o += (size_t)gridDim.x * blockDim.x) {
        float *a = dy + window_at(o, h, w, nc);
        const float g = p[o] > 0.0f ? dp[o] : 0.0f;
        const int best = arg[o];
        a[0] = best == 0 ? g : 0.0f;
        a[nc] = best == 1 ? g : 0.0f;
        a[(size_t)w * nc] = best == 2 ? g : 0.0f;
        a[(size_t)w * nc + nc] = best == 3 ? g : 0.0f;
    }
}

// out[j] = sum over the rows of a (rows x cols) of a[i][j], counting only the entries whose
// mask[i][j] > 0 when mask is not NULL: the bias gradients (conv: dp where the pooled output was
// positive; fc: the rows of the already-masked output gradient). One block per column, a fixed
// summation order, no atomics.
static __global__ void column_sums(const float *a, const float *mask, int rows, int cols,
                                   float *out)
{
    __shared__ float part[THREADS];
    const int j = blockIdx.x;
    float s = 0.0f;
    for (int i = threadIdx.x; i < rows; i += THREADS) {
        size_t at = (size_t)i * cols + j;
        if (!mask || mask[at] > 0.0f)
            s += a[at];
    }
    part[threadIdx.x] = s;
    __syncthreads();
    for (int half = THREADS / 2; half > 0; half /= 2) {
        if (threadIdx.x < half)
            part[threadIdx.x] += part[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[j] = part[0];
}

// h = max(0, h + b) over rows x cols (fc1).
static __global__ void bias_relu(float *h, const float *b, int rows, int cols)
{
    const size_t total = (size_t)rows * cols;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x) {
        float v = h[i] + b[i % cols];
        h[i] = v > 0.0f ? v : 0.0f;
    }
}

// z += b over rows x cols (fc2: the logits have no activation).
static __global__ void bias_add(float *z, const float *b, int rows, int cols)
{
    const size_t total = (size_t)rows * cols;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x)
        z[i] += b[i % cols];
}

// dh = h > 0 ? dh : 0: fc1's ReLU backward (h is its output).
static __global__ void relu_backward(float *dh, const float *h, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        dh[i] = h[i] > 0.0f ? dh[i] : 0.0f;
}

// Softmax cross-entropy of each of the n rows of z (n x nc) against its label, one thread per
// row with the operations of cnn_layers.c's cnn_loss_backward (max shift, sum of exponentials in
// double): loss[i] = log(sum) - (z_y - max), and z is replaced by the gradient of the batch-mean
// loss, (softmax - onehot) * scale with scale = 1/n. A thread per row is slow for thousands of
// classes; the CNN has tens.
static __global__ void softmax_xent(float *z_all, const int *labels, int n, int nc, float scale,
                                    double *loss)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float *z = z_all + (size_t)i * nc;
        float mx = z[0];
        for (int j = 1; j < nc; j++)
            mx = z[j] > mx ? z[j] : mx;
        const int y = labels[i];
        const double zy = (double)z[y] - mx;
        z[0] = expf(z[0] - mx);
        double sum = z[0];
        for (int j = 1; j < nc; j++) {
            z[j] = expf(z[j] - mx);
            sum += z[j];
        }
        loss[i] = log(sum) - zy;
        const float inv = (float)(1.0 / sum);
        for (int j = 0; j < nc; j++)
            z[j] = z[j] * inv * scale;
        z[y] -= scale;
    }
}

// The predicted class of each row of z (n x nc): the first of the largest logits, as
// cnn_cpu.c's argmax_row.
static __global__ void argmax_rows(const float *z_all, int n, int nc, int *pred)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const float *z = z_all + (size_t)i * nc;
        int best = 0;
        for (int j = 1; j < nc; j++)
            if (z[j] > z[best])
                best = j;
        pred[i] = best;
    }
}

// PyTorch's SGD with momentum and weight decay, cnn_cpu.c's job_reduce formula:
// d = g + wd*w; v = mu*v + d; w -= lr*v.
static __global__ void sgd_momentum(float *w, const float *g, float *v, size_t n, float lr,
                                    float mu, float wd)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float d = g[i] + wd * w[i];
        v[i] = mu * v[i] + d;
        w[i] -= lr * v[i];
    }
}

// ---- GEMM -----------------------------------------------------------------------------------

// C (rows x cols) = op(A) op(B) + beta C, row-major as cnn_cpu.c's gemm(): A is rows x inner
// (inner x rows stored when ta), B inner x cols (cols x inner when tb). cuBLAS is column-major,
// where a row-major matrix reads as its transpose, so it computes C^T = op(B)^T op(A)^T: the
// operands swap, and each keeps its own transpose flag. 0, or -1 with a message naming the
// product and its sizes.
static int gemm(struct cuda_cnn *g, const char *what, int ta, int tb, int rows, int cols,
                int inner, const float *a, const float *b, float beta, float *c, char *err,
                size_t errlen)
{
    const float one = 1.0f;
    const int lda = ta ? rows : inner, ldb = tb ? inner : cols;
    cublasStatus_t st = cublasSgemm(g->blas, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                                    ta ? CUBLAS_OP_T : CUBLAS_OP_N, cols, rows, inner, &one, b,
                                    ldb, a, lda, &beta, c, cols);
    if (st != CUBLAS_STATUS_SUCCESS) {
        snprintf(err, errlen, "cublasSgemm (%s, %d x %d x %d): %s", what, rows, cols, inner,
                 cublasGetStatusString(st));
        return -1;
    }
    return 0;
}

// ---- the passes -----------------------------------------------------------------------------

// Forward of the n images in g->x up to the logits (with bias); keeps every activation for the
// backward. Enqueued on g->stream, not waited for. 0, or -1 with a message.
static int forward(struct cuda_cnn *g, int n, char *err, size_t errlen)
{
    const struct cnn_shape *s = &g->s;
    const int np1 = s->height * s->width, np2 = g->L.h2 * g->L.w2, nc = s->classes;
    const float *par = g->param;
    const size_t n_col1 = (size_t)n * np1 * g->L.k1, n_p1 = (size_t)n * np2 * C1;
    const size_t n_col2 = (size_t)n * np2 * g->L.k2, n_p2 = (size_t)n * g->L.d;
    cudaStream_t st = g->stream;

    im2col3x3<<<blocks_for(n_col1), THREADS, 0, st>>>(g->x, n, s->height, s->width,
                                                       s->channels, g->col1);
    KERNEL_CHECK("im2col3x3 (conv1)");
    if (gemm(g, "conv1 forward", 0, 0, n * np1, C1, g->L.k1, g->col1, par + g->L.off_w1, 0.0f,
             g->y1, err, errlen))
        goto out;
    bias_relu_pool<<<blocks_for(n_p1), THREADS, 0, st>>>(g->y1, par + g->L.off_b1, n, s->height,
                                                          s->width, C1, g->p1, g->arg1);
    KERNEL_CHECK("bias_relu_pool (conv1)");

    im2col3x3<<<blocks_for(n_col2), THREADS, 0, st>>>(g->p1, n, g->L.h2, g->L.w2, C1, g->col2);
    KERNEL_CHECK("im2col3x3 (conv2)");
    if (gemm(g, "conv2 forward", 0, 0, n * np2, C2, g->L.k2, g->col2, par + g->L.off_w2, 0.0f,
             g->y2, err, errlen))
        goto out;
    bias_relu_pool<<<blocks_for(n_p2), THREADS, 0, st>>>(g->y2, par + g->L.off_b2, n, g->L.h2,
                                                          g->L.w2, C2, g->p2, g->arg2);
    KERNEL_CHECK("bias_relu_pool (conv2)");

    if (gemm(g, "fc1 forward", 0, 0, n, F1, g->L.d, g->p2, par + g->L.off_w3, 0.0f, g->h, err,
             errlen))
        goto out;
    bias_relu<<<blocks_for((size_t)n * F1), THREADS, 0, st>>>(g->h, par + g->L.off_b3, n, F1);
    KERNEL_CHECK("bias_relu (fc1)");
    if (gemm(g, "fc2 forward", 0, 0, n, nc, F1, g->h, par + g->L.off_w4, 0.0f, g->logits, err,
             errlen))
        goto out;
    bias_add<<<blocks_for((size_t)n * nc), THREADS, 0, st>>>(g->logits, par + g->L.off_b4, n, nc);
    KERNEL_CHECK("bias_add (fc2)");
    return 0;
out:
    return -1;
}

// Backward of the n images after forward and softmax_xent (g->logits holds dloss/dlogits):
// overwrites every entry of g->grad with the gradient of the mean loss. The order of
// cnn_cpu.c's fc_backward and conv_backward; buffers whose forward value is spent hold
// gradients (y1, y2: the conv outputs'; col2: its im2col's).
static int backward(struct cuda_cnn *g, int n, char *err, size_t errlen)
{
    const struct cnn_shape *s = &g->s;
    const int np1 = s->height * s->width, np2 = g->L.h2 * g->L.w2, nc = s->classes;
    const float *par = g->param;
    float *grad = g->grad;
    const size_t n_p1 = (size_t)n * np2 * C1, n_p2 = (size_t)n * g->L.d;
    cudaStream_t st = g->stream;

    // fc2
    if (gemm(g, "fc2 weight gradient", 1, 0, F1, nc, n, g->h, g->logits, 0.0f,
             grad + g->L.off_w4, err, errlen))
        goto out;
    column_sums<<<nc, THREADS, 0, st>>>(g->logits, nullptr, n, nc, grad + g->L.off_b4);
    KERNEL_CHECK("column_sums (fc2 bias)");
    if (gemm(g, "fc2 input gradient", 0, 1, n, F1, nc, g->logits, par + g->L.off_w4, 0.0f, g->dh,
             err, errlen))
        goto out;

    // fc1
    relu_backward<<<blocks_for((size_t)n * F1), THREADS, 0, st>>>(g->dh, g->h, (size_t)n * F1);
    KERNEL_CHECK("relu_backward (fc1)");
    column_sums<<<F1, THREADS, 0, st>>>(g->dh, nullptr, n, F1, grad + g->L.off_b3);
    KERNEL_CHECK("column_sums (fc1 bias)");
    if (gemm(g, "fc1 weight gradient", 1, 0, g->L.d, F1, n, g->p2, g->dh, 0.0f, grad + g->L.off_w3,
             err, errlen))
        goto out;
    if (gemm(g, "fc1 input gradient", 0, 1, n, g->L.d, F1, g->dh, par + g->L.off_w3, 0.0f, g->dp2,
             err, errlen))
        goto out;

    // conv2 block
    pool_backward<<<blocks_for(n_p2), THREADS, 0, st>>>(g->dp2, g->p2, g->arg2, n, g->L.h2, g->L.w2,
                                                         C2, g->y2);
    KERNEL_CHECK("pool_backward (conv2)");
    column_sums<<<C2, THREADS, 0, st>>>(g->dp2, g->p2, n * g->L.h4 * g->L.w4, C2, grad + g->L.off_b2);
    KERNEL_CHECK("column_sums (conv2 bias)");
    if (gemm(g, "conv2 weight gradient", 1, 0, g->L.k2, C2, n * np2, g->col2, g->y2, 0.0f,
             grad + g->L.off_w2, err, errlen))
        goto out;
    // The stream orders this after the weight gradient, the last reader of col2's forward value.
    if (gemm(g, "conv2 input gradient", 0, 1, n * np2, g->L.k2, C2, g->y2, par + g->L.off_w2, 0.0f,
             g->col2, err, errlen))
        goto out;
    col2im3x3<<<blocks_for(n_p1), THREADS, 0, st>>>(g->col2, n, g->L.h2, g->L.w2, C1, g->dp1);
    KERNEL_CHECK("col2im3x3 (conv2)");

    // conv1 block: no input gradient (the input is data)
    pool_backward<<<blocks_for(n_p1), THREADS, 0, st>>>(g->dp1, g->p1, g->arg1, n, s->height,
                                                         s->width, C1, g->y1);
    KERNEL_CHECK("pool_backward (conv1)");
    column_sums<<<C1, THREADS, 0, st>>>(g->dp1, g->p1, n * np2, C1, grad + g->L.off_b1);
    KERNEL_CHECK("column_sums (conv1 bias)");
    if (gemm(g, "conv1 weight gradient", 1, 0, g->L.k1, C1, n * np1, g->col1, g->y1, 0.0f,
             grad + g->L.off_w1, err, errlen))
        goto out;
    return 0;
out:
    return -1;
}

// The checks every batch call makes before touching the GPU; 0, or -1 with a message (the
// struct stays usable). Labels are checked only when given.
static int check_batch(struct cuda_cnn *g, const int *labels, int n, int limit)
{
    if (g->broken)
        return -1; // keep the first failure's message
    if (n < 1 || n > limit) {
        snprintf(g->error, sizeof g->error, "batch of %d images: must be from 1 to %d (the "
                 "max_batch given to cnn_create)", n, limit);
        return -1;
    }
    for (int i = 0; labels && i < n; i++) {
        if (labels[i] < 0 || labels[i] >= g->s.classes) {
            snprintf(g->error, sizeof g->error, "label %d of image %d is outside [0, %d)",
                     labels[i], i, g->s.classes);
            return -1;
        }
    }
    return 0;
}

// ---- the API (common/cuda_backend.h) --------------------------------------------------------

struct cuda_cnn *cuda_cnn_create(const struct cnn_shape *shape, const float *params,
                                 int max_batch, char *err, size_t errlen)
{
    struct cuda_cnn *g = nullptr;
    size_t np1, np2, nc, b;

    // The CPU backend's limits (cnn_create), and ints for cuBLAS's row counts.
    if (shape->height < 4 || shape->height % 4 || shape->width < 4 || shape->width % 4) {
        snprintf(err, errlen, "cnn: input %d x %d: height and width must be multiples of 4 "
                 "(two 2x2 max-pools)", shape->height, shape->width);
        return nullptr;
    }
    if (shape->channels < 1 || shape->channels > 1024 || shape->classes < 2 ||
        shape->classes > 1000000) {
        snprintf(err, errlen, "cnn: %d channels and %d classes: must be 1..1024 and 2..1000000",
                 shape->channels, shape->classes);
        return nullptr;
    }
    if (max_batch < 1 || (long long)max_batch * shape->height * shape->width > INT_MAX) {
        snprintf(err, errlen, "cnn: max_batch %d must be at least 1, and max_batch x %d x %d "
                 "pixels at most %d", max_batch, shape->height, shape->width, INT_MAX);
        return nullptr;
    }
    // calloc and malloc, not std::vector: its out-of-line template code would be exported.
    g = (struct cuda_cnn *)calloc(1, sizeof *g);
    if (!g) {
        snprintf(err, errlen, "cnn: out of memory for the CUDA model");
        return nullptr;
    }
    g->s = *shape;
    g->max_batch = max_batch;
    g->L = cnn_layout_of(shape); // the flat layout of cnn_cpu.c
    nc = (size_t)shape->classes;

    np1 = (size_t)shape->height * shape->width;
    np2 = (size_t)g->L.h2 * g->L.w2;
    b = (size_t)max_batch;
    g->loss_host = (double *)malloc(b * sizeof(double));
    if (!g->loss_host) {
        snprintf(err, errlen, "cnn: out of memory for %d images' results", max_batch);
        cuda_cnn_free(g);
        return nullptr;
    }
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaStreamCreate(&g->stream));
    CUBLAS_CHECK(cublasCreate(&g->blas));
    CUBLAS_CHECK(cublasSetStream(g->blas, g->stream));
    // Plain fp32: TF32 tensor cores would move the losses far beyond the 1e-3 agreement with
    // the CPU that this backend is checked against.
    CUBLAS_CHECK(cublasSetMathMode(g->blas, CUBLAS_DEFAULT_MATH));
    CUDA_CHECK(cudaMalloc((void **)&g->param, g->L.nparam * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g->grad, g->L.nparam * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g->vel, g->L.nparam * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g->x, b * np1 * shape->channels * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g->labels, b * sizeof(int)));
    CUDA_CHECK(cudaMalloc((void **)&g->col1, b * np1 * g->L.k1 * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g->y1, b * np1 * C1 * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g->p1, b * np2 * C1 * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g->arg1, b * np2 * C1));
    CUDA_CHECK(cudaMalloc((void **)&g->col2, b * np2 * g->L.k2 * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g->y2, b * np2 * C2 * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g->p2, b * g->L.d * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g->arg2, b * g->L.d));
    CUDA_CHECK(cudaMalloc((void **)&g->h, b * F1 * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g->logits, b * nc * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g->dh, b * F1 * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g->dp2, b * g->L.d * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g->dp1, b * np2 * C1 * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g->loss, b * sizeof(double)));
    CUDA_CHECK(cudaMalloc((void **)&g->pred, b * sizeof(int)));
    // The caller's weights, so that this model and the CPU's start identical; no momentum yet.
    CUDA_CHECK(cudaMemcpyAsync(g->param, params, g->L.nparam * sizeof(float),
                               cudaMemcpyHostToDevice, g->stream));
    CUDA_CHECK(cudaMemsetAsync(g->grad, 0, g->L.nparam * sizeof(float), g->stream));
    CUDA_CHECK(cudaMemsetAsync(g->vel, 0, g->L.nparam * sizeof(float), g->stream));
    CUDA_CHECK(cudaStreamSynchronize(g->stream));
    return g;
out:
    cuda_cnn_free(g);
    return nullptr;
}

double cuda_cnn_train_step(struct cuda_cnn *g, const float *x_host, const int *labels_host,
                           int n, float lr, float momentum, float weight_decay)
{
    char *err = g->error;
    const size_t errlen = sizeof g->error;
    const size_t in_size = (size_t)g->s.height * g->s.width * g->s.channels;
    double sum = 0;

    if (check_batch(g, labels_host, n, g->max_batch))
        return NAN;
    // Stream-ordered uploads (pageable memory: the call returns once the source is staged).
    CUDA_CHECK(cudaMemcpyAsync(g->x, x_host, (size_t)n * in_size * sizeof(float),
                               cudaMemcpyHostToDevice, g->stream));
    CUDA_CHECK(cudaMemcpyAsync(g->labels, labels_host, (size_t)n * sizeof(int),
                               cudaMemcpyHostToDevice, g->stream));
    if (forward(g, n, err, errlen))
        goto out;
    softmax_xent<<<blocks_for((size_t)n), THREADS, 0, g->stream>>>(
        g->logits, g->labels, n, g->s.classes, 1.0f / (float)n, g->loss);
    KERNEL_CHECK("softmax_xent");
    if (backward(g, n, err, errlen))
        goto out;
    sgd_momentum<<<blocks_for(g->L.nparam), THREADS, 0, g->stream>>>(
        g->param, g->grad, g->vel, g->L.nparam, lr, momentum, weight_decay);
    KERNEL_CHECK("sgd_momentum");
    CUDA_CHECK(cudaMemcpyAsync(g->loss_host, g->loss, (size_t)n * sizeof(double),
                               cudaMemcpyDeviceToHost, g->stream));
    // Where a fault in any kernel of the step surfaces.
    CUDA_CHECK(cudaStreamSynchronize(g->stream));
    // In image order, as the CPU's single worker adds them.
    for (int i = 0; i < n; i++)
        sum += g->loss_host[i];
    return sum / n;
out:
    g->broken = 1;
    return NAN;
}

int cuda_cnn_predict(struct cuda_cnn *g, const float *x_host, const int *labels_host, int n,
                     int *out_class)
{
    char *err = g->error;
    const size_t errlen = sizeof g->error;
    const size_t in_size = (size_t)g->s.height * g->s.width * g->s.channels;
    int correct = 0;

    if (g->broken)
        return -1; // keep the first failure's message
    if (n <= 0)
        return 0; // as cnn_predict
    // Any n: in chunks of max_batch images, the size the buffers hold.
    for (int lo = 0; lo < n; lo += g->max_batch) {
        const int m = n - lo < g->max_batch ? n - lo : g->max_batch;
        CUDA_CHECK(cudaMemcpyAsync(g->x, x_host + (size_t)lo * in_size,
                                   (size_t)m * in_size * sizeof(float), cudaMemcpyHostToDevice,
                                   g->stream));
        if (forward(g, m, err, errlen))
            goto out;
        argmax_rows<<<blocks_for((size_t)m), THREADS, 0, g->stream>>>(g->logits, m,
                                                                       g->s.classes, g->pred);
        KERNEL_CHECK("argmax_rows");
        CUDA_CHECK(cudaMemcpyAsync(out_class + lo, g->pred, (size_t)m * sizeof(int),
                                   cudaMemcpyDeviceToHost, g->stream));
        CUDA_CHECK(cudaStreamSynchronize(g->stream));
    }
    for (int i = 0; labels_host && i < n; i++)
        correct += out_class[i] == labels_host[i];
    return correct;
out:
    g->broken = 1;
    return -1;
}

int cuda_cnn_get_params(struct cuda_cnn *g, float *params_host)
{
    char *err = g->error;
    const size_t errlen = sizeof g->error;
    if (g->broken)
        return -1;
    CUDA_CHECK(cudaMemcpyAsync(params_host, g->param, g->L.nparam * sizeof(float),
                               cudaMemcpyDeviceToHost, g->stream));
    CUDA_CHECK(cudaStreamSynchronize(g->stream));
    return 0;
out:
    g->broken = 1;
    return -1;
}

const char *cuda_cnn_error(const struct cuda_cnn *g)
{
    return g->error;
}

void cuda_cnn_free(struct cuda_cnn *g)
{
    if (!g)
        return;
    float *floats[] = {g->param, g->grad, g->vel, g->x, g->col1, g->y1, g->p1, g->col2,
                       g->y2, g->p2, g->h, g->logits, g->dh, g->dp2, g->dp1};
    for (float *p : floats)
        cudaFree(p);
    cudaFree(g->labels);
    cudaFree(g->arg1);
    cudaFree(g->arg2);
    cudaFree(g->loss);
    cudaFree(g->pred);
    if (g->blas)
        cublasDestroy(g->blas);
    if (g->stream)
        cudaStreamDestroy(g->stream);
    free(g->loss_host);
    free(g);
}
