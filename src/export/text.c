/* text.c: the terminal summary of a result document (see text.h): what `mlbench run` prints
 * after its runs and `mlbench show` prints of a stored result. Composed in memory, then written
 * through term_clean, so no string of the workload (stage and counter names, metadata,
 * labels, error messages with a stderr tail) can drive the terminal. */
#include "export/text.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "export/export.h"
#include "util/term.h"
#include "util/units.h"

#define STAGE_COLS 22   /* the stage column is at least this wide, as before names widened it */
#define VERDICT_COLS 16 /* the same for verdicts and counters */

/* Prints s then spaces up to cols columns. */
static void pad(FILE *out, const char *s, int cols)
{
    fputs(s, out);
    for (int c = term_cols(s); c < cols; c++)
        putc(' ', out);
}

/* A name for a table: indented by depth, cut to EXPORT_TEXT_NAME_COLS columns. */
static const char *label(char *buf, size_t len, int depth, const char *name)
{
    char fitted[4 * EXPORT_TEXT_NAME_COLS + 8];
    term_fit(name, EXPORT_TEXT_NAME_COLS, fitted, sizeof fitted);
    snprintf(buf, len, "%*s%s", 2 * depth, "", fitted);
    return buf;
}

/* Prints s on one line, newlines and tabs as '?'. */
static void one_line(FILE *out, const char *s)
{
    for (; *s; s++)
        putc(*s == '\n' || *s == '\t' || *s == '\r' ? '?' : *s, out);
}

/* Prints s; each line after the first starts with indent (a message with a stderr tail). */
static void lines(FILE *out, const char *s, const char *indent)
{
    size_t n = strlen(s);
    while (n && s[n - 1] == '\n')
        n--;
    for (size_t i = 0; i < n; i++) {
        putc(s[i], out);
        if (s[i] == '\n')
            fputs(indent, out);
    }
}

/* ---- reading the document --------------------------------------------------------------- */

static const char *str(const json_t *o, const char *key, const char *fallback)
{
    const char *s = jsonx_str(o, key);
    return s ? s : fallback;
}



/* The widest label of the stages (indent included), at least min columns. */
static int stage_cols(const json_t *stages, int min)
{
    int cols = min;
    char buf[256];
    for (size_t i = 0; i < json_array_size(stages); i++) {
        const json_t *st = json_array_get(stages, i);
        int c = term_cols(label(buf, sizeof buf, export_stage_depth(st), str(st, "name", "?")));
        if (c > cols)
            cols = c;
    }
    return cols;
}

/* The widest of the names under key in the objects of a, at least min, at most the cap. */
static int name_cols(const json_t *a, const char *key, int min)
{
    int cols = min;
    for (size_t i = 0; i < json_array_size(a); i++) {
        int c = term_cols(str(json_array_get(a, i), key, "?"));
        if (c > cols)
            cols = c < EXPORT_TEXT_NAME_COLS ? c : EXPORT_TEXT_NAME_COLS;
    }
    return cols;
}

/* ---- sections ------------------------------------------------------------------------- */

