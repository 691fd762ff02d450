/* history_html_page.c: what the page of the HTML history dashboard and its charts write the
 * same way (history_html_page.h): a host's name and colour, the classes the filters hide a
 * series by, the sentence of a change. */
#include "export/history_html_page.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "export/html_draw.h"
#include "util/units.h"

/* Tableau 10, as the report's charts: one colour per host. */
const char *const history_html_palette[N_PALETTE] = {
    "#4e79a7", "#f28e2b", "#76b7b2", "#59a14f", "#b07aa1",
    "#edc948", "#9c755f", "#ff9da7", "#bab0ac", "#e15759",
};

const char *history_html_host_name(const char *host)
{
    return host ? host : "(unknown host)";
}

/* Whether series k has a point measured on host h. */
bool history_html_series_on_host(const struct history_page *pg, size_t k, size_t h)
{
    const struct doc_history_series *s = &pg->d->series[k];
    for (size_t i = 0; i < s->n_points; i++)
        if (pg->host_of[s->points[i].result] == h)
            return true;
    return false;
}

/* The classes of series k: "s l<name>" and " h<host>" for each host it has points of. */
void history_html_series_classes(const struct history_page *pg, size_t k)
{
    fprintf(pg->out, "s l%zu", pg->name_of[k]);
    for (size_t h = 0; h < pg->n_hosts; h++)
        if (history_html_series_on_host(pg, k, h))
            fprintf(pg->out, " h%zu", h);
}

/* ---- the sentence of a change --------------------------------------------------------- */

/* <a href="URL"><code>a1b2c3d4e5f6</code></a>, or the code alone without a template. */
static void commit_html(FILE *out, const struct doc_history *d, const char *commit)
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
void history_html_change(FILE *out, const struct doc_history *d, const struct doc_history_series *s,
                         const struct doc_history_change *c)
{
    const struct doc_history_result *r = &d->results[s->points[c->point].result];
    /* the result before: detect starts no change at the first point, but the model allows it */
    const struct doc_history_result *b = c->point ? &d->results[s->points[c->point - 1].result]
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
