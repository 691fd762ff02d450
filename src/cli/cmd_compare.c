/* cmd_compare: `mlbench compare A B [C...]`: parses, resolves the references, loads the
 * results, compares every one after the first with the first (analysis/compare.c), prints the
 * comparison through its terminal view (export/compare_text.c), a report (md, html) or as the
 * JSON document, and applies the CI gates. docs/compare.md describes it all.
 * Exit status: 0, 1 when a gate fails, 2 for bad options or a result that cannot be loaded, 4
 * when --fail-if-slower cannot decide (compare.h: COMPARE_GATE_UNDECIDED). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "analysis/compare.h"
#include "doc/comparison.h"
#include "doc/result_file.h"
#include "export/compare_text.h"
#include "export/export.h"
#include "store/store.h"
#include "store/sweeps.h"
#include "util/log.h"
#include "util/xalloc.h"

/* The prose of --help, above and below the options (the rows of parse_args). */
static const char usage[] =
    "Usage: mlbench compare [options] BASELINE CANDIDATE [CANDIDATE...]\n"
    "\n"
    "Compares each CANDIDATE with BASELINE, stage by stage and in total: medians, change,\n"
    "speedup, an interval of the ratio of medians, a Mann-Whitney test and a verdict (faster,\n"
    "slower, 'no change' beyond the minimum effect, 'inconclusive' when the runs cannot tell;\n"
    "'unreliable' when a disturbance of the slower side, shown in its quality warnings, could\n"
    "explain the difference); p50/p99 span latency of stages with 20 spans or more; then\n"
    "counters, metadata, resources and differences of environment.\n"
    "A result is a file (a path with '/' or ending in .json), or in the store: an id, a unique\n"
    "id prefix, a label (its newest result) or 'latest'. A sweep (sweep:ID, latest-sweep or a\n"
    "sweep document's file), given alone: every point against the first (or --reference).\n";
static const char tail[] =
    "Exit status: 0; 1 when a gate fails (the reason is printed); 2 for bad options or a\n"
    "result that cannot be found or read; 4 when --fail-if-slower cannot decide (the runs fit\n"
    "both a pass and a failure; --allow-undecided makes it a note). Method and examples:\n"
    "docs/compare.md.\n";

struct compare_cli {
    struct compare_options opt;
    struct compare_gates gates;
    bool json;
    bool verbose;                  /* -v: every counter, key, resource and difference */
    const struct exporter *exporter; /* --format md|html */
    const char *store;
    const char *reference;     /* --reference: a sweep's point */
    char **refs;
    size_t n_refs;
};

/* --format: the last of --format and --json decides between text and JSON; md and html are
 * the comparison sections of a report (as mlbench report A B). */
static int set_format(void *dest, const char *value, char *err, size_t errlen)
{
    struct compare_cli *c = dest;
    (void)err;
    (void)errlen;
    c->exporter = NULL;
    if (!strcmp(value, "json"))
        c->json = true;
    else if (!strcmp(value, "text"))
        c->json = false;
    else if ((!strcmp(value, "md") || !strcmp(value, "html")) &&
             (c->exporter = export_find(value)) != NULL)
        c->json = false;
    else
        return -1;
    return 0;
}

#define PCT_EXPECTED "is not a percentage >= 0 (e.g. 5 or 5%)"

/* A reference written as a file's path (one that names no file may still be a label, such as
 * a pytest test id: store_load decides). */
static int is_file_ref(const char *ref)
{
    size_t len = strlen(ref);
    return strchr(ref, '/') || (len >= 5 && !strcmp(ref + len - 5, ".json"));
}

/* What the options cannot say alone: the references (a sweep alone, or two results or more)
 * and --stage without --fail-if-slower. Returns 0, or -1 with the message in err. */
static int check_args(const struct compare_cli *c, char *err, size_t errlen)
{
    for (size_t i = 0; i < c->n_refs; i++)
        if (store_is_sweep_ref(c->refs[i]) && c->n_refs > 1) {
            snprintf(err, errlen, "'%s' is a sweep: give it alone (its points are compared with "
                     "each other)", c->refs[i]);
            return -1;
        }
    if (c->n_refs == 1 && store_is_sweep_ref(c->refs[0]))
        return 0;
    if (c->n_refs < 2 && !(c->n_refs == 1 && is_file_ref(c->refs[0]))) {
        snprintf(err, errlen, "at least two results are needed, a baseline and a candidate "
                 "(got %zu%s%s%s), e.g. mlbench compare base.json new.json", c->n_refs,
                 c->n_refs ? ": '" : "", c->n_refs ? c->refs[0] : "", c->n_refs ? "'" : "");
        return -1;
    }
    if (c->gates.stage && c->gates.fail_if_slower_pct < 0) {
        snprintf(err, errlen, "--stage '%s' only chooses what --fail-if-slower checks: give "
                 "--fail-if-slower PCT too", c->gates.stage);
        return -1;
    }
    return 0;
}

