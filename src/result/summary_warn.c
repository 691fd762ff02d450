/* summary_warn: adding a warning to a summary (see summary_warn.h). */
#include "result/summary_warn.h"

#include <stdarg.h>
#include <stdio.h>

#include "result/summary.h"
#include "util/xalloc.h"

void summary_warn(struct summary *s, const char *code, const char *fmt, ...)
{
    va_list ap;
    char msg[1024];
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    s->warnings = xreallocarray(s->warnings, s->n_warnings + 1, sizeof *s->warnings);
    s->warnings[s->n_warnings++] = (struct warning){xstrdup(code), xstrdup(msg)};
}
