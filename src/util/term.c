/* term: text for a terminal (see term.h). */
#include "util/term.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/units.h"
#include "util/xalloc.h"

/* The code point of the UTF-8 sequence at s and its length in bytes; an invalid byte is one
 * byte long and decodes as U+FFFD. */
static size_t utf8_next(const char *s, uint32_t *cp)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t n = u[0] < 0x80 ? 1 : u[0] >= 0xf0 ? 4 : u[0] >= 0xe0 ? 3 : 2;
    if (n > 1 && (strnlen(s, n) < n || !units_utf8_valid(s, n))) {
        *cp = 0xfffd;
        return 1;
    }
    if (n == 1)
        *cp = u[0];
    else if (n == 2)
        *cp = (uint32_t)(u[0] & 0x1f) << 6 | (u[1] & 0x3f);
    else if (n == 3)
        *cp = (uint32_t)(u[0] & 0x0f) << 12 | (uint32_t)(u[1] & 0x3f) << 6 | (u[2] & 0x3f);
    else
        *cp = (uint32_t)(u[0] & 0x07) << 18 | (uint32_t)(u[1] & 0x3f) << 12 |
              (uint32_t)(u[2] & 0x3f) << 6 | (u[3] & 0x3f);
    return n;
}

/* Columns of one character. glibc's wcwidth would need a UTF-8 locale, which mlbench does not
 * set (its numbers must not depend on one): these ranges cover combining marks and the wide
 * scripts and symbols that stage names use. */
static int char_cols(uint32_t cp)
{
    if ((cp >= 0x0300 && cp <= 0x036f) || (cp >= 0x200b && cp <= 0x200f) ||
        (cp >= 0xfe00 && cp <= 0xfe0f))
        return 0;
    if ((cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2e80 && cp <= 0xa4cf && cp != 0x303f) ||
        (cp >= 0xac00 && cp <= 0xd7a3) || (cp >= 0xf900 && cp <= 0xfaff) ||
        (cp >= 0xfe30 && cp <= 0xfe4f) || (cp >= 0xff00 && cp <= 0xff60) ||
        (cp >= 0xffe0 && cp <= 0xffe6) || (cp >= 0x1f300 && cp <= 0x1f64f) ||
        (cp >= 0x1f900 && cp <= 0x1f9ff) || (cp >= 0x20000 && cp <= 0x3fffd))
        return 2;
    return 1;
}

int term_cols(const char *s)
{
    int cols = 0;
    uint32_t cp;
    while (*s) {
        s += utf8_next(s, &cp);
        cols += char_cols(cp);
    }
    return cols;
}

char *term_fit(const char *s, int max_cols, char *buf, size_t len)
{
    static const char ellipsis[] = "\u2026";
    bool cut = term_cols(s) > max_cols;
    int room = cut ? max_cols - 1 : max_cols, cols = 0;
    size_t w = 0;
    uint32_t cp;
    while (*s) {
        size_t n = utf8_next(s, &cp);
        int c = char_cols(cp);
        if (cols + c > room || w + n + sizeof ellipsis > len)
            break;
        if (*s == '\n' || *s == '\t' || *s == '\r')
            buf[w++] = '?';
        else
            memcpy(buf + w, s, n), w += n;
        cols += c;
        s += n;
    }
    if (cut && w + sizeof ellipsis <= len)
        memcpy(buf + w, ellipsis, sizeof ellipsis - 1), w += sizeof ellipsis - 1;
    buf[w] = '\0';
    return buf;
}

int term_clean(FILE *out, const char *text, size_t len)
{
    char *valid = units_utf8_sanitize(text, len); /* invalid bytes already '?' */
    int rc = 0;
    for (const unsigned char *p = (const unsigned char *)valid; *p && rc == 0; p++) {
        int c = *p;
        if ((c < 0x20 && c != '\n') || c == 0x7f) {
            c = '?';
        } else if (c == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) { /* a C1 control */
            c = '?';
            p++;
        } else if (c == 0xe2 && ((p[1] == 0x80 && p[2] >= 0xaa && p[2] <= 0xae) ||
                                 (p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9))) {
            c = '?'; /* a bidi embedding, override or isolate (U+202A-E, U+2066-9) */
            p += 2;
        }
        rc = putc(c, out) == EOF ? -1 : 0;
    }
    free(valid);
    return rc;
}

