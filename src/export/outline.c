/* outline.c: the outline of the Markdown and HTML reports: what a report says and in which
 * order (the comparison first when there are several results, then for each: summary (the
 * answer), results, analysis, resource use, warnings, workload and configuration, methodology,
 * environment, runs, how to reproduce), as calls to the format's export_outline_ops, so both formats
 * say the same things and only their markup differs (see export.h). Each result is read through
 * its views of doc/ (req->docs, req->loads). The sections with a file of their own
 * (outline_sections.h: the comparison, the sweep, a load result's, the ranks) are called from
 * here; all write with the primitives of outline_write.h. */
#include "export/export.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "export/outline_sections.h"

#include "doc/load.h"
#include "doc/result.h"

/* ---- environment ---- */

/* Folded in HTML: long, and read after the answer. */
static void section_environment(struct outline *o, const struct doc_result *r)
{
    const json_t *env = r->environment;
    outline_group_begin(o, EXPORT_GROUP_FOLDED, "Environment");
    if (!env || json_object_size(env) == 0) {
        outline_para(o, "The result does not describe its environment.");
    } else {
        struct export_table t;
        export_env_table(&t, env);
        outline_table(o, &t);
    }
    outline_group_end(o, EXPORT_GROUP_FOLDED);
}

/* ---- workload and configuration ---- */

static void config_value(const char *key, const json_t *v, char *buf, size_t len)
{
    if (json_is_null(v) && !strcmp(key, "runs"))
        snprintf(buf, len, "automatic (at least 3 runs and 5 s, at most 10)");
    else if (json_is_null(v))
        snprintf(buf, len, "none");
    else if (export_ends_with(key, "_ns") && json_is_number(v))
        export_fmt_duration(json_number_value(v), buf, len);
    else if (export_ends_with(key, "_s") && json_is_number(v))
        snprintf(buf, len, "%.6g s", json_number_value(v));
    else
        export_fmt_value(v, buf, len);
}

/* A load result measured a server it started (--server-cmd): its process tree is the
 * "workload" of the stage analysis and the resource table. Without one there is no process to
 * analyse, and the generator's one run is not the result. */
static bool measures_server(const struct doc_load *load)
{
    return load->server_cmd != NULL;
}

static void section_workload(struct outline *o, const struct doc_result *r,
                             const struct doc_load *load)
{
    outline_heading(o, o->level, "Workload and configuration");
    if (load->present) { /* the generator's command; the server's, if it started one */
        char *c = export_reproduce_command(r, load);
        outline_para(o, "Command:");
        o->ops->code(o->ctx, c);
        free(c);
    }
    if (r->n_argv || !load->present) {
        char *c = export_shell_join(r->argv, r->n_argv);
        outline_para(o, "%s%s:", load->present ? "Server command" : "Command",
                     r->shell ? " (run through /bin/sh -c)" : "");
        o->ops->code(o->ctx, c);
        free(c);
    }

    char buf[512];
    struct export_table t;
    export_table_init(&t, 2, "setting", "value");
    size_t row = export_table_row(&t, 0);
    export_table_set(&t, row, 0, "label");
    snprintf(buf, sizeof buf, "%s", str_or(r->label, "-")); /* as long as any setting */
    export_table_set(&t, row, 1, "%s", buf);
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)r->config.json, k, v) {
        config_value(k, v, buf, sizeof buf);
        row = export_table_row(&t, 0);
        export_table_set(&t, row, 0, "%s", k);
        export_table_set(&t, row, 1, "%s", buf);
    }
    outline_table(o, &t);

    const struct doc_summary *s = &r->summary;
    if (s->n_metadata) {
        outline_para(o, "Metadata the workload sent (last run):");
        export_table_init(&t, 2, "key", "value");
        for (size_t i = 0; i < s->n_metadata; i++) {
            const struct doc_meta *m = &s->metadata[i];
            row = export_table_row(&t, 0);
            export_table_set(&t, row, 0, "%s", str_or(m->key, "?"));
            export_table_set(&t, row, 1, "%s%s", str_or(m->value, ""),
                             m->varies ? " (varies between runs)" : "");
        }
        outline_table(o, &t);
    }
}

