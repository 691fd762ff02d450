/* cnn_layers: the layers of the CNN's CPU backend (cnn_cpu_private.h), each pass over a
 * micro-batch or a group of one worker: im2col and col2im of the 3x3 convolutions, the fused
 * bias + ReLU + 2x2 max-pool and its backward, the GEMM dispatch (cnn_gemm.h), and the forward
 * and backward passes of the conv and fully connected layers with the softmax cross-entropy.
 * Layouts and the order of a step: cnn_cpu.c's first comment. */
#include "imgclf/cnn_cpu_private.h"

#include "imgclf/cnn_gemm.h"

#include <math.h>
#include <string.h>

/* im2col of a 3x3, pad-1 convolution over m NHWC images h x w x c (w >= 2) of es-byte elements
 * (floats, or bf16 for the bf16 path): col is (m*h*w) x (9*c), row (i, y, x) holding the input
 * pixels (y-1..y+1, x-1..x+1) in [kh][kw][c] order, 0 outside. Inlined for floats with 1 and 3
 * channels so that the copies of 3*c elements have a small constant size (a memcpy call per 9
 * floats was most of conv1's im2col); wider rows go through memcpy calls, which beat the rep
 * movs the compiler inlines for a constant 384 bytes. */
static inline __attribute__((always_inline)) void
im2col3x3_body(const void *restrict input, int m, int h, int w, int c, size_t es,
               void *restrict output)
{
    const unsigned char *in = input;
    unsigned char *col = output;
    const size_t k = (size_t)9 * c * es, row3 = (size_t)3 * c * es, px = (size_t)c * es;
    for (int i = 0; i < m; i++) {
        const unsigned char *img = in + (size_t)i * h * w * px;
        for (int y = 0; y < h; y++) {
            unsigned char *rowdst = col + ((size_t)i * h + y) * w * k;
            for (int kh = 0; kh < 3; kh++) {
                int iy = y + kh - 1;
                if (iy < 0 || iy >= h) {
                    for (int x = 0; x < w; x++)
                        memset(rowdst + x * k + kh * row3, 0, row3);
                    continue;
                }
                const unsigned char *src = img + (size_t)iy * w * px;
                unsigned char *dst = rowdst + kh * row3;
                /* x = 0: left neighbour outside */
                memset(dst, 0, px);
                memcpy(dst + px, src, 2 * px);
                for (int x = 1; x < w - 1; x++)
                    memcpy(dst + x * k, src + (size_t)(x - 1) * px, row3);
                /* x = w - 1: right neighbour outside */
                dst += (size_t)(w - 1) * k;
                memcpy(dst, src + (size_t)(w - 2) * px, 2 * px);
                memset(dst + 2 * px, 0, px);
            }
        }
    }
}

static void im2col3x3(const float *restrict in, int m, int h, int w, int c, float *restrict col)
{
    switch (c) {
    case 1:
        im2col3x3_body(in, m, h, w, 1, sizeof(float), col);
        break;
    case 3:
        im2col3x3_body(in, m, h, w, 3, sizeof(float), col);
        break;
    default:
        im2col3x3_body(in, m, h, w, c, sizeof(float), col);
    }
}

/* conv2's im2col in the bf16 path: p1 (m x h x w x C1) rounded to bf16 into wk->p1h, then its
 * im2col in bf16 into wk->col2 (half the bytes to move, and the GEMM reads it in place). */
static void im2col3x3_bf16(const struct cnn_worker *wk, const float *p1, int m, int h, int w)
{
    cnn_bf16_convert(p1, wk->p1h, (size_t)m * h * w * C1);
    im2col3x3_body(wk->p1h, m, h, w, C1, sizeof(uint16_t), wk->col2);
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
 * transposes as flagged; beta 0 overwrites C, 1 adds to it. The one dispatch between the
 * kernels: in bf16 cnn_gemm_bf16 (cnn_gemm_bf16.c), with B from the packed weights when wp
 * names the weight matrix B is (wp < 0: B is an activation or a gradient, packed on the fly);
 * in fp32 our AVX-512 kernels (cnn_gemm_avx512.c) when the CPU has AVX-512F, for every GEMM
 * here, else OpenBLAS. Measured on one Zen 5 core with OPENBLAS_CORETYPE=Haswell, fp32 GFLOP/s
 * ours vs OpenBLAS: conv GEMMs 215-263 vs 55-123, fc1 forward and weight gradient 200-208 vs
 * 106-116, fc1 input gradient 128 vs 97; only fc2's weight gradient (10 columns) is slower (50
 * vs 66), too small to be worth a second path. */
