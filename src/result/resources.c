/* resources: per-stage resource figures, GPU choice, analysis and quality checks
 * (see resources.h). Metric names are those of docs/metrics.md. */
#include "result/resources.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "result/gpu_sync.h"
#include "util/units.h"
#include "util/xalloc.h"

#define MAX_GPUS 64
#define OTHER_LOAD_CORES 0.5      /* other processes' mean load that disturbs a benchmark */
#define SWAP_BYTES_PER_S 4096.0   /* a page a second of swapping is worth a warning */
#define CPU_STEAL_MIN 0.05        /* steal time: share of all CPUs' time a hypervisor took */
#define CPU_CONTENTION_PSI 0.20   /* PSI cpu some: run_findings.c's PSI_CPU_MIN, the same limit */
#define IO_CONTENTION 0.20        /* the machine stalled on I/O at least this share of the time
                                   * (PSI io some, else iowait times the CPUs)... */
#define IO_OWN_PART 0.5           /* ...and the workload's own tasks were blocked on I/O less than
                                   * this part of it: others' I/O, a disturbance */

/* The GPU index in labels gpu="N", or -1. */
static int gpu_index(const char *labels)
{
    int i;
    return sscanf(labels, "gpu=\"%d\"", &i) == 1 && i >= 0 && i < MAX_GPUS ? i : -1;
}

/* Statistics of series name (any labels) in row m, or NULL. */
static const struct metric_stat *metric(const struct summary *s, const struct metric_stat *m,
                                        const char *name)
{
    for (size_t i = 0; i < s->n_series; i++)
        if (!strcmp(s->series[i].name, name))
            return &m[i];
    return NULL;
}

static double mean_of(const struct summary *s, const struct metric_stat *m, const char *name)
{
    const struct metric_stat *x = metric(s, m, name);
    return x && x->n ? x->mean : NAN;
}

static double peak_of(const struct summary *s, const struct metric_stat *m, const char *name)
{
    const struct metric_stat *x = metric(s, m, name);
    return x && x->n ? x->peak : NAN;
}

/* Chooses the GPUs that count: those where the workload's processes held memory, or, where
 * NVML could not list processes, those that were busy; every GPU with --all-gpus. */
static uint64_t choose_gpus(const struct result *r)
{
    const struct summary *s = &r->summary;
    uint64_t used = 0, busy = 0, known = 0;
    for (size_t i = 0; i < s->n_series && s->total_resources; i++) {
        int g = gpu_index(s->series[i].labels);
        const struct metric_stat *m = &s->total_resources[i];
        if (g < 0)
            continue;
        if (r->config->all_gpus)
            used |= 1ull << g;
        if (!strcmp(s->series[i].name, "gpu_process_memory_bytes") && m->n) {
            known |= 1ull << g;
            if (m->peak > 0)
                used |= 1ull << g;
        }
        if (!strcmp(s->series[i].name, "gpu_utilization_ratio") && m->n && m->peak > 0)
            busy |= 1ull << g;
    }
    return used | (busy & ~known);
}

/* GPU figures of one stage over the GPUs in mask: means averaged over those GPUs that have the
 * series (the GPM activities only exist on GPUs that support GPM), peaks the largest. */
