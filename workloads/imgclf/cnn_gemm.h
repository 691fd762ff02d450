/* cnn_gemm: the GEMMs of the CNN's CPU backend (cnn_layers.c): single precision with hand-written
 * AVX-512 kernels (cnn_gemm_avx512.c) used when the CPU has AVX-512F, OpenBLAS otherwise; and
 * bf16 mixed precision (cnn_gemm_bf16.c: operands rounded to bf16, products accumulated in fp32)
 * when the CPU has AVX512_BF16.
 *
 * All matrices are row-major: C (m x n, leading dimension ldc) = op(A) op(B) + beta C, where
 * op(A) is m x k (A itself when trans_a is 0, stored m x k with leading dimension lda; A^T when
 * trans_a is 1, A stored k x m) and op(B) is k x n (B, stored k x n, or B^T, stored n x k). */
#ifndef MLBENCH_WL_CNN_GEMM_H
#define MLBENCH_WL_CNN_GEMM_H

#include <stddef.h>
#include <stdint.h>

/* Nonzero when this build has the AVX-512 kernels and the CPU runs them. Thread-safe. */
int cnn_gemm_avx512_available(void);

/* C = op(A) op(B) + beta C with the AVX-512 kernels; beta 0 does not read C (as BLAS). Call
 * only when cnn_gemm_avx512_available(). Uses 32 KiB of stack; thread-safe on distinct C. */
void cnn_gemm_avx512(int trans_a, int trans_b, int m, int n, int k, const float *a, int lda,
                     const float *b, int ldb, float beta, float *c, int ldc);

/* The same with OpenBLAS's cblas_sgemm (its thread count is the caller's business). */
void cnn_gemm_blas(int trans_a, int trans_b, int m, int n, int k, const float *a, int lda,
                   const float *b, int ldb, float beta, float *c, int ldc);

/* Nonzero when this build has the bf16 kernels and the CPU runs them (AVX-512F, BW and BF16 in
 * common/cpu.h, so MLBENCH_CPU_DISABLE=avx512_bf16 turns them off). Thread-safe. */
int cnn_gemm_bf16_available(void);

/* C = op(A) op(B) + beta C, with op(A) and op(B) rounded to bf16 (round to nearest even,
 * denormals flushed to zero) and their products summed in fp32; C is fp32. Same conventions as
 * cnn_gemm_avx512. Call only when cnn_gemm_bf16_available(). Uses 270 KiB of stack. */
void cnn_gemm_bf16(int trans_a, int trans_b, int m, int n, int k, const float *a, int lda,
                   const float *b, int ldb, float beta, float *c, int ldc);

/* For a B used by many GEMMs (the weights): op(B) (k x n) packed once in bf16, the layout
 * cnn_bf16_gemm's b_packed is read in. The buffer holds cnn_gemm_bf16_packed_size(n, k) bytes
 * (64-byte alignment is best); cnn_gemm_bf16_pack fills its panels [first_panel, end_panel) of
 * 32 columns each (all of them: 0, (n + 31) / 32), so that threads can share the work. */
size_t cnn_gemm_bf16_packed_size(int n, int k);
void cnn_gemm_bf16_pack(int trans_b, int n, int k, const float *b, int ldb, void *packed,
                        int first_panel, int end_panel);

/* A bf16 GEMM whose operands may come in bf16 already: A as fp32 (a) or as bf16 bit patterns
 * (a16, from cnn_bf16_convert; k even when not transposed: its rows are read as pairs in place,
 * lda even), B as fp32 (b, ldb, trans_b) or packed ahead (b_packed, made with this trans_b, n
 * and k). Otherwise as cnn_gemm_bf16. */
struct cnn_bf16_gemm {
    int trans_a, trans_b, m, n, k;
    const float *a;
    const uint16_t *a16;
    int lda;
    const float *b;
    const void *b_packed;
    int ldb;
    float beta;
    float *c;
    int ldc;
};
void cnn_gemm_bf16_run(const struct cnn_bf16_gemm *g);

/* out[i] = x[i] rounded to bf16 by the instruction the kernels use, for n values. Does nothing
 * unless cnn_gemm_bf16_available(). */
void cnn_bf16_convert(const float *x, uint16_t *out, size_t n);
/* x[i] = x[i] rounded to bf16, kept as a float (the low 16 bits zero), the same rounding. */
void cnn_bf16_round_in_place(float *x, size_t n);

#endif
