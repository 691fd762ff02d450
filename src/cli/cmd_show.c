/* cmd_show: `mlbench show REF`: a stored result, read back from its JSON file, as a readable
 * summary (what it measured, the stage table with intervals and shares, counters, analysis
 * verdicts, warnings), or the file itself with --json. References: docs/store.md. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "util/log.h"
#include "result/result_load.h"
#include "util/units.h"
#include "store/store.h"

static const char usage_text[] =
    "usage: mlbench show REF [--json] [--store DIR]\n"
    "\n"
    "Prints a stored result. REF is an id, a unique id prefix, a label (its newest result),\n"
    "latest, or a result file.\n"
    "\n"
    "      --json           print the result file itself\n"
    "      --store DIR      result store (default .mlbench, or $MLBENCH_STORE)\n"
    "  -h, --help           this help\n";

static double num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *text(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* The string at key, or dflt when there is none. */
static const char *text_or(const json_t *o, const char *key, const char *dflt)
{
    const char *s = text(o, key);
    return s ? s : dflt;
}

static const char *dur(double ns, char *buf, size_t len)
{
    if (!isfinite(ns))
        return "-";
    return units_duration(ns, buf, len);
}

/* One row of the stage table, as `mlbench run` prints it (summary_text.c). */
static void stage_row(FILE *out, const char *name, int depth, const json_t *t, double share)
{
    char label[64], med[32], lo[32], hi[32], ci[96], mn[32], mx[32], range[72], cv[16], sh[16];
    double n = num(t, "n"), level = num(t, "ci_level");
    snprintf(label, sizeof label, "%*s%.40s", 2 * depth, "", name);
    if (n >= 2 && isfinite(level) && level < 0.95 - 1e-9)
        snprintf(ci, sizeof ci, "%s .. %s (%.0f%%)", dur(num(t, "ci_low"), lo, sizeof lo),
                 dur(num(t, "ci_high"), hi, sizeof hi), 100 * level);
    else if (n >= 2)
        snprintf(ci, sizeof ci, "%s .. %s", dur(num(t, "ci_low"), lo, sizeof lo),
                 dur(num(t, "ci_high"), hi, sizeof hi));
    else
        snprintf(ci, sizeof ci, "-");
    snprintf(range, sizeof range, "%s .. %s", dur(num(t, "min"), mn, sizeof mn),
             dur(num(t, "max"), mx, sizeof mx));
    if (n >= 2 && isfinite(num(t, "cv")))
        snprintf(cv, sizeof cv, "%.1f%%", 100 * num(t, "cv"));
    else
        snprintf(cv, sizeof cv, "-");
    if (isfinite(share))
        snprintf(sh, sizeof sh, "%.1f%%", 100 * share);
    else
        snprintf(sh, sizeof sh, "-");
    fprintf(out, "%-22s %10s  %-30s %7s  %-24s %6s\n", label, dur(num(t, "median"), med,
            sizeof med), ci, sh, range, cv);
}

static void header(FILE *out, const json_t *r, const char *path)
{
    const json_t *env = json_object_get(r, "environment");
    const json_t *mlb = json_object_get(r, "mlbench");
    const char *label = text(r, "label");
    fprintf(out, "result   %s%s%s%s\n", text(r, "id"), label ? "   [" : "", label ? label : "",
            label ? "]" : "");
    fprintf(out, "file     %s\n", path);
    fprintf(out, "created  %s", text_or(r, "created", "?"));
    if (text(env, "hostname")) {
        fprintf(out, " on %s", text(env, "hostname"));
        double cpus = num(env, "cpus_online");
        if (text(env, "kernel") || text(env, "machine") || isfinite(cpus)) {
            fputs(" (", out);
            const char *sep = "";
            if (text(env, "kernel")) {
                fprintf(out, "%s", text(env, "kernel"));
                sep = ", ";
            }
            if (text(env, "machine")) {
                fprintf(out, "%s%s", sep, text(env, "machine"));
                sep = ", ";
            }
            if (isfinite(cpus))
                fprintf(out, "%s%.0f CPUs", sep, cpus);
            fputc(')', out);
        }
    }
    fputc('\n', out);
    fputs("command ", out);
    const json_t *argv = json_object_get(json_object_get(r, "command"), "argv"), *a;
    for (size_t i = 0; (a = json_array_get(argv, i)); i++)
        fprintf(out, " %s", json_string_value(a) ? json_string_value(a) : "?");
    if (json_is_true(json_object_get(json_object_get(r, "command"), "shell")))
        fputs("   (through /bin/sh -c)", out);
    fputc('\n', out);
    if (text(mlb, "version"))
        fprintf(out, "mlbench  %s (%s)\n", text(mlb, "version"),
                text_or(mlb, "git_commit", "?"));
}

