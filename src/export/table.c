/* table.c: the table model (table.h): cells, tones and indents, grown as rows are added. */
#include "export/table.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "export/export.h"
#include "util/xalloc.h"

void export_table_init(struct export_table *t, size_t ncols, ...)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
    t->header = xcalloc(ncols, sizeof *t->header);
    va_list ap;
    va_start(ap, ncols);
    for (size_t c = 0; c < ncols; c++) {
        const char *h = va_arg(ap, const char *);
        t->header[c] = xstrdup(h ? h : "");
    }
    va_end(ap);
}

void export_table_init_list(struct export_table *t, size_t ncols, const char *const *names)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
    t->header = xcalloc(ncols ? ncols : 1, sizeof *t->header);
    for (size_t c = 0; c < ncols; c++)
        t->header[c] = xstrdup(names[c] ? names[c] : "");
}

size_t export_table_row(struct export_table *t, int indent)
{
    if (t->nrows == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 8;
        t->cells = xreallocarray(t->cells, t->cap * t->ncols, sizeof *t->cells);
        t->indent = xreallocarray(t->indent, t->cap, sizeof *t->indent);
        t->tone = xreallocarray(t->tone, t->cap * t->ncols, sizeof *t->tone);
    }
    memset(t->tone + t->nrows * t->ncols, EXPORT_TONE_NONE, t->ncols * sizeof *t->tone);
    for (size_t c = 0; c < t->ncols; c++)
        t->cells[t->nrows * t->ncols + c] = xstrdup("");
    t->indent[t->nrows] = indent < 0 ? 0 : indent > EXPORT_MAX_DEPTH ? EXPORT_MAX_DEPTH : indent;
    return t->nrows++;
}

void export_table_set(struct export_table *t, size_t row, size_t col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = xvasprintf(fmt, ap);
    va_end(ap);
    free(t->cells[row * t->ncols + col]);
    t->cells[row * t->ncols + col] = s;
}

const char *export_table_cell(const struct export_table *t, size_t row, size_t col)
{
    return t->cells[row * t->ncols + col];
}

void export_table_head(struct export_table *t, size_t col, const char *name)
{
    free(t->header[col]);
    t->header[col] = xstrdup(name);
}

void export_table_tone(struct export_table *t, size_t row, size_t col, enum export_tone tone)
{
    t->tone[row * t->ncols + col] = (unsigned char)tone;
}

enum export_tone export_table_cell_tone(const struct export_table *t, size_t row, size_t col)
{
    return (enum export_tone)t->tone[row * t->ncols + col];
}

enum export_tone export_verdict_tone(const char *verdict)
{
    if (!verdict)
        return EXPORT_TONE_NONE;
    if (!strcmp(verdict, "faster"))
        return EXPORT_TONE_FASTER;
    if (!strcmp(verdict, "slower"))
        return EXPORT_TONE_SLOWER;
    if (!strcmp(verdict, "unreliable"))
        return EXPORT_TONE_UNRELIABLE;
    return EXPORT_TONE_NONE;
}

void export_table_free(struct export_table *t)
{
    for (size_t c = 0; c < t->ncols; c++)
        free(t->header[c]);
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->header);
    free(t->cells);
    free(t->indent);
    free(t->tone);
    memset(t, 0, sizeof *t);
}
