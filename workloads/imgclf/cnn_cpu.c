/* cnn_cpu: the CPU backend of the reference small CNN (cnn.h): im2col + single-threaded sgemm
 * (cnn_gemm.h: our AVX-512 kernels when the CPU has AVX-512F, else OpenBLAS) for the
 * convolutions and the fully connected layers, plain C for the rest, data-parallel over
 * micro-batches on a fork-join pool (common/pool.h).
 *
 * Layouts (row-major float):
 *   activations   NHWC: image i, row y, column x, channel c at ((i*H + y)*W + x)*C + c.
 *   conv weights  [kh][kw][cin][cout]: a (9*cin) x cout matrix, so that the im2col of an NHWC
 *                 input (pixels x 9*cin) times it is the NHWC output (pixels x cout).
 *                 PyTorch's conv.weight[o][ci][kh][kw] is our w[(kh*3 + kw)*cin + ci][o].
 *   fc weights    [in][out]. fc1's inputs are conv2's pooled output flattened in NHWC order
 *                 (y, x, c), a permutation of PyTorch's NCHW flatten (c, y, x):
 *                 PyTorch's fc1.weight[o][(c*H4 + y)*W4 + x] is our w[(y*W4 + x)*64 + c][o].
 *   Parameters are one array: conv1 w, b, conv2 w, b, fc1 w, b, fc2 w, b (cnn_params).
 *
 * A step: pool_run 1: worker w takes images [ceil(w*n/T), ceil((w+1)*n/T)) in groups of at most
 * GROUP images, each group in micro-batches of at most MICROBATCH images:
 *   forward, per micro-batch: im2col, conv GEMM, bias+ReLU+pool for both conv layers, keeping
 *     the pooled outputs and argmaxes of the group; the im2col and conv output buffers are
 *     scratch for one micro-batch, small enough to stay in L2;
 *   the fully connected layers and the loss for the whole group (fc1's weights are 2 MB at
 *     32x32: one GEMM row block per group rather than per micro-batch);
 *   backward, per micro-batch in reverse order: the im2col matrices are rebuilt from the kept
 *     pooled outputs (the last micro-batch's are still there), then conv2's weight and input
 *     gradients and conv1's weight gradient.
 * Weight gradients add into the worker's gradient buffer (worker 0's is net->grad). pool_run 2:
 * each worker sums one range of the parameters over the workers' buffers into net->grad and, for
 * a training step, applies the update to that range. Per-sample gradients add, so this is the
 * full-batch gradient up to float summation order.
 *
 * ReLU then 2x2 max-pool is computed as one pass over the conv output: pooled = max(0, max of
 * the window + bias); the window's argmax (first of equals, as PyTorch) is kept as a byte, and
 * backward sends the pooled gradient to that position when pooled > 0 (ReLU's gradient is 0
 * where its output is 0, as PyTorch's threshold_backward).
 *
 * cnn_create sets OpenBLAS to one thread (openblas_set_num_threads(1), process-wide): the
 * parallelism is the pool's, and every worker calls sgemm from its own thread (OpenBLAS's, when
 * it is the GEMM used).
 *
 * MLBENCH_CNN_PROFILE=1 in the environment makes cnn_free print worker 0's CPU time per phase. */
#include "imgclf/cnn.h"
#include "imgclf/cnn_gemm.h"

#include "common/pool.h"
#include "common/rng.h"

#include <cblas.h> /* openblas_set_num_threads */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define C1 CNN_C1
#define C2 CNN_C2
#define F1 CNN_F1
/* Images per micro-batch of the convolutions, and per group of the fully connected layers
 * (-D to tune). Measured on the 2-core Zen 5 test machine at 32x32x3 and 28x28x1, CPU time per
 * image: (4, 32) best; (2..16, 16..64) within 2-6 %. */
#ifndef MICROBATCH
#define MICROBATCH 4
#endif
#ifndef GROUP
#define GROUP 32
#endif
_Static_assert(GROUP >= MICROBATCH, "a group holds at least one micro-batch");

enum phase {
    PH_IM2COL1,
    PH_CONV1,
    PH_POOL1,
    PH_IM2COL2,
    PH_CONV2,
    PH_POOL2,
    PH_FC_FWD,
    PH_LOSS,
    PH_FC_BWD,
    PH_POOL2_BWD,
    PH_CONV2_DW,
    PH_CONV2_DX,
    PH_COL2IM,
    PH_POOL1_BWD,
    PH_CONV1_DW,
    PH_REDUCE,
    PH_COUNT
};
static const char *const phase_names[PH_COUNT] = {
    "im2col1",   "conv1 gemm", "pool1",   "im2col2",   "conv2 gemm", "pool2",
    "fc fwd",    "loss",       "fc bwd",  "pool2 bwd", "conv2 dW",   "conv2 dX",
    "col2im",    "pool1 bwd",  "conv1 dW", "reduce+update"};

/* One worker's buffers: scratch for one micro-batch (m <= MICROBATCH images) and the kept
 * activations of one group (g <= GROUP images). */
