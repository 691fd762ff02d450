/* run_options: parses the options of `mlbench run` (docs/cli.md) into what measuring needs
 * (a run_config), what the measuring session needs (its session_options) and what only the
 * command line uses. Pure apart from checking that output paths can be written. */
#ifndef MLBENCH_RUN_OPTIONS_H
#define MLBENCH_RUN_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/options.h"
#include "measure/run_config.h"
#include "session/session.h"
#include "util/strvec.h"

#define RUN_OPTIONS_HELP 1 /* --help was given (and printed): the caller exits 0 */

/* What `mlbench run` (or sweep) was asked, by who needs it. --quiet is one flag: the session's
 * (no progress line), which the command reads too (no summary, only errors). */
struct run_options {
    struct run_config run;          /* what measuring needs; points into argv */
    struct session_options session; /* store, -o, --serve, --quiet; its price is owned */
    bool json;                      /* --json: the summary as JSON on stdout */
    bool verbose;                   /* -v, --explain: the summary's every section */
    struct strvec params;           /* --param NAME=VALUE of a workflow file (copies) */
};

/* Parses argv[1..argc) (argv[0] is the verb "run") into o. The command is what follows "--",
 * or the first argument that is not an option. Returns 0, RUN_OPTIONS_HELP, or -1 with a
 * message in err that names the bad value and what to do (the caller exits with status 2).
 * o points into argv afterwards; free it with run_options_free after any return. Not
 * thread-safe (--color). */
int run_options_parse(int argc, char **argv, struct run_options *o, char *err, size_t errlen);

/* The same for another verb that takes run's options (sweep) and options of its own: own is
 * that verb's parser (its verb, usage, tail and rows; flags are run's), parsed with run's rows
 * in one pass: messages name own->verb, and --help prints own's usage, run's rows under a
 * heading, own's rows (the first of them may start a group of its own) and own's tail. */
int run_options_parse_with(const struct cli_parser *own, int argc, char **argv,
                           struct run_options *o, char *err, size_t errlen);
/* Frees what run_options_parse allocated in o (--param list, the parsed price); o's other
 * fields are untouched. Safe after any return of run_options_parse. */
void run_options_free(struct run_options *o);

#endif
