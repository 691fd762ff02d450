/* log: user-facing messages on stderr (see log.h). */
#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>

#include "util/term.h"

static int quiet;

void log_set_quiet(int q)
{
    quiet = q;
}

/* "mlbench: error: ...": the word coloured on a terminal (red errors, yellow warnings); tone
 * -1: no word (info). */
__attribute__((format(printf, 3, 0)))
static void vlog(const char *prefix, int tone, const char *fmt, va_list ap)
{
    char line[4096];
    vsnprintf(line, sizeof line, fmt, ap);
    if (tone >= 0)
        fprintf(stderr, "mlbench: %s%s:%s %s\n", term_tone_start(stderr, (enum term_tone)tone),
                prefix, term_tone_end(stderr), line);
    else
        fprintf(stderr, "mlbench: %s\n", line);
}

void log_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog("error", TERM_TONE_BAD, fmt, ap);
    va_end(ap);
}

void log_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog("warning", TERM_TONE_WARN, fmt, ap);
    va_end(ap);
}

void log_info(const char *fmt, ...)
{
    if (quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    vlog("", -1, fmt, ap);
    va_end(ap);
}
