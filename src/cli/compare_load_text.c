/* compare_load_text: the load table of `mlbench compare` (compare_load_text.h). */
#include "cli/compare_load_text.h"

#include <math.h>
#include <string.h>

#include "util/jsonx.h"
#include "util/term.h"
#include "util/units.h"
#include "util/xalloc.h"

#define DASH "\u2014"

enum { C_SCEN, C_Q, C_BASE, C_ARROW, C_CAND, C_CHANGE, C_CI, C_P, C_VERDICT, C_N, N_C };
static const int right[N_C] = {0, 0, 1, 0, 1, 1, 0, 0, 0, 1};

struct line {
    char c[N_C][96];
};

static void value(const json_t *row, const char *key, char *buf, size_t len)
{
    double v = jsonx_num(row, key);
    const char *unit = jsonx_str(row, "unit");
    if (!isfinite(v))
        snprintf(buf, len, DASH);
    else if (unit && !strcmp(unit, "s"))
        units_duration(v * 1e9, buf, len);
    else
        snprintf(buf, len, "%.1f QPS", v);
}

/* "server 100 QPS", "offline", "server peak 120 → 95 QPS" */
static void scenario_name(const json_t *m, char *buf, size_t len)
{
    const char *s = jsonx_str(m, "scenario") ? jsonx_str(m, "scenario") : "?";
    double qb = jsonx_num(m, "target_qps"), qc = jsonx_num(m, "candidate_target_qps");
    if (json_is_true(json_object_get(m, "peak")))
        snprintf(buf, len, "%s peak %.4g \u2192 %.4g QPS", s, qb, qc);
    else if (isfinite(qb))
        snprintf(buf, len, "%s %.4g QPS", s, qb);
    else
        snprintf(buf, len, "%s", s);
}

static void row_cells(const json_t *m, const json_t *row, int first, struct line *l)
{
    memset(l, 0, sizeof *l);
    if (first)
        scenario_name(m, l->c[C_SCEN], sizeof l->c[0]);
    const char *name = jsonx_str(row, "name") ? jsonx_str(row, "name") : "?";
    snprintf(l->c[C_Q], sizeof l->c[0], "%s%s", !strcmp(name, "throughput_qps") ? "QPS" : name,
             json_is_true(json_object_get(row, "metric")) ? "*" : "");
    value(row, "baseline", l->c[C_BASE], sizeof l->c[0]);
    snprintf(l->c[C_ARROW], sizeof l->c[0], "\u2192");
    value(row, "candidate", l->c[C_CAND], sizeof l->c[0]);
    double ch = jsonx_num(row, "change_pct");
    if (!isfinite(ch))
        snprintf(l->c[C_CHANGE], sizeof l->c[0], DASH);
    else
        snprintf(l->c[C_CHANGE], sizeof l->c[0], ch < 0 ? "\u2212%.1f %%" : "+%.1f %%", fabs(ch));
    double lo = jsonx_num(row, "ratio_ci_low"), hi = jsonx_num(row, "ratio_ci_high");
    if (isfinite(lo) && isfinite(hi))
        snprintf(l->c[C_CI], sizeof l->c[0], "[%.3f, %.3f]", lo, hi);
    double p = jsonx_num(row, "p_value");
    if (isfinite(p))
        snprintf(l->c[C_P], sizeof l->c[0], p < 0.001 ? "p<0.001" : "p=%.3f", p);
    snprintf(l->c[C_VERDICT], sizeof l->c[0], "%s",
             jsonx_str(row, "verdict") ? jsonx_str(row, "verdict") : "?");
    if (!strcmp(jsonx_str(m, "resampling") ? jsonx_str(m, "resampling") : "", "results"))
        snprintf(l->c[C_N], sizeof l->c[0], "%lld/%lld", jsonx_int(m, "n_baseline", 0),
                 jsonx_int(m, "n_candidate", 0));
    else
        snprintf(l->c[C_N], sizeof l->c[0], "%lld/%lld s", jsonx_int(row, "seconds_baseline", 0),
                 jsonx_int(row, "seconds_candidate", 0));
}

static void put(FILE *out, const char *s, int width, int right_aligned)
{
    int pad = width - term_cols(s);
    pad = pad > 0 ? pad : 0;
    if (right_aligned)
        fprintf(out, "%*s%s", pad, "", s);
    else
        fprintf(out, "%s%*s", s, pad, "");
}

static void print_table(FILE *out, const json_t *matches, double ci_level)
{
    size_t n = 1, i, k;
    const json_t *m, *row;
    json_array_foreach(matches, i, m)
        n += json_array_size(json_object_get(m, "metrics"));
    struct line *l = xcalloc(n, sizeof *l);
    const char *head[N_C] = {"scenario", "", "baseline", "", "candidate", "change", NULL, "p",
                             "verdict", "n"};
    char ci[64];
    snprintf(ci, sizeof ci, "ratio %g %% CI", ci_level * 100);
    head[C_CI] = ci;
    for (int c = 0; c < N_C; c++)
        snprintf(l[0].c[c], sizeof l[0].c[c], "%s", head[c]);
    size_t at = 1;
    json_array_foreach(matches, i, m)
        json_array_foreach(json_object_get(m, "metrics"), k, row)
            row_cells(m, row, k == 0, &l[at++]);
    int w[N_C] = {0};
    for (i = 0; i < n; i++)
        for (int c = 0; c < N_C; c++)
            if (term_cols(l[i].c[c]) > w[c])
                w[c] = term_cols(l[i].c[c]);
    for (i = 0; i < n; i++) {
        fputs("  ", out);
        for (int c = 0; c < N_C; c++) {
            if (c == C_VERDICT && i > 0)
                term_put_verdict(out, l[i].c[c], c + 1 < N_C ? w[c] : 0);
            else
                put(out, l[i].c[c], w[c], right[c] && i > 0);
            if (c + 1 < N_C)
                fputs(c == C_BASE || c == C_ARROW ? " " : "  ", out);
        }
        fputc('\n', out);
    }
    free(l);
}

void compare_load_print(FILE *out, const json_t *load, double ci_level)
{
    if (!json_is_object(load))
        return;
    const json_t *matches = json_object_get(load, "scenarios");
    size_t i, k;
    const json_t *m, *row;
    const char *how = "no scenario in common";
    json_array_foreach(matches, i, m) {
        how = !strcmp(jsonx_str(m, "resampling") ? jsonx_str(m, "resampling") : "", "results")
                  ? "the results resampled"
                  : "a block bootstrap over the runs' seconds";
        break;
    }
    fprintf(out, "\nload (the scenario runs that count; * the run's metric percentile; ratio "
                 "%g %% CI: %s)\n", ci_level * 100, how);
    if (json_array_size(matches))
        print_table(out, matches, ci_level);
    json_array_foreach(json_object_get(load, "unmatched"), i, m) {
        double q = jsonx_num(m, "target_qps");
        char qps[48] = "";
        if (isfinite(q))
            snprintf(qps, sizeof qps, " at %.4g QPS", q);
        const char *scen = jsonx_str(m, "scenario"), *side = jsonx_str(m, "side");
        fprintf(out, "  %s run%s: only in the %s\n", scen ? scen : "?", qps, side ? side : "?");
    }
    const char *last = NULL;
    json_array_foreach(matches, i, m)
        json_array_foreach(json_object_get(m, "metrics"), k, row) {
            const char *why = jsonx_str(row, "unreliable_reason");
            if (!why || (last && !strcmp(last, why)))
                continue;
            char name[96];
            scenario_name(m, name, sizeof name);
            fprintf(out, "%s: unreliable: %s\n", name, why);
            last = why;
        }
}
