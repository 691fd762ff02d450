/* units: formatting of durations and sizes, strict parsing of option values (see units.h). */
#include "util/units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

/* Prints v with 4 significant digits, without a trailing exponent. */
static void four_digits(double v, const char *unit, char *buf, size_t len)
{
    int decimals = v >= 100 ? 1 : v >= 10 ? 2 : 3;
    snprintf(buf, len, "%.*f %s", decimals, v, unit);
}

char *units_duration(double ns, char *buf, size_t len)
{
    double a = fabs(ns);
    if (!isfinite(ns))
        snprintf(buf, len, "-");
    else if (a < 1e3)
        snprintf(buf, len, "%.0f ns", ns);
    else if (a < 1e6)
        four_digits(ns / 1e3, "us", buf, len);
    else if (a < 1e9)
        four_digits(ns / 1e6, "ms", buf, len);
    else if (a < 60e9)
        four_digits(ns / 1e9, "s", buf, len);
    else {
        double s = ns / 1e9;
        /* trunc, not a cast to long: a duration read from a file may be any finite double
         * (1e30 ns), and a cast out of range is undefined */
        double min = trunc(s / 60);
        snprintf(buf, len, "%.0f min %04.1f s", min, s - 60.0 * min);
    }
    return buf;
}

char *units_bytes(double bytes, char *buf, size_t len)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    size_t u = 0;
    if (!isfinite(bytes)) {
        snprintf(buf, len, "-");
        return buf;
    }
    while (fabs(bytes) >= 1024 && u + 1 < sizeof unit / sizeof unit[0]) {
        bytes /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%.0f B", bytes);
    else
        four_digits(bytes, unit[u], buf, len);
    return buf;
}

int units_parse_long(const char *s, long min, long max, long *out)
{
    char *end;
    if (!s || !*s)
        return -1;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int units_parse_seconds(const char *s, double *out)
{
    static const struct { const char *suffix; double scale; } suffixes[] = {
        {"", 1}, {"s", 1}, {"ms", 1e-3}, {"m", 60}, {"min", 60}, {"h", 3600},
    };
    char *end;
    if (!s || !*s || s[0] == '-' || s[0] == '+' || s[0] == ' ')
        return -1;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !isfinite(v) || v < 0)
        return -1;
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        if (strcmp(end, suffixes[i].suffix) == 0) {
            double scaled = v * suffixes[i].scale; /* 1e308h overflows here, after strtod */
            if (!isfinite(scaled))
                return -1;
            *out = scaled;
            return 0;
        }
    }
    return -1;
}

int units_parse_bytes(const char *s, double *out)
{
    char *end;
    if (!s || !*s || s[0] == '-' || s[0] == '+' || s[0] == ' ')
        return -1;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !isfinite(v) || v < 0 || (end[0] == '0' && end[1] == 'x'))
        return -1;
    if (*end == ' ')
        end++;
    double scale = 1;
    static const char letters[] = "kmgt";
    const char *l = *end ? strchr(letters, tolower((unsigned char)*end)) : NULL;
    if (l) {
        int power = (int)(l - letters) + 1;
        end++;
        bool decimal = !strcmp(end, "B") || !strcmp(end, "b");
        if (!decimal && strcmp(end, "iB") && strcmp(end, "ib") && *end)
            return -1;
        scale = pow(decimal ? 1000 : 1024, power);
    } else if (*end && strcmp(end, "B") && strcmp(end, "b")) {
        return -1;
    }
    double scaled = v * scale;
    if (!isfinite(scaled))
        return -1;
    *out = scaled;
    return 0;
}

int units_utf8_valid(const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < len) {
        unsigned char c = s[i];
        size_t n;
        uint32_t cp;
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xc2 && c <= 0xdf) {
            n = 1, cp = c & 0x1f;
        } else if (c >= 0xe0 && c <= 0xef) {
            n = 2, cp = c & 0x0f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            n = 3, cp = c & 0x07;
        } else {
            return 0;
        }
        if (i + n >= len)
            return 0;
        for (size_t k = 1; k <= n; k++) {
            if ((s[i + k] & 0xc0) != 0x80)
                return 0;
            cp = (cp << 6) | (s[i + k] & 0x3f);
        }
        if ((n == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
            (n == 3 && (cp < 0x10000 || cp > 0x10ffff)))
            return 0;
        i += n + 1;
    }
    return 1;
}

char *units_utf8_sanitize(const char *s, size_t len)
{
    char *out = xmalloc(len + 1);
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        unsigned char c = (unsigned char)s[i];
        size_t seq = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
        if (i + seq <= len && units_utf8_valid(s + i, seq)) {
            memcpy(out + o, s + i, seq);
            o += seq;
            i += seq;
        } else {
            out[o++] = '?';
            i++;
        }
    }
    out[o] = '\0';
    return out;
}
