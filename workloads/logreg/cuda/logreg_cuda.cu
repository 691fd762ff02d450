// logreg_cuda: the logistic-regression objective of `mlbench-workload logreg --device cuda`
// (common/cuda_backend.h): X and y stay on the GPU; an evaluation uploads w and b (d + 1
// doubles), runs a row pass (z = x_i'w + b per warp, loss and r = sigmoid(z) - y) and a column
// pass (g = X'r, double atomics per column tile), and downloads the gradient and the loss.
// L-BFGS itself runs on the host on these d + 1 numbers (logreg/lbfgs.c, the same solver as
// the CPU path), so iteration counts and stopping points compare with it.
#include "common/cuda/cuda_check.cuh"

#include <cmath>
#include <cstdlib>

struct cuda_logreg {
    long n, d;
    double inv_C;
    float *X, *y;
    double *r;     // n residuals
    double *w;     // d + 1: w, then b
    double *out;   // d + 2: gradient of the data term, then the loss and the sum of r
    char error[256];
};

#define ROW_WARPS 8
#define COL_ROWS 512
#define COL_TILE 256

// One warp per row: z, the row's log-loss log(1 + e^z) - y z and residual sigmoid(z) - y.
static __global__ void row_pass(const float *X, const float *y, const double *w, long n, long d,
                                double *r, double *out)
{
    __shared__ double loss_s[ROW_WARPS], rsum_s[ROW_WARPS];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const long i = (long)blockIdx.x * ROW_WARPS + warp;
    double loss = 0, ri = 0;
    if (i < n) {
        const float *x = X + i * d;
        double z = 0;
        for (long j = lane; j < d; j += 32)
            z += (double)x[j] * w[j];
        for (int off = 16; off > 0; off /= 2)
            z += __shfl_down_sync(0xffffffffu, z, off);
        if (lane == 0) {
            z += w[d];
            double yi = y[i];
            loss = fmax(z, 0.0) + log1p(exp(-fabs(z))) - yi * z;
            ri = 1.0 / (1.0 + exp(-z)) - yi;
            r[i] = ri;
        }
    }
    if (lane == 0) {
        loss_s[warp] = loss;
        rsum_s[warp] = ri;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        double l = 0, s = 0;
        for (int k = 0; k < ROW_WARPS; k++) {
            l += loss_s[k];
            s += rsum_s[k];
        }
        atomicAdd(&out[d], l);
        atomicAdd(&out[d + 1], s);
    }
}

// g_j += sum over a chunk of COL_ROWS rows of X_ij r_i, one thread per column of a tile.
static __global__ void col_pass(const float *X, const double *r, long n, long d, double *out)
{
    const long j = (long)blockIdx.y * COL_TILE + threadIdx.x;
    const long first = (long)blockIdx.x * COL_ROWS;
    if (j >= d)
        return;
    long last = first + COL_ROWS < n ? first + COL_ROWS : n;
    double acc = 0;
    for (long i = first; i < last; i++)
        acc += (double)X[i * d + j] * r[i];
    atomicAdd(&out[j], acc);
}

struct cuda_logreg *cuda_logreg_create(const float *X, const float *y, long n, long d, double C,
                                       char *err, size_t errlen)
{
    struct cuda_logreg *g = (struct cuda_logreg *)calloc(1, sizeof *g);
    if (!g) {
        snprintf(err, errlen, "out of memory");
        return nullptr;
    }
    g->n = n;
    g->d = d;
    g->inv_C = 1.0 / C;
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaMalloc((void **)&g->X, (size_t)n * d * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g->y, (size_t)n * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&g->r, (size_t)n * sizeof(double)));
    CUDA_CHECK(cudaMalloc((void **)&g->w, (size_t)(d + 1) * sizeof(double)));
    CUDA_CHECK(cudaMalloc((void **)&g->out, (size_t)(d + 2) * sizeof(double)));
    CUDA_CHECK(cudaMemcpy(g->X, X, (size_t)n * d * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(g->y, y, (size_t)n * sizeof(float), cudaMemcpyHostToDevice));
    return g;
out:
    cuda_logreg_free(g);
    return nullptr;
}

double cuda_logreg_eval(struct cuda_logreg *g, const double *wb, double *grad)
{
    char *err = g->error;
    const size_t errlen = sizeof g->error;
    const long d = g->d;
    double *host = (double *)malloc((size_t)(d + 2) * sizeof(double));
    double f = NAN;
    if (!host) {
        snprintf(err, errlen, "out of memory");
        return NAN;
    }
    dim3 cols((unsigned)((g->n + COL_ROWS - 1) / COL_ROWS), (unsigned)((d + COL_TILE - 1) / COL_TILE));
    CUDA_CHECK(cudaMemcpy(g->w, wb, (size_t)(d + 1) * sizeof(double), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(g->out, 0, (size_t)(d + 2) * sizeof(double)));
    row_pass<<<(unsigned)((g->n + ROW_WARPS - 1) / ROW_WARPS), 32 * ROW_WARPS>>>(
        g->X, g->y, g->w, g->n, d, g->r, g->out);
    CUDA_CHECK(cudaGetLastError());
    col_pass<<<cols, COL_TILE>>>(g->X, g->r, g->n, d, g->out);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(host, g->out, (size_t)(d + 2) * sizeof(double), cudaMemcpyDeviceToHost));
    {
        double ww = 0;
        for (long j = 0; j < d; j++) {
            grad[j] = host[j] + g->inv_C * wb[j];
            ww += wb[j] * wb[j];
        }
        grad[d] = host[d + 1];
        f = host[d] + 0.5 * g->inv_C * ww;
    }
out:
    free(host);
    return f;
}

const char *cuda_logreg_error(const struct cuda_logreg *g)
{
    return g->error;
}

void cuda_logreg_free(struct cuda_logreg *g)
{
    if (!g)
        return;
    cudaFree(g->X);
    cudaFree(g->y);
    cudaFree(g->r);
    cudaFree(g->w);
    cudaFree(g->out);
    free(g);
}