struct cnn_worker {
    float *grad;    /* its gradient sums (net->grad for worker 0) */
    float *col1;    /* im2col of the input: m*P1 x 9*C */
    float *y1;      /* conv1 output before bias (m*P1 x C1); its gradient in backward */
    float *col2;    /* im2col of p1: m*P2 x 9*C1; its gradient in backward */
    float *y2;      /* conv2 output before bias (m*P2 x C2); its gradient in backward */
    float *dp1;     /* gradient of a micro-batch's p1 */
    float *p1;      /* pooled conv1 block output, NHWC g x H2 x W2 x C1 */
    unsigned char *arg1; /* argmax in the 2x2 window of each p1 value */
    float *p2;      /* pooled conv2 block output = fc1 input, g x D */
    unsigned char *arg2;
    float *dp2;     /* gradient of p2 */
    float *h;       /* fc1 output after ReLU, g x F1 */
    float *dh;      /* its gradient */
    float *logits;  /* g x classes; their gradient in backward */
    double loss;    /* sum of its images' losses in this call */
    int correct;    /* predictions equal to the label */
    int images;     /* images it took in this call */
    double phase_s[PH_COUNT];
};

struct cnn {
    struct cnn_shape s;
    int threads;
    struct pool *pool;
    struct cnn_layout L;
    float *param, *grad, *vel;
    struct cnn_worker *wk;
    int profile;
    int gemm_avx512; /* gemm() uses cnn_gemm_avx512 (the CPU has AVX-512F) */
};

/* What one pool_run does. */
enum job_kind { JOB_GRAD, JOB_PREDICT };
struct job {
    struct cnn *net;
    enum job_kind kind;
    const float *x;
    const int *labels;
    int n;
    int *out_class;
    /* reduce + update */
    int update;
    float lr, momentum, weight_decay;
};

/* The calling thread's CPU time: the profile should not count time the thread waited for a core
 * (the machines this runs on are shared). */
static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Accumulates the time since *t into phase ph of worker wk (when profiling) and restarts *t. */
static inline void lap(const struct cnn *net, struct cnn_worker *wk, enum phase ph, double *t)
{
    if (!net->profile)
        return;
    double t1 = now_s();
    wk->phase_s[ph] += t1 - *t;
    *t = t1;
}

/* The one allocation helper: count floats (or bytes when elem = 1), 64-byte aligned, zeroed;
 * NULL on overflow or when memory is short. */
static void *cnn_alloc(size_t count, size_t elem)
{
    if (count == 0)
        count = 1;
    if (count > SIZE_MAX / elem)
        return NULL;
    size_t bytes = (count * elem + 63) / 64 * 64;
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes) != 0)
        return NULL;
    memset(p, 0, bytes);
    return p;
}

/* ---- layers ---------------------------------------------------------------------------- */

/* im2col of a 3x3, pad-1 convolution over m NHWC images h x w x c (w >= 2): col is
 * (m*h*w) x (9*c), row (i, y, x) holding the input pixels (y-1..y+1, x-1..x+1) in [kh][kw][c]
 * order, 0 outside. Inlined for 1 and 3 channels so that the copies of 3*c floats have a small
 * constant size (a memcpy call per 9 floats was most of conv1's im2col); wider rows go through
 * memcpy calls, which beat the rep movs the compiler inlines for a constant 384 bytes. */
static inline __attribute__((always_inline)) void
im2col3x3_body(const float *restrict in, int m, int h, int w, int c, float *restrict col)
{
    const size_t k = (size_t)9 * c, row3 = (size_t)3 * c;
    for (int i = 0; i < m; i++) {
        const float *img = in + (size_t)i * h * w * c;
        for (int y = 0; y < h; y++) {
            float *rowdst = col + ((size_t)i * h + y) * w * k;
            for (int kh = 0; kh < 3; kh++) {
                int iy = y + kh - 1;
                if (iy < 0 || iy >= h) {
                    for (int x = 0; x < w; x++)
                        memset(rowdst + x * k + kh * row3, 0, row3 * sizeof(float));
                    continue;
                }
                const float *src = img + (size_t)iy * w * c;
                float *dst = rowdst + kh * row3;
                /* x = 0: left neighbour outside */
                memset(dst, 0, (size_t)c * sizeof(float));
                memcpy(dst + c, src, (size_t)2 * c * sizeof(float));
                for (int x = 1; x < w - 1; x++)
                    memcpy(dst + x * k, src + (size_t)(x - 1) * c, row3 * sizeof(float));
                /* x = w - 1: right neighbour outside */
                dst += (size_t)(w - 1) * k;
                memcpy(dst, src + (size_t)(w - 2) * c, (size_t)2 * c * sizeof(float));
                memset(dst + 2 * c, 0, (size_t)c * sizeof(float));
            }
        }
    }
}

