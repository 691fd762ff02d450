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

/* What a command string holds that only a shell would understand. */
enum cmdline_shellism {
    CMDLINE_PLAIN,     /* nothing: words, quotes and backslashes only */
    CMDLINE_OPERATOR,  /* ; | & < > ( ) { } or a line break */
    CMDLINE_SUBST,     /* command substitution: ` or $( */
    CMDLINE_PATTERN,   /* a pattern the shell would expand: * ? [ ] or ~ starting a word */
    CMDLINE_VARIABLE,  /* $NAME, when variables are not allowed */
};

/* Scans s as the shell would read its quotes: outside quotes every character above counts,
 * inside double quotes only ` and $ (substitution and variables), inside single quotes none.
 * With variables_ok, $NAME and ${NAME} pass (a workflow's variables). Returns the first kind
 * found and the character in *found. Pure. */
enum cmdline_shellism cmdline_shellism(const char *s, bool variables_ok, char *found);

/* Splits s (what names it in messages: "--prepare"). Without shell, anything cmdline_shellism
 * finds is refused with the --shell hint: split as plain words, a pattern or an operator would
 * run something else than meant ("rm -f cache/STAR; cat keep.txt" with STAR a '*' must not be
 * one rm of three words). Returns 0, or -1 with a message in err that quotes s and says what to
 * do (add --shell, balance the quotes...); *c then needs no cmdline_free. s must outlive *c
 * when shell is set. */
int cmdline_split(struct cmdline *c, const char *what, const char *s, bool shell, char *err,
                  size_t errlen);
void cmdline_free(struct cmdline *c);

#endif
