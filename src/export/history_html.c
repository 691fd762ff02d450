/* history_html.c: `mlbench history --format html` (history.h), a dashboard in the spirit of
 * airspeed velocity's: one chart per series (label or command, and stage) of each result's
 * median over the time it was measured, the interval of the median shaded, one line per host,
 * the step changes that detection found marked where they start with the commit they start
 * at (linked with --commit-url), the list of changes first, and filters by label and host.
 *
 * Like the report (html.c) the page is one self-contained file under a Content-Security-Policy
 * that forbids every load and every script ("default-src 'none'; style-src 'unsafe-inline'"),
 * so it shows the same from a CI artifact, a mail or a disk, and a browser has nothing to say
 * on its console. The filters therefore need no script: they are radio buttons (visually
 * hidden, their <label>s shown as buttons) placed before the lists they filter, and CSS rules
 * generated for the page (#fl-3:checked ~ .charts .s:not(.l3) {display:none}) hide what the
 * choice leaves out. Every text from the results is escaped (html_text); long names are cut
 * with an ellipsis and kept whole in a title. */
#include "export/history.h"
#include "export/html.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/units.h"
#include "util/xalloc.h"

#define TOP 36.0          /* room above the plot for two rows of change labels */
#define BOTTOM 206.0
#define HEIGHT 252.0
#define MAX_NS 1e18       /* a median beyond 31 years is no measurement: not drawn */
#define NAME_CHARS 90     /* of a series name in a caption */
#define PILL_CHARS 40     /* of a name on a filter button */
#define SLOWER "#b91c1c"
#define FASTER "#15803d"

/* Tableau 10, as the report's charts: one colour per host. */
static const char *const palette[] = {
    "#4e79a7", "#f28e2b", "#76b7b2", "#59a14f", "#b07aa1",
    "#edc948", "#9c755f", "#ff9da7", "#bab0ac", "#e15759",
};
#define N_PALETTE (sizeof palette / sizeof palette[0])

static const char extra_style[] =
    ".fi{position:absolute;opacity:0;width:1px;height:1px;margin:0}\n"
    ".filters{margin:.6em 0 1em;font-size:.9em}.frow{display:flex;flex-wrap:wrap;gap:.35em;"
    "align-items:center;margin:.3em 0}.frow>b{min-width:4.5em;font-weight:600}\n"
    ".frow label{cursor:pointer;border:1px solid #d1d5db;border-radius:999px;"
    "padding:.05em .75em;max-width:24em;overflow:hidden;text-overflow:ellipsis;"
    "white-space:nowrap}.frow label:hover{background:#f3f4f6}\n"
    ".nomatch{display:none;color:#6b7280;font-style:italic}p.empty{font-size:1.1em}\n"
    "figure.s{margin:1.4em 0 1.8em}figure.s>figcaption{white-space:nowrap;overflow:hidden;"
    "text-overflow:ellipsis;font-size:1em}figcaption .st{font-weight:400;color:#6b7280}\n"
    "svg .band{opacity:.16}svg .ptl{fill:none;stroke-width:1.6;stroke-linejoin:round}"
    "svg .mark{stroke-width:1.5;stroke-dasharray:5 3}svg .level{stroke-width:1.2;"
    "stroke-dasharray:2 3;fill:none}svg .marktext{font-size:11px;font-weight:600}\n"
    "ul.marks{margin:.2em 0 0;padding-left:1.2em;font-size:.88em}ul.marks li{margin:.15em 0}\n"
    "td.name{max-width:20em;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}\n"
    "code.c{font-size:.92em}\n";

/* ---- what the page filters on --------------------------------------------------------- */

struct page {
    FILE *out;
    const struct history_doc *d;
    const char **hosts;     /* distinct hosts of the results */
    size_t n_hosts;
    size_t *host_of;        /* per result: index in hosts */
    size_t *name_of;        /* per series: index of its name among the distinct names */
    size_t *name_first;     /* per name: its first series */
    size_t n_names;
};

static bool same_name(const struct history_series *a, const struct history_series *b)
{
    if (a->label || b->label)
        return a->label && b->label && !strcmp(a->label, b->label);
    return !strcmp(a->command ? a->command : "", b->command ? b->command : "");
}

static void page_init(struct page *pg, FILE *out, const struct history_doc *d)
{
    memset(pg, 0, sizeof *pg);
    pg->out = out;
    pg->d = d;
    pg->n_hosts = history_hosts(d, &pg->hosts, &pg->host_of);
    pg->name_of = xcalloc(d->n_series + 1, sizeof *pg->name_of);
    pg->name_first = xcalloc(d->n_series + 1, sizeof *pg->name_first);
    for (size_t k = 0; k < d->n_series; k++) {
        size_t m = 0;
        while (m < pg->n_names && !same_name(&d->series[pg->name_first[m]], &d->series[k]))
            m++;
        if (m == pg->n_names)
            pg->name_first[pg->n_names++] = k;
        pg->name_of[k] = m;
    }
}

