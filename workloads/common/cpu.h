/* cpu: which instruction-set extensions the workloads' hand-written kernels may use, decided at
 * run time from cpuid and the OS's saved register state (xgetbv), so that one binary runs the
 * fastest kernel a CPU has and never one it lacks.
 *
 * MLBENCH_CPU_DISABLE (comma- or space-separated feature names as /proc/cpuinfo spells them,
 * e.g. "avx512_bf16" or "avx512f,avx512_bf16") makes the named features count as absent: a
 * machine without them can be simulated for tests, and a kernel ruled out to compare the others.
 * mlbench's `env` honours the same variable (src/result/envinfo/cpu.c). */
#ifndef MLBENCH_WL_CPU_H
#define MLBENCH_WL_CPU_H

enum wl_cpu_feature {
    WL_CPU_AVX2,        /* with FMA */
    WL_CPU_AVX512F,     /* with the OS saving the zmm and mask registers */
    WL_CPU_AVX512BW,
    WL_CPU_AVX512VL,
    WL_CPU_AVX512_VNNI,
    WL_CPU_AVX512_BF16, /* vdpbf16ps, vcvtne2ps2bf16 */
    WL_CPU_AVX512_FP16,
    WL_CPU_AVX_VNNI,
    WL_CPU_AMX_BF16, /* with the OS saving the tile state (Linux also asks arch_prctl) */
    WL_CPU_FEATURE_COUNT
};

/* The feature's /proc/cpuinfo name ("avx512_bf16"). */
const char *wl_cpu_feature_name(enum wl_cpu_feature f);

/* Nonzero when this CPU and OS run f and MLBENCH_CPU_DISABLE does not name it; always 0 off
 * x86-64. Thread-safe (the answer is computed once). */
int wl_cpu_has(enum wl_cpu_feature f);

/* Nonzero when the CPU has f but MLBENCH_CPU_DISABLE removed it (for messages). */
int wl_cpu_disabled(enum wl_cpu_feature f);

#endif
