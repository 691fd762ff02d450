/* run_options: parses the options of `mlbench run` into a run_config (docs/cli.md).
 * Pure apart from checking that output paths can be written. */
#ifndef MLBENCH_RUN_OPTIONS_H
#define MLBENCH_RUN_OPTIONS_H

#include <stddef.h>

#include "cli/options.h"
#include "measure/run_config.h"

#define RUN_OPTIONS_HELP 1 /* --help was given: print run_options_usage() */

/* Parses argv[1..argc) (argv[0] is the verb "run"). The command is what follows "--", or the
 * first argument that is not an option. Returns 0, RUN_OPTIONS_HELP, or -1 with a message in
 * err that names the bad value and what to do (the caller exits with status 2).
 * cfg points into argv afterwards. Not thread-safe (getopt). */
int run_options_parse(int argc, char **argv, struct run_config *cfg, char *err, size_t errlen);

/* The same for another verb that takes run's options (sweep) and options of its own, the rows
 * of extra (ended by CLI_OPT_END; NULL: none), parsed with run's in one pass: messages name
 * verb, and --help prints usage (which describes both). */
int run_options_parse_with(const char *verb, const char *usage, const struct cli_option *extra,
                           int argc, char **argv, struct run_config *cfg, char *err,
                           size_t errlen);
/* Frees what run_options_parse allocated in cfg (--param list, the parsed price); cfg's
 * other fields are untouched. Safe after any return of run_options_parse. */
void run_options_free(struct run_config *cfg);

/* The usage text of `mlbench run`. */
const char *run_options_usage(void);

#endif