static void im2col3x3(const float *restrict in, int m, int h, int w, int c, float *restrict col)
{
    switch (c) {
    case 1:
        im2col3x3_body(in, m, h, w, 1, col);
        break;
    case 3:
        im2col3x3_body(in, m, h, w, 3, col);
        break;
    default:
        im2col3x3_body(in, m, h, w, c, col);
    }
}

/* The adjoint of im2col3x3 for c = C1: out (m x h x w x C1) = sum of col's entries over the
 * rows that copied each pixel. out is overwritten. */
static void col2im3x3_c1(const float *restrict col, int m, int h, int w, float *restrict out)
{
    const size_t k = (size_t)9 * C1;
    memset(out, 0, (size_t)m * h * w * C1 * sizeof *out);
    for (int i = 0; i < m; i++) {
        float *img = out + (size_t)i * h * w * C1;
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) {
                const float *src = col + (((size_t)i * h + y) * w + x) * k;
                for (int kh = 0; kh < 3; kh++) {
                    int iy = y + kh - 1;
                    if (iy < 0 || iy >= h)
                        continue;
                    for (int kw = 0; kw < 3; kw++) {
                        int ix = x + kw - 1;
                        if (ix < 0 || ix >= w)
                            continue;
                        float *restrict o = img + ((size_t)iy * w + ix) * C1;
                        const float *restrict s = src + (kh * 3 + kw) * C1;
                        for (int ch = 0; ch < C1; ch++)
                            o[ch] += s[ch];
                    }
                }
            }
        }
    }
}

/* Bias, ReLU and 2x2 max-pool of y (m x h x w x nc, before bias) into p (m x h/2 x w/2 x nc),
 * with the argmax (0..3: top-left, top-right, bottom-left, bottom-right) in arg. */
static inline __attribute__((always_inline)) void
pool_forward(const float *restrict y, const float *restrict bias, int m, int h, int w, int nc,
             float *restrict p, unsigned char *restrict arg)
{
    const int h2 = h / 2, w2 = w / 2;
    for (int i = 0; i < m; i++) {
        for (int py = 0; py < h2; py++) {
            for (int px = 0; px < w2; px++) {
                const float *a = y + (((size_t)i * h + 2 * py) * w + 2 * px) * nc;
                const float *b = a + nc, *c = a + (size_t)w * nc, *d = c + nc;
                size_t o = (((size_t)i * h2 + py) * w2 + px) * nc;
                for (int ch = 0; ch < nc; ch++) {
                    float v = a[ch];
                    unsigned char k = 0;
                    if (b[ch] > v) {
                        v = b[ch];
                        k = 1;
                    }
                    if (c[ch] > v) {
                        v = c[ch];
                        k = 2;
                    }
                    if (d[ch] > v) {
                        v = d[ch];
                        k = 3;
                    }
                    v += bias[ch];
                    p[o + ch] = v > 0.0f ? v : 0.0f;
                    arg[o + ch] = k;
                }
            }
        }
    }
}

/* Backward of pool_forward: dy (m x h x w x nc) gets dp at each window's argmax where the pooled
 * value is positive, 0 elsewhere (overwritten); dbias += the sum of those gradients. One pass
 * per window position, each a single select per value: that vectorises, where four selects in
 * one loop become branches (the compiler threads the exclusive tests), mispredicted as the
 * argmax is random. */
static inline __attribute__((always_inline)) void
pool_backward(const float *restrict dp, const float *restrict p, const unsigned char *restrict arg,
              int m, int h, int w, int nc, float *restrict dy, float *restrict dbias)
{
    const int h2 = h / 2, w2 = w / 2;
    for (int pos = 0; pos < 4; pos++) {
        const size_t off = (size_t)(pos & 1) * nc + (size_t)(pos >> 1) * w * nc;
        for (int i = 0; i < m; i++) {
            for (int py = 0; py < h2; py++) {
                for (int px = 0; px < w2; px++) {
                    float *restrict a = dy + (((size_t)i * h + 2 * py) * w + 2 * px) * nc + off;
                    size_t o = (((size_t)i * h2 + py) * w2 + px) * nc;
                    for (int ch = 0; ch < nc; ch++) {
                        float g = dp[o + ch], pv = p[o + ch];
                        int hit = (arg[o + ch] == pos) & (pv > 0.0f);
                        a[ch] = hit ? g : 0.0f;
                    }
                }
            }
        }
    }
    for (size_t q = 0; q < (size_t)m * h2 * w2; q++) {
        for (int ch = 0; ch < nc; ch++) {
            float g = dp[q * nc + ch], pv = p[q * nc + ch];
            dbias[ch] += pv > 0.0f ? g : 0.0f;
        }
    }
}

/* C (rows x cols) = A B with row-major A (rows x inner) and B (inner x cols), or with the
 * transposes as flagged; beta 0 overwrites C, 1 adds to it. The one dispatch between our
 * AVX-512 kernels (cnn_gemm_avx512.c) and OpenBLAS: ours when the CPU has AVX-512F, for every
 * GEMM here. Measured on one Zen 5 core with OPENBLAS_CORETYPE=Haswell, GFLOP/s ours vs
 * OpenBLAS: conv GEMMs 215-263 vs 55-123, fc1 forward and weight gradient 200-208 vs 106-116,
 * fc1 input gradient 128 vs 97; only fc2's weight gradient (10 columns) is slower (50 vs 66),
 * too small to be worth a second path. */
