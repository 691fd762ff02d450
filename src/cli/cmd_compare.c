/* cmd_compare: `mlbench compare A B [C...]`: resolves the references, loads the results,
 * compares every one after the first with the first (analysis/compare.c), prints a text table or the
 * JSON comparison document, and applies the CI gates. docs/compare.md describes it all.
 * Exit status: 0, 1 when a gate fails, 2 for bad options or a result that cannot be loaded. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/compare_load_text.h"
#include "cli/options.h"
#include "analysis/compare.h"
#include "util/log.h"
#include "doc/result_file.h"
#include "util/units.h"
#include "util/xalloc.h"
#include "export/export.h"
#include "store/store.h"
#include "store/sweeps.h"
#include "util/jsonx.h"
#include "util/term.h"

static const char usage[] =
    "Usage: mlbench compare [options] BASELINE CANDIDATE [CANDIDATE...]\n"
    "\n"
    "Compares each CANDIDATE with BASELINE, stage by stage and in total: medians, change,\n"
    "speedup, a bootstrap interval of the ratio of medians, a Mann-Whitney test and a verdict\n"
    "('unreliable' when a disturbance of the slower side, shown in its quality warnings, could\n"
    "explain the difference); p50/p99 span latency of stages with 20 spans or more; then\n"
    "counters, metadata, resources and differences of environment.\n"
    "A result is a file (a path with '/' or ending in .json), or in the store: an id, a unique\n"
    "id prefix, a label (its newest result) or 'latest'. A sweep (sweep:ID, latest-sweep or a\n"
    "sweep document's file), given alone: every point against the first (or --reference).\n"
    "\n"
    "      --alpha A               significance level, 0 < A < 1 (default 0.05)\n"
    "      --min-effect PCT        smallest change that counts, in percent (default 2)\n"
    "      --fail-if-slower PCT    exit 1 when the total (or --stage) is significantly slower\n"
    "                              by more than PCT percent (an unreliable slowdown: a note)\n"
    "      --stage NAME            the stage --fail-if-slower checks instead of the total\n"
    "      --max-accuracy-drop P   exit 1 when counter 'accuracy' drops by more than P\n"
    "                              percentage points (values in 0..1 are fractions)\n"
    "      --json                  print the comparison as JSON (mlbench.comparison/1)\n"
    "      --format FMT            text (default), json, or md/html (a comparison report)\n"
    "      --resamples N           bootstrap resamples (default 10000)\n"
    "      --seed N                bootstrap seed (default fixed: the same results always give\n"
    "                              the same intervals)\n"
    "      --reference NAME        with a sweep: the point the others are compared with\n"
    "      --store DIR             result store, a directory or postgresql://host/db\n"
    "                              (default .mlbench, or $MLBENCH_STORE)\n"
    "  -h, --help                  this text\n"
    "\n"
    "Exit status: 0; 1 when a gate fails (the reason is printed); 2 for bad options or a\n"
    "result that cannot be found or read. Method and examples: docs/compare.md.\n";

struct compare_cli {
    struct compare_options opt;
    struct compare_gates gates;
    bool json;
    const struct exporter *exporter; /* --format md|html */
    const char *store;
    const char *reference;     /* --reference: a sweep's point */
    char **refs;
    size_t n_refs;
};

/* --format: the last of --format and --json decides between text and JSON; md and html are
 * the comparison sections of a report (as mlbench report A B). */
static int set_format(void *dest, const char *value, char *err, size_t errlen)
{
    struct compare_cli *c = dest;
    (void)err;
    (void)errlen;
    c->exporter = NULL;
    if (!strcmp(value, "json"))
        c->json = true;
    else if (!strcmp(value, "text"))
        c->json = false;
    else if ((!strcmp(value, "md") || !strcmp(value, "html")) &&
             (c->exporter = export_find(value)) != NULL)
        c->json = false;
    else
        return -1;
    return 0;
}

#define PCT_EXPECTED "is not a percentage >= 0 (e.g. 5 or 5%)"

/* A reference written as a file's path (one that names no file may still be a label, such as
 * a pytest test id: store_load decides). */
static int is_file_ref(const char *ref)
{
    size_t len = strlen(ref);
    return strchr(ref, '/') || (len >= 5 && !strcmp(ref + len - 5, ".json"));
}

