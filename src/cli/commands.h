/* commands: the subcommands of the mlbench CLI, one cmd_<verb>.c each, dispatched by main.c.
 * Each takes the arguments after "mlbench" (argv[0] is the verb) and returns the exit status. */
#ifndef MLBENCH_COMMANDS_H
#define MLBENCH_COMMANDS_H

int cmd_run(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_env(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_rm(int argc, char **argv);
int cmd_store(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_monitor(int argc, char **argv);
int cmd_load(int argc, char **argv);
int cmd_demo(int argc, char **argv);
/* Hidden (not in the usage text): one repetition of a workflow file, what `mlbench run FILE`
 * measures (src/cli/cmd_workflow_exec.c). */
int cmd_workflow_exec(int argc, char **argv);
/* `mlbench rank-exec -- COMMAND`: one rank of a multi-rank job (src/cli/cmd_rank_exec.c). */
int cmd_rank_exec(int argc, char **argv);

#endif
