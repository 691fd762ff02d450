/* cmd_history: `mlbench history`: the stored results as a table (newest last) with a trend line
 * per stage (and per scenario run of load results: store/load_figures.c), step changes found by
 * detect.c (--detect), all of it as JSON (history_json.c), or a dashboard (--format
 * md|csv|html) drawn by export/history*.c from the series collected here, the one place that
 * reads the store (docs/store.md). -o writes any of them atomically. */
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/history_json.h"
#include "cli/options.h"
#include "analysis/detect.h"
#include "export/export.h"
#include "export/history.h"
#include "util/fsx.h"
#include "util/log.h"
#include "util/units.h"
#include "util/xalloc.h"
#include "store/store.h"
#include "util/term.h"

#define MAX_FIGURES 7         /* total and 6 stages in the table and the trends; for more,
                               * --stage NAME or --json */
#define MAX_SPARK 60          /* points in a trend line: the newest */
#define SPARK_MIN_SPAN 0.05   /* a trend line spans at least 5 % of its largest value, so
                               * noise of a few tenths of a percent stays flat */
#define TOTAL "total"

static const char usage_text[] =
    "Usage: mlbench history [options]\n"
    "\n"
    "Lists the stored results, oldest first, with a trend line per stage, or renders\n"
    "them as a dashboard or data (--format).\n"
    "\n"
    "  -l, --label NAME     only results with this label\n"
    "      --host NAME      only results measured on this host\n"
    "  -s, --stage NAME     only this stage (\"total\" is the whole run)\n"
    "  -n, --last N         only the newest N results\n"
    "      --detect         find step changes per label (or command) and stage; exit\n"
    "                       status 1 when the newest result of a series is slower\n"
    "      --min-effect PCT smallest change --detect reports (default 2)\n"
    "  -f, --format FMT     text (the table, default), json (as --json), md (tables for a\n"
    "                       GitHub comment), csv (a row per result and stage) or html (a\n"
    "                       dashboard: a chart per label and stage, step changes marked,\n"
    "                       filters by label and host); default from the extension of -o\n"
    "  -o, --output FILE    write to FILE (replaced atomically) instead of stdout\n"
    "      --commit-url URL link commits in md and html: {} is replaced by the commit,\n"
    "                       e.g. 'https://github.com/OWNER/REPO/commit/{}'\n"
    "      --json           print a JSON document instead of the table (--format json)\n"
    "      --store DIR|URI  result store: a directory, or a shared PostgreSQL store\n"
    "                       (postgresql://host/db); default .mlbench, or $MLBENCH_STORE\n"
    "  -h, --help           this help\n"
    "\n"
    "docs/store.md describes the store and how changes are detected.\n";

/* -o: "" is neither a file nor stdout. */
static int check_output(const char *value, char *err, size_t errlen)
{
    if (*value)
        return 0;
    snprintf(err, errlen, "-o is empty: give a file name, or - for stdout");
    return -1;
}

/* --commit-url: a template without {} would link every commit to one page. */
static int check_commit_url(const char *value, char *err, size_t errlen)
{
    (void)errlen;
    err[0] = '\0'; /* the parser says "--commit-url 'VALUE' <expected>" */
    return history_commit_url_ok(value) ? 0 : -1;
}

/* The format from --format, --json and the extension of -o. Returns 0, or -1 with err. */
static int pick_format(struct history_options *o, const char *format, char *err, size_t errlen)
{
    if (format && !strcmp(format, "json")) {
        o->json = true;
    } else if (format && o->json) {
        snprintf(err, errlen, "--json and --format '%s' disagree: give one of them", format);
        return -1;
    } else if (format && strcmp(format, "text") != 0) {
        o->dashboard = history_format_find(format);
        if (!o->dashboard) {
            snprintf(err, errlen, "--format '%s' is not a format of history: text, json, md, "
                     "csv or html", format);
            return -1;
        }
    } else if (!format && !o->json && o->output) {
        const char *dot = strrchr(o->output, '.');
        if (dot && !strcmp(dot, ".json") && dot != o->output)
            o->json = true;
        else
            o->dashboard = history_format_for_path(o->output);
    }
    bool links = o->dashboard && strcmp(o->dashboard->name, "csv") != 0;
    if (o->commit_url && !links) {
        snprintf(err, errlen, "--commit-url applies to --format md and html, not %s",
                 o->dashboard ? o->dashboard->name : o->json ? "json" : "text");
        return -1;
    }
    return 0;
}

