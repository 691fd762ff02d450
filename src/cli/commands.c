/* commands: the table of the subcommands (see commands.h), which main.c dispatches through and
 * `mlbench completion` describes. */
#include <stddef.h>

#include "cli/commands.h"

/* `mlbench completion` is handed the table it describes rather than reaching back for it, so
 * the table and the command do not call each other. */
static int completion(int argc, char **argv)
{
    return cmd_completion(cli_commands, argc, argv);
}

const struct cli_command cli_commands[] = {
    {"run", cmd_run, "run a command repeatedly and measure it stage by stage"},
    {"sweep", cmd_sweep, "measure a parameter matrix or several commands, interleaved"},
    {"compare", cmd_compare, "compare results stage by stage, with significance"},
    {"history", cmd_history, "list stored results, trends and regressions"},
    {"show", cmd_show, "print a stored result"},
    {"report", cmd_report, "write a report: markdown, html, trace, csv"},
    {"rm", cmd_rm, "remove stored results"},
    {"store", cmd_store, "copy results to or from a shared store (push, pull)"},
    {"rank-exec", cmd_rank_exec, "run one rank of a multi-rank job (under mpirun, for run --ranks)"},
    {"env", cmd_env, "describe this machine and environment"},
    {"demo", cmd_demo, "the worked example: baseline, optimised, compared (make run)"},
    {"monitor", cmd_monitor, "sample continuously and serve Prometheus /metrics"},
    {"load", cmd_load, "drive an inference server with LoadGen's scenarios: latency percentiles"},
    {"completion", completion, "print a shell completion script (bash, zsh, fish)"},
    {"record", cmd_record, "store timings measured in-process (Python Timer, pytest plugin)"},
    {NULL, NULL, NULL},
};