static void gemm(const struct cnn *net, int ta, int tb, int rows, int cols, int inner,
                 const float *a, const float *b, float beta, float *c)
{
    const int lda = ta ? rows : inner, ldb = tb ? inner : cols;
    if (net->gemm_avx512)
        cnn_gemm_avx512(ta, tb, rows, cols, inner, a, lda, b, ldb, beta, c, cols);
    else
        cnn_gemm_blas(ta, tb, rows, cols, inner, a, lda, b, ldb, beta, c, cols);
}

/* Conv forward of m images x (NHWC): their pooled conv outputs and argmaxes go to p1/arg1
 * (m x H2 x W2 x C1) and p2/arg2 (m x D); wk's scratch keeps the last im2col matrices. */
static void conv_forward(const struct cnn *net, struct cnn_worker *wk, const float *x, int m,
                         float *p1, unsigned char *arg1, float *p2, unsigned char *arg2)
{
    const struct cnn_shape *s = &net->s;
    const float *par = net->param;
    const int np1 = s->height * s->width, np2 = net->L.h2 * net->L.w2;
    double t = net->profile ? now_s() : 0;

    im2col3x3(x, m, s->height, s->width, s->channels, wk->col1);
    lap(net, wk, PH_IM2COL1, &t);
    gemm(net, 0, 0, m * np1, C1, net->L.k1, wk->col1, par + net->L.off_w1, 0.0f, wk->y1);
    lap(net, wk, PH_CONV1, &t);
    pool_forward(wk->y1, par + net->L.off_b1, m, s->height, s->width, C1, p1, arg1);
    lap(net, wk, PH_POOL1, &t);

    im2col3x3(p1, m, net->L.h2, net->L.w2, C1, wk->col2);
    lap(net, wk, PH_IM2COL2, &t);
    gemm(net, 0, 0, m * np2, C2, net->L.k2, wk->col2, par + net->L.off_w2, 0.0f, wk->y2);
    lap(net, wk, PH_CONV2, &t);
    pool_forward(wk->y2, par + net->L.off_b2, m, net->L.h2, net->L.w2, C2, p2, arg2);
    lap(net, wk, PH_POOL2, &t);
}

/* The fully connected layers of g images: wk->p2 -> wk->h -> wk->logits. */
static void fc_forward(const struct cnn *net, struct cnn_worker *wk, int g)
{
    const float *par = net->param;
    const int nc = net->s.classes;
    double t = net->profile ? now_s() : 0;
    gemm(net, 0, 0, g, F1, net->L.d, wk->p2, par + net->L.off_w3, 0.0f, wk->h);
    const float *b3 = par + net->L.off_b3;
    for (int i = 0; i < g; i++) {
        float *hi = wk->h + (size_t)i * F1;
        for (int j = 0; j < F1; j++) {
            float v = hi[j] + b3[j];
            hi[j] = v > 0.0f ? v : 0.0f;
        }
    }
    gemm(net, 0, 0, g, nc, F1, wk->h, par + net->L.off_w4, 0.0f, wk->logits);
    const float *b4 = par + net->L.off_b4;
    for (int i = 0; i < g; i++)
        for (int j = 0; j < nc; j++)
            wk->logits[(size_t)i * nc + j] += b4[j];
    lap(net, wk, PH_FC_FWD, &t);
}

/* Softmax cross-entropy of wk->logits (g images) against labels: adds the losses to wk->loss
 * and replaces the logits by the gradient of the batch-mean loss (scale = 1 / batch size). */
static void loss_backward(const struct cnn *net, struct cnn_worker *wk, const int *labels, int g,
                          float scale)
{
    const int nc = net->s.classes;
    double t = net->profile ? now_s() : 0;
    for (int i = 0; i < g; i++) {
        float *z = wk->logits + (size_t)i * nc;
        float mx = z[0];
        for (int j = 1; j < nc; j++)
            mx = z[j] > mx ? z[j] : mx;
        int y = labels[i];
        double zy = (double)z[y] - mx;
        z[0] = expf(z[0] - mx);
        double sum = z[0]; /* >= 1: one term is exp(0) */
        for (int j = 1; j < nc; j++) {
            z[j] = expf(z[j] - mx);
            sum += z[j];
        }
        wk->loss += log(sum) - zy;
        float inv = (float)(1.0 / sum);
        for (int j = 0; j < nc; j++)
            z[j] = z[j] * inv * scale;
        z[y] -= scale;
    }
    lap(net, wk, PH_LOSS, &t);
}

/* Backward of the fully connected layers of g images, after loss_backward: adds (beta 1) or
 * writes (beta 0) their weight gradients, adds their bias gradients, and leaves the gradient of
 * p2 in wk->dp2. */