/* Returns true when the command goes on; false with the exit status in *status (after the
 * help or the message). */
static bool parse_args(int argc, char **argv, struct compare_cli *c, int *status)
{
    memset(c, 0, sizeof *c);
    compare_options_default(&c->opt);
    c->gates.fail_if_slower_pct = -1;
    c->gates.max_accuracy_drop = -1;
    c->store = store_default_dir();

    const struct cli_option table[] = {
        CLI_OPT_ALPHA(&c->opt.alpha),
        CLI_OPT_MIN_EFFECT(&c->opt.min_effect_pct),
        CLI_OPT_NUMBER("fail-if-slower", 0, &c->gates.fail_if_slower_pct, 0, INFINITY,
                       CLI_PERCENT, PCT_EXPECTED, .metavar = "PCT",
                       .help = "exit 1 when the total (or --stage) is significantly slower by "
                               "more than PCT percent (an unreliable slowdown: a note); exit 4 "
                               "when the runs cannot decide whether it is"),
        CLI_OPT_FLAG("allow-undecided", 0, &c->gates.allow_undecided,
                     .help = "with --fail-if-slower: a comparison the runs cannot decide is a "
                             "note and exit 0, not exit 4"),
        CLI_OPT_STRING("stage", 0, &c->gates.stage, CLI_NONEMPTY, "is empty: give a stage name",
                       .metavar = "NAME",
                       .help = "the stage --fail-if-slower checks instead of the total"),
        CLI_OPT_NUMBER("max-accuracy-drop", 0, &c->gates.max_accuracy_drop, 0, 100, 0,
                       "is not a number of percentage points from 0 to 100 (e.g. 0.5)",
                       .metavar = "P",
                       .help = "exit 1 when counter 'accuracy' drops by more than P percentage "
                               "points (values in 0..1 are fractions)"),
        CLI_OPT_FLAG("verbose", 'v', &c->verbose,
                     .help = "every counter and metadata key, the resources and the environment's "
                             "differences too (the default: those that differ)"),
        CLI_OPT_FLAG("explain", 0, &c->verbose, .help = "the same as --verbose"),
        CLI_OPT_FLAG("json", 0, &c->json,
                     .help = "print the comparison as JSON (mlbench.comparison/1)"),
        CLI_OPT_CALL("format", 0, c, set_format, "is not text, json, md or html",
                     .metavar = "FMT",
                     .help = "text (default), json, or md/html (a comparison report)"),
        CLI_OPT_INTEGER("resamples", 0, &c->opt.resamples, 100, 10000000, 0, NULL,
                        .metavar = "N", .help = "bootstrap resamples (default 10000)"),
        CLI_OPT_INTEGER("seed", 0, &c->opt.seed, 0, INT64_MAX, CLI_C_INTEGER,
                        "is not a whole number from 0 to 2^63 - 1", .metavar = "N",
                        .help = "bootstrap seed (default fixed: the same results always give "
                                "the same intervals)"),
        CLI_OPT_STRING("reference", 0, &c->reference, CLI_NONEMPTY,
                       "is empty: give a point's name", .metavar = "NAME",
                       .help = "with a sweep: the point the others are compared with"),
        CLI_OPT_STORE(&c->store),
        CLI_OPT_END,
    };
    const struct cli_parser parser = {.verb = "compare", .options = table, .usage = usage,
                                      .tail = tail};
    struct cli_args args;
    if (!cli_parse_args(&parser, argc, argv, &args, status))
        return false;
    c->refs = args.v;
    c->n_refs = (size_t)args.n;
    char err[1024];
    if (check_args(c, err, sizeof err) < 0) {
        log_error("compare: %s", err);
        *status = 2;
        return false;
    }
    return true;
}

/* ---- the command ---- */

/* The results to compare, the baseline first, and the file each was read from. */
struct inputs {
    json_t **results;
    char **paths;
    size_t n;
};

static void inputs_free(struct inputs *in)
{
    for (size_t i = 0; i < in->n; i++) {
        if (in->results)
            json_decref(in->results[i]);
        if (in->paths)
            free(in->paths[i]);
    }
    free(in->results);
    free(in->paths);
}

/* The references of the command line: a sweep's points (one reference that is a sweep: their
 * files) or the references as given (in->paths NULL entries, resolved by load). Returns 0, or
 * the exit status with the error logged. */
