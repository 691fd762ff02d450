/* term: text a terminal shows. Whatever a workload wrote (stage and counter names, metadata,
 * stderr) goes through term_clean, so that it cannot drive the terminal, and table cells are
 * cut with term_fit by terminal columns, never inside a UTF-8 character. Pure, thread-safe. */
#ifndef MLBENCH_TERM_H
#define MLBENCH_TERM_H

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

#endif