static void gpu_figures(const struct summary *s, const struct metric_stat *m, uint64_t mask,
                        struct stage_resources *sr)
{
    struct {
        const char *name;
        double *out;
        double sum;
        int n;
    } means[] = {
        {"gpu_utilization_ratio", &sr->gpu_util, 0, 0},
        {"gpu_memory_utilization_ratio", &sr->gpu_mem_util, 0, 0},
        {"gpu_sm_active_ratio", &sr->gpu_sm_active, 0, 0},
        {"gpu_sm_occupancy_ratio", &sr->gpu_sm_occupancy, 0, 0},
        {"gpu_tensor_active_ratio", &sr->gpu_tensor_active, 0, 0},
        {"gpu_dram_active_ratio", &sr->gpu_dram_active, 0, 0},
    };
    const size_t n_means = sizeof means / sizeof means[0];
    double power = 0;
    sr->gpu_util_peak = sr->gpu_power_watts = NAN;
    sr->gpu_mem_peak_bytes = sr->gpu_mem_total_bytes = NAN;
    for (size_t i = 0; i < s->n_series; i++) {
        int g = gpu_index(s->series[i].labels);
        if (g < 0 || !(mask & (1ull << g)) || m[i].n == 0)
            continue;
        const char *name = s->series[i].name;
        for (size_t k = 0; k < n_means; k++)
            if (!strcmp(name, means[k].name))
                means[k].sum += m[i].mean, means[k].n++;
        if (!strcmp(name, "gpu_utilization_ratio")) {
            if (!(sr->gpu_util_peak >= m[i].peak))
                sr->gpu_util_peak = m[i].peak;
        } else if (!strcmp(name, "gpu_power_watts")) {
            power = (isnan(sr->gpu_power_watts) ? 0 : power) + m[i].mean;
            sr->gpu_power_watts = power;
        } else if (!strcmp(name, "gpu_memory_used_bytes") && !(sr->gpu_mem_peak_bytes >= m[i].peak)) {
            sr->gpu_mem_peak_bytes = m[i].peak;
            char labels[32];
            snprintf(labels, sizeof labels, "gpu=\"%d\"", g);
            for (size_t j = 0; j < s->n_series; j++)
                if (!strcmp(s->series[j].name, "gpu_memory_total_bytes") &&
                    !strcmp(s->series[j].labels, labels) && m[j].n)
                    sr->gpu_mem_total_bytes = m[j].peak;
        }
    }
    sr->gpus = __builtin_popcountll(mask);
    for (size_t k = 0; k < n_means; k++)
        *means[k].out = means[k].n ? means[k].sum / means[k].n : NAN;
}

static void figures(const struct summary *s, const struct metric_stat *m, int ncpu,
                    uint64_t gpus, struct stage_resources *sr)
{
    sr->cpu_cores = mean_of(s, m, "process_cpu_seconds_total");
    sr->cpu_cores_peak = peak_of(s, m, "process_cpu_seconds_total");
    sr->cpu_wait = mean_of(s, m, "process_cpu_wait_seconds_total");
    sr->rss_peak_bytes = peak_of(s, m, "process_resident_bytes");
    sr->read_bps = mean_of(s, m, "process_read_bytes_total");
    sr->write_bps = mean_of(s, m, "process_written_bytes_total");
    sr->threads_peak = peak_of(s, m, "process_threads");
    sr->processes_peak = peak_of(s, m, "process_count");
    sr->io_blocked = mean_of(s, m, "process_io_wait_seconds_total");
    sr->io_blocked_delayacct = isfinite(sr->io_blocked);
    if (!sr->io_blocked_delayacct)
        sr->io_blocked = mean_of(s, m, "process_io_blocked_tasks");
    sr->sys_cpu_busy = mean_of(s, m, "system_cpu_busy_ratio");
    sr->steal = mean_of(s, m, "system_cpu_steal_ratio");
    sr->other_cores = (sr->sys_cpu_busy - (isfinite(sr->steal) ? sr->steal : 0)) * ncpu -
                      sr->cpu_cores;
    if (sr->other_cores < 0)
        sr->other_cores = 0;
    sr->iowait = mean_of(s, m, "system_cpu_iowait_ratio");
    sr->psi_cpu_some = mean_of(s, m, "system_pressure_cpu_some_seconds_total");
    sr->runnable = mean_of(s, m, "system_procs_running");
    sr->psi_io_some = mean_of(s, m, "system_pressure_io_some_seconds_total");
    sr->psi_io_full = mean_of(s, m, "system_pressure_io_full_seconds_total");
    sr->psi_mem_some = mean_of(s, m, "system_pressure_memory_some_seconds_total");
    sr->psi_mem_full = mean_of(s, m, "system_pressure_memory_full_seconds_total");
    sr->disk_read_bps = mean_of(s, m, "system_disk_read_bytes_total");
    sr->disk_write_bps = mean_of(s, m, "system_disk_written_bytes_total");
    sr->swap_in_bps = mean_of(s, m, "system_swap_in_bytes_total");
    sr->swap_out_bps = mean_of(s, m, "system_swap_out_bytes_total");
    const struct metric_stat *avail = metric(s, m, "system_memory_available_bytes");
    sr->mem_available_min_bytes = avail && avail->n ? avail->min : NAN;
    size_t samples = 0;
    for (size_t i = 0; i < s->n_series; i++)
        if (m[i].n > samples)
            samples = m[i].n;
    sr->samples = samples;
    gpu_figures(s, m, gpus, sr);
}

