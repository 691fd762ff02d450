/* csv.c: CSV tables (--format csv) for spreadsheets and data frames, RFC 4180: a header
 * line, CRLF line ends, fields holding a comma, a double quote or a line break quoted with
 * quotes doubled, text that would start a formula neutralised with a leading ', empty fields
 * for values that were not measured. One table per file, chosen
 * with --table: stages (the default: the summary of each stage), runs (one row per run),
 * samples (every resource sample, long format), comparison (stage changes, several results).
 * Every table starts with the result id, so the tables of several results concatenate. */
#include "export/export.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* A text field. One that a spreadsheet would take for a formula (it starts with = + - @, a tab
 * or a carriage return: OWASP's CSV-injection rule) gets a leading ' and quotes, so a stage
 * named =HYPERLINK(...) stays text. Numbers are written by csv_num, never through here. */
static void csv_field(FILE *out, const char *text)
{
    if (!text)
        return;
    char *s = export_clean(text); /* controls as '?': the file is read with cat too */
    bool formula = *s && strchr("=+-@\t\r", *s);
    if (!formula && !strpbrk(s, ",\"\r\n")) {
        fputs(s, out);
        free(s);
        return;
    }
    fputc('"', out);
    if (formula)
        fputc('\'', out);
    for (const char *p = s; *p; p++) {
        if (*p == '"')
            fputc('"', out);
        fputc(*p, out);
    }
    fputc('"', out);
    free(s);
}

/* A number field: exact digits, empty when not measured. */
static void csv_num(FILE *out, double v)
{
    if (isfinite(v)) {
        char buf[40];
        fputs(export_fmt_exact(v, buf, sizeof buf), out);
    }
}

/* The header line: names up to NULL. */
static void csv_header(FILE *out, const char *const *names)
{
    for (size_t i = 0; names[i]; i++) {
        if (i)
            fputc(',', out);
        csv_field(out, names[i]);
    }
    fputs("\r\n", out);
}

static void stats_fields(FILE *out, const json_t *st)
{
    static const char *const keys[] = {"median", "ci_low", "ci_high", "ci_level", "mean",
                                       "stddev", "mad", "min", "max", "cv"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        fputc(',', out);
        csv_num(out, jsonx_num(st, keys[k]));
    }
}

static void table_stages(FILE *out, const struct export_request *req)
{
    static const char *const header[] = {
        "result", "label", "scope", "stage", "depth", "n", "median_ns", "ci_low_ns", "ci_high_ns",
        "ci_level", "mean_ns", "stddev_ns", "mad_ns", "min_ns", "max_ns", "cv", "share",
        "busy_ns_median", "span_ns_median", "count_median", NULL};
    csv_header(out, header);
    for (size_t i = 0; i < req->n; i++) {
        const json_t *r = req->results[i];
        const json_t *s = json_object_get(r, "summary");
        const json_t *stages = json_object_get(s, "stages");
        for (size_t k = 0; k < json_array_size(stages); k++) {
            const json_t *st = json_array_get(stages, k);
            csv_field(out, jsonx_str(r, "id"));
            fputc(',', out);
            csv_field(out, jsonx_str(r, "label"));
            fputs(",stage,", out);
            csv_field(out, jsonx_str(st, "name"));
            fprintf(out, ",%lld,%lld", jsonx_int(st, "depth", 0), jsonx_int(st, "n", 0));
            stats_fields(out, json_object_get(st, "active_ns"));
            static const char *const more[] = {"share", "busy_ns_median", "span_ns_median",
                                               "count_median"};
            for (size_t m = 0; m < sizeof more / sizeof more[0]; m++) {
                fputc(',', out);
                csv_num(out, jsonx_num(st, more[m]));
            }
            fputs("\r\n", out);
        }
        const json_t *wall = json_object_get(s, "wall_ns");
        if (!wall)
            continue;
        /* the whole run: scope "run", named total as in the analysis */
        csv_field(out, jsonx_str(r, "id"));
        fputc(',', out);
        csv_field(out, jsonx_str(r, "label"));
        fprintf(out, ",run,total,0,%lld", jsonx_int(wall, "n", 0));
        stats_fields(out, wall);
        fputs(",1,,,\r\n", out);
    }
}

static void table_runs(FILE *out, const struct export_request *req)
{
    static const char *const header[] = {
        "result", "run", "warmup", "status", "exit_code", "signal", "wall_ns", "user_ns",
        "sys_ns", "max_rss_bytes", "outside_ns", NULL};
    static const char *const nums[] = {"wall_ns", "user_ns", "sys_ns", "max_rss_bytes",
                                       "outside_ns"};
    csv_header(out, header);
    for (size_t i = 0; i < req->n; i++) {
        const json_t *r = req->results[i];
        const json_t *runs = json_object_get(r, "runs");
        for (size_t k = 0; k < json_array_size(runs); k++) {
            const json_t *run = json_array_get(runs, k);
            csv_field(out, jsonx_str(r, "id"));
            fprintf(out, ",%zu,%s,", k, json_is_true(json_object_get(run, "warmup")) ? "true"
                                                                                     : "false");
            csv_field(out, jsonx_str(run, "status"));
            fputc(',', out);
            csv_num(out, jsonx_num(run, "exit_code"));
            fputc(',', out);
            csv_field(out, jsonx_str(run, "signal"));
            for (size_t m = 0; m < sizeof nums / sizeof nums[0]; m++) {
                fputc(',', out);
                csv_num(out, jsonx_num(run, nums[m]));
            }
            fputs("\r\n", out);
        }
    }
}