static int parse_args(int argc, char **argv, struct compare_cli *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    compare_options_default(&c->opt);
    c->gates.fail_if_slower_pct = -1;
    c->gates.max_accuracy_drop = -1;
    c->store = store_default_dir();

    const struct cli_option table[] = {
        CLI_OPT_ALPHA(&c->opt.alpha),
        CLI_OPT_MIN_EFFECT(&c->opt.min_effect_pct),
        CLI_OPT_NUMBER("fail-if-slower", 0, &c->gates.fail_if_slower_pct, 0, INFINITY,
                       CLI_PERCENT, PCT_EXPECTED),
        CLI_OPT_STRING("stage", 0, &c->gates.stage, CLI_NONEMPTY, "is empty: give a stage name"),
        CLI_OPT_NUMBER("max-accuracy-drop", 0, &c->gates.max_accuracy_drop, 0, 100, 0,
                       "is not a number of percentage points from 0 to 100 (e.g. 0.5)"),
        CLI_OPT_FLAG("json", 0, &c->json),
        CLI_OPT_CALL("format", 0, c, set_format, "is not text, json, md or html"),
        CLI_OPT_INTEGER("resamples", 0, &c->opt.resamples, 100, 10000000, 0, NULL),
        CLI_OPT_INTEGER("seed", 0, &c->opt.seed, 0, INT64_MAX, CLI_C_INTEGER,
                        "is not a whole number from 0 to 2^63 - 1"),
        CLI_OPT_STRING("reference", 0, &c->reference, CLI_NONEMPTY, "is empty: give a point's name"),
        CLI_OPT_STORE(&c->store),
        CLI_OPT_END,
    };
    const struct cli_parser parser = {"compare", table, 0, usage};
    struct cli_args args;
    int rc = cli_options_parse(&parser, argc, argv, &args, err, errlen);
    if (rc != CLI_OK)
        return rc;
    c->refs = args.v;
    c->n_refs = (size_t)args.n;
    for (size_t i = 0; i < c->n_refs; i++)
        if (store_is_sweep_ref(c->refs[i]) && c->n_refs > 1) {
            snprintf(err, errlen, "'%s' is a sweep: give it alone (its points are compared with "
                     "each other)", c->refs[i]);
            return CLI_ERROR;
        }
    if (c->n_refs == 1 && store_is_sweep_ref(c->refs[0]))
        return CLI_OK;
    if (c->n_refs < 2 && !(c->n_refs == 1 && is_file_ref(c->refs[0]))) {
        snprintf(err, errlen, "at least two results are needed, a baseline and a candidate "
                 "(got %zu%s%s%s), e.g. mlbench compare base.json new.json", c->n_refs,
                 c->n_refs ? ": '" : "", c->n_refs ? c->refs[0] : "", c->n_refs ? "'" : "");
        return CLI_ERROR;
    }
    if (c->gates.stage && c->gates.fail_if_slower_pct < 0) {
        snprintf(err, errlen, "--stage '%s' only chooses what --fail-if-slower checks: give "
                 "--fail-if-slower PCT too", c->gates.stage);
        return CLI_ERROR;
    }
    return CLI_OK;
}

/* ---- text output ---- */

/* The text comparison is composed here, then written to stdout through term_clean: names and
 * labels come from result files, which may be anybody's, and must not drive the terminal. */
static FILE *text_out;

static void put_cell(const char *s, int width, int right)
{
    int pad = width - term_cols(s);
    if (right)
        fprintf(text_out, "%*s%s", pad > 0 ? pad : 0, "", s);
    else
        fprintf(text_out, "%s%*s", s, pad > 0 ? pad : 0, "");
}

#define DASH "\u2014"

static void fmt_duration(double ns, char *buf, size_t len)
{
    if (isfinite(ns))
        units_duration(ns, buf, len);
    else
        snprintf(buf, len, DASH);
}

static void fmt_change(double pct, char *buf, size_t len)
{
    if (!isfinite(pct))
        snprintf(buf, len, DASH);
    else if (pct < 0)
        snprintf(buf, len, "\u2212%.1f %%", -pct); /* U+2212 minus sign */
    else
        snprintf(buf, len, "+%.1f %%", pct);
}

enum { COL_STAGE, COL_BASE, COL_ARROW, COL_CAND, COL_CHANGE, COL_SPEEDUP, COL_CI, COL_P,
       COL_VERDICT, COL_RUNS, N_COLS };
static const int col_right[N_COLS] = {0, 1, 0, 1, 1, 1, 0, 0, 0, 1};

struct cells {
    char c[N_COLS][96];
};

