/* commands: the subcommands of the mlbench CLI, one cmd_<verb>.c each, dispatched by main.c.
 * Each takes the arguments after "mlbench" (argv[0] is the verb) and returns the exit status. */
#ifndef MLBENCH_COMMANDS_H
#define MLBENCH_COMMANDS_H

int cmd_run(int argc, char **argv);

#endif
