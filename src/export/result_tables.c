/* result_tables.c: the tables of a result that the terminal summary and the reports share
 * (export.h): the latency per span of the stages that repeat, and for a multi-rank job
 * (docs/ranks.md) the stages across ranks (summary.ranks) and the other hosts' resources
 * (runs[].hosts, sampled there by rank-exec). */
#include "export/export.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "doc/result.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

void export_ranks_table(struct export_table *t, const struct doc_ranks *ranks)
{
    export_table_init(t, 6, "stage", "slowest", "median", "fastest", "skew", "slowest rank");
    t->numeric = 0x1e;
    if (ranks->n_ranks < 2)
        return;
    for (size_t i = 0; i < ranks->n_stages; i++) {
        const struct doc_rank_stage *st = &ranks->stages[i];
        double median = st->median_ns, crit = st->critical_path_ns;
        char v[32];
        size_t row = export_table_row(t, 0);
        export_table_set(t, row, 0, "%s", st->name ? st->name : "?");
        export_table_set(t, row, 1, "%s", export_fmt_duration(crit, v, sizeof v));
        export_table_set(t, row, 2, "%s", export_fmt_duration(median, v, sizeof v));
        export_table_set(t, row, 3, "%s", export_fmt_duration(st->min_ns, v, sizeof v));
        export_table_set(t, row, 4, "%s", export_fmt_num(st->skew, "%.2f", 1, v, sizeof v));
        if (st->slowest_rank >= 0 && median > 0 && isfinite(crit))
            export_table_set(t, row, 5, "%lld (%+.0f %% on the median)", st->slowest_rank,
                             100 * (crit / median - 1));
        else
            export_table_set(t, row, 5, "-");
    }
}

/* The run-level figure `what` (mean, peak) of metric in a resources array, NAN when absent. */
static double resource(const struct doc_resources *resources, const char *metric, bool peak)
{
    const struct doc_resource *m = doc_resource_find(resources, metric, NULL);
    return !m ? NAN : peak ? m->peak : m->mean;
}

/* How many series of metric a resources array has (one per CPU for the per-core series). */
static size_t series_count(const struct doc_resources *resources, const char *metric)
{
    size_t n = 0;
    for (size_t i = 0; i < resources->n; i++)
        n += resources->v[i].metric && !strcmp(resources->v[i].metric, metric);
    return n;
}

#define MAX_HOSTS 256
#define MAX_RANKS_SHOWN 16

void export_hosts_table(struct export_table *t, const struct doc_result *result)
{
    export_table_init(t, 5, "host", "ranks", "its ranks' CPU cores", "host CPU cores busy",
                      "peak memory");
    t->numeric = 0x1c;
    struct host_sum {
        const char *name;
        const json_t *ranks;
        double procs, busy, peak; /* sums over the runs (peak: the highest) */
        size_t ncpu, n;
    } *h = xcalloc(MAX_HOSTS, sizeof *h);
    size_t n_hosts = 0, i;
    for (i = 0; i < result->n_runs; i++) {
        const struct doc_run *run = &result->runs[i];
        if (run->warmup)
            continue;
        for (size_t j = 0; j < run->n_hosts; j++) {
            const struct doc_run_host *host = &run->hosts[j];
            const char *name = host->host;
            size_t k = 0;
            while (name && k < n_hosts && strcmp(h[k].name, name) != 0)
                k++;
            if (!name || (k == n_hosts && n_hosts == MAX_HOSTS))
                continue;
            if (k == n_hosts)
                h[n_hosts++] = (struct host_sum){.name = name, .ranks = host->ranks};
            const struct doc_resources *res = &host->resources;
            double procs = resource(res, "process_cpu_seconds_total", false);
            double busy = resource(res, "system_cpu_busy_ratio", false);
            double peak = resource(res, "process_resident_bytes", true);
            h[k].procs += isfinite(procs) ? procs : 0;
            h[k].busy += isfinite(busy) ? busy : 0;
            if (isfinite(peak) && peak > h[k].peak)
                h[k].peak = peak;
            h[k].ncpu = series_count(res, "system_cpu_core_busy_ratio");
            h[k].n++;
        }
    }
    for (size_t k = 0; k < n_hosts; k++) {
        char v[32];
        struct strbuf ranks = STRBUF_INIT;
        const json_t *rank;
        json_array_foreach(h[k].ranks, i, rank) {
            if (i == MAX_RANKS_SHOWN) {
                strbuf_puts(&ranks, " ...");
                break;
            }
            strbuf_printf(&ranks, "%s%lld", i ? " " : "", (long long)json_integer_value(rank));
        }
        double n = (double)h[k].n;
        size_t row = export_table_row(t, 0);
        export_table_set(t, row, 0, "%s", h[k].name);
        export_table_set(t, row, 1, "%s", ranks.s);
        strbuf_free(&ranks);
        export_table_set(t, row, 2, "%.2f", h[k].procs / n);
        if (h[k].ncpu)
            export_table_set(t, row, 3, "%.2f of %zu", h[k].busy / n * (double)h[k].ncpu,
                             h[k].ncpu);
        else
            export_table_set(t, row, 3, "%.0f %%", 100 * h[k].busy / n);
        export_table_set(t, row, 4, "%s", export_fmt_bytes(h[k].peak, v, sizeof v));
    }
    free(h);
}

void export_latency_table(struct export_table *t, const struct doc_summary *s)
{
    export_table_init(t, 7, "stage", "spans", "p50", "p90", "p99", "p99.9", "max");
    t->numeric = 0x7e;
    for (size_t i = 0; i < s->n_stages; i++) {
        const struct doc_stage *st = &s->stages[i];
        const struct doc_spans *sp = &st->spans;
        if (sp->n < EXPORT_LATENCY_MIN_SPANS)
            continue;
        size_t row = export_table_row(t, st->depth);
        char v[32];
        export_table_set(t, row, 0, "%s", st->name ? st->name : "?");
        export_table_set(t, row, 1, "%lld", sp->n);
        const double q[] = {sp->p50_ns, sp->p90_ns, sp->p99_ns, sp->p999_ns, sp->max_ns};
        for (size_t k = 0; k < sizeof q / sizeof q[0]; k++)
            export_table_set(t, row, k + 2, "%s", export_fmt_duration(q[k], v, sizeof v));
    }
}