static void stage_cells(const json_t *row, struct cells *out)
{
    memset(out, 0, sizeof *out);
    int depth = (int)jsonx_count(row, "depth", 1000, 0);
    depth = depth > 8 ? 8 : depth; /* deeper nesting is shown at depth 8 */
    snprintf(out->c[COL_STAGE], sizeof out->c[0], "%*s%s", 2 * depth, "",
             jsonx_str(row, "name") ? jsonx_str(row, "name") : "?");
    fmt_duration(jsonx_num(row, "baseline_median_ns"), out->c[COL_BASE], sizeof out->c[0]);
    snprintf(out->c[COL_ARROW], sizeof out->c[0], "\u2192");
    fmt_duration(jsonx_num(row, "candidate_median_ns"), out->c[COL_CAND], sizeof out->c[0]);
    fmt_change(jsonx_num(row, "change_pct"), out->c[COL_CHANGE], sizeof out->c[0]);
    double s = jsonx_num(row, "speedup"), lo = jsonx_num(row, "ratio_ci_low"), hi = jsonx_num(row, "ratio_ci_high");
    double p = jsonx_num(row, "p_value");
    snprintf(out->c[COL_SPEEDUP], sizeof out->c[0], isfinite(s) ? "%.2f\u00d7" : DASH, s);
    if (isfinite(lo) && isfinite(hi))
        snprintf(out->c[COL_CI], sizeof out->c[0], "[%.3f, %.3f]", lo, hi);
    if (isfinite(p))
        snprintf(out->c[COL_P], sizeof out->c[0], p < 0.001 ? "p<0.001" : "p=%.3f", p);
    snprintf(out->c[COL_VERDICT], sizeof out->c[0], "%s", jsonx_str(row, "verdict"));
    snprintf(out->c[COL_RUNS], sizeof out->c[0], "%lld/%lld",
             (long long)json_integer_value(json_object_get(row, "n_baseline")),
             (long long)json_integer_value(json_object_get(row, "n_candidate")));
}

static void print_stage_table(const json_t *stages, double ci_level)
{
    size_t n = json_array_size(stages);
    struct cells *rows = xcalloc(n + 1, sizeof *rows);
    const char *head[N_COLS] = {"stage", "baseline", "", "candidate", "change", "speedup", NULL,
                                "p", "verdict", "runs"};
    char ci_head[64];
    snprintf(ci_head, sizeof ci_head, "ratio %g %% CI", ci_level * 100);
    head[COL_CI] = ci_head;
    for (int k = 0; k < N_COLS; k++)
        snprintf(rows[0].c[k], sizeof rows[0].c[k], "%s", head[k]);
    for (size_t i = 0; i < n; i++)
        stage_cells(json_array_get(stages, i), &rows[i + 1]);
    int width[N_COLS] = {0};
    for (size_t i = 0; i <= n; i++)
        for (int k = 0; k < N_COLS; k++)
            if (term_cols(rows[i].c[k]) > width[k])
                width[k] = term_cols(rows[i].c[k]);
    for (size_t i = 0; i <= n; i++) {
        fputs("  ", text_out);
        for (int k = 0; k < N_COLS; k++) {
            if (k == COL_VERDICT && i > 0)
                term_put_verdict(text_out, rows[i].c[k], k + 1 < N_COLS ? width[k] : 0);
            else
                put_cell(rows[i].c[k], width[k], col_right[k] && i > 0);
            if (k + 1 < N_COLS)
                fputs(k == COL_BASE || k == COL_ARROW ? " " : "  ", text_out);
        }
        fputc('\n', text_out);
    }
    free(rows);
}

/* "quality of the baseline:  high_cv ×2, other_load" (the codes of one side's measurement
 * quality warnings, each once with how often), or nothing when the side has none. */
static void print_quality(const char *role, const json_t *warnings)
{
    size_t n = json_array_size(warnings), i, k;
    if (!n)
        return;
    fprintf(text_out, "%s quality: ", role);
    const char *sep = "";
    for (i = 0; i < n; i++) {
        const char *code = jsonx_str(json_array_get(warnings, i), "code");
        int seen = 0, times = 0;
        for (k = 0; k < n; k++) {
            const char *other = jsonx_str(json_array_get(warnings, k), "code");
            if (code && other && !strcmp(code, other))
                seen |= k < i, times++;
        }
        if (!code || seen)
            continue;
        fprintf(text_out, times > 1 ? "%s%s \u00d7%d" : "%s%s", sep, code, times);
        sep = ", ";
    }
    fputc('\n', text_out);
}

