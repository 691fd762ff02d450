/* live_samples: the latest sample row of a live aggregate (live_on_sample, see live.h): the
 * sampler's series turned into exported Prometheus series, with their help texts. */
#include "live/live.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"
#include "live/live_state.h"
#include "live/prometheus.h"

/* --- samples ---------------------------------------------------------------------------- */

/* Exported names that differ from the series name: Prometheus reserves the _count suffix for
 * histograms and summaries (promtool rejects it on a gauge). */
static const struct {
    const char *series, *exported;
} renamed[] = {
    {"process_count", "process_tree_processes"},
};

static const struct {
    const char *name, *help;
} series_help[] = {
    {"process_cpu_seconds_total",
     "CPU time (user + system) of the workload's process tree, exited children included; its "
     "rate is the cores kept busy."},
    {"process_resident_bytes",
     "Memory of the workload's process tree: sum of PSS (RSS where PSS cannot be read)."},
    {"process_read_bytes_total",
     "Bytes the workload's process tree caused to be read from storage."},
    {"process_written_bytes_total",
     "Bytes the workload's process tree caused to be written to storage."},
    {"process_threads", "Threads in the workload's process tree."},
    {"process_count", "Processes in the workload's process tree."},
    {"system_cpu_busy_ratio", "Fraction of all CPUs' time busy over the last sampling interval."},
    {"system_cpu_steal_ratio",
     "Fraction of all CPUs' time the hypervisor ran other machines over the last sampling "
     "interval."},
    {"system_cpu_core_busy_ratio",
     "Fraction of one CPU's time busy over the last sampling interval."},
    {"system_cpu_iowait_ratio",
     "Fraction of CPU time idle with I/O pending over the last sampling interval."},
    {"system_memory_available_bytes",
     "Memory available for new allocations without swapping (MemAvailable)."},
    {"system_swap_in_bytes_total", "Bytes swapped in."},
    {"system_swap_out_bytes_total", "Bytes swapped out."},
    {"system_disk_read_bytes_total",
     "Bytes read from the machine's disks (whole disks, counted once)."},
    {"system_disk_written_bytes_total",
     "Bytes written to the machine's disks (whole disks, counted once)."},
    {"system_network_receive_bytes_total", "Bytes received on every network interface but lo."},
    {"system_network_transmit_bytes_total", "Bytes sent on every network interface but lo."},
    {"system_pressure_cpu_some_seconds_total",
     "Time at least one runnable task waited for a CPU (PSI)."},
    {"system_pressure_cpu_full_seconds_total",
     "Time all non-idle tasks waited for a CPU at once (PSI)."},
    {"system_pressure_io_some_seconds_total", "Time at least one task was stalled on I/O (PSI)."},
    {"system_pressure_io_full_seconds_total",
     "Time all non-idle tasks were stalled on I/O at once (PSI)."},
    {"system_pressure_memory_some_seconds_total",
     "Time at least one task was stalled on memory (PSI)."},
    {"system_pressure_memory_full_seconds_total",
     "Time all non-idle tasks were stalled on memory at once (PSI)."},
    {"gpu_utilization_ratio",
     "Fraction of the driver's sample period in which a kernel ran on the GPU (NVML)."},
    {"gpu_memory_utilization_ratio",
     "Fraction of the driver's sample period in which GPU memory was read or written (NVML)."},
    {"gpu_memory_used_bytes", "GPU memory in use by all processes (NVML)."},
    {"gpu_memory_total_bytes", "GPU memory size (NVML)."},
    {"gpu_power_watts", "GPU board power (NVML)."},
    {"gpu_sm_clock_hertz", "Current SM clock (NVML)."},
    {"gpu_memory_clock_hertz", "Current memory clock (NVML)."},
    {"gpu_temperature_celsius", "GPU die temperature (NVML)."},
    {"gpu_pcie_rx_bytes_per_second",
     "PCIe traffic into the GPU (NVML: a 20 ms window, or with GPM since the previous sample)."},
    {"gpu_pcie_tx_bytes_per_second",
     "PCIe traffic out of the GPU (NVML: a 20 ms window, or with GPM since the previous sample)."},
    {"gpu_throttle_reasons", "Bitmask of the reasons GPU clocks are below their maximum (NVML)."},
    {"gpu_process_memory_bytes", "GPU memory held by the workload's process tree (NVML)."},
    /* NVML GPM (Hopper and newer): each value covers the time since the previous sample */
    {"gpu_graphics_active_ratio",
     "Share of the time the graphics or compute engine was active (NVML GPM; DCGM 1001)."},
    {"gpu_sm_active_ratio", "Share of the SMs with at least one warp resident, over the time "
     "since the previous sample (NVML GPM; DCGM 1002 SM active)."},
    {"gpu_sm_occupancy_ratio",
     "Warps resident as a share of the most the SMs hold (NVML GPM; DCGM 1003)."},
    {"gpu_tensor_active_ratio",
     "Share of the time the tensor pipes worked, any type (NVML GPM; DCGM 1004)."},
    {"gpu_dram_active_ratio",
     "Device memory bandwidth used as a share of its peak (NVML GPM; DCGM 1005)."},
    {"gpu_fp64_active_ratio", "Share of the time the FP64 pipe worked (NVML GPM; DCGM 1006)."},
    {"gpu_fp32_active_ratio", "Share of the time the FP32 pipe worked (NVML GPM; DCGM 1007)."},
    {"gpu_fp16_active_ratio", "Share of the time the FP16 pipe worked (NVML GPM; DCGM 1008)."},
    {"gpu_nvlink_rx_bytes_per_second", "NVLink traffic into the GPU, all links (NVML GPM)."},
    {"gpu_nvlink_tx_bytes_per_second", "NVLink traffic out of the GPU, all links (NVML GPM)."},
};

