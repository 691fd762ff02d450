/* xalloc: the one allocation policy of the harness. Allocation failure is not recoverable in a
 * measuring tool (the result could not be kept anyway): these print what failed and abort.
 * They never return NULL. Thread-safe. */
#ifndef MLBENCH_XALLOC_H
#define MLBENCH_XALLOC_H

#include <stdarg.h>
#include <stddef.h>

void *xmalloc(size_t size);
void *xcalloc(size_t count, size_t size);
/* Grows or shrinks ptr; count * size is checked for overflow. */
void *xreallocarray(void *ptr, size_t count, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* The one growth rule of the harness's arrays: returns ptr (an array of *cap elements of size
 * bytes; NULL with *cap 0 when empty) with room for at least need elements, growing it to twice
 * its size (8 at first) or to need when that is more, and updates *cap. The array may move. */
void *xgrow(void *ptr, size_t *cap, size_t need, size_t size);

/* printf into a new string owned by the caller. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same with a va_list (the caller's va_end still due). */
char *xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

#endif
