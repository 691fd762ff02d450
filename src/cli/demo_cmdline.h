/* demo_cmdline: the child commands of `mlbench demo` (cmd_demo.c): an argv built word by word,
 * shown as a shell would read it back, and run with that line printed first, so the demo shows
 * exactly what a user would type. Not thread-safe. */
#ifndef MLBENCH_DEMO_CMDLINE_H
#define MLBENCH_DEMO_CMDLINE_H

#include <stddef.h>

#include "util/strvec.h"

/* The child commands are argvs built word by word in a struct strvec (util/strvec.h). */

/* Appends an option and its whole-number value ("--threads", "2"). */
void demo_words_add_int(struct strvec *w, const char *option, long long v);

/* The words as one command line, each as the shell (and `mlbench sweep -c`, which splits words
 * as the shell does) reads it back: plain, or in single quotes. Owned by the caller. */
char *demo_words_line(const struct strvec *w);

/* Prints "$ LINE" (stdout, flushed) and runs w->v[0] (a path) with w->v, waiting for it.
 * Returns its exit status, 128 + signal when it was killed, or -1 when it could not start
 * (said on stderr). */
int demo_run(const struct strvec *w);

/* abs (malloc'd, taken) as the demo prints and runs it: relative to the working directory when
 * under it ("build/mlbench"), else abs itself. Returns a malloc'd path; NULL for NULL. */
char *demo_near_path(char *abs);

#endif
