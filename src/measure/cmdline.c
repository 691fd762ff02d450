/* cmdline: a command string split into words, or handed to /bin/sh (see cmdline.h). */
#include "measure/cmdline.h"

#include <stdio.h>
#include <string.h>

enum cmdline_shellism cmdline_shellism(const char *s, bool variables_ok, char *found)
{
    bool single = false, dbl = false, word_start = true;
    for (const char *p = s; *p; p++) {
        char ch = *p;
        bool starts = word_start;
        word_start = ch == ' ' || ch == '\t';
        *found = ch;
        if (single) {
            single = ch != '\'';
            continue;
        }
        if (ch == '\\') {
            if (p[1] == '\n')
                return CMDLINE_OPERATOR;
            if (p[1])
                p++;
            continue;
        }
        if (ch == '`' || (ch == '$' && p[1] == '('))
            return CMDLINE_SUBST;
        if (ch == '$') {
            if (!variables_ok)
                return CMDLINE_VARIABLE;
            if (p[1] == '{') { /* ${NAME}: skip to its brace */
                const char *close = strchr(p, '}');
                if (!close)
                    return CMDLINE_OPERATOR;
                p = close;
            }
            continue;
        }
        if (dbl) {
            dbl = ch != '"';
            continue;
        }
        if (ch == '\'') {
            single = true;
        } else if (ch == '"') {
            dbl = true;
        } else if (strchr(";|&<>(){}\n\r", ch)) {
            return CMDLINE_OPERATOR;
        } else if (strchr("*?[]", ch) || (ch == '~' && starts)) {
            return CMDLINE_PATTERN;
        }
    }
    *found = '\0';
    return CMDLINE_PLAIN;
}

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
    char found, quoted[4];
    switch (cmdline_shellism(s, false, &found)) {
    case CMDLINE_PLAIN:
        break;
    case CMDLINE_OPERATOR:
        snprintf(quoted, sizeof quoted, "'%c'", found);
        snprintf(err, errlen, "%s '%s' holds a shell operator (%s): add --shell to run it "
                 "through /bin/sh, or quote it", what, s,
                 found == '\n' || found == '\r' ? "a line break" : quoted);
        return -1;
    case CMDLINE_SUBST:
        snprintf(err, errlen, "%s '%s' uses command substitution: add --shell to run it through "
                 "a shell", what, s);
        return -1;
    case CMDLINE_PATTERN:
        snprintf(err, errlen, "%s '%s' holds '%c', a pattern only a shell expands: add --shell "
                 "to run it through /bin/sh, or quote it", what, s, found);
        return -1;
    case CMDLINE_VARIABLE:
        snprintf(err, errlen, "%s '%s' uses a variable ('$'), which only a shell expands: add "
                 "--shell to run it through /bin/sh, or quote it with '...'", what, s);
        return -1;
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