static void page_free(struct page *pg)
{
    free(pg->hosts);
    free(pg->host_of);
    free(pg->name_of);
    free(pg->name_first);
}

static bool label_filter(const struct page *pg)
{
    return pg->n_names > 1;
}

static bool host_filter(const struct page *pg)
{
    return pg->n_hosts > 1;
}

static const char *host_name(const char *host)
{
    return host ? host : "(unknown host)";
}

/* Whether series k has a point measured on host h. */
static bool series_on_host(const struct page *pg, size_t k, size_t h)
{
    const struct history_series *s = &pg->d->series[k];
    for (size_t i = 0; i < s->n_points; i++)
        if (pg->host_of[s->points[i].result] == h)
            return true;
    return false;
}

/* The classes of series k: "s l<name>" and " h<host>" for each host it has points of. */
static void series_classes(const struct page *pg, size_t k)
{
    fprintf(pg->out, "s l%zu", pg->name_of[k]);
    for (size_t h = 0; h < pg->n_hosts; h++)
        if (series_on_host(pg, k, h))
            fprintf(pg->out, " h%zu", h);
}

/* A rule for the choice of label i (n_names: all) and host j (n_hosts: all): "#fl-i:checked~
 * #fh-j:checked~" then what. */
static void choice_rule(const struct page *pg, size_t i, size_t j, const char *what)
{
    FILE *out = pg->out;
    if (label_filter(pg) && i == pg->n_names)
        fputs("#fl-a:checked~", out);
    else if (label_filter(pg))
        fprintf(out, "#fl-%zu:checked~", i);
    if (host_filter(pg) && j == pg->n_hosts)
        fputs("#fh-a:checked~", out);
    else if (host_filter(pg))
        fprintf(out, "#fh-%zu:checked~", j);
    fprintf(out, "%s\n", what);
}

/* The rules of one filter f ('l': label, 'h': host) of n choices: the button chosen filled
 * (and outlined when it has the keyboard's focus), and for choice i, what lacks class f<i>
 * hidden: the series and the rows of changes, and with lines (hosts) the lines and legends
 * inside the charts left. */
static void choice_rules(FILE *out, char f, size_t n, bool lines)
{
    static const char chosen[] = "{background:#4e79a7;border-color:#4e79a7;color:#fff}\n";
    static const char focus[] = "{outline:2px solid #1f2937;outline-offset:1px}\n";
    for (size_t i = 0; i <= n; i++) {
        char id[32];
        if (i == n)
            snprintf(id, sizeof id, "f%c-a", f);
        else
            snprintf(id, sizeof id, "f%c-%zu", f, i);
        fprintf(out, "#%s:checked~.filters label[for=%s]%s#%s:focus-visible~.filters "
                "label[for=%s]%s", id, id, chosen, id, id, focus);
        if (i == n)
            continue;
        fprintf(out, "#%s:checked~.charts .s:not(.%c%zu),#%s:checked~.changes .s:not(.%c%zu)",
                id, f, i, id, f, i);
        if (lines)
            fprintf(out, ",#%s:checked~.charts .p:not(.%c%zu)", id, f, i);
        fputs("{display:none}\n", out);
    }
}

/* The rules of the filters: for label i everything of another name hidden; for host j the
 * series without a point on it hidden, and in the others the lines of other hosts; "nothing
 * matches" shown for a choice that leaves nothing. */
static void filter_rules(const struct page *pg)
{
    if (label_filter(pg))
        choice_rules(pg->out, 'l', pg->n_names, false);
    if (host_filter(pg))
        choice_rules(pg->out, 'h', pg->n_hosts, true);
    /* a choice of label i (n_names: all) and host j (n_hosts: all) that leaves no chart, or
     * no change, says so */
    for (size_t i = label_filter(pg) ? 0 : pg->n_names; i <= pg->n_names; i++)
        for (size_t j = host_filter(pg) ? 0 : pg->n_hosts; j <= pg->n_hosts; j++) {
            bool chart = false, change = false, changes = false;
            for (size_t k = 0; k < pg->d->n_series; k++) {
                const struct history_series *s = &pg->d->series[k];
                bool label = i == pg->n_names || pg->name_of[k] == i;
                chart |= label && (j == pg->n_hosts || series_on_host(pg, k, j));
                for (size_t c = 0; c < s->n_changes; c++) {
                    changes = true;
                    change |= label && (j == pg->n_hosts ||
                                        pg->host_of[s->points[s->changes[c].point].result] == j);
                }
            }
            if (!chart)
                choice_rule(pg, i, j, ".charts .nomatch{display:block}");
            if (changes && !change) {
                choice_rule(pg, i, j, ".changes .nomatch{display:block}");
                choice_rule(pg, i, j, ".changes .scroll{display:none}");
            }
        }
}