static void gemm(const struct cnn *net, int ta, int tb, int rows, int cols, int inner,
                 const float *a, const float *b, int wp, float beta, float *c)
{
    const int lda = ta ? rows : inner, ldb = tb ? inner : cols;
    if (net->precision == CNN_BF16) {
        const struct cnn_bf16_gemm g = {
            .trans_a = ta, .trans_b = tb, .m = rows, .n = cols, .k = inner, .a = a, .lda = lda,
            .b = wp >= 0 ? NULL : b, .ldb = ldb,
            .b_packed = wp >= 0 ? net->wpack + net->wpack_off[wp] : NULL, .beta = beta, .c = c,
            .ldc = cols};
        cnn_gemm_bf16_run(&g);
    } else if (net->gemm_avx512)
        cnn_gemm_avx512(ta, tb, rows, cols, inner, a, lda, b, ldb, beta, c, cols);
    else
        cnn_gemm_blas(ta, tb, rows, cols, inner, a, lda, b, ldb, beta, c, cols);
}

/* The same in bf16 with A already in bf16 (a16: an im2col matrix or p2, converted once for the
 * GEMMs that read it). */
static void gemm16(const struct cnn *net, int ta, int rows, int cols, int inner,
                   const uint16_t *a16, const float *b, int wp, float beta, float *c)
{
    const struct cnn_bf16_gemm g = {
        .trans_a = ta, .m = rows, .n = cols, .k = inner, .a16 = a16, .lda = ta ? rows : inner,
        .b = wp >= 0 ? NULL : b, .ldb = cols,
        .b_packed = wp >= 0 ? net->wpack + net->wpack_off[wp] : NULL, .beta = beta, .c = c,
        .ldc = cols};
    cnn_gemm_bf16_run(&g);
}

/* conv1's GEMMs, forward (ta 0: the im2col matrix a times the weights) and weight gradient
 * (ta 1: a^T times b, the output gradient). k is 9 x channels (9 or 27) in the forward pass, too
 * shallow for the bf16 kernel, which spends such a call loading and storing C (measured 25-40 %
 * slower than the fp32 kernel on both). So in bf16 the operands are rounded to bf16 and kept as
 * floats -- a and b in place (they are scratch only these GEMMs read; rounding twice changes
 * nothing), the weights in cnn_pack_weights -- and the fp32 kernel multiplies them: a product of
 * two bf16 values is exact in fp32, so this is the bf16 GEMM's arithmetic (fp32 sums) on the
 * faster kernel. */
static void conv1_gemm(const struct cnn *net, int ta, int rows, int cols, int inner, float *a,
                       float *b, float beta, float *c)
{
    const int lda = ta ? rows : inner;
    if (net->precision != CNN_BF16) {
        gemm(net, ta, 0, rows, cols, inner, a, b, ta ? -1 : WP_W1, beta, c);
        return;
    }
    cnn_bf16_round_in_place(a, (size_t)rows * inner);
    if (ta)
        cnn_bf16_round_in_place(b, (size_t)inner * cols);
    cnn_gemm_avx512(ta, 0, rows, cols, inner, a, lda, ta ? b : net->w1r, cols, beta, c, cols);
}

void cnn_wpack_shape(const struct cnn *net, enum wpack wp, size_t *param_off, int *n, int *k,
                     int *trans)
{
    const struct cnn_layout *L = &net->L;
    const int nc = net->s.classes;
    /* op(B) of each weight GEMM below: W as stored (inputs x outputs) in the forward pass, W^T
     * in the input gradient */
    const struct {
        size_t off;
        int n, k, trans;
    } t[WP_COUNT] = {
        [WP_W1] = {L->off_w1, C1, L->k1, 0},  [WP_W2] = {L->off_w2, C2, L->k2, 0},
        [WP_W2T] = {L->off_w2, L->k2, C2, 1}, [WP_W3] = {L->off_w3, F1, L->d, 0},
        [WP_W3T] = {L->off_w3, L->d, F1, 1},  [WP_W4] = {L->off_w4, nc, F1, 0},
        [WP_W4T] = {L->off_w4, F1, nc, 1},
    };
    *param_off = t[wp].off;
    *n = t[wp].n;
    *k = t[wp].k;
    *trans = t[wp].trans;
}