static const char *meta_value(const struct summary *s, const char *key)
{
    for (size_t i = 0; i < s->n_meta; i++)
        if (!strcmp(s->meta[i].key, key))
            return s->meta[i].value;
    return NULL;
}

static bool mentions_gpu(const char *text)
{
    if (!text)
        return false;
    char low[512];
    size_t i = 0;
    for (; text[i] && i + 1 < sizeof low; i++)
        low[i] = (char)tolower((unsigned char)text[i]);
    low[i] = '\0';
    return strstr(low, "cuda") || strstr(low, "gpu");
}

/* The workload claims a GPU: device metadata, or the label or the command says so. */
static bool meant_for_gpu(const struct result *r)
{
    const char *device = meta_value(&r->summary, "device");
    if (device)
        return mentions_gpu(device);
    if (mentions_gpu(r->config->label))
        return true;
    for (int i = 0; i < r->config->argc; i++)
        if (mentions_gpu(r->config->argv[i]))
            return true;
    return false;
}

static bool source_active(const struct result *r, const char *name)
{
    for (size_t i = 0; i < r->sampling.n_active; i++)
        if (!strcmp(r->sampling.active[i], name))
            return true;
    return false;
}

/* CPU frequency scaling that is not "performance" makes timings depend on ramp-up. */
static void check_governor(struct summary *s)
{
    const char *root = getenv("MLBENCH_SYS_ROOT");
    char path[512], gov[64], first_other[64] = "";
    int cpus = 0, others = 0;
    for (int cpu = 0;; cpu++) {
        snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%d", root && *root ? root : "/sys",
                 cpu);
        if (access(path, F_OK) != 0)
            break;
        /* No cpufreq (VMs, containers) means no governor to blame: nothing to say. */
        strncat(path, "/cpufreq/scaling_governor", sizeof path - strlen(path) - 1);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (fgets(gov, sizeof gov, f)) {
            gov[strcspn(gov, "\n")] = '\0';
            cpus++;
            if (strcmp(gov, "performance") != 0 && others++ == 0)
                snprintf(first_other, sizeof first_other, "%s", gov);
        }
        fclose(f);
    }
    if (others)
        summary_warn(s, "cpu_governor",
                     "CPU frequency governor is '%s' on %d of %d CPUs, not 'performance': clock "
                     "ramp-up adds noise and first-run effects; for stable timings set it to "
                     "performance (cpupower frequency-set -g performance)",
                     first_other, others, cpus);
}

/* The name and tensor cores of the first GPU shown that NVML gave a handle for, from the
 * machine's GPUs; untouched when there is none. The name is borrowed from facts. */
static void gpu_facts(const struct result *r, const struct machine_facts *facts,
                      struct analysis_context *ctx)
{
    for (size_t i = 0; facts && i < facts->sources.n_gpus; i++) {
        const struct gpu_facts *g = &facts->sources.gpus[i];
        if (g->index < 0 || g->index >= MAX_GPUS || !(r->gpus_shown & (1ull << g->index)) ||
            !g->usable)
            continue;
        ctx->gpu_name = g->name;
        ctx->gpu_tensor_cores = g->cc_minor >= 0 && g->cc_major >= 7;
        return;
    }
}

