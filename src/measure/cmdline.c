/* cmdline: a command string split into words, or handed to /bin/sh (see cmdline.h). */
#include "measure/cmdline.h"

#include <stdio.h>
#include <string.h>

int cmdline_split(struct cmdline *c, const char *what, const char *s, bool shell, char *err,
                  size_t errlen)
{
    memset(c, 0, sizeof *c);
    if (shell) {
        c->sh[0] = "/bin/sh";
        c->sh[1] = "-c";
        c->sh[2] = (char *)s;
        c->argv = c->sh;
        return 0;
    }
    int rc = wordexp(s, &c->we, WRDE_NOCMD);
    if (rc == 0 && c->we.we_wordc > 0) {
        c->argv = c->we.we_wordv;
        c->expanded = true;
        return 0;
    }
    if (rc == 0 || rc == WRDE_NOSPACE)
        wordfree(&c->we);
    snprintf(err, errlen, "%s '%s' %s", what, s,
             rc == WRDE_CMDSUB  ? "uses command substitution: add --shell to run it through a shell"
             : rc == WRDE_BADCHAR ? "holds a shell operator (| & ; < > ( ) { }): add --shell"
             : rc == WRDE_SYNTAX ? "has a syntax error (unbalanced quotes?)"
             : rc == 0           ? "has no words: give a command"
                                 : "could not be split into words (out of memory)");
    return -1;
}

void cmdline_free(struct cmdline *c)
{
    if (c->expanded)
        wordfree(&c->we);
    c->expanded = false;
}