/* ---- methodology ---- */

static void section_methodology(struct outline *o, const struct doc_result *r,
                                const struct doc_load *load)
{
    const struct doc_summary *s = &r->summary;
    const struct doc_sampling *sampling = &r->sampling;
    struct strvec l = STRVEC_INIT;
    long long measured = s->runs_measured;
    long long warmup = 0;
    for (size_t i = 0; i < r->n_runs; i++)
        warmup += r->runs[i].warmup;
    if (load->present) {
        strvec_pushf(&l, "mlbench load ran the scenario runs in the Load section, in one run of the "
               "generator; each query's latency counts from the time it was due, so a server "
               "that stalls is not hidden (coordinated omission); percentiles are LoadGen's "
               "rank in each run's histogram, and VALID or INVALID follows LoadGen's rules "
               "(docs/load.md).");
        if (measures_server(load))
            strvec_pushf(&l, "The server's process tree (the server command) is the workload whose "
                   "resources and markers are measured.");
    } else {
        strvec_pushf(&l, "%lld measured run%s, %lld ok; %lld warm-up run%s before them, kept in the "
               "result but not counted (first runs pay for cold caches and lazy initialisation).",
               measured, measured == 1 ? "" : "s", s->runs_ok, warmup,
               warmup == 1 ? "" : "s");
        if (r->config.runs_automatic)
            strvec_pushf(&l, "Number of runs chosen automatically: at least 3 runs and 5 s of "
                   "measurement, at most 10.");
        if (s->used_failed_runs)
            strvec_pushf(&l, "No run succeeded: the statistics describe the failed runs.");
        else
            strvec_pushf(&l, "Statistics are over the %lld measured runs that succeeded.",
                   s->runs_used);
        strvec_pushf(&l, "Each run: the command in its own process group, standard input from "
               "/dev/null, output discarded; wall time from spawn to exit (CLOCK_MONOTONIC); CPU "
               "time, peak RSS and page faults over the whole process tree.");
        strvec_pushf(&l, "Stage time is active time: wall time during which at least one span of the "
               "stage was open on any thread or process (the union of its spans).");
        strvec_pushf(&l, "Figures are medians over the runs, with the confidence interval of the median "
               "from order statistics (95 %% from 6 runs on; with fewer runs [min, max] and the "
               "coverage it really has); CV is standard deviation over mean; outliers have a "
               "modified z-score above 3.5 (docs/statistics.md).");
    }
    if (isfinite(r->config.timeout_s))
        strvec_pushf(&l, "Timeout per run: %.6g s.", r->config.timeout_s);
    if (sampling->present) {
        struct strbuf src = STRBUF_INIT;
        const json_t *sources = sampling->sources;
        for (size_t i = 0; i < json_array_size(sources); i++) {
            if (i)
                strbuf_puts(&src, ", ");
            strbuf_puts(&src, str_or(json_string_value(json_array_get(sources, i)), "?"));
        }
        double ratio = sampling->cpu_ratio;
        char cost[96] = "", a[64];
        if (isfinite(ratio))
            snprintf(cost, sizeof cost, "; sampling used %.2f %% of one core", 100 * ratio);
        strvec_pushf(&l, "Resources sampled every %s by %s%s; samples are attributed to the stages open "
               "at their time.",
               export_fmt_duration(sampling->interval_ns, a, sizeof a),
               json_array_size(sources) ? src.s : "no source", cost);
        strbuf_free(&src);
        const json_t *nm = sampling->not_measured;
        for (size_t i = 0; i < json_array_size(nm); i++)
            strvec_pushf(&l, "Not measured: %s.", str_or(json_string_value(json_array_get(nm, i)), "?"));
    }
    strvec_pushf(&l, "Measured with mlbench %s (commit %s); result %s, started %s.",
           str_or(r->mlbench_version, "?"), str_or(r->mlbench_commit, "?"),
           str_or(r->id, "?"), str_or(r->created, "?"));
    outline_heading(o, o->level, "Methodology");
    o_list(o, &l);
}

