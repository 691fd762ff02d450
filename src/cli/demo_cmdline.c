/* demo_cmdline.c: the child commands of `mlbench demo` (demo_cmdline.h). */
#include "cli/demo_cmdline.h"

#include <errno.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

extern char **environ;

void demo_words_add_int(struct strvec *w, const char *option, long long v)
{
    strvec_push(w, option);
    strvec_pushf(w, "%lld", v);
}

/* Appends s as one shell word: as it is when every byte is one a shell leaves alone. */
static void quote(struct strbuf *b, const char *s)
{
    static const char plain[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                "0123456789_@%+=:,./-";
    if (*s && strspn(s, plain) == strlen(s)) {
        strbuf_puts(b, s);
        return;
    }
    strbuf_putc(b, '\'');
    for (; *s; s++) {
        if (*s == '\'')
            strbuf_puts(b, "'\\''");
        else
            strbuf_putc(b, *s);
    }
    strbuf_putc(b, '\'');
}

char *demo_words_line(const struct strvec *w)
{
    struct strbuf b = STRBUF_INIT;
    for (size_t i = 0; i < w->n; i++) {
        if (i)
            strbuf_putc(&b, ' ');
        quote(&b, w->v[i]);
    }
    return strbuf_take(&b);
}

int demo_run(const struct strvec *w)
{
    char *line = demo_words_line(w);
    printf("$ %s\n", line);
    free(line);
    fflush(stdout);
    pid_t pid;
    int rc = posix_spawn(&pid, w->v[0], NULL, NULL, w->v, environ);
    if (rc) {
        log_error("cannot run %s: %s", w->v[0], strerror(rc));
        return -1;
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    fflush(stdout);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

char *demo_near_path(char *abs)
{
    char *cwd = getcwd(NULL, 0);
    size_t n = cwd ? strlen(cwd) : 0;
    char *out = abs;
    if (abs && n > 1 && !strncmp(abs, cwd, n) && abs[n] == '/' && abs[n + 1]) {
        /* a bare name would be looked up nowhere by posix_spawn, but printed it reads as a
         * command from PATH: ./NAME says what runs */
        out = strchr(abs + n + 1, '/') ? xstrdup(abs + n + 1) : xasprintf("./%s", abs + n + 1);
        free(abs);
    }
    free(cwd);
    return out;
}
