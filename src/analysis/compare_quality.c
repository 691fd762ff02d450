/* compare_quality: the measurement quality of the two sides of a comparison: which warnings
 * each side carries, and whether a disturbance of the side that came out slower could explain
 * a difference (the verdict "unreliable"), with how to get a clean answer. The rule and its
 * reasoning are in docs/compare.md#measurement-quality-unreliable. */
#include "analysis/compare_quality.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"
#include "util/xalloc.h"

/* Warning codes about how well a result was measured (docs/result-schema.md's table), carried
 * into the comparison. Marker and GPU-use warnings say what was measured, not how well. */
static const char *const quality_codes[] = {
    "few_runs", "low_ci_coverage", "single_run", "high_cv", "outliers", "slow_warmup",
    "slow_first_run", "failed_runs", "no_successful_run", "cpu_governor", "other_load",
    "cpu_steal", "cpu_contention", "io_contention", "swapping", "gpu_throttling", "throttled_kept",
    "gpu_unsynchronized", NULL,
};

static bool is_quality_code(const char *code)
{
    for (const char *const *c = quality_codes; *c; c++)
        if (!strcmp(code, *c))
            return true;
    return false;
}

static json_t *quality_side(const struct doc_result *result)
{
    json_t *out = json_array();
    for (size_t i = 0; i < result->n_warnings; i++) {
        const struct doc_warning *w = &result->warnings[i];
        if (w->code && is_quality_code(w->code))
            json_array_append_new(out, json_pack("{s:s, s:s}", "code", w->code, "message",
                                                 w->message ? w->message : ""));
    }
    return out;
}

json_t *compare_quality(const struct doc_result *base, const struct doc_result *cand)
{
    return json_pack("{s:o, s:o}", "baseline", quality_side(base), "candidate",
                     quality_side(cand));
}

/* ---- disturbances: what only makes a measurement slower ---- */

/* The thresholds are those of the result's own warnings (src/result/resources.c), so that a
 * side the comparison calls disturbed carries the warning too. */
#define OTHER_CORES_MIN 0.5   /* other_load: other processes' CPU cores */
#define PSI_CPU_MIN 0.20      /* cpu_contention: share of time tasks waited for a CPU */
#define STEAL_MIN 0.05        /* cpu_steal: share of all CPUs' time the hypervisor took */
#define SWAP_BPS_MIN 4096.0   /* swapping: bytes per second in + out */

/* The mean of metric (any labels) in resources; NAN when it has no samples. */
static double res_mean(const struct doc_resources *resources, const char *metric)
{
    for (size_t i = 0; i < resources->n; i++) {
        const struct doc_resource *r = &resources->v[i];
        if (r->metric && !strcmp(r->metric, metric) && r->n > 0)
            return r->mean;
    }
    return NAN;
}

/* What one side's resources say, over a stage or the whole run. */
struct side {
    const struct doc_result *result;
    const struct doc_resources *resources;
    double ncpu;
};

/* CPU cores other processes kept busy: the machine's busy share less its steal time (not
 * theirs; older results have none) times its CPUs, less the workload's own cores (as
 * resources.c computes other_load). */
static double other_cores_raw(const struct side *s)
{
    double busy = res_mean(s->resources, "system_cpu_busy_ratio");
    double steal = res_mean(s->resources, "system_cpu_steal_ratio");
    double own = res_mean(s->resources, "process_cpu_seconds_total");
    if (!isfinite(busy) || !isfinite(own) || !(s->ncpu > 0))
        return NAN;
    double other = (busy - (isfinite(steal) ? steal : 0)) * s->ncpu - own;
    return other > 0 ? other : 0;
}

/* Other processes' CPU use slows only work that needs a CPU: a stage whose processes used
 * less than CPU_USE_MIN cores (sleeping, waiting on I/O or a GPU) hardly spends time on a CPU
 * that anybody could take from it, so it is not counted as disturbed. */
#define CPU_USE_MIN 0.05

static bool uses_cpu(const struct side *s)
{
    return res_mean(s->resources, "process_cpu_seconds_total") >= CPU_USE_MIN;
}