/* ---- results ---- */

static void stats_row(struct export_table *t, const char *name, int depth,
                      const struct doc_stats *st, double share, long long n)
{
    char m[32], mn[32], mx[32];
    size_t row = export_table_row(t, depth);
    export_table_set(t, row, 0, "%s", name);
    export_table_set(t, row, 1, "%s", export_fmt_duration(st->median, m, sizeof m));
    if (st->n >= 2 && isfinite(st->ci_low)) {
        char lo[32], hi[32];
        export_fmt_duration(st->ci_low, lo, sizeof lo);
        export_fmt_duration(st->ci_high, hi, sizeof hi);
        if (isfinite(st->ci_level) && st->ci_level < 0.95 - 1e-9)
            export_table_set(t, row, 2, "%s .. %s (%.0f %%)", lo, hi, 100 * st->ci_level);
        else
            export_table_set(t, row, 2, "%s .. %s", lo, hi);
    } else {
        export_table_set(t, row, 2, "-");
    }
    export_table_set(t, row, 3, "%s", export_fmt_num(share, "%.1f %%", 100, m, sizeof m));
    export_table_set(t, row, 4, "%s .. %s", export_fmt_duration(st->min, mn, sizeof mn),
                     export_fmt_duration(st->max, mx, sizeof mx));
    export_table_set(t, row, 5, "%s", st->n >= 2 ? export_fmt_num(st->cv, "%.1f %%", 100, m,
                                                                  sizeof m) : "-");
    export_table_set(t, row, 6, "%lld", n);
}

static void section_results(struct outline *o, const struct doc_result *r, size_t index)
{
    const struct doc_summary *s = &r->summary;
    const struct doc_stats *wall = &s->wall;
    char a[32], b[32], c[32], d[32];
    outline_heading(o, o->level, "Results");
    if (!wall->present) {
        outline_para(o, "No run completed: there is nothing to summarise.");
        return;
    }
    if (s->used_failed_runs)
        outline_para(o, "No run succeeded: the figures below describe failed runs.");
    struct export_table t;
    export_table_init(&t, 7, "stage", "median", "95% CI of median", "share", "min .. max", "CV",
                      "runs");
    t.numeric = 0x7e;
    for (size_t i = 0; i < s->n_stages; i++) {
        const struct doc_stage *st = &s->stages[i];
        stats_row(&t, str_or(st->name, "?"), st->depth, &st->active, st->share, st->n);
    }
    double outside = s->outside_ns;
    if (s->n_stages && isfinite(outside) && wall->median > 0 && outside / wall->median >= 0.01) {
        size_t row = export_table_row(&t, 0);
        export_table_set(&t, row, 0, "(outside stages)");
        export_table_set(&t, row, 1, "%s", export_fmt_duration(outside, a, sizeof a));
        export_table_set(&t, row, 3, "%.1f %%", 100 * outside / wall->median);
    }
    stats_row(&t, "total", 0, wall, 1.0, wall->n);
    outline_table(o, &t);
    outline_para(o, "Stage time is the wall time with the stage open on any thread. CPU: %s cores busy "
           "(user %s, system %s per run); peak RSS %s.",
           export_fmt_num(s->cpu_cores, "%.2f", 1, c, sizeof c),
           export_fmt_duration(s->user.median, a, sizeof a),
           export_fmt_duration(s->sys.median, b, sizeof b),
           export_fmt_bytes(s->max_rss.median, d, sizeof d));

    if (s->n_counters) {
        export_table_init(&t, 4, "counter", "last value (median)", "sum per run (median)",
                          "rate (median)");
        t.numeric = 0xe;
        for (size_t i = 0; i < s->n_counters; i++) {
            const struct doc_counter *k = &s->counters[i];
            size_t row = export_table_row(&t, 0);
            export_table_set(&t, row, 0, "%s", str_or(k->name, "?"));
            export_table_set(&t, row, 1, "%s", export_fmt_num(k->last.median, "%.6g", 1, a,
                                                              sizeof a));
            /* sums and rates only mean something for counts (images), not for a loss */
            export_table_set(&t, row, 2, "%s", k->count ? export_fmt_num(k->sum_median, "%.6g",
                                                                         1, a, sizeof a) : "-");
            char rate[256];
            export_table_set(&t, row, 3, "%s",
                             k->count ? export_fmt_counter_rate(k, rate, sizeof rate) : "-");
        }
        outline_para(o, "Counters the workload sent:");
        outline_table(o, &t);
        if (o->ops->figure)
            o->ops->figure(o->ctx, EXPORT_FIGURE_CURVES, o->req, index);
    }
}