static void fc_backward(const struct cnn *net, struct cnn_worker *wk, int g, float beta)
{
    const float *par = net->param;
    float *grad = wk->grad;
    const int nc = net->s.classes;
    double t = net->profile ? now_s() : 0;
    gemm(net, 1, 0, F1, nc, g, wk->h, wk->logits, beta, grad + net->L.off_w4);
    for (int i = 0; i < g; i++)
        for (int j = 0; j < nc; j++)
            grad[net->L.off_b4 + j] += wk->logits[(size_t)i * nc + j];
    /* dh = dlogits W4^T, through fc1's ReLU */
    float *dh = wk->dh;
    gemm(net, 0, 1, g, F1, nc, wk->logits, par + net->L.off_w4, 0.0f, dh);
    for (size_t i = 0; i < (size_t)g * F1; i++)
        dh[i] = wk->h[i] > 0.0f ? dh[i] : 0.0f;
    for (int i = 0; i < g; i++)
        for (int j = 0; j < F1; j++)
            grad[net->L.off_b3 + j] += dh[(size_t)i * F1 + j];
    gemm(net, 1, 0, net->L.d, F1, g, wk->p2, dh, beta, grad + net->L.off_w3);
    gemm(net, 0, 1, g, net->L.d, F1, dh, par + net->L.off_w3, 0.0f, wk->dp2);
    lap(net, wk, PH_FC_BWD, &t);
}

/* Conv backward of m images x whose kept activations are p1/arg1, p2/arg2 and whose gradient of
 * p2 is dp2; adds (beta 1) or writes (beta 0) the conv weight gradients, adds the bias
 * gradients. rebuild: the scratch im2col matrices are not these images' (rebuild them). */
static void conv_backward(const struct cnn *net, struct cnn_worker *wk, const float *x, int m,
                          const float *p1, const unsigned char *arg1, const float *p2,
                          const unsigned char *arg2, const float *dp2, float beta, int rebuild)
{
    const struct cnn_shape *s = &net->s;
    const float *par = net->param;
    float *grad = wk->grad;
    const int np1 = s->height * s->width, np2 = net->L.h2 * net->L.w2;
    double t = net->profile ? now_s() : 0;

    pool_backward(dp2, p2, arg2, m, net->L.h2, net->L.w2, C2, wk->y2, grad + net->L.off_b2);
    lap(net, wk, PH_POOL2_BWD, &t);
    if (rebuild) {
        im2col3x3(p1, m, net->L.h2, net->L.w2, C1, wk->col2);
        lap(net, wk, PH_IM2COL2, &t);
    }
    gemm(net, 1, 0, net->L.k2, C2, m * np2, wk->col2, wk->y2, beta, grad + net->L.off_w2);
    lap(net, wk, PH_CONV2_DW, &t);
    gemm(net, 0, 1, m * np2, net->L.k2, C2, wk->y2, par + net->L.off_w2, 0.0f, wk->col2);
    lap(net, wk, PH_CONV2_DX, &t);
    col2im3x3_c1(wk->col2, m, net->L.h2, net->L.w2, wk->dp1);
    lap(net, wk, PH_COL2IM, &t);

    /* conv1: no input gradient */
    pool_backward(wk->dp1, p1, arg1, m, s->height, s->width, C1, wk->y1, grad + net->L.off_b1);
    lap(net, wk, PH_POOL1_BWD, &t);
    if (rebuild) {
        im2col3x3(x, m, s->height, s->width, s->channels, wk->col1);
        lap(net, wk, PH_IM2COL1, &t);
    }
    gemm(net, 1, 0, net->L.k1, C1, m * np1, wk->col1, wk->y1, beta, grad + net->L.off_w1);
    lap(net, wk, PH_CONV1_DW, &t);
}

/* ---- the data-parallel steps --------------------------------------------------------------- */

static void bias_zero(const struct cnn *net, float *g)
{
    memset(g + net->L.off_b1, 0, C1 * sizeof *g);
    memset(g + net->L.off_b2, 0, C2 * sizeof *g);
    memset(g + net->L.off_b3, 0, F1 * sizeof *g);
    memset(g + net->L.off_b4, 0, (size_t)net->s.classes * sizeof *g);
}

static int argmax_row(const float *z, int nc)
{
    int best = 0;
    for (int j = 1; j < nc; j++)
        if (z[j] > z[best])
            best = j;
    return best;
}

/* Bounds of part k of `count` items split into `parts` near-equal parts. */
static int split_at(int count, int parts, int k)
{
    return (int)((long long)k * count / parts);
}