/* Returns CLI_OK, CLI_HELP (usage printed) or CLI_ERROR (message printed). */
static int parse(int argc, char **argv, struct history_options *o)
{
    memset(o, 0, sizeof *o);
    const char *format = NULL;
    o->store = store_default_dir();
    detect_options_default(&o->det);
    const struct cli_option table[] = {
        CLI_OPT_STRING("label", 'l', &o->label, 0, NULL),
        CLI_OPT_STRING("host", 0, &o->host, CLI_NONEMPTY, "is empty: give a host name"),
        CLI_OPT_STRING("stage", 's', &o->stage, 0, NULL),
        CLI_OPT_INTEGER("last", 'n', &o->last, 1, 100000000, 0,
                        "is not a number of results (1 or more)"),
        CLI_OPT_FLAG("detect", 0, &o->detect),
        CLI_OPT_NUMBER("min-effect", 0, &o->det.min_effect_pct, 0, 1000, 0,
                       "is not a percentage (0 to 1000)"),
        CLI_OPT_FLAG("json", 0, &o->json),
        CLI_OPT_STRING("format", 'f', &format, 0, NULL),
        CLI_OPT_STRING_CHECKED("output", 'o', &o->output, 0, check_output, NULL),
        CLI_OPT_STRING_CHECKED("commit-url", 0, &o->commit_url, 0, check_commit_url,
                               "has no {} where the commit goes: give a template such as "
                               "'https://github.com/OWNER/REPO/commit/{}'"),
        CLI_OPT_STORE(&o->store),
        CLI_OPT_END,
    };
    const struct cli_parser parser = {"history", table, CLI_NO_ARGS, usage_text};
    struct cli_args args;
    char err[1024];
    int rc = cli_options_parse(&parser, argc, argv, &args, err, sizeof err);
    if (rc == CLI_OK && pick_format(o, format, err, sizeof err) < 0)
        rc = CLI_ERROR;
    if (rc == CLI_ERROR)
        log_error("history: %s", err);
    return rc;
}

/* ------------------------------------------------------------------ what is shown */

/* A figure of an entry: the whole run for "total", else the stage (NULL when absent). */
static const struct store_stats *figure(const struct store_entry *e, const char *stage)
{
    if (!strcmp(stage, TOTAL))
        return &e->wall;
    for (size_t k = 0; k < e->n_stages; k++)
        if (!strcmp(e->stages[k].name, stage))
            return &e->stages[k].t;
    return NULL;
}

/* A figure usable in a trend: measured by runs that succeeded. */
static const struct store_stats *trend_figure(const struct store_entry *e, const char *stage)
{
    const struct store_stats *t = figure(e, stage);
    if (!t || e->runs_ok == 0 || !isfinite(t->median_ns) || t->median_ns <= 0)
        return NULL;
    return t;
}

/* The stage names to show: "total" first, then the stages in order of first appearance (only
 * --stage when given). */
static size_t stage_names(const struct store_entry *e, size_t n, const char *only,
                          const char ***out)
{
    size_t cap = 8, k = 0;
    const char **names = xcalloc(cap, sizeof *names);
    if (only) {
        names[k++] = only;
        *out = names;
        return k;
    }
    names[k++] = TOTAL;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < e[i].n_stages; j++) {
            const char *name = e[i].stages[j].name;
            bool seen = false;
            for (size_t m = 0; m < k && !seen; m++)
                seen = !strcmp(names[m], name);
            if (seen)
                continue;
            if (k == cap) {
                cap *= 2;
                names = xreallocarray(names, cap, sizeof *names);
            }
            names[k++] = name;
        }
    *out = names;
    return k;
}

/* Results are grouped into series of the same benchmark: the same label, or the same command
 * when there is no label. Returns the series of each entry in group[] and their count. */
static size_t series_of(const struct store_entry *e, size_t n, size_t *group)
{
    size_t groups = 0;
    for (size_t i = 0; i < n; i++) {
        group[i] = groups;
        for (size_t j = 0; j < i; j++) {
            bool same = e[i].label ? e[j].label && !strcmp(e[i].label, e[j].label)
                                   : !e[j].label && !strcmp(e[i].command, e[j].command);
            if (same) {
                group[i] = group[j];
                break;
            }
        }
        if (group[i] == groups)
            groups++;
    }
    return groups;
}

