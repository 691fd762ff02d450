/* csv.c: CSV tables (--format csv) for spreadsheets and data frames, RFC 4180: a header
 * line, CRLF line ends, fields holding a comma, a double quote or a line break quoted with
 * quotes doubled, text that would start a formula neutralised with a leading ', empty fields
 * for values that were not measured. One table per file, chosen
 * with --table: stages (the default: the summary of each stage), runs (one row per run),
 * samples (every resource sample, long format), comparison (stage changes, several results),
 * sweep (one row per point of a sweep, its parameters as columns: the default for a sweep),
 * load (one row per scenario run of a load result), load-seconds (one row per second of each
 * load run that counts).
 * Every table starts with the result id (the sweep table with the sweep id), so the tables of
 * several results concatenate. */
#include "export/export.h"
#include "doc/load.h"
#include "doc/sweep.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* A text field (export.h). One that a spreadsheet would take for a formula (it starts with = +
 * - @, a tab or a carriage return: OWASP's CSV-injection rule) gets a leading ' and quotes, so a
 * stage named =HYPERLINK(...) stays text. Numbers are written by export_csv_num, never through
 * here. */
void export_csv_field(FILE *out, const char *text)
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

/* A number field (export.h): exact digits, empty when not measured. */
void export_csv_num(FILE *out, double v)
{
    if (isfinite(v)) {
        char buf[40];
        fputs(export_fmt_exact(v, buf, sizeof buf), out);
    }
}

/* An array of strings as one field, "; " between them (bounded: a hostile file cannot make
 * a field of gigabytes). */
static void strings_field(FILE *out, const json_t *arr)
{
    struct strbuf b = STRBUF_INIT;
    for (size_t k = 0; k < json_array_size(arr) && b.len < 65536; k++) {
        const char *w = json_string_value(json_array_get(arr, k));
        strbuf_printf(&b, "%s%s", k ? "; " : "", w ? w : "?");
    }
    export_csv_field(out, b.s);
    strbuf_free(&b);
}

/* The header line: names up to NULL. */
static void csv_header(FILE *out, const char *const *names)
{
    for (size_t i = 0; names[i]; i++) {
        if (i)
            fputc(',', out);
        export_csv_field(out, names[i]);
    }
    fputs("\r\n", out);
}

static void stats_fields(FILE *out, const struct doc_stats *st)
{
    const double v[] = {st->median, st->ci_low, st->ci_high, st->ci_level, st->mean,
                        st->stddev, st->mad, st->min, st->max, st->cv};
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
        fputc(',', out);
        export_csv_num(out, v[k]);
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
        const struct doc_result *r = req->docs[i];
        const struct doc_summary *s = &r->summary;
        for (size_t k = 0; k < s->n_stages; k++) {
            const struct doc_stage *st = &s->stages[k];
            export_csv_field(out, r->id);
            fputc(',', out);
            export_csv_field(out, r->label);
            fputs(",stage,", out);
            export_csv_field(out, st->name);
            fprintf(out, ",%d,%lld", st->depth, st->n);
            stats_fields(out, &st->active);
            const double more[] = {st->share, st->busy_ns_median, st->span_ns_median,
                                   st->count_median};
            for (size_t m = 0; m < sizeof more / sizeof more[0]; m++) {
                fputc(',', out);
                export_csv_num(out, more[m]);
            }
            fputs("\r\n", out);
        }
        if (!s->wall.present)
            continue;
        /* the whole run: scope "run", named total as in the analysis */
        export_csv_field(out, r->id);
        fputc(',', out);
        export_csv_field(out, r->label);
        fprintf(out, ",run,total,0,%lld", s->wall.n);
        stats_fields(out, &s->wall);
        fputs(",1,,,\r\n", out);
    }
}

