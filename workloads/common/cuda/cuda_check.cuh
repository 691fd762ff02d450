// cuda_check: what the CUDA backend's files share (workloads/<name>/cuda/*.cu): the checks that
// turn a failed CUDA or cuBLAS call into a message naming the call (into err, then goto out),
// and the small kernels that make and convert inputs on the device.
#ifndef MLBENCH_WL_CUDA_CHECK_CUH
#define MLBENCH_WL_CUDA_CHECK_CUH

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdio>

extern "C" {
#include "common/cuda_backend.h"
}

#define CUDA_CHECK(call)                                                                       \
    do {                                                                                       \
        cudaError_t rc_ = (call);                                                              \
        if (rc_ != cudaSuccess) {                                                              \
            snprintf(err, errlen, "%s: %s%s", #call, cudaGetErrorString(rc_),                 \
                     rc_ == cudaErrorMemoryAllocation ? " (out of GPU memory: use a smaller "  \
                                                         "size)" : "");                        \
            goto out;                                                                          \
        }                                                                                      \
    } while (0)

#define CUBLAS_CHECK(call)                                                                     \
    do {                                                                                       \
        cublasStatus_t st_ = (call);                                                           \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                                    \
            snprintf(err, errlen, "%s: %s", #call, cublasGetStatusString(st_));               \
            goto out;                                                                          \
        }                                                                                      \
    } while (0)

// Uniform in [-1, 1) from (seed, i): a splitmix64 hash, so any element is made independently.
static __global__ void fill_uniform(float *x, size_t n, unsigned long long seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        unsigned long long z = seed + (i + 1) * 0x9e3779b97f4a7c15ULL;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        z ^= z >> 31;
        x[i] = (float)((double)(z >> 11) * 0x1.0p-52 - 1.0);
    }
}

template <typename T> __device__ T from_float(float v);
template <> inline __device__ float from_float<float>(float v) { return v; }
template <> inline __device__ __half from_float<__half>(float v) { return __float2half_rn(v); }
template <> inline __device__ __nv_bfloat16 from_float<__nv_bfloat16>(float v)
{
    return __float2bfloat16_rn(v);
}

template <typename T> __device__ float to_float(T v);
template <> inline __device__ float to_float<float>(float v) { return v; }
template <> inline __device__ float to_float<__half>(__half v) { return __half2float(v); }
template <> inline __device__ float to_float<__nv_bfloat16>(__nv_bfloat16 v)
{
    return __bfloat162float(v);
}

template <typename T> static __global__ void convert(const float *in, T *out, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        out[i] = from_float<T>(in[i]);
}

// The element type of a precision's activations and weights, and its size in bytes.
static inline cudaDataType_t cuda_type(enum gemm_precision p)
{
    return p == GEMM_FP16 ? CUDA_R_16F : p == GEMM_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

static inline size_t cuda_type_size(enum gemm_precision p)
{
    return p == GEMM_FP16 || p == GEMM_BF16 ? 2 : 4;
}

// Converts n floats on the device into the precision's type at out (a copy for fp32/tf32).
static inline cudaError_t cuda_convert(const float *in, void *out, size_t n, enum gemm_precision p)
{
    if (p == GEMM_FP16)
        convert<__half><<<1024, 256>>>(in, (__half *)out, n);
    else if (p == GEMM_BF16)
        convert<__nv_bfloat16><<<1024, 256>>>(in, (__nv_bfloat16 *)out, n);
    else
        return cudaMemcpy(out, in, n * sizeof(float), cudaMemcpyDeviceToDevice);
    return cudaGetLastError();
}

// Median, min and max of n > 0 times (sorted in place).
void cuda_timing(float *times_s, int n, struct gemm_timing *out);

// The backend's entries, one file each (common/cuda/backend.cu lists them).
int cuda_gemm(const struct gemm_request *rq, const float *a, const float *b, float *c,
              struct gemm_timing *out, char *err, size_t errlen);
int cuda_mlp(const struct mlp_request *rq, const float *const w[5], float *y,
             struct gemm_timing *out, char *err, size_t errlen);
struct cuda_logreg *cuda_logreg_create(const float *X, const float *y, long n, long d, double C,
                                       char *err, size_t errlen);
double cuda_logreg_eval(struct cuda_logreg *g, const double *wb, double *grad);
const char *cuda_logreg_error(const struct cuda_logreg *g);
void cuda_logreg_free(struct cuda_logreg *g);
struct cuda_cnn *cuda_cnn_create(const struct cnn_shape *shape, const float *params,
                                 int max_batch, char *err, size_t errlen);
double cuda_cnn_train_step(struct cuda_cnn *g, const float *x, const int *labels, int n,
                           float lr, float momentum, float weight_decay);
int cuda_cnn_predict(struct cuda_cnn *g, const float *x, const int *labels, int n,
                     int *out_class);
int cuda_cnn_get_params(struct cuda_cnn *g, float *params);
const char *cuda_cnn_error(const struct cuda_cnn *g);
void cuda_cnn_free(struct cuda_cnn *g);

#endif
