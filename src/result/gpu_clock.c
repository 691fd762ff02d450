/* gpu_clock: per-run GPU clock marking, clock scaling and --discard-throttled (see
 * gpu_clock.h, docs/statistics.md#gpu-clock). */
#include "result/gpu_clock.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats.h"
#include "result/result.h"
#include "result/summary_warn.h"
#include "util/xalloc.h"

/* The GPU index in labels gpu="N" (0..GPU_CLOCK_MAX_GPUS-1), or -1. */
static int gpu_of(const char *labels)
{
    int i;
    return sscanf(labels, "gpu=\"%d\"", &i) == 1 && i >= 0 && i < GPU_CLOCK_MAX_GPUS ? i : -1;
}

enum { UTIL, CLOCK, REASONS, PROC_MEM, N_KINDS };
static const char *const kind_names[N_KINDS] = {
    "gpu_utilization_ratio", "gpu_sm_clock_hertz", "gpu_throttle_reasons",
    "gpu_process_memory_bytes",
};

/* Columns of t per GPU and kind (-1: absent). */
struct columns {
    long col[GPU_CLOCK_MAX_GPUS][N_KINDS];
    int n_gpus; /* highest index + 1 */
};

static void find_columns(const struct sample_table *t, struct columns *c)
{
    memset(c->col, 0xff, sizeof c->col); /* -1 */
    c->n_gpus = 0;
    for (size_t i = 0; i < t->n_series; i++) {
        int g = gpu_of(t->defs[i].labels);
        if (g < 0)
            continue;
        for (int k = 0; k < N_KINDS; k++)
            if (!strcmp(t->defs[i].name, kind_names[k])) {
                c->col[g][k] = (long)i;
                if (g + 1 > c->n_gpus)
                    c->n_gpus = g + 1;
            }
    }
}

/* The GPUs considered in t: see gpu_clock_run_compute. */
static uint64_t considered(const struct sample_table *t, const struct columns *c, bool all_gpus)
{
    uint64_t used = 0, busy = 0, known = 0, present = 0;
    for (int g = 0; g < c->n_gpus; g++) {
        long mem = c->col[g][PROC_MEM], util = c->col[g][UTIL];
        for (size_t row = 0; row < t->n; row++) {
            if (mem >= 0 && isfinite(t->v[mem][row])) {
                known |= 1ull << g;
                if (t->v[mem][row] > 0)
                    used |= 1ull << g;
            }
            if (util >= 0 && t->v[util][row] > 0)
                busy |= 1ull << g;
        }
        if (mem >= 0 || util >= 0)
            present |= 1ull << g;
    }
    return all_gpus ? present : used | (busy & ~known);
}

void gpu_clock_run_compute(const struct sample_table *t, const double *max_hz, bool all_gpus,
                           double threshold, struct gpu_clock_run *out)
{
    memset(out, 0, sizeof *out);
    out->scaling = NAN;
    struct columns c;
    find_columns(t, &c);
    uint64_t gpus = considered(t, &c, all_gpus);
    double ratio_sum = 0;
    size_t n_ratio = 0;
    for (int g = 0; g < c.n_gpus; g++) {
        const long *col = c.col[g];
        if (!(gpus & (1ull << g)) || col[UTIL] < 0)
            continue;
        double max = max_hz ? max_hz[g] : NAN;
        for (size_t row = 0; row < t->n; row++) {
            if (!(t->v[col[UTIL]][row] >= GPU_CLOCK_BUSY_UTIL))
                continue; /* idle, or not known */
            out->busy_samples++;
            bool throttled = false;
            double hz = col[CLOCK] >= 0 ? t->v[col[CLOCK]][row] : NAN;
            if (max > 0 && isfinite(max) && isfinite(hz)) {
                double ratio = hz / max;
                ratio_sum += ratio;
                n_ratio++;
                if (ratio < threshold) {
                    out->slow_samples++;
                    throttled = true;
                }
            }
            double bits = col[REASONS] >= 0 ? t->v[col[REASONS]][row] : NAN;
            if (isfinite(bits) && bits >= 0) {
                uint64_t set = (uint64_t)bits & GPU_CLOCK_REASON_BITS;
                if (set & GPU_CLOCK_POWER_BITS)
                    out->reasons |= GPU_CLOCK_POWER;
                if (set & GPU_CLOCK_THERMAL_BITS)
                    out->reasons |= GPU_CLOCK_THERMAL;
                throttled = throttled || set;
            }
            out->throttled_samples += throttled;
        }
    }
    out->measured = out->busy_samples > 0;
    if (n_ratio)
        out->scaling = ratio_sum / (double)n_ratio;
    out->throttled = out->throttled_samples >= 1 &&
                     100 * out->throttled_samples >= GPU_CLOCK_RUN_PERCENT * out->busy_samples;
}