/* Under the stage table: why each unreliable verdict is unreliable, and how to do better. */
static void print_unreliable(const json_t *c)
{
    size_t i;
    const json_t *row;
    int any = 0;
    json_array_foreach(json_object_get(c, "stages"), i, row) {
        const char *why = jsonx_str(row, "unreliable_reason");
        if (!why)
            continue;
        if (!any++)
            fputc('\n', text_out);
        fprintf(text_out, "%s: unreliable (statistically %s): %s\n", jsonx_str(row, "name"),
                jsonx_str(row, "statistical_verdict") ? jsonx_str(row, "statistical_verdict")
                                                      : "?", why);
    }
    if (jsonx_str(c, "clean_answer"))
        fprintf(text_out, "for a clean answer, %s\n", jsonx_str(c, "clean_answer"));
}

/* One line of the latency table: "  step  p50  12.2 ms → 30.8 ms  +151.8 %  [2.271, 2.618]
 * unreliable". */
static void print_quantile(const char *stage, int w, const char *q, const json_t *x)
{
    char b[32], c[32], ch[32], ci[64] = "";
    fmt_duration(jsonx_num(x, "baseline_ns"), b, sizeof b);
    fmt_duration(jsonx_num(x, "candidate_ns"), c, sizeof c);
    fmt_change(jsonx_num(x, "change_pct"), ch, sizeof ch);
    double lo = jsonx_num(x, "ratio_ci_low"), hi = jsonx_num(x, "ratio_ci_high");
    if (isfinite(lo) && isfinite(hi))
        snprintf(ci, sizeof ci, "[%.3f, %.3f]", lo, hi);
    fputs("  ", text_out);
    put_cell(stage, w, 0);
    fprintf(text_out, "  %s  ", q);
    put_cell(b, 10, 1);
    fputs(" \u2192 ", text_out);
    put_cell(c, 10, 1);
    fputs("  ", text_out);
    put_cell(ch, 9, 1);
    fputs("  ", text_out);
    put_cell(ci, 16, 0);
    fputs("  ", text_out);
    term_put_verdict(text_out, jsonx_str(x, "verdict"), 0);
    fputc('\n', text_out);
}

/* p50 and p99 of the stages that have a latency comparison (>= 20 spans on each side). */
static void print_latency(const json_t *stages, double ci_level)
{
    size_t i;
    const json_t *row;
    int w = 0, any = 0;
    json_array_foreach(stages, i, row)
        if (json_is_object(json_object_get(row, "latency")) && jsonx_str(row, "name") &&
            term_cols(jsonx_str(row, "name")) > w)
            w = term_cols(jsonx_str(row, "name")), any = 1;
    if (!any)
        return;
    fprintf(text_out, "\nspan latency (spans of all runs pooled; ratio %g %% CI of the quantiles)\n",
            ci_level * 100);
    json_array_foreach(stages, i, row) {
        const json_t *lat = json_object_get(row, "latency");
        if (!json_is_object(lat))
            continue;
        print_quantile(jsonx_str(row, "name"), w, "p50", json_object_get(lat, "p50"));
        print_quantile("", w, "p99", json_object_get(lat, "p99"));
        fprintf(text_out, "  %*s  (%lld / %lld spans)\n", w, "",
                jsonx_int(lat, "n_baseline", 0), jsonx_int(lat, "n_candidate", 0));
    }
}

/* A JSON scalar as text ("—" for absent/null). */
static void fmt_scalar(const json_t *v, char *buf, size_t len)
{
    if (json_is_string(v))
        snprintf(buf, len, "%s", json_string_value(v));
    else if (json_is_integer(v))
        snprintf(buf, len, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, len, "%.6g", json_real_value(v));
    else if (json_is_boolean(v))
        snprintf(buf, len, "%s", json_is_true(v) ? "true" : "false");
    else
        snprintf(buf, len, DASH);
}

static void fmt_resource(const char *metric, double v, char *buf, size_t len)
{
    if (!isfinite(v))
        snprintf(buf, len, DASH);
    else if (!strncmp(metric, "process_cpu_seconds_total", 25))
        snprintf(buf, len, "%.2f cores", v);
    else if (strstr(metric, "_ratio"))
        snprintf(buf, len, "%.0f %%", v * 100);
    else if (strstr(metric, "_bytes"))
        units_bytes(v, buf, len);
    else
        snprintf(buf, len, "%.4g", v);
}

