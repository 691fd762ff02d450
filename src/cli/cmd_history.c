/* cmd_history: `mlbench history`: parses the options, reads the store's results
 * (store/history.h), groups them into series and finds their step changes
 * (analysis/history.h), and prints them (export/history.h): the table with trend lines and
 * changes, the JSON document, or a dashboard (--format md|csv|html). -o writes any of them
 * atomically. docs/store.md. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "analysis/detect.h"
#include "analysis/history.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "export/export.h"
#include "export/history.h"
#include "store/history.h"
#include "store/store.h"
#include "util/fsx.h"
#include "util/log.h"

/* The options of `mlbench history`. */
struct history_options {
    const char *label, *host, *stage, *store;
    size_t last;
    bool json, detect;
    struct detect_options det;
    const struct history_format *dashboard; /* --format md, csv or html; NULL for text, json */
    const char *output;     /* -o: NULL or "-" for stdout */
    const char *commit_url; /* --commit-url template, with "{}" */
};

/* The prose of --help, above and below the options (the rows of parse). */
static const char usage_text[] =
    "Usage: mlbench history [options]\n"
    "\n"
    "Lists the stored results, oldest first, with a trend line per stage, or renders\n"
    "them as a dashboard or data (--format).\n";
static const char tail_text[] =
    "docs/store.md describes the store and how changes are detected.\n";

/* -o: "" is neither a file nor stdout. */
static int check_output(const char *value, char *err, size_t errlen)
{
    if (*value)
        return 0;
    snprintf(err, errlen, "-o is empty: give a file name, or - for stdout");
    return -1;
}

/* --commit-url: a template without {} would link every commit to one page. */
static int check_commit_url(const char *value, char *err, size_t errlen)
{
    (void)errlen;
    err[0] = '\0'; /* the parser says "--commit-url 'VALUE' <expected>" */
    return history_commit_url_ok(value) ? 0 : -1;
}

/* The format from --format, --json and the extension of -o. Returns 0, or -1 with err. */
static int pick_format(struct history_options *o, const char *format, char *err, size_t errlen)
{
    if (format && !strcmp(format, "json")) {
        o->json = true;
    } else if (format && o->json) {
        snprintf(err, errlen, "--json and --format '%s' disagree: give one of them", format);
        return -1;
    } else if (format && strcmp(format, "text") != 0) {
        o->dashboard = history_format_find(format);
        if (!o->dashboard) {
            snprintf(err, errlen, "--format '%s' is not a format of history: text, json, md, "
                     "csv or html", format);
            return -1;
        }
    } else if (!format && !o->json && o->output) {
        const char *dot = strrchr(o->output, '.');
        if (dot && !strcmp(dot, ".json") && dot != o->output)
            o->json = true;
        else
            o->dashboard = history_format_for_path(o->output);
    }
    bool links = o->dashboard && strcmp(o->dashboard->name, "csv") != 0;
    if (o->commit_url && !links) {
        snprintf(err, errlen, "--commit-url applies to --format md and html, not %s",
                 o->dashboard ? o->dashboard->name : o->json ? "json" : "text");
        return -1;
    }
    return 0;
}

/* Returns true when the command goes on; false with the exit status in *status (after the
 * help or the message). */
