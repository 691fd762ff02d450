/* cnn_gemm_bf16: the mixed-precision GEMM of the CNN's CPU backend (cnn_gemm.h): op(A) and op(B)
 * are rounded to bf16 as they are packed, the products are accumulated in fp32 by vdpbf16ps
 * (AVX512_BF16), and C stays fp32. Compiled for AVX512_BF16 by function attributes, run only
 * when the CPU has it (common/cpu.h).
 *
 * vdpbf16ps multiplies pairs: each fp32 lane j of the accumulator gets a[2j] b[2j] +
 * a[2j+1] b[2j+1], 32 bf16 products per instruction against an fp32 FMA's 16, at the FMA's
 * throughput on Zen 5 (two per cycle): twice the multiply-adds. So both operands are packed in
 * pairs along k. The scheme is cnn_gemm_avx512.c's (GotoBLAS cut down), with pairs:
 *   - k is split into near-equal blocks of at most KC; m into chunks of at most MC rows;
 *   - per (k block, chunk) the chunk of op(A) is converted to bf16: for A as stored (rows along
 *     k) each row's pairs are already adjacent, so a row is converted in place of order
 *     ([row][k/2] pairs); for A^T two rows of the stored matrix are converted and interleaved
 *     ([k/2][row] pairs). The micro-kernel broadcasts one 32-bit pair per row and step;
 *   - op(B) is packed per panel of NR = 32 columns as [k/2][32] pairs (two zmm per step), on the
 *     fly, or once ahead for a matrix used many times (the weights: cnn_gemm_bf16_pack);
 *   - the micro-kernel: MR = 12 rows x 32 columns, 24 accumulators, as in fp32.
 * An odd k gets a zero second element in its last pair on both sides.
 *
 * The conversion is vcvtne2ps2bf16: round to nearest even, NaN kept (quiet), and denormal
 * inputs and outputs flushed to zero (they are below bf16's 8 bits of precision anyway; the
 * unit test checks this against a software rounding). */
#include "imgclf/cnn_gemm.h"

#include "common/cpu.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MR 12
#define NR 32
/* The deepest k block: its packed B panel (KC/2 x 32 pairs = 24 KiB) stays in Zen 5's 48 KiB L1
 * beside the A rows being broadcast. */
#define KC 384
/* Rows of A converted at a time: 24 row blocks; the chunk (MC x KC bf16 = 216 KiB) stays in L2
 * (1 MiB on Zen 5). 288 rows: conv2's weight gradient (288 x 64) in one chunk, so that its B (the
 * output gradient, packed on the fly) is packed once rather than once per chunk. */
#define MC 288

static int kblocks_of(int k)
{
    return (k + KC - 1) / KC;
}

/* Block boundaries are even (but the end, k): pairs never straddle two blocks, so an A already
 * in bf16 pairs can be read in place. */
static int kblock_start(int k, int blocks, int kb)
{
    return kb >= blocks ? k : (int)((long long)k * kb / blocks) & ~1;
}

size_t cnn_gemm_bf16_packed_size(int n, int k)
{
    if (n <= 0 || k <= 0)
        return 0;
    const int blocks = kblocks_of(k), panels = (n + NR - 1) / NR;
    size_t pairs = 0;
    for (int kb = 0; kb < blocks; kb++) {
        int kc = kblock_start(k, blocks, kb + 1) - kblock_start(k, blocks, kb);
        pairs += (size_t)(kc + 1) / 2;
    }
    return pairs * (size_t)panels * NR * sizeof(uint32_t);
}

int cnn_gemm_bf16_available(void)
{
    return wl_cpu_has(WL_CPU_AVX512F) && wl_cpu_has(WL_CPU_AVX512BW) &&
           wl_cpu_has(WL_CPU_AVX512_BF16);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define BF16 __attribute__((target("avx512f,avx512bw,avx512bf16")))

/* A pair of bf16 as one 32-bit word, the unit the micro-kernel broadcasts. may_alias: the
 * micro-kernel reads pairs from memory written as bf16 elements (an A converted ahead). */
typedef uint32_t __attribute__((may_alias)) pair_t;

/* Bits [0, count) set, count clamped to [0, 16] (or [0, 32]). */
static __mmask16 mask16(int count)
{
    return count <= 0 ? 0 : count >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << count) - 1);
}

