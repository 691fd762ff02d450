/* xalloc: checked allocation helpers (see xalloc.h). */
#include "util/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void out_of_memory(size_t size)
{
    fprintf(stderr, "mlbench: out of memory allocating %zu bytes\n", size);
    abort();
}

void *xmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p)
        out_of_memory(size);
    return p;
}

void *xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        out_of_memory(count * size);
    return p;
}

void *xreallocarray(void *ptr, size_t count, size_t size)
{
    if (size && count > (size_t)-1 / size)
        out_of_memory((size_t)-1);
    size_t bytes = count * size;
    void *p = realloc(ptr, bytes ? bytes : 1);
    if (!p)
        out_of_memory(bytes);
    return p;
}

char *xstrdup(const char *s)
{
    return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *p = xmalloc(len + 1);
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

void *xgrow(void *ptr, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return ptr;
    size_t grown = *cap ? *cap : 8;
    while (grown < need)
        grown = grown > SIZE_MAX / 2 ? need : 2 * grown;
    ptr = xreallocarray(ptr, grown, size);
    *cap = grown;
    return ptr;
}

char *xvasprintf(const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int len = vsnprintf(NULL, 0, fmt, ap);
    if (len < 0)
        out_of_memory(0);
    char *p = xmalloc((size_t)len + 1);
    vsnprintf(p, (size_t)len + 1, fmt, again);
    va_end(again);
    return p;
}

char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *p = xvasprintf(fmt, ap);
    va_end(ap);
    return p;
}