static void table_runs(FILE *out, const struct export_request *req)
{
    static const char *const header[] = {
        "result", "run", "warmup", "status", "exit_code", "signal", "wall_ns", "user_ns",
        "sys_ns", "max_rss_bytes", "outside_ns", NULL};
    csv_header(out, header);
    for (size_t i = 0; i < req->n; i++) {
        const struct doc_result *r = req->docs[i];
        for (size_t k = 0; k < r->n_runs; k++) {
            const struct doc_run *run = &r->runs[k];
            export_csv_field(out, r->id);
            fprintf(out, ",%zu,%s,", k, run->warmup ? "true" : "false");
            export_csv_field(out, run->status);
            fputc(',', out);
            export_csv_num(out, run->exit_code);
            fputc(',', out);
            export_csv_field(out, run->signal);
            const double nums[] = {run->wall_ns, run->user_ns, run->sys_ns, run->max_rss_bytes,
                                   run->outside_ns};
            for (size_t m = 0; m < sizeof nums / sizeof nums[0]; m++) {
                fputc(',', out);
                export_csv_num(out, nums[m]);
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
        const struct doc_result *r = req->docs[i];
        for (size_t k = 0; k < r->n_runs; k++) {
            if (req->run >= 0 && (size_t)req->run != k)
                continue;
            const struct doc_run *run = &r->runs[k];
            size_t nt = doc_run_n_samples(run);
            for (size_t s = 0; s < doc_run_n_series(run); s++) {
                struct doc_series x;
                doc_run_series_at(run, s, &x);
                for (size_t j = 0; j < nt; j++) {
                    export_csv_field(out, r->id);
                    fprintf(out, ",%zu,", k);
                    export_csv_num(out, doc_run_sample_t(run, j));
                    fputc(',', out);
                    export_csv_field(out, x.metric);
                    fputc(',', out);
                    export_csv_field(out, x.labels);
                    fputc(',', out);
                    export_csv_num(out, doc_series_value(&x, j));
                    fputs("\r\n", out);
                }
            }
        }
    }
}

/* ",baseline_ns,candidate_ns,change_pct,verdict" of one latency quantile (empty fields when
 * the stage has none). */
static void csv_latency(FILE *out, const struct doc_cmp_quantile *q)
{
    const double nums[] = {q->baseline_ns, q->candidate_ns, q->change_pct};
    for (size_t m = 0; m < 3; m++) {
        fputc(',', out);
        export_csv_num(out, nums[m]);
    }
    fputc(',', out);
    export_csv_field(out, q->verdict);
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
    const struct doc_comparison *c = req->cmp;
    if (!c) {
        snprintf(err, errlen, "--table comparison needs two or more results to compare");
        return EXPORT_EREQUEST;
    }
    csv_header(out, header);
    for (size_t i = 0; i < c->n_candidates; i++) {
        const struct doc_cmp_candidate *cand = &c->candidates[i];
        for (size_t k = 0; k < cand->n_stages; k++) {
            const struct doc_cmp_stage *s = &cand->stages[k];
            export_csv_field(out, c->baseline.id);
            fputc(',', out);
            export_csv_field(out, cand->who.id);
            fputc(',', out);
            export_csv_field(out, s->name);
            const double nums[] = {s->baseline_median_ns, s->candidate_median_ns, s->change_pct,
                                   s->speedup, s->ratio_ci_low, s->ratio_ci_high, s->p_value,
                                   (double)s->n_baseline, (double)s->n_candidate};
            for (size_t m = 0; m < sizeof nums / sizeof nums[0]; m++) {
                fputc(',', out);
                export_csv_num(out, nums[m]);
            }
            const char *const texts[] = {s->verdict, s->statistical_verdict,
                                         s->unreliable_reason};
            for (size_t m = 0; m < 3; m++) {
                fputc(',', out);
                export_csv_field(out, texts[m]);
            }
            csv_latency(out, &s->latency.p50);
            csv_latency(out, &s->latency.p99);
            fputs("\r\n", out);
        }
    }
    return EXPORT_OK;
}

/* ",v1,v2,...": number fields. */
static void csv_nums(FILE *out, const double *v, size_t n)
{
    for (size_t m = 0; m < n; m++) {
        fputc(',', out);
        export_csv_num(out, v[m]);
    }
}

/* One row per point: sweep id, point, name, each parameter as its own column (a parameter
 * named like a fixed column gets "parameter_" before its name), status, then the figures. */
static int table_sweep(FILE *out, const struct export_request *req, char *err, size_t errlen)
{
    static const char *const fixed[] = {
        "sweep", "point", "name", "status", "status_detail", "result_id", "runs_measured",
        "runs_ok", "total_median_ns", "total_ci_low_ns", "total_ci_high_ns", "total_n",
        "bottleneck_stage", "bottleneck_verdict", "bottleneck_share", "bottleneck_median_ns",
        "peak_memory_bytes", "gpu_memory_peak_bytes", "gpu_utilization_mean", "cost_per_run",
        "currency", "objective_value", "constraints_met", "constraint_failures", "winner",
        "warnings"};
    const struct doc_sweep *sw = req->sweep_doc;
    if (!sw || !sw->json) {
        snprintf(err, errlen, "--table sweep needs a sweep (a sweep document, or sweep:ID)");
        return EXPORT_EREQUEST;
    }
    const struct doc_sweep_columns *c = &sw->columns;
    size_t nfixed = sizeof fixed / sizeof fixed[0];
    for (size_t i = 0; i < nfixed; i++) {
        if (i == 3)
            for (size_t k = 0; k < c->nparams; k++) {
                bool clash = false;
                for (size_t j = 0; j < nfixed && !clash; j++)
                    clash = !strcmp(fixed[j], c->param[k]);
                fputc(',', out);
                char *h = clash ? xasprintf("parameter_%s", c->param[k]) : NULL;
                export_csv_field(out, h ? h : c->param[k]);
                free(h);
            }
        if (i)
            fputc(',', out);
        export_csv_field(out, fixed[i]);
    }
    for (size_t k = 0; k < c->ncounters; k++) {
        char *h = xasprintf("%s%s", c->counter[k], c->counter_count[k] ? "_per_s" : "_last");
        fputc(',', out);
        export_csv_field(out, h);
        free(h);
    }
    fputs("\r\n", out);
    for (size_t i = 0; i < sw->n_points; i++) {
        const struct doc_sweep_point *p = &sw->points[i];
        const struct doc_sweep_figures *f = &p->figures;
        const struct doc_sweep_bottleneck *bn = &f->bottleneck;
        export_csv_field(out, sw->id);
        fputc(',', out);
        export_csv_num(out, (double)p->index);
        fputc(',', out);
        char *name = doc_sweep_point_name(p);
        export_csv_field(out, name);
        free(name);
        for (size_t k = 0; k < c->nparams; k++) {
            const json_t *v = doc_sweep_parameter(p, c->param[k]);
            fputc(',', out);
            if (json_is_string(v))
                export_csv_field(out, json_string_value(v));
            else
                export_csv_num(out, jsonx_number(v));
        }
        const char *const texts[] = {p->status, p->status_detail, p->result_id};
        for (size_t m = 0; m < 3; m++) {
            fputc(',', out);
            export_csv_field(out, texts[m]);
        }
        const double nums[] = {p->runs_measured, p->runs_ok, f->total_median_ns,
                               f->total_ci_low_ns, f->total_ci_high_ns, f->total_n};
        csv_nums(out, nums, sizeof nums / sizeof nums[0]);
        fputc(',', out);
        export_csv_field(out, bn->stage);
        fputc(',', out);
        export_csv_field(out, bn->verdict);
        const double more[] = {bn->share, bn->median_ns, f->peak_memory_bytes,
                               f->gpu_memory_peak_bytes, f->gpu_utilization_mean,
                               f->cost_per_run};
        csv_nums(out, more, sizeof more / sizeof more[0]);
        fputc(',', out);
        if (isfinite(f->cost_per_run))
            export_csv_field(out, c->currency);
        fputc(',', out);
        export_csv_num(out, p->objective_value);
        fputs(p->constraints_met == 1 ? ",true," : p->constraints_met == 0 ? ",false," : ",,",
              out);
        strings_field(out, p->constraint_failures);
        struct strbuf b = STRBUF_INIT;
        fputs(doc_sweep_is_winner(sw, p) ? ",true," : ",false,", out);
        for (size_t k = 0; k < p->n_warnings && b.len < 65536; k++)
            strbuf_printf(&b, "%s%s", k ? " " : "", str_or(p->warnings[k].code, "?"));
        export_csv_field(out, b.s);
        strbuf_free(&b);
        for (size_t k = 0; k < c->ncounters; k++) {
            const struct doc_sweep_counter *kc = doc_sweep_counter(f, c->counter[k]);
            fputc(',', out);
            export_csv_num(out, !kc ? NAN : c->counter_count[k] ? kc->rate_per_s
                                                                : kc->last_median);
        }
        fputs("\r\n", out);
    }
    return EXPORT_OK;
}

/* The fields every load row starts with: result, run, role. */
static void load_row_start(FILE *out, const struct doc_result *result, size_t k,
                           const struct doc_load_run *x)
{
    export_csv_field(out, result->id);
    fprintf(out, ",%zu,", k);
    export_csv_field(out, x->role);
}

static void load_run_row(FILE *out, const struct doc_result *result, size_t k,
                         const struct doc_load_run *x)
{
    const struct doc_latency *l = &x->latency;
    load_row_start(out, result, k, x);
    fprintf(out, ",%s,", x->counts ? "true" : "false");
    export_csv_field(out, x->scenario);
    const double nums[] = {x->target_qps, x->duration_s, (double)x->queries,
                           (double)x->completed, (double)x->failed, x->throughput_qps,
                           x->percentile, l->p50, l->p90, l->p95, l->p99, l->p999, l->max,
                           l->mean, x->early_estimate_s};
    csv_nums(out, nums, sizeof nums / sizeof nums[0]);
    fprintf(out, ",%s,", x->valid ? "true" : "false");
    strings_field(out, x->invalid_reasons);
    fputs("\r\n", out);
}

static void load_second_rows(FILE *out, const struct doc_result *result, size_t k,
                             const struct doc_load_run *x)
{
    for (size_t j = 0; j < doc_load_n_seconds(x); j++) {
        struct doc_load_second sec;
        doc_load_second(x, j, &sec);
        load_row_start(out, result, k, x);
        fputc(',', out);
        export_csv_field(out, x->scenario);
        const double nums[] = {x->target_qps, sec.t_s, sec.completed, sec.failed, sec.p50_s,
                               sec.p90_s, sec.p99_s, sec.max_s};
        csv_nums(out, nums, sizeof nums / sizeof nums[0]);
        fputs("\r\n", out);
    }
}

/* --table load: one row per scenario run of each load result; --table load-seconds: one row
 * per second of each run that counts (docs/reports.md#load-results). Probes and warm-up runs
 * are in the first (counts=false), not in the second. */
static int table_load(FILE *out, const struct export_request *req, bool seconds, char *err,
                      size_t errlen)
{
    static const char *const runs_header[] = {
        "result", "run", "role", "counts", "scenario", "target_qps", "duration_s", "queries",
        "completed", "failed", "throughput_qps", "percentile", "p50_s", "p90_s", "p95_s",
        "p99_s", "p99.9_s", "max_s", "mean_s", "early_stopping_s", "valid", "invalid_reasons",
        NULL};
    static const char *const seconds_header[] = {"result", "run", "role", "scenario",
                                                 "target_qps", "t_s", "completed", "failed",
                                                 "p50_s", "p90_s", "p99_s", "max_s", NULL};
    bool any = false;
    for (size_t i = 0; i < req->n; i++)
        any |= req->loads[i]->present;
    if (!any) {
        snprintf(err, errlen, "--table %s needs a load result (made by mlbench load)",
                 seconds ? "load-seconds" : "load");
        return EXPORT_EREQUEST;
    }
    csv_header(out, seconds ? seconds_header : runs_header);
    for (size_t i = 0; i < req->n; i++) {
        const struct doc_load *load = req->loads[i];
        for (size_t k = 0; k < load->n_runs; k++) {
            if (!seconds)
                load_run_row(out, req->docs[i], k, &load->runs[k]);
            else if (load->runs[k].counts)
                load_second_rows(out, req->docs[i], k, &load->runs[k]);
        }
    }
    return EXPORT_OK;
}

static int csv_write(FILE *out, const struct export_request *req, char *err, size_t errlen)
{
    const char *table = req->table ? req->table : req->sweep ? "sweep" : "stages";
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
    else if (!strcmp(table, "sweep"))
        rc = table_sweep(out, req, err, errlen);
    else if (!strcmp(table, "load") || !strcmp(table, "load-seconds"))
        rc = table_load(out, req, !strcmp(table, "load-seconds"), err, errlen);
    else {
        snprintf(err, errlen, "--table '%s' is not a table: stages, runs, samples, comparison, "
                 "sweep, load or load-seconds", table);
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
    .description = "CSV tables (RFC 4180): --table stages, runs, samples, comparison, sweep, "
                   "load or load-seconds",
    .uses = EXPORT_USES_RUN | EXPORT_USES_TABLE,
    .write = csv_write,
};
