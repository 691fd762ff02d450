/* sweep_text.c: the terminal view of a sweep document (export_sweep_print, sweep.h): what
 * `mlbench sweep` prints when it ends. The table of sweep_tables.c is laid out in as many
 * tables of at most 80 columns as its columns need, each repeating the mark and the point;
 * cells are cut with an ellipsis (term_fit) and the whole text goes through term_clean, so no
 * string of the document can drive the terminal. */
#include "export/sweep.h"
#include "export/text.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/term.h"
#include "util/xalloc.h"

#define SCREEN_COLS 80
#define POINT_COLS 22     /* the point's name is cut at this width */
#define WIDE_COLS 26      /* status, interval and bottleneck */
#define NARROW_COLS 14    /* figures and counters */

/* The sweep table: the mark and the point, then as many columns as fit in SCREEN_COLS, as many
 * times as the columns need; cells cut at their column's cap. */
static void sweep_table(FILE *out, const struct export_table *t)
{
    struct export_text_column *col = xcalloc(t->ncols, sizeof *col);
    for (size_t c = 0; c < t->ncols; c++)
        col[c].cap = c == 1 ? POINT_COLS : c == 2 || c == 4 || c == 6 ? WIDE_COLS : NARROW_COLS;
    col[0].width = 1;
    col[0].cap = 0;
    if (t->ncols > 1)
        col[1].sep = " ";
    struct export_text_layout l = {.col = col, .header = true, .trim = true,
                                   .screen = SCREEN_COLS, .keep = 2};
    export_table_print(out, t, &l);
    free(col);
}

/* Prints text (one line: sweep_tables.c flattened it) word-wrapped at SCREEN_COLS, the first
 * line after first (already printed, first_cols wide), the others indented by rest spaces; a
 * word longer than a line stays whole. */
static void wrapped(FILE *out, const char *text, int first_cols, int rest)
{
    int col = first_cols;
    const char *p = text;
    while (*p) {
        const char *end = strchr(p, ' ');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char *word = xstrndup(p, n);
        int w = term_cols(word);
        if (col > rest && col + 1 + w > SCREEN_COLS) {
            fprintf(out, "\n%*s", rest, "");
            col = rest;
        } else if (p != text) {
            putc(' ', out);
            col++;
        }
        fputs(word, out);
        col += w;
        free(word);
        p += n;
        while (*p == ' ')
            p++;
    }
    putc('\n', out);
}

static void lines(FILE *out, const char *title, struct strvec *l, const char *bullet)
{
    if (l->n)
        fprintf(out, "\n%s\n", title);
    for (size_t i = 0; i < l->n; i++) {
        fputs(bullet, out);
        wrapped(out, l->v[i], term_cols(bullet), term_cols(bullet) + 2);
    }
    strvec_free(l);
}

static void one_line(FILE *out, const char *s)
{
    for (; *s; s++)
        putc(*s == '\n' || *s == '\t' || *s == '\r' ? '?' : *s, out);
}

static void sweep_text(FILE *out, const json_t *sweep, const char *sweep_path)
{
    struct doc_sweep *s = doc_sweep_read(sweep);
    const char *id = s->id, *created = s->created;
    fputs("\nmlbench sweep ", out);
    one_line(out, id ? id : "(no id)");
    if (created) {
        fputs("   created ", out);
        one_line(out, created);
    }
    putc('\n', out);
    char *about = export_sweep_about(s);
    wrapped(out, about, 0, 2);
    free(about);
    const json_t *cmd = s->command;
    if (json_array_size(cmd)) {
        fputs("command:", out);
        for (size_t i = 0; i < json_array_size(cmd) && i < 256; i++) {
            char *q = export_shell_quote(json_string_value(json_array_get(cmd, i))
                                             ? json_string_value(json_array_get(cmd, i)) : "?");
            putc(' ', out);
            one_line(out, q);
            free(q);
        }
        putc('\n', out);
    }

    struct export_sweep_columns c;
    export_sweep_columns(s, &c);
    struct export_table t;
    if (export_sweep_table(&t, s, &c))
        sweep_table(out, &t);
    else
        fputs("\nno point\n", out);
    export_table_free(&t);
    char *obj = export_sweep_objective(s), *winner = export_sweep_winner(s);
    fputs("\n", out);
    wrapped(out, obj, 0, 2);
    wrapped(out, winner, 0, 2);
    free(obj);
    free(winner);

    struct strvec not_ok = STRVEC_INIT, cons = STRVEC_INIT, warn = STRVEC_INIT;
    export_sweep_notes(s, &not_ok, &cons, &warn);
    lines(out, "points that did not run ok:", &not_ok, "  ");
    lines(out, "constraints not met:", &cons, "  \u2717 ");
    lines(out, "warnings:", &warn, "  ! ");

    if (export_sweep_probes(&t, s)) {
        fputs("\nfind-max probes, in the order run:\n", out);
        /* value, fits, peak memory, throughput: the point is the value's */
        static const struct export_text_column col[4] = {
            {.cap = NARROW_COLS, .sep = "  "}, {.cap = 24}, {.cap = NARROW_COLS}, {.cap = 22}};
        struct export_text_layout l = {.col = col, .header = true, .trim = true, .ncols = 4};
        export_table_print(out, &t, &l);
    }
    export_table_free(&t);
    struct strvec fm = STRVEC_INIT;
    export_sweep_find_max(s, &fm);
    lines(out, "find-max:", &fm, "  ");
    if (sweep_path) {
        fputs("\nsweep: ", out);
        one_line(out, sweep_path);
        putc('\n', out);
    }
    doc_sweep_free(s);
}

int export_sweep_print(FILE *out, const json_t *sweep, const char *sweep_path)
{
    return export_text_compose(out, sweep_text, sweep, sweep_path);
}
