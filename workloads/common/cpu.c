/* cpu: run-time feature detection (cpu.h). cpuid says what the processor implements; a vector
 * extension is usable only when the OS also saves its registers across context switches, which
 * XCR0 (read by xgetbv, itself allowed only when cpuid reports OSXSAVE) says: bits 1-2 for the
 * ymm state, 5-7 for the AVX-512 mask and zmm state, 17-18 for the AMX tiles. */
#include "common/cpu.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[WL_CPU_FEATURE_COUNT] = {
    [WL_CPU_AVX2] = "avx2",
    [WL_CPU_AVX512F] = "avx512f",
    [WL_CPU_AVX512BW] = "avx512bw",
    [WL_CPU_AVX512VL] = "avx512vl",
    [WL_CPU_AVX512_VNNI] = "avx512_vnni",
    [WL_CPU_AVX512_BF16] = "avx512_bf16",
    [WL_CPU_AVX512_FP16] = "avx512_fp16",
    [WL_CPU_AVX_VNNI] = "avx_vnni",
    [WL_CPU_AMX_BF16] = "amx_bf16",
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static unsigned hardware, disabled; /* bit f: the CPU and OS have f; MLBENCH_CPU_DISABLE names f */

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>

static unsigned long long xcr0(void)
{
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((unsigned long long)hi << 32) | lo;
}

static unsigned detect(void)
{
    unsigned a, b, c, d, f = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) /* no OSXSAVE: no xgetbv */
        return 0;
    const int fma = (c >> 12) & 1, avx = (c >> 28) & 1;
    const unsigned long long x = xcr0();
    const int ymm_saved = (x & 0x6) == 0x6, zmm_saved = (x & 0xe6) == 0xe6,
              tiles_saved = (x & 0x60000) == 0x60000;
    if (!avx || !ymm_saved || __get_cpuid_max(0, NULL) < 7)
        return 0;
    unsigned b7, c7, d7, a71 = 0, b71, c71, d71;
    __cpuid_count(7, 0, a, b7, c7, d7);
    const unsigned max_sub7 = a;
    if (max_sub7 >= 1)
        __cpuid_count(7, 1, a71, b71, c71, d71);
    if ((b7 >> 5) & 1 && fma)
        f |= 1u << WL_CPU_AVX2;
    if ((a71 >> 4) & 1)
        f |= 1u << WL_CPU_AVX_VNNI;
    if (zmm_saved && (b7 >> 16) & 1) {
        f |= 1u << WL_CPU_AVX512F;
        if ((b7 >> 30) & 1)
            f |= 1u << WL_CPU_AVX512BW;
        if ((b7 >> 31) & 1)
            f |= 1u << WL_CPU_AVX512VL;
        if ((c7 >> 11) & 1)
            f |= 1u << WL_CPU_AVX512_VNNI;
        if ((a71 >> 5) & 1)
            f |= 1u << WL_CPU_AVX512_BF16;
        if ((d7 >> 23) & 1)
            f |= 1u << WL_CPU_AVX512_FP16;
    }
    if (tiles_saved && (d7 >> 22) & 1)
        f |= 1u << WL_CPU_AMX_BF16;
    return f;
}
#else
static unsigned detect(void)
{
    return 0;
}
#endif

/* The features MLBENCH_CPU_DISABLE names; other words are ignored (they may name features
 * other programs know). */
static unsigned parse_disabled(const char *s)
{
    unsigned mask = 0;
    while (s && *s) {
        size_t skip = strspn(s, ", \t"), len;
        s += skip;
        len = strcspn(s, ", \t");
        for (int f = 0; f < WL_CPU_FEATURE_COUNT; f++)
            if (len && strlen(names[f]) == len && strncmp(s, names[f], len) == 0)
                mask |= 1u << f;
        s += len;
    }
    return mask;
}

static void init(void)
{
    hardware = detect();
    disabled = parse_disabled(getenv("MLBENCH_CPU_DISABLE"));
}

const char *wl_cpu_feature_name(enum wl_cpu_feature f)
{
    return f >= 0 && f < WL_CPU_FEATURE_COUNT ? names[f] : "?";
}

int wl_cpu_has(enum wl_cpu_feature f)
{
    pthread_once(&once, init);
    return f >= 0 && f < WL_CPU_FEATURE_COUNT && ((hardware & ~disabled) >> f) & 1;
}

int wl_cpu_disabled(enum wl_cpu_feature f)
{
    pthread_once(&once, init);
    return f >= 0 && f < WL_CPU_FEATURE_COUNT && ((hardware & disabled) >> f) & 1;
}
