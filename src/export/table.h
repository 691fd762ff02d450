/* table: the one table model of the views (hyperfine's markup table, STYLE.md 13): cells of
 * text with a tone and an indent, filled once by the code that knows what to show, then drawn by
 * a renderer per format: Markdown (markdown.c), HTML (html.c) and the terminal (table_text.c),
 * so that a table says the same everywhere and no view pads columns by hand. Not thread-safe
 * per table. */
#ifndef MLBENCH_EXPORT_TABLE_H
#define MLBENCH_EXPORT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* What a cell says at a glance, which HTML shows as colour (a CSS class); Markdown ignores it,
 * so the cell's text must say the same (the verdict word is always written). */
enum export_tone {
    EXPORT_TONE_NONE,
    EXPORT_TONE_FASTER,     /* green */
    EXPORT_TONE_SLOWER,     /* red */
    EXPORT_TONE_UNRELIABLE, /* grey */
    EXPORT_TONE_DIFFERS,    /* highlighted: the two sides differ */
};

/* A table of text cells, filled by the outline and rendered by each format. */
struct export_table {
    size_t ncols, nrows, cap;
    char **header;     /* ncols strings */
    char **cells;      /* nrows * ncols, row-major, never NULL ("" when empty) */
    unsigned char *tone; /* nrows * ncols: enum export_tone of each cell (NONE unless set) */
    int *indent;       /* per row: nesting depth of the first cell (stage names) */
    unsigned numeric;  /* bit c: column c holds figures (right-aligned) */
};

/* Starts a table with ncols columns named by the NULL-terminated list that follows. */
void export_table_init(struct export_table *t, size_t ncols, ...);
/* The same with the ncols column names in names[] (a header known only at run time). */
void export_table_init_list(struct export_table *t, size_t ncols, const char *const *names);
/* Appends a row of empty cells; returns its index. */
size_t export_table_row(struct export_table *t, int indent);
/* Sets cell (row, col), printf-style. */
void export_table_set(struct export_table *t, size_t row, size_t col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
const char *export_table_cell(const struct export_table *t, size_t row, size_t col);
/* Renames column col (a view that heads a shared table in its own words). */
void export_table_head(struct export_table *t, size_t col, const char *name);
void export_table_tone(struct export_table *t, size_t row, size_t col, enum export_tone tone);
enum export_tone export_table_cell_tone(const struct export_table *t, size_t row, size_t col);
/* The tone of a comparison verdict: faster, slower, unreliable; NONE for any other. */
enum export_tone export_verdict_tone(const char *verdict);

void export_table_free(struct export_table *t);

/* ---- the terminal renderer (table_text.c) ---------------------------------------------- */

/* How one column is laid out on a terminal. Zero is the default of every field. */
struct export_text_column {
    int width;          /* 0: as wide as its widest cell (the header's too when it is shown);
                         * > 0: at least this many terminal columns, as printf's width: a wider
                         * cell widens its own row only */
    int cap;            /* > 0: a wider cell is cut to this many columns with an ellipsis
                         * (term_fit; newlines and tabs become '?'), and a column of width 0
                         * is no wider */
    int min;            /* with width 0: at least this many columns */
    const char *sep;    /* written before the column (NULL: two spaces); before column 0 it
                         * starts the line (NULL: nothing) */
    bool head_left;     /* the header is left-aligned although the column is right-aligned */
    bool bytes;         /* widths, and the padding up to them, counted in bytes as a printf
                         * field width counts them rather than in terminal columns: a layout
                         * kept from printf (a character of several bytes then takes less
                         * room) */
};

/* How a table is laid out on a terminal. */
struct export_text_layout {
    const struct export_text_column *col; /* one per column shown (layout ncols, else the
                                           * table's), or NULL: every column default */
    bool header;        /* the header row first */
    bool trim;          /* no trailing blanks: the empty cells that end a row are left out
                         * with their separators, and the last cell written is not padded
                         * when it is left-aligned */
    int screen;         /* > 0: the columns after the first `keep` are spread over as many
                         * tables as keep each line within this many columns, each repeating
                         * the first `keep` columns and starting with an empty line */
    size_t keep;
    size_t ncols;       /* > 0: only the first ncols columns are shown */
    size_t rows_from, rows_to; /* rows_to > 0: only the rows [rows_from, rows_to) (after the
                         * header when it is shown), with the widths of the whole table: a
                         * table drawn in parts, lines of the view's own between them */
};

/* Writes t to out as aligned text: cells right-aligned in the columns t->numeric marks (left
 * otherwise), the first cell of each row indented by two spaces per level of its indent, cells
 * of a tone painted as term_paint paints (faster green, slower red, unreliable yellow) when out
 * is a canvas (term.h) of a destination that gets colour. Text is written as it is: write to a
 * term_canvas so that term_clean cleans it. Returns 0, or -1 when out fails. */
int export_table_print(FILE *out, const struct export_table *t,
                       const struct export_text_layout *layout);

#endif
