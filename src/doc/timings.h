/* doc/timings: the reader of timings documents (schema "mlbench.timings/1", docs/cli.md,
 * "mlbench record"), the input of `mlbench record`: read from a file or standard input, one
 * after another, each checked field by field, with messages (util/log) that name the document,
 * the field and the value. */
#ifndef MLBENCH_DOC_TIMINGS_H
#define MLBENCH_DOC_TIMINGS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define DOC_TIMINGS_SCHEMA "mlbench.timings/1"

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

/* Frees what t owns and zeroes it. */
void doc_timings_free(struct timings *t);

/* The whole input of file (NULL: standard input), named shown_name in messages, into *buf
 * (owned, NUL-terminated). Returns its length, or -1 after saying what is wrong. */
long doc_timings_read_input(const char *file, const char *shown_name, char **buf);

/* Parses the documents of buf[0..len) one after another into *out (*n of them, owned:
 * doc_timings_free each, then free(*out)); each holds its JSON, not yet checked. Returns 0, or -1
 * after saying where the input is not JSON (line and column). */
int doc_timings_parse(const char *buf, size_t len, const char *shown_name,
                           struct timings **out, size_t *n);

/* Checks document t->json into t's fields; label_override is -l's label, or NULL. Returns 0,
 * or -1 after saying what is wrong (the document, the field, the value). */
int doc_timings_check(struct timings *t, const char *label_override);

/* s (a string of the input) as a message may show it: escaped as JSON, cut to len; returns
 * buf. */
const char *doc_timings_shown_text(const char *s, char *buf, size_t len);

#endif