/* The CPU's bf16 matrix instructions among the machine's CPU extensions (the environment's
 * cpu.features, docs/environment.md), AMX before AVX-512 (the larger gain); untouched when it
 * has neither or nothing is known. */
static void cpu_facts(const struct machine_facts *facts, struct analysis_context *ctx)
{
    static const char *const bf16[] = {"amx_bf16", "avx512_bf16"};
    for (size_t k = 0; k < sizeof bf16 / sizeof bf16[0]; k++)
        if (machine_facts_cpu_has(facts, bf16[k])) {
            ctx->cpu_bf16 = bf16[k];
            return;
        }
}

/* A metadata value that is a whole number >= min, else -1. */
static long meta_long(const struct summary *s, const char *key, long min)
{
    const char *text = meta_value(s, key);
    long v;
    return text && units_parse_long(text, min, 1L << 40, &v) == 0 ? v : -1;
}

/* The workload's framework facts (framework.* metadata of the Python marker client,
 * docs/markers.md, and the plain keys scripts send by hand), and how the CPU was sampled. */
static void workload_facts(const struct result *r, struct analysis_context *ctx)
{
    const struct summary *s = &r->summary;
    if (meta_value(s, "framework.torch.version"))
        ctx->framework = "torch";
    ctx->threads = meta_long(s, "framework.torch.num_threads", 1);
    if (ctx->threads < 0)
        ctx->threads = meta_long(s, "torch_threads", 1);
    if (ctx->threads > 0 && !ctx->framework && meta_value(s, "torch_threads"))
        ctx->framework = "torch";
    ctx->loader_workers = meta_long(s, "framework.dataloader.num_workers", 0);
    if (ctx->loader_workers < 0)
        ctx->loader_workers = meta_long(s, "num_workers", 0);
    const char *pin = meta_value(s, "framework.dataloader.pin_memory");
    if (!pin)
        pin = meta_value(s, "pin_memory");
    ctx->pin_memory = !pin ? -1 : (!strcmp(pin, "true") || !strcmp(pin, "1") ||
                                   !strcmp(pin, "True"));
    if (ctx->batch_size <= 0)
        ctx->batch_size = meta_long(s, "framework.dataloader.batch_size", 1);
    ctx->interval_ns = (double)r->sampling.interval_ns;
    ctx->interval_adaptive = r->sampling.adaptive;
    ctx->runs = s->n_ok;
    for (size_t i = 0; i < r->sampling.n_skipped; i++)
        if (!strncmp(r->sampling.skipped[i], "proc:", 5))
            ctx->cpu_skipped = r->sampling.skipped[i];
}

/* What the rank rules read of the ranks' summary (NULL without ranks); names borrowed. */
static struct rank_stage_figures *rank_figures(const struct rank_summary *rs)
{
    if (rs->n_stages == 0)
        return NULL;
    struct rank_stage_figures *f = xcalloc(rs->n_stages, sizeof *f);
    for (size_t i = 0; i < rs->n_stages; i++) {
        const struct rank_stage_summary *st = &rs->stages[i];
        f[i] = (struct rank_stage_figures){.name = st->name, .ranks = st->n_ranks,
                                           .critical_ns = st->critical_ns,
                                           .median_ns = st->median_ns, .min_ns = st->min_ns,
                                           .slowest_rank = st->slowest_rank, .slowest_ns = NAN,
                                           .fastest_rank = st->fastest_rank};
        for (size_t k = 0; k < rs->n_ranks; k++)
            if (rs->ranks[k] == st->slowest_rank) {
                f[i].slowest_ns = st->rank_ns[k];
                f[i].slowest_host = rs->hosts ? rs->hosts[k] : NULL;
            }
    }
    return f;
}