/* ---- latency per span ---- */

/* Percentiles of the span durations of each stage that repeats, and (HTML) their histograms. */
static void section_latency(struct outline *o, const struct doc_result *r, size_t index)
{
    struct export_table t;
    export_latency_table(&t, &r->summary);
    if (t.nrows) {
        outline_heading(o, o->level + 1, "Latency per span");
        outline_para(o, "Stages with at least %d spans: the duration of each span, pooled over the ok "
               "runs; percentiles by nearest rank (an observed span, never interpolated).",
               EXPORT_LATENCY_MIN_SPANS);
        outline_table(o, &t);
        if (o->ops->figure)
            o->ops->figure(o->ctx, EXPORT_FIGURE_LATENCY, o->req, index);
    } else {
        export_table_free(&t);
    }
}

/* ---- resource use per stage ---- */

/* sm: the table has the SM active column (NVML GPM measured it in the run); own_io: the I/O
 * column is the workload's own I/O wait (else the machine's iowait, in results made before) */
static void resource_row(struct export_table *t, const char *name, int depth,
                         const struct doc_resources *resources, const json_t *gpus, bool sm,
                         bool own_io)
{
    char b[32];
    size_t row = export_table_row(t, depth);
    export_table_set(t, row, 0, "%s", name);
    if (!resources->n) {
        export_table_set(t, row, 1, "no sample (shorter than the sampling interval)");
        return;
    }
    struct doc_figures f;
    doc_figures(resources, gpus, &f);
    export_table_set(t, row, 1, "%s", export_fmt_num(f.cpu_cores, "%.2f", 1, b, sizeof b));
    export_table_set(t, row, 2, "%s", export_fmt_bytes(f.rss_peak_bytes, b, sizeof b));
    export_table_set(t, row, 3, "%s", export_fmt_num(f.read_bps, "%.1f", 1e-6, b, sizeof b));
    export_table_set(t, row, 4, "%s", export_fmt_num(f.write_bps, "%.1f", 1e-6, b, sizeof b));
    export_table_set(t, row, 5, "%s", export_fmt_num(own_io ? f.io_blocked : f.iowait, "%.0f %%",
                                                     100, b, sizeof b));
    if (t->ncols > 6) {
        size_t c = 6;
        export_table_set(t, row, c++, "%s", export_fmt_num(f.gpu_util, "%.0f %%", 100, b, sizeof b));
        if (sm)
            export_table_set(t, row, c++, "%s",
                             export_fmt_num(f.gpu_sm_active, "%.0f %%", 100, b, sizeof b));
        export_table_set(t, row, c++, "%s", export_fmt_bytes(f.gpu_mem_peak_bytes, b, sizeof b));
        export_table_set(t, row, c, "%s", export_fmt_num(f.gpu_power_watts, "%.0f", 1, b,
                                                         sizeof b));
    }
}

