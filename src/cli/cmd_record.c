/* cmd_record: `mlbench record [FILE]`: stores timings measured elsewhere (an in-process timer,
 * python/mlbench_marker's pytest plugin) as results, the way `mlbench run` stores its own. Reads
 * documents of schema "mlbench.timings/1" (docs/cli.md, "mlbench record"; read and checked by
 * doc/timings.c), checks every one before storing any, makes each a result (result/record.c)
 * and hands it to the store writer that runs use (session/session.c), then says what it stored
 * (export/record_text.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "session/session.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "doc/timings.h"
#include "export/record_text.h"
#include "result/record.h"
#include "result/result.h"
#include "store/store.h"
#include "util/log.h"

/* The prose of --help, above and below the options (the rows of parse). */
static const char usage_text[] =
    "Usage: mlbench record [options] [FILE]\n"
    "\n"
    "Stores timings measured elsewhere as results, so that show, compare, history and report\n"
    "work on them like on any result: an in-process timer (python/mlbench_marker's Timer, its\n"
    "pytest plugin) measures a function in rounds of NUMBER calls and writes one JSON document\n"
    "per function (schema mlbench.timings/1), read from FILE or standard input (FILE absent or\n"
    "-). Several documents may follow one another (JSON Lines). Each round is one repetition,\n"
    "timed per call; every document is checked before any is stored: one bad document and\n"
    "nothing is stored. The input format and what a stored result holds: docs/cli.md.\n";
static const char tail_text[] =
    "Exit status: 0 stored; 2 bad options or a bad document (its index, label, field and value\n"
    "are named; nothing was stored); 3 a result could not be written to the store or to -o.\n";

struct record_options {
    const char *label, *store, *output, *file;
    bool json, quiet;
};

/* ------------------------------------------------------------------ the command */

/* Returns true when the command goes on; false with the exit status in *status. */
static bool parse(int argc, char **argv, struct record_options *o, int *status)
{
    memset(o, 0, sizeof *o);
    o->store = store_default_dir();
    const struct cli_option table[] = {
        CLI_OPT_STRING("label", 'l', &o->label, CLI_NONEMPTY, "is empty: give a name",
                       .metavar = "NAME",
                       .help = "label of the result (instead of the document's; only with one "
                               "document)"),
        CLI_OPT_STORE(&o->store),
        CLI_OPT_STRING("output", 'o', &o->output, CLI_NONEMPTY, "is empty: give a file",
                       .metavar = "FILE",
                       .help = "also write the result JSON to FILE (only with one document)"),
        CLI_OPT_FLAG("json", 0, &o->json,
                     .help = "print a JSON array with one object per stored result: id, label, "
                             "name, path, median_ns, ci_low_ns, ci_high_ns, n"),
        CLI_OPT_FLAG("quiet", 'q', &o->quiet, .help = "print nothing but errors"),
        CLI_OPT_END,
    };
    const struct cli_parser parser = {.verb = "record", .options = table, .usage = usage_text,
                                      .tail = tail_text};
    struct cli_args args;
    if (!cli_parse_args(&parser, argc, argv, &args, status))
        return false;
    if (args.n > 1) {
        log_error("record: give one FILE (or none, or -, for standard input), not %d", args.n);
        *status = 2;
        return false;
    }
    if (args.n == 1 && strcmp(args.v[0], "-") != 0)
        o->file = args.v[0];
    return true;
}

/* Stores every document of docs[0..n): builds, writes and reports each. Returns 0 or 3. */
static int store_all(struct timings *docs, size_t n, const struct record_options *o,
                     const struct session_store *where)
{
    int status = 0;
    json_t *env = NULL, *stored = json_array();
    struct machine_facts facts = {.n_cpu_features = 0};
    for (size_t i = 0; i < n; i++) {
        struct run_config cfg = {0}; /* record_result fills what a result records */
        struct result r;
        record_result(&docs[i], &cfg, &r, &env, &facts);
        struct session_output out = {.doc = result_to_json(&r)};
        if (out.doc)
            record_mark_unmeasured(out.doc, &docs[i]);
        if (session_store_write(where, r.id, o->output, &out) != 0) {
            status = 3;
        } else if (o->json) {
            /* the file, absolute; none in a shared store */
            char *abs = !where->shared && out.path ? realpath(out.path, NULL) : NULL;
            json_array_append_new(stored, export_record_json(out.doc, &docs[i], abs));
            free(abs);
        } else if (!o->quiet) {
            export_record_print(stdout, out.doc, &docs[i]);
        }
        session_output_free(&out);
        result_free(&r);
    }
    if (o->json) {
        json_dumpf(stored, stdout, JSON_INDENT(2) | JSON_ENSURE_ASCII);
        putc('\n', stdout);
    }
    json_decref(stored);
    json_decref(env);
    machine_facts_free(&facts);
    return status;
}

int cmd_record(int argc, char **argv)
{
    struct record_options o;
    int status;
    if (!parse(argc, argv, &o, &status))
        return status;
    log_set_quiet(o.quiet || o.json);

    char name[160], *buf = NULL;
    if (o.file)
        snprintf(name, sizeof name, "'%s'", doc_timings_shown_text(o.file, (char[128]){0}, 128));
    else
        snprintf(name, sizeof name, "standard input");
    long len = doc_timings_read_input(o.file, name, &buf);
    if (len < 0)
        return 2;
    struct timings *docs;
    size_t n;
    status = doc_timings_parse(buf, (size_t)len, name, &docs, &n) < 0 ? 2 : 0;
    free(buf);
    if (status == 0 && n == 0) {
        log_error("record: %s holds no document: give one JSON object per timed function, "
                  "{\"schema\": \"%s\", \"name\": ..., \"number\": ..., \"rounds_ns\": [...]} "
                  "(docs/cli.md)", name, DOC_TIMINGS_SCHEMA);
        status = 2;
    }
    if (status == 0 && n > 1 && (o.label || o.output)) {
        log_error("record: %s applies to one result, and %s holds %zu documents: leave it out "
                  "(each document may have its own \"label\")", o.label ? "-l" : "-o", name, n);
        status = 2;
    }
    /* Every document is checked before any is stored: all or nothing. */
    for (size_t i = 0; status == 0 && i < n; i++)
        if (doc_timings_check(&docs[i], o.label) < 0)
            status = 2;
    struct session_store where = {0};
    if (status == 0)
        status = session_store_open(&where, o.store);
    if (status == 0)
        status = store_all(docs, n, &o, &where);
    session_store_free(&where);
    for (size_t i = 0; i < n; i++)
        doc_timings_free(&docs[i]);
    free(docs);
    fflush(stdout);
    return status;
}
