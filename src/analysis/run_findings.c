/* run_findings: the findings about the run as a whole (a row of finding_checks.h,
 * FINDING_RUN): GPU memory headroom, other load, CPU contention. Documented for users in
 * docs/analysis.md ("Extra findings"): keep the two in step. */
#include "analysis/finding_checks.h"
#include "analysis/advice.h"

#include <math.h>

#include "util/strbuf.h"
#include "util/units.h"

/* Appends to the evidence and advice texts, fixed buffers (util/strbuf.h). */
#define cat(...) strbuf_catf(__VA_ARGS__)

#define GPU_MEM_HEADROOM 0.50   /* peak memory below this share of the GPU's: room to grow */
#define GPU_MEM_USABLE 0.90     /* share of GPU memory a larger batch may plan to fill */
#define PSI_CPU_MIN 0.20        /* tasks waiting for a CPU at least this share: contention */

static void run_findings_add(const struct finding_input *in, struct findings_builder *b)
{
    const struct analysis_context *ctx = in->ctx;
    const struct stage_resources *s = in->stage;
    const struct figures *f = in->figures;
    char ev[TEXT_MAX] = "", rec[TEXT_MAX] = "";

    if (f->gpu_used && known(s->gpu_mem_peak_bytes) && known(s->gpu_mem_total_bytes) &&
        s->gpu_mem_peak_bytes > 0 && s->gpu_mem_total_bytes > 0 &&
        s->gpu_mem_peak_bytes < GPU_MEM_HEADROOM * s->gpu_mem_total_bytes) {
        char a[32], c[32];
        double times = floor(GPU_MEM_USABLE * s->gpu_mem_total_bytes / s->gpu_mem_peak_bytes);
        cat(ev, sizeof ev, "GPU memory peak %s of %s (%.0f %%)",
            units_bytes(s->gpu_mem_peak_bytes, a, sizeof a),
            units_bytes(s->gpu_mem_total_bytes, c, sizeof c),
            pct(s->gpu_mem_peak_bytes / s->gpu_mem_total_bytes));
        if (ctx->batch_size > 0)
            cat(ev, sizeof ev, " at batch %ld", ctx->batch_size);
        cat(rec, sizeof rec,
            "room for a larger batch, at most about %.0fx by memory (activations grow with the "
            "batch, weights and optimizer state do not): find the largest that fits with "
            "mlbench sweep --find-max batch=", times);
        if (ctx->batch_size > 0)
            cat(rec, sizeof rec, "%ld..%.0f", ctx->batch_size, (double)ctx->batch_size * times);
        else
            cat(rec, sizeof rec, "LO..HI");
        cat(rec, sizeof rec, " -- CMD ... {batch} (it also shows the throughput at each size) "
            "and scale the learning rate with the batch; it pays most when the GPU is not "
            "saturated");
        findings_add(b, "gpu-memory-headroom", s, ev, rec, 0);
    }

    if (known(s->other_cores) && s->other_cores >= OTHER_LOAD_CORES) {
        ev[0] = rec[0] = '\0';
        cat(ev, sizeof ev, "other processes kept %.1f cores busy on average", s->other_cores);
        if (f->ncpu)
            cat(ev, sizeof ev, " (of %d)", f->ncpu);
        cat(rec, sizeof rec,
            "the timings may be disturbed: stop other programs or use a quiet machine and "
            "measure again");
        findings_add(b, "other-load", s, ev, rec, 0);
    }

    if (known(s->psi_cpu_some) && s->psi_cpu_some >= PSI_CPU_MIN) {
        ev[0] = rec[0] = '\0';
        /* a rate over a short window can exceed 1 by the sampling's jitter */
        cat(ev, sizeof ev, "tasks waited for a CPU %.0f %% of the time",
            pct(fmin(1, s->psi_cpu_some)));
        if (known(f->cpu)) {
            cat(ev, sizeof ev, ", ");
            rule_figures_cat_cores(ev, sizeof ev, f->cpu, f->ncpu, "busy");
        }
        if (known(s->threads_peak))
            cat(ev, sizeof ev, ", up to %.0f thread%s", s->threads_peak,
                s->threads_peak == 1 ? "" : "s");
        if (known(s->other_cores) && s->other_cores >= OTHER_LOAD_CORES)
            cat(rec, sizeof rec, "other processes compete for the CPUs: use a quiet machine");
        else if (f->ncpu && known(s->threads_peak) && s->threads_peak > f->ncpu) {
            /* a DataLoader is named only where the workload said it has one */
            cat(rec, sizeof rec, "more threads want to run than there are cores (every process "
                "%swith its own OpenMP/BLAS pool?): ",
                ctx->loader_workers > 0 ? "or DataLoader worker " : "");
            advice_fewer_threads(ctx, f->ncpu, rec, sizeof rec);
        } else if (known(f->cpu) && ctx->cpu_quota > 0)
            cat(rec, sizeof rec,
                "the cgroup allows %.1f cores (cpu.max), and its quota may be throttling the "
                "workload: give it the cores it uses", ctx->cpu_quota);
        else if (known(f->cpu) && !(ctx->cpu_quota == 0))
            cat(rec, sizeof rec,
                "a CPU quota (container or cgroup limit) may be throttling the workload: check "
                "cpu.max and give it the cores it uses");
        else if (known(f->cpu)) /* no quota (issue 35: cpu.max was advised without one) */
            cat(rec, sizeof rec,
                "no CPU quota limits the workload and other processes were quiet: its own "
                "threads outnumbered the cores at times between samples; keep its busy threads "
                "at or below the %d cores", f->ncpu);
        else /* nothing known of the workload's CPU use to blame a quota on */
            cat(rec, sizeof rec, "the machine was busy with runnable tasks: the timings may be "
                "disturbed; measure again on a quieter machine");
        findings_add(b, "cpu-contention", s, ev, rec, 0);
    }
}

const struct finding_check run_findings_check = {FINDING_RUN, run_findings_add};