static void section_resources(struct outline *o, const struct doc_result *r, size_t index)
{
    const struct doc_summary *s = &r->summary;
    const json_t *gpus = r->analysis.gpus;
    outline_heading(o, o->level, "Resource use per stage");
    if (!s->resources.json) {
        outline_para(o, "No resource samples: the runs were shorter than the sampling interval or "
               "no source could measure.");
        return;
    }
    struct export_table t;
    struct doc_figures total;
    doc_figures(&s->resources, gpus, &total);
    bool sm = json_array_size(gpus) && isfinite(total.gpu_sm_active);
    bool own_io = isfinite(total.io_blocked);
    const char *io = own_io ? "I/O wait" : "iowait";
    if (sm)
        export_table_init(&t, 10, "stage", "CPU cores busy", "peak memory", "read MB/s",
                          "write MB/s", io, "GPU util", "SM active", "GPU memory peak", "GPU W");
    else if (json_array_size(gpus))
        export_table_init(&t, 9, "stage", "CPU cores busy", "peak memory", "read MB/s",
                          "write MB/s", io, "GPU util", "GPU memory peak", "GPU W");
    else
        export_table_init(&t, 6, "stage", "CPU cores busy", "peak memory", "read MB/s",
                          "write MB/s", io);
    t.numeric = 0x3fe;
    for (size_t i = 0; i < s->n_stages; i++) {
        const struct doc_stage *st = &s->stages[i];
        resource_row(&t, str_or(st->name, "?"), st->depth, &st->resources, gpus, sm, own_io);
    }
    resource_row(&t, "total", 0, &s->resources, gpus, sm, own_io);
    outline_table(o, &t);
    outline_para(o, "Means over the samples that fell in each stage (medians over the runs); peak "
           "memory is the highest sample. CPU cores busy is the rate of process CPU time; MB/s are "
           "storage bytes of the process tree; %s.%s",
           own_io ? "I/O wait is the share of time the workload's own processes were blocked on "
                    "I/O (other processes' I/O is not in it)"
                  : "iowait is the machine's",
           !json_array_size(gpus) ? ""
           : sm ? " GPU figures cover the GPUs the workload used; SM active is the share of the "
                  "SMs with work (NVML GPM), which GPU util (the time a kernel ran) overstates "
                  "for small kernels."
                : " GPU figures cover the GPUs the workload used.");
    if (o->ops->figure)
        o->ops->figure(o->ctx, EXPORT_FIGURE_TIMELINES, o->req, index);
}

/* ---- analysis, warnings, runs, reproduce ---- */

#define TOP_FINDINGS 3

/* The answer first: the verdict (bottleneck, its verdict and evidence), the total with its
 * interval, the stage chart, the top findings in the analysis's order, the warnings count. */
static void section_summary(struct outline *o, const struct doc_result *r,
                            const struct doc_load *load, size_t index)
{
    outline_heading(o, o->level, "Summary");
    outline_group_begin(o, EXPORT_GROUP_ANSWER, NULL);
    if (load->present) {
        outline_load_answer(o, load);
    } else {
        char *verdict = export_answer_verdict(r), *total = export_answer_total(r);
        outline_para(o, "%s", verdict);
        outline_para(o, "%s", total);
        free(verdict);
        free(total);
        if (o->req->n == 1 && o->ops->figure)
            o->ops->figure(o->ctx, EXPORT_FIGURE_BREAKDOWN, o->req, index);
    }
    char *top[TOP_FINDINGS];
    /* a load result's stages are the server's (--server-cmd), else there is none to analyse */
    bool analysed = !load->present || measures_server(load);
    size_t n = analysed ? export_answer_findings(r, TOP_FINDINGS, top) : 0;
    size_t all = r->analysis.n_findings;
    if (n) {
        struct strvec l = STRVEC_INIT;
        outline_para(o, "%s:", n == 1 ? "The finding" : "Top findings, most important first");
        for (size_t i = 0; i < n; i++) {
            strvec_pushf(&l, "%s", top[i]);
            free(top[i]);
        }
        o_list(o, &l);
        if (all > n)
            outline_para(o, "All %zu findings, with their evidence: Analysis, below.", all);
    } else if (r->analysis.present && analysed) {
        outline_para(o, "No findings: no rule found something to change.");
    }
    size_t nw = r->n_warnings;
    if (nw)
        outline_para(o, "%zu warning%s about the measurement (Warnings, below).", nw,
               nw == 1 ? "" : "s");
    else
        outline_para(o, "No warning about the measurement.");
    outline_group_end(o, EXPORT_GROUP_ANSWER);
}