/* pool_run job: worker w's share of the images, in groups of micro-batches. */
static void job_images(void *arg, int w, int nthreads)
{
    const struct job *jb = arg;
    struct cnn *net = jb->net;
    struct cnn_worker *wk = &net->wk[w];
    const size_t in_size = (size_t)net->s.height * net->s.width * net->s.channels;
    const size_t p1_size = (size_t)net->L.h2 * net->L.w2 * C1, p2_size = (size_t)net->L.d;
    const int lo = (int)(((long long)w * jb->n + nthreads - 1) / nthreads);
    const int hi = (int)(((long long)(w + 1) * jb->n + nthreads - 1) / nthreads);
    const int count = hi - lo, groups = (count + GROUP - 1) / GROUP;
    wk->loss = 0;
    wk->correct = 0;
    wk->images = count;
    if (count == 0)
        return;
    if (jb->kind == JOB_GRAD)
        bias_zero(net, wk->grad);
    const float scale = 1.0f / (float)jb->n;
    for (int gi = 0; gi < groups; gi++) {
        const int g0 = lo + split_at(count, groups, gi);
        const int g = lo + split_at(count, groups, gi + 1) - g0;
        const int chunks = (g + MICROBATCH - 1) / MICROBATCH;
        const float *xg = jb->x + (size_t)g0 * in_size;
        for (int c = 0; c < chunks; c++) {
            const int a = split_at(g, chunks, c), m = split_at(g, chunks, c + 1) - a;
            conv_forward(net, wk, xg + (size_t)a * in_size, m, wk->p1 + (size_t)a * p1_size,
                         wk->arg1 + (size_t)a * p1_size, wk->p2 + (size_t)a * p2_size,
                         wk->arg2 + (size_t)a * p2_size);
        }
        fc_forward(net, wk, g);
        if (jb->kind == JOB_PREDICT) {
            for (int i = 0; i < g; i++) {
                int k = argmax_row(wk->logits + (size_t)i * net->s.classes, net->s.classes);
                jb->out_class[g0 + i] = k;
                if (jb->labels && k == jb->labels[g0 + i])
                    wk->correct++;
            }
            continue;
        }
        loss_backward(net, wk, jb->labels + g0, g, scale);
        fc_backward(net, wk, g, gi == 0 ? 0.0f : 1.0f);
        /* last micro-batch first: its im2col matrices are still in the scratch */
        for (int c = chunks - 1; c >= 0; c--) {
            const int a = split_at(g, chunks, c), m = split_at(g, chunks, c + 1) - a;
            conv_backward(net, wk, xg + (size_t)a * in_size, m, wk->p1 + (size_t)a * p1_size,
                          wk->arg1 + (size_t)a * p1_size, wk->p2 + (size_t)a * p2_size,
                          wk->arg2 + (size_t)a * p2_size, wk->dp2 + (size_t)a * p2_size,
                          gi == 0 && c == chunks - 1 ? 0.0f : 1.0f, c != chunks - 1);
        }
    }
}

/* pool_run job: worker w sums its range of the parameters over the workers that took images
 * into net->grad, and applies the update when asked (PyTorch's SGD: g += wd*w; v = mu*v + g;
 * w -= lr*v). */
static void job_reduce(void *arg, int w, int nthreads)
{
    const struct job *jb = arg;
    struct cnn *net = jb->net;
    double t = net->profile ? now_s() : 0;
    /* ranges in whole cache lines */
    size_t lines = (net->L.nparam + 15) / 16;
    size_t lo = lines * (size_t)w / (size_t)nthreads * 16;
    size_t hi = lines * (size_t)(w + 1) / (size_t)nthreads * 16;
    if (hi > net->L.nparam)
        hi = net->L.nparam;
    if (lo >= hi)
        return;
    float *restrict g = net->grad;
    for (int k = 1; k < nthreads; k++) {
        if (net->wk[k].images == 0)
            continue;
        const float *restrict gk = net->wk[k].grad;
        for (size_t i = lo; i < hi; i++)
            g[i] += gk[i];
    }
    if (jb->update) {
        float *restrict p = net->param, *restrict v = net->vel;
        const float lr = jb->lr, mu = jb->momentum, wd = jb->weight_decay;
        for (size_t i = lo; i < hi; i++) {
            float d = g[i] + wd * p[i];
            v[i] = mu * v[i] + d;
            p[i] -= lr * v[i];
        }
    }
    if (w == 0)
        lap(net, &net->wk[0], PH_REDUCE, &t);
}

static double grad_and_maybe_update(struct cnn *net, const float *x, const int *labels, int n,
                                    int update, float lr, float momentum, float weight_decay)
{
    if (n <= 0)
        return NAN;
    for (int i = 0; i < n; i++) /* a bad label would index past the logits */
        if (labels[i] < 0 || labels[i] >= net->s.classes)
            return NAN;
    struct job jb = {.net = net, .kind = JOB_GRAD, .x = x, .labels = labels, .n = n,
                     .update = update, .lr = lr, .momentum = momentum,
                     .weight_decay = weight_decay};
    pool_run(net->pool, job_images, &jb);
    if (net->threads > 1 || update)
        pool_run(net->pool, job_reduce, &jb);
    double loss = 0;
    for (int k = 0; k < net->threads; k++)
        loss += net->wk[k].loss;
    return loss / n;
}

