/* doc/timings.c: reads and checks the documents of `mlbench record` (see timings.h). */
#include "doc/timings.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc/result.h"
#include "util/log.h"
#include "util/xalloc.h"

#define MAX_INPUT_BYTES (256u << 20)  /* all documents together */
#define MAX_ROUNDS 1000000            /* rounds_ns, and warmup_rounds_ns, per document */
#define MAX_ROUND_NS 1e15             /* a round, or its CPU time: about 11.6 days */
#define MAX_NUMBER 1e15               /* calls per round (a call takes 1 ns or more) */
#define MAX_NAME_BYTES 200
#define MAX_LABEL_BYTES 4096
#define MAX_TEXT_BYTES 4096           /* a word of the command, the timer, a metadata value */
#define MAX_WORDS 1000                /* of the command */
#define MAX_METADATA DOC_MAX_NAMES /* keys */

void doc_timings_free(struct timings *t)
{
    for (int i = 0; t->argv && i < t->argc; i++)
        free(t->argv[i]);
    free(t->argv);
    for (size_t i = 0; i < t->n_meta; i++)
        free(t->meta_value[i]);
    free(t->meta_key);
    free(t->meta_value);
    json_decref(t->json);
    memset(t, 0, sizeof *t);
}

/* ------------------------------------------------------------------ messages */

static const char *kind_of(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

/* d as the fewest digits that read back as d: 0.1, 1e+300. */
static char *shortest(double d, char *buf, size_t len)
{
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(buf, len, "%.*g", digits, d);
        if (strtod(buf, NULL) == d)
            break;
    }
    return buf;
}

/* A JSON value as a message may show it: scalars as written (strings quoted, anything that is
 * not ASCII escaped, so nothing reaches the terminal raw), cut to about 60 characters; arrays
 * and objects by their kind. */
static const char *shown(const json_t *v, char *buf, size_t len)
{
    if (json_is_array(v))
        snprintf(buf, len, "an array");
    else if (json_is_object(v))
        snprintf(buf, len, "an object");
    else if (json_is_real(v))
        shortest(json_real_value(v), buf, len);
    else {
        char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_ENSURE_ASCII | JSON_COMPACT);
        snprintf(buf, len, "%.60s%s", s ? s : "?", s && strlen(s) > 60 ? "..." : "");
        free(s);
    }
    return buf;
}

/* A value of the wrong type for a message: "an array", "null", or a scalar with its kind:
 * "\"12\" (a string)". */
static const char *shown_kind(const json_t *v, char *buf, size_t len)
{
    char a[100];
    if (json_is_array(v) || json_is_object(v) || json_is_null(v))
        return shown(v, buf, len);
    snprintf(buf, len, "%s (%s)", shown(v, a, sizeof a), kind_of(v));
    return buf;
}

/* A string of the input for a message: escaped as JSON (without its quotes), cut. */
const char *doc_timings_shown_text(const char *s, char *buf, size_t len)
{
    json_t *j = json_string(s);
    char *d = j ? json_dumps(j, JSON_ENCODE_ANY | JSON_ENSURE_ASCII) : NULL;
    size_t n = d ? strlen(d) - 2 : 0; /* d is "..." */
    snprintf(buf, len, "%.*s%s", (int)(n > 60 ? 60 : n), d ? d + 1 : "?", n > 60 ? "..." : "");
    free(d);
    json_decref(j);
    return buf;
}

/* Says what is wrong with document t, naming it by its index and its label (or name), and
 * returns -1. */