static const char *resource_title(const char *metric)
{
    if (!strncmp(metric, "process_cpu_seconds_total", 25))
        return "cores busy (mean)";
    if (!strncmp(metric, "process_resident_bytes", 22))
        return "memory (peak)";
    if (!strncmp(metric, "gpu_utilization_ratio", 21))
        return "GPU busy (mean)";
    if (!strncmp(metric, "gpu_memory_used_bytes", 21))
        return "GPU memory (peak)";
    return metric;
}

/* Rows "  name   a → b" with the name column as wide as the widest name. */
static void print_pairs(const char *title, const json_t *rows, const char *name_key,
                        const char *value_kind)
{
    if (!json_array_size(rows))
        return;
    int w = 0;
    size_t i;
    const json_t *r;
    json_array_foreach(rows, i, r) {
        const char *name = jsonx_str(r, name_key);
        if (name && term_cols(name) > w)
            w = term_cols(name);
    }
    fprintf(text_out, "\n%s\n", title);
    json_array_foreach(rows, i, r) {
        char b[256], c[256];
        const json_t *vb = json_object_get(r, "baseline"), *vc = json_object_get(r, "candidate");
        fmt_scalar(vb, b, sizeof b);
        fmt_scalar(vc, c, sizeof c);
        fputs("  ", text_out);
        put_cell(jsonx_str(r, name_key) ? jsonx_str(r, name_key) : "?", w, 0);
        int same = json_equal((json_t *)vb, (json_t *)vc);
        fprintf(text_out, "  %s \u2192 %s%s\n", b, c,
               !strcmp(value_kind, "env") ? (json_is_true(json_object_get(r, "matters"))
                                                 ? "   (matters)" : "")
               : same                     ? ""
                                          : "   (differs)");
    }
}

static void print_resources(const json_t *rows)
{
    if (!json_array_size(rows))
        return;
    int ws = 0, wm = 0;
    size_t i;
    const json_t *r;
    json_array_foreach(rows, i, r) {
        const char *s = jsonx_str(r, "stage"), *m = jsonx_str(r, "metric");
        if (s && term_cols(s) > ws)
            ws = term_cols(s);
        if (m && term_cols(resource_title(m)) > wm)
            wm = term_cols(resource_title(m));
    }
    fprintf(text_out, "\nresources\n");
    const char *last_stage = "";
    json_array_foreach(rows, i, r) {
        const char *s = jsonx_str(r, "stage"), *m = jsonx_str(r, "metric");
        if (!s || !m)
            continue;
        char b[64], c[64];
        fmt_resource(m, jsonx_num(r, "baseline"), b, sizeof b);
        fmt_resource(m, jsonx_num(r, "candidate"), c, sizeof c);
        fputs("  ", text_out);
        put_cell(strcmp(s, last_stage) ? s : "", ws, 0);
        fputs("  ", text_out);
        put_cell(resource_title(m), wm, 0);
        const char *labels = strchr(m, '{');
        fprintf(text_out, "  %s \u2192 %s%s%s\n", b, c, labels ? "   " : "", labels ? labels : "");
        last_stage = s;
    }
}

static const char *display_name(const json_t *who)
{
    const char *s = jsonx_str(who, "label");
    return s ? s : jsonx_str(who, "id") ? jsonx_str(who, "id") : "?";
}

static void print_who(const char *role, const json_t *who)
{
    fprintf(text_out, "%s %s", role, display_name(who));
    if (jsonx_str(who, "label") && jsonx_str(who, "id"))
        fprintf(text_out, " (%s)", jsonx_str(who, "id"));
    if (jsonx_str(who, "path"))
        fprintf(text_out, "  %s", jsonx_str(who, "path"));
    fputc('\n', text_out);
}

/* Says when the stage rows cannot be compared: no stage in common, or one side without any. */
static void print_stage_note(const json_t *c)
{
    if (json_integer_value(json_object_get(c, "common_stages")) > 0)
        return;
    size_t only_base = 0, only_cand = 0, i;
    const json_t *row;
    json_array_foreach(json_object_get(c, "stages"), i, row) {
        const char *v = jsonx_str(row, "verdict");
        only_base += v && !strcmp(v, "missing in candidate");
        only_cand += v && !strcmp(v, "missing in baseline");
    }
    if (only_base && only_cand)
        fprintf(text_out, "note: the results have no stage in common: only the totals can be compared\n");
    else if (only_base || only_cand)
        fprintf(text_out, "note: the %s has no stages (no markers?): only the totals can be compared\n",
               only_base ? "candidate" : "baseline");
}

