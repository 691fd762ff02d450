/* markdown.c: the Markdown report (--format md): the outline of outline.c (environment,
 * workload, methodology, results with intervals, resources, analysis, warnings, runs, the
 * command to reproduce; the comparison first when there are several results) as CommonMark
 * with GitHub tables. Text from the result is escaped so it renders as written. */
#include "export/export.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Writes text escaped for Markdown inline text (export.h), cleaned of terminal controls
 * (export_clean). In table cells '|' is escaped and line breaks become spaces; at the start of
 * a paragraph, characters that would open a block are. */
void export_md_text(FILE *out, const char *text, int in_table)
{
    char *s = export_clean(text);
    for (const char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        int word_before = p > s && isalnum((unsigned char)p[-1]);
        int word_after = isalnum((unsigned char)p[1]);
        if (c == '\n' || c == '\r') {
            fputs(in_table ? " " : "\n", out);
        } else if (strchr("\\`*[]<>|", c)) {
            fputc('\\', out);
            fputc(c, out);
        } else if (c == '_' && !(word_before && word_after)) {
            /* intraword underscores never emphasise (data_loader): leave them readable */
            fputs("\\_", out);
        } else if (c == '&' && (isalpha((unsigned char)p[1]) || p[1] == '#')) {
            fputs("&amp;", out);
        } else if (p == s && !in_table && strchr("#-+=>~", c)) {
            fputc('\\', out);
            fputc(c, out);
        } else {
            fputc(c, out);
        }
    }
    free(s);
}

static void md_heading(void *ctx, int level, const char *text)
{
    FILE *out = ctx;
    fprintf(out, "%.*s ", level, "######");
    export_md_text(out, text, 1);
    fputs("\n\n", out);
}

static void md_paragraph(void *ctx, const char *text)
{
    FILE *out = ctx;
    export_md_text(out, text, 0);
    fputs("\n\n", out);
}

static void md_list(void *ctx, const char *const *items, size_t n)
{
    FILE *out = ctx;
    for (size_t i = 0; i < n; i++) {
        fputs("- ", out);
        export_md_text(out, items[i], 1);
        fputc('\n', out);
    }
    fputc('\n', out);
}

static void md_table(void *ctx, const struct export_table *t)
{
    FILE *out = ctx;
    fputc('|', out);
    for (size_t c = 0; c < t->ncols; c++) {
        fputc(' ', out);
        export_md_text(out, t->header[c], 1);
        fputs(" |", out);
    }
    fputs("\n|", out);
    for (size_t c = 0; c < t->ncols; c++)
        fputs(t->numeric & (1u << c) ? "---:|" : "---|", out);
    fputc('\n', out);
    for (size_t r = 0; r < t->nrows; r++) {
        fputc('|', out);
        for (size_t c = 0; c < t->ncols; c++) {
            fputc(' ', out);
            if (c == 0)
                for (int d = 0; d < t->indent[r]; d++)
                    fputs("&nbsp;&nbsp;&nbsp;", out);
            export_md_text(out, export_table_cell(t, r, c), 1);
            fputs(" |", out);
        }
        fputc('\n', out);
    }
    fputc('\n', out);
}

/* A fenced block: the fence is longer than any run of backticks in the text. */
static void md_code(void *ctx, const char *raw)
{
    FILE *out = ctx;
    char *text = export_clean(raw);
    int longest = 0, run = 0;
    for (const char *p = text; *p; p++) {
        run = *p == '`' ? run + 1 : 0;
        if (run > longest)
            longest = run;
    }
    int fence = longest >= 3 ? longest + 1 : 3;
    for (int i = 0; i < fence; i++)
        fputc('`', out);
    fputs("sh\n", out);
    fputs(text, out);
    fputc('\n', out);
    for (int i = 0; i < fence; i++)
        fputc('`', out);
    fputs("\n\n", out);
    free(text);
}

static int md_write(FILE *out, const struct export_request *req, char *err, size_t errlen)
{
    static const struct export_outline_ops ops = {
        .heading = md_heading,
        .paragraph = md_paragraph,
        .list = md_list,
        .table = md_table,
        .code = md_code,
        .figure = NULL, /* charts are in the HTML report */
    };
    export_outline(req, &ops, out);
    return export_finish(out, "the Markdown report", err, errlen);
}

const struct exporter export_markdown = {
    .name = "md",
    .alias = "markdown",
    .extension = "md",
    .description = "Markdown report: environment, method, results with intervals, analysis",
    .uses = 0,
    .write = md_write,
};
