/* commands: the subcommands of the mlbench CLI, one cmd_<verb>.c each, and their table
 * (commands.c), which main.c dispatches through. Each takes the arguments after "mlbench"
 * (argv[0] is the verb) and returns the exit status. */
#ifndef MLBENCH_COMMANDS_H
#define MLBENCH_COMMANDS_H

/* A subcommand: what main.c dispatches to, what `mlbench --help` lists, and what `mlbench
 * completion` and the man pages describe (each command's --help, through cli_help). */
struct cli_command {
    const char *verb;
    int (*run)(int argc, char **argv);
    const char *summary; /* one line, for the usage list and the man page's NAME */
};
/* Every visible command, in the order `mlbench --help` lists them; ended by a NULL verb. */
extern const struct cli_command cli_commands[];

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
/* `mlbench completion bash|zsh|fish` (src/cli/cmd_completion.c): the script completes the
 * commands of `commands` (cli_commands: the table hands itself over, commands.c), ended by a
 * NULL verb. */
int cmd_completion(const struct cli_command *commands, int argc, char **argv);
/* `mlbench record [FILE]`: stores timings measured in-process (src/cli/cmd_record.c). */
int cmd_record(int argc, char **argv);
/* Hidden (not in the usage text): one repetition of a workflow file, what `mlbench run FILE`
 * measures (src/cli/cmd_workflow_exec.c). */
int cmd_workflow_exec(int argc, char **argv);
/* `mlbench rank-exec -- COMMAND`: one rank of a multi-rank job (src/cli/cmd_rank_exec.c). */
int cmd_rank_exec(int argc, char **argv);

#endif
