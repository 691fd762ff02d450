/* strvec: a growing list of owned strings (see strvec.h). */
#include "util/strvec.h"

#include <stdlib.h>

#include "util/xalloc.h"

void strvec_push_owned(struct strvec *sv, char *s)
{
    sv->v = xgrow(sv->v, &sv->cap, sv->n + 2, sizeof *sv->v);
    sv->v[sv->n++] = s;
    sv->v[sv->n] = NULL;
}

void strvec_push(struct strvec *sv, const char *s)
{
    strvec_push_owned(sv, xstrdup(s));
}

void strvec_pushl(struct strvec *sv, ...)
{
    va_list ap;
    va_start(ap, sv);
    for (const char *s; (s = va_arg(ap, const char *));)
        strvec_push(sv, s);
    va_end(ap);
}

void strvec_vpushf(struct strvec *sv, const char *fmt, va_list ap)
{
    strvec_push_owned(sv, xvasprintf(fmt, ap));
}

void strvec_pushf(struct strvec *sv, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    strvec_vpushf(sv, fmt, ap);
    va_end(ap);
}

void strvec_free(struct strvec *sv)
{
    for (size_t i = 0; i < sv->n; i++)
        free(sv->v[i]);
    free(sv->v);
    *sv = (struct strvec)STRVEC_INIT;
}