static enum term_color color_when = TERM_COLOR_AUTO;

int term_color_parse(const char *s, enum term_color *out)
{
    static const char *const names[] = {"auto", "always", "never"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(s, names[i])) {
            *out = (enum term_color)i;
            return 0;
        }
    return -1;
}

void term_color_set(enum term_color when)
{
    color_when = when;
}

bool term_color_on(FILE *out)
{
    if (color_when != TERM_COLOR_AUTO)
        return color_when == TERM_COLOR_ALWAYS;
    const char *no_color = getenv("NO_COLOR"), *term = getenv("TERM");
    if ((no_color && *no_color) || (term && !strcmp(term, "dumb")))
        return false;
    int fd = fileno(out);
    return fd >= 0 && isatty(fd);
}

static _Thread_local struct term_canvas *canvas; /* the one open on this thread, or NULL */

/* bold green, bold red, yellow: readable on dark and light backgrounds */
static const char *const sgr[] = {"\033[1;32m", "\033[1;31m", "\033[33m"};
static const char sgr_end[] = "\033[0m";

const char *term_tone_start(FILE *out, enum term_tone tone)
{
    return (!canvas || out != canvas->f) && term_color_on(out) ? sgr[tone] : "";
}

const char *term_tone_end(FILE *out)
{
    return (!canvas || out != canvas->f) && term_color_on(out) ? sgr_end : "";
}

int term_paint(FILE *out, enum term_tone tone, const char *text)
{
    if (canvas && out == canvas->f) {
        struct term_span span = {ftell(out), 0, tone};
        if (fputs(text, out) < 0)
            return -1;
        span.end = ftell(out);
        if (span.start < 0 || span.end <= span.start)
            return 0;
        canvas->spans = xgrow(canvas->spans, &canvas->cap_spans, canvas->n_spans + 1,
                              sizeof *canvas->spans);
        canvas->spans[canvas->n_spans++] = span;
        return 0;
    }
    return fprintf(out, "%s%s%s", term_tone_start(out, tone), text, term_tone_end(out)) < 0
               ? -1
               : 0;
}

int term_canvas_open(struct term_canvas *c, FILE *dest)
{
    memset(c, 0, sizeof *c);
    c->dest = dest;
    c->f = open_memstream(&c->buf, &c->len);
    if (!c->f)
        return -1;
    canvas = c;
    return 0;
}

int term_canvas_close(struct term_canvas *c)
{
    if (canvas == c)
        canvas = NULL;
    int rc = fclose(c->f) == 0 ? 0 : -1;
    bool color = rc == 0 && term_color_on(c->dest);
    size_t at = 0;
    for (size_t i = 0; rc == 0 && i < c->n_spans; i++) {
        size_t start = (size_t)c->spans[i].start, end = (size_t)c->spans[i].end;
        if (start < at || end > c->len)
            continue; /* not in order: left plain */
        if (term_clean(c->dest, c->buf + at, start - at) < 0 ||
            (color && fputs(sgr[c->spans[i].tone], c->dest) < 0) ||
            term_clean(c->dest, c->buf + start, end - start) < 0 ||
            (color && fputs(sgr_end, c->dest) < 0))
            rc = -1;
        at = end;
    }
    if (rc == 0 && term_clean(c->dest, c->buf + at, c->len - at) < 0)
        rc = -1;
    free(c->buf);
    free(c->spans);
    memset(c, 0, sizeof *c);
    return rc;
}

int term_put_verdict(FILE *out, const char *verdict, int width)
{
    static const struct {
        const char *word;
        enum term_tone tone;
    } tones[] = {{"faster", TERM_TONE_GOOD}, {"slower", TERM_TONE_BAD},
                 {"unreliable", TERM_TONE_WARN}};
    const char *v = verdict ? verdict : "?";
    int rc = -2;
    for (size_t i = 0; i < sizeof tones / sizeof tones[0]; i++)
        if (!strcmp(v, tones[i].word))
            rc = term_paint(out, tones[i].tone, v);
    if (rc == -2)
        rc = fputs(v, out) < 0 ? -1 : 0;
    int pad = width - term_cols(v);
    return rc < 0 || fprintf(out, "%*s", pad > 0 ? pad : 0, "") < 0 ? -1 : 0;
}
