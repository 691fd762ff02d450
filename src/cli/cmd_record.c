/* cmd_record: `mlbench record [FILE]`: stores timings measured elsewhere (an in-process timer,
 * python/mlbench_marker's pytest plugin) as results, the way `mlbench run` stores its own. Reads
 * documents of schema "mlbench.timings/1" (docs/cli.md, "mlbench record"), checks every one
 * before storing any, makes each round a repetition timed per call, and hands the result to the
 * summary, the environment capture and the store writer that runs use (result/summary.c,
 * bench/bench.c). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bench/bench.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "measure/stages.h"
#include "result/resources.h"
#include "result/result.h"
#include "store/store.h"
#include "util/log.h"
#include "util/term.h"
#include "util/units.h"
#include "util/xalloc.h"

#define TIMINGS_SCHEMA "mlbench.timings/1"
#define MAX_INPUT_BYTES (256u << 20)  /* all documents together */
#define MAX_ROUNDS 1000000            /* rounds_ns, and warmup_rounds_ns, per document */
#define MAX_ROUND_NS 1e15             /* a round, or its CPU time: about 11.6 days */
#define MAX_NUMBER 1e15               /* calls per round (a call takes 1 ns or more) */
#define MAX_NAME_BYTES 200
#define MAX_LABEL_BYTES 4096
#define MAX_TEXT_BYTES 4096           /* a word of the command, the timer, a metadata value */
#define MAX_WORDS 1000                /* of the command */
#define MAX_METADATA STAGES_MAX_NAMES /* keys */
#define FEW_ROUNDS 5                  /* fewer: the few_rounds warning */

static const char usage_text[] =
    "Usage: mlbench record [options] [FILE]\n"
    "\n"
    "Stores timings measured elsewhere as results, so that show, compare, history and report\n"
    "work on them like on any result: an in-process timer (python/mlbench_marker's Timer, its\n"
    "pytest plugin) measures a function in rounds of NUMBER calls and writes one JSON document\n"
    "per function (schema mlbench.timings/1), read from FILE or standard input (FILE absent or\n"
    "-). Several documents may follow one another (JSON Lines). Each round is one repetition,\n"
    "timed per call; every document is checked before any is stored: one bad document and\n"
    "nothing is stored. The input format and what a stored result holds: docs/cli.md.\n"
    "\n"
    "  -l, --label NAME     label of the result (instead of the document's; only with one\n"
    "                       document)\n"
    "      --store DIR|URI  result store: a directory, or a shared PostgreSQL store\n"
    "                       (postgresql://host/db); default .mlbench, or $MLBENCH_STORE\n"
    "  -o, --output FILE    also write the result JSON to FILE (only with one document)\n"
    "      --json           print a JSON array with one object per stored result: id, label,\n"
    "                       name, path, median_ns, ci_low_ns, ci_high_ns, n\n"
    "  -q, --quiet          print nothing but errors\n"
    "  -h, --help           this help\n"
    "\n"
    "Exit status: 0 stored; 2 bad options or a bad document (its index, label, field and value\n"
    "are named; nothing was stored); 3 a result could not be written to the store or to -o.\n";

struct record_options {
    const char *label, *store, *output, *file;
    bool json, quiet;
};

/* One document, checked. Strings and arrays point into json. */
struct timings {
    int index;                /* 1-based, in input order */
    json_t *json;             /* owned */
    const char *name, *label, *timer, *synchronized; /* label, timer, synchronized: or NULL */
    char **argv;              /* owned array of owned copies, NULL-terminated */
    int argc;
    double number;            /* calls per round, a whole number */
    const json_t *rounds, *warmup, *cpu; /* arrays; warmup and cpu NULL when absent */
    size_t n_rounds, n_warmup;
    const char **meta_key;    /* metadata, in document order; values as text (owned) */
    char **meta_value;
    size_t n_meta;
    int64_t started_unix_ns;  /* -1: not given (now) */
};