/* A sum of money in a currency from a file: the code cut to 3 characters, no newline. */
static void put_money(double v, const char *currency)
{
    char cur[4] = "?";
    if (currency && strlen(currency) == 3 && !strpbrk(currency, "\n\r\t"))
        memcpy(cur, currency, 4);
    if (isfinite(v))
        fprintf(text_out, "%.4g %s", v, cur);
    else
        fprintf(text_out, "? %s", cur);
}

static void put_ratio(const char *what, double r)
{
    if (isfinite(r))
        fprintf(text_out, "%s ×%.3g", what, r);
    else
        fprintf(text_out, "%s -", what);
}

/* Cost when both sides are priced: each at its own price, the time ratio beside the cost
 * ratio (docs/compare.md#cost). */
static void print_cost(const json_t *cost)
{
    if (!json_is_object(cost))
        return;
    const json_t *b = json_object_get(cost, "baseline"), *c = json_object_get(cost, "candidate");
    fputs("\ncost (each side at its own price per hour; candidate / baseline)\n", text_out);
    fputs("  a run    baseline ", text_out);
    put_money(jsonx_num(b, "run_median"), jsonx_str(b, "currency"));
    fputs(" at ", text_out);
    put_money(jsonx_num(b, "price_per_hour"), jsonx_str(b, "currency"));
    fputs("/h   candidate ", text_out);
    put_money(jsonx_num(c, "run_median"), jsonx_str(c, "currency"));
    fputs(" at ", text_out);
    put_money(jsonx_num(c, "price_per_hour"), jsonx_str(c, "currency"));
    fputs("/h\n  ratio    ", text_out);
    put_ratio("time", jsonx_num(cost, "time_ratio"));
    fputs("   ", text_out);
    put_ratio("cost", jsonx_num(cost, "cost_ratio"));
    if (!json_is_true(json_object_get(cost, "same_currency")))
        fputs(" (different currencies: no cost ratio)", text_out);
    fputc('\n', text_out);
    const json_t *units = json_object_get(cost, "per_unit");
    for (size_t i = 0; i < json_array_size(units) && i < 16; i++) {
        const json_t *u = json_array_get(units, i);
        char per[32];
        double p = jsonx_num(u, "per");
        snprintf(per, sizeof per, "%.0f", isfinite(p) && p > 0 && p <= 1e15 ? p : 1);
        fprintf(text_out, "  per %s %s   baseline ", per, jsonx_str(u, "counter"));
        put_money(jsonx_num(u, "baseline"), jsonx_str(b, "currency"));
        fputs("   candidate ", text_out);
        put_money(jsonx_num(u, "candidate"), jsonx_str(c, "currency"));
        fputs("   ", text_out);
        put_ratio("cost", jsonx_num(u, "ratio"));
        fputc('\n', text_out);
    }
}

/* Scaling across ranks, when the sides ran on different numbers (docs/compare.md#scaling). */
static void print_scaling(const json_t *sc)
{
    if (!json_is_object(sc))
        return;
    const json_t *b = json_object_get(sc, "baseline"), *c = json_object_get(sc, "candidate");
    const char *basis = jsonx_str(sc, "basis");
    bool runs = basis && !strcmp(basis, "runs_per_s");
    fprintf(text_out, "\nscaling (from %s)\n  ranks %.0f -> %.0f   ", runs ? "the wall time"
            : basis ? basis : "?", jsonx_num(b, "ranks"), jsonx_num(c, "ranks"));
    put_ratio("speedup", jsonx_num(sc, "speedup"));
    double eff = jsonx_num(sc, "efficiency");
    if (isfinite(eff))
        fprintf(text_out, "   efficiency %.0f %%", 100 * eff);
    if (!runs)
        fprintf(text_out, "   per rank %.4g -> %.4g/s", jsonx_num(b, "per_rank"),
                jsonx_num(c, "per_rank"));
    fputc('\n', text_out);
    double ab = jsonx_num(b, "allreduce_share"), ac = jsonx_num(c, "allreduce_share");
    if (isfinite(ab) || isfinite(ac)) {
        char sb[16] = "-", sc2[16] = "-";
        if (isfinite(ab))
            snprintf(sb, sizeof sb, "%.1f %%", 100 * ab);
        if (isfinite(ac))
            snprintf(sc2, sizeof sc2, "%.1f %%", 100 * ac);
        fprintf(text_out, "  allreduce %s -> %s of the step\n", sb, sc2);
    }
}

