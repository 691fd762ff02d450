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
 * with an ellipsis and kept whole in a title. The charts are drawn by history_html_chart.c;
 * what the two write alike (a host's name and colour, a change's sentence) is
 * history_html_page.c's. */
#include "export/history_html_chart.h"
#include "export/history_html_page.h"
#include "export/html_draw.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

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

static bool same_name(const struct doc_history_series *a, const struct doc_history_series *b)
{
    if (a->label || b->label)
        return a->label && b->label && !strcmp(a->label, b->label);
    return !strcmp(a->command ? a->command : "", b->command ? b->command : "");
}

static void page_init(struct history_page *pg, FILE *out, const struct doc_history *d)
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

static void page_free(struct history_page *pg)
{
    free(pg->hosts);
    free(pg->host_of);
    free(pg->name_of);
    free(pg->name_first);
}

static bool label_filter(const struct history_page *pg)
{
    return pg->n_names > 1;
}

static bool host_filter(const struct history_page *pg)
{
    return pg->n_hosts > 1;
}

/* A rule for the choice of label i (n_names: all) and host j (n_hosts: all): "#fl-i:checked~
 * #fh-j:checked~" then what. */
static void choice_rule(const struct history_page *pg, size_t i, size_t j, const char *what)
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
static void filter_rules(const struct history_page *pg)
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
                const struct doc_history_series *s = &pg->d->series[k];
                bool label = i == pg->n_names || pg->name_of[k] == i;
                chart |= label && (j == pg->n_hosts || history_html_series_on_host(pg, k, j));
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
static void filter_inputs(const struct history_page *pg)
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

static void filter_bar(const struct history_page *pg)
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
            pill(out, id, history_html_host_name(pg->hosts[j]),
                 history_html_palette[j % N_PALETTE]);
        }
        fputs("</div>\n", out);
    }
    fputs("</div>\n", out);
}

/* The table of every change, before the charts. */
static void changes_table(const struct history_page *pg)
{
    FILE *out = pg->out;
    const struct doc_history *d = pg->d;
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
        const struct doc_history_series *s = &d->series[k];
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
            history_html_change(out, d, s, &s->changes[c]);
            fputs("</td></tr>\n", out);
        }
        free(name);
    }
    fputs("</tbody>\n</table></div>\n</section>\n", out);
}

/* ---- the page ------------------------------------------------------------------------- */

static void intro(const struct history_page *pg)
{
    FILE *out = pg->out;
    const struct doc_history *d = pg->d;
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

static int html_write(FILE *out, const struct doc_history *d, char *err, size_t errlen)
{
    struct history_page pg;
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
            history_html_chart(&pg, k);
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