static void series_name(const struct store_entry *first, char *buf, size_t len)
{
    if (first->label)
        snprintf(buf, len, "%s", first->label);
    else if (!first->command || !*first->command)
        snprintf(buf, len, "unlabelled results without a command (mlbench load)");
    else
        snprintf(buf, len, "command %.60s%s", first->command,
                 strlen(first->command) > 60 ? "..." : "");
}

/* ------------------------------------------------------------------ detection */

/* The series of the dashboards (export/history.h), one per group and stage that has a point,
 * and the first stage of every group even without one (the dashboard says that nothing
 * succeeded). The arrays are owned here: series_set_free. */
struct series_set {
    struct history_series *v;
    size_t n;
};

static void series_set_free(struct series_set *ss)
{
    for (size_t k = 0; k < ss->n; k++) {
        free((void *)ss->v[k].points);
        free((void *)ss->v[k].changes);
    }
    free(ss->v);
}

/* Runs detect.c on every series and stage: its points (results whose runs succeeded) go to
 * ss, the step changes found in it to both ss and out. */
static void collect_series(const struct store_entry *e, size_t n, const size_t *group,
                           size_t groups, const char **stages, size_t n_stages,
                           const struct detect_options *opt, struct series_set *ss,
                           struct changes *out)
{
    struct detect_point *p = xcalloc(n + 1, sizeof *p);
    ss->v = xcalloc(groups * n_stages + 1, sizeof *ss->v);
    ss->n = 0;
    for (size_t g = 0; g < groups; g++) {
        size_t first = 0;
        while (first < n && group[first] != g)
            first++;
        for (size_t s = 0; s < n_stages; s++) {
            struct history_point *pt = xcalloc(n + 1, sizeof *pt);
            size_t m = 0;
            for (size_t i = 0; i < n; i++) {
                const struct store_stats *t = group[i] == g ? trend_figure(&e[i], stages[s]) : NULL;
                if (!t)
                    continue;
                p[m] = (struct detect_point){t->median_ns, t->ci_low_ns, t->ci_high_ns,
                                             t->ci_level, t->mad_ns, t->n};
                pt[m++] = (struct history_point){i, t->n, t->median_ns, t->ci_low_ns,
                                                 t->ci_high_ns, t->ci_level};
            }
            struct detect_change *c = NULL;
            size_t k = detect_changes(p, m, opt, &c);
            struct history_change *hc = xcalloc(k + 1, sizeof *hc);
            for (size_t j = 0; j < k; j++) {
                if (out->n == out->cap) {
                    out->cap = out->cap ? 2 * out->cap : 8;
                    out->v = xreallocarray(out->v, out->cap, sizeof *out->v);
                }
                size_t at = c[j].index;
                out->v[out->n++] = (struct change){g, stages[s], &e[pt[at].result],
                                                   at ? &e[pt[at - 1].result] : NULL, c[j]};
                hc[j] = (struct history_change){at, c[j].before, c[j].after, c[j].change_pct,
                                                c[j].z};
            }
            free(c);
            if (m == 0 && s > 0) {
                free(pt);
                free(hc);
                continue;
            }
            ss->v[ss->n++] = (struct history_series){e[first].label, e[first].command,
                                                     stages[s], pt, m, hc, k};
        }
    }
    free(p);
}

/* Whether a change to slower starts at the newest result of its series (issue 13: --detect
 * exited 0 whatever it found, so CI could not fail on a regression). */
static bool regression_in_latest(const struct store_entry *e, size_t n, const size_t *group,
                                 const struct changes *ch)
{
    for (size_t k = 0; k < ch->n; k++) {
        const struct change *c = &ch->v[k];
        const struct store_entry *latest = NULL;
        for (size_t i = 0; i < n; i++)
            if (group[i] == c->series)
                latest = &e[i];
        if (c->entry == latest && c->d.change_pct > 0)
            return true;
    }
    return false;
}

/* ------------------------------------------------------------------ text */

static bool utf8_locale(void)
{
    setlocale(LC_CTYPE, "");
    const char *cs = nl_langinfo(CODESET);
    return cs && (!strcmp(cs, "UTF-8") || !strcmp(cs, "utf8"));
}

/* Draws one trend line "  name  ▁▂▄  lo .. hi" of v[0..m) (NaN: a gap), the values written
 * with fmt, the name in a column of width; false, and nothing drawn, when no value is finite. */
