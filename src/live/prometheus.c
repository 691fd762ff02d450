/* prometheus: text exposition format 0.0.4 writer (see prometheus.h). */
#include "live/prometheus.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/units.h"
#include "util/xalloc.h"

void prom_buf_free(struct prom_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

void prom_buf_reset(struct prom_buf *b)
{
    b->len = 0;
    if (b->p)
        b->p[0] = '\0';
}

void prom_buf_reserve(struct prom_buf *b, size_t more)
{
    if (b->len + more + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more + 1)
        cap *= 2;
    b->p = xreallocarray(b->p, cap, 1);
    b->cap = cap;
}

void prom_buf_append(struct prom_buf *b, const char *s, size_t len)
{
    prom_buf_reserve(b, len);
    memcpy(b->p + b->len, s, len);
    b->len += len;
    b->p[b->len] = '\0';
}

void prom_buf_puts(struct prom_buf *b, const char *s)
{
    prom_buf_append(b, s, strlen(s));
}

static void putc_buf(struct prom_buf *b, char c)
{
    prom_buf_reserve(b, 1);
    b->p[b->len++] = c;
    b->p[b->len] = '\0';
}

static bool name_char(char c, bool first, bool colon)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':') ||
           (!first && c >= '0' && c <= '9');
}

bool prom_valid_name(const char *name)
{
    if (!name || !*name)
        return false;
    for (const char *p = name; *p; p++)
        if (!name_char(*p, p == name, true))
            return false;
    return true;
}

bool prom_valid_label_name(const char *name)
{
    if (!name || !*name || !strncmp(name, "__", 2))
        return false;
    for (const char *p = name; *p; p++)
        if (!name_char(*p, p == name, false))
            return false;
    return true;
}

char *prom_format_value(double value, char *buf, size_t len)
{
    if (isnan(value)) {
        snprintf(buf, len, "NaN");
    } else if (isinf(value)) {
        snprintf(buf, len, value > 0 ? "+Inf" : "-Inf");
    } else {
        /* The shortest of %.15g..%.17g that reads back exactly: 0.1 rather than
         * 0.10000000000000001. */
        for (int prec = 15; prec <= 17; prec++) {
            snprintf(buf, len, "%.*g", prec, value);
            if (strtod(buf, NULL) == value)
                break;
        }
    }
    return buf;
}

/* Length of the well-formed UTF-8 sequence at s (at most n bytes), or 0. */
static size_t utf8_seq(const char *s, size_t n)
{
    unsigned char c = (unsigned char)s[0];
    size_t want = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
                : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (!want || want > n || !units_utf8_valid(s, want))
        return 0;
    return want;
}

void prom_escape_label_value(struct prom_buf *b, const char *s, size_t len)
{
    prom_buf_reserve(b, len + 8);
    for (size_t i = 0; i < len;) {
        char c = s[i];
        if (c == '\\' || c == '"') {
            putc_buf(b, '\\');
            putc_buf(b, c);
            i++;
        } else if (c == '\n') {
            prom_buf_append(b, "\\n", 2);
            i++;
        } else {
            size_t k = utf8_seq(s + i, len - i);
            if (k == 0) {
                putc_buf(b, '?');
                i++;
            } else {
                prom_buf_append(b, s + i, k);
                i += k;
            }
        }
    }
}

void prom_labels_add(struct prom_buf *lb, const char *key, const char *value)
{
    if (lb->len)
        putc_buf(lb, ',');
    prom_buf_puts(lb, key);
    prom_buf_append(lb, "=\"", 2);
    prom_escape_label_value(lb, value, strlen(value));
    putc_buf(lb, '"');
}

void prom_family(struct prom_buf *b, const char *name, enum prom_type type, const char *help)
{
    static const char *const type_names[] = {
        [PROM_COUNTER] = "counter", [PROM_GAUGE] = "gauge", [PROM_HISTOGRAM] = "histogram",
    };
    prom_buf_puts(b, "# HELP ");
    prom_buf_puts(b, name);
    putc_buf(b, ' ');
    for (const char *p = help; *p; p++) {
        if (*p == '\\')
            prom_buf_append(b, "\\\\", 2);
        else if (*p == '\n')
            prom_buf_append(b, "\\n", 2);
        else
            putc_buf(b, *p);
    }
    prom_buf_puts(b, "\n# TYPE ");
    prom_buf_puts(b, name);
    putc_buf(b, ' ');
    prom_buf_puts(b, type_names[type]);
    putc_buf(b, '\n');
}

static void sample_start(struct prom_buf *b, const char *name, const char *suffix,
                         const char *labels, const char *extra)
{
    prom_buf_puts(b, name);
    if (suffix)
        prom_buf_puts(b, suffix);
    bool has = labels && *labels;
    if (has || extra) {
        putc_buf(b, '{');
        if (has)
            prom_buf_puts(b, labels);
        if (extra) {
            if (has)
                putc_buf(b, ',');
            prom_buf_puts(b, extra);
        }
        putc_buf(b, '}');
    }
    putc_buf(b, ' ');
}

void prom_sample(struct prom_buf *b, const char *name, const char *labels, double value)
{
    char v[40];
    sample_start(b, name, NULL, labels, NULL);
    prom_buf_puts(b, prom_format_value(value, v, sizeof v));
    putc_buf(b, '\n');
}

void prom_sample_u64(struct prom_buf *b, const char *name, const char *labels, uint64_t value)
{
    char v[24];
    snprintf(v, sizeof v, "%" PRIu64, value);
    sample_start(b, name, NULL, labels, NULL);
    prom_buf_puts(b, v);
    putc_buf(b, '\n');
}

void prom_histogram(struct prom_buf *b, const char *name, const char *labels,
                    const double *bounds, size_t n_bounds, const uint64_t *counts, double sum)
{
    uint64_t cum = 0;
    char le[64], v[40];
    for (size_t i = 0; i <= n_bounds; i++) {
        cum += counts[i];
        if (i < n_bounds)
            snprintf(le, sizeof le, "le=\"%s\"", prom_format_value(bounds[i], v, sizeof v));
        else
            snprintf(le, sizeof le, "le=\"+Inf\"");
        sample_start(b, name, "_bucket", labels, le);
        snprintf(v, sizeof v, "%" PRIu64, cum);
        prom_buf_puts(b, v);
        putc_buf(b, '\n');
    }
    sample_start(b, name, "_sum", labels, NULL);
    prom_buf_puts(b, prom_format_value(sum, v, sizeof v));
    putc_buf(b, '\n');
    sample_start(b, name, "_count", labels, NULL);
    snprintf(v, sizeof v, "%" PRIu64, cum);
    prom_buf_puts(b, v);
    putc_buf(b, '\n');
}
