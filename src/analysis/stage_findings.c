/* stage_findings: the findings about a stage beyond its verdict (a row of finding_checks.h,
 * FINDING_STAGE): mixed precision (on a GPU or on a CPU), tensor cores idle, memory pressure.
 * Documented for users in docs/analysis.md ("Extra findings"): keep the two in step. */
#include "analysis/finding_checks.h"
#include "analysis/advice.h"

#include <math.h>
#include <string.h>
#include <strings.h>

#include "util/strbuf.h"

/* Appends to the evidence and advice texts, fixed buffers (util/strbuf.h). */
#define cat(...) strbuf_catf(__VA_ARGS__)

#define MIXED_PRECISION_SPEEDUP 1.3 /* assumed fp32 -> bf16 gain of a GPU-bound stage */
#define CPU_BF16_SPEEDUP 1.3    /* assumed fp32 -> bf16 gain of CPU-bound training on a CPU with
                                 * bf16 matrix instructions (1.45-1.6x measured: analysis.md) */
#define TENSOR_CHECK_SM_ACTIVE 0.20 /* GPM SM active at least: the GPU does enough work that its
                                     * matrix products should show on the tensor pipes */
#define TENSOR_IDLE 0.01        /* tensor pipes active less: "near 0", not on tensor cores */

/* fp32 or not declared: the precision that leaves tensor cores (or a CPU's bf16 matrix
 * instructions) unused. */
static bool full_precision(const char *precision)
{
    return !precision || !*precision || !strcasecmp(precision, "fp32") ||
           !strcasecmp(precision, "float32") || !strcasecmp(precision, "float");
}

/* The precision declared asks for tensor cores: "bf16", "fp16", "tf32", "amp"... (NULL when
 * not: fp32, fp64, int8 (other pipes), or nothing declared). */
static const char *tensor_precision(const char *precision)
{
    static const char *const names[] = {"bf16", "bfloat16", "fp16", "float16", "half", "tf32",
                                        "amp", "mixed"};
    for (size_t i = 0; precision && i < sizeof names / sizeof names[0]; i++)
        if (strcasestr(precision, names[i]))
            return names[i];
    return NULL;
}

/* A reduced-precision run whose SMs work while its tensor pipes do not: its matrix products
 * run on the CUDA cores (autocast not covering them, fp32 tensors, TF32 not enabled, shapes
 * cuBLAS will not put on tensor cores). GPM only. */
static void tensor_cores_idle(const struct analysis_context *ctx, const struct stage_resources *s,
                              const struct figures *f, struct findings_builder *b)
{
    const char *kind = tensor_precision(ctx->precision);
    if (!kind || !f->gpu_active || !known(f->tensor_active) || !known(f->sm_active) ||
        f->sm_active < TENSOR_CHECK_SM_ACTIVE || f->tensor_active >= TENSOR_IDLE)
        return;
    char ev[TEXT_MAX] = "", rec[TEXT_MAX] = "";
    cat(ev, sizeof ev, "precision %s, %.0f %% of the SMs active, but the tensor pipes only "
        "%.1f %% of the time", ctx->precision, pct(f->sm_active), pct(f->tensor_active));
    if (ctx->gpu_name)
        cat(ev, sizeof ev, " (%s)", ctx->gpu_name);
    if (!strcmp(kind, "tf32"))
        cat(rec, sizeof rec, "the matrix products do not run on tensor cores: TF32 is off by "
            "default in PyTorch for matmuls: torch.backends.cuda.matmul.allow_tf32 = True (or "
            "torch.set_float32_matmul_precision(\"high\")) and torch.backends.cudnn.allow_tf32");
    else
        cat(rec, sizeof rec, "the matrix products do not run on tensor cores: check that "
            "autocast covers the forward pass (torch.autocast(\"cuda\", dtype=torch.bfloat16)), "
            "that the operands really are bf16/fp16 rather than fp32, and that the matrix "
            "dimensions are multiples of 8; then measure again: tensor cores do these products "
            "many times faster");
    findings_add(b, "tensor-cores-idle", s, ev, rec, 0);
}

static bool is_training(const struct stage_resources *s)
{
    return strcasestr(stage_name(s), "train") != NULL;
}

#define DATA_BOUND_SHARE 0.5 /* a stage whose loader stages inside take this share or more of it
                              * waits for data: faster arithmetic does not help it */

/* The share of the stage's time its loader stages inside it (data_wait, a DataLoader's
 * iterations: advice_is_loader_stage) took; 0 when it has none. */
static double data_share(const struct finding_input *in)
{
    const struct stage_resources *s = in->stage;
    if (s < in->stages || s >= in->stages + in->n || !(s->time_ns > 0))
        return 0;
    double sum = 0;
    for (const struct stage_resources *c = s + 1; c < in->stages + in->n && c->depth > s->depth;
         c++)
        if (c->depth == s->depth + 1 && advice_is_loader_stage(in->ctx, c->name) &&
            known(c->time_ns))
            sum += c->time_ns;
    return sum / s->time_ns;
}