static void timings_free(struct timings *t)
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
static const char *shown_text(const char *s, char *buf, size_t len)
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
        snprintf(who, sizeof who, " (label '%s')", shown_text(t->label, a, sizeof a));
    else if (t->name)
        snprintf(who, sizeof who, " (name '%s')", shown_text(t->name, a, sizeof a));
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
        bad(t, "metadata.%s is %s: give a string or a number", shown_text(key, k, sizeof k),
            shown_kind(v, a, sizeof a));
        return NULL;
    }
    if (strlen(s) > MAX_TEXT_BYTES ||
        (json_is_string(v) && (strlen(s) != json_string_length(v) || control_char(s)))) {
        bad(t, "metadata.%s is %s: give at most %d bytes of UTF-8 without control characters",
            shown_text(key, k, sizeof k), shown(v, a, sizeof a), MAX_TEXT_BYTES);
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
                       "control characters", shown_text(key, a, sizeof a), MAX_NAME_BYTES);
        if (!strncmp(key, "mlbench.", 8)) /* the marker protocol's own (ranks, adoption) */
            return bad(t, "metadata key \"%s\": keys starting with \"mlbench.\" are mlbench's "
                       "own: choose another name", shown_text(key, a, sizeof a));
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
static int check_timings(struct timings *t, const char *label_override)
{
    const json_t *j = t->json;
    char a[128];
    const char *schema = NULL;
    if (!json_is_object(j))
        return bad(t, "is %s, not an object: each document is one JSON object "
                   "{\"schema\": \"%s\", \"name\": ..., \"number\": ..., \"rounds_ns\": [...]}",
                   kind_of(j), TIMINGS_SCHEMA);
    /* The label and the name first: the messages below name the document by them. */
    if (label_override)
        t->label = label_override;
    else if (text_field(t, "label", false, MAX_LABEL_BYTES, "a label for the result",
                        &t->label) < 0)
        return -1;
    if (text_field(t, "name", true, MAX_NAME_BYTES, "what was timed, e.g. a function's name",
                   &t->name) < 0 ||
        text_field(t, "schema", true, 100, "\"" TIMINGS_SCHEMA "\"", &schema) < 0)
        return -1;
    if (!schema || strcmp(schema, TIMINGS_SCHEMA) != 0) /* set when text_field said 0 */
        return bad(t, "schema is \"%s\": this mlbench reads \"%s\" (a newer format? update "
                   "mlbench)", shown_text(schema, a, sizeof a), TIMINGS_SCHEMA);
    if (text_field(t, "timer", false, MAX_TEXT_BYTES, "what measured, e.g. \"mytimer 1.0\"",
                   &t->timer) < 0 ||
        text_field(t, "synchronized", false, 10, "\"cuda\" or \"none\"", &t->synchronized) < 0)
        return -1;
    if (t->synchronized && strcmp(t->synchronized, "cuda") != 0 &&
        strcmp(t->synchronized, "none") != 0)
        return bad(t, "synchronized is \"%s\": give \"cuda\" or \"none\"",
                   shown_text(t->synchronized, a, sizeof a));

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
static long read_input(const char *file, const char *shown_name, char **buf)
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
static int parse_documents(const char *buf, size_t len, const char *shown_name,
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
        if (*n == cap) {
            cap = cap ? 2 * cap : 8;
            *out = xreallocarray(*out, cap, sizeof **out);
        }
        (*out)[*n] = (struct timings){.index = (int)*n + 1, .json = j};
        (*n)++;
        size_t used = e.position > 0 ? (size_t)e.position : len - off;
        advance(buf + off, used, &line, &column);
        off += used;
    }
    return 0;
}

/* ------------------------------------------------------------------ the result */

/* A round as a repetition: its time per call, status ok; CPU time per call when the timer gave
 * it, else 0 that mark_unmeasured makes null. Metadata goes to the first measured round, as
 * marker metadata events would. */
static void add_round(struct bench_result *r, const struct timings *t, bool warmup, size_t i,
                      int64_t start_unix_ns, bool with_meta)
{
    const json_t *a = warmup ? t->warmup : t->rounds;
    double ns = json_number_value(json_array_get(a, i));
    struct repetition *rep = result_add_rep(r, warmup);
    struct run_outcome *o = &rep->outcome;
    o->status = RUN_OK;
    o->start_unix_ns = start_unix_ns;
    o->wall_ns = llround(ns / t->number);
    if (!warmup && t->cpu)
        o->user_ns = llround(json_number_value(json_array_get(t->cpu, i)) / t->number);
    for (size_t k = 0; with_meta && k < t->n_meta; k++) {
        struct marker_token tok = {.kind = MARKER_META, .name = t->meta_key[k],
                                   .name_len = strlen(t->meta_key[k]),
                                   .value = t->meta_value[k],
                                   .value_len = strlen(t->meta_value[k])};
        event_log_add(&rep->log, &tok);
    }
    stages_aggregate(&rep->log, 0, o->wall_ns, &rep->stages);
    free(rep->log.ev); /* as bench.c: the aggregate and the interned names are kept */
    rep->log.ev = NULL;
    rep->log.n = rep->log.cap = 0;
}

