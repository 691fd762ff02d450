/* workflow_template: what workflow_parse.c (reading and validating the file) and workflow.c
 * (the rest of the API) share: the per-stage templates, the placeholder bytes in them, the
 * parameters' substitution into them, and the split of a command string into words. A leaf:
 * it calls neither file. Not for other modules: they use workflow.h. */
#ifndef MLBENCH_WORKFLOW_TEMPLATE_H
#define MLBENCH_WORKFLOW_TEMPLATE_H

#include <stddef.h>
#include <wordexp.h>

#include "measure/workflow.h"

#define PH_BEGIN '\x01'            /* placeholder: PH_BEGIN decimal-index PH_END */
#define PH_END '\x02'

struct workflow_stage_src {
    char *cmd;             /* command string (template), or NULL when given as a list */
    char **words;          /* list form (templates), NULL-terminated, or NULL */
    char *cwd;             /* template, or NULL: the file's directory */
    char **env_names;      /* n_env names, and their value templates */
    char **env_values;
};

/* Index of the parameter named name[0..n) in wf->params, or -1. */
long workflow_param_find(const struct workflow *wf, const char *name, size_t n);

/* Writes the names of wf's parameters, "a, b, c" (shortened to fit), into out (outlen bytes);
 * an empty string when there are none. */
void workflow_param_list(const struct workflow *wf, char *out, size_t outlen);

/* wordexp(s) without command substitution, after cmdline_shellism refused what only a shell
 * understands (variables pass) and ${VAR?}/${VAR:?} were refused; on failure the vector is
 * freed. Returns wordexp's code, WORKFLOW_SPLIT_PATTERN or WORKFLOW_SPLIT_UNSET_ERROR (0: we
 * holds the words, the caller wordfree()s them). Not thread-safe
 * (wordexp). */
int workflow_split(const char *s, wordexp_t *we);
#define WORKFLOW_SPLIT_PATTERN (-1) /* workflow_split: a pattern (* ? [ ] ~) only a shell expands */
#define WORKFLOW_SPLIT_UNSET_ERROR (-2) /* workflow_split: ${VAR?} or ${VAR:?} */

/* Why workflow_split refused a command line (rc != 0), for "'cmd' of stage 'x' <why>": a
 * static string. */
const char *workflow_split_why(int rc);

/* The template tmpl with its placeholders replaced by wf's current parameter values: a new
 * string (free it). Cannot fail (allocation failure aborts). */
char *workflow_substitute(const struct workflow *wf, const char *tmpl);

/* Substitutes the current parameter values into cwd and env of every stage (replacing what an
 * earlier call made). Cannot fail (allocation failure aborts). */
void workflow_expand(struct workflow *wf);

/* Frees what workflow_expand made of stage st (cwd, env) and sets them to NULL. */
void workflow_stage_clear(struct workflow_stage *st);

#endif