/* The command, then which result this is: id, when and where it was made, by which mlbench. */
static void header(FILE *out, const json_t *r)
{
    const json_t *cmd = json_object_get(r, "command");
    const json_t *argv = json_object_get(cmd, "argv");
    const json_t *timings = json_object_get(json_object_get(r, "config"), "timings");
    if (json_is_object(timings)) { /* mlbench record: what was timed, in what */
        fputs("\nmlbench record: ", out);
        one_line(out, str(timings, "name", "?"));
        fputs(" per call, timed in:", out);
    } else {
        fputs("\nmlbench run:", out);
    }
    for (size_t i = 0; i < json_array_size(argv); i++) {
        const char *word = json_string_value(json_array_get(argv, i));
        putc(' ', out);
        one_line(out, word ? word : "?");
    }
    if (jsonx_str(r, "label")) {
        fputs("   [", out);
        one_line(out, jsonx_str(r, "label"));
        putc(']', out);
    }
    if (json_is_true(json_object_get(cmd, "shell")))
        fputs("   (through /bin/sh -c)", out);
    putc('\n', out);

    const json_t *env = json_object_get(r, "environment");
    const json_t *mlb = json_object_get(r, "mlbench");
    fputs("result ", out);
    one_line(out, str(r, "id", "?"));
    fputs("   created ", out);
    one_line(out, str(r, "created", "?"));
    if (jsonx_str(mlb, "version")) {
        fputs("   mlbench ", out);
        one_line(out, jsonx_str(mlb, "version"));
        fputs(" (", out);
        one_line(out, str(mlb, "git_commit", "?"));
        putc(')', out);
    }
    putc('\n', out);
    if (jsonx_str(env, "hostname")) {
        fputs("host   ", out);
        one_line(out, jsonx_str(env, "hostname"));
        const char *parts[2] = {jsonx_str(env, "kernel"), jsonx_str(env, "machine")};
        double cpus = jsonx_num(env, "cpus_online");
        const char *sep = " (";
        for (size_t i = 0; i < 2; i++)
            if (parts[i]) {
                fputs(sep, out);
                one_line(out, parts[i]);
                sep = ", ";
            }
        if (isfinite(cpus)) {
            fprintf(out, "%s%.0f CPUs", sep, cpus);
            sep = ", ";
        }
        if (strcmp(sep, " (") != 0)
            putc(')', out);
        putc('\n', out);
    }
}

/* How many runs were measured, and each one that did not succeed with why. */
static void runs_text(FILE *out, const json_t *r)
{
    const json_t *s = json_object_get(r, "summary");
    const json_t *runs = json_object_get(r, "runs");
    long long warmups = 0, measured = jsonx_int(s, "runs_measured", 0);
    for (size_t i = 0; i < json_array_size(runs); i++)
        warmups += json_is_true(json_object_get(json_array_get(runs, i), "warmup"));
    fprintf(out, "%lld run%s measured", measured, measured == 1 ? "" : "s");
    if (warmups)
        fprintf(out, " (+%lld warm-up)", warmups);
    fprintf(out, ", %lld ok", jsonx_int(s, "runs_ok", 0));
    if (!strcmp(str(r, "status", ""), "interrupted")) {
        fputs(", interrupted", out);
        if (jsonx_str(r, "interrupted_by"))
            fprintf(out, " by %s", jsonx_str(r, "interrupted_by"));
    }
    putc('\n', out);
    for (size_t i = 0; i < json_array_size(runs); i++) {
        const json_t *run = json_array_get(runs, i);
        const char *st = jsonx_str(run, "status");
        if (!st || !strcmp(st, "ok"))
            continue;
        char w[32];
        fprintf(out, "  run %zu%s: %s", i + 1,
                json_is_true(json_object_get(run, "warmup")) ? " (warm-up)" : "", st);
        if (!jsonx_str(run, "prepare_error")) /* else the command did not run */
            fprintf(out, " after %s",
                    export_fmt_duration(jsonx_num(run, "wall_ns"), w, sizeof w));
        const char *why = jsonx_str(run, "error");
        if (!why)
            why = jsonx_str(run, "prepare_error");
        if (why) {
            fputs(": ", out);
            lines(out, why, "      ");
        } else if (jsonx_str(run, "signal")) {
            fprintf(out, " (%s)", jsonx_str(run, "signal"));
        } else if (isfinite(jsonx_num(run, "exit_code"))) {
            fprintf(out, " (exit status %.0f)", jsonx_num(run, "exit_code"));
        }
        putc('\n', out);
    }
    if (json_is_true(json_object_get(s, "used_failed_runs")) &&
        json_is_object(json_object_get(s, "wall_ns")))
        fputs("no run succeeded: the figures below describe failed runs\n", out);
}

