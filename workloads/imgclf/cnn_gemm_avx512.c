/* cnn_gemm_avx512: hand-written AVX-512 sgemm for the CNN's shapes (cnn_gemm.h), compiled for
 * AVX-512 by function attributes so that the rest of the build keeps the baseline ISA.
 *
 * Why not OpenBLAS: OPENBLAS_CORETYPE=Haswell must stay set on the machines this runs on, which
 * holds OpenBLAS to its AVX2 kernel (~120 GFLOP/s per Zen 5 core); the CNN's GEMMs have a small
 * n (32, 64, 288) that a kernel written for them handles at AVX-512 speed.
 *
 * The scheme (GotoBLAS's, cut down): k is split into near-equal blocks of at most KC_MAX, n into
 * panels of NR = 32 columns (two zmm). For each (k block, panel) the block of op(B) is packed
 * into a kc x 32 buffer that stays in L1 (zero-padded past n), unless B already is that buffer
 * (not transposed, 32 columns). Then a register-blocked micro-kernel computes MR = 12 rows x 32
 * columns of C per call: 24 zmm accumulators, each step of k loads two vectors of the packed B
 * and broadcasts 12 values of op(A) straight from A (no packing of A: for A^T the 12 values are
 * contiguous, for A its 12 rows are read in step, both stay in L1/L2 at these sizes). 24
 * independent FMA chains cover Zen 5's 2 FMA pipes x 4 cycles of latency three times over, and
 * the loads per step (2 + 12) fit in the 2 loads per cycle beside the 24 FMAs. */
#include "imgclf/cnn_gemm.h"

#include "common/cpu.h"

#include <cblas.h>
#include <stddef.h>

void cnn_gemm_blas(int trans_a, int trans_b, int m, int n, int k, const float *a, int lda,
                   const float *b, int ldb, float beta, float *c, int ldc)
{
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a, lda, b, ldb, beta, c,
                ldc);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f")))
#define MR 12 /* rows of C per micro-kernel call */
#define NR 32 /* columns of C per micro-kernel call: two zmm */
/* Deepest k block: its packed B panel (KC_MAX x NR floats = 32 KiB) fits Zen 5's 48 KiB L1
 * beside the A rows being broadcast. */
#define KC_MAX 256

/* C[0..mr) x [0..32) = beta C + op(A) B over kc steps of k, for a compile-time mr and trans_a
 * (always inlined into one copy per pair, so that the accumulators are registers).
 * a points at op(A)'s element (0, 0) of the block; bp at the packed kc x 32 panel (row stride
 * NR); m0 and m1 mask the valid columns of the two halves. */
AVX512 static inline __attribute__((always_inline)) void
micro_kernel(const int mr, const int trans_a, int kc, const float *restrict a, ptrdiff_t lda,
             const float *restrict bp, float *restrict c, ptrdiff_t ldc, __mmask16 m0,
             __mmask16 m1, float beta)
{
    __m512 acc[MR][2];
#pragma GCC unroll 12
    for (int i = 0; i < mr; i++)
        acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    for (int k = 0; k < kc; k++) {
        const __m512 b0 = _mm512_loadu_ps(bp + (ptrdiff_t)k * NR);
        const __m512 b1 = _mm512_loadu_ps(bp + (ptrdiff_t)k * NR + 16);
        /* op(A)(i, k): A[k][i] when transposed (contiguous in i), else A[i][k] */
        const float *ak = trans_a ? a + (ptrdiff_t)k * lda : a + k;
#pragma GCC unroll 12
        for (int i = 0; i < mr; i++) {
            const __m512 ai = _mm512_set1_ps(trans_a ? ak[i] : ak[(ptrdiff_t)i * lda]);
            acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
            acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
        }
    }
    const __m512 vbeta = _mm512_set1_ps(beta);
#pragma GCC unroll 12
    for (int i = 0; i < mr; i++) {
        float *ci = c + (ptrdiff_t)i * ldc;
        if (beta != 0.0f) { /* beta 0 must not read C: it may be uninitialised (NaN) */
            acc[i][0] = _mm512_fmadd_ps(vbeta, _mm512_maskz_loadu_ps(m0, ci), acc[i][0]);
            acc[i][1] = _mm512_fmadd_ps(vbeta, _mm512_maskz_loadu_ps(m1, ci + 16), acc[i][1]);
        }
        _mm512_mask_storeu_ps(ci, m0, acc[i][0]);
        _mm512_mask_storeu_ps(ci + 16, m1, acc[i][1]);
    }
}

/* One copy of micro_kernel per row count and transpose of A: a jump table rather than a
 * run-time row loop, which would leave the accumulators in memory. */
#define MK_CASE(r)                                                                            \
    case r:                                                                                   \
        if (trans_a)                                                                          \
            micro_kernel(r, 1, kc, a, lda, bp, c, ldc, m0, m1, beta);                         \
        else                                                                                  \
            micro_kernel(r, 0, kc, a, lda, bp, c, ldc, m0, m1, beta);                         \
        break;

