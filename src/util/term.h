/* term: text a terminal shows. Whatever a workload wrote (stage and counter names, metadata,
 * stderr) goes through term_clean, so that it cannot drive the terminal, and table cells are
 * cut with term_fit by terminal columns, never inside a UTF-8 character. Verdicts and warnings
 * may be coloured (term_paint): colour only ever wraps words that say the same without it.
 * Thread-safe, but for term_color_set (call it once, at start). */
#ifndef MLBENCH_TERM_H
#define MLBENCH_TERM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Writes text[0..len) to out for a terminal: a byte that is not well-formed UTF-8, a control
 * character other than newline (C0, DEL, and the C1 controls U+0080..U+009F, which some
 * terminals obey too), and the bidi controls that reorder what follows (U+202A..U+202E,
 * U+2066..U+2069) each become '?'. Returns 0, or -1 when out fails. */
int term_clean(FILE *out, const char *text, size_t len);

/* s made fit for one cell of a terminal table into buf (returned): newlines and tabs become
 * '?', and a string wider than max_cols terminal columns is cut at a character boundary and
 * ends with an ellipsis, within max_cols. */
char *term_fit(const char *s, int max_cols, char *buf, size_t len);
/* The terminal columns s takes: characters count 1, East Asian wide ones 2, combining marks 0
 * (an approximation of wcwidth that needs no UTF-8 locale). */
int term_cols(const char *s);

/* When output gets colour (--color WHEN). */
enum term_color { TERM_COLOR_AUTO, TERM_COLOR_ALWAYS, TERM_COLOR_NEVER };
/* What a coloured word says. */
enum term_tone {
    TERM_TONE_GOOD,  /* faster: green */
    TERM_TONE_BAD,   /* slower, failed, error: red */
    TERM_TONE_WARN,  /* unreliable, warning: yellow */
};

/* "auto", "always" or "never" into *out. Returns 0, or -1 for anything else. */
int term_color_parse(const char *s, enum term_color *out);
/* Sets when output gets colour (default TERM_COLOR_AUTO). */
void term_color_set(enum term_color when);
/* Whether text written to out gets colour: always or never as set; auto when out is a
 * terminal, NO_COLOR is unset or empty (no-color.org) and TERM is not "dumb". */
bool term_color_on(FILE *out);
/* Writes text to out, in the tone's colour when term_color_on(out) (on a canvas's stream: when
 * the canvas's destination gets colour). Returns 0, or -1 when out fails. */
int term_paint(FILE *out, enum term_tone tone, const char *text);
/* The escape sequences that start the tone and end it on out, or "" when out gets no colour
 * (always "" on a canvas's stream: paint there with term_paint). */
const char *term_tone_start(FILE *out, enum term_tone tone);
const char *term_tone_end(FILE *out);

/* Text composed in memory, then shown through term_clean, with colour: the words painted on
 * its stream f (term_paint, term_put_verdict) are remembered by position, so that cleaning,
 * which turns every control character (ESC included) into '?', never meets mlbench's own
 * colour codes, and a workload's text never gets to send any. One canvas open at a time per
 * thread (the command line's output, on the main thread). */
struct term_canvas {
    FILE *f;    /* write the text here */
    FILE *dest; /* where term_canvas_close writes it */
    char *buf;
    size_t len;
    struct term_span {
        long start, end;
        enum term_tone tone;
    } *spans;
    size_t n_spans, cap_spans;
};
/* Opens c for text bound to dest. Returns 0, or -1 (out of memory: nothing to close). */
int term_canvas_open(struct term_canvas *c, FILE *dest);
/* Writes the text to dest through term_clean, the painted words coloured when
 * term_color_on(dest), and frees c. Returns 0, or -1 when writing failed. */
int term_canvas_close(struct term_canvas *c);
/* Writes a verdict word, then blanks up to width columns: "faster" green, "slower" red,
 * "unreliable" yellow, any other word (or NULL: "?") plain. Returns 0, or -1 when out fails. */
int term_put_verdict(FILE *out, const char *verdict, int width);

#endif