/* One row of the stage table: median, interval of the median, share, range, CV. */
static void stage_row(FILE *out, int cols, const char *name, int depth, const json_t *t,
                      double share)
{
    char lab[256], med[32], lo[32], hi[32], ci[96], mn[32], mx[32], range[72], cv[16], sh[16];
    long long n = jsonx_int(t, "n", 0);
    double level = jsonx_num(t, "ci_level");
    if (n >= 2) {
        export_fmt_duration(jsonx_num(t, "ci_low"), lo, sizeof lo);
        export_fmt_duration(jsonx_num(t, "ci_high"), hi, sizeof hi);
        if (isfinite(level) && level < 0.95 - 1e-9)
            snprintf(ci, sizeof ci, "%s .. %s (%.0f%%)", lo, hi, 100 * level);
        else
            snprintf(ci, sizeof ci, "%s .. %s", lo, hi);
    } else {
        snprintf(ci, sizeof ci, "-");
    }
    snprintf(range, sizeof range, "%s .. %s",
             export_fmt_duration(jsonx_num(t, "min"), mn, sizeof mn),
             export_fmt_duration(jsonx_num(t, "max"), mx, sizeof mx));
    export_fmt_num(n >= 2 ? jsonx_num(t, "cv") : NAN, "%.1f%%", 100, cv, sizeof cv);
    export_fmt_num(share, "%.1f%%", 100, sh, sizeof sh);
    pad(out, label(lab, sizeof lab, depth, name), cols);
    fprintf(out, " %10s  %-30s %7s  %-24s %6s\n",
            export_fmt_duration(jsonx_num(t, "median"), med, sizeof med), ci, sh, range, cv);
}

/* Top-level stages open at least 5 % of their time beside another stage on another thread:
 * their shares then add up to more than the run, and removing one would not save all of it. */
static void overlap_line(FILE *out, const json_t *stages)
{
    int listed = 0;
    for (size_t i = 0; i < json_array_size(stages); i++) {
        const json_t *st = json_array_get(stages, i);
        double active = jsonx_num(json_object_get(st, "active_ns"), "median");
        double part = active > 0 ? jsonx_num(st, "overlap_ns_median") / active : 0;
        if (export_stage_depth(st) != 0 || !(part >= 0.05))
            continue;
        fputs(listed++ ? ", " : "stages overlap (time beside other stages, on other threads): ",
              out);
        one_line(out, str(st, "name", "?"));
        fprintf(out, " %.0f %%", 100 * part);
    }
    if (listed)
        putc('\n', out);
}

static void counters_text(FILE *out, const json_t *counters)
{
    int cols = name_cols(counters, "name", VERDICT_COLS);
    for (size_t i = 0; i < json_array_size(counters); i++) {
        const json_t *k = json_array_get(counters, i);
        double last = jsonx_num(json_object_get(k, "last"), "median");
        double sum = jsonx_num(k, "sum_median");
        char name[4 * EXPORT_TEXT_NAME_COLS + 8];
        fprintf(out, "%-8s ", i ? "" : "counters");
        pad(out, term_fit(str(k, "name", "?"), cols, name, sizeof name), cols);
        fprintf(out, " last %.6g", last);
        /* Sums and rates only mean something for counts (images), not for a loss. */
        if (json_is_true(json_object_get(k, "count")) && isfinite(sum) &&
            fabs(sum - last) > 1e-12 * fabs(sum)) {
            char rate[4 * EXPORT_TEXT_NAME_COLS + 96];
            fprintf(out, "   sum %.6g   %s", sum, export_fmt_counter_rate(k, rate, sizeof rate));
        }
        putc('\n', out);
    }
}