/* NAN (not known) where the machine's or the workload's CPU use was not measured. */
static double other_cores(const struct side *s)
{
    double other = other_cores_raw(s);
    return isfinite(other) && !uses_cpu(s) ? 0 : other;
}

/* CPU pressure counts as a disturbance only where other processes were busy too: a workload
 * that runs more threads than CPUs makes its own pressure, which is its speed, not noise. */
static double psi_cpu(const struct side *s)
{
    double psi = res_mean(s->resources, "system_pressure_cpu_some_seconds_total");
    double other = other_cores_raw(s);
    if (!isfinite(psi) || !isfinite(other))
        return NAN;
    return uses_cpu(s) && other >= OTHER_CORES_MIN / 2 ? psi : 0;
}

/* Steal time slows only work that needs a CPU, as other processes do. */
static double steal_share(const struct side *s)
{
    double steal = res_mean(s->resources, "system_cpu_steal_ratio");
    return isfinite(steal) && !uses_cpu(s) ? 0 : steal;
}

static double swap_bps(const struct side *s)
{
    double in = res_mean(s->resources, "system_swap_in_bytes_total");
    double out = res_mean(s->resources, "system_swap_out_bytes_total");
    if (!isfinite(in) && !isfinite(out))
        return NAN;
    return (isfinite(in) ? in : 0) + (isfinite(out) ? out : 0);
}

/* GPU throttling is known per result only, as 1 or 0: from summary.gpu_clock, where runs left
 * out by --discard-throttled do not count; in results without it, from its warning. */
static double gpu_throttled(const struct side *s)
{
    const struct doc_gpu_clock *gc = &s->result->summary.gpu_clock;
    if (gc->present)
        return gc->throttled_runs > gc->discarded_runs;
    for (size_t i = 0; i < s->result->n_warnings; i++) {
        const char *code = s->result->warnings[i].code;
        if (code && !strcmp(code, "gpu_throttling"))
            return 1;
    }
    return 0;
}

/* " (the other side FIGURE)": fast * scale with decimals and unit, or "not measured". */
static void say_other_side(struct strbuf *b, int decimals, const char *unit, double fast,
                           double scale)
{
    strbuf_puts(b, " (the other side ");
    if (isfinite(fast))
        strbuf_printf(b, "%.*f%s", decimals, fast * scale, unit);
    else
        strbuf_puts(b, "not measured");
    strbuf_putc(b, ')');
}

static void say_other(struct strbuf *b, double slow, double fast)
{
    strbuf_printf(b, "other processes kept %.1f CPU cores busy", slow);
    say_other_side(b, 1, "", fast, 1);
}

static void say_psi(struct strbuf *b, double slow, double fast)
{
    strbuf_printf(b, "CPU pressure: tasks waited for a CPU %.0f %% of the time", slow * 100);
    say_other_side(b, 0, " %", fast, 100);
}

static void say_steal(struct strbuf *b, double slow, double fast)
{
    strbuf_printf(b, "the hypervisor took its CPUs %.0f %% of the time (steal)", slow * 100);
    say_other_side(b, 0, " %", fast, 100);
}

static void say_swap(struct strbuf *b, double slow, double fast)
{
    strbuf_printf(b, "the machine swapped %.0f bytes/s", slow);
    say_other_side(b, 0, "", fast, 1);
}

static void say_gpu(struct strbuf *b, double slow, double fast)
{
    (void)slow;
    strbuf_printf(b, "its GPU slowed its clocks (thermal or power)%s",
                  fast > 0 ? ", the other side's too" : "");
}

#define CLEAN_CPUS "with no other processes using the CPUs (stop them, or keep them off the " \
                   "workload's CPUs with taskset), "

