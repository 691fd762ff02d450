// gemm_cuda: the CUDA backend of the workloads (libmlbench_wl_cuda.so, common/cuda_backend.h):
// device query and GEMM throughput by precision through cuBLAS (cublasGemmEx), timed with CUDA
// events after warm-up. Every CUDA and cuBLAS call is checked; an error names the call.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

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
__global__ void fill_uniform(float *x, size_t n, unsigned long long seed)
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
template <> __device__ __half from_float<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __nv_bfloat16 from_float<__nv_bfloat16>(float v)
{
    return __float2bfloat16_rn(v);
}

template <typename T> __global__ void convert(const float *in, T *out, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        out[i] = from_float<T>(in[i]);
}

static int devices(char *name, size_t name_len, int *cc_major, int *cc_minor, char *err,
                   size_t errlen)
{
    int n = 0;
    cudaDeviceProp prop;
    cudaError_t rc = cudaGetDeviceCount(&n);
    if (rc == cudaErrorNoDevice)
        return 0;
    if (rc != cudaSuccess) {
        snprintf(err, errlen, "cudaGetDeviceCount: %s%s", cudaGetErrorString(rc),
                 rc == cudaErrorInsufficientDriver
                     ? " (no NVIDIA driver, or one older than this CUDA runtime)" : "");
        return -1;
    }
    if (n == 0)
        return 0;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    snprintf(name, name_len, "%s", prop.name);
    *cc_major = prop.major;
    *cc_minor = prop.minor;
    return n;
out:
    return -1;
}

// The element type cuBLAS reads A and B in, and its size.
static cudaDataType_t input_type(enum gemm_precision p)
{
    return p == GEMM_FP16 ? CUDA_R_16F : p == GEMM_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

static int gemm(const struct gemm_request *rq, const float *a, const float *b, float *c,
                struct gemm_timing *out_timing, char *err, size_t errlen)
{
    const size_t na = (size_t)rq->m * rq->k, nb = (size_t)rq->k * rq->n,
                 nc = (size_t)rq->m * rq->n;
    const cudaDataType_t in_type = input_type(rq->precision);
    const size_t in_size = in_type == CUDA_R_32F ? 4 : 2;
    const cublasComputeType_t compute =
        rq->precision == GEMM_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    const float alpha = 1.0f, beta = 0.0f;
    float *fa = nullptr, *fb = nullptr, *dc = nullptr;
    void *da = nullptr, *db = nullptr;
    cublasHandle_t handle = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    std::vector<float> times;
    int status = -1;

    if (out_timing && rq->reps < 1) {
        snprintf(err, errlen, "reps must be at least 1");
        return -1;
    }
    CUDA_CHECK(cudaSetDevice(0));
    CUBLAS_CHECK(cublasCreate(&handle));
    CUDA_CHECK(cudaMalloc((void **)&fa, na * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&fb, nb * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&dc, nc * sizeof(float)));
    if (a) {
        CUDA_CHECK(cudaMemcpy(fa, a, na * sizeof(float), cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(fb, b, nb * sizeof(float), cudaMemcpyHostToDevice));
    } else {
        fill_uniform<<<1024, 256>>>(fa, na, rq->seed);
        fill_uniform<<<1024, 256>>>(fb, nb, rq->seed ^ 0x5555555555555555ULL);
        CUDA_CHECK(cudaGetLastError());
    }
    if (in_size == 4) {
        da = fa;
        db = fb;
    } else {
        CUDA_CHECK(cudaMalloc(&da, na * in_size));
        CUDA_CHECK(cudaMalloc(&db, nb * in_size));
        if (rq->precision == GEMM_FP16) {
            convert<__half><<<1024, 256>>>(fa, (__half *)da, na);
            convert<__half><<<1024, 256>>>(fb, (__half *)db, nb);
        } else {
            convert<__nv_bfloat16><<<1024, 256>>>(fa, (__nv_bfloat16 *)da, na);
            convert<__nv_bfloat16><<<1024, 256>>>(fb, (__nv_bfloat16 *)db, nb);
        }
        CUDA_CHECK(cudaGetLastError());
    }
    // Row-major C = A B is column-major C^T = B^T A^T: cuBLAS multiplies B by A.
#define GEMM_CALL                                                                              \
    cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, rq->n, rq->m, rq->k, &alpha, db, in_type,   \
                 rq->n, da, in_type, rq->k, &beta, dc, CUDA_R_32F, rq->n, compute,             \
                 CUBLAS_GEMM_DEFAULT)
    if (c) {
        CUBLAS_CHECK(GEMM_CALL);
        CUDA_CHECK(cudaMemcpy(c, dc, nc * sizeof(float), cudaMemcpyDeviceToHost));
    }
    if (out_timing) {
        CUDA_CHECK(cudaEventCreate(&start));
        CUDA_CHECK(cudaEventCreate(&stop));
        for (int i = 0; i < rq->warmup; i++)
            CUBLAS_CHECK(GEMM_CALL);
        CUDA_CHECK(cudaDeviceSynchronize());
        for (int i = 0; i < rq->reps; i++) {
            float ms = 0;
            CUDA_CHECK(cudaEventRecord(start));
            CUBLAS_CHECK(GEMM_CALL);
            CUDA_CHECK(cudaEventRecord(stop));
            CUDA_CHECK(cudaEventSynchronize(stop));
            CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
            times.push_back(ms * 1e-3f);
        }
        std::sort(times.begin(), times.end());
        size_t n = times.size();
        out_timing->median_s = n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
        out_timing->min_s = times.front();
        out_timing->max_s = times.back();
    }
#undef GEMM_CALL
    status = 0;
out:
    if (start)
        cudaEventDestroy(start);
    if (stop)
        cudaEventDestroy(stop);
    if (da && da != fa)
        cudaFree(da);
    if (db && db != fb)
        cudaFree(db);
    cudaFree(fa);
    cudaFree(fb);
    cudaFree(dc);
    if (handle)
        cublasDestroy(handle);
    return status;
}

static const struct cuda_backend backend = {CUDA_BACKEND_ABI, devices, gemm};

extern "C" __attribute__((visibility("default"))) const struct cuda_backend *
mlbench_cuda_backend(void)
{
    return &backend;
}
