/* values.c: values as every view writes them (export.h): durations, sizes and numbers with "-"
 * for what was not measured, a JSON value as text, a counter's rate, text cleaned of terminal
 * controls, and the end of a write that reports an I/O error. */
#include "export/export.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/term.h"
#include "util/units.h"
#include "util/xalloc.h"

int export_finish(FILE *out, const char *what, char *err, size_t errlen)
{
    if (fflush(out) != 0 || ferror(out)) {
        snprintf(err, errlen, "cannot write %s: %s", what, errno ? strerror(errno) : "I/O error");
        return EXPORT_EIO;
    }
    return EXPORT_OK;
}

bool export_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && !memcmp(s + (n - k), suffix, k);
}

char *export_fmt_duration(double ns, char *buf, size_t len)
{
    if (!isfinite(ns)) {
        snprintf(buf, len, "-");
        return buf;
    }
    return units_duration(ns, buf, len);
}

char *export_fmt_bytes(double bytes, char *buf, size_t len)
{
    if (!isfinite(bytes)) {
        snprintf(buf, len, "-");
        return buf;
    }
    return units_bytes(bytes, buf, len);
}

char *export_fmt_num(double v, const char *fmt, double scale, char *buf, size_t len)
{
    if (!isfinite(v)) {
        snprintf(buf, len, "-");
        return buf;
    }
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    snprintf(buf, len, fmt, v * scale);
#pragma GCC diagnostic pop
    return buf;
}

char *export_fmt_exact(double v, char *buf, size_t len)
{
    snprintf(buf, len, "%.15g", v);
    if (strtod(buf, NULL) != v)
        snprintf(buf, len, "%.17g", v);
    return buf;
}

char *export_fmt_value(const json_t *v, char *buf, size_t len)
{
    if (json_is_string(v)) {
        snprintf(buf, len, "%s", json_string_value(v));
    } else if (json_is_integer(v)) {
        snprintf(buf, len, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        snprintf(buf, len, "%.6g", json_real_value(v));
    } else if (json_is_true(v) || json_is_false(v)) {
        snprintf(buf, len, "%s", json_is_true(v) ? "yes" : "no");
    } else if (!v || json_is_null(v)) {
        snprintf(buf, len, "-");
    } else {
        char *s = json_dumps(v, JSON_COMPACT);
        snprintf(buf, len, "%s", s ? s : "?");
        free(s);
    }
    return buf;
}

char *export_clean(const char *s)
{
    /* the output is never longer than the input: each replaced sequence becomes one '?' */
    size_t len = strlen(s);
    char *out = xcalloc(len + 1, 1);
    FILE *m = fmemopen(out, len + 1, "w");
    if (m) {
        setvbuf(m, NULL, _IONBF, 0);
        term_clean(m, s, len);
        fclose(m);
    }
    return out;
}

/* A rate per second: 4 significant digits, whole numbers from 10 000 up (not 1.054e+04). */
static const char *fmt_rate(double v, char *buf, size_t len)
{
    snprintf(buf, len, fabs(v) >= 1e4 && isfinite(v) ? "%.0f/s" : "%.4g/s", v);
    return buf;
}

char *export_fmt_counter_rate(const struct doc_counter *counter, char *buf, size_t len)
{
    char a[40], b[40];
    double rate = counter->rate_per_s_median, in_stage = counter->stage_rate_per_s_median;
    if (counter->stage && isfinite(in_stage))
        snprintf(buf, len, "%s in %s, %s over the run", fmt_rate(in_stage, a, sizeof a),
                 counter->stage, fmt_rate(rate, b, sizeof b));
    else if (counter->stage_mixed)
        snprintf(buf, len, "%s over the run (sent in several stages)", fmt_rate(rate, b, sizeof b));
    else
        snprintf(buf, len, "%s over the run", fmt_rate(rate, b, sizeof b));
    return buf;
}