static __mmask32 mask32(int count)
{
    return count <= 0 ? 0 : count >= 32 ? (__mmask32)0xffffffffu : (__mmask32)((1u << count) - 1);
}

/* 16 pairs (x0[j], x1[j]) as bf16, x0 in the low half of each 32-bit lane. */
BF16 static inline __m512i interleave_bf16(__m512 x0, __m512 x1)
{
    /* cvtne2ps: x0 to elements 0..15, x1 to 16..31; then element 2j <- j, 2j+1 <- 16 + j */
    const __m512i idx = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9,
                                         24, 8, 23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1,
                                         16, 0);
    return _mm512_permutexvar_epi16(idx, (__m512i)_mm512_cvtne2ps_pbh(x1, x0));
}

/* count floats of src as bf16 into dst, then zeros up to `padded` elements (even). Whole
 * 32-float pieces without masks (the masks' arithmetic was a third of this loop's time), then
 * the tail. */
BF16 static void convert_row(const float *restrict src, int count, uint16_t *restrict dst,
                             int padded)
{
    int j = 0;
    for (; j + 32 <= count; j += 32) {
        const __m512 lo = _mm512_loadu_ps(src + j), hi = _mm512_loadu_ps(src + j + 16);
        _mm512_storeu_si512(dst + j, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
    }
    for (; j < padded; j += 32) {
        const __m512 lo = _mm512_maskz_loadu_ps(mask16(count - j), src + j);
        const __m512 hi = _mm512_maskz_loadu_ps(mask16(count - j - 16), src + j + 16);
        _mm512_mask_storeu_epi16(dst + j, mask32(padded - j),
                                 (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
    }
}

void cnn_bf16_convert(const float *x, uint16_t *out, size_t n)
{
    if (!cnn_gemm_bf16_available())
        return;
    /* convert_row writes an even count (in int-sized pieces): an odd last element through a
     * copy */
    const size_t even = n & ~(size_t)1, piece = (size_t)1 << 30;
    for (size_t done = 0; done < even; done += piece) {
        const int count = (int)(even - done < piece ? even - done : piece);
        convert_row(x + done, count, out + done, count);
    }
    if (n & 1) {
        uint16_t last[2];
        convert_row(x + even, 1, last, 2);
        out[even] = last[0];
    }
}

/* The bf16 bit pattern is the float's top half: round, widen and shift back. */
BF16 static void round_in_place(float *x, size_t n)
{
    for (size_t j = 0; j < n; j += 16) {
        const __mmask16 m = mask16(n - j > 16 ? 16 : (int)(n - j));
        const __m256i h = (__m256i)_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(m, x + j));
        _mm512_mask_storeu_ps(x + j, m,
                              _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)));
    }
}

void cnn_bf16_round_in_place(float *x, size_t n)
{
    if (cnn_gemm_bf16_available())
        round_in_place(x, n);
}

/* Converts op(A)'s chunk: rows i0..i0+mc, k0..k0+kc. Not transposed: ap[i * kc2 + p] is the
 * pair (k0 + 2p, k0 + 2p + 1) of row i0 + i. Transposed (A stored k x m): ap[p * mc + i]. From
 * an A in bf16 (a16) only the transposed case is packed (interleaving two stored rows): the
 * other is read in place. */