static bool spark_draw(FILE *out, const char *title, int width, const double *v, size_t m,
                       bool utf8, char *(*fmt)(double, char *, size_t))
{
    static const char *const bars[8] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                        "\u2585", "\u2586", "\u2587", "\u2588"};
    static const char ascii[] = "_.-:=+*#";
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < m; i++)
        if (isfinite(v[i])) {
            lo = fmin(lo, v[i]);
            hi = fmax(hi, v[i]);
        }
    if (!isfinite(lo))
        return false;
    char name[40], a[32], b[32];
    snprintf(name, sizeof name, "%.30s", title);
    fprintf(out, "  %-*s ", width, name);
    for (size_t i = 0; i < m; i++) {
        if (!isfinite(v[i])) {
            fputc(' ', out);
            continue;
        }
        double span = fmax(hi - lo, SPARK_MIN_SPAN * hi);
        /* in [0, 7] for any finite values: divided before scaling (7 * 1e308 overflows) */
        double x = span > 0 ? 7 * ((v[i] - lo) / span) : 0;
        int level = x >= 0 && x <= 7 ? (int)lround(x) : x > 7 ? 7 : 0;
        if (utf8)
            fputs(bars[level], out);
        else
            fputc(ascii[level], out);
    }
    fprintf(out, "  %s .. %s\n", fmt(lo, a, sizeof a), fmt(hi, b, sizeof b));
    return true;
}

/* The members of series g, the newest MAX_SPARK: their indices into e, *m of them. */
static size_t *series_members(size_t n, const size_t *group, size_t g, size_t *m)
{
    size_t total = 0, skip, k = 0;
    for (size_t i = 0; i < n; i++)
        total += group[i] == g;
    skip = total > MAX_SPARK ? total - MAX_SPARK : 0;
    size_t *idx = xcalloc(total + 1, sizeof *idx);
    for (size_t i = 0, seen = 0; i < n; i++)
        if (group[i] == g && seen++ >= skip)
            idx[k++] = i;
    *m = k;
    return idx;
}

/* A trend line of figure `stage` over the entries of one series (the newest MAX_SPARK);
 * false, and nothing printed, when no entry has the figure (no successful result). */
static bool sparkline(FILE *out, const struct store_entry *e, size_t n, const size_t *group,
                      size_t g, const char *stage, int width, bool utf8)
{
    size_t m;
    size_t *idx = series_members(n, group, g, &m);
    double *v = xcalloc(m + 1, sizeof *v);
    for (size_t k = 0; k < m; k++) {
        const struct store_stats *t = trend_figure(&e[idx[k]], stage);
        v[k] = t ? t->median_ns : NAN;
    }
    bool drawn = spark_draw(out, stage, width, v, m, utf8, units_duration);
    free(v);
    free(idx);
    return drawn;
}

static char *fmt_seconds(double s, char *buf, size_t len)
{
    return units_duration(s * 1e9, buf, len);
}

static char *fmt_qps(double q, char *buf, size_t len)
{
    snprintf(buf, len, "%.4g QPS", q);
    return buf;
}

/* The trend lines of the load results of series g: per scenario run (key) its metric
 * percentile and its throughput. Returns the lines drawn. */
static size_t load_sparklines(FILE *out, const struct load_figures *L, size_t n,
                              const size_t *group, size_t g, int width, bool utf8)
{
    size_t m, drawn = 0;
    size_t *idx = series_members(n, group, g, &m);
    double *lat = xcalloc(m + 1, sizeof *lat), *qps = xcalloc(m + 1, sizeof *qps);
    for (size_t k = 0; k < m; k++)
        for (size_t r = 0; r < L[idx[k]].n; r++) {
            const struct load_figure *key = &L[idx[k]].run[r];
            bool first = true; /* draw each key once, where it first appears */
            for (size_t j = 0; j < k && first; j++)
                for (size_t q = 0; q < L[idx[j]].n && first; q++)
                    first = strcmp(L[idx[j]].run[q].key, key->key) != 0;
            for (size_t q = 0; q < r && first; q++)
                first = strcmp(L[idx[k]].run[q].key, key->key) != 0;
            if (!first)
                continue;
            for (size_t j = 0; j < m; j++) {
                lat[j] = qps[j] = NAN;
                for (size_t q = 0; q < L[idx[j]].n; q++)
                    if (!strcmp(L[idx[j]].run[q].key, key->key)) {
                        lat[j] = L[idx[j]].run[q].metric_s;
                        qps[j] = L[idx[j]].run[q].qps;
                    }
            }
            char title[96];
            snprintf(title, sizeof title, "%.24s %s", key->key, key->metric);
            drawn += spark_draw(out, title, width, lat, m, utf8, fmt_seconds);
            snprintf(title, sizeof title, "%.24s QPS", key->key);
            drawn += spark_draw(out, title, width, qps, m, utf8, fmt_qps);
        }
    free(lat);
    free(qps);
    free(idx);
    return drawn;
}

