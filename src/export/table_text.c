/* table_text.c: the terminal renderer of the table model (export_table_print, table.h): widths
 * measured in terminal columns (term_cols), cells cut with an ellipsis where a column has a cap
 * (term_fit), tones painted as colour on a canvas, tables wider than a screen split into parts. */
#include "export/table.h"

#include <stdlib.h>
#include <string.h>

#include "util/term.h"
#include "util/xalloc.h"

static const struct export_text_column default_column;

static const struct export_text_column *column(const struct export_text_layout *l, size_t c)
{
    return l->col ? &l->col[c] : &default_column;
}

/* The room s takes in column col: terminal columns, or bytes. */
static int room(const struct export_text_column *col, const char *s)
{
    return col->bytes ? (int)strlen(s) : term_cols(s);
}

/* The text of a cell as shown: the first column indented, a capped column cut. A new string. */
static char *shown(const struct export_table *t, const struct export_text_layout *l, long row,
                   size_t c)
{
    const char *s = row < 0 ? t->header[c] : export_table_cell(t, (size_t)row, c);
    int cap = column(l, c)->cap;
    int indent = row >= 0 && c == 0 ? 2 * t->indent[row] : 0;
    if (cap <= 0)
        return xasprintf("%*s%s", indent, "", s);
    char *fitted = xmalloc(4 * (size_t)cap + 8);
    term_fit(s, cap, fitted, 4 * (size_t)cap + 8);
    char *out = xasprintf("%*s%s", indent, "", fitted);
    free(fitted);
    return out;
}

/* Whether the cell shows nothing. */
static bool blank(const struct export_table *t, const struct export_text_layout *l, long row,
                  size_t c)
{
    char *s = shown(t, l, row, c);
    bool empty = !*s;
    free(s);
    return empty;
}

/* The width of each of the ncols columns shown: its own, or its widest cell (at most its cap). */
static int *widths(const struct export_table *t, const struct export_text_layout *l,
                   size_t ncols)
{
    int *w = xcalloc(ncols ? ncols : 1, sizeof *w);
    for (size_t c = 0; c < ncols; c++) {
        const struct export_text_column *col = column(l, c);
        if (col->width > 0) {
            w[c] = col->width;
            continue;
        }
        w[c] = col->min;
        for (long r = l->header ? -1 : 0; r < (long)t->nrows; r++) {
            char *s = shown(t, l, r, c);
            int k = room(col, s);
            w[c] = k > w[c] ? k : w[c];
            free(s);
        }
    }
    return w;
}

static enum term_tone term_tone_of(enum export_tone tone)
{
    return tone == EXPORT_TONE_FASTER ? TERM_TONE_GOOD
           : tone == EXPORT_TONE_SLOWER ? TERM_TONE_BAD
                                        : TERM_TONE_WARN;
}

static int spaces(FILE *out, int n)
{
    for (int i = 0; i < n; i++)
        if (putc(' ', out) == EOF)
            return -1;
    return 0;
}

/* One row (-1: the header) of the columns [0, keep) and [from, to). */
static int print_row(FILE *out, const struct export_table *t, const struct export_text_layout *l,
                     const int *w, long row, size_t keep, size_t from, size_t to)
{
    int rc = 0;
    size_t end = to; /* with trim: after the last cell with text */
    while (l->trim && end > 0 &&
           ((end - 1 >= keep && end - 1 < from) || blank(t, l, row, end - 1)))
        end--;
    for (size_t c = 0; c < end; c++) {
        if (c >= keep && c < from)
            continue;
        const struct export_text_column *col = column(l, c);
        const char *sep = col->sep ? col->sep : c == 0 ? "" : "  ";
        if (fputs(sep, out) == EOF)
            rc = -1;
        char *s = shown(t, l, row, c);
        bool right = (t->numeric >> c) & 1u && !(row < 0 && col->head_left);
        int pad = w[c] - room(col, s);
        if (l->trim && c + 1 == end && !right)
            pad = 0;
        if (right && spaces(out, pad) < 0)
            rc = -1;
        enum export_tone tone = row < 0 ? EXPORT_TONE_NONE : export_table_cell_tone(t, (size_t)row, c);
        if (tone != EXPORT_TONE_NONE && tone != EXPORT_TONE_DIFFERS && *s)
            rc |= term_paint(out, term_tone_of(tone), s);
        else if (fputs(s, out) == EOF)
            rc = -1;
        if (!right && spaces(out, pad) < 0)
            rc = -1;
        free(s);
    }
    return putc('\n', out) == EOF ? -1 : rc;
}

static int print_part(FILE *out, const struct export_table *t, const struct export_text_layout *l,
                      const int *w, size_t keep, size_t from, size_t to)
{
    int rc = 0;
    size_t end = l->rows_to && l->rows_to < t->nrows ? l->rows_to : t->nrows;
    if (l->header)
        rc |= print_row(out, t, l, w, -1, keep, from, to);
    for (size_t r = l->rows_to ? l->rows_from : 0; r < end; r++)
        rc |= print_row(out, t, l, w, (long)r, keep, from, to);
    return rc;
}

int export_table_print(FILE *out, const struct export_table *t,
                       const struct export_text_layout *layout)
{
    static const struct export_text_layout plain;
    const struct export_text_layout *l = layout ? layout : &plain;
    size_t ncols = l->ncols && l->ncols < t->ncols ? l->ncols : t->ncols;
    int *w = widths(t, l, ncols);
    int rc = 0;
    size_t keep = l->keep < ncols ? l->keep : ncols;
    if (l->screen <= 0 || keep >= ncols) {
        rc = print_part(out, t, l, w, ncols, ncols, ncols);
        free(w);
        return rc;
    }
    /* Split: each part the kept columns, then as many more as fit within the screen. */
    int lead = 0;
    for (size_t c = 0; c < keep; c++)
        lead += term_cols(column(l, c)->sep ? column(l, c)->sep : c ? "  " : "") + w[c];
    for (size_t from = keep; from < ncols;) {
        size_t to = from;
        int width = lead;
        do {
            width += term_cols(column(l, to)->sep ? column(l, to)->sep : "  ") + w[to];
            to++;
        } while (to < ncols &&
                 width + term_cols(column(l, to)->sep ? column(l, to)->sep : "  ") + w[to] <=
                     l->screen);
        if (putc('\n', out) == EOF)
            rc = -1;
        rc |= print_part(out, t, l, w, keep, from, to);
        from = to;
    }
    free(w);
    return rc;
}