/* The radio buttons (before everything they filter) and their labels. */
static void filter_inputs(const struct page *pg)
{
    FILE *out = pg->out;
    if (label_filter(pg)) {
        fputs("<input type=\"radio\" class=\"fi\" name=\"fl\" id=\"fl-a\" checked>", out);
        for (size_t i = 0; i < pg->n_names; i++)
            fprintf(out, "<input type=\"radio\" class=\"fi\" name=\"fl\" id=\"fl-%zu\">", i);
        fputc('\n', out);
    }
    if (host_filter(pg)) {
        fputs("<input type=\"radio\" class=\"fi\" name=\"fh\" id=\"fh-a\" checked>", out);
        for (size_t j = 0; j < pg->n_hosts; j++)
            fprintf(out, "<input type=\"radio\" class=\"fi\" name=\"fh\" id=\"fh-%zu\">", j);
        fputc('\n', out);
    }
}

static void pill(FILE *out, const char *id, const char *text, const char *colour)
{
    fprintf(out, "<label for=\"%s\" title=\"", id);
    html_text(out, text);
    fputs("\">", out);
    if (colour)
        fprintf(out, "<i style=\"display:inline-block;width:.7em;height:.7em;border-radius:50%%;"
                "margin-right:.35em;background:%s\"></i>", colour);
    html_short_text(out, text, PILL_CHARS);
    fputs("</label>", out);
}

static void filter_bar(const struct page *pg)
{
    FILE *out = pg->out;
    if (!label_filter(pg) && !host_filter(pg))
        return;
    fputs("<div class=\"filters\">\n", out);
    if (label_filter(pg)) {
        fputs("<div class=\"frow\"><b>Label</b><label for=\"fl-a\">all</label>", out);
        for (size_t i = 0; i < pg->n_names; i++) {
            char id[32];
            snprintf(id, sizeof id, "fl-%zu", i);
            char *name = history_series_name(&pg->d->series[pg->name_first[i]]);
            pill(out, id, name, NULL);
            free(name);
        }
        fputs("</div>\n", out);
    }
    if (host_filter(pg)) {
        fputs("<div class=\"frow\"><b>Host</b><label for=\"fh-a\">all</label>", out);
        for (size_t j = 0; j < pg->n_hosts; j++) {
            char id[32];
            snprintf(id, sizeof id, "fh-%zu", j);
            pill(out, id, host_name(pg->hosts[j]), palette[j % N_PALETTE]);
        }
        fputs("</div>\n", out);
    }
    fputs("</div>\n", out);
}

/* ---- the sentence of a change --------------------------------------------------------- */

/* <a href="URL"><code>a1b2c3d4e5f6</code></a>, or the code alone without a template. */
static void commit_html(FILE *out, const struct history_doc *d, const char *commit)
{
    char shortc[13];
    char *url = history_commit_url(d->commit_url, commit);
    if (url) {
        fputs("<a href=\"", out);
        html_text(out, url);
        fputs("\">", out);
    }
    fputs("<code class=\"c\" title=\"", out);
    html_text(out, commit);
    fputs("\">", out);
    html_text(out, history_short_commit(commit, shortc));
    fputs("</code>", out);
    if (url)
        fputs("</a>", out);
    free(url);
}

/* "<b>slower by 98.3 %</b> from commit C (result ID, host H): 20.1 ms → 40.3 ms; the result
 * before: commit B (ID)." */
static void change_html(FILE *out, const struct history_doc *d, const struct history_series *s,
                        const struct history_change *c)
{
    const struct history_result *r = &d->results[s->points[c->point].result];
    /* the result before: detect starts no change at the first point, but the model allows it */
    const struct history_result *b = c->point ? &d->results[s->points[c->point - 1].result]
                                              : NULL;
    char size[48], x[32], y[32];
    fprintf(out, "<b class=\"%s\">%s</b> from ", c->change_pct > 0 ? "slower" : "faster",
            history_change_size(c, size, sizeof size));
    if (r->commit) {
        fputs("commit ", out);
        commit_html(out, d, r->commit);
        fputs(" (result <code class=\"c\">", out);
    } else {
        fputs("result <code class=\"c\">", out);
    }
    html_text(out, r->id);
    fputs("</code>", out);
    if (r->commit)
        fputc(')', out);
    fprintf(out, ": %s \u2192 %s", units_duration(c->before_ns, x, sizeof x),
            units_duration(c->after_ns, y, sizeof y));
    if (r->commit && b && b->commit && !strcmp(r->commit, b->commit)) {
        fputs("; measured at the same commit as the result before it: not a change of the "
              "code (the machine, the data, other load?)", out);
    } else if (b && b->commit) {
        fputs("; the result before: commit ", out);
        commit_html(out, d, b->commit);
        fputs(" (<code class=\"c\">", out);
        html_text(out, b->id);
        fputs("</code>)", out);
    } else if (!r->commit) {
        fputs(" (no git commit recorded: measured outside a git work tree)", out);
    }
    fputc('.', out);
}

