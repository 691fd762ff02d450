/* outline.c: the outline of the Markdown and HTML reports: what a report says and in which
 * order (the comparison first when there are several results, then for each: summary (the
 * answer), results, analysis, resource use, warnings, workload and configuration, methodology,
 * environment, runs, how to reproduce), as calls to the format's export_outline_ops, so both formats
 * say the same things and only their markup differs (see export.h). The sections with a file of
 * their own (outline_sections.h: the comparison, the sweep, a load result's, the ranks) are
 * called from here; all write with the primitives of outline_write.h. */
#include "export/export.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "export/outline_sections.h"

#include "doc/result.h"

/* ---- environment ---- */

/* Folded in HTML: long, and read after the answer. */
static void section_environment(struct outline *o, const json_t *r)
{
    const json_t *env = json_object_get(r, "environment");
    outline_group_begin(o, EXPORT_GROUP_FOLDED, "Environment");
    if (!json_is_object(env) || json_object_size(env) == 0) {
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
static bool measures_server(const json_t *r)
{
    return jsonx_str(json_object_get(r, "load"), "server_cmd") != NULL;
}

static void section_workload(struct outline *o, const json_t *r)
{
    const json_t *cmd = json_object_get(r, "command");
    const json_t *argv = json_object_get(cmd, "argv");
    outline_heading(o, o->level, "Workload and configuration");
    const json_t *load = json_object_get(r, "load");
    if (json_is_object(load)) { /* the generator's command; the server's, if it started one */
        char *c = export_reproduce_command(r);
        outline_para(o, "Command:");
        o->ops->code(o->ctx, c);
        free(c);
    }
    if (json_array_size(argv) || !json_is_object(load)) {
        char *c = export_shell_join(argv);
        outline_para(o, "%s%s:", json_is_object(load) ? "Server command" : "Command",
                     json_is_true(json_object_get(cmd, "shell")) ? " (run through /bin/sh -c)"
                                                                : "");
        o->ops->code(o->ctx, c);
        free(c);
    }

    char buf[512];
    struct export_table t;
    export_table_init(&t, 2, "setting", "value");
    size_t row = export_table_row(&t, 0);
    export_table_set(&t, row, 0, "label");
    export_table_set(&t, row, 1, "%s", export_fmt_value(json_object_get(r, "label"), buf,
                                                          sizeof buf));
    const json_t *cfg = json_object_get(r, "config");
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)cfg, k, v) {
        config_value(k, v, buf, sizeof buf);
        row = export_table_row(&t, 0);
        export_table_set(&t, row, 0, "%s", k);
        export_table_set(&t, row, 1, "%s", buf);
    }
    outline_table(o, &t);

    const json_t *meta = json_object_get(json_object_get(r, "summary"), "metadata");
    if (json_array_size(meta)) {
        outline_para(o, "Metadata the workload sent (last run):");
        export_table_init(&t, 2, "key", "value");
        for (size_t i = 0; i < json_array_size(meta); i++) {
            const json_t *m = json_array_get(meta, i);
            row = export_table_row(&t, 0);
            export_table_set(&t, row, 0, "%s", str_or(jsonx_str(m, "key"), "?"));
            export_table_set(&t, row, 1, "%s%s", str_or(jsonx_str(m, "value"), ""),
                             json_is_true(json_object_get(m, "varies"))
                                 ? " (varies between runs)" : "");
        }
        outline_table(o, &t);
    }
}

/* ---- methodology ---- */