BF16 static void pack_a(int trans_a, const float *a, const uint16_t *a16, ptrdiff_t lda, int i0,
                        int mc, int k0, int kc, uint32_t *restrict ap)
{
    const int kc2 = (kc + 1) / 2;
    if (a16) {
        for (int p = 0; p < kc2; p++) {
            const uint16_t *r0 = a16 + (ptrdiff_t)(k0 + 2 * p) * lda + i0, *r1 = r0 + lda;
            const int has_r1 = 2 * p + 1 < kc;
            for (int i = 0; i < mc; i += 16) {
                const __mmask16 m = mask16(mc - i);
                /* 16 bf16 of each row (a 512-bit masked load: no AVX512VL needed) */
                const __mmask32 m2 = (__mmask32)m;
                const __m512i lo = _mm512_cvtepu16_epi32(
                    _mm512_castsi512_si256(_mm512_maskz_loadu_epi16(m2, r0 + i)));
                const __m512i hi = has_r1 ? _mm512_cvtepu16_epi32(_mm512_castsi512_si256(
                                                _mm512_maskz_loadu_epi16(m2, r1 + i)))
                                          : _mm512_setzero_si512();
                _mm512_mask_storeu_epi32(ap + (size_t)p * mc + i, m,
                                         _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
            }
        }
        return;
    }
    if (!trans_a) {
        for (int i = 0; i < mc; i++)
            convert_row(a + (ptrdiff_t)(i0 + i) * lda + k0, kc, (uint16_t *)(ap + (size_t)i * kc2),
                        2 * kc2);
        return;
    }
    for (int p = 0; p < kc2; p++) {
        const float *r0 = a + (ptrdiff_t)(k0 + 2 * p) * lda + i0;
        const float *r1 = r0 + lda;
        const int has_r1 = 2 * p + 1 < kc;
        for (int i = 0; i < mc; i += 16) {
            const __mmask16 m = mask16(mc - i);
            const __m512 x0 = _mm512_maskz_loadu_ps(m, r0 + i);
            const __m512 x1 = has_r1 ? _mm512_maskz_loadu_ps(m, r1 + i) : _mm512_setzero_ps();
            _mm512_mask_storeu_epi32(ap + (size_t)p * mc + i, m, interleave_bf16(x0, x1));
        }
    }
}

/* Packs op(B)'s panel (k0..k0+kc, columns j0..j0+nr) as bp[p * 32 + j]: the pair (k0 + 2p,
 * k0 + 2p + 1) of column j0 + j, zero in the columns past nr. */
BF16 static void pack_b_panel(int trans_b, const float *b, ptrdiff_t ldb, int k0, int kc, int j0,
                              int nr, uint32_t *restrict bp)
{
    const int kc2 = (kc + 1) / 2;
    if (!trans_b) {
        const __mmask16 m0 = mask16(nr), m1 = mask16(nr - 16);
        for (int p = 0; p < kc2; p++) {
            const float *r0 = b + (ptrdiff_t)(k0 + 2 * p) * ldb + j0;
            const float *r1 = r0 + ldb;
            const int has_r1 = 2 * p + 1 < kc;
            const __m512 z = _mm512_setzero_ps();
            __m512i v0 = interleave_bf16(_mm512_maskz_loadu_ps(m0, r0),
                                         has_r1 ? _mm512_maskz_loadu_ps(m0, r1) : z);
            __m512i v1 = interleave_bf16(_mm512_maskz_loadu_ps(m1, r0 + 16),
                                         has_r1 ? _mm512_maskz_loadu_ps(m1, r1 + 16) : z);
            _mm512_storeu_si512(bp + (size_t)p * NR, v0);
            _mm512_storeu_si512(bp + (size_t)p * NR + 16, v1);
        }
        return;
    }
    /* op(B)(k, j) = B[j][k]: a stored row's pairs are adjacent. Convert the panel's rows (zero
     * past nr), then transpose the 32 x kc2 pairs with gathers down the columns (1.6 times as
     * fast as scalar stores for fc1's weights, 3136 x 128: 105 against 171 us) */
    _Alignas(64) uint32_t rows[NR][KC / 2];
    for (int j = 0; j < NR; j++) {
        if (j < nr)
            convert_row(b + (ptrdiff_t)(j0 + j) * ldb + k0, kc, (uint16_t *)rows[j], 2 * kc2);
        else
            memset(rows[j], 0, (size_t)kc2 * sizeof rows[j][0]);
    }
    const __m512i stride = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7,
                                                                6, 5, 4, 3, 2, 1, 0),
                                               _mm512_set1_epi32(KC / 2));
    for (int p = 0; p < kc2; p++) {
        _mm512_storeu_si512(bp + (size_t)p * NR, _mm512_i32gather_epi32(stride, &rows[0][p], 4));
        _mm512_storeu_si512(bp + (size_t)p * NR + 16,
                            _mm512_i32gather_epi32(stride, &rows[16][p], 4));
    }
}