static size_t figures_shown(size_t n_figures)
{
    return n_figures < MAX_FIGURES ? n_figures : MAX_FIGURES;
}

static const char *status_word(const struct store_entry *e, char *buf, size_t len)
{
    if (e->status && !strcmp(e->status, "interrupted"))
        return "interrupted";
    if (e->runs_measured == 0)
        return "no runs";
    if (e->runs_ok == e->runs_measured)
        return "ok";
    if (e->runs_ok == 0)
        return "failed";
    snprintf(buf, len, "%ld failed", e->runs_measured - e->runs_ok);
    return buf;
}

/* The load column of a result: its first scenario run's metric percentile and throughput. */
static void load_cell(FILE *out, const struct load_figures *l)
{
    if (!l->n)
        return;
    const struct load_figure *r = &l->run[0];
    char a[32];
    fprintf(out, "  %s %s %s, %.4g QPS%s", r->key, r->metric,
            isfinite(r->metric_s) ? units_duration(r->metric_s * 1e9, a, sizeof a) : "-", r->qps,
            r->valid ? "" : " INVALID");
    if (l->n > 1)
        fprintf(out, " (+%zu more)", l->n - 1);
}

static void print_table(FILE *out, const struct store_entry *e, size_t n, const char **stages,
                        size_t n_stages, const struct load_figures *L, bool hosts)
{
    int host_w = 4;
    for (size_t i = 0; hosts && i < n; i++)
        if (e[i].host && (int)strlen(e[i].host) > host_w)
            host_w = strlen(e[i].host) > 20 ? 20 : (int)strlen(e[i].host);
    bool any_load = false;
    for (size_t i = 0; i < n; i++)
        any_load |= L[i].n > 0;
    int label_w = 5;
    for (size_t i = 0; i < n; i++)
        if (e[i].label && (int)strlen(e[i].label) > label_w)
            label_w = strlen(e[i].label) > 24 ? 24 : (int)strlen(e[i].label);
    size_t shown = figures_shown(n_stages);
    fprintf(out, "%-22s  %-19s  %-*s  ", "id", "created (UTC)", label_w, "label");
    if (hosts)
        fprintf(out, "%-*s  ", host_w, "host");
    fprintf(out, "%-11s %4s", "status", "runs");
    for (size_t s = 0; s < shown; s++)
        fprintf(out, "  %10.10s", stages[s]);
    if (any_load)
        fputs("  load: scenario, metric percentile, throughput", out);
    fputc('\n', out);
    for (size_t i = 0; i < n; i++) {
        char created[20] = "", st[32], v[32];
        if (e[i].created) {
            snprintf(created, sizeof created, "%s", e[i].created);
            char *t = strchr(created, 'T');
            if (t)
                *t = ' ';
        }
        fprintf(out, "%-22s  %-19s  %-*.*s  ", e[i].id, created, label_w, label_w,
                e[i].label ? e[i].label : "-");
        if (hosts)
            fprintf(out, "%-*.*s  ", host_w, host_w, e[i].host ? e[i].host : "-");
        fprintf(out, "%-11s %4ld", status_word(&e[i], st, sizeof st), e[i].runs_measured);
        for (size_t s = 0; s < shown; s++) {
            const struct store_stats *t = figure(&e[i], stages[s]);
            fprintf(out, "  %10s", t && isfinite(t->median_ns)
                                       ? units_duration(t->median_ns, v, sizeof v) : "-");
        }
        load_cell(out, &L[i]);
        fputc('\n', out);
    }
    if (shown < n_stages)
        fprintf(out, "(%zu more stages not shown: --stage NAME shows one, --json all)\n",
                n_stages - shown);
}

/* What the code was on either side of a change: the git commits of the working directories the
 * results were measured in (environment.git.commit), which is what a user bisects, not result
 * ids. Says so when they are the same commit (then it is not a change of the code) or unknown. */
