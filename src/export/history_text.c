/* history_text.c: the text of `mlbench history` (history.h): the results as a table, oldest
 * first, a trend line per benchmark and figure (and per scenario run of load results), and
 * with --detect the step changes found, each with the commits either side. Its tables are
 * drawn by export_table_print, in bytes as the layout has always been counted. */
#include "export/history.h"

#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "export/table.h"
#include "export/text.h"
#include "util/strbuf.h"
#include "util/units.h"
#include "util/xalloc.h"

#define MAX_FIGURES 7         /* total and 6 stages in the table and the trends; for more,
                               * --stage NAME or --json */
#define MAX_SPARK 60          /* points in a trend line: the newest */
#define SPARK_MIN_SPAN 0.05   /* a trend line spans at least 5 % of its largest value, so
                               * noise of a few tenths of a percent stays flat */
#define LABEL_COLS 24         /* the widest label column */
#define HOST_COLS 20          /* the widest host column */

static bool utf8_locale(void)
{
    setlocale(LC_CTYPE, "");
    const char *cs = nl_langinfo(CODESET);
    return cs && (!strcmp(cs, "UTF-8") || !strcmp(cs, "utf8"));
}

static size_t figures_shown(const struct doc_history *h)
{
    return h->n_stages < MAX_FIGURES ? h->n_stages : MAX_FIGURES;
}

/* The first result of benchmark b (there is one). */
static const struct doc_history_result *first_of(const struct doc_history *h, size_t b)
{
    size_t i = 0;
    while (h->benchmark[i] != b)
        i++;
    return &h->results[i];
}

/* How the text names a benchmark: its label, or its command cut to 60 bytes. */
static void benchmark_name(const struct doc_history_result *first, char *buf, size_t len)
{
    if (first->label)
        snprintf(buf, len, "%s", first->label);
    else if (!first->command || !*first->command)
        snprintf(buf, len, "unlabelled results without a command (mlbench load)");
    else
        snprintf(buf, len, "command %.60s%s", first->command,
                 strlen(first->command) > 60 ? "..." : "");
}

/* ------------------------------------------------------------------ the table */

static const char *status_word(const struct doc_history_result *r, char *buf, size_t len)
{
    if (r->status && !strcmp(r->status, "interrupted"))
        return "interrupted";
    if (r->runs_measured == 0)
        return "no runs";
    if (r->runs_ok == r->runs_measured)
        return "ok";
    if (r->runs_ok == 0)
        return "failed";
    snprintf(buf, len, "%ld failed", r->runs_measured - r->runs_ok);
    return buf;
}

/* The widest of the strings name(r) of the results, at least least and at most most bytes. */
static int widest(const struct doc_history *h, const char *(*name)(const struct doc_history_result *),
                  int least, int most)
{
    int w = least;
    for (size_t i = 0; i < h->n_results; i++) {
        const char *s = name(&h->results[i]);
        if (s && (int)strlen(s) > w)
            w = strlen(s) > (size_t)most ? most : (int)strlen(s);
    }
    return w;
}

static const char *label_of(const struct doc_history_result *r)
{
    return r->label;
}

static const char *host_of(const struct doc_history_result *r)
{
    return r->host;
}

/* The load column of a result: its first scenario run's metric percentile and throughput. */
static void load_cell(struct export_table *t, size_t row, size_t col,
                      const struct doc_history_loads *l)
{
    if (!l->n)
        return;
    const struct doc_history_load *r = &l->run[0];
    char a[32], more[32] = "";
    if (l->n > 1)
        snprintf(more, sizeof more, " (+%zu more)", l->n - 1);
    export_table_set(t, row, col, "%s %s %s, %.4g QPS%s%s", r->key, r->metric,
                     isfinite(r->metric_s) ? units_duration(r->metric_s * 1e9, a, sizeof a) : "-",
                     r->qps, r->valid ? "" : " INVALID", more);
}