/* Measured runs, and each run that did not succeed with why. */
static void runs_text(FILE *out, const json_t *r)
{
    const json_t *s = json_object_get(r, "summary");
    const json_t *runs = json_object_get(r, "runs");
    size_t i, warmups = 0;
    const json_t *run;
    for (i = 0; (run = json_array_get(runs, i)); i++)
        warmups += json_is_true(json_object_get(run, "warmup"));
    double measured = num(s, "runs_measured"), ok = num(s, "runs_ok");
    fprintf(out, "\n%.0f run%s measured", measured, measured == 1 ? "" : "s");
    if (warmups)
        fprintf(out, " (+%zu warm-up)", warmups);
    fprintf(out, ", %.0f ok", ok);
    if (text(r, "status") && !strcmp(text(r, "status"), "interrupted"))
        fprintf(out, ", interrupted%s%s", text(r, "interrupted_by") ? " by " : "",
                text_or(r, "interrupted_by", ""));
    fputc('\n', out);
    for (i = 0; (run = json_array_get(runs, i)); i++) {
        const char *st = text(run, "status");
        if (!st || !strcmp(st, "ok"))
            continue;
        char w[32];
        fprintf(out, "  run %zu%s: %s after %s", i + 1,
                json_is_true(json_object_get(run, "warmup")) ? " (warm-up)" : "", st,
                dur(num(run, "wall_ns"), w, sizeof w));
        if (text(run, "error"))
            fprintf(out, ": %s", text(run, "error"));
        else if (text(run, "prepare_error"))
            fprintf(out, ": %s", text(run, "prepare_error"));
        else if (text(run, "signal"))
            fprintf(out, " (%s)", text(run, "signal"));
        else if (isfinite(num(run, "exit_code")))
            fprintf(out, " (exit status %.0f)", num(run, "exit_code"));
        fputc('\n', out);
    }
    if (json_is_true(json_object_get(s, "used_failed_runs")))
        fputs("no run succeeded: the figures below describe failed runs\n", out);
}

static void stages_text(FILE *out, const json_t *s)
{
    const json_t *wall = json_object_get(s, "wall_ns");
    if (!json_is_object(wall)) {
        fputs("no run completed: nothing to summarise\n", out);
        return;
    }
    fprintf(out, "\n%-22s %10s  %-30s %7s  %-24s %6s\n", "stage", "median", "95% CI of median",
            "share", "min .. max", "CV");
    size_t i;
    const json_t *stages = json_object_get(s, "stages"), *st;
    for (i = 0; (st = json_array_get(stages, i)); i++) {
        double depth = num(st, "depth");
        stage_row(out, text_or(st, "name", "?"),
                  isfinite(depth) && depth >= 0 && depth < 20 ? (int)depth : 0,
                  json_object_get(st, "active_ns"), num(st, "share"));
    }
    double outside = num(s, "outside_ns"), wall_median = num(wall, "median");
    if (isfinite(outside) && wall_median > 0 && outside / wall_median >= 0.01) {
        char o[32];
        fprintf(out, "%-22s %10s  %-30s %6.1f%%\n", "(outside stages)",
                dur(outside, o, sizeof o), "", 100 * outside / wall_median);
    }
    stage_row(out, "total", 0, wall, 1.0);

    char a[32], b[32];
    double cores = num(s, "cpu_cores");
    fputc('\n', out);
    if (isfinite(cores))
        fprintf(out, "cpu %.2f cores busy ", cores);
    fprintf(out, "(user %s, sys %s)", dur(num(json_object_get(s, "user_ns"), "median"), a,
            sizeof a), dur(num(json_object_get(s, "sys_ns"), "median"), b, sizeof b));
    double rss = num(json_object_get(s, "max_rss_bytes"), "median");
    if (isfinite(rss)) {
        char c[32];
        fprintf(out, "   max RSS %s", units_bytes(rss, c, sizeof c));
    }
    fputc('\n', out);
    const json_t *counters = json_object_get(s, "counters"), *k;
    for (i = 0; (k = json_array_get(counters, i)); i++) {
        double last = num(json_object_get(k, "last"), "median"), sum = num(k, "sum_median");
        fprintf(out, "%-8s %-16s last %.6g", i ? "" : "counters",
                text_or(k, "name", "?"), last);
        if (json_is_true(json_object_get(k, "count")) && isfinite(sum) &&
            fabs(sum - last) > 1e-12 * fabs(sum))
            fprintf(out, "   sum %.6g   %.4g/s", sum, num(k, "rate_per_s_median"));
        fputc('\n', out);
    }
    const json_t *meta = json_object_get(s, "metadata");
    if (json_array_size(meta)) {
        fputs("metadata", out);
        for (i = 0; (k = json_array_get(meta, i)); i++) {
            const char *v = text_or(k, "value", "");
            const char *q = strpbrk(v, " \t") ? "\"" : "";
            fprintf(out, " %s=%s%s%s%s", text_or(k, "key", "?"), q, v, q,
                    json_is_true(json_object_get(k, "varies")) ? " (varies between runs)" : "");
        }
        fputc('\n', out);
    }
}