/* The table of every change, before the charts. */
static void changes_table(const struct page *pg)
{
    FILE *out = pg->out;
    const struct history_doc *d = pg->d;
    size_t n = 0;
    for (size_t k = 0; k < d->n_series; k++)
        n += d->series[k].n_changes;
    fputs("<section class=\"changes\">\n<h2>Step changes</h2>\n", out);
    if (!n) {
        fprintf(out, "<p>None: no step of %g %% or more stands out of the noise.</p>\n"
                "</section>\n", d->min_effect_pct);
        return;
    }
    fputs("<p class=\"nomatch\">No step change for this choice of label and host.</p>\n", out);
    fputs("<div class=\"scroll\"><table>\n<thead><tr><th>benchmark</th><th>stage</th>"
          "<th>change</th></tr></thead>\n<tbody>\n", out);
    for (size_t k = 0; k < d->n_series; k++) {
        const struct history_series *s = &d->series[k];
        char *name = history_series_name(s);
        for (size_t c = 0; c < s->n_changes; c++) {
            size_t host = pg->host_of[s->points[s->changes[c].point].result];
            fprintf(out, "<tr class=\"s l%zu h%zu\"><td class=\"name\" title=\"", pg->name_of[k],
                    host);
            html_text(out, name);
            fprintf(out, "\"><a href=\"#chart-%zu\">", k + 1);
            html_short_text(out, name, 48);
            fputs("</a></td><td>", out);
            html_short_text(out, s->stage, 32);
            fputs("</td><td>", out);
            change_html(out, d, s, &s->changes[c]);
            fputs("</td></tr>\n", out);
        }
        free(name);
    }
    fputs("</tbody>\n</table></div>\n</section>\n", out);
}

/* ---- one chart ------------------------------------------------------------------------ */

struct axes {
    bool by_time;          /* x is the time measured; else the order of the results */
    double x0, x1;         /* x range (seconds since 1970, or index) */
    double y0, y1, ystep;  /* y range and tick step, ns */
    double scale;          /* ns per unit of the y labels */
    const char *unit;
};

static bool drawable(const struct history_point *p)
{
    return isfinite(p->median_ns) && p->median_ns > 0 && p->median_ns <= MAX_NS;
}

/* The interval of a point, when it is one to draw. */
static bool interval(const struct history_point *p, double *lo, double *hi)
{
    *lo = p->ci_low_ns;
    *hi = p->ci_high_ns;
    return isfinite(*lo) && isfinite(*hi) && *lo > 0 && *hi >= *lo && *hi <= MAX_NS;
}

static double x_of(const struct history_doc *d, const struct axes *a,
                   const struct history_series *s, size_t i)
{
    double v = a->by_time ? history_time(d->results[s->points[i].result].created) : (double)i;
    return PLOT_X0 + (PLOT_X1 - PLOT_X0) * (v - a->x0) / (a->x1 - a->x0);
}

static double y_of(const struct axes *a, double ns)
{
    return BOTTOM - (BOTTOM - TOP) * (ns - a->y0) / (a->y1 - a->y0);
}

/* The axes of series s; false when nothing of it can be drawn. */
static bool axes_of(const struct history_doc *d, const struct history_series *s, struct axes *a)
{
    memset(a, 0, sizeof *a);
    double lo = INFINITY, hi = -INFINITY, t0 = INFINITY, t1 = -INFINITY;
    size_t n = 0;
    a->by_time = true;
    for (size_t i = 0; i < s->n_points; i++) {
        const struct history_point *p = &s->points[i];
        if (!drawable(p))
            continue;
        double l, h, t = history_time(d->results[p->result].created);
        if (!interval(p, &l, &h))
            l = h = p->median_ns;
        lo = fmin(lo, fmin(l, p->median_ns));
        hi = fmax(hi, fmax(h, p->median_ns));
        a->by_time &= isfinite(t);
        t0 = fmin(t0, t);
        t1 = fmax(t1, t);
        n++;
    }
    if (!n)
        return false;
    if (!a->by_time) {
        t0 = 0;
        t1 = (double)(s->n_points - 1);
    }
    double pad = t1 > t0 ? (t1 - t0) * 0.04 : a->by_time ? 30 : 1;
    a->x0 = t0 - pad;
    a->x1 = t1 + pad;
    a->unit = history_unit(hi, &a->scale);
    if (lo >= 0.4 * hi) { /* a band around the data: a few percent must show */
        a->ystep = html_nice_ceil(hi > lo ? (hi - lo) / 4 : hi * 0.02);
        a->y0 = floor(lo / a->ystep) * a->ystep;
        a->y1 = ceil(hi / a->ystep) * a->ystep;
    } else { /* from zero */
        a->ystep = html_nice_ceil(hi / 4);
        a->y1 = ceil(hi / a->ystep) * a->ystep;
    }
    if (!(a->y1 > a->y0))
        a->y1 = a->y0 + a->ystep;
    return isfinite(a->y0) && isfinite(a->y1) && a->ystep > 0 && isfinite(a->x0) &&
           isfinite(a->x1);
}