static void section_analysis(struct outline *o, const struct doc_result *r)
{
    const struct doc_analysis *a = &r->analysis;
    char b[32];
    outline_heading(o, o->level, "Analysis");
    if (!a->present) {
        outline_para(o, "No analysis: there were no resource samples or no usable run.");
        return;
    }
    if (a->bottleneck)
        outline_para(o, "Bottleneck: %s, the top-level stage holding the pipeline back.",
                     a->bottleneck);
    struct export_table t;
    export_table_init(&t, 4, "stage", "share", "verdict", "evidence");
    t.numeric = 0x2;
    for (size_t i = 0; i < a->n_verdicts; i++) {
        const struct doc_verdict *v = &a->verdicts[i];
        const char *stage = str_or(v->stage, "?");
        size_t row = export_table_row(&t, 0);
        export_table_set(&t, row, 0, "%s", stage);
        export_table_set(&t, row, 1, "%s", export_fmt_num(doc_result_stage_share(r, stage),
                                                          "%.1f %%", 100, b, sizeof b));
        export_table_set(&t, row, 2, "%s", str_or(v->rule, "?"));
        export_table_set(&t, row, 3, "%s", str_or(v->evidence, ""));
    }
    outline_table(o, &t);
    if (!a->n_findings) {
        outline_para(o, "No findings.");
        return;
    }
    outline_para(o, "Findings, most important first (the analysis's order, docs/analysis.md):");
    export_table_init(&t, 6, "#", "stage", "rule", "evidence", "recommendation",
                      "could save per run");
    t.numeric = 0x21;
    for (size_t i = 0; i < a->n_findings; i++) {
        const struct doc_finding *f = &a->findings[i];
        size_t row = export_table_row(&t, 0);
        export_table_set(&t, row, 0, "%zu", i + 1);
        export_table_set(&t, row, 1, "%s", str_or(f->stage, "?"));
        export_table_set(&t, row, 2, "%s", str_or(f->rule, "?"));
        export_table_set(&t, row, 3, "%s", str_or(f->evidence, ""));
        export_table_set(&t, row, 4, "%s", str_or(f->recommendation, ""));
        export_table_set(&t, row, 5, "%s", f->saving_ns > 0
                                               ? export_fmt_duration(f->saving_ns, b, sizeof b)
                                               : "-");
    }
    outline_table(o, &t);
}

static void section_warnings(struct outline *o, const struct doc_result *r)
{
    struct strvec l = STRVEC_INIT;
    outline_heading(o, o->level, "Warnings");
    if (r->interrupted_by)
        strvec_pushf(&l, "interrupted: mlbench was stopped by %s; the result holds the runs made so far.",
               r->interrupted_by);
    for (size_t i = 0; i < r->n_warnings; i++)
        strvec_pushf(&l, "%s: %s", str_or(r->warnings[i].code, "?"),
               str_or(r->warnings[i].message, ""));
    if (!l.n)
        outline_para(o, "None: nothing suggests the measurement is off.");
    o_list(o, &l);
}

/* A run's exit code as the document wrote it: a whole number, "-" when it has none (killed by
 * a signal, or never started). */
static char *exit_code(double v, char *buf, size_t len)
{
    if (isnan(v))
        snprintf(buf, len, "-");
    else if (v == floor(v) && fabs(v) < 9e18)
        snprintf(buf, len, "%lld", (long long)v);
    else
        snprintf(buf, len, "%.6g", v);
    return buf;
}