static void print_text(const json_t *doc)
{
    const json_t *base = json_object_get(doc, "baseline");
    double level = jsonx_num(doc, "ci_level");
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(doc, "candidates"), i, c) {
        if (i)
            fputs("\n\n", text_out);
        print_who("baseline: ", base);
        print_who("candidate:", c);
        if (!json_is_true(json_object_get(c, "like_for_like"))) {
            fprintf(text_out, "warning: not like for like: ");
            size_t k, shown = 0;
            const json_t *d;
            json_array_foreach(json_object_get(c, "environment_differences"), k, d)
                if (json_is_true(json_object_get(d, "matters")))
                    fprintf(text_out, "%s%s", shown++ ? ", " : "", jsonx_str(d, "key"));
            fprintf(text_out, " differ%s: differences may come from the machine, not the change\n",
                   shown == 1 ? "s" : "");
        }
        print_quality("baseline ", json_object_get(json_object_get(c, "quality"), "baseline"));
        print_quality("candidate", json_object_get(json_object_get(c, "quality"), "candidate"));
        print_stage_note(c);
        fputc('\n', text_out);
        print_stage_table(json_object_get(c, "stages"), isfinite(level) ? level : 0.95);
        print_unreliable(c);
        print_latency(json_object_get(c, "stages"), isfinite(level) ? level : 0.95);
        compare_load_print(text_out, json_object_get(c, "load"), isfinite(level) ? level : 0.95);
        print_cost(json_object_get(c, "cost"));
        print_scaling(json_object_get(c, "scaling"));
        print_pairs("counters (median per run of the sum for counts, else of the last value)",
                    json_object_get(c, "counters"), "name", "value");
        print_pairs("metadata", json_object_get(c, "metadata"), "key", "value");
        print_resources(json_object_get(c, "resources"));
        print_pairs("environment differences", json_object_get(c, "environment_differences"),
                    "key", "env");
    }
    size_t n = json_array_size(json_object_get(doc, "candidates"));
    if (n > 1) {
        fprintf(text_out, "\n\ntotal against %s:\n", display_name(base));
        int w = 0;
        json_array_foreach(json_object_get(doc, "candidates"), i, c)
            if (term_cols(display_name(c)) > w)
                w = term_cols(display_name(c));
        json_array_foreach(json_object_get(doc, "candidates"), i, c) {
            const json_t *stages = json_object_get(c, "stages");
            const json_t *total = json_array_get(stages, json_array_size(stages) - 1);
            char ch[64], dur[64];
            fmt_change(jsonx_num(total, "change_pct"), ch, sizeof ch);
            fmt_duration(jsonx_num(total, "candidate_median_ns"), dur, sizeof dur);
            fputs("  ", text_out);
            put_cell(display_name(c), w, 0);
            fputs("  ", text_out);
            put_cell(dur, 10, 1);
            fputs("  ", text_out);
            put_cell(ch, 9, 1);
            fputs("  ", text_out);
            term_put_verdict(text_out, jsonx_str(total, "verdict"), 0);
            fputc('\n', text_out);
        }
    }
    fprintf(text_out, "\nverdict: significant when p < %g, |change| >= %g %% and the interval excludes 1; "
           "unreliable when a disturbance of the slower side could explain it "
           "(docs/compare.md)\n", jsonx_num(doc, "alpha"), jsonx_num(doc, "min_effect_pct"));
}

/* ---- the command ---- */


/* Nonzero when some candidate has a stage row named name (present in either result). */
static int stage_known(const json_t *doc, const char *name)
{
    size_t i, k;
    const json_t *c, *row;
    if (!strcmp(name, "total"))
        return 1;
    json_array_foreach(json_object_get(doc, "candidates"), i, c)
        json_array_foreach(json_object_get(c, "stages"), k, row)
            if (jsonx_str(row, "name") && !strcmp(jsonx_str(row, "name"), name))
                return 1;
    return 0;
}

