/* cmdline: a command given as one string (--prepare, --cleanup, or the command with --shell)
 * turned into an argv. With shell set the string goes to /bin/sh -c; otherwise it is split into
 * words as the shell would, with command substitution refused, so no shell ever runs it. */
#ifndef MLBENCH_CMDLINE_H
#define MLBENCH_CMDLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <wordexp.h>

struct cmdline {
    char **argv;     /* NULL-terminated; valid until cmdline_free */
    wordexp_t we;
    char *sh[4];
    bool expanded;
};

/* Splits s (what names it in messages: "--prepare"). Returns 0, or -1 with a message in err
 * that quotes s and says what to do (add --shell, balance the quotes...); *c then needs no
 * cmdline_free. s must outlive *c when shell is set. */
int cmdline_split(struct cmdline *c, const char *what, const char *s, bool shell, char *err,
                  size_t errlen);
void cmdline_free(struct cmdline *c);

#endif