static bool cpu_bound(const char *verdict)
{
    return !strcmp(verdict, "cpu-bound-parallel") || !strcmp(verdict, "cpu-bound-single-thread") ||
           !strcmp(verdict, "cpu-bound-one-core") ||
           !strcmp(verdict, "cpu-bound");
}

/* fp32 training that the CPU computes, on a CPU whose bf16 instructions do twice the
 * multiply-adds per instruction (vdpbf16ps; AMX tiles far more): bf16 GEMM operands with fp32
 * sums and master weights train at about the same accuracy. Only where the CPU is what bounds
 * the stage: a stage waiting on I/O or a GPU gains nothing from faster arithmetic. */
static void cpu_mixed_precision(const struct analysis_context *ctx,
                                const struct stage_resources *s, const struct figures *f,
                                struct findings_builder *b)
{
    char ev[TEXT_MAX] = "", rec[TEXT_MAX] = "";
    bool fp32 = ctx->precision && *ctx->precision;
    cat(ev, sizeof ev, "training on the CPU in %s with ",
        fp32 ? ctx->precision : "fp32 (precision not declared)");
    rule_figures_cat_cores(ev, sizeof ev, f->cpu, f->ncpu, "busy");
    cat(ev, sizeof ev, ", and this CPU has %s", ctx->cpu_bf16);
    cat(rec, sizeof rec, "%stry bf16 mixed precision on the CPU (",
        fp32 ? "" : "if it runs in fp32, ");
    advice_cpu_bf16(ctx, rec, sizeof rec);
    cat(rec, sizeof rec, "): its bf16 matrix instructions do twice the multiply-adds of fp32; "
        "check accuracy with mlbench compare --max-accuracy-drop");
    findings_add(b, "mixed-precision", s, ev, rec,
                 fp32 ? f->time_ns * (1 - 1 / CPU_BF16_SPEEDUP) : 0);
}

static void stage_findings_add(const struct finding_input *in, struct findings_builder *b)
{
    const struct analysis_context *ctx = in->ctx;
    const struct stage_resources *s = in->stage;
    const struct figures *f = in->figures;
    const char *verdict = in->verdict;
    char ev[TEXT_MAX] = "", rec[TEXT_MAX] = "";
    bool gpu_bound = !strcmp(verdict, "gpu-bound");
    /* issue 35: bf16 was advised for a train stage 98 % waiting for data */
    bool data_bound = data_share(in) >= DATA_BOUND_SHARE;

    /* Half precision pays only when the GPU has enough work (docs/analysis.md): in a
     * GPU-bound stage, or a training stage at least half busy; not a launch-bound one. */
    if (f->gpu_used && ctx->gpu_tensor_cores && full_precision(ctx->precision) && !data_bound &&
        (gpu_bound || (is_training(s) && f->util >= GPU_LOW_UTIL))) {
        bool fp32 = ctx->precision && *ctx->precision;
        cat(ev, sizeof ev, "GPU %.0f %% busy in %s on %s, which has tensor cores", pct(f->util),
            fp32 ? ctx->precision : "fp32 (precision not declared)",
            ctx->gpu_name ? ctx->gpu_name : "a GPU");
        cat(rec, sizeof rec,
            "%stry bf16 (or fp16) autocast, or at least TF32 matrix products, and check accuracy "
            "with mlbench compare; it pays when the GPU has enough work per step",
            fp32 ? "" : "if it runs in fp32, ");
        findings_add(b, "mixed-precision", s, ev, rec,
                    gpu_bound && fp32 ? f->time_ns * (1 - 1 / MIXED_PRECISION_SPEEDUP) : 0);
    }

    tensor_cores_idle(ctx, s, f, b);

    /* The same id on the CPU: the GPU rule above stays the one for a run that used a GPU, and
     * a run that says it ran on another device (a GPU NVML did not see) is not told about its
     * CPU's arithmetic. */
    if (!f->gpu_used && (!ctx->device || !strcasecmp(ctx->device, "cpu")) && ctx->cpu_bf16 &&
        full_precision(ctx->precision) && cpu_bound(verdict) && is_training(s) && !data_bound)
        cpu_mixed_precision(ctx, s, f, b);

    if (f->mem_pressure && strcmp(verdict, "memory-bound") != 0) {
        ev[0] = rec[0] = '\0';
        rule_figures_cat_memory(ev, sizeof ev, s, f);
        cat(rec, sizeof rec,
            "memory is short even though it is not what bounds this stage: swapping slows "
            "everything and disturbs the timings; reduce memory use or add RAM");
        findings_add(b, "memory-pressure", s, ev, rec, 0);
    }
}

const struct finding_check stage_findings_check = {FINDING_STAGE, stage_findings_add};