static const struct disturbance {
    const char *code;                    /* the result warning of the same disturbance */
    double threshold;                    /* a side is disturbed from this figure on */
    double (*figure)(const struct side *);
    void (*say)(struct strbuf *, double slow, double fast);
    bool per_stage;                      /* measured per stage (else per result) */
    const char *clean;                   /* how to measure without it, for the clean answer */
} disturbances[] = {
    {"other_load", OTHER_CORES_MIN, other_cores, say_other, true, CLEAN_CPUS},
    {"cpu_steal", STEAL_MIN, steal_share, say_steal, true,
     "on a host whose CPUs are not shared with other virtual machines (a dedicated host or "
     "dedicated cores), "},
    {"cpu_contention", PSI_CPU_MIN, psi_cpu, say_psi, true, CLEAN_CPUS},
    {"swapping", SWAP_BPS_MIN, swap_bps, say_swap, true,
     "with enough free memory that nothing swaps, "},
    {"gpu_throttling", 1, gpu_throttled, say_gpu, false,
     "with the GPU cool and below its power cap, "},
};

#define N_DISTURBANCES (sizeof disturbances / sizeof disturbances[0])

static const struct doc_resources no_resources;

static struct side side_of(const struct doc_result *result, const char *stage)
{
    struct side s = {result, &result->summary.resources, result->cpus_online};
    if (stage) {
        const struct doc_stage *st = doc_result_stage(result, stage);
        s.resources = st ? &st->resources : &no_resources;
    }
    return s;
}

/* Appends the reason of disturbance d to b when it could explain the difference: the slower
 * side reached d's threshold and was clearly (by half a threshold) more disturbed than the
 * faster side; two sides disturbed alike are compared as they are (issue 35: interleaved runs,
 * the clean answer's own advice, were called unreliable). A stage's own samples are used where
 * both sides have them, else the runs'. A figure the faster side lacks counts as 0. */
static bool explains(const struct disturbance *d, const struct doc_result *slow,
                     const struct doc_result *fast, const char *stage, struct strbuf *b)
{
    const char *where = "over the runs";
    struct side s = side_of(slow, NULL), f = side_of(fast, NULL);
    double ds = d->figure(&s), df = d->figure(&f);
    if (stage && d->per_stage) {
        struct side ss = side_of(slow, stage), fs = side_of(fast, stage);
        double dss = d->figure(&ss), dfs = d->figure(&fs);
        if (isfinite(dss) && isfinite(dfs))
            ds = dss, df = dfs, where = "during the stage";
    }
    if (!(ds >= d->threshold) || !(ds >= (isfinite(df) ? df : 0) + d->threshold / 2))
        return false;
    if (b->len)
        strbuf_puts(b, "; ");
    d->say(b, ds, df);
    if (d->per_stage)
        strbuf_printf(b, " %s", where);
    strbuf_printf(b, " (%s)", d->code);
    return true;
}

char *compare_explain(const struct doc_result *base, const struct doc_result *cand,
                      const char *stage, bool cand_slower, unsigned *hits)
{
    const struct doc_result *slow = cand_slower ? cand : base;
    const struct doc_result *fast = cand_slower ? base : cand;
    struct strbuf b = STRBUF_INIT;
    for (size_t k = 0; k < N_DISTURBANCES; k++)
        if (explains(&disturbances[k], slow, fast, stage, &b))
            *hits |= 1u << k;
    if (!b.len) {
        strbuf_free(&b);
        return NULL;
    }
    char *why = xasprintf("the %s, which came out slower, was disturbed: %s",
                          cand_slower ? "candidate" : "baseline", b.s);
    strbuf_free(&b);
    return why;
}

char *compare_clean_answer(unsigned hits)
{
    if (!hits)
        return NULL;
    struct strbuf b = STRBUF_INIT;
    strbuf_puts(&b, "measure the baseline and the candidate again, one right after the other, ");
    for (size_t k = 0; k < N_DISTURBANCES; k++)
        if ((hits & 1u << k) && !strstr(b.s, disturbances[k].clean))
            strbuf_puts(&b, disturbances[k].clean);
    strbuf_puts(&b, "and with more runs (mlbench run -r 10 ...); best, interleaved, so that a "
                    "disturbance falls on both alike: mlbench sweep -r 10 -c 'BASELINE COMMAND' "
                    "-c 'CANDIDATE COMMAND'");
    return strbuf_take(&b);
}
