/* progress: terminal status line and per-run lines on stderr (see progress.h). */
#include "measure/progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/term.h"
#include "util/units.h"
#include "util/xalloc.h"

void progress_init(struct progress *p, bool quiet)
{
    p->quiet = quiet;
    p->tty = !quiet && isatty(STDERR_FILENO);
    p->shown = false;
}

void progress_clear(struct progress *p)
{
    if (p->tty && p->shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    p->shown = false;
}

void progress_status(struct progress *p, const char *what, const char *stage, int64_t elapsed_ns,
                     int64_t eta_ns)
{
    if (!p->tty)
        return;
    char el[32], eta[32] = "";
    units_duration((double)(elapsed_ns / 100000000 * 100000000), el, sizeof el);
    if (eta_ns >= 1000000000) { /* whole seconds */
        char t[24];
        units_duration((double)(eta_ns / 1000000000 * 1000000000), t, sizeof t);
        snprintf(eta, sizeof eta, "  ETA %s", t);
    } else if (eta_ns >= 0) { /* not "ETA 0 ns" */
        snprintf(eta, sizeof eta, "  ETA < 1 s");
    }
    /* the stage name is the workload's: cleaned of what could drive the terminal */
    fputs("\r\033[K", stderr);
    term_clean(stderr, what, strlen(what));
    if (stage && *stage) {
        fputs("  stage ", stderr);
        term_clean(stderr, stage, strlen(stage));
    }
    fprintf(stderr, "  %s%s", el, eta);
    fflush(stderr);
    p->shown = true;
}

/* A permanent line: what it holds of the workload (its command, its stderr) goes through
 * term_clean. */
__attribute__((format(printf, 2, 0)))
static void line(struct progress *p, const char *fmt, va_list ap)
{
    progress_clear(p);
    char *s = NULL;
    int n = vasprintf(&s, fmt, ap);
    if (n < 0)
        return;
    term_clean(stderr, s, (size_t)n);
    fputc('\n', stderr);
    free(s);
}

void progress_line(struct progress *p, const char *fmt, ...)
{
    if (p->quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    line(p, fmt, ap);
    va_end(ap);
}

void progress_error(struct progress *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    line(p, fmt, ap);
    va_end(ap);
}