/* C[0..mr) x [0..32) = beta C + op(A) op(B) over kc2 pairs of k, for a compile-time mr and
 * trans_a (one inlined copy per pair: the accumulators stay in registers). */
BF16 static inline __attribute__((always_inline)) void
micro_kernel(const int mr, const int trans_a, int kc2, const pair_t *restrict ap,
             ptrdiff_t lda2, const uint32_t *restrict bp, float *restrict c, ptrdiff_t ldc,
             __mmask16 m0, __mmask16 m1, float beta)
{
    __m512 acc[MR][2];
#pragma GCC unroll 12
    for (int i = 0; i < mr; i++)
        acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    for (int p = 0; p < kc2; p++) {
        const __m512bh b0 = (__m512bh)_mm512_loadu_si512(bp + (ptrdiff_t)p * NR);
        const __m512bh b1 = (__m512bh)_mm512_loadu_si512(bp + (ptrdiff_t)p * NR + 16);
        const pair_t *ak = trans_a ? ap + (ptrdiff_t)p * lda2 : ap + p;
#pragma GCC unroll 12
        for (int i = 0; i < mr; i++) {
            const __m512bh ai =
                (__m512bh)_mm512_set1_epi32((int)(trans_a ? ak[i] : ak[(ptrdiff_t)i * lda2]));
            acc[i][0] = _mm512_dpbf16_ps(acc[i][0], ai, b0);
            acc[i][1] = _mm512_dpbf16_ps(acc[i][1], ai, b1);
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

#define MK_CASE(r)                                                                            \
    case r:                                                                                   \
        if (trans_a)                                                                          \
            micro_kernel(r, 1, kc2, ap, lda2, bp, c, ldc, m0, m1, beta);                      \
        else                                                                                  \
            micro_kernel(r, 0, kc2, ap, lda2, bp, c, ldc, m0, m1, beta);                      \
        break;

BF16 static void micro_kernel_rows(int mr, int trans_a, int kc2, const pair_t *ap,
                                   ptrdiff_t lda2, const uint32_t *bp, float *c, ptrdiff_t ldc,
                                   __mmask16 m0, __mmask16 m1, float beta)
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

/* Packed panels [first, end) of op(B) (k x n), every k block: the layout gemm() walks, block by
 * block, each block's panels in order. */
BF16 static void pack_panels(int trans_b, int n, int k, const float *b, int ldb, uint32_t *out,
                             int first, int end)
{
    const int blocks = kblocks_of(k), panels = (n + NR - 1) / NR;
    for (int kb = 0; kb < blocks; kb++) {
        const int k0 = kblock_start(k, blocks, kb), kc = kblock_start(k, blocks, kb + 1) - k0;
        const size_t panel_pairs = (size_t)(kc + 1) / 2 * NR;
        for (int jp = first; jp < end && jp < panels; jp++) {
            const int j0 = jp * NR;
            pack_b_panel(trans_b, b, ldb, k0, kc, j0, n - j0 < NR ? n - j0 : NR,
                         out + (size_t)jp * panel_pairs);
        }
        out += (size_t)panels * panel_pairs;
    }
}

BF16 static void gemm(const struct cnn_bf16_gemm *g)
{
    const int trans_a = g->trans_a, trans_b = g->trans_b, m = g->m, n = g->n, k = g->k;
    const int lda = g->lda, ldb = g->ldb, ldc = g->ldc;
    const float *a = g->a, *b = g->b, beta = g->beta;
    const uint16_t *a16 = g->a16;
    const uint32_t *packed = g->b_packed;
    float *c = g->c;
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
    _Alignas(64) uint32_t ap[MC * (KC / 2)];
    _Alignas(64) uint32_t bp_buf[(KC / 2) * NR];
    const int blocks = kblocks_of(k), panels = (n + NR - 1) / NR;
    for (int kb = 0; kb < blocks; kb++) {
        const int k0 = kblock_start(k, blocks, kb), kc = kblock_start(k, blocks, kb + 1) - k0;
        const int kc2 = (kc + 1) / 2;
        const float kbeta = kb == 0 ? beta : 1.0f;
        for (int ic = 0; ic < m; ic += MC) {
            const int mc = m - ic < MC ? m - ic : MC;
            /* A in bf16, not transposed: its rows are read in place as pairs */
            const int in_place = a16 && !trans_a;
            const pair_t *ablock = ap;
            if (in_place)
                ablock = (const pair_t *)(a16 + (ptrdiff_t)ic * lda + k0);
            else
                pack_a(trans_a, a, a16, lda, ic, mc, k0, kc, ap);
            const ptrdiff_t lda2 = trans_a ? mc : in_place ? lda / 2 : kc2;
            for (int jp = 0; jp < panels; jp++) {
                const int j0 = jp * NR, nr = n - j0 < NR ? n - j0 : NR;
                const __mmask16 m0 = mask16(nr), m1 = mask16(nr - 16);
                const uint32_t *bp = bp_buf;
                if (packed)
                    bp = packed + (size_t)jp * kc2 * NR;
                else
                    pack_b_panel(trans_b, b, ldb, k0, kc, j0, nr, bp_buf);
                for (int i0 = 0; i0 < mc; i0 += MR) {
                    const int mr = mc - i0 < MR ? mc - i0 : MR;
                    const pair_t *ablk = trans_a ? ablock + i0 : ablock + i0 * lda2;
                    micro_kernel_rows(mr, trans_a, kc2, ablk, lda2, bp,
                                      c + (ptrdiff_t)(ic + i0) * ldc + j0, ldc, m0, m1, kbeta);
                }
            }
        }
        if (packed)
            packed += (size_t)panels * kc2 * NR;
    }
}

void cnn_gemm_bf16(int trans_a, int trans_b, int m, int n, int k, const float *a, int lda,
                   const float *b, int ldb, float beta, float *c, int ldc)
{
    const struct cnn_bf16_gemm g = {.trans_a = trans_a, .trans_b = trans_b, .m = m, .n = n,
                                    .k = k, .a = a, .lda = lda, .b = b, .ldb = ldb,
                                    .beta = beta, .c = c, .ldc = ldc};
    gemm(&g);
}

void cnn_gemm_bf16_run(const struct cnn_bf16_gemm *g)
{
    gemm(g);
}


void cnn_gemm_bf16_pack(int trans_b, int n, int k, const float *b, int ldb, void *packed,
                        int first_panel, int end_panel)
{
    if (n > 0 && k > 0)
        pack_panels(trans_b, n, k, b, ldb, packed, first_panel, end_panel);
}

#else

/* Not x86-64 (or not GCC/Clang): cnn_gemm_bf16_available() is 0, so none of these is called. */

void cnn_gemm_bf16(int trans_a, int trans_b, int m, int n, int k, const float *a, int lda,
                   const float *b, int ldb, float beta, float *c, int ldc)
{
    cnn_gemm_blas(trans_a, trans_b, m, n, k, a, lda, b, ldb, beta, c, ldc);
}

void cnn_gemm_bf16_pack(int trans_b, int n, int k, const float *b, int ldb, void *packed,
                        int first_panel, int end_panel)
{
    (void)trans_b, (void)n, (void)k, (void)b, (void)ldb, (void)packed, (void)first_panel,
        (void)end_panel;
}

void cnn_gemm_bf16_run(const struct cnn_bf16_gemm *g)
{
    (void)g;
}

void cnn_bf16_round_in_place(float *x, size_t n)
{
    (void)x, (void)n;
}

void cnn_bf16_convert(const float *x, uint16_t *out, size_t n)
{
    (void)x, (void)out, (void)n;
}

#endif
