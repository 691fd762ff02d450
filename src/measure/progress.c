/* progress: terminal status line and per-run lines on stderr (see progress.h). */
#include "measure/progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "util/units.h"

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
    if (eta_ns >= 0) {
        char t[24];
        snprintf(eta, sizeof eta, "  ETA %s", units_duration((double)(eta_ns / 1000000000 * 1000000000), t, sizeof t));
    }
    fprintf(stderr, "\r\033[K%s%s%s  %s%s", what, stage && *stage ? "  stage " : "",
            stage ? stage : "", el, eta);
    fflush(stderr);
    p->shown = true;
}

void progress_line(struct progress *p, const char *fmt, ...)
{
    if (p->quiet)
        return;
    progress_clear(p);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}
