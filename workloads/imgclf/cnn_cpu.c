/* cnn_cpu: the CPU backend of the reference small CNN (cnn.h): im2col + single-threaded sgemm
 * (cnn_gemm.h: our AVX-512 kernels when the CPU has AVX-512F, else OpenBLAS; in bf16 our
 * AVX512_BF16 kernels) for the convolutions and the fully connected layers, plain C for the
 * rest, data-parallel over micro-batches on a fork-join pool (common/pool.h).
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
 * In bf16 a pool_run 0 comes first: the workers pack the weights into the bf16 layout the GEMMs
 * read (each its share of the panels), once for the whole step.
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
 * MLBENCH_CNN_PROFILE=1 in the environment makes cnn_free print worker 0's CPU time per phase.
 *
 * The layers themselves are in cnn_layers.c; what both files share in cnn_cpu_private.h. */
#include "imgclf/cnn.h"

#include "imgclf/cnn_cpu_private.h"
#include "imgclf/cnn_gemm.h"

#include "common/cpu.h"
#include "common/pool.h"
#include "common/rng.h"

#include <cblas.h> /* openblas_set_num_threads */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const phase_names[PH_COUNT] = {
    "im2col1",   "conv1 gemm", "pool1",   "im2col2",   "conv2 gemm", "pool2",
    "fc fwd",    "loss",       "fc bwd",  "pool2 bwd", "conv2 dW",   "conv2 dX",
    "col2im",    "pool1 bwd",  "conv1 dW", "reduce+update"};

/* What one pool_run does. */
enum job_kind { JOB_GRAD, JOB_PREDICT, JOB_PACK };
struct job {
    struct cnn *net;
    enum job_kind kind;
    const float *x;
    const int *labels;
    int n;
    int *out_class;
    float *out_prob; /* JOB_PREDICT: the softmax of each image's logits, when not NULL */
    /* reduce + update */
    int update;
    float lr, momentum, weight_decay;
};

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

/* ---- the data-parallel steps --------------------------------------------------------------- */

/* pool_run job: worker w packs its share of the bf16 weights. */
static void job_pack(void *arg, int w, int nthreads)
{
    const struct job *jb = arg;
    cnn_pack_weights(jb->net, w, nthreads);
}

/* In bf16, packs the weights from the fp32 master weights: at the start of every call that
 * computes, so that an update, or a write through cnn_params, is always seen (it costs about
 * 0.2 ms of one core at 28x28, 1-2 % of a step of 128 images). */
static void refresh_weights(struct cnn *net)
{
    if (net->precision != CNN_BF16)
        return;
    struct job jb = {.net = net, .kind = JOB_PACK};
    pool_run(net->pool, job_pack, &jb);
}

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