/* Replaces the warnings about too few runs with one that speaks of rounds. */
static void few_rounds(struct summary *s, const struct timings *t)
{
    if (t->n_rounds >= FEW_ROUNDS)
        return;
    size_t k = 0;
    for (size_t i = 0; i < s->n_warnings; i++) {
        struct warning *w = &s->warnings[i];
        if (!strcmp(w->code, "few_runs") || !strcmp(w->code, "low_ci_coverage")) {
            free(w->code);
            free(w->message);
        } else {
            s->warnings[k++] = *w;
        }
    }
    s->n_warnings = k;
    if (t->n_rounds < 3)
        summary_warn(s, "few_rounds", "few rounds: the interval is wide: with %zu measured "
                     "round(s) no spread can be judged and no confidence interval given; "
                     "measure %d rounds or more (6 give a 95 %% interval of the median)",
                     t->n_rounds, FEW_ROUNDS);
    else
        summary_warn(s, "few_rounds", "few rounds: the interval is wide: with %zu rounds the "
                     "interval of the median (min..max) covers only %.1f %%; measure %d rounds "
                     "or more (6 give a 95 %% interval)", t->n_rounds, 100 * s->wall.ci_level,
                     FEW_ROUNDS);
}

/* What a timing in the process did not measure is null or absent in its document, never 0
 * (docs/result-schema.md): the result model has no "unknown" for the figures rusage gives a
 * run, so the repetitions carry 0 there and their JSON is corrected here. Adds the round as
 * timed (runs[].round_ns, round_cpu_ns) and config.timings. */
static void mark_unmeasured(json_t *doc, const struct timings *t)
{
    static const char *const never[] = {
        "sys_ns", "max_rss_bytes", "minor_faults", "major_faults", "voluntary_context_switches",
        "involuntary_context_switches",
    };
    json_t *runs = json_object_get(doc, "runs"), *run;
    size_t i;
    json_array_foreach(runs, i, run) {
        bool warmup = i < t->n_warmup;
        size_t k = warmup ? i : i - t->n_warmup;
        for (size_t n = 0; n < sizeof never / sizeof never[0]; n++)
            json_object_set_new(run, never[n], json_null());
        json_object_set(run, "round_ns", json_array_get(warmup ? t->warmup : t->rounds, k));
        if (!warmup && t->cpu)
            json_object_set(run, "round_cpu_ns", json_array_get(t->cpu, k));
        else
            json_object_set_new(run, "user_ns", json_null());
    }
    json_t *s = json_object_get(doc, "summary");
    json_object_del(s, "sys_ns");
    json_object_del(s, "max_rss_bytes");
    if (!t->cpu) {
        json_object_del(s, "user_ns");
        json_object_set_new(s, "cpu_cores", json_null());
    }
    json_t *cfg = json_object_get(doc, "config"), *sampling = json_object_get(doc, "sampling");
    json_object_set_new(cfg, "interval_ns", json_null());
    json_object_set_new(sampling, "interval_ns", json_null());
    json_object_set_new(sampling, "first_interval_ns", json_null());
    json_object_set_new(cfg, "timings", json_pack(
        "{s:s, s:s, s:I, s:I, s:I, s:o, s:o}", "schema", TIMINGS_SCHEMA, "name", t->name,
        "number", (json_int_t)t->number, "rounds", (json_int_t)t->n_rounds,
        "warmup_rounds", (json_int_t)t->n_warmup,
        "synchronized", t->synchronized ? json_string(t->synchronized) : json_null(),
        "timer", t->timer ? json_string(t->timer) : json_null()));
}

/* The result of document t as a stored run would have it, into r (result_free it), its
 * configuration cfg (which r borrows); env: the environment captured for the first document,
 * shared by the others (NULL: capture it now). */
