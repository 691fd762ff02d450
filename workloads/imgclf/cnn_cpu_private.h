/* cnn_cpu_private: what the two files of the CNN's CPU backend share (cnn_cpu.c: the model, its
 * data-parallel steps and the API of cnn.h; cnn_layers.c: the layers' forward and backward
 * passes): the tuning constants, the model and worker structs, and the profile's timer. Not for
 * other files: they see cnn.h. The layouts are described in cnn_cpu.c's first comment. */
#ifndef MLBENCH_WL_CNN_CPU_PRIVATE_H
#define MLBENCH_WL_CNN_CPU_PRIVATE_H

#include "imgclf/cnn.h"

#include <stdint.h>
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

/* One worker's buffers: scratch for one micro-batch (m <= MICROBATCH images) and the kept
 * activations of one group (g <= GROUP images). */
struct cnn_worker {
    float *grad;    /* its gradient sums (net->grad for worker 0) */
    float *col1;    /* im2col of the input: m*P1 x 9*C */
    float *y1;      /* conv1 output before bias (m*P1 x C1); its gradient in backward */
    float *col2;    /* im2col of p1: m*P2 x 9*C1 (in bf16 for CNN_BF16); its gradient (fp32) in
                     * backward */
    uint16_t *p1h;  /* CNN_BF16: a micro-batch's p1 in bf16, for its im2col */
    float *y2;      /* conv2 output before bias (m*P2 x C2); its gradient in backward */
    float *dp1;     /* gradient of a micro-batch's p1 */
    float *p1;      /* pooled conv1 block output, NHWC g x H2 x W2 x C1 */
    unsigned char *arg1; /* argmax in the 2x2 window of each p1 value */
    float *p2;      /* pooled conv2 block output = fc1 input, g x D */
    uint16_t *p2h;  /* CNN_BF16: p2 in bf16 */
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

/* The weights in the bf16 layout of cnn_gemm_bf16_packed, one per GEMM that multiplies by a
 * weight matrix: as they are (forward) and transposed (input gradients). */
enum wpack { WP_W1, WP_W2, WP_W2T, WP_W3, WP_W3T, WP_W4, WP_W4T, WP_COUNT };

struct cnn {
    struct cnn_shape s;
    int threads;
    struct pool *pool;
    struct cnn_layout L;
    float *param, *grad, *vel;
    struct cnn_worker *wk;
    int profile;
    int gemm_avx512; /* gemm() uses cnn_gemm_avx512 (the CPU has AVX-512F) */
    enum cnn_precision precision;
    unsigned char *wpack;         /* CNN_BF16: the packed weights, one buffer */
    size_t wpack_off[WP_COUNT];   /* where each starts in it */
    float *w1r;                   /* CNN_BF16: conv1's weights rounded to bf16 (conv1_gemm) */
};

/* The calling thread's CPU time: the profile should not count time the thread waited for a core
 * (the machines this runs on are shared). */
static inline double now_s(void)
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

/* ---- cnn_layers.c ---- */

/* Packs the weights for CNN_BF16: worker w of nthreads does its share of each matrix's panels. */
void cnn_pack_weights(const struct cnn *net, int w, int nthreads);
/* Where weight matrix wp comes from, its GEMM shape (op(B) is k x n) and transpose. */
void cnn_wpack_shape(const struct cnn *net, enum wpack wp, size_t *param_off, int *n, int *k,
                     int *trans);

/* Conv forward of m images x (NHWC): their pooled conv outputs and argmaxes go to p1/arg1
 * (m x H2 x W2 x C1) and p2/arg2 (m x D); wk's scratch keeps the last im2col matrices. */
void cnn_conv_forward(const struct cnn *net, struct cnn_worker *wk, const float *x, int m,
                      float *p1, unsigned char *arg1, float *p2, unsigned char *arg2);

/* The fully connected layers of g images: wk->p2 -> wk->h -> wk->logits. */
void cnn_fc_forward(const struct cnn *net, struct cnn_worker *wk, int g);

/* Softmax cross-entropy of wk->logits (g images) against labels: adds the losses to wk->loss
 * and replaces the logits by the gradient of the batch-mean loss (scale = 1 / batch size). */
void cnn_loss_backward(const struct cnn *net, struct cnn_worker *wk, const int *labels, int g,
                       float scale);

/* Backward of the fully connected layers of g images, after cnn_loss_backward: adds (beta 1) or
 * writes (beta 0) their weight gradients, adds their bias gradients, and leaves the gradient of
 * p2 in wk->dp2. */
void cnn_fc_backward(const struct cnn *net, struct cnn_worker *wk, int g, float beta);

/* Conv backward of m images x whose kept activations are p1/arg1, p2/arg2 and whose gradient of
 * p2 is dp2; adds (beta 1) or writes (beta 0) the conv weight gradients, adds the bias
 * gradients. rebuild: the scratch im2col matrices are not these images' (rebuild them). */
void cnn_conv_backward(const struct cnn *net, struct cnn_worker *wk, const float *x, int m,
                       const float *p1, const unsigned char *arg1, const float *p2,
                       const unsigned char *arg2, const float *dp2, float beta, int rebuild);

#endif