static void section_runs(struct outline *o, const struct doc_result *r)
{
    char a[32], b[32], c[32], d[32];
    outline_heading(o, o->level, "Runs");
    struct export_table t;
    export_table_init(&t, 8, "run", "kind", "status", "wall", "user", "system", "max RSS",
                      "exit");
    t.numeric = 0xf9;
    for (size_t i = 0; i < r->n_runs; i++) {
        const struct doc_run *x = &r->runs[i];
        size_t row = export_table_row(&t, 0);
        export_table_set(&t, row, 0, "%lld", x->index);
        export_table_set(&t, row, 1, "%s", x->warmup ? "warm-up" : "measured");
        const char *err = x->error, *perr = x->prepare_error;
        export_table_set(&t, row, 2, "%s%s%s", str_or(x->status, "?"),
                         err || perr ? ": " : "", err ? err : perr ? perr : "");
        export_table_set(&t, row, 3, "%s", export_fmt_duration(x->wall_ns, a, sizeof a));
        export_table_set(&t, row, 4, "%s", export_fmt_duration(x->user_ns, b, sizeof b));
        export_table_set(&t, row, 5, "%s", export_fmt_duration(x->sys_ns, c, sizeof c));
        export_table_set(&t, row, 6, "%s", export_fmt_bytes(x->max_rss_bytes, d, sizeof d));
        if (x->signal)
            export_table_set(&t, row, 7, "%s", x->signal);
        else
            export_table_set(&t, row, 7, "%s", exit_code(x->exit_code, a, sizeof a));
    }
    outline_table(o, &t);
}

static void section_reproduce(struct outline *o, const struct doc_result *r,
                              const struct doc_load *load)
{
    outline_heading(o, o->level, "Reproduce");
    outline_para(o, "From the directory it was measured in, with the same environment:");
    char *cmd = export_reproduce_command(r, load);
    o->ops->code(o->ctx, cmd);
    free(cmd);
}

/* ---- the whole outline ---- */

void export_outline(const struct export_request *req, const struct export_outline_ops *ops,
                    void *ctx)
{
    struct outline o = {ops, ctx, req, req->n > 1 || req->sweep ? 3 : 2};
    if (req->sweep)
        outline_sweep(&o);
    if (req->n == 0)
        return;
    const struct doc_result *first = req->docs[0];
    if (req->n == 1) {
        if (!req->sweep)
            outline_heading(&o, 1, "mlbench report: %s", doc_result_name(first));
    } else if (req->sweep) {
        outline_comparison_answer(&o);
        outline_comparison(&o);
    } else {
        struct strbuf b = STRBUF_INIT;
        for (size_t i = 1; i < req->n; i++) {
            if (i > 1)
                strbuf_puts(&b, ", ");
            strbuf_puts(&b, doc_result_name(req->docs[i]));
        }
        outline_heading(&o, 1, "mlbench comparison: %s against %s", b.s, doc_result_name(first));
        strbuf_free(&b);
        outline_comparison_answer(&o);
        outline_comparison(&o);
    }
    for (size_t i = 0; i < req->n; i++) {
        const struct doc_result *r = req->docs[i];
        const struct doc_load *load = req->loads[i];
        if (req->n > 1)
            outline_heading(&o, 2, "%s: %s", i == 0 ? "Baseline" : "Candidate",
                            doc_result_name(r));
        else if (req->sweep)
            outline_heading(&o, 2, "Point: %s", doc_result_name(r));
        outline_para(&o, "Result %s%s%s, created %s%s.", str_or(r->id, "?"),
               req->paths && req->paths[i] ? " read from " : "",
               req->paths && req->paths[i] ? req->paths[i] : "",
               str_or(r->created, "?"),
               r->status && strcmp(r->status, "complete") ? " (interrupted: incomplete)" : "");
        section_summary(&o, r, load, i);
        outline_load(&o, load, i);
        if (!load->present)
            section_results(&o, r, i);
        section_latency(&o, r, i);
        outline_ranks(&o, r);
        if (!load->present || measures_server(load)) {
            section_analysis(&o, r);
            section_resources(&o, r, i);
        }
        section_warnings(&o, r);
        section_workload(&o, r, load);
        section_methodology(&o, r, load);
        section_environment(&o, r);
        section_runs(&o, r);
        section_reproduce(&o, r, load);
    }
}