void cnn_pack_weights(const struct cnn *net, int w, int nthreads)
{
    if (w == 0) { /* conv1's weights as bf16 values in floats (conv1_gemm) */
        const size_t n = (size_t)net->L.k1 * C1;
        memcpy(net->w1r, net->param + net->L.off_w1, n * sizeof *net->w1r);
        cnn_bf16_round_in_place(net->w1r, n);
    }
    for (int wp = 0; wp < WP_COUNT; wp++) {
        size_t off;
        int n, k, trans;
        cnn_wpack_shape(net, (enum wpack)wp, &off, &n, &k, &trans);
        const int panels = (n + 31) / 32;
        cnn_gemm_bf16_pack(trans, n, k, net->param + off, trans ? k : n,
                           net->wpack + net->wpack_off[wp], panels * w / nthreads,
                           panels * (w + 1) / nthreads);
    }
}

/* Conv forward of m images x (NHWC): their pooled conv outputs and argmaxes go to p1/arg1
 * (m x H2 x W2 x C1) and p2/arg2 (m x D); wk's scratch keeps the last im2col matrices. */
void cnn_conv_forward(const struct cnn *net, struct cnn_worker *wk, const float *x, int m,
                      float *p1, unsigned char *arg1, float *p2, unsigned char *arg2)
{
    const struct cnn_shape *s = &net->s;
    const float *par = net->param;
    const int np1 = s->height * s->width, np2 = net->L.h2 * net->L.w2;
    double t = net->profile ? now_s() : 0;

    im2col3x3(x, m, s->height, s->width, s->channels, wk->col1);
    lap(net, wk, PH_IM2COL1, &t);
    conv1_gemm(net, 0, m * np1, C1, net->L.k1, wk->col1, (float *)(par + net->L.off_w1), 0.0f,
               wk->y1);
    lap(net, wk, PH_CONV1, &t);
    pool_forward(wk->y1, par + net->L.off_b1, m, s->height, s->width, C1, p1, arg1);
    lap(net, wk, PH_POOL1, &t);

    if (net->precision == CNN_BF16) {
        im2col3x3_bf16(wk, p1, m, net->L.h2, net->L.w2);
        lap(net, wk, PH_IM2COL2, &t);
        gemm16(net, 0, m * np2, C2, net->L.k2, (const uint16_t *)wk->col2, NULL, WP_W2, 0.0f,
               wk->y2);
    } else {
        im2col3x3(p1, m, net->L.h2, net->L.w2, C1, wk->col2);
        lap(net, wk, PH_IM2COL2, &t);
        gemm(net, 0, 0, m * np2, C2, net->L.k2, wk->col2, par + net->L.off_w2, WP_W2, 0.0f,
             wk->y2);
    }
    lap(net, wk, PH_CONV2, &t);
    pool_forward(wk->y2, par + net->L.off_b2, m, net->L.h2, net->L.w2, C2, p2, arg2);
    lap(net, wk, PH_POOL2, &t);
}

/* The fully connected layers of g images: wk->p2 -> wk->h -> wk->logits. */
void cnn_fc_forward(const struct cnn *net, struct cnn_worker *wk, int g)
{
    const float *par = net->param;
    const int nc = net->s.classes;
    double t = net->profile ? now_s() : 0;
    if (net->precision == CNN_BF16) { /* p2 in bf16 once, for fc1's forward and weight gradient */
        cnn_bf16_convert(wk->p2, wk->p2h, (size_t)g * net->L.d);
        gemm16(net, 0, g, F1, net->L.d, wk->p2h, NULL, WP_W3, 0.0f, wk->h);
    } else {
        gemm(net, 0, 0, g, F1, net->L.d, wk->p2, par + net->L.off_w3, WP_W3, 0.0f, wk->h);
    }
    const float *b3 = par + net->L.off_b3;
    for (int i = 0; i < g; i++) {
        float *hi = wk->h + (size_t)i * F1;
        for (int j = 0; j < F1; j++) {
            float v = hi[j] + b3[j];
            hi[j] = v > 0.0f ? v : 0.0f;
        }
    }
    gemm(net, 0, 0, g, nc, F1, wk->h, par + net->L.off_w4, WP_W4, 0.0f, wk->logits);
    const float *b4 = par + net->L.off_b4;
    for (int i = 0; i < g; i++)
        for (int j = 0; j < nc; j++)
            wk->logits[(size_t)i * nc + j] += b4[j];
    lap(net, wk, PH_FC_FWD, &t);
}

