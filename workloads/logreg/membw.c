/* membw: streaming-read bandwidth (see membw.h). */
#include "logreg/membw.h"

#include <stdint.h>
#include <string.h>

#include "common/opts.h"
#include "common/pool.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* The same with 64-byte loads: scalar loads alone fall short of what the evaluation kernel
 * (AVX-512) draws from memory. */
__attribute__((target("avx512f"))) static uint64_t sum_avx512(const unsigned char *p,
                                                                 size_t words)
{
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
    size_t i = 0;
    for (; i + 32 <= words; i += 32) {
        a0 = _mm512_add_epi64(a0, _mm512_loadu_si512(p + i * 8));
        a1 = _mm512_add_epi64(a1, _mm512_loadu_si512(p + i * 8 + 64));
        a2 = _mm512_add_epi64(a2, _mm512_loadu_si512(p + i * 8 + 128));
        a3 = _mm512_add_epi64(a3, _mm512_loadu_si512(p + i * 8 + 192));
    }
    /* Lanes summed as unsigned (the intrinsic reduction adds them as signed). */
    uint64_t lanes[8], s = 0;
    _mm512_storeu_si512(lanes, _mm512_add_epi64(_mm512_add_epi64(a0, a1),
                                                _mm512_add_epi64(a2, a3)));
    for (int k = 0; k < 8; k++)
        s += lanes[k];
    for (; i < words; i++) {
        uint64_t v;
        memcpy(&v, p + i * 8, sizeof v);
        s += v;
    }
    return s;
}

static int has_avx512(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f");
}
#else
static uint64_t sum_avx512(const unsigned char *p, size_t words)
{
    (void)p;
    (void)words;
    return 0;
}

static int has_avx512(void)
{
    return 0;
}
#endif

struct membw_job {
    const unsigned char *buf;
    size_t words; /* 8-byte words */
    int avx512;
    uint64_t sums[256];
};

/* Sums the worker's share with eight independent accumulators, so that the loads, not the
 * additions, set the pace; the sum is kept so the reads cannot be optimised away. */
static void read_worker(void *arg, int worker, int workers)
{
    struct membw_job *job = arg;
    size_t lo = job->words * (size_t)worker / (size_t)workers;
    size_t hi = job->words * (size_t)(worker + 1) / (size_t)workers;
    if (job->avx512) {
        job->sums[worker % 256] = sum_avx512(job->buf + lo * 8, hi - lo);
        return;
    }
    uint64_t a[8] = {0};
    size_t i = lo;
    for (; i + 8 <= hi; i += 8)
        for (int k = 0; k < 8; k++) {
            uint64_t v;
            memcpy(&v, job->buf + (i + (size_t)k) * 8, sizeof v);
            a[k] += v;
        }
    for (; i < hi; i++) {
        uint64_t v;
        memcpy(&v, job->buf + i * 8, sizeof v);
        a[0] += v;
    }
    job->sums[worker % 256] = a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7];
}

double membw_read_bytes_per_s(struct pool *pool, const void *buf, size_t bytes, int passes)
{
    struct membw_job job = {.buf = buf, .words = bytes / 8, .avx512 = has_avx512()};
    if (!job.words)
        return 0.0;
    double best = 0.0;
    for (int p = 0; p < (passes > 0 ? passes : 1); p++) {
        double t0 = wl_now();
        pool_run(pool, read_worker, &job);
        double dt = wl_now() - t0;
        if (dt > 0.0 && (double)(job.words * 8) / dt > best)
            best = (double)(job.words * 8) / dt;
    }
    /* Read the sums once so that the compiler must keep the loads. */
    volatile uint64_t sink = 0;
    for (int k = 0; k < 256; k++)
        sink += job.sums[k];
    (void)sink;
    return best;
}