static void build_result(const struct timings *t, const struct record_options *o,
                         struct run_config *cfg, struct bench_result *r, json_t **env)
{
    *cfg = (struct run_config){
        .argv = t->argv, .argc = t->argc, .runs = (int)t->n_rounds, .warmup = (int)t->n_warmup,
        .grace_s = NAN, /* nothing was stopped: null */
        .label = t->label, .output = o->output, .store = o->store, .quiet = o->quiet,
        .json = o->json,
    };
    result_init(r, cfg);
    if (t->started_unix_ns >= 0)
        r->created_unix_ns = t->started_unix_ns;
    r->sampling.skipped = xcalloc(2, sizeof *r->sampling.skipped);
    r->sampling.skipped[0] = xstrdup("resources: not sampled: timed in its own process (mlbench "
                                     "record); CPU time only when the timer gave cpu_ns");
    r->sampling.n_skipped = 1;
    /* Each round starts where the ones before it ended (the gaps between them are unknown). */
    double start = (double)r->created_unix_ns;
    for (size_t i = 0; i < t->n_warmup + t->n_rounds; i++) {
        bool warmup = i < t->n_warmup;
        size_t k = warmup ? i : i - t->n_warmup;
        int64_t at = start < 9.2e18 ? (int64_t)start : INT64_C(9200000000000000000);
        add_round(r, t, warmup, k, at, !warmup && k == 0);
        start += json_number_value(json_array_get(warmup ? t->warmup : t->rounds, k));
    }
    summary_compute(r);
    if (*env) {
        r->environment = json_incref(*env);
    } else {
        result_capture_environment(r, NULL);
        *env = json_incref(r->environment);
    }
    result_price(r);
    resources_analyze(r); /* no samples: no verdicts, only what needs none (the governor) */
    few_rounds(&r->summary, t);
}

/* ------------------------------------------------------------------ output */

/* "1 round", "20 rounds". */
static const char *plural(double n, const char *one, const char *many, char *buf, size_t len)
{
    snprintf(buf, len, "%.0f %s", n, n == 1 ? one : many);
    return buf;
}

/* The line for people: "stored ID  label 'x'  sort: 1.234 us per call (median of ...)", with
 * the warnings under it; through term_clean (names come from the input). */
static void print_stored(const struct bench_result *r, const struct timings *t)
{
    const struct stats_summary *w = &r->summary.wall;
    char med[32], lo[32], hi[32], rounds[48], calls[48], line[2048];
    int n = snprintf(line, sizeof line, "stored %s  ", r->id);
    if (t->label)
        n += snprintf(line + n, sizeof line - (size_t)n, "label '%s'  ", t->label);
    n += snprintf(line + n, sizeof line - (size_t)n, "%s: %s per call (median of %s of %s", t->name,
                  units_duration(w->median, med, sizeof med),
                  plural((double)t->n_rounds, "round", "rounds", rounds, sizeof rounds),
                  plural(t->number, "call", "calls", calls, sizeof calls));
    if (isfinite(w->ci_low) && isfinite(w->ci_high) && isfinite(w->ci_level) && w->n >= 3)
        /* The interval is the 95 % one from 6 rounds on (stats.h); below, it says what it
         * covers. */
        n += snprintf(line + n, sizeof line - (size_t)n, ", %.0f%% CI %s .. %s",
                      w->ci_level >= 0.95 ? 95 : floor(100 * w->ci_level),
                      units_duration(w->ci_low, lo, sizeof lo),
                      units_duration(w->ci_high, hi, sizeof hi));
    snprintf(line + n, sizeof line - (size_t)n, ")\n");
    term_clean(stdout, line, strlen(line));
    for (size_t i = 0; i < r->summary.n_warnings; i++) {
        fputs("  ! ", stdout);
        term_clean(stdout, r->summary.warnings[i].message,
                   strlen(r->summary.warnings[i].message));
        putc('\n', stdout);
    }
}

static json_t *jnum_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* --json: one object per stored result. */
static json_t *stored_json(const struct bench_result *r, const struct timings *t,
                           const struct bench_store *where, const char *path)
{
    char *abs = !where->shared && path ? realpath(path, NULL) : NULL;
    const struct stats_summary *w = &r->summary.wall;
    json_t *j = json_pack("{s:s, s:o, s:s, s:o, s:o, s:o, s:o, s:I}", "id", r->id,
                          "label", t->label ? json_string(t->label) : json_null(),
                          "name", t->name,
                          "path", abs ? json_string(abs) : json_null(),
                          "median_ns", jnum_or_null(w->median),
                          "ci_low_ns", jnum_or_null(w->ci_low),
                          "ci_high_ns", jnum_or_null(w->ci_high), "n", (json_int_t)w->n);
    free(abs);
    return j;
}