__attribute__((format(printf, 2, 3)))
static int bad(const struct timings *t, const char *fmt, ...)
{
    char msg[1024], who[300] = "", a[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (t->label)
        snprintf(who, sizeof who, " (label '%s')", doc_timings_shown_text(t->label, a, sizeof a));
    else if (t->name)
        snprintf(who, sizeof who, " (name '%s')", doc_timings_shown_text(t->name, a, sizeof a));
    log_error("record: document %d%s: %s", t->index, who, msg);
    return -1;
}

/* ------------------------------------------------------------------ checking a document */

/* Whether s (valid UTF-8: jansson checks it) holds a control character (C0, DEL, C1), which
 * no name, label or metadata may. */
static bool control_char(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f || (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
            return true;
    return false;
}

/* A text field: absent (or null, when optional) gives 0 with *out NULL; a string of 1..max
 * bytes without control characters gives 0; anything else -1 after saying so. */
static int text_field(const struct timings *t, const char *key, bool required, size_t max,
                      const char *what, const char **out)
{
    const json_t *v = json_object_get(t->json, key);
    char a[128];
    *out = NULL;
    if (!v || (json_is_null(v) && !required)) {
        if (required)
            return bad(t, "has no \"%s\": give %s", key, what);
        return 0;
    }
    if (!json_is_string(v))
        return bad(t, "%s is %s: give %s", key, shown_kind(v, a, sizeof a), what);
    const char *s = json_string_value(v);
    size_t n = json_string_length(v);
    if (n == 0 || n > max || strlen(s) != n || control_char(s))
        return bad(t, "%s is %s: give %s (1 to %zu bytes of UTF-8, no control characters)",
                   key, shown(v, a, sizeof a), what, max);
    *out = s;
    return 0;
}

/* An array of durations in ns (rounds_ns, warmup_rounds_ns, cpu_ns): each a finite number in
 * (0, MAX_ROUND_NS] ([0, ...] with zero_ok), at most MAX_ROUNDS of them. Returns 0 or -1. */
static int durations(const struct timings *t, const char *key, const json_t *a, size_t min_n,
                     bool zero_ok, const char *what)
{
    char v[128];
    if (!json_is_array(a))
        return bad(t, "%s is %s: give %s", key, shown_kind(a, v, sizeof v), what);
    size_t n = json_array_size(a);
    if (n < min_n || n > MAX_ROUNDS)
        return bad(t, "%s has %zu values: give %s, %zu to %d of them", key, n, what, min_n,
                   MAX_ROUNDS);
    for (size_t i = 0; i < n; i++) {
        const json_t *x = json_array_get(a, i);
        if (!json_is_number(x))
            return bad(t, "%s[%zu] is %s: give durations in nanoseconds %s", key, i,
                       shown_kind(x, v, sizeof v), zero_ok ? ">= 0" : "> 0");
        double d = json_number_value(x);
        if (!(zero_ok ? d >= 0 : d > 0))
            return bad(t, "%s[%zu] is %s: give durations in nanoseconds %s", key, i,
                       shown(x, v, sizeof v), zero_ok ? ">= 0" : "> 0");
        if (!(d <= MAX_ROUND_NS))
            return bad(t, "%s[%zu] is %s: give durations in nanoseconds, at most %.0e (about "
                       "11.6 days)", key, i, shown(x, v, sizeof v), MAX_ROUND_NS);
    }
    return 0;
}

/* A metadata value as text: a string as it is, a number in its shortest form. Returns an owned
 * string, or NULL after saying what is wrong. */
static char *meta_text(const struct timings *t, const char *key, const json_t *v)
{
    char a[128], k[128];
    char *s = NULL;
    if (json_is_string(v))
        s = xstrdup(json_string_value(v));
    else if (json_is_integer(v))
        s = xasprintf("%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else if (json_is_real(v))
        s = xstrdup(shortest(json_real_value(v), a, sizeof a)); /* 0.001, not 0.0010000000000000000208 */
    else {
        bad(t, "metadata.%s is %s: give a string or a number", doc_timings_shown_text(key, k, sizeof k),
            shown_kind(v, a, sizeof a));
        return NULL;
    }
    if (strlen(s) > MAX_TEXT_BYTES ||
        (json_is_string(v) && (strlen(s) != json_string_length(v) || control_char(s)))) {
        bad(t, "metadata.%s is %s: give at most %d bytes of UTF-8 without control characters",
            doc_timings_shown_text(key, k, sizeof k), shown(v, a, sizeof a), MAX_TEXT_BYTES);
        free(s);
        return NULL;
    }
    return s;
}

static int check_metadata(struct timings *t)
{
    const json_t *m = json_object_get(t->json, "metadata");
    char a[128];
    if (!m || json_is_null(m))
        return 0;
    if (!json_is_object(m))
        return bad(t, "metadata is %s: give an object of strings or numbers, e.g. "
                   "{\"python\": \"3.11.2\", \"batch\": 64}", shown_kind(m, a, sizeof a));
    size_t n = json_object_size(m);
    if (n > MAX_METADATA)
        return bad(t, "metadata has %zu keys: give at most %d", n, MAX_METADATA);
    t->meta_key = xcalloc(n + 1, sizeof *t->meta_key);
    t->meta_value = xcalloc(n + 1, sizeof *t->meta_value);
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)m, key, v) {
        if (!*key || strlen(key) > MAX_NAME_BYTES || control_char(key))
            return bad(t, "metadata key \"%s\": give keys of 1 to %d bytes of UTF-8 without "
                       "control characters", doc_timings_shown_text(key, a, sizeof a), MAX_NAME_BYTES);
        if (!strncmp(key, "mlbench.", 8)) /* the marker protocol's own (ranks, adoption) */
            return bad(t, "metadata key \"%s\": keys starting with \"mlbench.\" are mlbench's "
                       "own: choose another name", doc_timings_shown_text(key, a, sizeof a));
        char *text = meta_text(t, key, v);
        if (!text)
            return -1;
        t->meta_key[t->n_meta] = key;
        t->meta_value[t->n_meta++] = text;
    }
    return 0;
}

static int check_command(struct timings *t)
{
    const json_t *c = json_object_get(t->json, "command");
    char a[128];
    if (!c || json_is_null(c)) { /* what was timed stands for the command */
        t->argv = xcalloc(2, sizeof *t->argv);
        t->argv[0] = xstrdup(t->name);
        t->argc = 1;
        return 0;
    }
    size_t n = json_array_size(c);
    if (!json_is_array(c) || n == 0 || n > MAX_WORDS)
        return bad(t, "command is %s: give what ran as an array of 1 to %d strings, e.g. "
                   "[\"pytest\", \"tests/test_sort.py\"]",
                   !json_is_array(c) ? shown_kind(c, a, sizeof a)
                   : n ? "an array of too many words" : "an empty array", MAX_WORDS);
    t->argv = xcalloc(n + 1, sizeof *t->argv);
    for (size_t i = 0; i < n; i++) {
        const json_t *w = json_array_get(c, i);
        if (!json_is_string(w) || json_string_length(w) > MAX_TEXT_BYTES ||
            strlen(json_string_value(w)) != json_string_length(w))
            return bad(t, "command[%zu] is %s: give each word as a string of at most %d bytes",
                       i, shown(w, a, sizeof a), MAX_TEXT_BYTES);
        t->argv[t->argc++] = xstrdup(json_string_value(w));
    }
    return 0;
}

/* Checks document t->json (index t->index; the label override of -l, or NULL) into t. Returns
 * 0, or -1 after saying what is wrong. */
int doc_timings_check(struct timings *t, const char *label_override)
{
    const json_t *j = t->json;
    char a[128];
    const char *schema = NULL;
    if (!json_is_object(j))
        return bad(t, "is %s, not an object: each document is one JSON object "
                   "{\"schema\": \"%s\", \"name\": ..., \"number\": ..., \"rounds_ns\": [...]}",
                   kind_of(j), DOC_TIMINGS_SCHEMA);
    /* The label and the name first: the messages below name the document by them. */
    if (label_override)
        t->label = label_override;
    else if (text_field(t, "label", false, MAX_LABEL_BYTES, "a label for the result",
                        &t->label) < 0)
        return -1;
    if (text_field(t, "name", true, MAX_NAME_BYTES, "what was timed, e.g. a function's name",
                   &t->name) < 0 ||
        text_field(t, "schema", true, 100, "\"" DOC_TIMINGS_SCHEMA "\"", &schema) < 0)
        return -1;
    if (!schema || strcmp(schema, DOC_TIMINGS_SCHEMA) != 0) /* set when text_field said 0 */
        return bad(t, "schema is \"%s\": this mlbench reads \"%s\" (a newer format? update "
                   "mlbench)", doc_timings_shown_text(schema, a, sizeof a), DOC_TIMINGS_SCHEMA);
    if (text_field(t, "timer", false, MAX_TEXT_BYTES, "what measured, e.g. \"mytimer 1.0\"",
                   &t->timer) < 0 ||
        text_field(t, "synchronized", false, 10, "\"cuda\" or \"none\"", &t->synchronized) < 0)
        return -1;
    if (t->synchronized && strcmp(t->synchronized, "cuda") != 0 &&
        strcmp(t->synchronized, "none") != 0)
        return bad(t, "synchronized is \"%s\": give \"cuda\" or \"none\"",
                   doc_timings_shown_text(t->synchronized, a, sizeof a));

    const json_t *number = json_object_get(j, "number");
    double calls = json_is_number(number) ? json_number_value(number) : NAN;
    if (!number)
        return bad(t, "has no \"number\": give the calls per round, a whole number >= 1");
    if (!(calls >= 1 && calls <= MAX_NUMBER && calls == floor(calls)))
        return bad(t, "number is %s: give the calls per round, a whole number from 1 to %.0e",
                   shown(number, a, sizeof a), MAX_NUMBER);
    t->number = calls;

    t->rounds = json_object_get(j, "rounds_ns");
    if (!t->rounds)
        return bad(t, "has no \"rounds_ns\": give each measured round's total duration in "
                   "nanoseconds, e.g. \"rounds_ns\": [123456, 120001]");
    if (durations(t, "rounds_ns", t->rounds, 1, false, "each round's total duration in ns") < 0)
        return -1;
    t->n_rounds = json_array_size(t->rounds);
    for (size_t i = 0; i < t->n_rounds; i++) {
        double ns = json_number_value(json_array_get(t->rounds, i));
        if (ns / t->number < 1) /* the result's unit: it would read 0 */
            return bad(t, "rounds_ns[%zu] is %s for %.0f calls: %.3g ns per call, below the 1 "
                       "ns a result resolves: is it in nanoseconds?", i,
                       shown(json_array_get(t->rounds, i), a, sizeof a), t->number,
                       ns / t->number);
    }
    t->warmup = json_object_get(j, "warmup_rounds_ns");
    if (json_is_null(t->warmup))
        t->warmup = NULL;
    if (t->warmup && durations(t, "warmup_rounds_ns", t->warmup, 0, false,
                               "each warm-up round's total duration in ns") < 0)
        return -1;
    t->n_warmup = json_array_size(t->warmup);
    for (size_t i = 0; i < t->n_warmup; i++)
        if (json_number_value(json_array_get(t->warmup, i)) / t->number < 1)
            return bad(t, "warmup_rounds_ns[%zu] is %s for %.0f calls: below 1 ns per call: is "
                       "it in nanoseconds?", i, shown(json_array_get(t->warmup, i), a, sizeof a),
                       t->number);
    t->cpu = json_object_get(j, "cpu_ns");
    if (json_is_null(t->cpu))
        t->cpu = NULL;
    if (t->cpu) {
        if (durations(t, "cpu_ns", t->cpu, 0, true, "each measured round's CPU time in ns") < 0)
            return -1;
        if (json_array_size(t->cpu) != t->n_rounds)
            return bad(t, "cpu_ns has %zu values for %zu measured round(s): give one per "
                       "round of rounds_ns, or leave it out", json_array_size(t->cpu),
                       t->n_rounds);
    }

    const json_t *started = json_object_get(j, "started_unix_ns");
    t->started_unix_ns = -1;
    if (started && !json_is_null(started)) {
        if (!json_is_integer(started) || json_integer_value(started) < 0)
            return bad(t, "started_unix_ns is %s: give when the first round started, in "
                       "nanoseconds since 1970 (a whole number >= 0), or leave it out",
                       shown(started, a, sizeof a));
        t->started_unix_ns = json_integer_value(started);
    }
    if (check_command(t) < 0 || check_metadata(t) < 0)
        return -1;
    return 0;
}

/* ------------------------------------------------------------------ reading the input */

/* The whole input (at most MAX_INPUT_BYTES) into *buf (owned, NUL-terminated). Returns its
 * length, or -1 after saying why. */
long doc_timings_read_input(const char *file, const char *shown_name, char **buf)
{
    FILE *f = file ? fopen(file, "rb") : stdin;
    if (!f) {
        log_error("record: cannot read %s: %s", shown_name, strerror(errno));
        return -1;
    }
    size_t cap = 65536, n = 0;
    char *b = xmalloc(cap);
    for (;;) {
        if (n + 1 >= cap) {
            cap *= 2;
            b = xreallocarray(b, cap, 1);
        }
        size_t got = fread(b + n, 1, cap - 1 - n, f);
        n += got;
        if (n > MAX_INPUT_BYTES) {
            log_error("record: %s is larger than %u MiB: give fewer documents at a time",
                      shown_name, MAX_INPUT_BYTES >> 20);
            free(b);
            if (file)
                fclose(f);
            return -1;
        }
        if (got == 0)
            break;
    }
    int failed = ferror(f) ? errno ? errno : EIO : 0;
    if (file)
        fclose(f);
    if (failed) {
        log_error("record: cannot read %s: %s", shown_name, strerror(failed));
        free(b);
        return -1;
    }
    b[n] = '\0';
    *buf = b;
    return (long)n;
}

/* Advances the line and the column (in characters, as jansson counts them) over s[0..n). */
static void advance(const char *s, size_t n, int *line, int *column)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n')
            (*line)++, *column = 1;
        else if (((unsigned char)s[i] & 0xc0) != 0x80)
            (*column)++;
    }
}