static void print_commits(FILE *out, const struct change *c)
{
    const char *now = c->entry->workdir_commit, *was = c->before ? c->before->workdir_commit : NULL;
    if (!now && !was) {
        fputs("                   no git commit recorded (results measured outside a git work "
              "tree)\n", out);
        return;
    }
    if (now && was && !strcmp(now, was)) {
        fprintf(out, "                   at commit %.12s, as the result before it: not a change of "
                "the code (the machine, the data or other load?)\n", now);
        return;
    }
    fprintf(out, "                   commit %.12s -> %.12s", was ? was : "(unknown)",
            now ? now : "(unknown)");
    if (now && was)
        fprintf(out, ": git log %.12s..%.12s", was, now);
    fputc('\n', out);
}

static void print_text(FILE *out, const struct history_options *o, const struct store_entry *e,
                       size_t n, const char **stages, size_t n_stages, const size_t *group,
                       size_t groups, const struct changes *ch, const struct load_figures *L)
{
    if (!n) {
        fprintf(out, "no results%s%s%s%s%s%s%s%s in %s\n", o->label ? " with label '" : "",
                o->label ? o->label : "", o->label ? "'" : "",
                o->stage ? (o->label ? " and stage '" : " with a stage '") : "",
                o->stage ? o->stage : "", o->stage ? "'" : "", o->host ? " from host " : "",
                o->host ? o->host : "", o->shown);
        return;
    }
    print_table(out, e, n, stages, n_stages, L, o->hosts);
    bool utf8 = utf8_locale(), header = false;
    for (size_t g = 0; g < groups; g++) {
        size_t members = 0, first = n;
        for (size_t i = 0; i < n; i++)
            if (group[i] == g) {
                members++;
                if (first == n)
                    first = i;
            }
        if (members < 2)
            continue;
        if (!header)
            fputs("\ntrends, oldest to newest (median of each result; min .. max):\n", out);
        header = true;
        char name[96];
        series_name(&e[first], name, sizeof name);
        fprintf(out, "%s: %zu results", name, members);
        if (members > MAX_SPARK)
            fprintf(out, " (the newest %d shown)", MAX_SPARK);
        fputc('\n', out);
        size_t shown = figures_shown(n_stages), drawn = 0;
        int width = 16; /* the names' column: as wide as a load run's "server 40 QPS p99" */
        for (size_t i = 0; i < n; i++)
            for (size_t r = 0; group[i] == g && r < L[i].n; r++) {
                int w = (int)(strlen(L[i].run[r].key) > 24 ? 24 : strlen(L[i].run[r].key)) + 1 +
                        (int)(strlen(L[i].run[r].metric) > 3 ? strlen(L[i].run[r].metric) : 3);
                width = w > width ? (w > 30 ? 30 : w) : width;
            }
        for (size_t s = 0; s < shown; s++)
            drawn += sparkline(out, e, n, group, g, stages[s], width, utf8);
        drawn += load_sparklines(out, L, n, group, g, width, utf8);
        if (!drawn) /* not a header with nothing under it (issue 13) */
            fputs("  no successful result: nothing to draw\n", out);
    }
    if (!o->detect)
        return;
    fputs("\nchanges (docs/store.md):\n", out);
    if (!ch->n)
        fprintf(out, "  none: no step of %g %% or more stands out of the noise\n",
                o->det.min_effect_pct);
    for (size_t i = 0; i < ch->n; i++) {
        const struct change *c = &ch->v[i];
        char name[96], a[32], b[32];
        size_t first = 0;
        while (group[first] != c->series)
            first++;
        series_name(&e[first], name, sizeof name);
        fprintf(out, "  %-16s %-12s %+6.1f%% ", name, c->stage, c->d.change_pct);
        term_put_verdict(out, c->d.change_pct > 0 ? "slower" : "faster", 7);
        fprintf(out, " from %s  (%s -> %s, strength %.1f)\n",
                c->entry->id, units_duration(c->d.before, a, sizeof a),
                units_duration(c->d.after, b, sizeof b), c->d.z);
        print_commits(out, c);
    }
}

