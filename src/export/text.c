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

#include "doc/result.h"
#include "export/export.h"
#include "export/text_analysis.h"
#include "util/strbuf.h"
#include "util/term.h"
#include "util/units.h"
#include "util/xalloc.h"

#define STAGE_COLS 22   /* the stage column is at least this wide, as before names widened it */

/* Prints s on one line, newlines and tabs as '?'. */
static void one_line(FILE *out, const char *s)
{
    for (; *s; s++)
        putc(*s == '\n' || *s == '\t' || *s == '\r' ? '?' : *s, out);
}

void text_lines(FILE *out, const char *s, const char *indent)
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

char *text_indented(const char *s, const char *indent)
{
    struct strbuf b = STRBUF_INIT;
    size_t n = strlen(s);
    while (n && s[n - 1] == '\n')
        n--;
    for (size_t i = 0; i < n; i++) {
        strbuf_putc(&b, s[i]);
        if (s[i] == '\n')
            strbuf_puts(&b, indent);
    }
    return strbuf_take(&b);
}

static const char *or(const char *s, const char *fallback)
{
    return s ? s : fallback;
}

/* The widest stage name of the summary (indent included, cut at EXPORT_TEXT_NAME_COLS), at
 * least min columns: the stage tables share it, so that their rows line up. */
static int stage_cols(const struct doc_summary *s, int min)
{
    int cols = min;
    for (size_t i = 0; i < s->n_stages; i++) {
        char fitted[4 * EXPORT_TEXT_NAME_COLS + 8];
        int depth = s->stages[i].depth;
        int c = 2 * (depth < EXPORT_MAX_DEPTH ? depth : EXPORT_MAX_DEPTH) +
                term_cols(term_fit(or(s->stages[i].name, "?"), EXPORT_TEXT_NAME_COLS, fitted,
                                   sizeof fitted));
        if (c > cols)
            cols = c;
    }
    return cols;
}

/* A stage table's first column: the names, cols wide, cut at EXPORT_TEXT_NAME_COLS. */
#define NAME_COLUMN(cols) {.width = (cols), .cap = EXPORT_TEXT_NAME_COLS}

/* ---- sections ------------------------------------------------------------------------- */

/* The command, then which result this is: id, when and where it was made; verbose: by which
 * mlbench and the host's kernel and architecture too, on lines of their own (else the host's
 * name and CPUs on the result's line). */