/* The softmax of the nc logits z into p (max-subtracted, so that exp cannot overflow). */
static void softmax_row(const float *z, int nc, float *p)
{
    float mx = z[0];
    for (int j = 1; j < nc; j++)
        mx = z[j] > mx ? z[j] : mx;
    double sum = 0;
    for (int j = 0; j < nc; j++) {
        p[j] = expf(z[j] - mx);
        sum += p[j];
    }
    const float inv = (float)(1.0 / sum); /* sum >= 1: one term is exp(0) */
    for (int j = 0; j < nc; j++)
        p[j] *= inv;
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
            cnn_conv_forward(net, wk, xg + (size_t)a * in_size, m, wk->p1 + (size_t)a * p1_size,
                             wk->arg1 + (size_t)a * p1_size, wk->p2 + (size_t)a * p2_size,
                             wk->arg2 + (size_t)a * p2_size);
        }
        cnn_fc_forward(net, wk, g);
        if (jb->kind == JOB_PREDICT) {
            for (int i = 0; i < g; i++) {
                const float *z = wk->logits + (size_t)i * net->s.classes;
                int k = argmax_row(z, net->s.classes);
                if (jb->out_prob)
                    softmax_row(z, net->s.classes,
                                jb->out_prob + (size_t)(g0 + i) * net->s.classes);
                if (jb->out_class)
                    jb->out_class[g0 + i] = k;
                if (jb->labels && k == jb->labels[g0 + i])
                    wk->correct++;
            }
            continue;
        }
        cnn_loss_backward(net, wk, jb->labels + g0, g, scale);
        cnn_fc_backward(net, wk, g, gi == 0 ? 0.0f : 1.0f);
        /* last micro-batch first: its im2col matrices are still in the scratch */
        for (int c = chunks - 1; c >= 0; c--) {
            const int a = split_at(g, chunks, c), m = split_at(g, chunks, c + 1) - a;
            cnn_conv_backward(net, wk, xg + (size_t)a * in_size, m, wk->p1 + (size_t)a * p1_size,
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
    refresh_weights(net);
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
    free(wk->p1h);
    free(wk->y2);
    free(wk->dp1);
    free(wk->p1);
    free(wk->arg1);
    free(wk->p2);
    free(wk->p2h);
    free(wk->arg2);
    free(wk->dp2);
    free(wk->h);
    free(wk->dh);
    free(wk->logits);
}

/* cnn_alloc's size of count elements of elem bytes. */
static double alloc_bytes(size_t count, size_t elem)
{
    return (double)((count ? count : 1) * elem + 63) / 64 * 64;
}

/* Offsets of the packed bf16 weights in one buffer (each 64-byte aligned); returns its size. */
static size_t wpack_layout(const struct cnn *net, size_t *off)
{
    size_t total = 0;
    for (int wp = 0; wp < WP_COUNT; wp++) {
        size_t param_off;
        int n, k, trans;
        cnn_wpack_shape(net, (enum wpack)wp, &param_off, &n, &k, &trans);
        if (off)
            off[wp] = total;
        total += (cnn_gemm_bf16_packed_size(n, k) + 63) / 64 * 64;
    }
    return total;
}

double cnn_memory_bytes(const struct cnn_shape *shape, int threads, enum cnn_precision p)
{
    const struct cnn_layout L = cnn_layout_of(shape);
    const size_t m = MICROBATCH, g = GROUP, f = sizeof(float);
    const size_t np1 = (size_t)shape->height * shape->width, np2 = (size_t)L.h2 * L.w2;
    double worker = alloc_bytes(m * np1 * (size_t)L.k1, f) + alloc_bytes(m * np1 * C1, f) +
                    alloc_bytes(m * np2 * (size_t)L.k2, f) + alloc_bytes(m * np2 * C1, 2) +
                    alloc_bytes(m * np2 * C2, f) +
                    alloc_bytes(m * np2 * C1, f) + alloc_bytes(g * np2 * C1, f) +
                    alloc_bytes(g * np2 * C1, 1) + alloc_bytes(g * (size_t)L.d, f) +
                    alloc_bytes(g * (size_t)L.d, 1) + alloc_bytes(g * (size_t)L.d, f) +
                    alloc_bytes(g * (size_t)L.d, 2) + 2 * alloc_bytes(g * F1, f) + alloc_bytes(g * (size_t)shape->classes, f);
    struct cnn probe = {.s = *shape, .L = L};
    double wpack = p == CNN_BF16 ? alloc_bytes(wpack_layout(&probe, NULL), 1) +
                                       alloc_bytes((size_t)L.k1 * C1, f)
                                 : 0;
    /* param, grad, vel; each worker but the first has its own gradient */
    return (3 + (threads - 1)) * alloc_bytes(L.nparam, f) + threads * worker +
           (double)threads * sizeof(struct cnn_worker) + sizeof(struct cnn) + wpack;
}

static int worker_alloc(const struct cnn *net, struct cnn_worker *wk, int own_grad)
{
    const size_t m = MICROBATCH, g = GROUP;
    const size_t np1 = (size_t)net->s.height * net->s.width, np2 = (size_t)net->L.h2 * net->L.w2;
    wk->grad = own_grad ? cnn_alloc(net->L.nparam, sizeof(float)) : net->grad;
    wk->col1 = cnn_alloc(m * np1 * (size_t)net->L.k1, sizeof(float));
    wk->y1 = cnn_alloc(m * np1 * C1, sizeof(float));
    wk->col2 = cnn_alloc(m * np2 * (size_t)net->L.k2, sizeof(float));
    wk->p1h = cnn_alloc(m * np2 * C1, sizeof(uint16_t));
    wk->y2 = cnn_alloc(m * np2 * C2, sizeof(float));
    wk->dp1 = cnn_alloc(m * np2 * C1, sizeof(float));
    wk->p1 = cnn_alloc(g * np2 * C1, sizeof(float));
    wk->arg1 = cnn_alloc(g * np2 * C1, 1);
    wk->p2 = cnn_alloc(g * (size_t)net->L.d, sizeof(float));
    wk->p2h = cnn_alloc(g * (size_t)net->L.d, sizeof(uint16_t));
    wk->arg2 = cnn_alloc(g * (size_t)net->L.d, 1);
    wk->dp2 = cnn_alloc(g * (size_t)net->L.d, sizeof(float));
    wk->h = cnn_alloc(g * F1, sizeof(float));
    wk->dh = cnn_alloc(g * F1, sizeof(float));
    wk->logits = cnn_alloc(g * (size_t)net->s.classes, sizeof(float));
    return wk->grad && wk->col1 && wk->y1 && wk->col2 && wk->p1h && wk->y2 && wk->dp1 && wk->p1 &&
           wk->arg1 && wk->p2 && wk->p2h && wk->arg2 && wk->dp2 && wk->h && wk->dh && wk->logits ? 0 : -1;
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
        snprintf(err, errlen, "cnn: cannot allocate the model");
        errno = ENOMEM;
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
        snprintf(err, errlen, "cnn: cannot allocate %zu parameters and %d workers' buffers",
                 net->L.nparam, threads);
        cnn_free(net);
        errno = ENOMEM;
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
            net->s.channels, cnn_kernel(net), total);
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
    free(net->wpack);
    free(net->w1r);
    free(net);
}