/* Parses the documents of buf[0..len) one after another into *out (*n of them). Returns 0,
 * or -1 after naming the document, the line and the column of a JSON error. */
int doc_timings_parse(const char *buf, size_t len, const char *shown_name,
                           struct timings **out, size_t *n)
{
    size_t off = 0, cap = 0;
    int line = 1, column = 1;
    *out = NULL;
    *n = 0;
    for (;;) {
        size_t ws = strspn(buf + off, " \t\r\n");
        advance(buf + off, ws, &line, &column);
        off += ws;
        if (off >= len)
            break;
        json_error_t e;
        json_t *j = json_loadb(buf + off, len - off,
                               JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, &e);
        if (!j) {
            if (e.line >= 1)
                log_error("record: %s: line %d, column %d: document %zu is not valid JSON: %s",
                          shown_name, line + e.line - 1,
                          e.line == 1 ? column + (e.column > 1 ? e.column : 1) - 1
                                      : (e.column > 1 ? e.column : 1),
                          *n + 1, e.text);
            else
                log_error("record: %s: document %zu is not valid JSON: %s", shown_name, *n + 1,
                          e.text);
            return -1;
        }
        *out = xgrow(*out, &cap, *n + 1, sizeof **out);
        (*out)[*n] = (struct timings){.index = (int)*n + 1, .json = j};
        (*n)++;
        size_t used = e.position > 0 ? (size_t)e.position : len - off;
        advance(buf + off, used, &line, &column);
        off += used;
    }
    return 0;
}