int cmd_compare(int argc, char **argv)
{
    struct compare_cli cli;
    char err[1024];
    int rc = parse_args(argc, argv, &cli, err, sizeof err);
    if (rc == CLI_HELP) {
        return 0;
    }
    if (rc < 0) {
        log_error("compare: %s", err);
        return 2;
    }

    json_t **results = NULL;
    char **paths = NULL;
    int status = 0;
    if (cli.n_refs == 1) { /* a sweep (or one file that is a sweep document) */
        char *sweep_path = NULL;
        const char **names = NULL;
        json_t *sweep = store_sweep_load(cli.store, cli.refs[0], &sweep_path, err, sizeof err);
        if (!sweep && !store_is_sweep_ref(cli.refs[0]) && strstr(err, "not a sweep document"))
            snprintf(err, sizeof err, "at least two results are needed, a baseline and a "
                     "candidate (got 1: '%s', which is not a sweep), e.g. mlbench compare "
                     "base.json new.json", cli.refs[0]);
        if (!sweep || store_sweep_results(sweep, sweep_path, cli.store, cli.reference, &paths,
                                          &names, &cli.n_refs, err, sizeof err) != 0) {
            log_error("compare: %s", err);
            status = 2;
        } else if (cli.n_refs < 2) {
            log_error("compare: %s: %s point of the sweep has a result: nothing to compare",
                      sweep_path, cli.n_refs ? "only one" : "no");
            status = 2;
        }
        free(names);
        free(sweep_path);
        json_decref(sweep);
        if (status) {
            for (size_t i = 0; paths && i < cli.n_refs; i++)
                free(paths[i]);
            free(paths);
            return status;
        }
    } else if (cli.reference) {
        log_error("compare: --reference chooses a sweep's point: give a sweep (sweep:ID or "
                  "latest-sweep), or put the baseline first");
        return 2;
    } else {
        paths = xcalloc(cli.n_refs, sizeof *paths);
    }
    results = xcalloc(cli.n_refs, sizeof *results);
    for (size_t i = 0; i < cli.n_refs && !status; i++) {
        const char *ref = paths[i] ? paths[i] : cli.refs[i];
        if (paths[i]) {
            /* a sweep's point */
        } else if (is_file_ref(ref) && access(ref, F_OK) == 0) {
            paths[i] = xstrdup(ref);
        } else {
            if (!(results[i] = store_load(cli.store, ref, &paths[i], err, sizeof err))) {
                log_error("compare: %s", err);
                status = store_exit_status();
            }
            continue;
        }
        results[i] = doc_result_load_file(paths[i], err, sizeof err);
        if (!results[i]) {
            log_error("compare: %s", err);
            status = 2;
        }
    }

    json_t *doc = NULL;
    if (!status) {
        doc = compare_results(results, (const char *const *)paths, cli.n_refs, &cli.opt);
        if (!doc) { /* options were checked: cannot happen */
            log_error("compare: could not compare (bad options)");
            status = 2;
        }
    }
    if (!status && cli.gates.stage && !stage_known(doc, cli.gates.stage)) {
        log_error("compare: --stage '%s': no such stage in any of the results (see the stage "
                  "names in mlbench compare without --stage)", cli.gates.stage);
        status = 2;
    }
    if (!status) {
        if (cli.exporter) {
            struct export_request req = {.results = results, .paths = (const char *const *)paths,
                                         .n = cli.n_refs, .comparison = doc, .run = -1};
            if (export_write(cli.exporter, stdout, &req, err, sizeof err) != EXPORT_OK) {
                log_error("compare: %s", err);
                status = 3;
            }
        } else if (cli.json) {
            /* 15 digits: 0.05 stays 0.05, and no figure here means more */
            char *text = json_dumps(doc, JSON_INDENT(2) | JSON_ENSURE_ASCII |
                                             JSON_REAL_PRECISION(15));
            puts(text);
            free(text);
        } else {
            struct term_canvas canvas;
            if (term_canvas_open(&canvas, stdout) == 0) {
                text_out = canvas.f;
                print_text(doc);
                term_canvas_close(&canvas);
            }
            text_out = NULL;
        }
        fflush(stdout);
        char msg[4096];
        if (compare_check_gates(doc, &cli.gates, msg, sizeof msg) == COMPARE_GATE_FAIL)
            status = 1;
        if (*msg) {
            /* one line per reason, each prefixed like every other message */
            for (char *line = strtok(msg, "\n"); line; line = strtok(NULL, "\n")) {
                if (!strncmp(line, "note: ", 6))
                    log_warn("compare: %s", line + 6);
                else
                    log_error("compare: gate failed: %s", line);
            }
        }
    }

    json_decref(doc);
    for (size_t i = 0; i < cli.n_refs; i++) {
        json_decref(results[i]);
        free(paths[i]);
    }
    free(results);
    free(paths);
    return status;
}
