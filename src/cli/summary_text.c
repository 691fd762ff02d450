/* summary_text: terminal and JSON summaries of a result (see summary_text.h). */
#include "cli/summary_text.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

#include "util/units.h"

#define NAME_MAX_SHOWN 40 /* stage names longer than this are cut in tables (JSON keeps them) */

/* name indented by depth and cut to NAME_MAX_SHOWN characters with "..." (UTF-8 safe). */
static const char *shown_name(char *buf, size_t len, int depth, const char *name)
{
    size_t n = strlen(name);
    if (n <= NAME_MAX_SHOWN) {
        snprintf(buf, len, "%*s%s", 2 * depth, "", name);
        return buf;
    }
    size_t cut = NAME_MAX_SHOWN - 3;
    while (cut > 0 && ((unsigned char)name[cut] & 0xc0) == 0x80) /* not inside a character */
        cut--;
    snprintf(buf, len, "%*s%.*s...", 2 * depth, "", (int)cut, name);
    return buf;
}

/* "50.91 .. 51.82 ms" style interval, with its coverage when below 95 %. */
static void interval(const struct stats_summary *s, char *buf, size_t len)
{
    char lo[32], hi[32];
    if (s->n < 2) {
        snprintf(buf, len, "-");
        return;
    }
    units_duration(s->ci_low, lo, sizeof lo);
    units_duration(s->ci_high, hi, sizeof hi);
    if (s->ci_level < 0.95 - 1e-9)
        snprintf(buf, len, "%s .. %s (%.0f%%)", lo, hi, 100 * s->ci_level);
    else
        snprintf(buf, len, "%s .. %s", lo, hi);
}

static void row(FILE *out, const char *name, int depth, const struct stats_summary *s, double share)
{
    char label[64], med[32], ci[96], mn[32], mx[32], range[72], cv[16];
    shown_name(label, sizeof label, depth, name);
    units_duration(s->median, med, sizeof med);
    interval(s, ci, sizeof ci);
    snprintf(range, sizeof range, "%s .. %s", units_duration(s->min, mn, sizeof mn),
             units_duration(s->max, mx, sizeof mx));
    if (s->n >= 2)
        snprintf(cv, sizeof cv, "%.1f%%", 100 * s->cv);
    else
        snprintf(cv, sizeof cv, "-");
    fprintf(out, "%-22s %10s  %-30s %6.1f%%  %-24s %6s\n", label, med, ci, 100 * share, range, cv);
}

static void command_line(FILE *out, const struct run_config *c)
{
    fputs("mlbench run:", out);
    for (int i = 0; i < c->argc; i++)
        fprintf(out, " %s", c->argv[i]);
    if (c->label)
        fprintf(out, "   [%s]", c->label);
    fputc('\n', out);
}