static void print_table(FILE *out, const struct doc_history *h)
{
    bool any_load = false;
    for (size_t i = 0; i < h->n_results; i++)
        any_load |= h->results[i].load.n > 0;
    int label_w = widest(h, label_of, 5, LABEL_COLS);
    int host_w = widest(h, host_of, 4, HOST_COLS);
    size_t shown = figures_shown(h);
    size_t ncols = 5 + h->hosts + shown + any_load;
    const char **head = xcalloc(ncols, sizeof *head);
    struct export_text_column *col = xcalloc(ncols, sizeof *col);
    char (*cut)[11] = xcalloc(shown + 1, sizeof *cut);
    size_t c = 0, c_host = 0, c_load = 0;
    head[c] = "id";
    col[c++] = (struct export_text_column){.width = 22, .bytes = true};
    head[c] = "created (UTC)";
    col[c++] = (struct export_text_column){.width = 19, .bytes = true};
    head[c] = "label";
    col[c++] = (struct export_text_column){.width = label_w, .bytes = true};
    if (h->hosts) {
        c_host = c;
        head[c] = "host";
        col[c++] = (struct export_text_column){.width = host_w, .bytes = true};
    }
    size_t c_status = c;
    head[c] = "status";
    col[c++] = (struct export_text_column){.width = 11, .bytes = true};
    head[c] = "runs";
    col[c++] = (struct export_text_column){.width = 4, .sep = " ", .bytes = true};
    size_t c_stages = c;
    for (size_t s = 0; s < shown; s++) {
        snprintf(cut[s], sizeof cut[s], "%.10s", h->stages[s]);
        head[c] = cut[s];
        col[c++] = (struct export_text_column){.width = 10, .bytes = true};
    }
    if (any_load) {
        c_load = c;
        head[c] = "load: scenario, metric percentile, throughput";
        col[c++] = (struct export_text_column){.bytes = true};
    }
    struct export_table t;
    export_table_init_list(&t, ncols, head);
    for (size_t k = c_status + 1; k < c_stages + shown; k++)
        t.numeric |= 1u << k;
    for (size_t i = 0; i < h->n_results; i++) {
        const struct doc_history_result *r = &h->results[i];
        size_t row = export_table_row(&t, 0);
        char created[20] = "", st[32], v[32];
        if (r->created) {
            snprintf(created, sizeof created, "%s", r->created);
            char *tee = strchr(created, 'T');
            if (tee)
                *tee = ' ';
        }
        export_table_set(&t, row, 0, "%s", r->id);
        export_table_set(&t, row, 1, "%s", created);
        export_table_set(&t, row, 2, "%.*s", label_w, r->label ? r->label : "-");
        if (h->hosts)
            export_table_set(&t, row, c_host, "%.*s", host_w, r->host ? r->host : "-");
        export_table_set(&t, row, c_status, "%s", status_word(r, st, sizeof st));
        export_table_set(&t, row, c_status + 1, "%ld", r->runs_measured);
        for (size_t s = 0; s < shown; s++) {
            const struct doc_history_stats *f = doc_history_figure(r, h->stages[s]);
            export_table_set(&t, row, c_stages + s, "%s",
                             f && isfinite(f->median_ns) ? units_duration(f->median_ns, v, sizeof v)
                                                         : "-");
        }
        if (any_load)
            load_cell(&t, row, c_load, &r->load);
    }
    const struct export_text_layout layout = {.col = col, .header = true, .trim = true};
    export_table_print(out, &t, &layout);
    export_table_free(&t);
    free(cut);
    free(col);
    free(head);
    if (shown < h->n_stages)
        fprintf(out, "(%zu more stages not shown: --stage NAME shows one, --json all)\n",
                h->n_stages - shown);
}

/* ------------------------------------------------------------------ the trends */

/* A row "name  ▁▂▄  lo .. hi" of the trend lines t: the values v[0..m) (NaN: a gap) drawn as
 * bars, written with fmt; false, and no row, when no value is finite. */
static bool spark_row(struct export_table *t, const char *title, const double *v, size_t m,
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
    struct strbuf b = STRBUF_INIT;
    for (size_t i = 0; i < m; i++) {
        if (!isfinite(v[i])) {
            strbuf_putc(&b, ' ');
            continue;
        }
        double span = fmax(hi - lo, SPARK_MIN_SPAN * hi);
        /* in [0, 7] for any finite values: divided before scaling (7 * 1e308 overflows) */
        double x = span > 0 ? 7 * ((v[i] - lo) / span) : 0;
        int level = x >= 0 && x <= 7 ? (int)lround(x) : x > 7 ? 7 : 0;
        if (utf8)
            strbuf_puts(&b, bars[level]);
        else
            strbuf_putc(&b, ascii[level]);
    }
    char a[32], z[32];
    size_t row = export_table_row(t, 0);
    export_table_set(t, row, 0, "%.30s", title);
    export_table_set(t, row, 1, "%s", b.s);
    export_table_set(t, row, 2, "%s .. %s", fmt(lo, a, sizeof a), fmt(hi, z, sizeof z));
    strbuf_free(&b);
    return true;
}

/* The members of benchmark g, the newest MAX_SPARK: their indices into h->results, *m of
 * them. */