static void metadata_text(FILE *out, const json_t *meta)
{
    if (!json_array_size(meta))
        return;
    fputs("metadata", out);
    for (size_t i = 0; i < json_array_size(meta); i++) {
        const json_t *m = json_array_get(meta, i);
        const char *v = str(m, "value", "");
        const char *q = strpbrk(v, " \t") ? "\"" : "";
        putc(' ', out);
        one_line(out, str(m, "key", "?"));
        fprintf(out, "=%s", q);
        one_line(out, v);
        fprintf(out, "%s%s", q, json_is_true(json_object_get(m, "varies"))
                                    ? " (varies between runs)" : "");
    }
    putc('\n', out);
}

/* Latency per span of the stages that repeat (at least EXPORT_LATENCY_MIN_SPANS spans):
 * count and nearest-rank percentiles over the spans of every ok run (summary.stages[].spans). */
static void latency_text(FILE *out, const json_t *stages, int cols)
{
    struct export_table t;
    export_latency_table(&t, stages);
    if (t.nrows) {
        putc('\n', out);
        pad(out, "latency per span", cols);
        fprintf(out, " %9s %10s %10s %10s %10s %10s\n", "count", "p50", "p90", "p99", "p99.9",
                "max");
    }
    for (size_t r = 0; r < t.nrows; r++) {
        char lab[256];
        pad(out, label(lab, sizeof lab, t.indent[r], export_table_cell(&t, r, 0)), cols);
        fprintf(out, " %9s", export_table_cell(&t, r, 1));
        for (size_t c = 2; c < t.ncols; c++)
            fprintf(out, " %10s", export_table_cell(&t, r, c));
        putc('\n', out);
    }
    if (t.nrows)
        fputs("percentiles by nearest rank over the spans of all ok runs (docs/statistics.md)\n",
              out);
    export_table_free(&t);
}

/* A multi-rank job's stages across its ranks (summary.ranks), when there is more than one, and
 * the host of each rank when their rank-execs named them. */
static void ranks_text(FILE *out, const json_t *ranks, int cols)
{
    struct export_table t;
    export_ranks_table(&t, ranks);
    if (t.nrows) {
        char head[64];
        snprintf(head, sizeof head, "across %zu ranks",
                 json_array_size(json_object_get(ranks, "ranks")));
        putc('\n', out);
        pad(out, head, cols);
        fprintf(out, " %10s %10s %10s %7s  %s\n", "slowest", "median", "fastest", "skew",
                "slowest rank");
    }
    for (size_t r = 0; r < t.nrows; r++) {
        char lab[256];
        pad(out, label(lab, sizeof lab, 0, export_table_cell(&t, r, 0)), cols);
        fprintf(out, " %10s %10s %10s %7s  %s\n", export_table_cell(&t, r, 1),
                export_table_cell(&t, r, 2), export_table_cell(&t, r, 3),
                export_table_cell(&t, r, 4), export_table_cell(&t, r, 5));
    }
    bool any = t.nrows > 0;
    export_table_free(&t);
    if (!any)
        return;
    fputs("per run: the slowest rank's time in the stage (what the job waits for), the median "
          "and fastest rank's; medians over the runs (docs/ranks.md)\n", out);
    const json_t *hosts = json_object_get(ranks, "hosts"), *list;
    const char *host;
    if (!json_object_size(hosts))
        return;
    fputs("hosts:", out);
    size_t h = 0;
    json_object_foreach((json_t *)hosts, host, list) {
        fprintf(out, "%s %s (rank%s", h++ ? ";" : "", host, json_array_size(list) > 1 ? "s" : "");
        for (size_t i = 0; i < json_array_size(list) && i < 8; i++)
            fprintf(out, " %lld", (long long)json_integer_value(json_array_get(list, i)));
        fputs(json_array_size(list) > 8 ? " ...)" : ")", out);
    }
    putc('\n', out);
}

/* The other hosts of a multi-rank job, from the samples their rank-exec took there (see
 * export_hosts_table). */