void gpu_clock_max_hertz(const struct machine_facts *facts, double *max_hz)
{
    for (int g = 0; g < GPU_CLOCK_MAX_GPUS; g++)
        max_hz[g] = NAN;
    for (size_t i = 0; facts && i < facts->sources.n_gpus; i++) {
        const struct gpu_facts *gpu = &facts->sources.gpus[i];
        if (gpu->index >= 0 && gpu->index < GPU_CLOCK_MAX_GPUS && gpu->sm_clock_max_hertz > 0)
            max_hz[gpu->index] = gpu->sm_clock_max_hertz;
    }
}

double gpu_clock_threshold(const struct run_config *cfg)
{
    return cfg && cfg->throttle_threshold_pct > 0 ? cfg->throttle_threshold_pct / 100
                                                  : GPU_CLOCK_THRESHOLD;
}

size_t gpu_clock_mark(struct result *r, const struct machine_facts *facts,
                      const struct repetition **used, size_t n)
{
    struct gpu_clock_summary *gc = &r->summary.gpu_clock;
    double max_hz[GPU_CLOCK_MAX_GPUS];
    gpu_clock_max_hertz(facts, max_hz);
    memset(gc, 0, sizeof *gc);
    gc->threshold = gpu_clock_threshold(r->config);
    gc->scaling_median = gc->scaling_min = gc->scaling_throttled = NAN;
    double *slow = xmalloc((r->n_reps + 1) * sizeof *slow);
    size_t n_slow = 0;
    for (size_t i = 0; i < r->n_reps; i++) {
        struct repetition *rep = &r->reps[i];
        gpu_clock_run_compute(&rep->samples, max_hz, r->config && r->config->all_gpus,
                              gc->threshold, &rep->gpu_clock);
        if (rep->warmup || !rep->gpu_clock.measured)
            continue;
        gc->runs++;
        if (rep->gpu_clock.throttled) {
            gc->throttled_runs++;
            gc->reasons |= rep->gpu_clock.reasons;
            if (isfinite(rep->gpu_clock.scaling))
                slow[n_slow++] = rep->gpu_clock.scaling;
        }
    }
    if (n_slow)
        gc->scaling_throttled = stats_median(slow, n_slow);
    free(slow);
    gc->discard = r->config && r->config->discard_throttled;
    if (!gc->discard)
        return n;
    size_t kept = 0;
    for (size_t k = 0; k < n; k++)
        if (!used[k]->gpu_clock.throttled)
            used[kept++] = used[k];
    if (kept == 0) { /* every ok run throttled: statistics over them rather than none */
        gc->kept_all = n > 0;
        return n;
    }
    gc->discarded_runs = n - kept;
    return kept;
}

/* "power, thermal", or what else made runs throttled, into buf. */
static const char *why(const struct gpu_clock_summary *gc, char *buf, size_t len)
{
    if (gc->reasons)
        snprintf(buf, len, "%s%s%s", gc->reasons & GPU_CLOCK_POWER ? "power" : "",
                 gc->reasons == (GPU_CLOCK_POWER | GPU_CLOCK_THERMAL) ? ", " : "",
                 gc->reasons & GPU_CLOCK_THERMAL ? "thermal" : "");
    else
        snprintf(buf, len, "SM clock below %.0f %% of its maximum", 100 * gc->threshold);
    return buf;
}

void gpu_clock_summarize(struct summary *s, const struct repetition *const *used, size_t n)
{
    struct gpu_clock_summary *gc = &s->gpu_clock;
    double *x = xmalloc((n + 1) * sizeof *x);
    size_t m = 0;
    for (size_t k = 0; k < n; k++)
        if (used[k]->gpu_clock.measured && isfinite(used[k]->gpu_clock.scaling))
            x[m++] = used[k]->gpu_clock.scaling;
    if (m) {
        gc->scaling_median = stats_median(x, m);
        gc->scaling_min = x[0];
        for (size_t k = 1; k < m; k++)
            if (x[k] < gc->scaling_min)
                gc->scaling_min = x[k];
    }
    free(x);
    if (gc->throttled_runs == 0)
        return;

    char reasons[96], scaling[64] = "";
    if (isfinite(gc->scaling_throttled))
        snprintf(scaling, sizeof scaling, "; clock scaling %.0f %% of its maximum",
                 100 * gc->scaling_throttled);
    summary_warn(s, "gpu_throttling",
                 "the GPU slowed its clocks in %zu of %zu runs (%s%s): results depend on "
                 "temperature and power limits; check cooling and power caps%s",
                 gc->throttled_runs, gc->runs, why(gc, reasons, sizeof reasons), scaling,
                 gc->discard ? "" : ", or leave those runs out with --discard-throttled");
    if (gc->discarded_runs)
        summary_warn(s, "throttled_discarded",
                     "%zu of %zu runs were throttled and left out of the statistics "
                     "(--discard-throttled)", gc->discarded_runs, s->n_ok);
    else if (gc->kept_all)
        summary_warn(s, "throttled_kept",
                     "every one of the %zu successful runs was throttled: none was left out "
                     "(--discard-throttled), and the statistics include throttled runs",
                     s->n_ok);
}
