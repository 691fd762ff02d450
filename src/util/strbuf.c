/* strbuf: a growable string (see strbuf.h). */
#include "util/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

char strbuf_empty[1];

void strbuf_reserve(struct strbuf *b, size_t more)
{
    if (b->len + more + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more + 1)
        cap *= 2;
    /* the shared empty text (or a zero-initialised buffer's NULL) is never reallocated */
    char *s = xreallocarray(b->cap ? b->s : NULL, cap, 1);
    if (!b->cap)
        s[0] = '\0';
    b->s = s;
    b->cap = cap;
}

void strbuf_append(struct strbuf *b, const char *s, size_t len)
{
    strbuf_reserve(b, len);
    memcpy(b->s + b->len, s, len);
    b->len += len;
    b->s[b->len] = '\0';
}

void strbuf_puts(struct strbuf *b, const char *s)
{
    strbuf_append(b, s, strlen(s));
}

void strbuf_putc(struct strbuf *b, char c)
{
    strbuf_reserve(b, 1);
    b->s[b->len++] = c;
    b->s[b->len] = '\0';
}

void strbuf_printf(struct strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        strbuf_append(b, small, (size_t)n);
        return;
    }
    strbuf_reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void strbuf_reset(struct strbuf *b)
{
    b->len = 0;
    if (b->cap)
        b->s[0] = '\0';
}

void strbuf_free(struct strbuf *b)
{
    if (b->cap)
        free(b->s);
    *b = (struct strbuf)STRBUF_INIT;
}

char *strbuf_take(struct strbuf *b)
{
    char *s = b->cap ? b->s : xstrdup("");
    *b = (struct strbuf)STRBUF_INIT;
    return s;
}

void strbuf_catf(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strnlen(buf, len);
    if (used + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}
