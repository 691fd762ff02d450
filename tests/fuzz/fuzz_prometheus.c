/* fuzz_prometheus: the Prometheus exposition writer, fed directly and through the live
 * aggregate of /metrics. Input: lines; a line is
 *   F<name>\t<help>                      a family (name used only when it is valid)
 *   S<name>\t<label>\t<value>\t<number>  a sample with one label, as a double and a count
 *   H<name>\t<number>...                 a histogram with those bounds (sorted here)
 *   V<8 bytes>                           a double's bytes, written and read back
 * and anything else is a marker datagram given to live_on_marker (NULL when it does not
 * parse). The writer's text and live_render's are then checked line by line against the
 * format: "# HELP", "# TYPE", or name{label="escaped",...} value, all of it valid UTF-8. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "live/live.h"
#include "live/prometheus.h"
#include "measure/marker_parse.h"
#include "util/strbuf.h"
#include "util/units.h"

static void fail(const char *what, const char *text, size_t len)
{
    fprintf(stderr, "fuzz_prometheus: %s in: %.*s\n", what, (int)(len > 300 ? 300 : len), text);
    abort();
}

static bool name_char(char c, bool first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
           (!first && c >= '0' && c <= '9');
}

/* Length of a metric name at s (0: none). */
static size_t name_len(const char *s, const char *end)
{
    size_t n = 0;
    while (s + n < end && name_char(s[n], n == 0))
        n++;
    return n;
}

static bool value_ok(const char *s, size_t len)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf)
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (!strcmp(buf, "NaN") || !strcmp(buf, "+Inf") || !strcmp(buf, "-Inf"))
        return true;
    char *e;
    double v = strtod(buf, &e);
    return *e == '\0' && isfinite(v);
}

static void check_line(const char *s, size_t len)
{
    const char *end = s + len;
    if (len >= 7 && !memcmp(s, "# HELP ", 7)) {
        size_t n = name_len(s + 7, end);
        if (!n || s + 7 + n == end || s[7 + n] != ' ')
            fail("bad HELP line", s, len);
        for (const char *p = s + 8 + n; p < end; p++)
            if (*p == '\\' && (++p == end || (*p != '\\' && *p != 'n')))
                fail("bad escape in HELP", s, len);
        return;
    }
    if (len >= 7 && !memcmp(s, "# TYPE ", 7)) {
        size_t n = name_len(s + 7, end);
        const char *t = s + 8 + n;
        size_t tl = (size_t)(end - t);
        if (!n || s + 7 + n == end || s[7 + n] != ' ' ||
            !((tl == 7 && !memcmp(t, "counter", 7)) || (tl == 5 && !memcmp(t, "gauge", 5)) ||
              (tl == 9 && !memcmp(t, "histogram", 9))))
            fail("bad TYPE line", s, len);
        return;
    }
    size_t n = name_len(s, end);
    if (!n)
        fail("sample without a name", s, len);
    const char *p = s + n;
    if (p < end && *p == '{') {
        p++;
        while (p < end && *p != '}') {
            size_t k = 0;
            while (p + k < end && name_char(p[k], k == 0) && p[k] != ':')
                k++;
            if (!k || p + k + 1 >= end || p[k] != '=' || p[k + 1] != '"')
                fail("bad label", s, len);
            p += k + 2;
            while (p < end && *p != '"') {
                if (*p == '\\' && (++p == end || (*p != '\\' && *p != 'n' && *p != '"')))
                    fail("bad escape in a label value", s, len);
                p++;
            }
            if (p == end)
                fail("unterminated label value", s, len);
            p++;
            if (p < end && *p == ',')
                p++;
        }
        if (p == end)
            fail("unterminated label list", s, len);
        p++;
    }
    if (p == end || *p != ' ' || !value_ok(p + 1, (size_t)(end - p - 1)))
        fail("bad sample value", s, len);
}

static void check_text(const char *text, size_t len)
{
    if (!units_utf8_valid(text, len))
        fail("not UTF-8", text, len);
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            fail("last line without a newline", p, (size_t)(end - p));
        check_line(p, (size_t)(nl - p));
        p = nl + 1;
    }
}

/* Field i of a tab-separated line (NUL-terminated copy in buf). */
static const char *field(const char *s, size_t len, int i, char *buf, size_t cap)
{
    const char *p = s, *end = s + len;
    for (; i > 0 && p; i--) {
        p = memchr(p, '\t', (size_t)(end - p));
        if (p)
            p++;
    }
    if (!p)
        return NULL;
    const char *q = memchr(p, '\t', (size_t)(end - p));
    size_t n = (size_t)((q ? q : end) - p);
    if (n >= cap)
        n = cap - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return buf;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void direct(struct strbuf *b, const char *s, size_t len)
{
    char name[256], f1[512], f2[512], f3[64];
    if (!field(s + 1, len - 1, 0, name, sizeof name) || !prom_valid_name(name))
        snprintf(name, sizeof name, "fuzz_metric");
    switch (s[0]) {
    case 'F':
        prom_family(b, name, (enum prom_type)(len % 3),
                    field(s + 1, len - 1, 1, f1, sizeof f1) ? f1 : "");
        break;
    case 'S': {
        struct strbuf lb = STRBUF_INIT;
        if (field(s + 1, len - 1, 1, f1, sizeof f1) && prom_valid_label_name(f1) &&
            field(s + 1, len - 1, 2, f2, sizeof f2))
            prom_labels_add(&lb, f1, f2);
        double v = field(s + 1, len - 1, 3, f3, sizeof f3) ? strtod(f3, NULL) : 0;
        prom_sample(b, name, lb.s, v);
        prom_sample_u64(b, name, lb.s, (uint64_t)len * UINT64_C(0x9e3779b97f4a7c15));
        strbuf_free(&lb);
        break;
    }
    case 'H': {
        double bounds[16];
        uint64_t counts[17];
        size_t n = 0;
        while (n < 16 && field(s + 1, len - 1, (int)n + 1, f3, sizeof f3)) {
            double v = strtod(f3, NULL);
            if (isfinite(v))
                bounds[n++] = v;
            else
                break;
        }
        qsort(bounds, n, sizeof *bounds, cmp_double);
        for (size_t i = 0; i <= n; i++)
            counts[i] = (uint64_t)i * len;
        prom_histogram(b, name, NULL, bounds, n, counts, (double)len);
        break;
    }
    default:
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data, *end = p + size;
    struct live_metrics *live = live_new();
    live_expect_markers(live);
    struct strbuf b = STRBUF_INIT;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (len >= 1 && (p[0] == 'F' || p[0] == 'S' || p[0] == 'H')) {
            direct(&b, p, len);
        } else if (len == 9 && p[0] == 'V') {
            double v, back;
            char buf[64], *e;
            memcpy(&v, p + 1, sizeof v);
            prom_format_value(v, buf, sizeof buf);
            back = strtod(buf, &e);
            if (*e || !value_ok(buf, strlen(buf)) ||
                (isnan(v) ? strcmp(buf, "NaN") != 0 : back != v))
                fail("value does not read back", buf, strlen(buf));
        } else {
            struct marker_token tok;
            live_on_marker(live, marker_parse(p, len, &tok) ? NULL : &tok);
        }
        p += len + (nl != NULL);
    }
    if (b.len)
        check_text(b.s, b.len);
    strbuf_free(&b);
    size_t len;
    char *text = live_render(live, &len);
    if (strlen(text) != len)
        fail("render length", text, len);
    check_text(text, len);
    free(text);
    live_close_spans(live);
    live_free(live);
    return 0;
}
