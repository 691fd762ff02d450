/* demo_cmdline: the child commands of `mlbench demo` (cmd_demo.c): an argv built word by word,
 * shown as a shell would read it back, and run with that line printed first, so the demo shows
 * exactly what a user would type. Not thread-safe. */
#ifndef MLBENCH_DEMO_CMDLINE_H
#define MLBENCH_DEMO_CMDLINE_H

#include <stddef.h>

/* A growing argv: v[0..n) copies of the words, v[n] NULL. Zero-initialised is empty. */
struct demo_words {
    char **v;
    size_t n, cap;
};

/* Appends a copy of s. */
void demo_words_add(struct demo_words *w, const char *s);
/* Appends copies of the words up to a NULL; DEMO_ADD(w, "a", "b") supplies the NULL. */
void demo_words_addv(struct demo_words *w, ...);
#define DEMO_ADD(w, ...) demo_words_addv((w), __VA_ARGS__, (const char *)NULL)
/* Appends an option and its whole-number value ("--threads", "2"). */
void demo_words_add_int(struct demo_words *w, const char *option, long long v);
/* Appends one printf-formatted word (at most 511 bytes). */
void demo_words_addf(struct demo_words *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Frees the words; w is empty after. */
void demo_words_free(struct demo_words *w);

/* The words as one command line, each as the shell (and `mlbench sweep -c`, which splits words
 * as the shell does) reads it back: plain, or in single quotes. Owned by the caller. */
char *demo_words_line(const struct demo_words *w);

/* Prints "$ LINE" (stdout, flushed) and runs w->v[0] (a path) with w->v, waiting for it.
 * Returns its exit status, 128 + signal when it was killed, or -1 when it could not start
 * (said on stderr). */
int demo_run(const struct demo_words *w);

/* abs (malloc'd, taken) as the demo prints and runs it: relative to the working directory when
 * under it ("build/mlbench"), else abs itself. Returns a malloc'd path; NULL for NULL. */
char *demo_near_path(char *abs);

#endif
