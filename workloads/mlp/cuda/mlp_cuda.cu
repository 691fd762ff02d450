// mlp_cuda: a transformer-sized MLP block on the GPU for `mlbench-workload mlp`
// (common/cuda_backend.h): two cuBLAS GEMMs with fp32 accumulation and activations in the
// precision, a bias + erf-GELU kernel and a bias kernel; optionally captured in a CUDA graph so
// that a batch-1 forward is not bound by kernel launches. Timed per forward with CUDA events.
#include "common/cuda/cuda_check.cuh"

#include <vector>

template <typename T> static __global__ void bias_gelu(T *h, const T *b, size_t n, int cols)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float v = to_float<T>(h[i]) + to_float<T>(b[i % cols]);
        h[i] = from_float<T>(0.5f * v * (1.0f + erff(v * 0.70710678f)));
    }
}

template <typename T> static __global__ void bias_add(T *y, const T *b, size_t n, int cols)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        y[i] = from_float<T>(to_float<T>(y[i]) + to_float<T>(b[i % cols]));
}

template <typename T> static __global__ void widen(const T *in, float *out, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        out[i] = to_float<T>(in[i]);
}

static int blocks_for(size_t n)
{
    size_t b = (n + 255) / 256;
    return (int)(b < 4096 ? (b ? b : 1) : 4096);
}

// One forward on stream: H = GELU(X W1 + b1), Y = H W2 + b2 (row-major; cuBLAS is column-major,
// so each product is computed transposed: H^T = W1^T X^T).
template <typename T>
static cublasStatus_t forward(cublasHandle_t handle, cudaStream_t stream,
                              const struct mlp_request *rq, cudaDataType_t type,
                              cublasComputeType_t compute, void *const p[7])
{
    const float one = 1.0f, zero = 0.0f;
    T *x = (T *)p[0], *w1 = (T *)p[1], *b1 = (T *)p[2], *w2 = (T *)p[3], *b2 = (T *)p[4];
    T *h = (T *)p[5], *y = (T *)p[6];
    cublasStatus_t st = cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, rq->ff, rq->batch,
                                     rq->hidden, &one, w1, type, rq->ff, x, type, rq->hidden,
                                     &zero, h, type, rq->ff, compute, CUBLAS_GEMM_DEFAULT);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    size_t nh = (size_t)rq->batch * rq->ff, ny = (size_t)rq->batch * rq->hidden;
    bias_gelu<T><<<blocks_for(nh), 256, 0, stream>>>(h, b1, nh, rq->ff);
    st = cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, rq->hidden, rq->batch, rq->ff, &one, w2,
                      type, rq->hidden, h, type, rq->ff, &zero, y, type, rq->hidden, compute,
                      CUBLAS_GEMM_DEFAULT);
    bias_add<T><<<blocks_for(ny), 256, 0, stream>>>(y, b2, ny, rq->hidden);
    return st;
}

template <typename T>
static int run(const struct mlp_request *rq, const float *const w[5], float *y_out,
               struct gemm_timing *out_timing, char *err, size_t errlen)
{
    const size_t sizes[7] = {(size_t)rq->batch * rq->hidden, (size_t)rq->hidden * rq->ff,
                             (size_t)rq->ff, (size_t)rq->ff * rq->hidden, (size_t)rq->hidden,
                             (size_t)rq->batch * rq->ff, (size_t)rq->batch * rq->hidden};
    const cudaDataType_t type = cuda_type(rq->precision);
    const cublasComputeType_t compute =
        rq->precision == GEMM_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    const size_t workspace_size = 32u << 20;
    void *p[7] = {nullptr};
    float *staging = nullptr;
    void *workspace = nullptr;
    cublasHandle_t handle = nullptr;
    cudaStream_t stream = nullptr;
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    std::vector<float> times;
    size_t largest = 0;
    int status = -1;

    if (out_timing && rq->reps < 1) {
        snprintf(err, errlen, "reps must be at least 1");
        return -1;
    }
    for (size_t s : sizes)
        largest = s > largest ? s : largest;
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaStreamCreate(&stream));
    CUBLAS_CHECK(cublasCreate(&handle));
    CUBLAS_CHECK(cublasSetStream(handle, stream));
    // A workspace of its own, so that cuBLAS allocates nothing while a graph is captured.
    CUDA_CHECK(cudaMalloc(&workspace, workspace_size));
    CUBLAS_CHECK(cublasSetWorkspace(handle, workspace, workspace_size));
    CUDA_CHECK(cudaMalloc((void **)&staging, largest * sizeof(float)));
    for (int i = 0; i < 7; i++)
        CUDA_CHECK(cudaMalloc(&p[i], sizes[i] * sizeof(T)));
    for (int i = 0; i < 5; i++) { // inputs: given (the check) or generated
        if (w)
            CUDA_CHECK(cudaMemcpy(staging, w[i], sizes[i] * sizeof(float),
                                  cudaMemcpyHostToDevice));
        else
            fill_uniform<<<1024, 256>>>(staging, sizes[i], rq->seed + 7919u * i);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cuda_convert(staging, p[i], sizes[i], rq->precision));
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    if (y_out) {
        CUBLAS_CHECK(forward<T>(handle, stream, rq, type, compute, p));
        CUDA_CHECK(cudaGetLastError());
        widen<T><<<blocks_for(sizes[6]), 256, 0, stream>>>((const T *)p[6], staging, sizes[6]);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaStreamSynchronize(stream));
        CUDA_CHECK(cudaMemcpy(y_out, staging, sizes[6] * sizeof(float), cudaMemcpyDeviceToHost));
    }
    if (out_timing) {
        if (rq->graph) {
            CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
            cublasStatus_t st = forward<T>(handle, stream, rq, type, compute, p);
            CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
            CUBLAS_CHECK(st);
            CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
        }
        CUDA_CHECK(cudaEventCreate(&start));
        CUDA_CHECK(cudaEventCreate(&stop));
        for (int i = 0; i < rq->warmup + rq->reps; i++) {
            float ms = 0;
            CUDA_CHECK(cudaEventRecord(start, stream));
            if (exec)
                CUDA_CHECK(cudaGraphLaunch(exec, stream));
            else
                CUBLAS_CHECK(forward<T>(handle, stream, rq, type, compute, p));
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaEventRecord(stop, stream));
            CUDA_CHECK(cudaEventSynchronize(stop));
            CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
            if (i >= rq->warmup)
                times.push_back(ms * 1e-3f);
        }
        cuda_timing(times.data(), (int)times.size(), out_timing);
    }
    status = 0;
out:
    if (exec)
        cudaGraphExecDestroy(exec);
    if (graph)
        cudaGraphDestroy(graph);
    if (start)
        cudaEventDestroy(start);
    if (stop)
        cudaEventDestroy(stop);
    for (int i = 0; i < 7; i++)
        cudaFree(p[i]);
    cudaFree(staging);
    if (handle)
        cublasDestroy(handle);
    cudaFree(workspace);
    if (stream)
        cudaStreamDestroy(stream);
    return status;
}

int cuda_mlp(const struct mlp_request *rq, const float *const w[5], float *y,
             struct gemm_timing *out, char *err, size_t errlen)
{
    switch (rq->precision) {
    case GEMM_FP16:
        return run<__half>(rq, w, y, out, err, errlen);
    case GEMM_BF16:
        return run<__nv_bfloat16>(rq, w, y, out, err, errlen);
    default:
        return run<float>(rq, w, y, out, err, errlen);
    }
}