static void hosts_text(FILE *out, const json_t *r)
{
    struct export_table t;
    export_hosts_table(&t, r);
    if (t.nrows)
        fputs("\nother hosts (sampled there by a rank's mlbench rank-exec: the processes of its "
              "launcher and the host; means over the runs, docs/ranks.md)\n", out);
    for (size_t k = 0; k < t.nrows; k++)
        fprintf(out, "  %s (ranks %s): its ranks %s cores busy, the host %s cores, peak RSS %s\n",
                export_table_cell(&t, k, 0), export_table_cell(&t, k, 1),
                export_table_cell(&t, k, 2), export_table_cell(&t, k, 3),
                export_table_cell(&t, k, 4));
    export_table_free(&t);
}

/* The stage table, CPU and memory, overlap, counters and metadata; false when no run
 * completed (nothing to summarise). */
static bool stages_text(FILE *out, const json_t *s, int cols)
{
    const json_t *wall = json_object_get(s, "wall_ns");
    const json_t *stages = json_object_get(s, "stages");
    if (!json_is_object(wall)) {
        fputs("no run completed: nothing to summarise\n", out);
        return false;
    }
    char a[32], b[32];
    putc('\n', out);
    pad(out, "stage", cols);
    fprintf(out, " %10s  %-30s %7s  %-24s %6s\n", "median", "95% CI of median", "share",
            "min .. max", "CV");
    for (size_t i = 0; i < json_array_size(stages); i++) {
        const json_t *st = json_array_get(stages, i);
        stage_row(out, cols, str(st, "name", "?"), export_stage_depth(st),
                  json_object_get(st, "active_ns"), jsonx_num(st, "share"));
    }
    double outside = jsonx_num(s, "outside_ns"), wall_median = jsonx_num(wall, "median");
    if (json_array_size(stages) && isfinite(outside) && wall_median > 0 &&
        outside / wall_median >= 0.01) {
        pad(out, "(outside stages)", cols);
        fprintf(out, " %10s  %-30s %6.1f%%\n", export_fmt_duration(outside, a, sizeof a), "",
                100 * outside / wall_median);
    }
    stage_row(out, cols, "total", 0, wall, 1.0);
    latency_text(out, stages, cols);
    ranks_text(out, json_object_get(s, "ranks"), cols);

    putc('\n', out);
    double cores = jsonx_num(s, "cpu_cores");
    if (isfinite(cores))
        fprintf(out, "cpu %.2f cores busy ", cores);
    fprintf(out, "(user %s, sys %s)",
            export_fmt_duration(jsonx_num(json_object_get(s, "user_ns"), "median"), a,
                                sizeof a),
            export_fmt_duration(jsonx_num(json_object_get(s, "sys_ns"), "median"), b,
                                sizeof b));
    double rss = jsonx_num(json_object_get(s, "max_rss_bytes"), "median");
    if (isfinite(rss))
        fprintf(out, "   max RSS %s", export_fmt_bytes(rss, a, sizeof a));
    putc('\n', out);
    if (json_array_size(stages))
        fputs("stage time is wall time with the stage open on any thread (docs/markers.md)\n", out);
    overlap_line(out, stages);
    counters_text(out, json_object_get(s, "counters"));
    metadata_text(out, json_object_get(s, "metadata"));
    return true;
}