static size_t *members(const struct doc_history *h, size_t g, size_t *m)
{
    size_t total = 0, skip, k = 0;
    for (size_t i = 0; i < h->n_results; i++)
        total += h->benchmark[i] == g;
    skip = total > MAX_SPARK ? total - MAX_SPARK : 0;
    size_t *idx = xcalloc(total + 1, sizeof *idx);
    for (size_t i = 0, seen = 0; i < h->n_results; i++)
        if (h->benchmark[i] == g && seen++ >= skip)
            idx[k++] = i;
    *m = k;
    return idx;
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

/* The trend line of figure `stage` over the results idx[0..m) of one benchmark. */
static bool stage_row(struct export_table *t, const struct doc_history *h, const size_t *idx,
                      size_t m, const char *stage, bool utf8)
{
    double *v = xcalloc(m + 1, sizeof *v);
    for (size_t k = 0; k < m; k++) {
        const struct doc_history_stats *f = doc_history_trend_figure(&h->results[idx[k]], stage);
        v[k] = f ? f->median_ns : NAN;
    }
    bool drawn = spark_row(t, stage, v, m, utf8, units_duration);
    free(v);
    return drawn;
}

/* Whether load run r of result idx[k] is the first of its key among idx[0..k]'s runs. */
static bool first_of_key(const struct doc_history *h, const size_t *idx, size_t k, size_t r)
{
    const char *key = h->results[idx[k]].load.run[r].key;
    for (size_t j = 0; j <= k; j++) {
        const struct doc_history_loads *l = &h->results[idx[j]].load;
        for (size_t q = 0; q < (j < k ? l->n : r); q++)
            if (!strcmp(l->run[q].key, key))
                return false;
    }
    return true;
}

/* The trend lines of the load results idx[0..m) of one benchmark: per scenario run (key) its
 * metric percentile and its throughput. Returns the lines drawn. */
static size_t load_rows(struct export_table *t, const struct doc_history *h, const size_t *idx,
                        size_t m, bool utf8)
{
    size_t drawn = 0;
    double *lat = xcalloc(m + 1, sizeof *lat), *qps = xcalloc(m + 1, sizeof *qps);
    for (size_t k = 0; k < m; k++)
        for (size_t r = 0; r < h->results[idx[k]].load.n; r++) {
            const struct doc_history_load *key = &h->results[idx[k]].load.run[r];
            if (!first_of_key(h, idx, k, r)) /* each key once, where it first appears */
                continue;
            for (size_t j = 0; j < m; j++) {
                const struct doc_history_loads *l = &h->results[idx[j]].load;
                lat[j] = qps[j] = NAN;
                for (size_t q = 0; q < l->n; q++)
                    if (!strcmp(l->run[q].key, key->key)) {
                        lat[j] = l->run[q].metric_s;
                        qps[j] = l->run[q].qps;
                    }
            }
            char title[96];
            snprintf(title, sizeof title, "%.24s %s", key->key, key->metric);
            drawn += spark_row(t, title, lat, m, utf8, fmt_seconds);
            snprintf(title, sizeof title, "%.24s QPS", key->key);
            drawn += spark_row(t, title, qps, m, utf8, fmt_qps);
        }
    free(lat);
    free(qps);
    return drawn;
}

/* The width of the names' column of benchmark g: as wide as a load run's "server 40 QPS p99". */
static int names_width(const struct doc_history *h, size_t g)
{
    int width = 16;
    for (size_t i = 0; i < h->n_results; i++)
        for (size_t r = 0; h->benchmark[i] == g && r < h->results[i].load.n; r++) {
            const struct doc_history_load *l = &h->results[i].load.run[r];
            int w = (int)(strlen(l->key) > 24 ? 24 : strlen(l->key)) + 1 +
                    (int)(strlen(l->metric) > 3 ? strlen(l->metric) : 3);
            width = w > width ? (w > 30 ? 30 : w) : width;
        }
    return width;
}

static void print_trends(FILE *out, const struct doc_history *h)
{
    bool utf8 = utf8_locale(), header = false;
    for (size_t g = 0; g < h->n_benchmarks; g++) {
        size_t total = 0;
        for (size_t i = 0; i < h->n_results; i++)
            total += h->benchmark[i] == g;
        if (total < 2)
            continue;
        if (!header)
            fputs("\ntrends, oldest to newest (median of each result; min .. max):\n", out);
        header = true;
        char name[96];
        benchmark_name(first_of(h, g), name, sizeof name);
        fprintf(out, "%s: %zu results", name, total);
        if (total > MAX_SPARK)
            fprintf(out, " (the newest %d shown)", MAX_SPARK);
        fputc('\n', out);
        size_t m;
        size_t *idx = members(h, g, &m);
        struct export_table t;
        export_table_init(&t, 3, "", "", "");
        for (size_t s = 0; s < figures_shown(h); s++)
            stage_row(&t, h, idx, m, h->stages[s], utf8);
        load_rows(&t, h, idx, m, utf8);
        const struct export_text_column col[3] = {
            {.width = names_width(h, g), .sep = "  ", .bytes = true},
            {.sep = " "},
            {.sep = "  "},
        };
        const struct export_text_layout layout = {.col = col, .trim = true};
        if (t.nrows)
            export_table_print(out, &t, &layout);
        else /* not a header with nothing under it (issue 13) */
            fputs("  no successful result: nothing to draw\n", out);
        export_table_free(&t);
        free(idx);
    }
}

/* ------------------------------------------------------------------ the changes */

/* What the code was on either side of a change: the git commits of the working directories the
 * results were measured in (environment.git.commit), which is what a user bisects, not result
 * ids. Says so when they are the same commit (then it is not a change of the code) or unknown. */
static void print_commits(FILE *out, const struct doc_history_result *r,
                          const struct doc_history_result *before)
{
    const char *now = r->commit, *was = before ? before->commit : NULL;
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

static void print_changes(FILE *out, const struct doc_history *h)
{
    fputs("\nchanges (docs/store.md):\n", out);
    struct export_table t;
    export_table_init(&t, 5, "", "", "", "", "");
    t.numeric = 1u << 2;
    for (size_t k = 0; k < h->n_series; k++)
        for (size_t j = 0; j < h->series[k].n_changes; j++) {
            const struct doc_history_series *s = &h->series[k];
            const struct doc_history_change *c = &s->changes[j];
            char name[96], a[32], b[32];
            benchmark_name(first_of(h, s->benchmark), name, sizeof name);
            const char *verdict = c->change_pct > 0 ? "slower" : "faster";
            size_t row = export_table_row(&t, 0);
            export_table_set(&t, row, 0, "%s", name);
            export_table_set(&t, row, 1, "%s", s->stage);
            export_table_set(&t, row, 2, "%+.1f%%", c->change_pct);
            export_table_set(&t, row, 3, "%s", verdict);
            export_table_tone(&t, row, 3, export_verdict_tone(verdict));
            export_table_set(&t, row, 4, "from %s  (%s -> %s, strength %.1f)",
                             h->results[s->points[c->point].result].id,
                             units_duration(c->before_ns, a, sizeof a),
                             units_duration(c->after_ns, b, sizeof b), c->z);
        }
    if (!t.nrows)
        fprintf(out, "  none: no step of %g %% or more stands out of the noise\n",
                h->min_effect_pct);
    const struct export_text_column col[5] = {
        {.width = 16, .sep = "  ", .bytes = true},
        {.width = 12, .sep = " ", .bytes = true},
        {.width = 7, .sep = " ", .bytes = true},
        {.width = 7, .sep = " ", .bytes = true},
        {.sep = " "},
    };
    size_t row = 0;
    for (size_t k = 0; k < h->n_series; k++)
        for (size_t j = 0; j < h->series[k].n_changes; j++, row++) {
            const struct doc_history_series *s = &h->series[k];
            size_t at = s->changes[j].point;
            const struct export_text_layout layout = {.col = col, .trim = true,
                                                      .rows_from = row, .rows_to = row + 1};
            export_table_print(out, &t, &layout);
            print_commits(out, &h->results[s->points[at].result],
                          at ? &h->results[s->points[at - 1].result] : NULL);
        }
    export_table_free(&t);
}

/* ------------------------------------------------------------------ the text */

static void print_text(FILE *out, const struct doc_history *h)
{
    if (!h->n_results) {
        fprintf(out, "no results%s%s%s%s%s%s%s%s in %s\n", h->label ? " with label '" : "",
                h->label ? h->label : "", h->label ? "'" : "",
                h->stage ? (h->label ? " and stage '" : " with a stage '") : "",
                h->stage ? h->stage : "", h->stage ? "'" : "", h->host ? " from host " : "",
                h->host ? h->host : "", h->store);
        return;
    }
    print_table(out, h);
    print_trends(out, h);
    if (h->detect)
        print_changes(out, h);
}

static void draw_text(FILE *out, const void *h)
{
    print_text(out, h);
}

int history_text_print(FILE *out, const struct doc_history *h)
{
    return export_text_draw(out, draw_text, h);
}
