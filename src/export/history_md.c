/* history_md.c: `mlbench history --format md` (history.h): for a GitHub comment or a job
 * summary, the step changes first, then a table per series (label or command, and stage):
 * date, commit (a link with --commit-url), result id, host when there are several, median,
 * interval of the median and the change that starts at that result. Text from the results is
 * escaped by markdown.c's rules; links are percent-encoded so no character ends them. */
#include "export/export.h"
#include "export/history.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/units.h"
#include "util/xalloc.h"

/* A link destination: bytes that could end it or break the table, and any that is not
 * printable ASCII, as %XX. */
static void md_url(FILE *out, const char *url)
{
    for (const unsigned char *p = (const unsigned char *)url; *p; p++) {
        if (*p <= ' ' || *p >= 0x7f || strchr("()<>[]|\\`\"'", *p))
            fprintf(out, "%%%02X", *p);
        else
            fputc(*p, out);
    }
}

/* The short commit, linked when the template allows. */
static void md_commit(FILE *out, const struct doc_history *d, const char *commit)
{
    char shortc[13];
    if (!commit) {
        fputs("-", out);
        return;
    }
    char *url = history_commit_url(d->commit_url, commit);
    if (url)
        fputc('[', out);
    export_md_text(out, history_short_commit(commit, shortc), 1);
    if (url) {
        fputs("](", out);
        md_url(out, url);
        fputc(')', out);
    }
    free(url);
}

/* "20.12 ms .. 20.31 ms (95 %)", or "-". */
static void md_interval(FILE *out, const struct doc_history_point *p)
{
    char a[32], b[32];
    if (!isfinite(p->ci_low_ns) || !isfinite(p->ci_high_ns)) {
        fputs("-", out);
        return;
    }
    fprintf(out, "%s .. %s", units_duration(p->ci_low_ns, a, sizeof a),
            units_duration(p->ci_high_ns, b, sizeof b));
    if (isfinite(p->ci_level))
        fprintf(out, " (%.0f %%)", 100 * p->ci_level);
}

/* "**slower by 98.3 %** (20.12 ms → 40.31 ms)" */
static void md_change(FILE *out, const struct doc_history_change *c)
{
    char size[48], a[32], b[32];
    fprintf(out, "**%s** (%s \u2192 %s)", history_change_size(c, size, sizeof size),
            units_duration(c->before_ns, a, sizeof a), units_duration(c->after_ns, b, sizeof b));
}

static void md_series(FILE *out, const struct doc_history *d, const struct doc_history_series *s,
                      bool hosts)
{
    char *name = history_series_name(s);
    fputs("## ", out);
    export_md_text(out, name, 1);
    fputs(": ", out);
    export_md_text(out, s->stage, 1);
    fputs("\n\n", out);
    free(name);
    if (!s->n_points) {
        fputs("No result of this series succeeded: nothing to show.\n\n", out);
        return;
    }
    fprintf(out, "| date (UTC) | commit | id |%s median | interval of the median | change |\n"
            "|---|---|---|%s---:|---|---|\n", hosts ? " host |" : "", hosts ? "---|" : "");
    for (size_t i = 0; i < s->n_points; i++) {
        const struct doc_history_point *p = &s->points[i];
        const struct doc_history_result *r = &d->results[p->result];
        char when[32], med[32];
        fputs("| ", out);
        export_md_text(out, history_created(r->created, when, sizeof when), 1);
        fputs(" | ", out);
        md_commit(out, d, r->commit);
        fputs(" | ", out);
        export_md_text(out, r->id, 1);
        if (hosts) {
            fputs(" | ", out);
            export_md_text(out, r->host ? r->host : "-", 1);
        }
        fprintf(out, " | %s | ", units_duration(p->median_ns, med, sizeof med));
        md_interval(out, p);
        fputs(" | ", out);
        for (size_t c = 0; c < s->n_changes; c++)
            if (s->changes[c].point == i)
                md_change(out, &s->changes[c]);
        fputs(" |\n", out);
    }
    fputc('\n', out);
}

/* The list of every change, before the tables: what a reviewer reads first. */
static void md_changes(FILE *out, const struct doc_history *d)
{
    size_t n = 0;
    for (size_t k = 0; k < d->n_series; k++)
        n += d->series[k].n_changes;
    if (!n) {
        fprintf(out, "No step change of %g %% or more stands out of the noise.\n\n",
                d->min_effect_pct);
        return;
    }
    fputs("Step changes:\n\n", out);
    for (size_t k = 0; k < d->n_series; k++) {
        const struct doc_history_series *s = &d->series[k];
        char *name = history_series_name(s);
        for (size_t c = 0; c < s->n_changes; c++) {
            const struct doc_history_result *r = &d->results[s->points[s->changes[c].point].result];
            fputs("- ", out);
            export_md_text(out, name, 1);
            fputs(" (", out);
            export_md_text(out, s->stage, 1);
            fputs("): ", out);
            md_change(out, &s->changes[c]);
            fputs(" from ", out);
            if (r->commit) {
                fputs("commit ", out);
                md_commit(out, d, r->commit);
                fputs(", result ", out);
            } else {
                fputs("result ", out);
            }
            export_md_text(out, r->id, 1);
            fputc('\n', out);
        }
        free(name);
    }
    fputc('\n', out);
}

static int md_write(FILE *out, const struct doc_history *d, char *err, size_t errlen)
{
    fputs("# mlbench history: ", out);
    export_md_text(out, d->store ? d->store : "", 1);
    fputs("\n\n", out);
    if (!d->n_results) {
        char *none = history_nothing(d);
        export_md_text(out, none, 0);
        fputs("\n", out);
        free(none);
        return export_finish(out, "the Markdown history", err, errlen);
    }
    const char **hosts;
    size_t n_hosts = history_hosts(d, &hosts, NULL);
    free(hosts);
    char first[32], last[32];
    char *span = xasprintf("%zu result%s from %s to %s (UTC)", d->n_results,
                           d->n_results == 1 ? "" : "s",
                           history_created(d->results[0].created, first, sizeof first),
                           history_created(d->results[d->n_results - 1].created, last,
                                           sizeof last));
    export_md_text(out, span, 0); /* the times are a result file's strings */
    free(span);
    if (n_hosts > 1)
        fprintf(out, " on %zu hosts", n_hosts);
    fputs(". Each row is a result's median time with the interval of the median; step changes "
          "(docs/store.md) are marked where they start.", out);
    char *filters = history_filters(d);
    if (filters) {
        fputc(' ', out);
        export_md_text(out, filters, 1);
        free(filters);
    }
    fputs("\n\n", out);
    md_changes(out, d);
    for (size_t k = 0; k < d->n_series; k++)
        md_series(out, d, &d->series[k], n_hosts > 1);
    return export_finish(out, "the Markdown history", err, errlen);
}

const struct history_format history_md = {
    .name = "md",
    .extension = "md",
    .write = md_write,
};
