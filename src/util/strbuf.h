/* strbuf: a growable, NUL-terminated string, started with STRBUF_INIT (git's strbuf): s is
 * never NULL, an empty buffer's text is "" (a shared static byte, which nothing writes), so
 * callers read b.s at any time. Not thread-safe; allocation failure aborts (xalloc). */
#ifndef MLBENCH_STRBUF_H
#define MLBENCH_STRBUF_H

#include <stddef.h>

struct strbuf {
    char *s;       /* the text, NUL-terminated; never NULL */
    size_t len;    /* bytes, without the terminating NUL */
    size_t cap;    /* bytes allocated; 0: s is the shared empty text */
};

/* The shared empty text of a buffer that holds nothing yet: read-only. */
extern char strbuf_empty[1];
#define STRBUF_INIT {strbuf_empty, 0, 0}

/* Makes room for at least `more` further bytes (fewer reallocations for a known size). */
void strbuf_reserve(struct strbuf *b, size_t more);
/* Appends len bytes of s. */
void strbuf_append(struct strbuf *b, const char *s, size_t len);
/* Appends a NUL-terminated string. */
void strbuf_puts(struct strbuf *b, const char *s);
void strbuf_putc(struct strbuf *b, char c);
/* Appends printf-formatted text. */
void strbuf_printf(struct strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends printf-formatted text to the NUL-terminated string in the fixed buffer buf of len
 * bytes, truncating at its end (the analysis's evidence and advice texts). */
void strbuf_catf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Empties the buffer, keeping its memory. */
void strbuf_reset(struct strbuf *b);
/* Frees the text and empties the buffer (STRBUF_INIT again: it can be used again). */
void strbuf_free(struct strbuf *b);
/* The text, owned by the caller ("" when nothing was appended); the buffer is empty after. */
char *strbuf_take(struct strbuf *b);

#endif