AVX512 static void micro_kernel_rows(int mr, int trans_a, int kc, const float *a, ptrdiff_t lda,
                                     const float *bp, float *c, ptrdiff_t ldc, __mmask16 m0,
                                     __mmask16 m1, float beta)
{
    switch (mr) {
        MK_CASE(1)
        MK_CASE(2)
        MK_CASE(3)
        MK_CASE(4)
        MK_CASE(5)
        MK_CASE(6)
        MK_CASE(7)
        MK_CASE(8)
        MK_CASE(9)
        MK_CASE(10)
        MK_CASE(11)
        MK_CASE(12)
    default:
        break;
    }
}
_Static_assert(MR == 12, "micro_kernel_rows has one case per row count up to MR");

/* Packs op(B)'s block (rows k0..k0+kc, columns j0.. as masked by m0, m1) into bp (kc x NR,
 * zero in the masked-off columns). */
AVX512 static void pack_b(int trans_b, const float *restrict b, ptrdiff_t ldb, int k0, int kc,
                          int j0, __mmask16 m0, __mmask16 m1, float *restrict bp)
{
    if (!trans_b) {
        for (int k = 0; k < kc; k++) {
            const float *src = b + (ptrdiff_t)(k0 + k) * ldb + j0;
            _mm512_store_ps(bp + (ptrdiff_t)k * NR, _mm512_maskz_loadu_ps(m0, src));
            _mm512_store_ps(bp + (ptrdiff_t)k * NR + 16, _mm512_maskz_loadu_ps(m1, src + 16));
        }
        return;
    }
    /* op(B)(k, j) = B[j][k]: read B's rows contiguously, write the panel's columns (gathers
     * were measured no faster) */
    for (int j = 0; j < NR; j++) {
        if (!(j < 16 ? (m0 >> j) & 1 : (m1 >> (j - 16)) & 1)) {
            for (int k = 0; k < kc; k++)
                bp[(ptrdiff_t)k * NR + j] = 0.0f;
            continue;
        }
        const float *src = b + (ptrdiff_t)(j0 + j) * ldb + k0;
        for (int k = 0; k < kc; k++)
            bp[(ptrdiff_t)k * NR + j] = src[k];
    }
}

/* Bits [0, count) set, count clamped to [0, 16]. */
static __mmask16 lane_mask(int count)
{
    return count <= 0 ? 0 : count >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << count) - 1);
}

AVX512 void cnn_gemm_avx512(int trans_a, int trans_b, int m, int n, int k, const float *a,
                            int lda, const float *b, int ldb, float beta, float *c, int ldc)
{
    if (m <= 0 || n <= 0)
        return;
    if (k <= 0) { /* C = beta C */
        for (int i = 0; i < m; i++) {
            float *ci = c + (ptrdiff_t)i * ldc;
            for (int j = 0; j < n; j++)
                ci[j] = beta == 0.0f ? 0.0f : beta * ci[j];
        }
        return;
    }
    _Alignas(64) float bp_buf[KC_MAX * NR];
    /* near-equal k blocks: 288 = 2 x 144 rather than 256 + 32, whose second block would
     * spend most of its time loading and storing C */
    const int kblocks = (k + KC_MAX - 1) / KC_MAX;
    for (int kb = 0; kb < kblocks; kb++) {
        const int k0 = (int)((long long)k * kb / kblocks);
        const int kc = (int)((long long)k * (kb + 1) / kblocks) - k0;
        const float kbeta = kb == 0 ? beta : 1.0f;
        for (int j0 = 0; j0 < n; j0 += NR) {
            const int nr = n - j0 < NR ? n - j0 : NR;
            const __mmask16 m0 = lane_mask(nr), m1 = lane_mask(nr - 16);
            const float *bp;
            if (!trans_b && ldb == NR && nr == NR) {
                bp = b + (ptrdiff_t)k0 * ldb; /* already a packed panel */
            } else {
                pack_b(trans_b, b, ldb, k0, kc, j0, m0, m1, bp_buf);
                bp = bp_buf;
            }
            for (int i0 = 0; i0 < m; i0 += MR) {
                const int mr = m - i0 < MR ? m - i0 : MR;
                const float *ablk = trans_a ? a + (ptrdiff_t)k0 * lda + i0
                                            : a + (ptrdiff_t)i0 * lda + k0;
                micro_kernel_rows(mr, trans_a, kc, ablk, lda, bp, c + (ptrdiff_t)i0 * ldc + j0,
                                  ldc, m0, m1, kbeta);
            }
        }
    }
}

int cnn_gemm_avx512_available(void)
{
    return wl_cpu_has(WL_CPU_AVX512F);
}

#else

/* Not x86-64 (or not GCC/Clang): never available, so never called; the OpenBLAS path is used. */
int cnn_gemm_avx512_available(void)
{
    return 0;
}

void cnn_gemm_avx512(int trans_a, int trans_b, int m, int n, int k, const float *a, int lda,
                     const float *b, int ldb, float beta, float *c, int ldc)
{
    cnn_gemm_blas(trans_a, trans_b, m, n, k, a, lda, b, ldb, beta, c, ldc);
}

#endif