static void section_methodology(struct outline *o, const json_t *r)
{
    const json_t *s = json_object_get(r, "summary");
    const json_t *cfg = json_object_get(r, "config");
    const json_t *sampling = json_object_get(r, "sampling");
    const json_t *mlb = json_object_get(r, "mlbench");
    struct export_lines l = {0};
    long long measured = jsonx_int(s, "runs_measured", 0);
    long long warmup = 0;
    const json_t *runs = json_object_get(r, "runs");
    for (size_t i = 0; i < json_array_size(runs); i++)
        warmup += json_is_true(json_object_get(json_array_get(runs, i), "warmup"));
    if (json_is_object(json_object_get(r, "load"))) {
        sl_add(&l, "mlbench load ran the scenario runs in the Load section, in one run of the "
               "generator; each query's latency counts from the time it was due, so a server "
               "that stalls is not hidden (coordinated omission); percentiles are LoadGen's "
               "rank in each run's histogram, and VALID or INVALID follows LoadGen's rules "
               "(docs/load.md).");
        if (measures_server(r))
            sl_add(&l, "The server's process tree (the server command) is the workload whose "
                   "resources and markers are measured.");
    } else {
        sl_add(&l, "%lld measured run%s, %lld ok; %lld warm-up run%s before them, kept in the "
               "result but not counted (first runs pay for cold caches and lazy initialisation).",
               measured, measured == 1 ? "" : "s", jsonx_int(s, "runs_ok", 0), warmup,
               warmup == 1 ? "" : "s");
        if (json_is_null(json_object_get(cfg, "runs")))
            sl_add(&l, "Number of runs chosen automatically: at least 3 runs and 5 s of "
                   "measurement, at most 10.");
        if (json_is_true(json_object_get(s, "used_failed_runs")))
            sl_add(&l, "No run succeeded: the statistics describe the failed runs.");
        else
            sl_add(&l, "Statistics are over the %lld measured runs that succeeded.",
                   jsonx_int(s, "runs_used", 0));
        sl_add(&l, "Each run: the command in its own process group, standard input from "
               "/dev/null, output discarded; wall time from spawn to exit (CLOCK_MONOTONIC); CPU "
               "time, peak RSS and page faults over the whole process tree.");
        sl_add(&l, "Stage time is active time: wall time during which at least one span of the "
               "stage was open on any thread or process (the union of its spans).");
        sl_add(&l, "Figures are medians over the runs, with the confidence interval of the median "
               "from order statistics (95 %% from 6 runs on; with fewer runs [min, max] and the "
               "coverage it really has); CV is standard deviation over mean; outliers have a "
               "modified z-score above 3.5 (docs/statistics.md).");
    }
    if (isfinite(jsonx_num(cfg, "timeout_s")))
        sl_add(&l, "Timeout per run: %.6g s.", jsonx_num(cfg, "timeout_s"));
    if (sampling) {
        struct strbuf src = {0};
        strbuf_puts(&src, "");
        const json_t *sources = json_object_get(sampling, "sources");
        for (size_t i = 0; i < json_array_size(sources); i++) {
            if (i)
                strbuf_puts(&src, ", ");
            strbuf_puts(&src, str_or(json_string_value(json_array_get(sources, i)), "?"));
        }
        double ratio = jsonx_num(sampling, "cpu_ratio");
        char cost[96] = "", a[64];
        if (isfinite(ratio))
            snprintf(cost, sizeof cost, "; sampling used %.2f %% of one core", 100 * ratio);
        sl_add(&l, "Resources sampled every %s by %s%s; samples are attributed to the stages open "
               "at their time.",
               export_fmt_duration(jsonx_num(sampling, "interval_ns"), a, sizeof a),
               json_array_size(sources) ? src.s : "no source", cost);
        free(src.s);
        const json_t *nm = json_object_get(sampling, "not_measured");
        for (size_t i = 0; i < json_array_size(nm); i++)
            sl_add(&l, "Not measured: %s.", str_or(json_string_value(json_array_get(nm, i)), "?"));
    }
    sl_add(&l, "Measured with mlbench %s (commit %s); result %s, started %s.",
           str_or(jsonx_str(mlb, "version"), "?"),
           str_or(jsonx_str(mlb, "git_commit"), "?"),
           str_or(jsonx_str(r, "id"), "?"), str_or(jsonx_str(r, "created"), "?"));
    outline_heading(o, o->level, "Methodology");
    o_list(o, &l);
}

/* ---- results ---- */

static void stats_row(struct export_table *t, const char *name, int depth, const json_t *st,
                      double share, long long n)
{
    char m[32], mn[32], mx[32];
    size_t row = export_table_row(t, depth);
    double level = jsonx_num(st, "ci_level");
    long long sn = jsonx_int(st, "n", 0);
    export_table_set(t, row, 0, "%s", name);
    export_table_set(t, row, 1, "%s", export_fmt_duration(jsonx_num(st, "median"), m,
                                                           sizeof m));
    if (sn >= 2 && isfinite(jsonx_num(st, "ci_low"))) {
        char lo[32], hi[32];
        export_fmt_duration(jsonx_num(st, "ci_low"), lo, sizeof lo);
        export_fmt_duration(jsonx_num(st, "ci_high"), hi, sizeof hi);
        if (isfinite(level) && level < 0.95 - 1e-9)
            export_table_set(t, row, 2, "%s .. %s (%.0f %%)", lo, hi, 100 * level);
        else
            export_table_set(t, row, 2, "%s .. %s", lo, hi);
    } else {
        export_table_set(t, row, 2, "-");
    }
    export_table_set(t, row, 3, "%s", export_fmt_num(share, "%.1f %%", 100, m, sizeof m));
    export_table_set(t, row, 4, "%s .. %s",
                     export_fmt_duration(jsonx_num(st, "min"), mn, sizeof mn),
                     export_fmt_duration(jsonx_num(st, "max"), mx, sizeof mx));
    export_table_set(t, row, 5, "%s", sn >= 2 ? export_fmt_num(jsonx_num(st, "cv"),
                                                               "%.1f %%", 100, m, sizeof m) : "-");
    export_table_set(t, row, 6, "%lld", n);
}

