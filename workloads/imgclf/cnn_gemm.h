/* cnn_gemm: the single-precision GEMM of the CNN's CPU backend (cnn_layers.c), with hand-written
 * AVX-512 kernels (cnn_gemm_avx512.c) used when the CPU has AVX-512F, OpenBLAS otherwise.
 *
 * All matrices are row-major: C (m x n, leading dimension ldc) = op(A) op(B) + beta C, where
 * op(A) is m x k (A itself when trans_a is 0, stored m x k with leading dimension lda; A^T when
 * trans_a is 1, A stored k x m) and op(B) is k x n (B, stored k x n, or B^T, stored n x k). */
#ifndef MLBENCH_WL_CNN_GEMM_H
#define MLBENCH_WL_CNN_GEMM_H

/* Nonzero when this build has the AVX-512 kernels and the CPU runs them. Thread-safe. */
int cnn_gemm_avx512_available(void);

/* C = op(A) op(B) + beta C with the AVX-512 kernels; beta 0 does not read C (as BLAS). Call
 * only when cnn_gemm_avx512_available(). Uses 32 KiB of stack; thread-safe on distinct C. */
void cnn_gemm_avx512(int trans_a, int trans_b, int m, int n, int k, const float *a, int lda,
                     const float *b, int ldb, float beta, float *c, int ldc);

/* The same with OpenBLAS's cblas_sgemm (its thread count is the caller's business). */
void cnn_gemm_blas(int trans_a, int trans_b, int m, int n, int k, const float *a, int lda,
                   const float *b, int ldb, float beta, float *c, int ldc);

#endif
