/* prometheus: text exposition format 0.0.4 writer (see prometheus.h). */
#include "live/prometheus.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/units.h"
#include "util/xalloc.h"

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

void prom_escape_label_value(struct strbuf *b, const char *s, size_t len)
{
    strbuf_reserve(b, len + 8);
    for (size_t i = 0; i < len;) {
        char c = s[i];
        if (c == '\\' || c == '"') {
            strbuf_putc(b, '\\');
            strbuf_putc(b, c);
            i++;
        } else if (c == '\n') {
            strbuf_append(b, "\\n", 2);
            i++;
        } else {
            size_t k = utf8_seq(s + i, len - i);
            if (k == 0) {
                strbuf_putc(b, '?');
                i++;
            } else {
                strbuf_append(b, s + i, k);
                i += k;
            }
        }
    }
}

void prom_labels_add(struct strbuf *lb, const char *key, const char *value)
{
    if (lb->len)
        strbuf_putc(lb, ',');
    strbuf_puts(lb, key);
    strbuf_append(lb, "=\"", 2);
    prom_escape_label_value(lb, value, strlen(value));
    strbuf_putc(lb, '"');
}

void prom_family(struct strbuf *b, const char *name, enum prom_type type, const char *help)
{
    static const char *const type_names[] = {
        [PROM_COUNTER] = "counter", [PROM_GAUGE] = "gauge", [PROM_HISTOGRAM] = "histogram",
    };
    strbuf_puts(b, "# HELP ");
    strbuf_puts(b, name);
    strbuf_putc(b, ' ');
    /* The format is UTF-8 throughout: a byte of help that is not well-formed UTF-8 is
     * written as '?', as in label values. */
    size_t len = strlen(help);
    for (size_t i = 0; i < len;) {
        size_t k = help[i] == '\\' || help[i] == '\n' ? 1 : utf8_seq(help + i, len - i);
        if (help[i] == '\\')
            strbuf_append(b, "\\\\", 2);
        else if (help[i] == '\n')
            strbuf_append(b, "\\n", 2);
        else if (k == 0)
            strbuf_putc(b, '?');
        else
            strbuf_append(b, help + i, k);
        i += k ? k : 1;
    }
    strbuf_puts(b, "\n# TYPE ");
    strbuf_puts(b, name);
    strbuf_putc(b, ' ');
    strbuf_puts(b, type_names[type]);
    strbuf_putc(b, '\n');
}

static void sample_start(struct strbuf *b, const char *name, const char *suffix,
                         const char *labels, const char *extra)
{
    strbuf_puts(b, name);
    if (suffix)
        strbuf_puts(b, suffix);
    bool has = labels && *labels;
    if (has || extra) {
        strbuf_putc(b, '{');
        if (has)
            strbuf_puts(b, labels);
        if (extra) {
            if (has)
                strbuf_putc(b, ',');
            strbuf_puts(b, extra);
        }
        strbuf_putc(b, '}');
    }
    strbuf_putc(b, ' ');
}

void prom_sample(struct strbuf *b, const char *name, const char *labels, double value)
{
    char v[40];
    sample_start(b, name, NULL, labels, NULL);
    strbuf_puts(b, prom_format_value(value, v, sizeof v));
    strbuf_putc(b, '\n');
}

void prom_sample_u64(struct strbuf *b, const char *name, const char *labels, uint64_t value)
{
    char v[24];
    snprintf(v, sizeof v, "%" PRIu64, value);
    sample_start(b, name, NULL, labels, NULL);
    strbuf_puts(b, v);
    strbuf_putc(b, '\n');
}

void prom_histogram(struct strbuf *b, const char *name, const char *labels,
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
        strbuf_puts(b, v);
        strbuf_putc(b, '\n');
    }
    sample_start(b, name, "_sum", labels, NULL);
    strbuf_puts(b, prom_format_value(sum, v, sizeof v));
    strbuf_putc(b, '\n');
    sample_start(b, name, "_count", labels, NULL);
    snprintf(v, sizeof v, "%" PRIu64, cum);
    strbuf_puts(b, v);
    strbuf_putc(b, '\n');
}