static void section_results(struct outline *o, const json_t *r, size_t index)
{
    const json_t *s = json_object_get(r, "summary");
    const json_t *stages = json_object_get(s, "stages");
    const json_t *wall = json_object_get(s, "wall_ns");
    char a[32], b[32], c[32], d[32];
    outline_heading(o, o->level, "Results");
    if (!wall) {
        outline_para(o, "No run completed: there is nothing to summarise.");
        return;
    }
    if (json_is_true(json_object_get(s, "used_failed_runs")))
        outline_para(o, "No run succeeded: the figures below describe failed runs.");
    struct export_table t;
    export_table_init(&t, 7, "stage", "median", "95% CI of median", "share", "min .. max", "CV",
                      "runs");
    t.numeric = 0x7e;
    for (size_t i = 0; i < json_array_size(stages); i++) {
        const json_t *st = json_array_get(stages, i);
        stats_row(&t, str_or(jsonx_str(st, "name"), "?"), export_stage_depth(st),
                  json_object_get(st, "active_ns"), jsonx_num(st, "share"),
                  jsonx_int(st, "n", 0));
    }
    double outside = jsonx_num(s, "outside_ns");
    double wall_median = jsonx_num(wall, "median");
    if (json_array_size(stages) && isfinite(outside) && wall_median > 0 &&
        outside / wall_median >= 0.01) {
        size_t row = export_table_row(&t, 0);
        export_table_set(&t, row, 0, "(outside stages)");
        export_table_set(&t, row, 1, "%s", export_fmt_duration(outside, a, sizeof a));
        export_table_set(&t, row, 3, "%.1f %%", 100 * outside / wall_median);
    }
    stats_row(&t, "total", 0, wall, 1.0, jsonx_int(wall, "n", 0));
    outline_table(o, &t);
    outline_para(o, "Stage time is the wall time with the stage open on any thread. CPU: %s cores busy "
           "(user %s, system %s per run); peak RSS %s.",
           export_fmt_num(jsonx_num(s, "cpu_cores"), "%.2f", 1, c, sizeof c),
           export_fmt_duration(jsonx_num(json_object_get(s, "user_ns"), "median"), a,
                               sizeof a),
           export_fmt_duration(jsonx_num(json_object_get(s, "sys_ns"), "median"), b,
                               sizeof b),
           export_fmt_bytes(jsonx_num(json_object_get(s, "max_rss_bytes"), "median"), d,
                            sizeof d));

    const json_t *counters = json_object_get(s, "counters");
    if (json_array_size(counters)) {
        export_table_init(&t, 4, "counter", "last value (median)", "sum per run (median)",
                          "rate (median)");
        t.numeric = 0xe;
        struct doc_result *rd = doc_result_read(r);
        for (size_t i = 0; i < json_array_size(counters); i++) {
            const json_t *k = json_array_get(counters, i);
            bool count = json_is_true(json_object_get(k, "count"));
            size_t row = export_table_row(&t, 0);
            export_table_set(&t, row, 0, "%s", str_or(jsonx_str(k, "name"), "?"));
            export_table_set(&t, row, 1, "%s", export_fmt_num(
                jsonx_num(json_object_get(k, "last"), "median"), "%.6g", 1, a, sizeof a));
            /* sums and rates only mean something for counts (images), not for a loss */
            export_table_set(&t, row, 2, "%s", count ? export_fmt_num(
                jsonx_num(k, "sum_median"), "%.6g", 1, a, sizeof a) : "-");
            char rate[256];
            export_table_set(&t, row, 3, "%s",
                             count ? export_fmt_counter_rate(&rd->summary.counters[i], rate,
                                                             sizeof rate)
                                   : "-");
        }
        doc_result_free(rd);
        outline_para(o, "Counters the workload sent:");
        outline_table(o, &t);
        if (o->ops->figure)
            o->ops->figure(o->ctx, EXPORT_FIGURE_CURVES, o->req, index);
    }
}