/* ---- the API ------------------------------------------------------------------------------ */

static void worker_free(struct cnn_worker *wk, int own_grad)
{
    if (own_grad)
        free(wk->grad);
    free(wk->col1);
    free(wk->y1);
    free(wk->col2);
    free(wk->y2);
    free(wk->dp1);
    free(wk->p1);
    free(wk->arg1);
    free(wk->p2);
    free(wk->arg2);
    free(wk->dp2);
    free(wk->h);
    free(wk->dh);
    free(wk->logits);
}

static int worker_alloc(const struct cnn *net, struct cnn_worker *wk, int own_grad)
{
    const size_t m = MICROBATCH, g = GROUP;
    const size_t np1 = (size_t)net->s.height * net->s.width, np2 = (size_t)net->L.h2 * net->L.w2;
    wk->grad = own_grad ? cnn_alloc(net->L.nparam, sizeof(float)) : net->grad;
    wk->col1 = cnn_alloc(m * np1 * (size_t)net->L.k1, sizeof(float));
    wk->y1 = cnn_alloc(m * np1 * C1, sizeof(float));
    wk->col2 = cnn_alloc(m * np2 * (size_t)net->L.k2, sizeof(float));
    wk->y2 = cnn_alloc(m * np2 * C2, sizeof(float));
    wk->dp1 = cnn_alloc(m * np2 * C1, sizeof(float));
    wk->p1 = cnn_alloc(g * np2 * C1, sizeof(float));
    wk->arg1 = cnn_alloc(g * np2 * C1, 1);
    wk->p2 = cnn_alloc(g * (size_t)net->L.d, sizeof(float));
    wk->arg2 = cnn_alloc(g * (size_t)net->L.d, 1);
    wk->dp2 = cnn_alloc(g * (size_t)net->L.d, sizeof(float));
    wk->h = cnn_alloc(g * F1, sizeof(float));
    wk->dh = cnn_alloc(g * F1, sizeof(float));
    wk->logits = cnn_alloc(g * (size_t)net->s.classes, sizeof(float));
    return wk->grad && wk->col1 && wk->y1 && wk->col2 && wk->y2 && wk->dp1 && wk->p1 &&
           wk->arg1 && wk->p2 && wk->arg2 && wk->dp2 && wk->h && wk->dh && wk->logits ? 0 : -1;
}

/* Fills n values uniform in [-bound, bound). */
static void init_uniform(struct rng *r, float *v, size_t n, double bound)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (float)((2.0 * rng_uniform(r) - 1.0) * bound);
}

struct cnn *cnn_create(const struct cnn_shape *shape, uint64_t seed, int threads, char *err,
                       size_t errlen)
{
    const int max_side = 4096;
    if (shape->height < 4 || shape->height > max_side || shape->height % 4 != 0) {
        snprintf(err, errlen,
                 "cnn: height %d must be a multiple of 4 from 4 to %d (two 2x2 max-pools)",
                 shape->height, max_side);
        return NULL;
    }
    if (shape->width < 4 || shape->width > max_side || shape->width % 4 != 0) {
        snprintf(err, errlen,
                 "cnn: width %d must be a multiple of 4 from 4 to %d (two 2x2 max-pools)",
                 shape->width, max_side);
        return NULL;
    }
    if (shape->channels < 1 || shape->channels > 1024) {
        snprintf(err, errlen, "cnn: channels %d must be from 1 to 1024", shape->channels);
        return NULL;
    }
    if (shape->classes < 2 || shape->classes > 1000000) {
        snprintf(err, errlen, "cnn: classes %d must be from 2 to 1000000", shape->classes);
        return NULL;
    }
    if (threads < 1 || threads > 1024) {
        snprintf(err, errlen, "cnn: threads %d must be from 1 to 1024", threads);
        return NULL;
    }
    struct cnn *net = calloc(1, sizeof *net);
    if (!net) {
        snprintf(err, errlen, "cnn: out of memory for the model");
        return NULL;
    }
    net->s = *shape;
    net->threads = threads;
    net->L = cnn_layout_of(shape);
    const size_t nc = (size_t)shape->classes;
    const char *prof = getenv("MLBENCH_CNN_PROFILE");
    net->profile = prof && *prof && strcmp(prof, "0") != 0;
    net->gemm_avx512 = cnn_gemm_avx512_available();

    net->param = cnn_alloc(net->L.nparam, sizeof(float));
    net->grad = cnn_alloc(net->L.nparam, sizeof(float));
    net->vel = cnn_alloc(net->L.nparam, sizeof(float));
    net->wk = calloc((size_t)threads, sizeof *net->wk);
    int ok = net->param && net->grad && net->vel && net->wk;
    for (int k = 0; ok && k < threads; k++)
        ok = worker_alloc(net, &net->wk[k], k > 0) == 0;
    if (!ok) {
        snprintf(err, errlen, "cnn: out of memory for %zu parameters and %d workers' buffers",
                 net->L.nparam, threads);
        cnn_free(net);
        return NULL;
    }
    net->pool = pool_create(threads);
    if (!net->pool) {
        snprintf(err, errlen, "cnn: cannot start %d threads", threads);
        cnn_free(net);
        return NULL;
    }
    /* Parallelism is ours (the pool); each worker's sgemm runs on its own thread. */
    openblas_set_num_threads(1);

    /* PyTorch's defaults: kaiming_uniform(a = sqrt(5)) for weights = U(+-1/sqrt(fan_in)), and
     * U(+-1/sqrt(fan_in)) for biases. */
    struct rng r;
    rng_seed(&r, seed);
    const struct {
        size_t w, b, wn, bn;
        double fan_in;
    } layers[4] = {
        {net->L.off_w1, net->L.off_b1, (size_t)net->L.k1 * C1, C1, net->L.k1},
        {net->L.off_w2, net->L.off_b2, (size_t)net->L.k2 * C2, C2, net->L.k2},
        {net->L.off_w3, net->L.off_b3, (size_t)net->L.d * F1, F1, net->L.d},
        {net->L.off_w4, net->L.off_b4, (size_t)F1 * nc, nc, F1},
    };
    for (int l = 0; l < 4; l++) {
        double bound = 1.0 / sqrt(layers[l].fan_in);
        init_uniform(&r, net->param + layers[l].w, layers[l].wn, bound);
        init_uniform(&r, net->param + layers[l].b, layers[l].bn, bound);
    }
    return net;
}