/* Others' I/O (issue 35): the machine stalled on I/O while the workload's own tasks were
 * hardly blocked on it. That is a disturbance of the timings, never the workload's bottleneck
 * (analyze.c reads only the workload's own I/O waits). */
static void io_contention(struct summary *s, const struct stage_resources *total, int ncpu)
{
    bool psi = isfinite(total->psi_io_some);
    double machine = psi ? total->psi_io_some
                         : isfinite(total->iowait) ? fmin(1, total->iowait * ncpu) : NAN;
    if (!(machine >= IO_CONTENTION))
        return;
    double own = isfinite(total->io_blocked) ? fmin(1, total->io_blocked) : NAN;
    if (own >= IO_OWN_PART * machine)
        return;
    char a[32], b[32], mine[160];
    if (isfinite(own))
        snprintf(mine, sizeof mine, "the workload's own tasks were blocked on I/O %.0f %% of it",
                 own * 100);
    else
        snprintf(mine, sizeof mine, "the workload's own I/O waits were not measured");
    if (isfinite(total->read_bps) || isfinite(total->write_bps))
        snprintf(mine + strlen(mine), sizeof mine - strlen(mine), ", reading %s/s and writing "
                 "%s/s", units_bytes(isfinite(total->read_bps) ? total->read_bps : 0, a, sizeof a),
                 units_bytes(isfinite(total->write_bps) ? total->write_bps : 0, b, sizeof b));
    summary_warn(s, "io_contention",
                 "the machine stalled on I/O %.0f %% of the time during the runs (%s), while %s: "
                 "other processes' I/O, which may slow the workload's timings; benchmark on a "
                 "quiet machine",
                 machine * 100, psi ? "the kernel's I/O pressure" : "iowait", mine);
}

