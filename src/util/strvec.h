/* strvec: a growing list of strings that the list owns, always NULL-terminated (v[n] is NULL,
 * so v is an argv), started with STRVEC_INIT or zero: the one string-vector type of the
 * harness (git's strvec). Not thread-safe; allocation failure aborts (xalloc). */
#ifndef MLBENCH_STRVEC_H
#define MLBENCH_STRVEC_H

#include <stdarg.h>
#include <stddef.h>

struct strvec {
    char **v;      /* n strings, then NULL; NULL while empty */
    size_t n, cap;
};

#define STRVEC_INIT {NULL, 0, 0}

/* Appends a copy of s. */
void strvec_push(struct strvec *sv, const char *s);
/* Appends s itself, which the list then owns (a string from xalloc). */
void strvec_push_owned(struct strvec *sv, char *s);
/* Appends a copy of each string up to a NULL: STRVEC_PUSHL(sv, "a", "b") supplies the NULL. */
void strvec_pushl(struct strvec *sv, ...);
#define STRVEC_PUSHL(sv, ...) strvec_pushl((sv), __VA_ARGS__, (const char *)NULL)
/* Appends a printf-formatted string. */
void strvec_pushf(struct strvec *sv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strvec_vpushf(struct strvec *sv, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* Frees the strings and the list; sv is empty after (it can be used again). */
void strvec_free(struct strvec *sv);

#endif