static void print_profile(const struct cnn *net)
{
    const struct cnn_worker *wk = &net->wk[0];
    double total = 0;
    for (int i = 0; i < PH_COUNT; i++)
        total += wk->phase_s[i];
    fprintf(stderr, "cnn profile (worker 0 of %d, %dx%dx%d, %s GEMM; im2col includes backward's"
                    " rebuilds): %.3f s CPU\n", net->threads, net->s.height, net->s.width,
            net->s.channels, net->gemm_avx512 ? "AVX-512" : "OpenBLAS", total);
    for (int i = 0; i < PH_COUNT; i++)
        fprintf(stderr, "  %-14s %8.3f s %5.1f %%\n", phase_names[i], wk->phase_s[i],
                total > 0 ? 100.0 * wk->phase_s[i] / total : 0.0);
}

void cnn_free(struct cnn *net)
{
    if (!net)
        return;
    if (net->profile && net->wk)
        print_profile(net);
    pool_free(net->pool);
    if (net->wk)
        for (int k = 0; k < net->threads; k++)
            worker_free(&net->wk[k], k > 0);
    free(net->wk);
    free(net->param);
    free(net->grad);
    free(net->vel);
    free(net);
}

double cnn_loss_grad(struct cnn *net, const float *x, const int *labels, int n)
{
    return grad_and_maybe_update(net, x, labels, n, 0, 0.0f, 0.0f, 0.0f);
}

double cnn_train_step(struct cnn *net, const float *x, const int *labels, int n, float lr,
                      float momentum, float weight_decay)
{
    return grad_and_maybe_update(net, x, labels, n, 1, lr, momentum, weight_decay);
}

int cnn_predict(struct cnn *net, const float *x, const int *labels, int n, int *out_class)
{
    if (n <= 0)
        return 0;
    struct job jb = {.net = net, .kind = JOB_PREDICT, .x = x, .labels = labels, .n = n,
                     .out_class = out_class};
    pool_run(net->pool, job_images, &jb);
    int correct = 0;
    for (int k = 0; k < net->threads; k++)
        correct += net->wk[k].correct;
    return correct;
}

size_t cnn_param_count(const struct cnn *net)
{
    return net->L.nparam;
}

float *cnn_params(struct cnn *net)
{
    return net->param;
}

const float *cnn_grads(const struct cnn *net)
{
    return net->grad;
}

/* FLOPs of one image, 2 per multiply-add, GEMMs only (bias, ReLU, pooling, im2col and the loss
 * are not counted). With P1 = H*W, P2 = H/2*W/2, D = 64*H/4*W/4 and K = classes:
 *   forward = 2*(P1*9*C*32 + P2*9*32*64 + D*128 + 128*K)
 *   train   = 3*forward - 2*P1*9*C*32: each layer's forward, weight gradient and input gradient
 *             GEMMs are the same size; conv1 has no input gradient.
 * 32x32x3, 10 classes: forward 12 257 792, train 35 003 904. */
double cnn_flops_forward(const struct cnn_shape *s)
{
    double p1 = (double)s->height * s->width, p2 = p1 / 4, d = (double)C2 * p1 / 16;
    return 2.0 * (p1 * 9 * s->channels * C1 + p2 * 9 * C1 * C2 + d * F1 + (double)F1 * s->classes);
}

double cnn_flops_train(const struct cnn_shape *s)
{
    double p1 = (double)s->height * s->width;
    return 3.0 * cnn_flops_forward(s) - 2.0 * p1 * 9 * s->channels * C1;
}