/* v * scale with the given decimals and suffix, or "-" when not measured. */
static const char *fig(char *buf, size_t len, double v, double scale, int decimals,
                       const char *suffix)
{
    if (!isfinite(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.*f%s", decimals, v * scale, suffix);
    return buf;
}

/* Resource figures per stage: what each stage used of the machine. */
static void resources_table(FILE *out, const struct bench_result *r)
{
    const struct summary *s = &r->summary;
    bool gpu = r->gpus_shown != 0;
    char c[8][32];
    char cores[16];
    snprintf(cores, sizeof cores, "cores/%ld", sysconf(_SC_NPROCESSORS_ONLN));
    fprintf(out, "\n%-22s %8s %10s %9s %9s %7s", "resources (mean)", cores, "peak mem",
            "read MB/s", "write MB/s", "iowait");
    if (gpu)
        fprintf(out, " %8s %10s %7s", "GPU util", "GPU mem", "GPU W");
    fputc('\n', out);
    for (size_t i = 0; i <= s->n_stages; i++) {
        const struct stage_resources *f = &r->figures[i];
        char label[64];
        shown_name(label, sizeof label, f->depth, f->name);
        fprintf(out, "%-22s %8s %10s %9s %9s %7s", label,
                fig(c[0], sizeof c[0], f->cpu_cores, 1, 2, ""),
                isfinite(f->rss_peak_bytes) ? units_bytes(f->rss_peak_bytes, c[1], sizeof c[1]) : "-",
                fig(c[2], sizeof c[2], f->read_bps, 1e-6, 1, ""),
                fig(c[3], sizeof c[3], f->write_bps, 1e-6, 1, ""),
                fig(c[4], sizeof c[4], f->iowait, 100, 0, "%"));
        if (gpu)
            fprintf(out, " %8s %10s %7s", fig(c[5], sizeof c[5], f->gpu_util, 100, 0, "%"),
                    isfinite(f->gpu_mem_peak_bytes)
                        ? units_bytes(f->gpu_mem_peak_bytes, c[6], sizeof c[6]) : "-",
                    fig(c[7], sizeof c[7], f->gpu_power_watts, 1, 0, ""));
        if (f->samples == 0 && i < s->n_stages)
            fputs("  (shorter than the sampling interval)", out);
        fputc('\n', out);
    }
}

static void analysis_text(FILE *out, const struct bench_result *r)
{
    const struct analysis *a = &r->analysis;
    char t[32];
    fputs("\nverdicts", out);
    if (a->bottleneck)
        fprintf(out, " (bottleneck: %s)", a->bottleneck);
    fputs(":\n", out);
    for (size_t i = 0; i < a->n_verdicts; i++) {
        const struct verdict *v = &a->verdicts[i];
        double share = NAN;
        for (size_t k = 0; k < r->summary.n_stages; k++)
            if (!strcmp(r->summary.stages[k].name, v->stage))
                share = r->summary.stages[k].share;
        if (!strcmp(v->stage, "total"))
            share = 1;
        char name[64];
        fprintf(out, "  %-16s %5.1f%%  %s: %s\n", shown_name(name, sizeof name, 0, v->stage),
                100 * share, v->rule, v->evidence);
    }
    if (a->n_findings)
        fputs("findings, by the time they could save:\n", out);
    for (size_t i = 0; i < a->n_findings; i++) {
        const struct finding *f = &a->findings[i];
        char name[64];
        fprintf(out, "  %zu. %s [%s]: %s\n     -> %s", i + 1,
                shown_name(name, sizeof name, 0, f->stage), f->rule, f->evidence,
                f->recommendation);
        if (f->saving_ns > 0)
            fprintf(out, " (could save about %s a run)", units_duration(f->saving_ns, t, sizeof t));
        fputc('\n', out);
    }
}

void summary_text_print(FILE *out, const struct bench_result *r, const char *result_path)
{
    const struct summary *s = &r->summary;
    size_t warmups = 0;
    for (size_t i = 0; i < r->n_reps; i++)
        warmups += r->reps[i].warmup;

    fputc('\n', out);
    command_line(out, r->config);
    fprintf(out, "%zu run%s measured", s->n_measured, s->n_measured == 1 ? "" : "s");
    if (warmups)
        fprintf(out, " (+%zu warm-up)", warmups);
    fprintf(out, ", %zu ok%s\n", s->n_ok, r->stop_signal ? ", interrupted" : "");
    if (!s->valid) {
        fputs("no run completed: nothing to summarise\n", out);
    } else {
        char a[32], b[32], c[32];
        if (s->used_failed)
            fputs("no run succeeded: the figures below describe failed runs\n", out);
        fprintf(out, "\n%-22s %10s  %-30s %7s  %-24s %6s\n", "stage", "median", "95% CI of median",
                "share", "min .. max", "CV");
        for (size_t i = 0; i < s->n_stages; i++)
            row(out, s->stages[i].name, s->stages[i].depth, &s->stages[i].active,
                s->stages[i].share);
        if (s->n_stages && s->outside_median_ns >= 0 && s->wall.median > 0 &&
            s->outside_median_ns / s->wall.median >= 0.01)
            fprintf(out, "%-22s %10s  %-30s %6.1f%%\n", "(outside stages)",
                    units_duration(s->outside_median_ns, a, sizeof a), "",
                    100 * s->outside_median_ns / s->wall.median);
        row(out, "total", 0, &s->wall, 1.0);

        fprintf(out, "\ncpu %.2f cores busy (user %s, sys %s)   max RSS %s\n", s->cpu_cores_median,
                units_duration(s->user.median, a, sizeof a),
                units_duration(s->sys.median, b, sizeof b),
                units_bytes(s->max_rss.median, c, sizeof c));
        if (s->n_stages)
            fputs("stage time is wall time with the stage open on any thread (docs/markers.md)\n",
                  out);
        /* Stages on different threads (a loader beside training) overlap: their shares then
         * add up to more than the run, and removing one would not save all of its time. */
        int listed = 0;
        for (size_t i = 0; i < s->n_stages; i++) {
            const struct stage_summary *st = &s->stages[i];
            double part = st->active.median > 0 ? st->overlap_median_ns / st->active.median : 0;
            if (st->depth != 0 || !(part >= 0.05))
                continue;
            fprintf(out, "%s %s %.0f %%", listed++ ? "," : "stages overlap (time beside other "
                                                        "stages, on other threads):",
                    st->name, 100 * part);
        }
        if (listed)
            fputs("\n", out);
        for (size_t i = 0; i < s->n_counters; i++) {
            const struct counter_summary *k = &s->counters[i];
            fprintf(out, "%-8s %-16s last %.6g", i ? "" : "counters", k->name, k->last.median);
            /* Sums and rates only mean something for counts (images), not for a loss. */
            if (k->count && fabs(k->sum_median - k->last.median) > 1e-12 * fabs(k->sum_median))
                fprintf(out, "   sum %.6g   %.4g/s", k->sum_median, k->rate_median);
            fputc('\n', out);
        }
        if (s->n_meta) {
            fputs("metadata", out);
            for (size_t i = 0; i < s->n_meta; i++) {
                const char *q = strpbrk(s->meta[i].value, " \t") ? "\"" : "";
                fprintf(out, " %s=%s%s%s%s", s->meta[i].key, q, s->meta[i].value, q,
                        s->meta[i].varies ? " (varies between runs)" : "");
            }
            fputc('\n', out);
        }
    }
    if (s->valid && r->figures)
        resources_table(out, r);
    if (s->valid && r->analyzed)
        analysis_text(out, r);
    for (size_t i = 0; i < r->sampling.n_skipped; i++)
        fprintf(out, "%s %s\n", i ? "            " : "not measured:", r->sampling.skipped[i]);
    if (s->n_warnings) {
        fputs("\nwarnings:\n", out);
        for (size_t i = 0; i < s->n_warnings; i++)
            fprintf(out, "  ! %s\n", s->warnings[i].message);
    }
    if (result_path)
        fprintf(out, "\nresult: %s\n", result_path);
}

void summary_text_print_json(FILE *out, json_t *doc, const char *result_path)
{
    json_t *j = json_pack("{s:O, s:o, s:O, s:O, s:O}", "id", json_object_get(doc, "id"),
                          "result_file", result_path ? json_string(result_path) : json_null(),
                          "status", json_object_get(doc, "status"),
                          "summary", json_object_get(doc, "summary"),
                          "warnings", json_object_get(doc, "warnings"));
    if (j)
        json_dumpf(j, out, JSON_INDENT(2) | JSON_ENSURE_ASCII);
    fputc('\n', out);
    json_decref(j);
}