/* Softmax cross-entropy of wk->logits (g images) against labels: adds the losses to wk->loss
 * and replaces the logits by the gradient of the batch-mean loss (scale = 1 / batch size). */
void cnn_loss_backward(const struct cnn *net, struct cnn_worker *wk, const int *labels, int g,
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

/* Backward of the fully connected layers of g images, after cnn_loss_backward: adds (beta 1) or
 * writes (beta 0) their weight gradients, adds their bias gradients, and leaves the gradient of
 * p2 in wk->dp2. */
void cnn_fc_backward(const struct cnn *net, struct cnn_worker *wk, int g, float beta)
{
    const float *par = net->param;
    float *grad = wk->grad;
    const int nc = net->s.classes;
    double t = net->profile ? now_s() : 0;
    gemm(net, 1, 0, F1, nc, g, wk->h, wk->logits, -1, beta, grad + net->L.off_w4);
    for (int i = 0; i < g; i++)
        for (int j = 0; j < nc; j++)
            grad[net->L.off_b4 + j] += wk->logits[(size_t)i * nc + j];
    /* dh = dlogits W4^T, through fc1's ReLU */
    float *dh = wk->dh;
    gemm(net, 0, 1, g, F1, nc, wk->logits, par + net->L.off_w4, WP_W4T, 0.0f, dh);
    for (size_t i = 0; i < (size_t)g * F1; i++)
        dh[i] = wk->h[i] > 0.0f ? dh[i] : 0.0f;
    for (int i = 0; i < g; i++)
        for (int j = 0; j < F1; j++)
            grad[net->L.off_b3 + j] += dh[(size_t)i * F1 + j];
    if (net->precision == CNN_BF16) /* p2h: cnn_fc_forward's */
        gemm16(net, 1, net->L.d, F1, g, wk->p2h, dh, -1, beta, grad + net->L.off_w3);
    else
        gemm(net, 1, 0, net->L.d, F1, g, wk->p2, dh, -1, beta, grad + net->L.off_w3);
    gemm(net, 0, 1, g, net->L.d, F1, dh, par + net->L.off_w3, WP_W3T, 0.0f, wk->dp2);
    lap(net, wk, PH_FC_BWD, &t);
}

/* Conv backward of m images x whose kept activations are p1/arg1, p2/arg2 and whose gradient of
 * p2 is dp2; adds (beta 1) or writes (beta 0) the conv weight gradients, adds the bias
 * gradients. rebuild: the scratch im2col matrices are not these images' (rebuild them). */
void cnn_conv_backward(const struct cnn *net, struct cnn_worker *wk, const float *x, int m,
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
    const int bf16 = net->precision == CNN_BF16;
    if (rebuild) {
        if (bf16)
            im2col3x3_bf16(wk, p1, m, net->L.h2, net->L.w2);
        else
            im2col3x3(p1, m, net->L.h2, net->L.w2, C1, wk->col2);
        lap(net, wk, PH_IM2COL2, &t);
    }
    if (bf16) { /* the im2col matrix is in bf16 (im2col3x3_bf16) */
        gemm16(net, 1, net->L.k2, C2, m * np2, (const uint16_t *)wk->col2, wk->y2, -1, beta,
               grad + net->L.off_w2);
    } else {
        gemm(net, 1, 0, net->L.k2, C2, m * np2, wk->col2, wk->y2, -1, beta,
             grad + net->L.off_w2);
    }
    lap(net, wk, PH_CONV2_DW, &t);
    gemm(net, 0, 1, m * np2, net->L.k2, C2, wk->y2, par + net->L.off_w2, WP_W2T, 0.0f,
         wk->col2);
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
    conv1_gemm(net, 1, net->L.k1, C1, m * np1, wk->col1, wk->y1, beta, grad + net->L.off_w1);
    lap(net, wk, PH_CONV1_DW, &t);
}