/* A time tick's text: hundredths or tenths of seconds, seconds, minutes, or the date, as the
 * step calls for. */
static void time_label(double t, double step, bool one_day, char *buf, size_t len)
{
    double cs = round(t * 100); /* in hundredths: a tick at 12.2 s may be 12.19999 */
    time_t tt = (time_t)floor(cs / 100);
    int frac = (int)(cs - 100.0 * (double)tt);
    struct tm tm;
    char hms[16];
    if (!gmtime_r(&tt, &tm) || !strftime(hms, sizeof hms, "%H:%M:%S", &tm)) {
        snprintf(buf, len, "?");
        return;
    }
    if (step < 0.1)
        snprintf(buf, len, "%s.%02d", hms, frac);
    else if (step < 1)
        snprintf(buf, len, "%s.%d", hms, frac / 10);
    else if (step < 60)
        snprintf(buf, len, "%s", hms);
    else if (step < 86400 && one_day)
        strftime(buf, len, "%H:%M", &tm);
    else if (step < 86400)
        strftime(buf, len, "%m-%d %H:%M", &tm);
    else
        strftime(buf, len, "%Y-%m-%d", &tm);
}

static void x_axis(FILE *out, const struct axes *a)
{
    char label[96] = "results, oldest to newest (some have no time recorded)";
    if (!a->by_time) { /* the results' numbers, 1 the oldest */
        double step = html_nice_ceil(fmax(1, (a->x1 - a->x0) / 8));
        for (int k = 0; k <= 12 && k * step <= a->x1; k++) {
            double x = PLOT_X0 + (PLOT_X1 - PLOT_X0) * (k * step - a->x0) / (a->x1 - a->x0);
            fprintf(out, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">"
                    "%.0f</text>\n", x, BOTTOM + 14, k * step + 1);
        }
    } else {
        static const double steps[] = {0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30,
                                       60, 120, 300, 600, 900, 1800,
                                       3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800,
                                       1209600, 2592000, 7776000, 31536000};
        double span = a->x1 - a->x0, step = 0;
        for (size_t i = 0; i < sizeof steps / sizeof steps[0] && !step; i++)
            if (span / steps[i] <= 7)
                step = steps[i];
        if (!step)
            step = 31536000 * html_nice_ceil(span / 7 / 31536000);
        char d0[16], d1[16];
        time_t t0 = (time_t)floor(a->x0), t1 = (time_t)floor(a->x1);
        struct tm tm0, tm1;
        bool one_day = gmtime_r(&t0, &tm0) && gmtime_r(&t1, &tm1) &&
                       strftime(d0, sizeof d0, "%Y-%m-%d", &tm0) &&
                       strftime(d1, sizeof d1, "%Y-%m-%d", &tm1) && !strcmp(d0, d1);
        double first = ceil(a->x0 / step) * step;
        for (int k = 0; k <= 12 && isfinite(first) && first + k * step <= a->x1; k++) {
            double t = first + k * step;
            char b[32];
            double x = PLOT_X0 + (PLOT_X1 - PLOT_X0) * (t - a->x0) / (a->x1 - a->x0);
            time_label(t, step, one_day, b, sizeof b);
            fprintf(out, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                    "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                    x, TOP, x, BOTTOM, x, BOTTOM + 14, b);
        }
        if (one_day)
            snprintf(label, sizeof label, "time measured (UTC), %s", d0);
        else
            snprintf(label, sizeof label, "time measured (UTC)");
    }
    fprintf(out, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n"
            "<text class=\"axislabel\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
            PLOT_X0, BOTTOM, PLOT_X1, BOTTOM, (PLOT_X0 + PLOT_X1) / 2, HEIGHT - 10, label);
}

static void y_axis(FILE *out, const struct axes *a)
{
    /* as many decimals as the step needs (a step of 0.025 ms: three), the same on every tick */
    double step = a->ystep / a->scale;
    int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    while (dec < 9 && fabs(step * pow(10, dec) - round(step * pow(10, dec))) > 1e-6)
        dec++;
    for (int k = 0; k <= 12; k++) {
        double v = a->y0 + k * a->ystep;
        if (v > a->y1 * (1 + 1e-9))
            break;
        double y = y_of(a, v);
        fprintf(out, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.*f</text>\n",
                PLOT_X0, y, PLOT_X1, y, PLOT_X0 - 6, y + 4, dec, v / a->scale);
    }
    fprintf(out, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n"
            "<text class=\"axislabel\" x=\"16\" y=\"%.1f\" text-anchor=\"middle\" "
            "transform=\"rotate(-90 16 %.1f)\">median time (%s)</text>\n", PLOT_X0, TOP,
            PLOT_X0, BOTTOM, (TOP + BOTTOM) / 2, (TOP + BOTTOM) / 2, a->unit);
}

/* The tooltip of point i of s. */
static void point_title(FILE *out, const struct page *pg, const struct history_series *s,
                        size_t i)
{
    const struct history_point *p = &s->points[i];
    const struct history_result *r = &pg->d->results[p->result];
    char when[32], v[32], lo[32], hi[32];
    fputs("<title>", out);
    html_text(out, r->id);
    fputc('\n', out);
    html_text(out, history_created(r->created, when, sizeof when));
    fputs(" UTC\n", out);
    if (r->commit) {
        fputs("commit ", out);
        html_text(out, r->commit);
    } else {
        fputs("no git commit recorded", out);
    }
    fputs("\nhost ", out);
    html_text(out, host_name(r->host));
    fprintf(out, "\nmedian %s", units_duration(p->median_ns, v, sizeof v));
    double l, h;
    if (interval(p, &l, &h)) {
        fputs("; ", out);
        if (isfinite(p->ci_level))
            fprintf(out, "%.0f %% ", 100 * p->ci_level);
        fprintf(out, "interval %s .. %s", units_duration(l, lo, sizeof lo),
                units_duration(h, hi, sizeof hi));
    }
    if (p->n > 0)
        fprintf(out, "; %ld run%s", p->n, p->n == 1 ? "" : "s");
    for (size_t c = 0; c < s->n_changes; c++)
        if (s->changes[c].point == i) {
            char size[48];
            fprintf(out, "\nstep change starts here: %s",
                    history_change_size(&s->changes[c], size, sizeof size));
        }
    fputs("</title>", out);
}

/* The points of host h in s: band, line, dots. */
static void host_line(FILE *out, const struct page *pg, const struct history_series *s,
                      const struct axes *a, size_t h)
{
    size_t *idx = xcalloc(s->n_points + 1, sizeof *idx), n = 0, with_ci = 0;
    for (size_t i = 0; i < s->n_points; i++) {
        double l, hh;
        if (!drawable(&s->points[i]) || pg->host_of[s->points[i].result] != h)
            continue;
        idx[n++] = i;
        with_ci += interval(&s->points[i], &l, &hh);
    }
    if (!n) {
        free(idx);
        return;
    }
    const char *colour = palette[h % N_PALETTE];
    fprintf(out, "<g class=\"p h%zu\">\n", h);
    if (n >= 2 && with_ci) { /* the band: upper edge forwards, lower edge back */
        fprintf(out, "<polygon class=\"band\" fill=\"%s\" points=\"", colour);
        for (size_t k = 0; k < n; k++) {
            double l, hh;
            if (!interval(&s->points[idx[k]], &l, &hh))
                hh = s->points[idx[k]].median_ns;
            fprintf(out, "%.2f,%.2f ", x_of(pg->d, a, s, idx[k]), y_of(a, hh));
        }
        for (size_t k = n; k-- > 0;) {
            double l, hh;
            if (!interval(&s->points[idx[k]], &l, &hh))
                l = s->points[idx[k]].median_ns;
            fprintf(out, "%.2f,%.2f ", x_of(pg->d, a, s, idx[k]), y_of(a, l));
        }
        fputs("\"/>\n", out);
    }
    if (n >= 2) {
        fprintf(out, "<polyline class=\"ptl\" stroke=\"%s\" points=\"", colour);
        for (size_t k = 0; k < n; k++)
            fprintf(out, "%.2f,%.2f ", x_of(pg->d, a, s, idx[k]),
                    y_of(a, s->points[idx[k]].median_ns));
        fputs("\"/>\n", out);
    }
    for (size_t k = 0; k < n; k++) {
        const struct history_point *p = &s->points[idx[k]];
        double x = x_of(pg->d, a, s, idx[k]), l, hh;
        fputs("<g>", out);
        if (n == 1 && interval(p, &l, &hh))
            fprintf(out, "<path d=\"M%.2f %.2fV%.2fM%.2f %.2fh8M%.2f %.2fh8\" stroke=\"%s\" "
                    "fill=\"none\"/>", x, y_of(a, l), y_of(a, hh), x - 4, y_of(a, l), x - 4,
                    y_of(a, hh), colour);
        fprintf(out, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3.5\" fill=\"%s\">", x,
                y_of(a, p->median_ns), colour);
        point_title(out, pg, s, idx[k]);
        fputs("</circle></g>\n", out);
    }
    fputs("</g>\n", out);
    free(idx);
}

/* The change markers: a dashed line where each starts, the levels either side, and a label
 * "slower by 98.3 % from a1b2c3d4e5f6" on one of two rows above the plot. */
static void change_marks(FILE *out, const struct page *pg, const struct history_series *s,
                         const struct axes *a)
{
    for (size_t c = 0; c < s->n_changes; c++) {
        const struct history_change *ch = &s->changes[c];
        if (!drawable(&s->points[ch->point]))
            continue;
        const struct history_result *r = &pg->d->results[s->points[ch->point].result];
        const char *colour = ch->change_pct > 0 ? SLOWER : FASTER;
        double x = x_of(pg->d, a, s, ch->point);
        size_t from = c ? s->changes[c - 1].point : 0;
        size_t to = c + 1 < s->n_changes ? s->changes[c + 1].point : s->n_points - 1;
        double xa = x_of(pg->d, a, s, from), xb = x_of(pg->d, a, s, to);
        xa = isfinite(xa) ? xa : x; /* a point not drawn may have no time */
        xb = isfinite(xb) ? xb : x;
        double yb = y_of(a, ch->before_ns), ya = y_of(a, ch->after_ns);
        char size[48], shortc[13];
        history_change_size(ch, size, sizeof size);
        fputs("<g class=\"change\">", out);
        if (yb >= TOP && yb <= BOTTOM && ya >= TOP && ya <= BOTTOM)
            fprintf(out, "<path class=\"level\" stroke=\"%s\" d=\"M%.2f %.2fH%.2fM%.2f %.2f"
                    "H%.2f\"/>", colour, xa, yb, x, x, ya, xb);
        fprintf(out, "<line class=\"mark\" stroke=\"%s\" x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" "
                "y2=\"%.1f\"><title>%s</title></line>\n", colour, x, TOP - 8, x, BOTTOM, size);
        bool right = x > (PLOT_X0 + PLOT_X1) / 2;
        char *url = history_commit_url(pg->d->commit_url, r->commit);
        if (url) {
            fputs("<a href=\"", out);
            html_text(out, url);
            fputs("\">", out);
        }
        fprintf(out, "<text class=\"marktext\" fill=\"%s\" x=\"%.2f\" y=\"%.1f\" "
                "text-anchor=\"%s\">%s from ", colour, right ? x - 4 : x + 4,
                c % 2 ? 26.0 : 13.0, right ? "end" : "start", size);
        if (r->commit)
            html_text(out, history_short_commit(r->commit, shortc));
        else
            html_short_text(out, r->id, 30);
        fputs("</text>", out);
        if (url)
            fputs("</a>", out);
        free(url);
        fputs("</g>\n", out);
    }
}

static void chart(const struct page *pg, size_t k)
{
    FILE *out = pg->out;
    const struct history_series *s = &pg->d->series[k];
    char *name = history_series_name(s);
    fprintf(out, "<figure class=\"");
    series_classes(pg, k);
    fprintf(out, "\" id=\"chart-%zu\">\n<figcaption title=\"", k + 1);
    html_text(out, name);
    fputs(": ", out);
    html_text(out, s->stage);
    fputs("\">", out);
    html_short_text(out, name, NAME_CHARS);
    fputs(" <span class=\"st\">\u00b7 ", out);
    html_short_text(out, s->stage, 40);
    fputs("</span></figcaption>\n", out);
    struct axes a;
    if (!s->n_points || !axes_of(pg->d, s, &a)) {
        fputs(s->n_points ? "<p>The medians are out of any measurable range: nothing to draw."
                            "</p>\n</figure>\n"
                          : "<p>No result of this benchmark succeeded: nothing to draw.</p>\n"
                            "</figure>\n", out);
        free(name);
        return;
    }
    fprintf(out, "<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
            "role=\"img\" aria-label=\"", CHART_W, HEIGHT, CHART_W, HEIGHT);
    html_text(out, name);
    fputs(": median time of each result over time\" xmlns=\"http://www.w3.org/2000/svg\">\n",
          out);
    x_axis(out, &a);
    y_axis(out, &a);
    size_t hosts = 0, dropped = 0;
    for (size_t h = 0; h < pg->n_hosts; h++)
        if (series_on_host(pg, k, h)) {
            host_line(out, pg, s, &a, h);
            hosts++;
        }
    for (size_t i = 0; i < s->n_points; i++)
        dropped += !drawable(&s->points[i]);
    change_marks(out, pg, s, &a);
    fputs("</svg>\n", out);
    if (hosts > 1 || pg->n_hosts > 1) {
        fputs("<div class=\"legend\">", out);
        for (size_t h = 0; h < pg->n_hosts; h++) {
            if (!series_on_host(pg, k, h))
                continue;
            fprintf(out, "<span class=\"p h%zu\" title=\"", h);
            html_text(out, host_name(pg->hosts[h]));
            fprintf(out, "\"><i style=\"background:%s\"></i>", palette[h % N_PALETTE]);
            html_short_text(out, host_name(pg->hosts[h]), PILL_CHARS);
            fputs("</span>", out);
        }
        fputs("</div>\n", out);
    }
    if (s->n_changes) {
        fputs("<ul class=\"marks\">\n", out);
        for (size_t c = 0; c < s->n_changes; c++) {
            size_t host = pg->host_of[s->points[s->changes[c].point].result];
            fprintf(out, "<li class=\"p h%zu\">", host);
            change_html(out, pg->d, s, &s->changes[c]);
            fputs("</li>\n", out);
        }
        fputs("</ul>\n", out);
    }
    if (dropped)
        fprintf(out, "<p class=\"note\">%zu result%s with a median beyond any measurable range "
                "not drawn.</p>\n", dropped, dropped == 1 ? "" : "s");
    fputs("</figure>\n", out);
    free(name);
}

/* ---- the page ------------------------------------------------------------------------- */

static void intro(const struct page *pg)
{
    FILE *out = pg->out;
    const struct history_doc *d = pg->d;
    char first[32], last[32];
    char *span = xasprintf("%zu result%s measured from %s to %s (UTC)", d->n_results,
                           d->n_results == 1 ? "" : "s",
                           history_created(d->results[0].created, first, sizeof first),
                           history_created(d->results[d->n_results - 1].created, last,
                                           sizeof last));
    fputs("<p>", out);
    html_text(out, span); /* the times are a result file's strings */
    free(span);
    if (pg->n_hosts > 1)
        fprintf(out, " on %zu hosts", pg->n_hosts);
    fprintf(out, ", in %zu chart%s: one per benchmark (label, or command without one) and "
            "stage.", d->n_series, d->n_series == 1 ? "" : "s");
    char *filters = history_filters(d);
    if (filters) {
        fputc(' ', out);
        html_text(out, filters);
        free(filters);
    }
    fprintf(out, "</p>\n<p class=\"note\">Each dot is a result's median time (hover it for the "
            "result, its commit, host and interval), the shaded band the interval of the "
            "median, one colour per host. A dashed line marks a step change of %g %% or more "
            "where it starts (the detection of <code>mlbench history --detect</code>, "
            "docs/store.md), with the levels either side.</p>\n", d->min_effect_pct);
}

static int html_write(FILE *out, const struct history_doc *d, char *err, size_t errlen)
{
    struct page pg;
    page_init(&pg, out, d);
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "style-src 'unsafe-inline'\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta name=\"generator\" content=\"mlbench " MLBENCH_VERSION "\">\n"
          "<title>mlbench history: ", out);
    html_text(out, d->store ? d->store : "");
    fprintf(out, "</title>\n<style>\n%s%s", html_style, extra_style);
    filter_rules(&pg);
    fputs("</style>\n</head>\n<body>\n<main>\n<h1>History of ", out);
    html_text(out, d->store ? d->store : "");
    fputs("</h1>\n", out);
    if (!d->n_results) {
        char *none = history_nothing(d);
        fputs("<p class=\"empty\">", out);
        html_text(out, none);
        fputs("</p>\n", out);
        free(none);
    } else {
        intro(&pg);
        filter_inputs(&pg);
        filter_bar(&pg);
        changes_table(&pg);
        fputs("<div class=\"charts\">\n<h2>Charts</h2>\n<p class=\"nomatch\">No chart for this "
              "choice of label and host: no result of the label was measured on the host.</p>\n", out);
        for (size_t k = 0; k < d->n_series; k++)
            chart(&pg, k);
        fputs("</div>\n", out);
    }
    fputs("<footer>Written by mlbench " MLBENCH_VERSION " (mlbench history --format html); "
          "docs/store.md explains the history and how changes are detected.</footer>\n"
          "</main>\n</body>\n</html>\n", out);
    page_free(&pg);
    return export_finish(out, "the HTML history", err, errlen);
}

const struct history_format history_html = {
    .name = "html",
    .extension = "html",
    .write = html_write,
};
