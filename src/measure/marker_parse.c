/* marker_parse: strict parser of marker protocol datagrams (see marker_parse.h). */
#include "measure/marker_parse.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/units.h"

/* Reads a decimal integer field followed by one space. */
static int field_int(const char **p, const char *end, int64_t min, int64_t max, int64_t *out)
{
    const char *s = *p;
    int64_t v = 0;
    if (s >= end || *s < '0' || *s > '9')
        return -1;
    for (; s < end && *s >= '0' && *s <= '9'; s++) {
        if (v > (INT64_MAX - (*s - '0')) / 10)
            return -1;
        v = v * 10 + (*s - '0');
    }
    if (s >= end || *s != ' ' || v < min || v > max)
        return -1;
    *out = v;
    *p = s + 1;
    return 0;
}

static int is_control(unsigned char c)
{
    return c < 0x20 || c == 0x7f;
}

const char *marker_parse(const char *buf, size_t len, struct marker_token *tok)
{
    const char *p = buf, *end = buf + len;
    int64_t v;

    memset(tok, 0, sizeof *tok);
    if (len == 0)
        return "empty";
    if (len > MARKER_MAX_EVENT)
        return "overlong";
    if (len < 2 || buf[1] != ' ')
        return "bad kind";
    switch (buf[0]) {
    case MARKER_BEGIN: case MARKER_END: case MARKER_COUNTER: case MARKER_META: case MARKER_INSTANT:
        tok->kind = buf[0];
        break;
    default:
        return "unknown kind";
    }
    p += 2;
    if (field_int(&p, end, 0, INT64_MAX, &v))
        return "bad timestamp";
    tok->t_ns = v;
    if (field_int(&p, end, 1, INT32_MAX, &v))
        return "bad pid";
    tok->pid = (int32_t)v;
    if (field_int(&p, end, 1, INT32_MAX, &v))
        return "bad tid";
    tok->tid = (int32_t)v;

    tok->name = p;
    while (p < end && *p != ' ') {
        if (is_control((unsigned char)*p))
            return "control character in name";
        p++;
    }
    tok->name_len = (size_t)(p - tok->name);
    if (tok->name_len == 0)
        return "empty name";
    if (!units_utf8_valid(tok->name, tok->name_len))
        return "name is not UTF-8";

    const char *value = p < end ? p + 1 : NULL; /* after the separating space */
    switch (tok->kind) {
    case MARKER_COUNTER: {
        if (!value || value == end)
            return "counter without value";
        char num[64];
        size_t n = (size_t)(end - value);
        if (n >= sizeof num)
            return "bad counter value";
        memcpy(num, value, n);
        num[n] = '\0';
        char *stop;
        errno = 0;
        tok->number = strtod(num, &stop);
        if (*stop || stop == num || (errno == ERANGE && fabs(tok->number) > 1.0))
            return "bad counter value";
        break;
    }
    case MARKER_META:
        tok->value = value ? value : end;
        tok->value_len = value ? (size_t)(end - value) : 0;
        for (size_t i = 0; i < tok->value_len; i++)
            if (is_control((unsigned char)tok->value[i]))
                return "control character in value";
        if (!units_utf8_valid(tok->value, tok->value_len))
            return "value is not UTF-8";
        break;
    default:
        if (value)
            return "unexpected value";
    }
    return NULL;
}