/* The text, composed in memory, printed without control characters. */
static int print_clean(FILE *out, const struct history_options *o, const struct store_entry *e,
                       size_t n, const char **stages, size_t n_stages, const size_t *group,
                       size_t groups, const struct changes *ch, const struct load_figures *L)
{
    struct term_canvas canvas;
    if (term_canvas_open(&canvas, out) < 0) {
        log_error("history: out of memory");
        return 3;
    }
    print_text(canvas.f, o, e, n, stages, n_stages, group, groups, ch, L);
    return term_canvas_close(&canvas) < 0 ? 3 : 0;
}

/* ------------------------------------------------------------------ dashboards */

/* Renders the series in o->dashboard's format (export/history.h) to out. Returns 0, or 3 with
 * a message printed when out could not be written. */
static int print_dashboard(FILE *out, const struct history_options *o,
                           const struct store_entry *e, size_t n, const struct series_set *ss)
{
    struct history_result *r = xcalloc(n + 1, sizeof *r);
    for (size_t i = 0; i < n; i++)
        r[i] = (struct history_result){e[i].id, e[i].created, e[i].label, e[i].command,
                                       e[i].host, e[i].workdir_commit};
    const struct history_doc d = {
        .store = o->shown, .label = o->label, .host = o->host, .stage = o->stage,
        .last = o->last, .commit_url = o->commit_url, .min_effect_pct = o->det.min_effect_pct,
        .results = r, .n_results = n, .series = ss->v, .n_series = ss->n,
    };
    char err[1024];
    int rc = o->dashboard->write(out, &d, err, sizeof err) == EXPORT_OK ? 0 : 3;
    if (rc)
        log_error("history: %s", err);
    free(r);
    return rc;
}

int cmd_history(int argc, char **argv)
{
    struct history_options o;
    int rc = parse(argc, argv, &o);
    if (rc != CLI_OK)
        return rc == CLI_HELP ? 0 : 2;
    char err[1024];
    struct store *s = store_open(o.store, err, sizeof err);
    if (!s) {
        log_error("%s", err);
        return store_exit_status();
    }
    struct store_query q = {.label = o.label, .host = o.host, .last = o.last, .with_stages = true,
                            .stage = o.stage && strcmp(o.stage, TOTAL) != 0 ? o.stage : NULL};
    struct store_entry *e;
    size_t n;
    if (store_list(s, &q, &e, &n, err, sizeof err) < 0) {
        log_error("%s", err);
        store_close(s);
        return store_exit_status();
    }
    char *shown = xstrdup(store_name(s));
    o.shown = shown;
    o.hosts = store_is_shared(s);
    for (size_t i = 1; i < n && !o.hosts; i++)
        o.hosts = (e[i].host == NULL) != (e[0].host == NULL) ||
                  (e[i].host && strcmp(e[i].host, e[0].host) != 0);
    struct load_figures *L = load_figures_read(s, e, n);
    store_close(s);
    const char **stages;
    size_t n_stages = stage_names(e, n, o.stage, &stages);
    size_t *group = xcalloc(n + 1, sizeof *group);
    size_t groups = series_of(e, n, group);
    struct changes ch = {0};
    struct series_set ss = {0};
    if (o.detect || o.dashboard) /* a dashboard marks the changes whether asked or not */
        collect_series(e, n, group, groups, stages, n_stages, &o.det, &ss, &ch);
    /* -o: a temporary file beside it, renamed over it once complete (never half a file) */
    bool to_file = o.output && strcmp(o.output, "-") != 0;
    struct fsx_atomic a;
    FILE *out = to_file ? fsx_atomic_open(&a, o.output, err, sizeof err) : stdout;
    if (!out) {
        log_error("history: %s", err);
        rc = 2;
    } else if (o.dashboard) {
        rc = print_dashboard(out, &o, e, n, &ss);
    } else if (o.json) {
        history_json_print(out, &o, e, n, group, &ch, L);
    } else {
        rc = print_clean(out, &o, e, n, stages, n_stages, group, groups, &ch, L);
    }
    if (out && to_file) {
        if (rc != 0) {
            fsx_atomic_abort(&a);
        } else if (fsx_atomic_commit(&a, err, sizeof err) < 0) {
            log_error("history: %s", err);
            rc = 3;
        }
    }
    free(L);
    fflush(stdout);
    if (rc == 0 && o.detect && regression_in_latest(e, n, group, &ch))
        rc = 1; /* for CI: the newest result of a series is slower than the ones before */
    series_set_free(&ss);
    free(ch.v);
    free(group);
    free(stages);
    store_entries_free(e, n);
    free(shown);
    return rc == 0 && ferror(stdout) ? 3 : rc;
}