static void table_samples(FILE *out, const struct export_request *req)
{
    static const char *const header[] = {"result", "run", "t_ns", "metric", "labels", "value",
                                         NULL};
    csv_header(out, header);
    for (size_t i = 0; i < req->n; i++) {
        const json_t *r = req->results[i];
        const json_t *runs = json_object_get(r, "runs");
        for (size_t k = 0; k < json_array_size(runs); k++) {
            if (req->run >= 0 && (size_t)req->run != k)
                continue;
            const json_t *samples = json_object_get(json_array_get(runs, k), "samples");
            const json_t *t = json_object_get(samples, "t_ns");
            const json_t *series = json_object_get(samples, "series");
            for (size_t s = 0; s < json_array_size(series); s++) {
                const json_t *x = json_array_get(series, s);
                const json_t *values = json_object_get(x, "values");
                for (size_t j = 0; j < json_array_size(t); j++) {
                    csv_field(out, jsonx_str(r, "id"));
                    fprintf(out, ",%zu,", k);
                    csv_num(out, jsonx_number(json_array_get(t, j)));
                    fputc(',', out);
                    csv_field(out, jsonx_str(x, "metric"));
                    fputc(',', out);
                    csv_field(out, jsonx_str(x, "labels"));
                    fputc(',', out);
                    csv_num(out, jsonx_number(json_array_get(values, j)));
                    fputs("\r\n", out);
                }
            }
        }
    }
}

/* ",baseline_ns,candidate_ns,change_pct,verdict" of one latency quantile (empty fields when
 * the stage has none). */
static void csv_latency(FILE *out, const json_t *q)
{
    static const char *const nums[] = {"baseline_ns", "candidate_ns", "change_pct"};
    for (size_t m = 0; m < 3; m++) {
        fputc(',', out);
        csv_num(out, jsonx_num(q, nums[m]));
    }
    fputc(',', out);
    csv_field(out, jsonx_str(q, "verdict"));
}

static int table_comparison(FILE *out, const struct export_request *req, char *err,
                            size_t errlen)
{
    static const char *const header[] = {
        "baseline", "candidate", "stage", "baseline_median_ns", "candidate_median_ns",
        "change_pct", "speedup", "ratio_ci_low", "ratio_ci_high", "p_value", "n_baseline",
        "n_candidate", "verdict", "statistical_verdict", "unreliable_reason",
        "p50_baseline_ns", "p50_candidate_ns", "p50_change_pct", "p50_verdict",
        "p99_baseline_ns", "p99_candidate_ns", "p99_change_pct", "p99_verdict", NULL};
    static const char *const nums[] = {"baseline_median_ns", "candidate_median_ns", "change_pct",
                                       "speedup", "ratio_ci_low", "ratio_ci_high", "p_value",
                                       "n_baseline", "n_candidate"};
    const json_t *c = req->comparison;
    if (!json_is_object(c)) {
        snprintf(err, errlen, "--table comparison needs two or more results to compare");
        return EXPORT_EREQUEST;
    }
    csv_header(out, header);
    const char *base = jsonx_str(json_object_get(c, "baseline"), "id");
    const json_t *cands = json_object_get(c, "candidates");
    for (size_t i = 0; i < json_array_size(cands); i++) {
        const json_t *cand = json_array_get(cands, i);
        const json_t *stages = json_object_get(cand, "stages");
        for (size_t k = 0; k < json_array_size(stages); k++) {
            const json_t *s = json_array_get(stages, k);
            csv_field(out, base);
            fputc(',', out);
            csv_field(out, jsonx_str(cand, "id"));
            fputc(',', out);
            csv_field(out, jsonx_str(s, "name"));
            for (size_t m = 0; m < sizeof nums / sizeof nums[0]; m++) {
                fputc(',', out);
                csv_num(out, jsonx_num(s, nums[m]));
            }
            static const char *const texts[] = {"verdict", "statistical_verdict",
                                                "unreliable_reason"};
            for (size_t m = 0; m < 3; m++) {
                fputc(',', out);
                csv_field(out, jsonx_str(s, texts[m]));
            }
            csv_latency(out, json_object_get(json_object_get(s, "latency"), "p50"));
            csv_latency(out, json_object_get(json_object_get(s, "latency"), "p99"));
            fputs("\r\n", out);
        }
    }
    return EXPORT_OK;
}

static int csv_write(FILE *out, const struct export_request *req, char *err, size_t errlen)
{
    const char *table = req->table ? req->table : "stages";
    int rc = export_check_run(req, err, errlen);
    if (rc != EXPORT_OK)
        return rc;
    if (req->run >= 0 && strcmp(table, "samples") != 0) {
        snprintf(err, errlen, "--run applies to --table samples only (this is --table %s)",
                 table);
        return EXPORT_EREQUEST;
    }
    if (!strcmp(table, "stages"))
        table_stages(out, req);
    else if (!strcmp(table, "runs"))
        table_runs(out, req);
    else if (!strcmp(table, "samples"))
        table_samples(out, req);
    else if (!strcmp(table, "comparison"))
        rc = table_comparison(out, req, err, errlen);
    else {
        snprintf(err, errlen, "--table '%s' is not a table: stages, runs, samples or "
                 "comparison", table);
        return EXPORT_EREQUEST;
    }
    if (rc != EXPORT_OK)
        return rc;
    return export_finish(out, "the CSV table", err, errlen);
}

const struct exporter export_csv = {
    .name = "csv",
    .alias = NULL,
    .extension = "csv",
    .description = "CSV tables (RFC 4180): --table stages, runs, samples or comparison",
    .uses = EXPORT_USES_RUN | EXPORT_USES_TABLE,
    .write = csv_write,
};
