/* workflow: the workflow API other than loading (see workflow.h and docs/workflow.md): --param
 * overrides, the words of a stage, freeing. Reading and validating the file is
 * workflow_parse.c; the templates, the parameters' substitution and the word split are
 * workflow_template.c, which both use. */
#include "measure/workflow.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <wordexp.h>

#include "measure/workflow_template.h"
#include "util/xalloc.h"

/* ---- the API ---- */

int workflow_set_param(struct workflow *wf, const char *assignment, char *err, size_t errlen)
{
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment) {
        snprintf(err, errlen, "--param '%s' is not NAME=VALUE", assignment);
        return -1;
    }
    size_t n = (size_t)(eq - assignment);
    long idx = workflow_param_find(wf, assignment, n);
    if (idx < 0) {
        char list[512];
        workflow_param_list(wf, list, sizeof list);
        if (wf->n_params)
            snprintf(err, errlen, "--param '%s': %s has no parameter '%.*s' (its parameters: %s)",
                     assignment, wf->path, (int)n, assignment, list);
        else
            snprintf(err, errlen, "--param '%s': %s declares no parameters (add a 'params:' "
                     "mapping with a default for '%.*s')", assignment, wf->path, (int)n,
                     assignment);
        return -1;
    }
    free(wf->params[idx].value);
    wf->params[idx].value = xstrdup(eq + 1);
    workflow_expand(wf);
    return 0;
}

char **workflow_stage_argv(const struct workflow *wf, size_t i, char *err, size_t errlen)
{
    const struct workflow_stage *st = &wf->stages[i];
    const struct workflow_stage_src *src = st->src;
    char **argv;
    if (src->words) {
        size_t n = 0;
        while (src->words[n])
            n++;
        argv = xcalloc(n + 1, sizeof *argv);
        for (size_t k = 0; k < n; k++)
            argv[k] = workflow_substitute(wf, src->words[k]);
        return argv;
    }
    if (st->shell) {
        argv = xcalloc(4, sizeof *argv);
        argv[0] = xstrdup("/bin/sh");
        argv[1] = xstrdup("-c");
        argv[2] = workflow_substitute(wf, src->cmd);
        return argv;
    }
    wordexp_t we;
    int rc = workflow_split(src->cmd, &we);
    if (rc) {
        snprintf(err, errlen, "'cmd' of stage '%s' %s", st->name, workflow_split_why(rc));
        return NULL;
    }
    if (we.we_wordc == 0) {
        wordfree(&we);
        snprintf(err, errlen, "'cmd' of stage '%s' has no words once its variables are expanded",
                 st->name);
        return NULL;
    }
    argv = xcalloc(we.we_wordc + 1, sizeof *argv);
    for (size_t k = 0; k < we.we_wordc; k++)
        argv[k] = workflow_substitute(wf, we.we_wordv[k]);
    wordfree(&we);
    return argv;
}

void workflow_argv_free(char **argv)
{
    if (!argv)
        return;
    for (char **p = argv; *p; p++)
        free(*p);
    free(argv);
}

bool workflow_is_file(const char *arg)
{
    size_t n = strlen(arg);
    struct stat st;
    bool named = (n > 5 && !strcmp(arg + n - 5, ".yaml")) || (n > 4 && !strcmp(arg + n - 4, ".yml"));
    return named && stat(arg, &st) == 0 && S_ISREG(st.st_mode);
}

void workflow_free(struct workflow *wf)
{
    if (!wf)
        return;
    for (size_t i = 0; i < wf->n_stages; i++) {
        struct workflow_stage *st = &wf->stages[i];
        workflow_stage_clear(st);
        if (st->src) {
            free(st->src->cmd);
            workflow_argv_free(st->src->words);
            free(st->src->cwd);
            workflow_argv_free(st->src->env_names);
            workflow_argv_free(st->src->env_values);
            free(st->src);
        }
        free(st->name);
    }
    free(wf->stages);
    for (size_t i = 0; i < wf->n_params; i++) {
        free(wf->params[i].name);
        free(wf->params[i].value);
    }
    free(wf->params);
    free(wf->path);
    free(wf->dir);
    free(wf);
}
