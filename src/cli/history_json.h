/* history_json: the JSON document of `mlbench history` (--json, --format json; schema
 * mlbench.history/1, docs/store.md), and what cmd_history.c shares with its writer: the
 * command's options and the step changes it found. Private to cmd_history.c and
 * history_json.c. */
#ifndef MLBENCH_CLI_HISTORY_JSON_H
#define MLBENCH_CLI_HISTORY_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "analysis/detect.h"
#include "store/load_figures.h"
#include "store/store.h"

struct history_format;

/* The options of `mlbench history`, as cmd_history.c parsed them. */
struct history_options {
    const char *label, *host, *stage, *store;
    const char *shown; /* the store as messages name it */
    bool hosts;        /* a host column: results of several hosts, or a shared store */
    size_t last;
    bool json, detect;
    struct detect_options det;
    const struct history_format *dashboard; /* --format md, csv or html; NULL for text, json */
    const char *output;     /* -o: NULL or "-" for stdout */
    const char *commit_url; /* --commit-url template, with "{}" */
};

/* A step change found in one series and stage; changes: all of them, found by cmd_history.c
 * (owned there). */
struct change {
    size_t series;          /* group */
    const char *stage;
    const struct store_entry *entry;  /* first result after the change */
    const struct store_entry *before; /* the last result before it (detect never reports a
                                       * change at the first point) */
    struct detect_change d;
};

struct changes {
    struct change *v;
    size_t n, cap;
};

/* Writes the JSON document of e[0..n) (their series in group[], their load figures in L[],
 * the changes ch when o->detect) to out, followed by a newline. Write errors are left to the
 * caller (ferror). Borrows everything; not thread-safe. */
void history_json_print(FILE *out, const struct history_options *o, const struct store_entry *e,
                        size_t n, const size_t *group, const struct changes *ch,
                        const struct load_figures *L);

#endif