static void header(FILE *out, const struct doc_result *r, bool verbose)
{
    const json_t *timings = r->config.timings;
    if (timings) { /* mlbench record: what was timed, in what */
        fputs("\nmlbench record: ", out);
        one_line(out, or(r->config.timings_name, "?"));
        fputs(" per call, timed in:", out);
    } else {
        fputs("\nmlbench run:", out);
    }
    for (size_t i = 0; i < r->n_argv; i++) {
        putc(' ', out);
        one_line(out, or(r->argv[i], "?"));
    }
    if (r->label) {
        fputs("   [", out);
        one_line(out, r->label);
        putc(']', out);
    }
    if (r->shell)
        fputs("   (through /bin/sh -c)", out);
    putc('\n', out);

    fputs("result ", out);
    one_line(out, or(r->id, "?"));
    fputs("   created ", out);
    one_line(out, or(r->created, "?"));
    if (!verbose) {
        if (r->hostname) {
            fputs("   host ", out);
            one_line(out, r->hostname);
            if (isfinite(r->cpus_online))
                fprintf(out, " (%.0f CPUs)", r->cpus_online);
        }
        putc('\n', out);
        return;
    }
    if (r->mlbench_version) {
        fputs("   mlbench ", out);
        one_line(out, r->mlbench_version);
        fputs(" (", out);
        one_line(out, or(r->mlbench_commit, "?"));
        putc(')', out);
    }
    putc('\n', out);
    if (r->hostname) {
        fputs("host   ", out);
        one_line(out, r->hostname);
        const char *parts[2] = {r->kernel, r->machine};
        double cpus = r->cpus_online;
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
static void runs_text(FILE *out, const struct doc_result *r)
{
    long long warmups = 0, measured = r->summary.runs_measured;
    for (size_t i = 0; i < r->n_runs; i++)
        warmups += r->runs[i].warmup;
    fprintf(out, "%lld run%s measured", measured, measured == 1 ? "" : "s");
    if (warmups)
        fprintf(out, " (+%lld warm-up)", warmups);
    fprintf(out, ", %lld ok", r->summary.runs_ok);
    if (r->status && !strcmp(r->status, "interrupted")) {
        fputs(", interrupted", out);
        if (r->interrupted_by)
            fprintf(out, " by %s", r->interrupted_by);
    }
    putc('\n', out);
    for (size_t i = 0; i < r->n_runs; i++) {
        const struct doc_run *run = &r->runs[i];
        if (!run->status || run->ok)
            continue;
        char w[32];
        fprintf(out, "  run %zu%s: %s", i + 1, run->warmup ? " (warm-up)" : "", run->status);
        if (!run->prepare_error) /* else the command did not run */
            fprintf(out, " after %s", export_fmt_duration(run->wall_ns, w, sizeof w));
        const char *why = run->error ? run->error : run->prepare_error;
        if (why) {
            fputs(": ", out);
            text_lines(out, why, "      ");
        } else if (run->signal) {
            fprintf(out, " (%s)", run->signal);
        } else if (isfinite(run->exit_code)) {
            fprintf(out, " (exit status %.0f)", run->exit_code);
        }
        putc('\n', out);
    }
    if (r->summary.used_failed_runs && r->summary.wall.present)
        fputs("no run succeeded: the figures below describe failed runs\n", out);
}

/* One row of the stage table: median, interval of the median, share, range, CV. level: the
 * coverage the header names for every row (then the rows do not repeat it), or NAN when the
 * rows differ (then each row names its own). */
static void stage_row(struct export_table *t, const char *name, int depth,
                      const struct doc_stats *s, double share, double level)
{
    char med[32], lo[32], hi[32], mn[32], mx[32], cv[16], sh[16];
    size_t row = export_table_row(t, depth);
    export_table_set(t, row, 0, "%s", name);
    export_table_set(t, row, 1, "%s", export_fmt_duration(s->median, med, sizeof med));
    if (s->n >= 2) {
        export_fmt_duration(s->ci_low, lo, sizeof lo);
        export_fmt_duration(s->ci_high, hi, sizeof hi);
        if (isfinite(s->ci_level) && !(fabs(s->ci_level - level) < 1e-9))
            export_table_set(t, row, 2, "%s .. %s (%.0f%%)", lo, hi, 100 * s->ci_level);
        else
            export_table_set(t, row, 2, "%s .. %s", lo, hi);
    } else {
        export_table_set(t, row, 2, "-");
    }
    export_table_set(t, row, 3, "%s", export_fmt_num(share, "%.1f%%", 100, sh, sizeof sh));
    export_table_set(t, row, 4, "%s .. %s", export_fmt_duration(s->min, mn, sizeof mn),
                     export_fmt_duration(s->max, mx, sizeof mx));
    export_table_set(t, row, 5, "%s",
                     export_fmt_num(s->n >= 2 ? s->cv : NAN, "%.1f%%", 100, cv, sizeof cv));
}

/* The coverage every interval of the table has (issue 35: a column headed "95% CI of median"
 * held 75 % intervals), or NAN when they differ or none has one. */
static double common_level(const struct doc_summary *s)
{
    double level = NAN;
    for (size_t i = 0; i <= s->n_stages; i++) {
        const struct doc_stats *st = i < s->n_stages ? &s->stages[i].active : &s->wall;
        if (st->n < 2 || !isfinite(st->ci_level))
            continue;
        if (isnan(level))
            level = st->ci_level;
        else if (fabs(level - st->ci_level) >= 1e-9)
            return NAN;
    }
    return level;
}

static void stage_table(FILE *out, const struct doc_summary *s, int cols)
{
    struct export_table t;
    double level = common_level(s);
    char head[32] = "CI of median";
    if (isfinite(level))
        snprintf(head, sizeof head, "%.0f%% CI of median", 100 * level);
    export_table_init(&t, 6, "stage", "median", head, "share", "min .. max", "CV");
    t.numeric = 0x2a;
    for (size_t i = 0; i < s->n_stages; i++)
        stage_row(&t, or(s->stages[i].name, "?"), s->stages[i].depth, &s->stages[i].active,
                  s->stages[i].share, level);
    double outside = s->outside_ns, wall_median = s->wall.median;
    if (s->n_stages && isfinite(outside) && wall_median > 0 && outside / wall_median >= 0.01) {
        char a[32];
        size_t row = export_table_row(&t, 0);
        export_table_set(&t, row, 0, "(outside stages)");
        export_table_set(&t, row, 1, "%s", export_fmt_duration(outside, a, sizeof a));
        export_table_set(&t, row, 3, "%6.1f%%", 100 * outside / wall_median);
    }
    stage_row(&t, "total", 0, &s->wall, 1.0, level);
    const struct export_text_column col[6] = {
        NAME_COLUMN(cols), {.width = 10, .sep = " "}, {.width = 30}, {.width = 7, .sep = " "},
        {.width = 24}, {.width = 6, .sep = " "}};
    putc('\n', out);
    export_table_print(out, &t, &(struct export_text_layout){.col = col, .header = true,
                                                             .trim = true});
    export_table_free(&t);
}

/* issue 35: a third of the run "(outside stages)" (a script's interpreter importing torch) was
 * never explained: the time before the first stage is named for what it is. */
static void startup_line(FILE *out, const struct doc_result *r)
{
    double before = doc_result_before_first_stage(r), wall = r->summary.wall.median;
    char a[32];
    if (isfinite(before) && wall > 0 && before / wall >= 0.1)
        fprintf(out, "\n%s (%.0f %%) before the first stage: the program starting (for a script, "
                "the interpreter and its imports)\n", export_fmt_duration(before, a, sizeof a),
                100 * before / wall);
}

/* Top-level stages open at least 5 % of their time beside another stage on another thread:
 * their shares then add up to more than the run, and removing one would not save all of it. */
static void overlap_line(FILE *out, const struct doc_summary *s)
{
    int listed = 0;
    for (size_t i = 0; i < s->n_stages; i++) {
        const struct doc_stage *st = &s->stages[i];
        double active = st->active.median;
        double part = active > 0 ? st->overlap_ns_median / active : 0;
        if (st->depth != 0 || !(part >= 0.05))
            continue;
        fputs(listed++ ? ", " : "stages overlap (time beside other stages, on other threads): ",
              out);
        one_line(out, or(st->name, "?"));
        fprintf(out, " %.0f %%", 100 * part);
    }
    if (listed)
        putc('\n', out);
}

static void counters_text(FILE *out, const struct doc_summary *s)
{
    struct export_table t;
    export_table_init(&t, 3, "", "", "");
    for (size_t i = 0; i < s->n_counters; i++) {
        const struct doc_counter *k = &s->counters[i];
        double last = k->last.median, sum = k->sum_median;
        size_t row = export_table_row(&t, 0);
        export_table_set(&t, row, 0, "%s", i ? "" : "counters");
        export_table_set(&t, row, 1, "%s", or(k->name, "?"));
        /* Sums and rates only mean something for counts (images), not for a loss. */
        if (k->count && isfinite(sum) && fabs(sum - last) > 1e-12 * fabs(sum)) {
            char rate[4 * EXPORT_TEXT_NAME_COLS + 96];
            export_table_set(&t, row, 2, "last %.6g   sum %.6g   %s", last, sum,
                             export_fmt_counter_rate(k, rate, sizeof rate));
        } else {
            export_table_set(&t, row, 2, "last %.6g", last);
        }
    }
    const struct export_text_column col[3] = {
        {.width = 8}, {.min = TEXT_VERDICT_COLS, .cap = EXPORT_TEXT_NAME_COLS, .sep = " "},
        {.sep = " "}};
    export_table_print(out, &t, &(struct export_text_layout){.col = col, .trim = true});
    export_table_free(&t);
}

static void metadata_text(FILE *out, const struct doc_summary *s)
{
    if (!s->n_metadata)
        return;
    fputs("metadata", out);
    for (size_t i = 0; i < s->n_metadata; i++) {
        const struct doc_meta *m = &s->metadata[i];
        const char *v = or(m->value, "");
        const char *q = strpbrk(v, " \t") ? "\"" : "";
        putc(' ', out);
        one_line(out, or(m->key, "?"));
        fprintf(out, "=%s", q);
        one_line(out, v);
        fprintf(out, "%s%s", q, m->varies ? " (varies between runs)" : "");
    }
    putc('\n', out);
}

/* Latency per span of the stages that repeat (at least EXPORT_LATENCY_MIN_SPANS spans):
 * count and nearest-rank percentiles over the spans of every ok run (summary.stages[].spans). */
static void latency_text(FILE *out, const struct doc_summary *s, int cols)
{
    struct export_table t;
    export_latency_table(&t, s);
    if (t.nrows) {
        export_table_head(&t, 0, "latency per span");
        export_table_head(&t, 1, "count");
        const struct export_text_column col[7] = {
            NAME_COLUMN(cols), {.width = 9, .sep = " "}, {.width = 10, .sep = " "},
            {.width = 10, .sep = " "}, {.width = 10, .sep = " "}, {.width = 10, .sep = " "},
            {.width = 10, .sep = " "}};
        putc('\n', out);
        export_table_print(out, &t, &(struct export_text_layout){.col = col, .header = true});
        fputs("percentiles by nearest rank over the spans of all ok runs (docs/statistics.md)\n",
              out);
    }
    export_table_free(&t);
}

/* A multi-rank job's stages across its ranks (summary.ranks), when there is more than one, and
 * the host of each rank when their rank-execs named them. */
static void ranks_text(FILE *out, const struct doc_ranks *ranks, int cols)
{
    struct export_table t;
    export_ranks_table(&t, ranks);
    bool any = t.nrows > 0;
    if (any) {
        char head[64];
        snprintf(head, sizeof head, "across %zu ranks", ranks->n_ranks);
        export_table_head(&t, 0, head);
        const struct export_text_column col[6] = {
            NAME_COLUMN(cols), {.width = 10, .sep = " "}, {.width = 10, .sep = " "},
            {.width = 10, .sep = " "}, {.width = 7, .sep = " "}, {.sep = "  "}};
        putc('\n', out);
        export_table_print(out, &t, &(struct export_text_layout){.col = col, .header = true,
                                                                 .trim = true});
    }
    export_table_free(&t);
    if (!any)
        return;
    fputs("per run: the slowest rank's time in the stage (what the job waits for), the median "
          "and fastest rank's; medians over the runs (docs/ranks.md)\n", out);
    const json_t *hosts = ranks->hosts, *list;
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
static void hosts_text(FILE *out, const struct doc_result *r)
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

/* The stage table, span latency, ranks and counters; with verbose also CPU and memory, overlap
 * and metadata. False when no run completed (nothing to summarise). */
static bool stages_text(FILE *out, const struct doc_result *r, int cols, bool verbose)
{
    const struct doc_summary *s = &r->summary;
    if (!s->wall.present) {
        fputs("no run completed: nothing to summarise\n", out);
        return false;
    }
    char a[32], b[32];
    stage_table(out, s, cols);
    startup_line(out, r);
    latency_text(out, s, cols);
    ranks_text(out, &s->ranks, cols);
    if (!verbose) {
        if (s->n_counters)
            putc('\n', out);
        counters_text(out, s);
        return true;
    }

    putc('\n', out);
    if (isfinite(s->cpu_cores))
        fprintf(out, "cpu %.2f cores busy ", s->cpu_cores);
    fprintf(out, "(user %s, sys %s)", export_fmt_duration(s->user.median, a, sizeof a),
            export_fmt_duration(s->sys.median, b, sizeof b));
    if (isfinite(s->max_rss.median))
        fprintf(out, "   max RSS %s", export_fmt_bytes(s->max_rss.median, a, sizeof a));
    putc('\n', out);
    if (s->n_stages)
        fputs("stage time is wall time with the stage open on any thread (docs/markers.md)\n", out);
    overlap_line(out, s);
    counters_text(out, s);
    metadata_text(out, s);
    return true;
}

/* sm: the SM-active column is shown (GPM measured it in the run); own_io: the I/O column is
 * the workload's own I/O wait (else the machine's iowait, in results made before it) */
static void resource_row(struct export_table *t, const char *name, int depth,
                         const struct doc_resources *resources, const json_t *gpus, bool sm,
                         bool own_io, bool stage)
{
    struct doc_figures f;
    char c[32];
    doc_figures(resources, gpus, &f);
    size_t row = export_table_row(t, depth), k = 1;
    export_table_set(t, row, 0, "%s", name);
    export_table_set(t, row, k++, "%s", export_fmt_num(f.cpu_cores, "%.2f", 1, c, sizeof c));
    export_table_set(t, row, k++, "%s", export_fmt_bytes(f.rss_peak_bytes, c, sizeof c));
    export_table_set(t, row, k++, "%s", export_fmt_num(f.read_bps, "%.1f", 1e-6, c, sizeof c));
    export_table_set(t, row, k++, "%s", export_fmt_num(f.write_bps, "%.1f", 1e-6, c, sizeof c));
    export_table_set(t, row, k++, "%s", export_fmt_num(own_io ? f.io_blocked : f.iowait, "%.0f%%",
                                                       100, c, sizeof c));
    if (json_array_size(gpus) && sm)
        export_table_set(t, row, k++, "%s",
                         export_fmt_num(f.gpu_sm_active, "%.0f%%", 100, c, sizeof c));
    if (json_array_size(gpus)) {
        export_table_set(t, row, k++, "%s", export_fmt_num(f.gpu_util, "%.0f%%", 100, c, sizeof c));
        export_table_set(t, row, k++, "%s", export_fmt_bytes(f.gpu_mem_peak_bytes, c, sizeof c));
        export_table_set(t, row, k++, "%s",
                         export_fmt_num(f.gpu_power_watts, "%.0f", 1, c, sizeof c));
    }
    if (stage && f.samples == 0)
        export_table_set(t, row, k, "(shorter than the sampling interval)");
}

/* The GPU clock over the runs (summary.gpu_clock), one line when it was measured: "GPU clock
 * 97 % of max (lowest run 91 %); 2 of 10 runs throttled (power), left out". */
static void gpu_clock_text(FILE *out, const struct doc_gpu_clock *gc)
{
    if (!gc->present)
        return;
    double median = gc->scaling_median, low = gc->scaling_min;
    long long runs = gc->runs, throttled = gc->throttled_runs, discarded = gc->discarded_runs;
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
    for (size_t i = 0; i < json_array_size(gc->reasons); i++) {
        const char *why = json_string_value(json_array_get(gc->reasons, i));
        fputs(i ? ", " : "", out);
        one_line(out, why ? why : "?");
    }
    if (!json_array_size(gc->reasons))
        fprintf(out, "clock below %.0f %%", 100 * gc->threshold);
    putc(')', out);
    if (discarded == throttled)
        fputs(", left out", out);
    else if (discarded > 0)
        fprintf(out, ", %lld left out", discarded);
    putc('\n', out);
}

/* What each stage used of the machine (means over its samples; GPUs the workload used). */
static void resources_text(FILE *out, const struct doc_result *r, int cols)
{
    const struct doc_summary *s = &r->summary;
    const json_t *gpus = r->analysis.gpus;
    double cpus = r->cpus_online;
    char cores[32] = "cores";
    if (isfinite(cpus))
        snprintf(cores, sizeof cores, "cores/%.0f", cpus);
    /* GPM's SM active beside utilisation: how much of the GPU the kernels used */
    struct doc_figures total;
    doc_figures(&s->resources, gpus, &total);
    bool sm = isfinite(total.gpu_sm_active), gpu = json_array_size(gpus) > 0;
    bool own_io = isfinite(total.io_blocked);
    const char *head[11] = {"resources (mean)", cores, "peak mem", "read MB/s", "write MB/s",
                            own_io ? "I/O wait" : "iowait"};
    struct export_text_column col[11] = {
        NAME_COLUMN(cols), {.width = 8, .sep = " "}, {.width = 10, .sep = " "},
        {.width = 9, .sep = " "}, {.width = 9, .sep = " "}, {.width = 7, .sep = " "}};
    size_t n = 6;
    if (gpu && sm) {
        head[n] = "SM act";
        col[n++] = (struct export_text_column){.width = 6, .sep = " "};
    }
    if (gpu) {
        head[n] = "GPU util";
        col[n++] = (struct export_text_column){.width = 8, .sep = " "};
        head[n] = "GPU mem";
        col[n++] = (struct export_text_column){.width = 10, .sep = " "};
        head[n] = "GPU W";
        col[n++] = (struct export_text_column){.width = 7, .sep = " "};
    }
    head[n] = "";
    col[n++] = (struct export_text_column){.sep = "  "};
    struct export_table t;
    export_table_init_list(&t, n, head);
    t.numeric = ((1u << (n - 1)) - 1) & ~1u;
    for (size_t i = 0; i < s->n_stages; i++)
        resource_row(&t, or(s->stages[i].name, "?"), s->stages[i].depth,
                     &s->stages[i].resources, gpus, sm, own_io, true);
    resource_row(&t, "total", 0, &s->resources, gpus, sm, own_io, false);
    putc('\n', out);
    export_table_print(out, &t, &(struct export_text_layout){.col = col, .header = true,
                                                             .trim = true});
    export_table_free(&t);
    gpu_clock_text(out, &s->gpu_clock);
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
static void cost_text(FILE *out, const struct doc_result *r)
{
    struct doc_cost c;
    if (!doc_cost_read(r->cost, &c))
        return;
    const char *cur = or(c.currency, "?");
    char a[32], b[32], d[32], p[32];
    fprintf(out, "\ncost   %s %s a run (%s .. %s) at %s %s/h", cur,
            money(c.run_median, a, sizeof a), money(c.run_ci_low, b, sizeof b),
            money(c.run_ci_high, d, sizeof d), money(c.price_per_hour, p, sizeof p), cur);
    if (c.price_file) {
        fputs(" (", out);
        one_line(out, or(c.price_file_path, "?"));
        fputs(": ", out);
        one_line(out, or(c.price_file_entry, "?"));
        putc(')', out);
    }
    putc('\n', out);
    size_t shown = 0;
    for (size_t i = 0; i < c.n_per_unit && i < 8; i++) {
        fputs(shown++ ? ", " : "       ", out);
        fprintf(out, "%s ", money(c.per_unit[i].median, a, sizeof a));
        one_line(out, or(c.per_unit[i].description, "?"));
    }
    for (size_t i = 0; i < c.n_to_target && i < 8; i++) {
        fputs(shown++ ? ", " : "       ", out);
        fprintf(out, "%s %s to target (", money(c.to_target[i].median, a, sizeof a), cur);
        one_line(out, or(c.to_target[i].counter, "?"));
        putc(')', out);
    }
    if (shown)
        putc('\n', out);
    doc_cost_free(&c);
}

/* Whether a "not measured" note is only that the machine has no NVIDIA driver: said in the
 * default view only where a GPU was asked for (its warning gpu_unverified says so then). */
static bool no_driver(const char *note)
{
    return note && !strncmp(note, "nvml:", 5) && strstr(note, "no NVIDIA driver");
}

/* Sources that could not measure, and the warnings about the measurement; without verbose, a
 * machine's missing NVIDIA driver is not a note and a warning code is said once. */
static void notes_text(FILE *out, const struct doc_result *r, bool verbose)
{
    const json_t *missing = r->sampling.not_measured;
    size_t listed = 0;
    for (size_t i = 0; i < json_array_size(missing); i++) {
        const char *m = json_string_value(json_array_get(missing, i));
        if (!verbose && no_driver(m))
            continue;
        fputs(listed++ ? "             " : "not measured: ", out);
        text_lines(out, m ? m : "?", "              ");
        putc('\n', out);
    }
    if (r->n_warnings) {
        fputc('\n', out);
        term_paint(out, TERM_TONE_WARN, "warnings:");
        fputc('\n', out);
    }
    for (size_t i = 0; i < r->n_warnings; i++) {
        bool seen = false;
        for (size_t k = 0; !verbose && k < i && !seen; k++)
            seen = r->warnings[i].code && r->warnings[k].code &&
                   !strcmp(r->warnings[i].code, r->warnings[k].code);
        if (seen)
            continue;
        fputs("  ", out);
        term_paint(out, TERM_TONE_WARN, "!");
        fputc(' ', out);
        text_lines(out, or(r->warnings[i].message, "?"), "    ");
        putc('\n', out);
    }
}

/* The summary: by default the answer first, then the stage table and the warnings, in a
 * screenful (issue 35); verbose: every section (resources, each stage's verdict, every
 * finding, CPU and memory, metadata). */
static void summary_text_as(FILE *out, const json_t *doc, const char *result_path, bool verbose)
{
    struct doc_result *r = doc_result_read(doc);
    /* One width for the stage names of every table, so their rows line up. */
    int cols = stage_cols(&r->summary, STAGE_COLS);
    header(out, r, verbose);
    runs_text(out, r);
    bool answered = !verbose && r->summary.wall.present && r->analysis.present;
    if (answered)
        text_answer(out, r);
    bool staged = stages_text(out, r, cols, verbose);
    if (staged)
        hosts_text(out, r);
    cost_text(out, r);
    if (verbose && staged && r->analysis.present) {
        resources_text(out, r, cols);
        text_analysis(out, r);
    }
    notes_text(out, r, verbose);
    if (answered && r->id) {
        fputs("\nevery verdict and finding, the resources: mlbench show -v ", out);
        one_line(out, r->id);
        putc('\n', out);
    }
    if (result_path) {
        fputs(answered && r->id ? "result: " : "\nresult: ", out);
        one_line(out, result_path);
        putc('\n', out);
    }
    doc_result_free(r);
}

static void summary_text(FILE *out, const json_t *doc, const char *result_path)
{
    summary_text_as(out, doc, result_path, false);
}

static void summary_text_verbose(FILE *out, const json_t *doc, const char *result_path)
{
    summary_text_as(out, doc, result_path, true);
}

int export_text_draw(FILE *out, void (*draw)(FILE *, const void *), const void *arg)
{
    struct term_canvas canvas;
    if (term_canvas_open(&canvas, out) < 0)
        return -1;
    draw(canvas.f, arg);
    int rc = term_canvas_close(&canvas);
    return rc == 0 && fflush(out) == 0 && !ferror(out) ? 0 : -1;
}

/* What export_text_compose hands export_text_draw. */
struct composed {
    void (*compose)(FILE *, const json_t *, const char *);
    const json_t *doc;
    const char *path;
};

static void draw_composed(FILE *out, const void *arg)
{
    const struct composed *c = arg;
    c->compose(out, c->doc, c->path);
}

int export_text_compose(FILE *out, void (*compose)(FILE *, const json_t *, const char *),
                        const json_t *doc, const char *path)
{
    const struct composed c = {compose, doc, path};
    return export_text_draw(out, draw_composed, &c);
}

int export_text_print(FILE *out, const json_t *doc, const char *result_path, bool verbose)
{
    return export_text_compose(out, verbose ? summary_text_verbose : summary_text, doc,
                               result_path);
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