static const char *help_for(const char *series)
{
    for (size_t i = 0; i < sizeof series_help / sizeof series_help[0]; i++)
        if (!strcmp(series_help[i].name, series))
            return series_help[i].help;
    return "Sampled by mlbench (docs/metrics.md).";
}

/* The series of a new set of definitions (first row, or a new sampler). */
static void series_build(struct live_metrics *m, const struct sample_table *tab)
{
    live_state_free_series(m);
    m->defs_seen = tab->defs;
    m->n_series = tab->n_series;
    m->series = xcalloc(tab->n_series ? tab->n_series : 1, sizeof *m->series);
    m->order = xcalloc(tab->n_series ? tab->n_series : 1, sizeof *m->order);
    for (size_t i = 0; i < tab->n_series; i++) {
        const struct series_def *d = &tab->defs[i];
        struct live_series *s = &m->series[i];
        const char *base = d->name;
        for (size_t k = 0; k < sizeof renamed / sizeof renamed[0]; k++)
            if (!strcmp(base, renamed[k].series))
                base = renamed[k].exported;
        size_t bl = strlen(base);
        bool counter = d->kind == SERIES_COUNTER;
        bool total = bl >= 6 && !strcmp(base + bl - 6, "_total");
        s->name = xasprintf("mlbench_%s%s", base, counter && !total ? "_total" : "");
        if (!prom_valid_name(s->name)) { /* never exported */
            free(s->name);
            s->name = NULL;
        }
        s->labels = xstrdup(d->labels ? d->labels : "");
        s->help = help_for(d->name);
        s->type = counter ? PROM_COUNTER : PROM_GAUGE;
        s->value = NAN;
    }
    /* Group by name, keeping the order in which names first appear (one block per family). */
    size_t k = 0;
    bool *done = xcalloc(tab->n_series ? tab->n_series : 1, sizeof *done);
    for (size_t i = 0; i < tab->n_series; i++) {
        if (done[i] || !m->series[i].name)
            continue;
        for (size_t j = i; j < tab->n_series; j++)
            if (!done[j] && m->series[j].name && !strcmp(m->series[j].name, m->series[i].name)) {
                done[j] = true;
                m->order[k++] = j;
            }
    }
    m->n_series = tab->n_series;
    for (size_t i = k; i < tab->n_series; i++)
        m->order[i] = SIZE_MAX; /* invalid names: skipped */
    free(done);
}

void live_on_sample(void *arg, const struct sample_table *tab, size_t row)
{
    struct live_metrics *m = arg;
    if (row >= tab->n)
        return;
    pthread_mutex_lock(&m->mu);
    if (tab->defs != m->defs_seen || tab->n_series != m->n_series)
        series_build(m, tab);
    for (size_t i = 0; i < m->n_series; i++)
        m->series[i].value = tab->v[i][row];
    int64_t t = tab->t_ns[row];
    if (m->rows && t > m->last_row_ns)
        m->row_gap_ns = t - m->last_row_ns;
    m->last_row_ns = t;
    m->rows++;
    pthread_mutex_unlock(&m->mu);
}