/* sm: the SM-active column is shown (GPM measured it in the run) */
static void resource_row(FILE *out, int cols, const char *name, int depth,
                         const json_t *resources, const json_t *gpus, bool sm, bool stage)
{
    struct export_stage_figures f;
    char lab[256], c[9][32];
    export_stage_figures(resources, gpus, &f);
    pad(out, label(lab, sizeof lab, depth, name), cols);
    fprintf(out, " %8s %10s %9s %9s %7s", export_fmt_num(f.cpu_cores, "%.2f", 1, c[0], 32),
            export_fmt_bytes(f.rss_peak_bytes, c[1], 32),
            export_fmt_num(f.read_bps, "%.1f", 1e-6, c[2], 32),
            export_fmt_num(f.write_bps, "%.1f", 1e-6, c[3], 32),
            export_fmt_num(f.iowait, "%.0f%%", 100, c[4], 32));
    if (json_array_size(gpus) && sm)
        fprintf(out, " %6s", export_fmt_num(f.gpu_sm_active, "%.0f%%", 100, c[8], 32));
    if (json_array_size(gpus))
        fprintf(out, " %8s %10s %7s", export_fmt_num(f.gpu_util, "%.0f%%", 100, c[5], 32),
                export_fmt_bytes(f.gpu_mem_peak_bytes, c[6], 32),
                export_fmt_num(f.gpu_power_watts, "%.0f", 1, c[7], 32));
    if (stage && f.samples == 0)
        fputs("  (shorter than the sampling interval)", out);
    putc('\n', out);
}

/* The GPU clock over the runs (summary.gpu_clock), one line when it was measured: "GPU clock
 * 97 % of max (lowest run 91 %); 2 of 10 runs throttled (power), left out". */
static void gpu_clock_text(FILE *out, const json_t *s)
{
    const json_t *gc = json_object_get(s, "gpu_clock");
    if (!json_is_object(gc))
        return;
    double median = jsonx_num(gc, "scaling_median"), low = jsonx_num(gc, "scaling_min");
    long long runs = jsonx_int(gc, "runs", 0), throttled = jsonx_int(gc, "throttled_runs", 0);
    long long discarded = jsonx_int(gc, "discarded_runs", 0);
    fputs("GPU clock   ", out);
    if (isfinite(median)) {
        fprintf(out, "%.0f %% of max", 100 * median);
        if (isfinite(low) && lround(100 * low) < lround(100 * median))
            fprintf(out, " (lowest run %.0f %%)", 100 * low);
    } else {
        fputs("maximum not known", out);
    }
    if (!throttled) {
        fputs("; no run throttled\n", out);
        return;
    }
    fprintf(out, "; %lld of %lld run%s throttled (", throttled, runs, runs == 1 ? "" : "s");
    const json_t *reasons = json_object_get(gc, "reasons");
    for (size_t i = 0; i < json_array_size(reasons); i++) {
        const char *why = json_string_value(json_array_get(reasons, i));
        fputs(i ? ", " : "", out);
        one_line(out, why ? why : "?");
    }
    if (!json_array_size(reasons))
        fprintf(out, "clock below %.0f %%", 100 * jsonx_num(gc, "threshold"));
    putc(')', out);
    if (discarded == throttled)
        fputs(", left out", out);
    else if (discarded > 0)
        fprintf(out, ", %lld left out", discarded);
    putc('\n', out);
}

/* What each stage used of the machine (means over its samples; GPUs the workload used). */
static void resources_text(FILE *out, const json_t *r, int cols)
{
    const json_t *s = json_object_get(r, "summary");
    const json_t *stages = json_object_get(s, "stages");
    const json_t *gpus = json_object_get(json_object_get(r, "analysis"), "gpus");
    double cpus = jsonx_num(json_object_get(r, "environment"), "cpus_online");
    char cores[32] = "cores";
    if (isfinite(cpus))
        snprintf(cores, sizeof cores, "cores/%.0f", cpus);
    putc('\n', out);
    pad(out, "resources (mean)", cols);
    fprintf(out, " %8s %10s %9s %9s %7s", cores, "peak mem", "read MB/s", "write MB/s", "iowait");
    /* GPM's SM active beside utilisation: how much of the GPU the kernels used */
    struct export_stage_figures total;
    export_stage_figures(json_object_get(s, "resources"), gpus, &total);
    bool sm = isfinite(total.gpu_sm_active);
    if (json_array_size(gpus) && sm)
        fprintf(out, " %6s", "SM act");
    if (json_array_size(gpus))
        fprintf(out, " %8s %10s %7s", "GPU util", "GPU mem", "GPU W");
    putc('\n', out);
    for (size_t i = 0; i < json_array_size(stages); i++) {
        const json_t *st = json_array_get(stages, i);
        resource_row(out, cols, str(st, "name", "?"), export_stage_depth(st),
                     json_object_get(st, "resources"), gpus, sm, true);
    }
    resource_row(out, cols, "total", 0, json_object_get(s, "resources"), gpus, sm, false);
    gpu_clock_text(out, s);
}