void resources_analyze(struct result *r, const struct machine_facts *facts)
{
    struct summary *s = &r->summary;
    check_governor(s);
    /* Verdicts drawn from runs that never did their work (command not found, every run timed
     * out) would blame the machine for it: no analysis, which the no_successful_run warning
     * says (issue 13). */
    if (!s->valid || !s->n_series || !s->total_resources || s->n_ok == 0)
        return;

    int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 1)
        ncpu = 1;
    r->gpus_shown = choose_gpus(r);

    struct stage_resources *sr = xcalloc(s->n_stages + 1, sizeof *sr);
    for (size_t i = 0; i < s->n_stages; i++) {
        sr[i].name = s->stages[i].name;
        sr[i].depth = s->stages[i].depth;
        sr[i].time_ns = s->stages[i].active.median;
        sr[i].share = s->stages[i].share;
        sr[i].overlap = s->stages[i].active.median > 0
                            ? s->stages[i].overlap_median_ns / s->stages[i].active.median : 0;
        if (s->stages[i].resources)
            figures(s, s->stages[i].resources, ncpu, r->gpus_shown, &sr[i]);
        else /* not sampled: the GPM activities are not 0 (the rules only read the others with
              * samples in the stage) */
            sr[i].gpu_sm_active = sr[i].gpu_sm_occupancy = sr[i].gpu_tensor_active =
                sr[i].gpu_dram_active = sr[i].io_blocked = NAN;
    }
    struct stage_resources *total = &sr[s->n_stages];
    *total = (struct stage_resources){.name = "total", .time_ns = s->wall.median, .share = 1};
    figures(s, s->total_resources, ncpu, r->gpus_shown, total);

    struct analysis_context ctx = {.ncpu = ncpu, .gpu_measured = source_active(r, "nvml"),
                                   .batch_size = -1, .cpu_quota = NAN};
    if (facts && facts->cgroup_captured)
        ctx.cpu_quota = facts->cpu_limit_cores;
    const char *bs = meta_value(s, "batch_size");
    long v;
    if (bs && units_parse_long(bs, 1, 1L << 40, &v) == 0)
        ctx.batch_size = v;
    ctx.precision = meta_value(s, "precision");
    ctx.device = meta_value(s, "device");
    workload_facts(r, &ctx);
    cpu_facts(facts, &ctx);
    if (ctx.gpu_measured)
        gpu_facts(r, facts, &ctx);
    ctx.wall_ns = s->wall.median;
    struct rank_stage_figures *rf = rank_figures(&s->ranks);
    ctx.rank_stages = rf;
    ctx.n_rank_stages = s->ranks.n_stages;
    analyze(&ctx, sr, s->n_stages, total, &r->analysis);
    free(rf);
    r->analyzed = true;

    if (total->other_cores >= OTHER_LOAD_CORES)
        summary_warn(s, "other_load",
                     "other processes kept %.1f CPU cores busy during the runs (the workload %.1f "
                     "of %d): its timings may be disturbed; benchmark on a quiet machine",
                     total->other_cores, total->cpu_cores, ncpu);
    if (isfinite(total->steal) && total->steal >= CPU_STEAL_MIN)
        summary_warn(s, "cpu_steal",
                     "the hypervisor ran other machines on this machine's CPUs %.0f %% of the "
                     "time during the runs (steal time, /proc/stat): the workload lost CPU time "
                     "that no measurement inside this machine sees, and its timings are slower "
                     "and noisier than the hardware; benchmark on a dedicated host, or compare "
                     "only runs made side by side",
                     total->steal * 100);
    if (isfinite(total->psi_cpu_some) && total->psi_cpu_some >= CPU_CONTENTION_PSI) {
        /* A load result has no workload process of its own: then the machine's busy share */
        char who[128];
        if (isfinite(total->cpu_cores))
            snprintf(who, sizeof who, "other processes %.1f CPU cores, the workload %.1f of %d",
                     isfinite(total->other_cores) ? total->other_cores : 0, total->cpu_cores,
                     ncpu);
        else if (isfinite(total->sys_cpu_busy))
            snprintf(who, sizeof who, "the machine's %d CPUs %.0f %% busy", ncpu,
                     total->sys_cpu_busy * 100);
        else
            snprintf(who, sizeof who, "CPU use not measured");
        summary_warn(s, "cpu_contention",
                     "tasks waited for a CPU %.0f %% of the time during the runs (the kernel's "
                     "CPU pressure; %s): its timings may include waits for a CPU; benchmark on a "
                     "quiet machine, with fewer threads than CPUs across all processes",
                     total->psi_cpu_some * 100, who);
    }
    io_contention(s, total, ncpu);
    double swap_in = isfinite(total->swap_in_bps) ? total->swap_in_bps : 0;
    double swap_out = isfinite(total->swap_out_bps) ? total->swap_out_bps : 0;
    if (swap_in + swap_out >= SWAP_BYTES_PER_S) {
        char a[32], b[32];
        summary_warn(s, "swapping",
                     "the machine swapped during the runs (in %s/s, out %s/s): memory is short "
                     "and timings include disk waits; reduce memory use or batch size",
                     units_bytes(swap_in, a, sizeof a), units_bytes(swap_out, b, sizeof b));
    }
    gpu_sync_check(r);
    if (meant_for_gpu(r)) {
        if (!ctx.gpu_measured)
            summary_warn(s, "gpu_unverified",
                         "this run is meant for a GPU (device metadata, label or command) but GPU "
                         "use could not be measured (%s): do not report it as a GPU result "
                         "before checking that it ran there",
                         r->sampling.n_skipped ? "NVML unavailable" : "no GPU source");
        else if (!r->gpus_shown)
            summary_warn(s, "gpu_not_used",
                         "this run is meant for a GPU (device metadata, label or command) but no "
                         "GPU was used: no utilisation and no memory of the workload on any GPU. "
                         "It ran on the CPU: do not report it as a GPU result");
    }
    r->figures = sr;
}
