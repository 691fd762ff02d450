// gemm_cuda: GEMM throughput by precision on the GPU for `mlbench-workload gemm`, through cuBLAS
// (cublasGemmEx), timed with CUDA events after warm-up (common/cuda_backend.h).
#include "common/cuda/cuda_check.cuh"

#include <vector>

int cuda_gemm(const struct gemm_request *rq, const float *a, const float *b, float *c,
              struct gemm_timing *out_timing, char *err, size_t errlen)
{
    const size_t na = (size_t)rq->m * rq->k, nb = (size_t)rq->k * rq->n,
                 nc = (size_t)rq->m * rq->n;
    const cudaDataType_t in_type = cuda_type(rq->precision);
    const size_t in_size = cuda_type_size(rq->precision);
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
        CUDA_CHECK(cuda_convert(fa, da, na, rq->precision));
        CUDA_CHECK(cuda_convert(fb, db, nb, rq->precision));
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
        cuda_timing(times.data(), (int)times.size(), out_timing);
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