/* ---- latency per span ---- */

/* Percentiles of the span durations of each stage that repeats, and (HTML) their histograms. */
static void section_latency(struct outline *o, const json_t *r, size_t index)
{
    struct export_table t;
    struct doc_result *d = doc_result_read(r);
    export_latency_table(&t, &d->summary);
    doc_result_free(d);
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

/* sm: the table has the SM active column (NVML GPM measured it in the run) */
static void resource_row(struct export_table *t, const char *name, int depth,
                         const json_t *resources, const json_t *gpus, bool sm)
{
    char b[32];
    size_t row = export_table_row(t, depth);
    export_table_set(t, row, 0, "%s", name);
    if (!json_array_size(resources)) {
        export_table_set(t, row, 1, "no sample (shorter than the sampling interval)");
        return;
    }
    struct export_stage_figures f;
    export_stage_figures(resources, gpus, &f);
    export_table_set(t, row, 1, "%s", export_fmt_num(f.cpu_cores, "%.2f", 1, b, sizeof b));
    export_table_set(t, row, 2, "%s", export_fmt_bytes(f.rss_peak_bytes, b, sizeof b));
    export_table_set(t, row, 3, "%s", export_fmt_num(f.read_bps, "%.1f", 1e-6, b, sizeof b));
    export_table_set(t, row, 4, "%s", export_fmt_num(f.write_bps, "%.1f", 1e-6, b, sizeof b));
    export_table_set(t, row, 5, "%s", export_fmt_num(f.iowait, "%.0f %%", 100, b, sizeof b));
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

static void section_resources(struct outline *o, const json_t *r, size_t index)
{
    const json_t *s = json_object_get(r, "summary");
    const json_t *gpus = json_object_get(json_object_get(r, "analysis"), "gpus");
    const json_t *stages = json_object_get(s, "stages");
    outline_heading(o, o->level, "Resource use per stage");
    if (!json_object_get(s, "resources")) {
        outline_para(o, "No resource samples: the runs were shorter than the sampling interval or "
               "no source could measure.");
        return;
    }
    struct export_table t;
    struct export_stage_figures total;
    export_stage_figures(json_object_get(s, "resources"), gpus, &total);
    bool sm = json_array_size(gpus) && isfinite(total.gpu_sm_active);
    if (sm)
        export_table_init(&t, 10, "stage", "CPU cores busy", "peak memory", "read MB/s",
                          "write MB/s", "iowait", "GPU util", "SM active", "GPU memory peak",
                          "GPU W");
    else if (json_array_size(gpus))
        export_table_init(&t, 9, "stage", "CPU cores busy", "peak memory", "read MB/s",
                          "write MB/s", "iowait", "GPU util", "GPU memory peak", "GPU W");
    else
        export_table_init(&t, 6, "stage", "CPU cores busy", "peak memory", "read MB/s",
                          "write MB/s", "iowait");
    t.numeric = 0x3fe;
    for (size_t i = 0; i < json_array_size(stages); i++) {
        const json_t *st = json_array_get(stages, i);
        resource_row(&t, str_or(jsonx_str(st, "name"), "?"),
                     export_stage_depth(st),
                     json_object_get(st, "resources"), gpus, sm);
    }
    resource_row(&t, "total", 0, json_object_get(s, "resources"), gpus, sm);
    outline_table(o, &t);
    outline_para(o, "Means over the samples that fell in each stage (medians over the runs); peak "
           "memory is the highest sample. CPU cores busy is the rate of process CPU time; MB/s are "
           "storage bytes of the process tree; iowait is the machine's.%s",
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
static void section_summary(struct outline *o, const json_t *r, size_t index)
{
    outline_heading(o, o->level, "Summary");
    outline_group_begin(o, EXPORT_GROUP_ANSWER, NULL);
    const json_t *load = json_object_get(r, "load");
    if (json_is_object(load)) {
        outline_load_answer(o, r);
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
    size_t n = !json_is_object(load) || measures_server(r)
                   ? export_answer_findings(r, TOP_FINDINGS, top)
                   : 0;
    size_t all = json_array_size(json_object_get(json_object_get(r, "analysis"), "findings"));
    if (n) {
        struct export_lines l = {0};
        outline_para(o, "%s:", n == 1 ? "The finding" : "Top findings, most important first");
        for (size_t i = 0; i < n; i++) {
            sl_add(&l, "%s", top[i]);
            free(top[i]);
        }
        o_list(o, &l);
        if (all > n)
            outline_para(o, "All %zu findings, with their evidence: Analysis, below.", all);
    } else if (json_is_object(json_object_get(r, "analysis")) &&
               (!json_is_object(load) || measures_server(r))) {
        outline_para(o, "No findings: no rule found something to change.");
    }
    size_t nw = json_array_size(json_object_get(r, "warnings"));
    if (nw)
        outline_para(o, "%zu warning%s about the measurement (Warnings, below).", nw,
               nw == 1 ? "" : "s");
    else
        outline_para(o, "No warning about the measurement.");
    outline_group_end(o, EXPORT_GROUP_ANSWER);
}

static void section_analysis(struct outline *o, const json_t *r)
{
    const json_t *a = json_object_get(r, "analysis");
    char b[32];
    outline_heading(o, o->level, "Analysis");
    if (!json_is_object(a)) {
        outline_para(o, "No analysis: there were no resource samples or no usable run.");
        return;
    }
    const char *bottleneck = jsonx_str(a, "bottleneck");
    if (bottleneck)
        outline_para(o, "Bottleneck: %s, the top-level stage holding the pipeline back.", bottleneck);
    struct export_table t;
    export_table_init(&t, 4, "stage", "share", "verdict", "evidence");
    t.numeric = 0x2;
    const json_t *verdicts = json_object_get(a, "verdicts");
    for (size_t i = 0; i < json_array_size(verdicts); i++) {
        const json_t *v = json_array_get(verdicts, i);
        const char *stage = str_or(jsonx_str(v, "stage"), "?");
        size_t row = export_table_row(&t, 0);
        export_table_set(&t, row, 0, "%s", stage);
        export_table_set(&t, row, 1, "%s", export_fmt_num(export_stage_share(r, stage),
                                                          "%.1f %%", 100, b, sizeof b));
        export_table_set(&t, row, 2, "%s", str_or(jsonx_str(v, "rule"), "?"));
        export_table_set(&t, row, 3, "%s", str_or(jsonx_str(v, "evidence"), ""));
    }
    outline_table(o, &t);
    const json_t *findings = json_object_get(a, "findings");
    if (!json_array_size(findings)) {
        outline_para(o, "No findings.");
        return;
    }
    outline_para(o, "Findings, most important first (the analysis's order, docs/analysis.md):");
    export_table_init(&t, 6, "#", "stage", "rule", "evidence", "recommendation",
                      "could save per run");
    t.numeric = 0x21;
    for (size_t i = 0; i < json_array_size(findings); i++) {
        const json_t *f = json_array_get(findings, i);
        double saving = jsonx_num(f, "saving_ns");
        size_t row = export_table_row(&t, 0);
        export_table_set(&t, row, 0, "%zu", i + 1);
        export_table_set(&t, row, 1, "%s", str_or(jsonx_str(f, "stage"), "?"));
        export_table_set(&t, row, 2, "%s", str_or(jsonx_str(f, "rule"), "?"));
        export_table_set(&t, row, 3, "%s", str_or(jsonx_str(f, "evidence"), ""));
        export_table_set(&t, row, 4, "%s", str_or(jsonx_str(f, "recommendation"), ""));
        export_table_set(&t, row, 5, "%s", saving > 0 ? export_fmt_duration(saving, b, sizeof b)
                                                      : "-");
    }
    outline_table(o, &t);
}

static void section_warnings(struct outline *o, const json_t *r)
{
    const json_t *w = json_object_get(r, "warnings");
    struct export_lines l = {0};
    outline_heading(o, o->level, "Warnings");
    if (json_is_string(json_object_get(r, "interrupted_by")))
        sl_add(&l, "interrupted: mlbench was stopped by %s; the result holds the runs made so far.",
               jsonx_str(r, "interrupted_by"));
    for (size_t i = 0; i < json_array_size(w); i++) {
        const json_t *x = json_array_get(w, i);
        sl_add(&l, "%s: %s", str_or(jsonx_str(x, "code"), "?"),
               str_or(jsonx_str(x, "message"), ""));
    }
    if (!l.n)
        outline_para(o, "None: nothing suggests the measurement is off.");
    o_list(o, &l);
}

static void section_runs(struct outline *o, const json_t *r)
{
    const json_t *runs = json_object_get(r, "runs");
    char a[32], b[32], c[32], d[32];
    outline_heading(o, o->level, "Runs");
    struct export_table t;
    export_table_init(&t, 8, "run", "kind", "status", "wall", "user", "system", "max RSS",
                      "exit");
    t.numeric = 0xf9;
    for (size_t i = 0; i < json_array_size(runs); i++) {
        const json_t *x = json_array_get(runs, i);
        size_t row = export_table_row(&t, 0);
        export_table_set(&t, row, 0, "%lld", jsonx_int(x, "index", (long long)i));
        export_table_set(&t, row, 1, "%s", json_is_true(json_object_get(x, "warmup"))
                                               ? "warm-up" : "measured");
        const char *err = jsonx_str(x, "error");
        const char *perr = jsonx_str(x, "prepare_error");
        export_table_set(&t, row, 2, "%s%s%s", str_or(jsonx_str(x, "status"), "?"),
                         err || perr ? ": " : "", err ? err : perr ? perr : "");
        export_table_set(&t, row, 3, "%s", export_fmt_duration(jsonx_num(x, "wall_ns"), a,
                                                               sizeof a));
        export_table_set(&t, row, 4, "%s", export_fmt_duration(jsonx_num(x, "user_ns"), b,
                                                               sizeof b));
        export_table_set(&t, row, 5, "%s", export_fmt_duration(jsonx_num(x, "sys_ns"), c,
                                                               sizeof c));
        export_table_set(&t, row, 6, "%s", export_fmt_bytes(jsonx_num(x, "max_rss_bytes"),
                                                            d, sizeof d));
        if (jsonx_str(x, "signal"))
            export_table_set(&t, row, 7, "%s", jsonx_str(x, "signal"));
        else
            export_table_set(&t, row, 7, "%s", export_fmt_value(json_object_get(x, "exit_code"),
                                                                a, sizeof a));
    }
    outline_table(o, &t);
}

static void section_reproduce(struct outline *o, const json_t *r)
{
    outline_heading(o, o->level, "Reproduce");
    outline_para(o, "From the directory it was measured in, with the same environment:");
    char *cmd = export_reproduce_command(r);
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
    const json_t *first = req->results[0];
    if (req->n == 1) {
        if (!req->sweep)
            outline_heading(&o, 1, "mlbench report: %s", export_result_name(first));
    } else if (req->sweep) {
        outline_comparison_answer(&o);
        outline_comparison(&o);
    } else {
        struct strbuf b = {0};
        strbuf_puts(&b, "");
        for (size_t i = 1; i < req->n; i++) {
            if (i > 1)
                strbuf_puts(&b, ", ");
            strbuf_puts(&b, export_result_name(req->results[i]));
        }
        outline_heading(&o, 1, "mlbench comparison: %s against %s", b.s, export_result_name(first));
        free(b.s);
        outline_comparison_answer(&o);
        outline_comparison(&o);
    }
    for (size_t i = 0; i < req->n; i++) {
        const json_t *r = req->results[i];
        if (req->n > 1)
            outline_heading(&o, 2, "%s: %s", i == 0 ? "Baseline" : "Candidate", export_result_name(r));
        else if (req->sweep)
            outline_heading(&o, 2, "Point: %s", export_result_name(r));
        outline_para(&o, "Result %s%s%s, created %s%s.", str_or(jsonx_str(r, "id"), "?"),
               req->paths && req->paths[i] ? " read from " : "",
               req->paths && req->paths[i] ? req->paths[i] : "",
               str_or(jsonx_str(r, "created"), "?"),
               json_is_string(json_object_get(r, "status")) &&
                       strcmp(jsonx_str(r, "status"), "complete")
                   ? " (interrupted: incomplete)" : "");
        section_summary(&o, r, i);
        outline_load(&o, r, i);
        bool load = json_is_object(json_object_get(r, "load"));
        if (!load)
            section_results(&o, r, i);
        section_latency(&o, r, i);
        outline_ranks(&o, r);
        if (!load || measures_server(r)) {
            section_analysis(&o, r);
            section_resources(&o, r, i);
        }
        section_warnings(&o, r);
        section_workload(&o, r);
        section_methodology(&o, r);
        section_environment(&o, r);
        section_runs(&o, r);
        section_reproduce(&o, r);
    }
}
