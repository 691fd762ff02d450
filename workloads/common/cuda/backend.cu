// backend: the table of the CUDA backend (libmlbench_wl_cuda.so, common/cuda_backend.h), its
// device query, and what its entries share.
#include "common/cuda/cuda_check.cuh"

#include <algorithm>

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

void cuda_timing(float *times_s, int n, struct gemm_timing *out)
{
    std::sort(times_s, times_s + n);
    out->median_s = n % 2 ? times_s[n / 2] : 0.5 * (times_s[n / 2 - 1] + times_s[n / 2]);
    out->min_s = times_s[0];
    out->max_s = times_s[n - 1];
}

static const struct cuda_backend backend = {
    CUDA_BACKEND_ABI,   devices,          cuda_gemm,         cuda_mlp,
    cuda_logreg_create, cuda_logreg_eval, cuda_logreg_error, cuda_logreg_free,
    cuda_cnn_create,    cuda_cnn_train_step, cuda_cnn_predict, cuda_cnn_get_params,
    cuda_cnn_error,     cuda_cnn_free,
};

extern "C" __attribute__((visibility("default"))) const struct cuda_backend *
mlbench_cuda_backend(void)
{
    return &backend;
}