static void analysis_text(FILE *out, const json_t *r)
{
    const json_t *a = json_object_get(r, "analysis");
    if (!json_is_object(a))
        return;
    const json_t *stages = json_object_get(json_object_get(r, "summary"), "stages");
    fputs("\nverdicts", out);
    if (text(a, "bottleneck"))
        fprintf(out, " (bottleneck: %s)", text(a, "bottleneck"));
    fputs(":\n", out);
    size_t i, k;
    const json_t *verdicts = json_object_get(a, "verdicts"), *v, *st;
    for (i = 0; (v = json_array_get(verdicts, i)); i++) {
        const char *name = text_or(v, "stage", "?");
        double share = !strcmp(name, "total") ? 1 : NAN;
        for (k = 0; (st = json_array_get(stages, k)); k++)
            if (text(st, "name") && !strcmp(text(st, "name"), name))
                share = num(st, "share");
        char sh[16] = "-";
        if (isfinite(share))
            snprintf(sh, sizeof sh, "%.1f%%", 100 * share);
        fprintf(out, "  %-16s %6s  %s: %s\n", name, sh, text_or(v, "rule", "?"),
                text_or(v, "evidence", ""));
    }
    const json_t *findings = json_object_get(a, "findings");
    if (json_array_size(findings))
        fputs("findings, by the time they could save:\n", out);
    for (i = 0; (v = json_array_get(findings, i)); i++) {
        double saving = num(v, "saving_ns");
        fprintf(out, "  %zu. %s [%s]: %s\n     -> %s", i + 1, text_or(v, "stage", "?"), text_or(v, "rule", "?"),
                text_or(v, "evidence", ""),
                text_or(v, "recommendation", ""));
        if (saving > 0) {
            char t[32];
            fprintf(out, " (could save about %s a run)", units_duration(saving, t, sizeof t));
        }
        fputc('\n', out);
    }
}

static void show_text(FILE *out, const json_t *r, const char *path)
{
    header(out, r, path);
    runs_text(out, r);
    stages_text(out, json_object_get(r, "summary"));
    analysis_text(out, r);
    size_t i;
    const json_t *missing = json_object_get(json_object_get(r, "sampling"), "not_measured"), *v;
    for (i = 0; (v = json_array_get(missing, i)); i++)
        fprintf(out, "%s %s\n", i ? "            " : "not measured:",
                json_string_value(v) ? json_string_value(v) : "?");
    const json_t *warnings = json_object_get(r, "warnings");
    if (json_array_size(warnings))
        fputs("\nwarnings:\n", out);
    for (i = 0; (v = json_array_get(warnings, i)); i++)
        fprintf(out, "  ! %s\n", text_or(v, "message", "?"));
}

/* Copies the file to out as it is. */
static int copy_file(FILE *out, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, n, out);
    int bad = ferror(f);
    fclose(f);
    return bad ? -1 : 0;
}

int cmd_show(int argc, char **argv)
{
    const char *store = store_default_dir();
    bool json = false;
    const struct cli_option table[] = {
        CLI_OPT_FLAG("json", 0, &json),
        CLI_OPT_STORE(&store),
        CLI_OPT_END,
    };
    const struct cli_parser parser = {"show", table, 0};
    struct cli_args args;
    char err[1024], *path;
    int rc = cli_options_parse(&parser, argc, argv, &args, err, sizeof err);
    if (rc == CLI_HELP) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (rc == CLI_ERROR) {
        log_error("show: %s", err);
        return 2;
    }
    if (args.n != 1) {
        log_error("show: give one result: an id, a prefix, a label, latest or a file (see "
                  "mlbench show --help)");
        return 2;
    }
    if (store_resolve(store, args.v[0], &path, err, sizeof err) < 0) {
        log_error("%s", err);
        return 2;
    }
    json_t *r = result_load_file(path, err, sizeof err);
    if (!r) {
        log_error("%s", err);
        free(path);
        return 2;
    }
    rc = 0;
    if (json) {
        if (copy_file(stdout, path) < 0) {
            log_error("cannot read %s", path);
            rc = 2;
        }
    } else {
        /* Composed in memory, then printed without control characters. */
        char *buf = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&buf, &len);
        if (!mem) {
            log_error("show: out of memory");
            rc = 3;
        } else {
            show_text(mem, r, path);
            fclose(mem);
            store_print_clean(stdout, buf, len);
            free(buf);
        }
    }
    json_decref(r);
    free(path);
    fflush(stdout);
    return rc == 0 && ferror(stdout) ? 3 : rc;
}