/* ------------------------------------------------------------------ the command */

static int parse(int argc, char **argv, struct record_options *o)
{
    memset(o, 0, sizeof *o);
    o->store = store_default_dir();
    const struct cli_option table[] = {
        CLI_OPT_STRING("label", 'l', &o->label, CLI_NONEMPTY, "is empty: give a name"),
        CLI_OPT_STORE(&o->store),
        CLI_OPT_STRING("output", 'o', &o->output, CLI_NONEMPTY, "is empty: give a file"),
        CLI_OPT_FLAG("json", 0, &o->json),
        CLI_OPT_FLAG("quiet", 'q', &o->quiet),
        CLI_OPT_END,
    };
    const struct cli_parser parser = {"record", table, 0, usage_text};
    struct cli_args args;
    char err[1024];
    int rc = cli_options_parse(&parser, argc, argv, &args, err, sizeof err);
    if (rc == CLI_ERROR)
        log_error("record: %s", err);
    if (rc != CLI_OK)
        return rc;
    if (args.n > 1) {
        log_error("record: give one FILE (or none, or -, for standard input), not %d", args.n);
        return CLI_ERROR;
    }
    if (args.n == 1 && strcmp(args.v[0], "-") != 0)
        o->file = args.v[0];
    return CLI_OK;
}

/* Stores every document of docs[0..n): builds, writes and reports each. Returns 0 or 3. */
static int store_all(struct timings *docs, size_t n, const struct record_options *o,
                     const struct bench_store *where)
{
    int status = 0;
    json_t *env = NULL, *stored = json_array();
    for (size_t i = 0; i < n; i++) {
        struct run_config cfg;
        struct bench_result r;
        build_result(&docs[i], o, &cfg, &r, &env);
        struct bench_output out = {.doc = result_to_json(&r)};
        if (out.doc)
            mark_unmeasured(out.doc, &docs[i]);
        if (bench_store_write(where, r.id, o->output, &out) != 0) {
            status = 3;
        } else if (o->json) {
            json_array_append_new(stored, stored_json(&r, &docs[i], where, out.path));
        } else if (!o->quiet) {
            print_stored(&r, &docs[i]);
            fflush(stdout);
        }
        bench_output_free(&out);
        result_free(&r);
    }
    if (o->json) {
        json_dumpf(stored, stdout, JSON_INDENT(2) | JSON_ENSURE_ASCII);
        putc('\n', stdout);
    }
    json_decref(stored);
    json_decref(env);
    return status;
}

int cmd_record(int argc, char **argv)
{
    struct record_options o;
    int rc = parse(argc, argv, &o);
    if (rc != CLI_OK)
        return rc == CLI_HELP ? 0 : 2;
    log_set_quiet(o.quiet || o.json);

    char name[160], *buf = NULL;
    if (o.file)
        snprintf(name, sizeof name, "'%s'", shown_text(o.file, (char[128]){0}, 128));
    else
        snprintf(name, sizeof name, "standard input");
    long len = read_input(o.file, name, &buf);
    if (len < 0)
        return 2;
    struct timings *docs;
    size_t n;
    int status = parse_documents(buf, (size_t)len, name, &docs, &n) < 0 ? 2 : 0;
    free(buf);
    if (status == 0 && n == 0) {
        log_error("record: %s holds no document: give one JSON object per timed function, "
                  "{\"schema\": \"%s\", \"name\": ..., \"number\": ..., \"rounds_ns\": [...]} "
                  "(docs/cli.md)", name, TIMINGS_SCHEMA);
        status = 2;
    }
    if (status == 0 && n > 1 && (o.label || o.output)) {
        log_error("record: %s applies to one result, and %s holds %zu documents: leave it out "
                  "(each document may have its own \"label\")", o.label ? "-l" : "-o", name, n);
        status = 2;
    }
    /* Every document is checked before any is stored: all or nothing. */
    for (size_t i = 0; status == 0 && i < n; i++)
        if (check_timings(&docs[i], o.label) < 0)
            status = 2;
    struct bench_store where = {0};
    if (status == 0)
        status = bench_store_open(&where, o.store);
    if (status == 0)
        status = store_all(docs, n, &o, &where);
    bench_store_free(&where);
    for (size_t i = 0; i < n; i++)
        timings_free(&docs[i]);
    free(docs);
    fflush(stdout);
    return status;
}