static void analysis_text(FILE *out, const json_t *r)
{
    const json_t *a = json_object_get(r, "analysis");
    const json_t *verdicts = json_object_get(a, "verdicts");
    const json_t *findings = json_object_get(a, "findings");
    int cols = name_cols(verdicts, "stage", VERDICT_COLS);
    char name[4 * EXPORT_TEXT_NAME_COLS + 8], sh[16], t[32];
    fputs("\nverdicts", out);
    if (jsonx_str(a, "bottleneck"))
        fprintf(out, " (bottleneck: %s)", term_fit(jsonx_str(a, "bottleneck"),
                                                          EXPORT_TEXT_NAME_COLS, name,
                                                          sizeof name));
    fputs(":\n", out);
    for (size_t i = 0; i < json_array_size(verdicts); i++) {
        const json_t *v = json_array_get(verdicts, i);
        const char *stage = str(v, "stage", "?");
        fputs("  ", out);
        pad(out, term_fit(stage, cols, name, sizeof name), cols);
        fprintf(out, " %6s  %s: ",
                export_fmt_num(export_stage_share(r, stage), "%.1f%%", 100, sh, sizeof sh),
                str(v, "rule", "?"));
        lines(out, str(v, "evidence", ""), "    ");
        putc('\n', out);
    }
    if (json_array_size(findings))
        fputs("findings, most important first (saving, then stage share):\n", out);
    for (size_t i = 0; i < json_array_size(findings); i++) {
        const json_t *f = json_array_get(findings, i);
        double saving = jsonx_num(f, "saving_ns");
        fprintf(out, "  %zu. %s [%s]: ", i + 1,
                term_fit(str(f, "stage", "?"), EXPORT_TEXT_NAME_COLS, name, sizeof name),
                str(f, "rule", "?"));
        lines(out, str(f, "evidence", ""), "     ");
        fputs("\n     -> ", out);
        lines(out, str(f, "recommendation", ""), "     ");
        if (saving > 0)
            fprintf(out, " (could save about %s a run)", units_duration(saving, t, sizeof t));
        putc('\n', out);
    }
}

/* A sum of money: enough digits for a fraction of a cent. */
static const char *money(double v, char *buf, size_t len)
{
    if (isfinite(v))
        snprintf(buf, len, "%.4g", v);
    else
        snprintf(buf, len, "?");
    return buf;
}

/* The cost of a priced result: one line for a run, one for its units of work and targets. */
static void cost_text(FILE *out, const json_t *r)
{
    const json_t *c = json_object_get(r, "cost");
    const json_t *run = json_object_get(c, "run");
    if (!json_is_object(c))
        return;
    const char *cur = str(c, "currency", "?");
    char a[32], b[32], d[32], p[32];
    fprintf(out, "\ncost   %s %s a run (%s .. %s) at %s %s/h", cur,
            money(jsonx_num(run, "median"), a, sizeof a),
            money(jsonx_num(run, "ci_low"), b, sizeof b),
            money(jsonx_num(run, "ci_high"), d, sizeof d),
            money(jsonx_num(c, "price_per_hour"), p, sizeof p), cur);
    const json_t *file = json_object_get(c, "price_file");
    if (json_is_object(file)) {
        fputs(" (", out);
        one_line(out, str(file, "path", "?"));
        fputs(": ", out);
        one_line(out, str(file, "entry", "?"));
        putc(')', out);
    }
    putc('\n', out);
    const json_t *units = json_object_get(c, "per_unit"), *targets = json_object_get(c, "to_target");
    size_t shown = 0;
    for (size_t i = 0; i < json_array_size(units) && i < 8; i++) {
        const json_t *u = json_array_get(units, i);
        fputs(shown++ ? ", " : "       ", out);
        fprintf(out, "%s ", money(jsonx_num(u, "median"), a, sizeof a));
        one_line(out, str(u, "description", "?"));
    }
    for (size_t i = 0; i < json_array_size(targets) && i < 8; i++) {
        const json_t *t = json_array_get(targets, i);
        fputs(shown++ ? ", " : "       ", out);
        fprintf(out, "%s %s to target (", money(jsonx_num(t, "median"), a, sizeof a), cur);
        one_line(out, str(t, "counter", "?"));
        putc(')', out);
    }
    if (shown)
        putc('\n', out);
}