static bool parse(int argc, char **argv, struct history_options *o, int *status)
{
    memset(o, 0, sizeof *o);
    const char *format = NULL;
    o->store = store_default_dir();
    detect_options_default(&o->det);
    const struct cli_option table[] = {
        CLI_OPT_STRING("label", 'l', &o->label, 0, NULL, .metavar = "NAME",
                       .help = "only results with this label"),
        CLI_OPT_STRING("host", 0, &o->host, CLI_NONEMPTY, "is empty: give a host name",
                       .metavar = "NAME", .help = "only results measured on this host"),
        CLI_OPT_STRING("stage", 's', &o->stage, 0, NULL, .metavar = "NAME",
                       .help = "only this stage (\"total\" is the whole run)"),
        CLI_OPT_INTEGER("last", 'n', &o->last, 1, 100000000, 0,
                        "is not a number of results (1 or more)", .metavar = "N",
                        .help = "only the newest N results"),
        CLI_OPT_FLAG("detect", 0, &o->detect,
                     .help = "find step changes per label (or command) and stage; exit status "
                             "1 when the newest result of a series is slower"),
        CLI_OPT_NUMBER("min-effect", 0, &o->det.min_effect_pct, 0, 1000, 0,
                       "is not a percentage (0 to 1000)", .metavar = "PCT",
                       .help = "smallest change --detect reports (default 2)"),
        CLI_OPT_FLAG("json", 0, &o->json,
                     .help = "print a JSON document instead of the table (--format json)"),
        CLI_OPT_STRING("format", 'f', &format, 0, NULL, .metavar = "FMT",
                       .help = "the format (default: text, or from the extension of -o):\n"
                               "  text  the table\n"
                               "  json  as --json\n"
                               "  md    tables for a GitHub comment\n"
                               "  csv   a row per result and stage\n"
                               "  html  a dashboard: a chart per label and stage, step changes "
                               "marked, filters by label and host"),
        CLI_OPT_STRING_CHECKED("output", 'o', &o->output, 0, check_output, NULL,
                               .metavar = "FILE",
                               .help = "write to FILE (replaced atomically) instead of stdout"),
        CLI_OPT_STRING_CHECKED("commit-url", 0, &o->commit_url, 0, check_commit_url,
                               "has no {} where the commit goes: give a template such as "
                               "'https://github.com/OWNER/REPO/commit/{}'",
                               .metavar = "URL",
                               .help = "link commits in md and html: {} is replaced by the "
                                       "commit, e.g. 'https://github.com/OWNER/REPO/commit/{}'"),
        CLI_OPT_STORE(&o->store),
        CLI_OPT_END,
    };
    const struct cli_parser parser = {.verb = "history", .options = table, .flags = CLI_NO_ARGS,
                                      .usage = usage_text, .tail = tail_text};
    struct cli_args args;
    if (!cli_parse_args(&parser, argc, argv, &args, status))
        return false;
    char err[1024];
    if (pick_format(o, format, err, sizeof err) < 0) {
        log_error("history: %s", err);
        *status = 2;
        return false;
    }
    return true;
}

/* Writes the history h in the format o asks for to out. Returns 0, or 3 with a message
 * printed when out could not be written. */
static int print(FILE *out, const struct history_options *o, const struct doc_history *h)
{
    char err[1024];
    if (o->dashboard) {
        if (o->dashboard->write(out, h, err, sizeof err) == EXPORT_OK)
            return 0;
        log_error("history: %s", err);
        return 3;
    }
    if (o->json) {
        history_json_print(out, h);
        return 0;
    }
    return history_text_print(out, h) < 0 ? 3 : 0;
}

int cmd_history(int argc, char **argv)
{
    struct history_options o;
    int rc;
    if (!parse(argc, argv, &o, &rc))
        return rc;
    char err[1024];
    struct store *s = store_open(o.store, err, sizeof err);
    if (!s) {
        log_error("%s", err);
        return store_exit_status();
    }
    const struct store_query q = {
        .label = o.label, .host = o.host, .last = o.last,
        .stage = o.stage && strcmp(o.stage, DOC_HISTORY_TOTAL) != 0 ? o.stage : NULL,
    };
    struct store_history sh;
    if (store_history_read(s, &q, &sh, err, sizeof err) < 0) {
        log_error("%s", err);
        store_close(s);
        return store_exit_status();
    }
    store_close(s);
    struct doc_history *h = &sh.doc;
    h->label = o.label;
    h->host = o.host;
    h->stage = o.stage;
    h->last = o.last;
    h->commit_url = o.commit_url;
    h->detect = o.detect;
    h->min_effect_pct = o.det.min_effect_pct;
    h->z = o.det.z;
    /* a dashboard marks the changes whether asked or not */
    history_series_build(h, o.detect || o.dashboard);
    /* -o: a temporary file beside it, renamed over it once complete (never half a file) */
    bool to_file = o.output && strcmp(o.output, "-") != 0;
    struct fsx_atomic a;
    FILE *out = to_file ? fsx_atomic_open(&a, o.output, err, sizeof err) : stdout;
    if (!out) {
        log_error("history: %s", err);
        rc = 2;
    } else {
        rc = print(out, &o, h);
    }
    if (out && to_file) {
        if (rc != 0) {
            fsx_atomic_abort(&a);
        } else if (fsx_atomic_commit(&a, err, sizeof err) < 0) {
            log_error("history: %s", err);
            rc = 3;
        }
    }
    fflush(stdout);
    if (rc == 0 && o.detect && history_regressed(h))
        rc = 1; /* for CI: the newest result of a series is slower than the ones before */
    history_series_free(h);
    store_history_free(&sh);
    return rc == 0 && ferror(stdout) ? 3 : rc;
}
