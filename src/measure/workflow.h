/* workflow: workflow files (docs/workflow.md): a pipeline made of separate commands, each one a
 * stage, run in order as one repetition of `mlbench run workflow.yaml`. This module parses and
 * validates a file (YAML, through libyaml) and substitutes its parameters; it runs nothing.
 * `mlbench workflow-exec` (src/cli/cmd_workflow_exec.c) runs the stages.
 *
 *   params:                        # optional; ${params.NAME} in cmd, cwd and env values
 *     epochs: 3
 *   stages:                        # a mapping, in order: stage name -> stage
 *     load: python3 load.py        # shorthand for {cmd: ...}
 *     train:
 *       cmd: python3 train.py --epochs ${params.epochs}   # or a list of words
 *       cwd: src                   # relative to the file's directory (the default cwd)
 *       env: {OMP_NUM_THREADS: "4"}
 *       shell: false               # true: cmd is run by /bin/sh -c
 *
 * Errors name the file, line and column (1-based) and what to do:
 *   "wf.yaml:12:5: unknown key 'comand' in stage 'train' (expected: cmd, cwd, env, shell)".
 * Not thread-safe where noted (wordexp reads the environment and the current directory). */
#ifndef MLBENCH_WORKFLOW_H
#define MLBENCH_WORKFLOW_H

#include <stdbool.h>
#include <stddef.h>

/* Longest stage name, in bytes (it is sent as a marker name). */
#define WORKFLOW_MAX_NAME 256

struct workflow_param {
    char *name;
    char *value;           /* the file's value, or the --param override */
};

struct workflow_stage_src; /* templates with parameter references: private to workflow*.c */

struct workflow_stage {
    char *name;            /* marker name: non-empty, no white space or control character */
    bool shell;            /* cmd is one string run by /bin/sh -c */
    char *cwd;             /* absolute directory the command runs in (parameters substituted) */
    char **env;            /* NULL-terminated "NAME=VALUE" added to the environment, in file
                              order (parameters substituted) */
    size_t n_env;
    unsigned long line;    /* line of the stage's name in the file, 1-based */
    struct workflow_stage_src *src;
};

struct workflow {
    char *path;            /* as given to workflow_load (messages name it) */
    char *dir;             /* absolute directory of the file: the default cwd of every stage
                              and the base of relative ones */
    struct workflow_stage *stages; /* in file order; at least one */
    size_t n_stages;
    struct workflow_param *params; /* in file order */
    size_t n_params;
};

/* Reads and validates the workflow file at path: YAML syntax, the keys and types of every
 * value, stage names (unique, usable as marker names), commands (split into words as a shell
 * would, with command substitution and operators refused unless `shell: true`), and every
 * ${params.NAME} reference. Returns a new workflow owned by the caller (workflow_free), with
 * the file's parameter values substituted; or NULL with a message in err that starts with
 * "PATH:LINE:COLUMN: " when the problem has a place in the file ("cannot read workflow
 * 'PATH': ..." otherwise). Reads the environment and the current directory (for the trial
 * word split): not thread-safe against setenv/chdir. */
struct workflow *workflow_load(const char *path, char *err, size_t errlen);

/* Overrides a parameter: assignment is "NAME=VALUE" (VALUE may be empty) naming a parameter the
 * file declares; cwd and env of every stage are substituted again. Returns 0, or -1 with a
 * message in err naming the assignment and the parameters there are (wf unchanged). */
int workflow_set_param(struct workflow *wf, const char *assignment, char *err, size_t errlen);

/* The words to spawn for stage i: "/bin/sh", "-c", CMD when the stage has `shell: true`; the
 * list given in the file, taken literally; or the cmd string split into words like a shell
 * would ($VARIABLES and ~ expanded from the current environment, globs matched in the current
 * directory: call it with the stage's env applied and in its cwd). Parameter values are put in
 * after the split, so a value is never split, globbed or expanded. Returns a NULL-terminated
 * vector owned by the caller (workflow_argv_free), or NULL with a message in err.
 * Not thread-safe (wordexp). */
char **workflow_stage_argv(const struct workflow *wf, size_t i, char *err, size_t errlen);

void workflow_argv_free(char **argv);

/* True when arg names an existing regular file whose name ends in ".yaml" or ".yml": what
 * `mlbench run FILE` treats as a workflow. */
bool workflow_is_file(const char *arg);

/* Frees wf and everything it owns; NULL is fine. */
void workflow_free(struct workflow *wf);

#endif