/* Sources that could not measure, and the warnings about the measurement. */
static void notes_text(FILE *out, const json_t *r)
{
    const json_t *missing = json_object_get(json_object_get(r, "sampling"), "not_measured");
    for (size_t i = 0; i < json_array_size(missing); i++) {
        const char *m = json_string_value(json_array_get(missing, i));
        fputs(i ? "             " : "not measured: ", out);
        lines(out, m ? m : "?", "              ");
        putc('\n', out);
    }
    const json_t *warnings = json_object_get(r, "warnings");
    if (json_array_size(warnings)) {
        fputc('\n', out);
        term_paint(out, TERM_TONE_WARN, "warnings:");
        fputc('\n', out);
    }
    for (size_t i = 0; i < json_array_size(warnings); i++) {
        fputs("  ", out);
        term_paint(out, TERM_TONE_WARN, "!");
        fputc(' ', out);
        lines(out, str(json_array_get(warnings, i), "message", "?"), "    ");
        putc('\n', out);
    }
}

static void summary_text(FILE *out, const json_t *r, const char *result_path)
{
    const json_t *s = json_object_get(r, "summary");
    /* One width for the stage names of both tables, so their rows line up. */
    int cols = stage_cols(json_object_get(s, "stages"), STAGE_COLS);
    header(out, r);
    runs_text(out, r);
    bool staged = stages_text(out, s, cols);
    if (staged)
        hosts_text(out, r);
    cost_text(out, r);
    if (staged && json_is_object(json_object_get(r, "analysis"))) {
        resources_text(out, r, cols);
        analysis_text(out, r);
    }
    notes_text(out, r);
    if (result_path) {
        fputs("\nresult: ", out);
        one_line(out, result_path);
        putc('\n', out);
    }
}

int export_text_compose(FILE *out, void (*compose)(FILE *, const json_t *, const char *),
                        const json_t *doc, const char *path)
{
    struct term_canvas canvas;
    if (term_canvas_open(&canvas, out) < 0)
        return -1;
    compose(canvas.f, doc, path);
    int rc = term_canvas_close(&canvas);
    return rc == 0 && fflush(out) == 0 && !ferror(out) ? 0 : -1;
}

int export_text_print(FILE *out, const json_t *doc, const char *result_path)
{
    return export_text_compose(out, summary_text, doc, result_path);
}

void export_text_print_json(FILE *out, json_t *doc, const char *result_path)
{
    const json_t *cost = json_object_get(doc, "cost");
    json_t *j = json_pack("{s:O, s:o, s:O, s:O, s:O, s:O}", "id", json_object_get(doc, "id"),
                          "result_file", result_path ? json_string(result_path) : json_null(),
                          "status", json_object_get(doc, "status"),
                          "summary", json_object_get(doc, "summary"),
                          "warnings", json_object_get(doc, "warnings"),
                          "cost", cost ? cost : json_null());
    if (j)
        json_dumpf(j, out, JSON_INDENT(2) | JSON_ENSURE_ASCII);
    fputc('\n', out);
    json_decref(j);
}