static int resolve(struct compare_cli *cli, struct inputs *in)
{
    char err[1024];
    memset(in, 0, sizeof *in);
    if (cli->n_refs != 1) {
        if (cli->reference) {
            log_error("compare: --reference chooses a sweep's point: give a sweep (sweep:ID or "
                      "latest-sweep), or put the baseline first");
            return 2;
        }
        in->n = cli->n_refs;
        in->paths = xcalloc(in->n, sizeof *in->paths);
        return 0;
    }
    /* a sweep (or one file that is a sweep document) */
    int status = 0;
    char *sweep_path = NULL;
    const char **names = NULL;
    json_t *sweep = store_sweep_load(cli->store, cli->refs[0], &sweep_path, err, sizeof err);
    if (!sweep && !store_is_sweep_ref(cli->refs[0]) && strstr(err, "not a sweep document"))
        snprintf(err, sizeof err, "at least two results are needed, a baseline and a "
                 "candidate (got 1: '%s', which is not a sweep), e.g. mlbench compare "
                 "base.json new.json", cli->refs[0]);
    if (!sweep || store_sweep_results(sweep, sweep_path, cli->store, cli->reference, &in->paths,
                                      &names, &in->n, err, sizeof err) != 0) {
        log_error("compare: %s", err);
        status = 2;
    } else if (in->n < 2) {
        log_error("compare: %s: %s point of the sweep has a result: nothing to compare",
                  sweep_path, in->n ? "only one" : "no");
        status = 2;
    }
    free(names);
    free(sweep_path);
    json_decref(sweep);
    return status;
}

/* Loads each result: a sweep's point or a file by its path, else from the store. Returns 0,
 * or the exit status with the error logged. */
static int load(const struct compare_cli *cli, struct inputs *in)
{
    char err[1024];
    in->results = xcalloc(in->n, sizeof *in->results);
    for (size_t i = 0; i < in->n; i++) {
        const char *ref = in->paths[i] ? in->paths[i] : cli->refs[i];
        if (!in->paths[i] && !(is_file_ref(ref) && access(ref, F_OK) == 0)) {
            if (!(in->results[i] = store_load(cli->store, ref, &in->paths[i], err, sizeof err))) {
                log_error("compare: %s", err);
                return store_exit_status();
            }
            continue;
        }
        if (!in->paths[i])
            in->paths[i] = xstrdup(ref);
        if (!(in->results[i] = doc_result_load_file(in->paths[i], err, sizeof err))) {
            log_error("compare: %s", err);
            return 2;
        }
    }
    return 0;
}

/* Prints the comparison doc in the format asked for: a report (md, html), the JSON document,
 * or the terminal view. Returns 0, or 3 when the report cannot be written. */
static int print(const struct compare_cli *cli, const struct inputs *in, json_t *doc)
{
    int status = 0;
    if (cli->exporter) {
        char err[1024];
        struct export_request req = {.results = in->results,
                                     .paths = (const char *const *)in->paths, .n = in->n,
                                     .comparison = doc, .run = -1};
        if (export_write(cli->exporter, stdout, &req, err, sizeof err) != EXPORT_OK) {
            log_error("compare: %s", err);
            status = 3;
        }
    } else if (cli->json) {
        /* 15 digits: 0.05 stays 0.05, and no figure here means more */
        char *text = json_dumps(doc, JSON_INDENT(2) | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(15));
        puts(text);
        free(text);
    } else {
        (void)export_compare_print(stdout, doc, cli->verbose);
    }
    fflush(stdout);
    return status;
}

/* Applies the gates to doc, each reason on stderr. Returns 1 when one failed, else 4 when one
 * could not decide, else status. */
static int apply_gates(const struct compare_gates *gates, const json_t *doc, int status)
{
    char msg[4096];
    int gate = compare_check_gates(doc, gates, msg, sizeof msg);
    if (gate != COMPARE_GATE_PASS)
        status = gate;
    /* one line per reason, each prefixed like every other message */
    for (char *line = strtok(msg, "\n"); line; line = strtok(NULL, "\n")) {
        if (!strncmp(line, "note: ", 6))
            log_warn("compare: %s", line + 6);
        else if (!strncmp(line, "undecided: ", 11))
            log_error("compare: gate undecided: %s", line + 11);
        else
            log_error("compare: gate failed: %s", line);
    }
    return status;
}

/* Whether some candidate of doc has a stage named name (present in either result). */
static bool stage_known(const json_t *doc, const char *name)
{
    struct doc_comparison *cmp = doc_comparison_read(doc);
    bool known = doc_comparison_has_stage(cmp, name);
    doc_comparison_free(cmp);
    return known;
}

int cmd_compare(int argc, char **argv)
{
    struct compare_cli cli;
    int status;
    if (!parse_args(argc, argv, &cli, &status))
        return status;
    struct inputs in;
    status = resolve(&cli, &in);
    if (!status)
        status = load(&cli, &in);
    json_t *doc = NULL;
    if (!status &&
        !(doc = compare_results(in.results, (const char *const *)in.paths, in.n, &cli.opt))) {
        log_error("compare: could not compare (bad options)"); /* checked: cannot happen */
        status = 2;
    }
    if (!status && cli.gates.stage && !stage_known(doc, cli.gates.stage)) {
        log_error("compare: --stage '%s': no such stage in any of the results (see the stage "
                  "names in mlbench compare without --stage)", cli.gates.stage);
        status = 2;
    }
    if (!status)
        status = apply_gates(&cli.gates, doc, print(&cli, &in, doc));
    json_decref(doc);
    inputs_free(&in);
    return status;
}
