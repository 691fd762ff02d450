/* main: the mlbench command line: dispatches to one cmd_<verb>.c per subcommand. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "util/log.h"

static void usage(FILE *out)
{
    fputs("Usage: mlbench COMMAND [options]\n\nCommands:\n", out);
    for (size_t i = 0; cli_commands[i].verb; i++)
        fprintf(out, "  %-11s %s\n", cli_commands[i].verb, cli_commands[i].summary);
    fputs("  help        describe a command: mlbench help COMMAND\n"
          "  version     print the version\n\n"
          "mlbench COMMAND --help (or mlbench help COMMAND) describes a command; docs/cli.md\n"
          "describes them all. Every command takes these options:\n", out);
    const struct cli_option every[] = {cli_color_option, CLI_OPT_END};
    cli_help_options(out, every);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *verb = argv[1];
    if (!strcmp(verb, "help") && argc > 2) { /* mlbench help COMMAND: COMMAND --help */
        for (size_t i = 0; cli_commands[i].verb; i++)
            if (!strcmp(argv[2], cli_commands[i].verb)) {
                char *help_argv[] = {argv[2], "--help", NULL};
                return cli_commands[i].run(2, help_argv);
            }
        log_error("help: no command '%s' (see mlbench --help)", argv[2]);
        return 2;
    }
    if (!strcmp(verb, "-h") || !strcmp(verb, "--help") || !strcmp(verb, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(verb, "version") || !strcmp(verb, "--version")) {
        printf("mlbench %s (%s)\n", MLBENCH_VERSION, MLBENCH_GIT_COMMIT);
        return 0;
    }
    if (!strcmp(verb, "workflow-exec")) /* hidden: what `mlbench run workflow.yaml` measures */
        return cmd_workflow_exec(argc - 1, argv + 1);
    for (size_t i = 0; cli_commands[i].verb; i++)
        if (!strcmp(verb, cli_commands[i].verb))
            return cli_commands[i].run(argc - 1, argv + 1);
    log_error("unknown command '%s' (see mlbench --help)", verb);
    return 2;
}