int cnn_set_precision(struct cnn *net, enum cnn_precision p, char *err, size_t errlen)
{
    if (p == CNN_BF16 && !cnn_gemm_bf16_available()) {
        snprintf(err, errlen, "this CPU has no AVX512_BF16%s",
                 wl_cpu_disabled(WL_CPU_AVX512_BF16) ? " (MLBENCH_CPU_DISABLE removed it)" : "");
        return -1;
    }
    if (p == CNN_BF16 && !net->wpack) {
        net->wpack = cnn_alloc(wpack_layout(net, net->wpack_off), 1);
        net->w1r = cnn_alloc((size_t)net->L.k1 * C1, sizeof(float));
        if (!net->wpack || !net->w1r) {
            snprintf(err, errlen, "cnn: cannot allocate the bf16 weights");
            errno = ENOMEM;
            return -1;
        }
    }
    net->precision = p;
    return 0;
}

const char *cnn_kernel(const struct cnn *net)
{
    return net->precision == CNN_BF16 ? "avx512_bf16" : net->gemm_avx512 ? "avx512f" : "openblas";
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

void cnn_sgd_update(struct cnn *net, const float *grad, float scale, float lr, float momentum,
                    float weight_decay)
{
    float *restrict p = net->param, *restrict v = net->vel;
    const float *restrict g = grad;
    for (size_t i = 0; i < net->L.nparam; i++) { /* as job_reduce's update */
        float d = g[i] * scale + weight_decay * p[i];
        v[i] = momentum * v[i] + d;
        p[i] -= lr * v[i];
    }
}

int cnn_predict(struct cnn *net, const float *x, const int *labels, int n, int *out_class)
{
    if (n <= 0)
        return 0;
    struct job jb = {.net = net, .kind = JOB_PREDICT, .x = x, .labels = labels, .n = n,
                     .out_class = out_class};
    refresh_weights(net);
    pool_run(net->pool, job_images, &jb);
    int correct = 0;
    for (int k = 0; k < net->threads; k++)
        correct += net->wk[k].correct;
    return correct;
}

int cnn_predict_proba(struct cnn *net, const float *x, int n, float *out_prob, int *out_class)
{
    if (n <= 0)
        return -1;
    struct job jb = {.net = net, .kind = JOB_PREDICT, .x = x, .n = n, .out_class = out_class,
                     .out_prob = out_prob};
    refresh_weights(net);
    pool_run(net->pool, job_images, &jb);
    return 0;
}

struct cnn_shape cnn_shape_of(const struct cnn *net)
{
    return net->s;
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